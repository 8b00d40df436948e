"""The ``'budget'`` sampling mode: complete episodes until each task holds ``R x H`` real steps.

The original ProMP sampler ran every env, reset an env when its episode ended and stopped once
the *completed* episodes held ``meta_batch_size x R x H`` steps, dropping unfinished episodes: a
task whose episodes terminate early (Hopper, Walker, Ant, Humanoid) gets more, shorter episodes
instead of fewer samples. Here the budget is per task (see :class:`MetaSampler`), which keeps the
result independent of the executor, the worker split and ``envs_per_task``:

* episode ``k = 0, 1, 2, ...`` of a task draws its randomness from
  :func:`~meta_policy_search.samplers.rollout.episode_randomness` with rollout index ``k``, as in
  the ``'rollouts'`` mode;
* a task's batch is the shortest prefix ``0 .. n-1`` of its episodes holding ``>= R x H`` real
  steps (each episode still ends at termination or after ``H`` steps);
* every env copy of a task runs episodes back to back: an env whose episode ended takes the next
  unstarted episode index of its task at once, as long as the task's completed steps plus the
  steps of its running episodes are below the budget. The sum of all started episodes' final
  lengths is then ``>= R x H``, so the prefix is among the started episodes whatever
  ``envs_per_task`` is; once the prefix is complete the task's remaining (extra) episodes are
  stopped and dropped.

One batched policy evaluation and one step of the batched env per time step cover all envs of
the executor's tasks (idle envs included in the policy evaluation, their outputs unused), as in
:func:`~meta_policy_search.samplers.rollout.collect_rollouts`.
Steps are recorded time-major per env and cut into episodes at the end.

The episode axis is padded to :func:`episode_bucket` of the largest ``n`` over the tasks, with
whole padded episodes (all zero, mask 0), so that the algorithms' ``tf.function`` graphs see only
a few shapes.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np

from meta_policy_search.envs.batched.base import BatchedMetaEnv
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers.rollout import (
    ExecTimes,
    episode_randomness,
    record_infos,
    space_dim,
)
from meta_policy_search.types import PathBatch

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


@dataclasses.dataclass
class _TaskEpisodes:
    """Bookkeeping of one task's episodes; list entries are indexed by episode ``k``."""

    task_index: int
    starts: list[int] = dataclasses.field(default_factory=list)
    """Tick of each started episode's first step."""
    envs: list[int] = dataclasses.field(default_factory=list)
    """Flat env index that runs (ran) each started episode."""
    lengths: list[int] = dataclasses.field(default_factory=list)
    """Length of each started episode, -1 while it runs."""
    completed_steps: int = 0
    prefix_len: int = 0
    """Number of leading episodes that are complete (they form the batch once ``done``)."""
    prefix_steps: int = 0
    done: bool = False
    """True once the complete prefix holds the budget: ``prefix_len`` is then ``n``."""

    def finish(self, episode: int, length: int, budget: int) -> None:
        """Record that ``episode`` ended after ``length`` steps; extend the complete prefix."""
        self.lengths[episode] = length
        self.completed_steps += length
        while not self.done and self.prefix_len < len(self.lengths):
            prefix_length = self.lengths[self.prefix_len]
            if prefix_length < 0:
                break
            self.prefix_steps += prefix_length
            self.prefix_len += 1
            self.done = self.prefix_steps >= budget


class _BudgetRun:
    """The state of one budget-mode collection over ``T x E`` envs (flat index ``t * E + j``)."""

    def __init__(
        self,
        envs: BatchedMetaEnv,
        envs_per_task: int,
        task_indices: Sequence[int],
        num_rollouts: int,
        max_path_length: int,
        seed: int,
        phase: int,
    ) -> None:
        self.num_tasks, self.envs_per_task = len(task_indices), envs_per_task
        self.envs = envs
        self.obs_dim = space_dim(envs.observation_space, "observation_space")
        self.act_dim = space_dim(envs.action_space, "action_space")
        self.horizon = max_path_length
        self.budget = num_rollouts * max_path_length
        self.seed, self.phase = seed, phase
        self.tasks = [_TaskEpisodes(int(task_index)) for task_index in task_indices]
        num_envs = self.num_tasks * envs_per_task
        self.episode = [-1] * num_envs  # running episode index k per env, -1 when idle
        self.steps = np.zeros(num_envs, dtype=np.int64)  # steps taken in the running episode
        self.obs_now = np.empty((num_envs, self.obs_dim))
        self.noise = np.zeros((num_envs, self.horizon, self.act_dim))

    def start(self, i: int, tick: int) -> None:
        """Reset env ``i`` for its task's next episode, whose first step is at ``tick``."""
        task = self.tasks[i // self.envs_per_task]
        k = len(task.lengths)
        reset_seed, self.noise[i] = episode_randomness(
            self.seed, self.phase, task.task_index, k, self.horizon, self.act_dim
        )
        self.obs_now[i] = self.envs.reset(np.array([i]), [reset_seed])[0]
        self.episode[i], self.steps[i] = k, 0
        task.starts.append(tick)
        task.envs.append(i)
        task.lengths.append(-1)

    def _stop(self, i: int) -> None:
        self.episode[i], self.steps[i] = -1, 0

    def _started_steps(self, t: int) -> int:
        """Steps of task ``t``'s completed episodes plus those of its running ones so far."""
        first = t * self.envs_per_task
        running = sum(
            int(self.steps[i])
            for i in range(first, first + self.envs_per_task)
            if self.episode[i] >= 0
        )
        return self.tasks[t].completed_steps + running

    def end_episodes(self, finished: list[int], still_running: list[int], tick: int) -> list[int]:
        """Handle the envs whose episode ended at ``tick - 1``; return the envs running at ``tick``.

        Args:
            finished: envs whose episode just ended, ascending.
            still_running: the other envs that stepped, ascending.
            tick: the next tick.

        Returns:
            The running envs, ascending: ``still_running`` without the envs of tasks that are now
            done, plus the finished envs that start a new episode.
        """
        for i in finished:
            t = i // self.envs_per_task
            self.tasks[t].finish(self.episode[i], int(self.steps[i]), self.budget)
            self._stop(i)
        restarted = []
        for i in finished:  # ascending, so a lower env index takes the lower episode index
            t = i // self.envs_per_task
            if not self.tasks[t].done and self._started_steps(t) < self.budget:
                self.start(i, tick)
                restarted.append(i)
        running = []
        for i in still_running:
            if self.tasks[i // self.envs_per_task].done:
                self._stop(i)  # an extra episode beyond the task's prefix: dropped
            else:
                running.append(i)
        return sorted(running + restarted) if restarted else running


def collect_budget(
    envs: BatchedMetaEnv,
    envs_per_task: int,
    policy: NumpyGaussianMLP,
    task_indices: Sequence[int],
    num_rollouts: int,
    max_path_length: int,
    seed: int,
    phase: int,
    exec_times: ExecTimes | None = None,
) -> PathBatch:
    """Collect, per task, the shortest prefix of episodes holding ``>= R x H`` real steps.

    See the module docstring for the rule. The envs must already be set to their tasks. Padded
    steps and padded episodes are zero in every array and have ``mask == 0``.

    Args:
        envs: ``len(task_indices) * envs_per_task`` envs; env ``t * E + j`` is the ``j``-th copy
            of local task ``t``.
        envs_per_task: ``E``, env copies per task.
        policy: per-task policies of these tasks (``num_tasks == len(task_indices)``).
        task_indices: global index of each local task, used to derive randomness.
        num_rollouts: ``R``; each task's budget is ``R x H`` real steps.
        max_path_length: ``H``, steps per episode at most.
        seed: root seed, ``>= 0``.
        phase: sampling-phase counter, ``>= 0``.
        exec_times: if given, the seconds spent in the policy and the envs (steps, and resets
            with the episode bookkeeping around them) are added to it.

    Returns:
        A :class:`PathBatch` ``[len(task_indices), N, H, ...]`` with ``N = episode_bucket(max_t n_t, R)``;
        task ``t``'s episodes ``0 .. n_t - 1`` are real, the rest padding.

    Raises:
        ValueError: if an env's info lacks a key that the first step's info had.
    """
    run = _BudgetRun(envs, envs_per_task, task_indices, num_rollouts, max_path_length, seed, phase)
    num_tasks = run.num_tasks
    num_envs, obs_dim, act_dim = envs.num_envs, run.obs_dim, run.act_dim
    # While a task is below its budget all its envs step every tick, so its started steps pass
    # the budget after ceil(budget / E) ticks; an episode started then lasts at most H more.
    capacity = -(-run.budget // envs_per_task) + max_path_length
    obs_w = np.empty((capacity, num_envs, obs_dim), dtype=np.float32)
    act_w = np.empty((capacity, num_envs, act_dim), dtype=np.float32)
    mean_w = np.empty((capacity, num_envs, act_dim), dtype=np.float32)
    log_std_w = np.empty((capacity, num_envs, act_dim), dtype=np.float32)
    rew_w = np.empty((capacity, num_envs), dtype=np.float32)
    info_w: dict[str, np.ndarray] | None = None
    env_range = np.arange(num_envs)
    obs_now, steps = run.obs_now, run.steps

    clock = time.perf_counter
    policy_seconds = 0.0
    tic = clock()
    for i in range(num_envs):
        run.start(i, 0)
    env_seconds = clock() - tic
    running = list(range(num_envs))
    tick = 0
    while running:
        noise = run.noise[env_range, steps]
        tic = clock()
        act_h, dist = policy.sample(
            obs_now.reshape(num_tasks, envs_per_task, obs_dim),
            noise.reshape(num_tasks, envs_per_task, act_dim),
        )
        policy_seconds += clock() - tic
        # The envs get exactly the stored (float32) actions, so stored data replay exactly.
        act_w[tick] = act_h.reshape(num_envs, act_dim)
        obs_w[tick] = obs_now
        mean_w[tick] = dist["mean"].reshape(num_envs, act_dim)
        log_std_w[tick] = dist["log_std"].reshape(num_envs, act_dim)
        running_envs = np.array(running)
        tic = clock()
        step = envs.step(running_envs, act_w[tick][running_envs])
        env_seconds += clock() - tic
        obs_now[running_envs] = step.observations
        rew_w[tick, running_envs] = step.rewards
        if info_w is None:
            info_w = {key: np.zeros((capacity, num_envs), np.float32) for key in step.infos}
        record_infos(info_w, step.infos, tick, running_envs)
        steps[running_envs] += 1
        ended = step.dones | (steps[running_envs] == max_path_length)
        finished, still_running = running_envs[ended].tolist(), running_envs[~ended].tolist()
        tick += 1
        if finished:
            tic = clock()
            running = run.end_episodes(finished, still_running, tick)
            env_seconds += clock() - tic
        else:
            running = still_running
    if exec_times is not None:
        exec_times.policy_seconds += policy_seconds
        exec_times.env_seconds += env_seconds

    counts = [task.prefix_len for task in run.tasks]
    num_slots = episode_bucket(max(counts), num_rollouts)
    starts = np.zeros((num_tasks, num_slots), dtype=np.int64)
    env_of = np.zeros((num_tasks, num_slots), dtype=np.int64)
    lengths = np.zeros((num_tasks, num_slots), dtype=np.int64)
    for t, (task, count) in enumerate(zip(run.tasks, counts)):
        starts[t, :count] = task.starts[:count]
        env_of[t, :count] = task.envs[:count]
        lengths[t, :count] = task.lengths[:count]
    time_index = np.arange(max_path_length)
    padding = time_index >= lengths[..., None]  # [T, N, H]
    tick_index = np.minimum(starts[..., None] + time_index, tick - 1)
    env_index = np.broadcast_to(env_of[..., None], padding.shape)

    def gather(buffer: np.ndarray) -> np.ndarray:
        """``[ticks, T * E, ...]`` time-major buffer -> ``[T, N, H, ...]`` episodes."""
        episodes = buffer[tick_index, env_index]
        episodes[padding] = 0.0
        return episodes

    return PathBatch(
        observations=gather(obs_w),
        actions=gather(act_w),
        rewards=gather(rew_w),
        mask=(~padding).astype(np.float32),
        agent_infos={"mean": gather(mean_w), "log_std": gather(log_std_w)},
        env_infos={key: gather(buffer) for key, buffer in (info_w or {}).items()},
    )
