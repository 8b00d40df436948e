"""The sampling quota: how many episodes each task gets in one sampling phase.

A :class:`MetaSampler <meta_policy_search.samplers.MetaSampler>` turns its ``sampling_mode`` into
a quota once, with :func:`make_quota`; the executors receive the quota when they are built (and
hand it to their workers then), and the one rollout loop
(:func:`~meta_policy_search.samplers.rollout.collect_paths`) asks it which episode an env copy
runs next. ``R`` is ``rollouts_per_meta_task``, ``H`` is ``max_path_length``, ``E`` is
``envs_per_task``.

* :class:`EpisodeQuota` (``'rollouts'``): exactly ``R`` episodes per task, in *waves*: in wave
  ``w`` env copy ``j`` of every task runs episode ``w x E + j`` (if it is below ``R``), and the
  next wave starts when every copy of the executor (or worker) is idle.
* :class:`StepBudget` (``'budget'``): the original ProMP sampler's step budget, per task: complete
  episodes ``0, 1, 2, ...`` until the shortest prefix of them holding ``>= R x H`` real steps is
  complete; an env copy whose episode ended takes the next unstarted episode of its task while
  the task's completed plus running steps are below the budget. Extra episodes (started, but
  beyond the prefix) are stopped and dropped.

Episode ``k`` of a task draws its randomness from
:func:`~meta_policy_search.samplers.rollout.episode_randomness` with rollout index ``k`` in both
modes, so without early termination the two modes return the same episodes.

This module imports nothing but the standard library, so configuration code may read
:data:`SAMPLING_MODES` without loading numpy, gymnasium or TensorFlow.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import ClassVar, Protocol

SAMPLING_MODES = ("rollouts", "budget")
"""Names accepted as ``sampling_mode``: exactly ``R`` episodes per task (:class:`EpisodeQuota`),
or the original's step budget of ``R x H`` real steps per task (:class:`StepBudget`)."""

DEFAULT_SAMPLING_MODE = "rollouts"
"""The default ``sampling_mode`` of ``MetaSampler`` and of the run scripts' configs."""

_LADDER_QUARTERS = (4, 5, 6, 7)
"""Bucket sizes per octave in quarters of ``R * 2^j``: ``R x {1, 1.25, 1.5, 1.75} x 2^j``."""


def episode_bucket(num_episodes: int, num_rollouts: int) -> int:
    """The padded size of the episode axis: the smallest ladder size ``>= num_episodes``.

    The ladder is ``ceil(R * m)`` for ``m`` in ``1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7,
    8, 10, ...`` (four geometric steps per doubling), so padding adds at most about 25 % (plus
    rounding for small ``R``) and an algorithm's graphs are traced for only a few sizes.

    Args:
        num_episodes: the largest number of episodes of a task, ``>= 0``.
        num_rollouts: ``R``, ``>= 1``.

    Returns:
        The bucket size, ``>= max(num_episodes, R)``.

    Raises:
        ValueError: if ``num_rollouts < 1`` or ``num_episodes < 0``.
    """
    if num_rollouts < 1 or num_episodes < 0:
        raise ValueError(
            f"episode_bucket needs num_rollouts >= 1 and num_episodes >= 0, got num_rollouts="
            f"{num_rollouts}, num_episodes={num_episodes}"
        )
    octave = 0
    while True:
        for quarters in _LADDER_QUARTERS:
            size = -(-(num_rollouts * quarters << octave) // 4)
            if size >= num_episodes:
                return size
        octave += 1


def is_episode_bucket(size: int, num_rollouts: int) -> bool:
    """Whether ``size`` is on the ladder of :func:`episode_bucket` for ``R = num_rollouts``."""
    return size >= num_rollouts and episode_bucket(size, num_rollouts) == size


class TaskProgress(Protocol):
    """What a quota reads of one task's episodes during a collection (see ``rollout.py``)."""

    @property
    def num_started(self) -> int:
        """Episodes of the task started so far."""
        ...

    @property
    def started_steps(self) -> int:
        """Steps of its completed episodes plus those of its running ones so far."""
        ...

    @property
    def done(self) -> bool:
        """Whether its complete prefix of episodes already fills the quota."""
        ...


class SamplingQuota(Protocol):
    """The per-task episode rule of a sampling mode (:class:`EpisodeQuota`, :class:`StepBudget`)."""

    mode: ClassVar[str]
    """The ``sampling_mode`` name of the rule (one of :data:`SAMPLING_MODES`)."""
    waves: ClassVar[bool]
    """Whether a copy whose episode ended waits until every copy is idle (then all start their
    next episodes together) instead of starting its next episode at once."""

    @property
    def num_rollouts(self) -> int:
        """``R``: episodes per task, or the budget in units of ``H``."""
        ...

    def next_episode(
        self, task: TaskProgress, copy_index: int, wave: int, envs_per_task: int,
        max_path_length: int,
    ) -> int | None:
        """The episode index an idle env copy of ``task`` runs next in ``wave`` (the collection's
        wave counter; only rules with :attr:`waves` read it), or ``None`` to stay idle."""
        ...

    def is_complete(self, prefix_episodes: int, prefix_steps: int, max_path_length: int) -> bool:
        """Whether a task whose first ``prefix_episodes`` episodes (``prefix_steps`` steps) are
        complete has its batch."""
        ...

    def max_ticks(self, envs_per_task: int, max_path_length: int) -> int:
        """An upper bound on the time steps a collection takes."""
        ...

    def num_slots(self, max_episodes: int) -> int:
        """Size of the returned episode axis when the fullest task has ``max_episodes``."""
        ...

    def num_waves(self, envs_per_task: int) -> int:
        """How many waves a collection starts (a rule without :attr:`waves` starts one)."""
        ...

    def wave_width(self, wave: int, envs_per_task: int) -> int:
        """``e``: how many copies of a task the policy is evaluated on in ``wave`` (the copies
        ``0 .. e - 1``). A matmul may round a row differently for a different number of rows,
        so the width depends on the rule alone, never on how tasks are split over workers."""
        ...

    def leading_episodes(self, envs_per_task: int) -> int:
        """How many of a task's first episodes always run, each on its own copy from the
        first tick (episode ``k`` on copy ``k mod E``): the episodes a sampling phase may split
        over several workers without changing any result."""
        ...


@dataclasses.dataclass(frozen=True)
class EpisodeQuota:
    """``'rollouts'``: exactly ``num_rollouts`` episodes per task, ``ceil(R / E)`` waves.

    In wave ``w`` env copy ``j`` runs episode ``w x E + j`` if it is below ``R``; the policy is
    evaluated on the ``[T, e]`` copies of the wave (``e = min(E, R - w x E)``).

    Args:
        num_rollouts: ``R``, episodes per task and phase, ``>= 1``.
    """

    mode: ClassVar[str] = "rollouts"
    waves: ClassVar[bool] = True
    num_rollouts: int

    def next_episode(
        self, task: TaskProgress, copy_index: int, wave: int, envs_per_task: int,
        max_path_length: int,
    ) -> int | None:
        """Episode ``wave x E + copy_index`` if it is below ``R``, else ``None``."""
        episode = copy_index + wave * envs_per_task
        return episode if episode < self.num_rollouts else None

    def is_complete(self, prefix_episodes: int, prefix_steps: int, max_path_length: int) -> bool:
        """All ``R`` episodes are complete."""
        return prefix_episodes >= self.num_rollouts

    def max_ticks(self, envs_per_task: int, max_path_length: int) -> int:
        """``ceil(R / E) x H``: each of the ``ceil(R / E)`` waves lasts at most ``H`` steps."""
        return -(-self.num_rollouts // envs_per_task) * max_path_length

    def num_slots(self, max_episodes: int) -> int:
        """``R``."""
        return self.num_rollouts

    def num_waves(self, envs_per_task: int) -> int:
        """``ceil(R / E)``."""
        return -(-self.num_rollouts // envs_per_task)

    def wave_width(self, wave: int, envs_per_task: int) -> int:
        """``min(E, R - wave x E)``: the copies that have an episode in the wave."""
        return min(envs_per_task, self.num_rollouts - wave * envs_per_task)

    def leading_episodes(self, envs_per_task: int) -> int:
        """``R``: every episode's copy and wave are fixed in advance."""
        return self.num_rollouts


@dataclasses.dataclass(frozen=True)
class StepBudget:
    """``'budget'``: per task, the shortest prefix of episodes holding ``>= R x H`` real steps.

    Args:
        num_rollouts: ``R``; each task's budget is ``R x H`` real steps, ``>= 1``.
    """

    mode: ClassVar[str] = "budget"
    waves: ClassVar[bool] = False
    num_rollouts: int

    def next_episode(
        self, task: TaskProgress, copy_index: int, wave: int, envs_per_task: int,
        max_path_length: int,
    ) -> int | None:
        """The task's next unstarted episode while its started steps are below the budget."""
        if task.done or task.started_steps >= self.num_rollouts * max_path_length:
            return None
        return task.num_started

    def is_complete(self, prefix_episodes: int, prefix_steps: int, max_path_length: int) -> bool:
        """The complete prefix holds ``>= R x H`` steps."""
        return prefix_steps >= self.num_rollouts * max_path_length

    def max_ticks(self, envs_per_task: int, max_path_length: int) -> int:
        """``ceil(R x H / E) + H``: while a task is below its budget all its copies step every
        tick, so its started steps pass the budget after ``ceil(R x H / E)`` ticks; an episode
        started then lasts at most ``H`` more."""
        return -(-self.num_rollouts * max_path_length // envs_per_task) + max_path_length

    def num_slots(self, max_episodes: int) -> int:
        """:func:`episode_bucket` of ``max_episodes``: tasks' graphs see only a few shapes."""
        return episode_bucket(max_episodes, self.num_rollouts)

    def num_waves(self, envs_per_task: int) -> int:
        """1: copies start their next episodes as soon as they are idle."""
        return 1

    def wave_width(self, wave: int, envs_per_task: int) -> int:
        """``E``: every copy starts an episode at the first tick (the budget of ``R x H >= E``
        steps is not reached before)."""
        return envs_per_task

    def leading_episodes(self, envs_per_task: int) -> int:
        """``E``: episodes ``0 .. E - 1`` start on copies ``0 .. E - 1`` at the first tick and
        belong to every complete prefix (it holds at least ``R >= E`` episodes); which copy
        runs a later episode depends on when the earlier ones end."""
        return envs_per_task


_QUOTAS: dict[str, type[EpisodeQuota] | type[StepBudget]] = {
    EpisodeQuota.mode: EpisodeQuota,
    StepBudget.mode: StepBudget,
}


def make_quota(sampling_mode: str, num_rollouts: int) -> EpisodeQuota | StepBudget:
    """The quota of a sampling mode.

    Args:
        sampling_mode: one of :data:`SAMPLING_MODES`.
        num_rollouts: ``R``, ``>= 1``.

    Returns:
        An :class:`EpisodeQuota` (``'rollouts'``) or a :class:`StepBudget` (``'budget'``).

    Raises:
        ValueError: on an unknown ``sampling_mode`` or ``num_rollouts < 1``.
    """
    if sampling_mode not in _QUOTAS:
        raise ValueError(f"sampling_mode must be one of {SAMPLING_MODES}, got {sampling_mode!r}")
    if isinstance(num_rollouts, bool) or not hasattr(num_rollouts, "__index__") or num_rollouts < 1:
        raise ValueError(f"num_rollouts must be an integer >= 1, got {num_rollouts!r}")
    return _QUOTAS[sampling_mode](operator.index(num_rollouts))
