"""The worked examples of the documentation's "Add your own task distribution" page run: the point
env learns, the MuJoCo env steps batched, bit for bit as the single env."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

EXAMPLE = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "examples", "custom_env.py")


def loaded_example(path, name):
    """Yield the example file ``path`` imported as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # importable by name, so the sampler can pickle the env's class into worker copies
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.fixture(scope="module")
def example():
    yield from loaded_example(EXAMPLE, "custom_env_example")


def test_example_env_follows_the_task_protocol(example):
    env = example.PointCircleGoalEnv()
    env.seed_tasks(3)
    tasks = env.sample_tasks(4)
    env.seed_tasks(3)
    assert env.sample_tasks(4) == tasks
    env.set_task(tasks[1])
    assert env.get_task() == tasks[1]
    obs, _ = env.reset(seed=0)
    goal = np.array([np.cos(tasks[1]), np.sin(tasks[1])])
    obs, reward, terminated, truncated, info = env.step(np.array([0.5, 0.0]))
    np.testing.assert_allclose(obs, [0.1, 0.0], atol=1e-7)
    assert reward == pytest.approx(-np.linalg.norm(np.array([0.1, 0.0]) - goal))
    assert info["distance"] == pytest.approx(-reward)
    assert not terminated and not truncated
    with pytest.raises(ValueError, match="finite goal angle"):
        env.set_task(float("nan"))


def test_example_meta_learns_to_adapt(example):
    """One inner step gains little at first; after 30 iterations it gains several units."""
    returns = np.array(example.train(n_itr=30, seed=1))
    gain = returns[:, 1] - returns[:, 0]
    assert gain[-10:].mean() > 4.0, gain
    assert gain[-10:].mean() > gain[:3].mean() + 2.0, gain


MUJOCO_EXAMPLE = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "examples",
                              "custom_mujoco_env.py")


@pytest.fixture(scope="module")
def mujoco_example():
    pytest.importorskip("mujoco")
    yield from loaded_example(MUJOCO_EXAMPLE, "custom_mujoco_env_example")


def test_mujoco_example_reward_is_its_formula(mujoco_example):
    env = mujoco_example.HalfCheetahRandGoalEnv()
    env.set_task(1.5)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (18,) and obs[0] == env.data.qpos[0]  # the root's x is observed
    action = np.linspace(-1.0, 1.0, 6)
    obs, reward, terminated, truncated, info = env.step(action)
    x = float(env.data.qpos[0])
    assert info["goal_distance"] == pytest.approx(abs(x - 1.5), rel=1e-12)
    assert reward == pytest.approx(-abs(x - 1.5) - 0.05 * float(action @ action), rel=1e-12)
    assert not terminated and not truncated


def test_mujoco_example_steps_batched_and_equals_the_single_env(mujoco_example):
    """The samplers pick its batched form (not copies stepped one at a time), and that form
    gives the single env's numbers bit for bit."""
    import pickle

    from test_batched_envs import assert_twins_agree

    from meta_policy_search.envs import normalize
    from meta_policy_search.envs.batched import NormalizedBatchedEnv, make_batched_env
    from meta_policy_search.envs.batched.mujoco import BatchedMujocoEnv

    env = normalize(mujoco_example.HalfCheetahRandGoalEnv())
    batched = make_batched_env(env, 3, lambda: pickle.loads(pickle.dumps(env)))
    assert isinstance(batched, NormalizedBatchedEnv), type(batched)  # not the per-env EnvList
    assert isinstance(batched.env, BatchedMujocoEnv)
    assert_twins_agree(env, num_envs=4, num_steps=60)


FROM_PYTHON = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "examples",
                           "from_python.py")


def test_from_python_example_trains_restores_and_evaluates(tmp_path, capsys):
    """The "From Python" page's code: train with the classes, restore the checkpoint, adapt."""
    from meta_policy_search.utils import logger

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "experiments"))
    from promp_run_point_mass import main as point_mass_main

    sys.path.pop(0)
    spec = importlib.util.spec_from_file_location("from_python_example", FROM_PYTHON)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        module.train(str(tmp_path), n_itr=3)
        logger.reset()
        results = module.evaluate(str(tmp_path), n_tasks=3, num_adapt_steps=1)
    finally:
        del sys.modules[spec.name]
        logger.reset()
    assert [step["num_grad_steps"] for step in results] == [0, 1]
    run_dir = point_mass_main(["--n_itr", "1", "--meta_batch_size", "2", "--rollouts_per_meta_task",
                               "2", "--max_path_length", "10", "--hidden_sizes", "4",
                               "--log_formats", "csv", "--dump_path", str(tmp_path / "script")])
    logger.reset()
    script_results = module.evaluate_script_run(run_dir, n_tasks=2, num_adapt_steps=1)
    assert [step["n_tasks"] for step in script_results] == [2, 2]
    assert all(np.isfinite(step["mean_return"]) for step in results)
    out = capsys.readouterr().out
    assert "checkpoint of iteration 2, 3 held-out tasks" in out
    assert "the adapted policy's episodes end near" in out
