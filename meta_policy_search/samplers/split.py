"""How a sampling phase is split over workers: *shares* of the tasks' episodes.

A worker collects shares: some or all of one task's episodes (:class:`Share`). The leading
episodes of every task (:meth:`~meta_policy_search.samplers.quota.SamplingQuota.leading_episodes`:
all ``R`` of the ``'rollouts'`` mode, the first ``E`` under a step budget) each run on a copy and
in a wave fixed in advance (copy ``k mod E``, wave ``k // E``), so :func:`split_episodes` deals
them out task by task in contiguous blocks whose sizes differ by at most one episode: with 40
tasks x 20 episodes and 16 workers every worker gets 50 episodes, where whole tasks would give
some 3 tasks (60) and others 2 (40). An episode's randomness depends only on ``(seed, phase,
task, episode)`` and the policy is evaluated for its copy at the same row and width as in a
whole-task collection, so the arrays do not depend on the split.

Under a step budget the episodes after the first ``E`` are not fixed in advance: the copy whose
episode ends first takes the next one, so which copy (which row of the policy's matmul) runs an
episode depends on when the earlier ones end. A task whose first ``E`` episodes were split over
several workers and do not already fill its budget (:func:`complete_prefix`) is therefore
continued, whole, by one of those workers in a second round: given the first episodes' lengths
(``Share.known_lengths``) the collection replays their schedule without stepping them and
runs the following episodes on the same copies at the same ticks as a whole-task collection
would (:func:`assign_continuations` spreads the continued tasks). Without early termination
(e.g. the half-cheetah) the first round fills every budget and there is no second round.

Splitting assumes what identical executors already need: an episode depends only on its task,
its reset seed and its actions, not on the episodes its env copy ran before (a MuJoCo env resets
all of its ``MjData``).

This module imports only the standard library and the quota rules.
"""

from __future__ import annotations

import dataclasses

from meta_policy_search.samplers.quota import EpisodeQuota, SamplingQuota


@dataclasses.dataclass(frozen=True)
class Share:
    """The episodes of one task that one collection runs.

    Attributes:
        task_index: global index of the task in the meta-batch (seeds its episodes).
        quota: the rule of the task's episodes (which copy runs which episode, when the task
            is complete).
        episodes: ``(first, stop)``: run only the episodes ``first .. stop - 1`` of a rule with
            waves (their copies and waves as the rule gives them), all to their end; ``None``:
            every episode the rule gives.
        known_lengths: lengths of the task's episodes ``0 .. n - 1`` that other collections ran,
            episode ``k`` on copy ``k`` from the first tick (under a step budget,
            :meth:`~meta_policy_search.samplers.quota.StepBudget.leading_episodes`): they are
            replayed without stepping, so that the later episodes run on the copies and at the
            ticks of a whole-task collection; they are not returned.
    """

    task_index: int
    quota: SamplingQuota
    episodes: tuple[int, int] | None = None
    known_lengths: tuple[int, ...] = ()

    @property
    def first_episode(self) -> int:
        """Index of the first episode the collection returns for this share."""
        if self.episodes is not None:
            return self.episodes[0]
        return len(self.known_lengths)

    @property
    def whole(self) -> bool:
        """Whether the share is the task's whole collection (nothing run elsewhere)."""
        return self.episodes is None and not self.known_lengths


def split_episodes(
    meta_batch_size: int, episodes_per_task: int, num_workers: int
) -> list[list[tuple[int, int, int]]]:
    """Deal ``meta_batch_size x episodes_per_task`` episodes to workers in contiguous blocks.

    Episodes are numbered task by task (``t x n + k``); worker ``w`` gets the numbers from
    ``floor(w x total / W)`` to ``floor((w + 1) x total / W)``, so the blocks' sizes differ by at
    most one, and a block falls on task boundaries wherever ``W`` allows it (every block is whole
    tasks when ``W`` divides ``T``).

    Args:
        meta_batch_size: ``T``, ``>= 1``.
        episodes_per_task: ``n``, the episodes of a task that may be split, ``>= 1``.
        num_workers: ``W``, ``1 <= W <= T x n``.

    Returns:
        Per worker, its ``(task, first, stop)`` ranges (episodes ``first .. stop - 1`` of
        ``task``), in task order.

    Raises:
        ValueError: on a size below 1 or more workers than episodes.
    """
    total = meta_batch_size * episodes_per_task
    if meta_batch_size < 1 or episodes_per_task < 1 or not 1 <= num_workers <= total:
        raise ValueError(
            f"cannot split {meta_batch_size} tasks x {episodes_per_task} episodes over "
            f"{num_workers} workers: each worker needs at least one episode"
        )
    blocks = []
    for worker in range(num_workers):
        start, stop = worker * total // num_workers, (worker + 1) * total // num_workers
        block = []
        while start < stop:
            task, first = divmod(start, episodes_per_task)
            end = min(stop, (task + 1) * episodes_per_task)
            block.append((task, first, end - task * episodes_per_task))
            start = end
        blocks.append(block)
    return blocks


def first_round_share(
    task: int, first: int, stop: int, quota: SamplingQuota, envs_per_task: int
) -> Share:
    """The share of a worker that runs the leading episodes ``first`` to ``stop - 1`` of ``task``.

    All of them: the whole task under ``quota``. Part of them: exactly those episodes, each on
    its copy from its wave (under a step budget: the first ``E`` episodes are one wave of ``E``
    copies, an :class:`~meta_policy_search.samplers.quota.EpisodeQuota` of ``E`` episodes).
    """
    leading = quota.leading_episodes(envs_per_task)
    if (first, stop) == (0, leading):
        return Share(task, quota)
    rule = quota if quota.waves else EpisodeQuota(leading)
    return Share(task, rule, episodes=(first, stop))


def complete_prefix(quota: SamplingQuota, lengths: list[int], max_path_length: int) -> int | None:
    """The number of episodes of the shortest complete prefix of ``lengths``, or ``None``.

    The rule is the collection's own (``quota.is_complete`` after each episode in order).
    """
    steps = 0
    for count, length in enumerate(lengths, 1):
        steps += length
        if quota.is_complete(count, steps, max_path_length):
            return count
    return None


def assign_continuations(
    candidates: dict[int, list[int]], remaining_steps: dict[int, int]
) -> dict[int, list[int]]:
    """Which worker continues each task: longest first, to the least loaded of its candidates.

    Only the speed depends on this choice; the results are the same whichever worker continues
    a task.

    Args:
        candidates: task -> the workers that hold it (ascending).
        remaining_steps: task -> an estimate of its remaining work (e.g. its budget minus the
            steps it has).

    Returns:
        Worker -> the tasks it continues, ascending.
    """
    load: dict[int, int] = {}
    chosen: dict[int, list[int]] = {}
    for task in sorted(candidates, key=lambda t: (-remaining_steps[t], t)):
        worker = min(candidates[task], key=lambda w: (load.get(w, 0), w))
        load[worker] = load.get(worker, 0) + remaining_steps[task]
        chosen.setdefault(worker, []).append(task)
    return {worker: sorted(tasks) for worker, tasks in sorted(chosen.items())}
