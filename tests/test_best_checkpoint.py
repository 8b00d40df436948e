"""--keep_best: the checkpoint of the best iteration is kept beside the newest one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_trainer import log_dir, make_trainer  # noqa: F401 - the fixture is used by name

from meta_policy_search.best_checkpoint import BEST_VALUE_KEY, BestCheckpointCallback
from meta_policy_search.experiment.configs import TRPOMAMLConfig, validate_config
from meta_policy_search.utils.checkpoint import restore_checkpoint


class RecordingTrainer:
    def __init__(self) -> None:
        self.saved: list[tuple[int, float]] = []

    def save(self, itr, checkpoint_dir=None, extra_state=None):
        self.saved.append((itr, extra_state[BEST_VALUE_KEY]))


def test_saves_only_on_a_new_finite_best(tmp_path):
    callback = BestCheckpointCallback("Step_1-AverageReturn", str(tmp_path / "best"))
    trainer = RecordingTrainer()
    for itr, value in enumerate([1.0, 3.0, 2.0, 5.0, math.nan, 5.0, -1.0]):
        callback(trainer, itr, {"Step_1-AverageReturn": value})
    assert trainer.saved == [(0, 1.0), (1, 3.0), (3, 5.0)]
    assert (callback.best_itr, callback.best_value) == (3, 5.0)


def test_missing_metric_names_the_available_ones(tmp_path):
    callback = BestCheckpointCallback("Step_2-AverageReturn", str(tmp_path / "best"))
    with pytest.raises(KeyError, match="Step_2-AverageReturn.*Step_0-AverageReturn"):
        callback(RecordingTrainer(), 0, {"Step_0-AverageReturn": 1.0})


def test_best_checkpoint_holds_the_best_iteration_and_survives_a_resume(log_dir):  # noqa: F811
    best_dir = str(log_dir / "checkpoints_best")
    trainer, _ = make_trainer(log_dir, n_itr=4)
    # The fake sampler's rewards grow with every call, so Step_0's return is best at the end;
    # reverse that with a metric the test controls.
    values = iter([2.0, 7.0, 4.0, 6.0])
    callback = BestCheckpointCallback("Step_0-AverageReturn", best_dir)
    trainer.callbacks = (lambda tr, itr, stats: callback(tr, itr, {
        "Step_0-AverageReturn": next(values)}),)
    trainer.train()
    state = restore_checkpoint(best_dir)
    assert (state["itr"], state[BEST_VALUE_KEY]) == (1, 7.0)
    assert restore_checkpoint(str(log_dir / "checkpoints"))["itr"] == 3
    # The best checkpoint restores like any other: the algorithm's step counter of iteration 1.
    fresh, _ = make_trainer(log_dir, n_itr=4)
    assert fresh.restore(best_dir) == 2
    assert float(fresh.algo.step.numpy()) == 2.0
    # After a resume the callback compares against the stored best, not -inf.
    resumed = BestCheckpointCallback("Step_0-AverageReturn", best_dir)
    assert (resumed.best_itr, resumed.best_value) == (1, 7.0)
    resumed(RecordingTrainer(), 4, {"Step_0-AverageReturn": 6.5})
    assert np.isclose(resumed.best_value, 7.0)


@pytest.mark.parametrize("metric, ok", [
    ("Step_1-AverageReturn", True), ("Step_0-AverageReturn", True),
    ("Step_2-AverageReturn", False), ("AverageReturn", False),
])
def test_keep_best_must_name_a_step_return_of_the_run(metric, ok):
    errors = validate_config(TRPOMAMLConfig(keep_best=metric, num_inner_grad_steps=1))
    assert (errors == []) == ok
    if not ok:
        assert errors == [f"--keep_best {metric}: must be one of Step_0-AverageReturn, "
                          "Step_1-AverageReturn"]


def test_meta_test_evaluates_the_best_checkpoint(tmp_path, capsys):
    """A tiny point-mass run with --keep_best; meta_testing.py --checkpoint best restores it."""
    import json
    import os
    import sys

    from meta_policy_search import evaluation
    from meta_policy_search.utils import logger

    experiments = os.path.join(os.path.dirname(__file__), os.pardir, "experiments")
    sys.path.insert(0, experiments)
    try:
        import meta_testing
        from promp_run_point_mass import main as train_point_mass
    finally:
        sys.path.remove(experiments)
    run_dir = str(tmp_path / "run")
    with pytest.raises(SystemExit) as error:  # a bad metric fails before TensorFlow loads
        train_point_mass(["--dump_path", run_dir, "--keep_best", "Return"])
    assert error.value.code == 2 and "--keep_best Return: must be one of" in capsys.readouterr().err
    try:
        train_point_mass(["--n_itr", "3", "--meta_batch_size", "2", "--rollouts_per_meta_task",
                          "2", "--max_path_length", "10", "--hidden_sizes", "8", "--log_formats",
                          "csv", "--keep_best", "Step_1-AverageReturn", "--dump_path", run_dir])
    finally:
        logger.reset()
    rows = read_rows(os.path.join(run_dir, "progress.csv"))
    returns = [float(row["Step_1-AverageReturn"]) for row in rows]
    best_itr = int(np.argmax(returns))
    assert restore_checkpoint(os.path.join(run_dir, "checkpoints_best"))["itr"] == best_itr
    out = str(tmp_path / "eval")
    meta_testing.main([run_dir, "--checkpoint", "best", "--n_tasks", "1", "--num_adapt_steps", "0",
                    "--rollouts_per_task", "1", "--no_random_init", "--output_dir", out])
    with open(os.path.join(out, "meta_test.json")) as f:
        results = json.load(f)
    assert (results["checkpoint"], results["checkpoint_itr"]) == ("best", best_itr)
    with pytest.raises(FileNotFoundError, match="--keep_best"):
        evaluation.find_checkpoint_dir(str(tmp_path), "best")


def read_rows(path):
    import csv

    with open(path, newline="") as f:
        return list(csv.DictReader(f))
