"""--keep_best: the checkpoint of the best iteration is kept beside the newest one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_trainer import log_dir, make_trainer  # noqa: F401 - the fixture is used by name

from meta_policy_search.best_checkpoint import BEST_VALUE_KEY, BestCheckpointCallback
from meta_policy_search.utils.checkpoint import restore_checkpoint
from meta_policy_search.utils.experiment_configs import TRPOMAMLConfig, validate_config


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
