"""Meta-test evaluation: adaptation curves, restoring runs, reproducibility, the CLI outputs."""

from __future__ import annotations

import csv
import json
import math
import os

import numpy as np
import pytest
import tensorflow as tf
from tiny_runs import meta_testing, train_tiny_point_mass

from meta_policy_search import evaluation
from meta_policy_search.experiment.algorithms import ProMPPointMassConfig as PointConfig
from meta_policy_search.experiment.components import build_sample_processor
from meta_policy_search.experiment.registry import ALGORITHMS as _REGISTRY

make_algo = _REGISTRY["promp"].make_algo


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("runs") / "point")
    train_tiny_point_mass(path)
    return path


def small_setup(seed: int = 0, n_tasks: int = 3, rollouts: int = 4, horizon: int = 10,
                inner_lr: float = 0.1, hidden_sizes=(8,)):
    config = PointConfig(max_path_length=horizon, hidden_sizes=hidden_sizes, inner_lr=inner_lr)
    setup = evaluation.build_evaluation(config, make_algo, build_sample_processor,
                                        n_tasks=n_tasks, seed=seed, rollouts_per_task=rollouts)
    tasks = evaluation.draw_tasks(setup.env, n_tasks, seed=seed)
    return setup, tasks


def param_values(policy) -> dict[str, np.ndarray]:
    return {name: var.numpy().copy() for name, var in policy.get_params().items()}


def run(setup, tasks, num_adapt_steps):
    return evaluation.evaluate_adaptation(setup.algo, setup.policy, setup.sampler,
                                          setup.sample_processor, tasks, num_adapt_steps)


# ---------------------------------------------------------------------------- library
def test_summarize_returns_matches_hand_computation():
    stats = evaluation.summarize_returns(np.array([1.0, 2.0, 6.0]))
    # mean 3; sample variance ((-2)^2 + (-1)^2 + 3^2) / 2 = 7
    assert stats["mean_return"] == pytest.approx(3.0)
    assert stats["std_return"] == pytest.approx(math.sqrt(7.0))
    assert stats["stderr_return"] == pytest.approx(math.sqrt(7.0 / 3.0))
    assert evaluation.summarize_returns(np.array([5.0]))["std_return"] == 0.0


def test_step_zero_return_equals_a_direct_sampling_phase():
    setup, tasks = small_setup(seed=4)
    results = run(setup, tasks, 0)
    assert len(results) == 1 and results[0]["num_grad_steps"] == 0
    # Second path: the same components sample the same phase 0 of the same tasks by hand.
    other, _ = small_setup(seed=4)
    other.sampler.set_state({**other.sampler.get_state(), "tasks": tasks})
    paths = other.sampler.obtain_samples()
    expected = (paths.rewards * paths.mask).sum(axis=-1).mean(axis=-1)
    np.testing.assert_allclose(results[0]["task_returns"], expected, rtol=1e-6)
    assert results[0]["num_env_steps"] == 3 * 4 * 10


def test_shared_params_unchanged_and_same_seed_same_numbers():
    setup, tasks = small_setup(seed=1)
    before = param_values(setup.policy)
    first = run(setup, tasks, 3)
    assert [r["num_grad_steps"] for r in first] == [0, 1, 2, 3]
    for name, value in param_values(setup.policy).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    assert setup.policy.is_pre_update
    # Adaptation did happen: post-update returns differ from pre-update ones.
    assert first[1]["task_returns"] != first[0]["task_returns"]

    again, again_tasks = small_setup(seed=1)
    np.testing.assert_array_equal(np.stack(again_tasks), np.stack(tasks))
    assert run(again, again_tasks, 3) == first
    different, different_tasks = small_setup(seed=2)
    assert run(different, different_tasks, 3)[0]["mean_return"] != first[0]["mean_return"]


def test_one_inner_step_improves_random_init_on_point_navigation():
    """2-D navigation, inner_lr 0.1, normalized advantages: one step helps from random init.

    Measured (20 rollouts, H=50, 10 tasks, seeds 0-5): mean per-task improvement 1.0-1.5 with
    standard error ~0.2; with inner_lr 1e-6 (no real step) it is 0.0 +- 0.2. The threshold 0.5
    sits between the two, so a broken or missing inner step fails this test.
    """
    def improvement(inner_lr):
        setup, tasks = small_setup(seed=0, n_tasks=10, rollouts=20, horizon=50,
                                   inner_lr=inner_lr, hidden_sizes=(16, 16))
        results = run(setup, tasks, 1)
        return np.subtract(results[1]["task_returns"], results[0]["task_returns"])

    gain = improvement(0.1)
    assert gain.mean() > 0.5, gain
    assert (gain > 0).mean() >= 0.8, gain
    assert improvement(1e-6).mean() < 0.5  # the control: the threshold can fail


def test_bad_arguments_raise_with_clear_messages():
    setup, tasks = small_setup(seed=0)
    with pytest.raises(ValueError, match="num_adapt_steps"):
        run(setup, tasks, -1)
    with pytest.raises(ValueError, match="meta_batch_size=3"):
        run(setup, tasks[:2], 1)
    with pytest.raises(ValueError, match="at least one task"):
        run(setup, [], 1)
    with pytest.raises(ValueError, match="n_tasks"):
        evaluation.draw_tasks(setup.env, 0, seed=0)
    with pytest.raises(ValueError, match="n_tasks"):
        evaluation.build_evaluation(PointConfig(), make_algo, build_sample_processor,
                                    n_tasks=0, seed=0)


# ---------------------------------------------------------------------------- restoring a run
def test_restore_run_loads_the_checkpointed_policy(run_dir):
    config = evaluation.load_run_config(run_dir, PointConfig)
    assert config.meta_batch_size == 4 and config.hidden_sizes == (8,)
    full = evaluation.build_evaluation(config, make_algo, build_sample_processor, 2, seed=0,
                                       executor="iterative")
    fresh = param_values(full.policy)
    assert evaluation.restore_run(run_dir, full.algo, full.policy) == 1  # last iteration
    restored = param_values(full.policy)
    reader = tf.train.load_checkpoint(
        os.path.join(run_dir, "checkpoints", open(
            os.path.join(run_dir, "checkpoints", "latest")).read().strip(), "tf_state")
    )
    for name, value in restored.items():
        saved = reader.get_tensor(f"policy_params/{name}/.ATTRIBUTES/VARIABLE_VALUE")
        np.testing.assert_array_equal(value, saved, err_msg=name)
    assert any(not np.array_equal(fresh[k], restored[k]) for k in fresh)  # training moved them
    # Second path: restoring only the policy parameters gives the same values.
    only_policy = evaluation.build_evaluation(config, make_algo, build_sample_processor, 2,
                                              seed=0, executor="iterative")
    assert evaluation.restore_policy_params(run_dir, only_policy.policy) == 1
    for name, value in param_values(only_policy.policy).items():
        np.testing.assert_array_equal(value, restored[name], err_msg=name)


def test_missing_files_raise_file_not_found(run_dir, tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="params.json"):
        evaluation.load_run_config(str(tmp_path), PointConfig)
    no_checkpoint = tmp_path / "fresh"
    no_checkpoint.mkdir()
    with open(os.path.join(run_dir, "params.json")) as src:
        (no_checkpoint / "params.json").write_text(src.read())
    with pytest.raises(FileNotFoundError, match="no complete checkpoint"):
        meta_testing.evaluate_run(str(no_checkpoint), n_tasks=1, num_adapt_steps=0)
    # The CLI checks before loading TensorFlow: exit 2, one line naming the problem.
    for argv, message in [
        ([str(no_checkpoint), "--output_dir", str(tmp_path / "out")], "has no checkpoint yet"),
        ([str(tmp_path / "nothing_here")], "no params.json there"),
    ]:
        with pytest.raises(SystemExit) as error:
            meta_testing.main(argv)
        assert error.value.code == 2
        assert message in capsys.readouterr().err


def test_cli_rejects_bad_counts_and_unknown_algorithms(run_dir, tmp_path, capsys):
    for flag, value in (("--num_adapt_steps", "-1"), ("--n_tasks", "0")):
        with pytest.raises(SystemExit) as error:
            meta_testing.main([run_dir, flag, value, "--output_dir", str(tmp_path)])
        assert error.value.code == 2
        assert f"{flag} {value}: must be an integer" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown algo 'ppo'"):
        meta_testing.script_builders("ppo")
    assert not os.listdir(tmp_path)  # nothing written on bad input


# ---------------------------------------------------------------------------- the CLI
def test_cli_writes_json_csv_and_png(run_dir, tmp_path, capsys):
    output_dir = str(tmp_path / "meta_test")
    args = [run_dir, "--n_tasks", "3", "--num_adapt_steps", "2", "--rollouts_per_task", "2",
            "--pretrained_run", run_dir, "--output_dir", output_dir]
    assert meta_testing.main(args) == output_dir

    with open(os.path.join(output_dir, "meta_test.json")) as f:
        results = json.load(f)
    assert list(results["policies"]) == ["promp", "random-init", "pretrained"]
    assert results["seed"] == 3 + evaluation.EVAL_SEED_OFFSET
    assert (results["n_tasks"], results["num_adapt_steps"], results["checkpoint_itr"]) == (3, 2, 1)
    assert np.asarray(results["tasks"]).shape == (3, 2)  # three 2-D goals
    for steps in results["policies"].values():
        assert [s["num_grad_steps"] for s in steps] == [0, 1, 2]
        for step in steps:
            assert len(step["task_returns"]) == 3 and step["num_env_steps"] == 3 * 2 * 20
            assert np.isfinite([step["mean_return"], step["std_return"], step["stderr_return"]]).all()
    # Same checkpoint restored two ways, same tasks and episode seeds: identical curves.
    assert results["policies"]["pretrained"] == results["policies"]["promp"]
    assert results["policies"]["random-init"] != results["policies"]["promp"]

    with open(os.path.join(output_dir, "meta_test.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3 * 3 and tuple(rows[0]) == meta_testing.CSV_FIELDS
    first = results["policies"]["promp"][0]
    assert float(rows[0]["mean_return"]) == pytest.approx(first["mean_return"])

    with open(os.path.join(output_dir, "meta_test.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    table = capsys.readouterr().out
    assert "random-init" in table and "2 steps" in table

    # Same seed, second invocation: the same numbers.
    meta_testing.main(args[:-1] + [str(tmp_path / "again")])
    with open(tmp_path / "again" / "meta_test.json") as f:
        assert json.load(f)["policies"] == results["policies"]
