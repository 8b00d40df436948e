"""Keep the checkpoint of the best iteration so far (the MAML paper evaluated its best iterate).

:class:`BestCheckpointCallback` is a :class:`~meta_policy_search.meta_trainer.Trainer`
callback: after every iteration whose ``metric`` beats the best value so far it writes the
iteration's checkpoint (atomically, like the Trainer's own) into ``RUN_DIR/checkpoints_best``,
with the metric's value in the checkpoint's state so a resumed run keeps comparing against it.
``experiments/meta_testing.py --checkpoint best`` evaluates it. The run scripts build it from
``--keep_best METRIC``.
"""

from __future__ import annotations

import math
import os
from typing import Any

from meta_policy_search.utils.checkpoint_lookup import find_checkpoint

BEST_DIR_NAME = "checkpoints_best"
"""Sub-directory of a run directory holding the best iteration's checkpoint."""

BEST_VALUE_KEY = "keep_best_value"
"""Key of the metric's value in the best checkpoint's state."""

class BestCheckpointCallback:
    """Trainer callback writing the checkpoint of the iteration with the highest ``metric``.

    Args:
        metric: key of the Trainer's per-iteration stats to maximise, e.g.
            ``'Step_1-AverageReturn'`` (the post-update return, as the MAML paper chose).
        checkpoint_dir: where the best checkpoint goes (``RUN_DIR/checkpoints_best``); an
            existing best checkpoint there (from before a resume) sets the value to beat.
    """

    def __init__(self, metric: str, checkpoint_dir: str) -> None:
        self.metric = metric
        self.checkpoint_dir = checkpoint_dir
        self.best_value = -math.inf
        """The best value of ``metric`` so far (``-inf`` before the first iteration)."""
        self.best_itr: int | None = None
        """The iteration of the best checkpoint, if any."""
        # Found as a resume finds the run's checkpoint (the newest that verifies); a resume has
        # already refused a best checkpoint that does not read back.
        state = find_checkpoint(checkpoint_dir).state
        if state is not None:
            self.best_value = float(state.get(BEST_VALUE_KEY, -math.inf))
            self.best_itr = int(state["itr"])

    def __call__(self, trainer: Any, itr: int, stats: dict[str, float]) -> None:
        """Save ``trainer``'s state of iteration ``itr`` if ``stats[metric]`` is a new best.

        Raises:
            KeyError: if the stats lack ``metric``.
        """
        if self.metric not in stats:
            raise KeyError(
                f"keep_best metric {self.metric!r} is not among the iteration's stats "
                f"({', '.join(sorted(stats))})"
            )
        value = float(stats[self.metric])
        if math.isfinite(value) and value > self.best_value:
            trainer.save(itr, self.checkpoint_dir, extra_state={BEST_VALUE_KEY: value})
            self.best_value, self.best_itr = value, itr


def best_checkpoint_dir(run_dir: str) -> str:
    """``run_dir/checkpoints_best``."""
    return os.path.join(run_dir, BEST_DIR_NAME)
