"""Policies: numpy and TF forward agree, per-task parameters, sampling statistics, pickling."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from meta_policy_search.policies import GaussianMLPPolicy, MetaGaussianMLPPolicy


def test_numpy_and_tensorflow_forward_agree_per_task():
    policy = MetaGaussianMLPPolicy(3, 5, 2, hidden_sizes=(16, 8), hidden_nonlinearity="relu", seed=1)
    rng = np.random.default_rng(0)
    adapted = {k: v + 0.1 * rng.normal(size=v.shape).astype(np.float32)
               for k, v in policy.get_task_param_values().items()}
    policy.update_task_parameters(adapted)
    obs = rng.normal(size=(3, 7, 5)).astype(np.float32)
    mean_np, log_std_np = policy.get_sampling_policy().distribution(obs)
    dist = policy.forward({k: tf.constant(v) for k, v in adapted.items()}, tf.constant(obs))
    np.testing.assert_allclose(mean_np, dist["mean"].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(log_std_np, dist["log_std"].numpy(), rtol=1e-6)
    # task 1 uses its own parameters, not task 0's
    assert not np.allclose(mean_np[0], policy.forward(
        {k: tf.constant(v[1:2]) for k, v in adapted.items()}, tf.constant(obs[:1]))["mean"].numpy()[0])


def test_switch_to_pre_update_restores_shared_parameters():
    policy = MetaGaussianMLPPolicy(2, 3, 1, hidden_sizes=(4,), seed=0)
    shared = policy.get_param_values()
    policy.update_task_parameters({"W0": np.zeros((2, 3, 4), np.float32)})
    assert not policy.is_pre_update
    policy.switch_to_pre_update()
    np.testing.assert_array_equal(policy.get_task_param_values()["W0"][1], shared["W0"])


def test_actions_follow_the_gaussian():
    policy = MetaGaussianMLPPolicy(2, 3, 2, hidden_sizes=(4,), init_std=0.5, seed=0)
    obs = np.zeros((2, 20000, 3), np.float32)
    actions, infos = policy.get_actions(obs)
    np.testing.assert_allclose(actions.mean(axis=1), infos["mean"][:, 0], atol=0.02)
    np.testing.assert_allclose(actions.std(axis=1), 0.5, rtol=0.03)


def test_min_std_bounds_log_std():
    policy = GaussianMLPPolicy(2, 1, hidden_sizes=(3,), init_std=1e-4, min_std=1e-2)
    dist = policy.forward(policy.get_params(), tf.zeros((4, 2)))
    np.testing.assert_allclose(dist["log_std"].numpy(), np.log(1e-2), rtol=1e-6)


def test_pickle_round_trip_keeps_values_and_config():
    policy = MetaGaussianMLPPolicy(4, 3, 2, hidden_sizes=(5, 5), learn_std=False, seed=3)
    policy.set_param_values({"b0": np.arange(5, dtype=np.float32)})
    clone = pickle.loads(pickle.dumps(policy))
    assert clone.meta_batch_size == 4 and clone.hidden_sizes == (5, 5) and not clone.learn_std
    assert clone.trainable_param_names == policy.trainable_param_names
    for name, value in policy.get_param_values().items():
        np.testing.assert_array_equal(clone.get_param_values()[name], value)


def test_bad_input_raises_value_errors():
    with pytest.raises(ValueError, match="obs_dim"):
        GaussianMLPPolicy(0, 2)
    with pytest.raises(ValueError, match="hidden_nonlinearity"):
        GaussianMLPPolicy(2, 2, hidden_nonlinearity="sigmoidish")
    policy = MetaGaussianMLPPolicy(2, 3, 1, hidden_sizes=(4,))
    with pytest.raises(ValueError, match="shape"):
        policy.update_task_parameters({"W0": np.zeros((3, 3, 4))})
    with pytest.raises(ValueError, match="unknown parameter"):
        policy.set_param_values({"W9": np.zeros(1)})
    with pytest.raises(ValueError, match="obs_dim=3"):
        policy.get_actions(np.zeros((2, 5, 4)))


def test_numpy_policy_import_does_not_load_tensorflow():
    code = "import sys, meta_policy_search.policies.numpy_policy, meta_policy_search.envs; " \
           "assert 'tensorflow' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
