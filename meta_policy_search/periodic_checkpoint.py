"""Keep the checkpoint of every N-th iteration, so a run can be looked at where it changed.

The Trainer keeps only its newest checkpoint (``RUN_DIR/checkpoints``). A long run that falls
apart late (a return that collapses at iteration 337 of 625) can then be meta-tested or resumed
only from its end. :class:`PeriodicCheckpointCallback` also writes the checkpoint of iterations
``N - 1, 2N - 1, ...`` (after every ``N`` completed iterations) into
``RUN_DIR/checkpoints_every/itr_<itr>``, each a checkpoint directory of its own (written atomically
like the Trainer's), which ``experiments/meta_testing.py --checkpoint <itr>`` evaluates. The run
scripts build it from ``--keep_every N``. A checkpoint of the paper's policies is about 64 KB.
"""

from __future__ import annotations

import os
from typing import Any

from meta_policy_search.utils.checkpoint_lookup import (
    CHECKPOINT_PREFIX,
    checkpoint_dirs,
    checkpoint_name_iteration,
)

EVERY_DIR_NAME = "checkpoints_every"
"""Sub-directory of a run directory holding the ``--keep_every`` checkpoints."""


def kept_checkpoint_dir(run_dir: str, itr: int) -> str:
    """``run_dir/checkpoints_every/itr_<itr, 6 digits>``: where iteration ``itr``'s kept
    checkpoint lives."""
    return os.path.join(run_dir, EVERY_DIR_NAME, f"{CHECKPOINT_PREFIX}{int(itr):06d}")


def kept_iterations(run_dir: str) -> list[int]:
    """The iterations with a ``--keep_every`` checkpoint directory in ``run_dir``, ascending
    (whether each holds a complete checkpoint is checked where one is read)."""
    names = checkpoint_dirs(os.path.join(run_dir, EVERY_DIR_NAME))
    return sorted({checkpoint_name_iteration(name) for name in names})


class PeriodicCheckpointCallback:
    """Trainer callback keeping the checkpoint of every ``every``-th iteration.

    Args:
        every: keep iterations ``every - 1, 2 * every - 1, ...``; an integer >= 1.
        run_dir: the run directory; checkpoints go to
            :func:`kept_checkpoint_dir` ``(run_dir, itr)``.

    Raises:
        ValueError: if ``every`` is not an integer >= 1.
    """

    def __init__(self, every: int, run_dir: str) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"keep_every must be an integer >= 1, got {every!r}")
        self.every = every
        self.run_dir = run_dir

    def __call__(self, trainer: Any, itr: int, stats: dict[str, float]) -> None:
        """Save ``trainer``'s state of iteration ``itr`` if ``itr + 1`` is a multiple of
        ``every``. A resumed run that repeats the iteration replaces its checkpoint."""
        if (itr + 1) % self.every == 0:
            trainer.save(itr, kept_checkpoint_dir(self.run_dir, itr))
