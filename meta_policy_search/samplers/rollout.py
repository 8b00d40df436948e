"""The one rollout loop every executor runs: whole padded episodes of a worker's shares of tasks.

An executor owns ``envs_per_task`` (``E``) environment copies per task, as one
:class:`~meta_policy_search.envs.base.BatchedMetaEnv` of ``T x E`` envs: the env's own batched
implementation when it has one (whole-array dynamics, reward and observation), else an
:class:`~meta_policy_search.envs.batched.EnvList` that steps single envs one after the other.

:func:`collect_paths` steps every running env copy once per *tick*: one batched policy evaluation
(:meth:`NumpyGaussianMLP.sample` on ``[T, e, obs_dim]``, the first ``e`` copies of every task,
idle ones included, their outputs unused) and one batched env step of the running copies. The
executor's quota (:mod:`meta_policy_search.samplers.quota`) says which episode of its task a copy
runs next, if any: exactly ``R`` episodes per task in waves of ``e <= E`` copies (``'rollouts'``)
or, the original's step budget, episodes back to back on all ``E`` copies (``'budget'``). Steps are
recorded time-major per copy and cut into episodes at the end.

The width ``e`` of the policy's batch and the row (copy) an episode runs on are part of the result:
a batched matmul may round a row differently for a different number of rows, or at another row
(both seen with numpy's OpenBLAS at the policies' shapes), so they depend on the quota alone,
never on the worker split or the timing. A worker that runs only some episodes of a task
(a :class:`~meta_policy_search.samplers.split.Share`) evaluates the policy on all ``e`` rows of
the wave and runs each episode on its own copy; under a step budget a task continued in a second
round replays its first episodes' schedule (see :mod:`~meta_policy_search.samplers.split`).

Randomness depends only on ``(seed, phase, global task index, episode index)`` (see
:func:`episode_randomness`): not on the number of envs per task, the tick an episode starts at or
the worker that owns the task. This is what makes every executor return identical arrays.

This module imports only numpy (and the TF-free policy, env protocol and types), so sampler
worker processes never load TensorFlow.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from meta_policy_search.envs.base import BatchedMetaEnv
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers.paths import CompactPaths
from meta_policy_search.samplers.split import Share

_RESET_SEED_BOUND = 2**31 - 1



@dataclasses.dataclass
class ExecTimes:
    """Seconds a sampling phase spent in the policy and in the envs (the original's
    ``PolicyExecTime`` and ``EnvExecTime``).

    Filled by the rollout loops; executors with several workers add up their workers' times, so
    with ``n`` workers the sum can reach ``n`` times the wall time.
    """

    policy_seconds: float = 0.0
    """In the policy's forward passes
    (:meth:`~meta_policy_search.policies.numpy_policy.NumpyGaussianMLP.sample`)."""
    env_seconds: float = 0.0
    """In the envs' ``reset`` and ``step``."""

    def __add__(self, other: ExecTimes) -> ExecTimes:
        return ExecTimes(
            self.policy_seconds + other.policy_seconds, self.env_seconds + other.env_seconds
        )


def space_dim(space: Any, name: str) -> int:
    """Size of a flat (1-D) box space, used for observation and action spaces.

    Args:
        space: a gymnasium space.
        name: what the space is (for the error message), e.g. ``'observation_space'``.

    Returns:
        The length of the space's only dimension.

    Raises:
        ValueError: if the space does not have a 1-D shape.
    """
    shape = getattr(space, "shape", None)
    if shape is None or len(shape) != 1:
        raise ValueError(f"env.{name} must be a 1-D Box, got {space!r}")
    return int(shape[0])


def episode_randomness(
    seed: int, phase: int, task_index: int, rollout_index: int, max_path_length: int, action_dim: int
) -> tuple[int, np.ndarray]:
    """The reset seed and action noise of one episode.

    Both come from ``np.random.default_rng([seed, phase, task_index, rollout_index])``, so an
    episode's randomness does not depend on how tasks are split across workers or envs.

    Args:
        seed: the sampler's root seed, ``>= 0``.
        phase: sampling-phase counter, ``>= 0``.
        task_index: global index of the task in the meta-batch.
        rollout_index: index of the episode within the task.
        max_path_length: ``H``.
        action_dim: action size.

    Returns:
        ``(reset_seed, noise)``: the seed for ``env.reset(seed=...)`` and standard normal action
        noise ``[H, action_dim]`` (float64).
    """
    rng = np.random.default_rng([seed, phase, task_index, rollout_index])
    reset_seed = int(rng.integers(_RESET_SEED_BOUND))
    return reset_seed, rng.standard_normal((max_path_length, action_dim))


class _TaskEpisodes:
    """Bookkeeping of one share's episodes during :func:`collect_paths`, keyed by episode ``k``.

    Args:
        share: the task and the episodes of it that the collection runs.
        copies: the flat indices of the task's env copies.
        run: the collection the task belongs to (its copies' running episodes and steps).
    """

    def __init__(self, share: Share, copies: range, run: _Collection) -> None:
        self.share = share
        self.task_index = share.task_index
        self.quota = share.quota
        self.copies = copies
        self._run = run
        self.starts: dict[int, int] = {}
        """Tick of each started episode's first step."""
        self.envs: dict[int, int] = {}
        """Flat env index that runs (ran) each started episode."""
        self.lengths: dict[int, int] = {}
        """Length of each started episode, -1 while it runs."""
        self.completed_steps = 0
        self.prefix_len = 0
        """Number of leading episodes that are complete (they form the batch once ``done``)."""
        self.prefix_steps = 0
        self.done = False
        """True once the complete prefix fills the quota: ``prefix_len`` is then the count."""

    @property
    def num_started(self) -> int:
        """Episodes started so far."""
        return len(self.lengths)

    @property
    def started_steps(self) -> int:
        """Steps of the completed episodes plus those of the running ones so far."""
        run = self._run
        running = sum(int(run.steps[i]) for i in self.copies if run.episode[i] >= 0)
        return self.completed_steps + running

    @property
    def num_returned(self) -> int:
        """How many episodes, from :attr:`Share.first_episode` on, the collection returns."""
        if self.share.episodes is not None:
            first, stop = self.share.episodes
            return stop - first
        return self.prefix_len - self.share.first_episode

    def next_episode(self, copy: int, wave: int) -> int | None:
        """The episode an idle ``copy`` of the task starts in ``wave``, or ``None``."""
        run = self._run
        episode = self.quota.next_episode(self, copy, wave, run.envs_per_task, run.horizon)
        if episode is None or self.share.episodes is None:
            return episode
        first, stop = self.share.episodes
        return episode if first <= episode < stop else None

    def start(self, episode: int, env: int, tick: int) -> None:
        """Record that ``env`` starts ``episode`` with its first step at ``tick``."""
        self.starts[episode], self.envs[episode], self.lengths[episode] = tick, env, -1

    def finish(self, episode: int, length: int) -> None:
        """Record that ``episode`` ended after ``length`` steps; extend the complete prefix."""
        self.lengths[episode] = length
        self.completed_steps += length
        while not self.done and self.lengths.get(self.prefix_len, -1) >= 0:
            self.prefix_steps += self.lengths[self.prefix_len]
            self.prefix_len += 1
            self.done = self.quota.is_complete(
                self.prefix_len, self.prefix_steps, self._run.horizon
            )


class _Collection:
    """The state of one collection over ``S x E`` env copies (flat index ``s * E + j`` for copy
    ``j`` of share ``s``; ``env_ids`` maps it to the index in the batched env).

    An episode with a known length (:attr:`Share.known_lengths`) is *replayed*: its copy counts
    as running, with steps advancing every tick, until the known length, but is never reset or
    stepped.
    """

    def __init__(
        self,
        envs: BatchedMetaEnv,
        envs_per_task: int,
        shares: Sequence[Share],
        env_slots: Sequence[int],
        max_path_length: int,
        seed: int,
        phase: int,
    ) -> None:
        self.num_tasks, self.envs_per_task = len(shares), envs_per_task
        self.envs = envs
        self.obs_dim = space_dim(envs.observation_space, "observation_space")
        self.act_dim = space_dim(envs.action_space, "action_space")
        self.horizon = max_path_length
        self.seed, self.phase = seed, phase
        num_envs = self.num_tasks * envs_per_task
        self.tasks = [
            _TaskEpisodes(share, range(t * envs_per_task, (t + 1) * envs_per_task), self)
            for t, share in enumerate(shares)
        ]
        self.env_ids = np.array(
            [slot * envs_per_task + j for slot in env_slots for j in range(envs_per_task)],
            dtype=np.int64,
        )
        self.num_waves = max(share.quota.num_waves(envs_per_task) for share in shares)
        self.episode = [-1] * num_envs  # running episode index k per env, -1 when idle
        self.steps = np.zeros(num_envs, dtype=np.int64)  # steps taken in the running episode
        # The known length of the episode an env replays (0 when it steps or idles).
        self.replay_length = np.zeros(num_envs, dtype=np.int64)
        self.obs_now = np.zeros((num_envs, self.obs_dim))
        self.noise = np.zeros((num_envs, self.horizon, self.act_dim))

    def wave_width(self, wave: int) -> int:
        """The policy's batch width in ``wave`` (every share's rule must agree on it)."""
        copies = self.envs_per_task
        widths = {task.quota.wave_width(wave, copies) for task in self.tasks
                  if wave < task.quota.num_waves(copies)}
        if len(widths) > 1:
            raise ValueError(
                f"the shares of one collection disagree on wave {wave}'s width: {sorted(widths)}"
            )
        return widths.pop() if widths else copies

    def start(self, candidates: Iterable[int], tick: int, wave: int) -> tuple[list[int], list[int]]:
        """Start the next episode (as the share says) on each idle env of ``candidates``.

        Args:
            candidates: idle envs, ascending (a lower env takes the lower episode index).
            tick: the tick of the new episodes' first step.
            wave: the collection's wave counter (read by rules with waves).

        Returns:
            ``(stepped, replayed)``: the envs that started an episode to step and those that
            replay a known one, each ascending (the others stay idle).
        """
        started, replayed, seeds = [], [], []
        for i in candidates:
            task = self.tasks[i // self.envs_per_task]
            k = task.next_episode(i % self.envs_per_task, wave)
            if k is None:
                continue
            self.episode[i], self.steps[i] = k, 0
            task.start(k, i, tick)
            if k < len(task.share.known_lengths):
                self.replay_length[i] = task.share.known_lengths[k]
                replayed.append(i)
                continue
            reset_seed, self.noise[i] = episode_randomness(
                self.seed, self.phase, task.task_index, k, self.horizon, self.act_dim
            )
            started.append(i)
            seeds.append(reset_seed)
        if started:
            self.obs_now[started] = self.envs.reset(self.env_ids[started], seeds)
        return started, replayed

    def _stop(self, i: int) -> None:
        self.episode[i], self.steps[i], self.replay_length[i] = -1, 0, 0

    def end_episodes(
        self, finished: list[int], still_running: np.ndarray, still_replayed: np.ndarray,
        tick: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Handle the envs whose episode ended at ``tick - 1``; return the envs running at ``tick``.

        Args:
            finished: envs whose episode (stepped or replayed) just ended, ascending.
            still_running: the other stepped envs, ascending.
            still_replayed: the other replaying envs, ascending.
            tick: the next tick.

        Returns:
            ``(running, replayed)``, each ascending: the envs still running or replaying, less
            those of tasks that are now done (their extra episodes are dropped), plus the
            finished envs of rules without waves that start a new episode.
        """
        for i in finished:
            self.tasks[i // self.envs_per_task].finish(self.episode[i], int(self.steps[i]))
            self._stop(i)
        # A rule without waves restarts a copy at once; its wave counter is not read.
        restart = [i for i in finished if not self.tasks[i // self.envs_per_task].quota.waves]
        restarted, restarted_replays = self.start(restart, tick, 0) if restart else ([], [])

        def keep(envs: np.ndarray, added: list[int]) -> np.ndarray:
            kept = [i for i in envs.tolist() if not self.tasks[i // self.envs_per_task].done]
            for i in set(envs.tolist()) - set(kept):
                self._stop(i)
            return np.array(sorted(kept + added) if added else kept, dtype=np.int64)

        return keep(still_running, restarted), keep(still_replayed, restarted_replays)


def _first_copies(
    flat: np.ndarray, num_tasks: int, envs_per_task: int, width: int,
    values: np.ndarray | None = None,
) -> np.ndarray:
    """Read (or, given ``values``, write) the first ``width`` copies of every task.

    Args:
        flat: ``[T * E, d]`` rows, flat index ``t * E + j``.
        num_tasks: ``T``.
        envs_per_task: ``E``.
        width: ``e <= E``.
        values: ``[T, e, d]`` to store into those rows, or ``None`` to read them.

    Returns:
        The ``[T, e, d]`` rows (C-contiguous: a strided matmul input may round differently).
    """
    by_task = flat.reshape(num_tasks, envs_per_task, -1)
    if values is not None:
        by_task[:, :width] = values
        return values
    if width == envs_per_task:
        return by_task
    return np.ascontiguousarray(by_task[:, :width])


def collect_paths(
    envs: BatchedMetaEnv,
    envs_per_task: int,
    policy: NumpyGaussianMLP,
    shares: Sequence[Share],
    max_path_length: int,
    seed: int,
    phase: int,
    exec_times: ExecTimes | None = None,
    env_slots: Sequence[int] | None = None,
) -> CompactPaths:
    """Collect the episodes of each share, with the given envs and policy.

    The envs must already be set to their tasks. An episode's real steps end with the step
    that terminated it or the ``H``-th; the env's per-step infos are stacked into
    ``env_infos``.

    Args:
        envs: a batched env (or an :class:`~meta_policy_search.envs.batched.EnvList` of single
            envs) holding ``E`` copies per env slot: env ``slot * E + j`` is the ``j``-th copy
            of the slot's task.
        envs_per_task: ``E``, env copies per task.
        policy: one policy per share (``num_tasks == len(shares)``), in the same order.
        shares: the tasks and which of their episodes to run
            (:class:`~meta_policy_search.samplers.split.Share`).
        max_path_length: ``H``, steps per episode at most.
        seed: root seed, ``>= 0``.
        phase: sampling-phase counter, ``>= 0``.
        exec_times: if given, the seconds spent in the policy and the envs (steps, and resets
            with the episode bookkeeping around them) are added to it.
        env_slots: the env slot of each share (``None``: share ``s`` uses slot ``s``).

    Returns:
        :class:`~meta_policy_search.samplers.paths.CompactPaths` with one row per share: the
        share's returned episodes from its ``first_episode`` on (a whole task's under a step
        budget: its shortest complete prefix), their real steps only.

    Raises:
        ValueError: if an env's info lacks a key that the first step's info had.
    """
    if env_slots is None:
        env_slots = range(len(shares))
    run = _Collection(envs, envs_per_task, shares, env_slots, max_path_length, seed, phase)
    num_tasks = run.num_tasks
    num_envs, obs_dim, act_dim = num_tasks * envs_per_task, run.obs_dim, run.act_dim
    capacity = max(share.quota.max_ticks(envs_per_task, max_path_length) for share in shares)
    obs_w = np.empty((capacity, num_envs, obs_dim), dtype=np.float32)
    act_w = np.empty((capacity, num_envs, act_dim), dtype=np.float32)
    mean_w = np.empty((capacity, num_envs, act_dim), dtype=np.float32)
    log_std_w = np.empty((capacity, num_envs, act_dim), dtype=np.float32)
    rew_w = np.empty((capacity, num_envs), dtype=np.float32)
    info_w: dict[str, np.ndarray] | None = None
    env_range = np.arange(num_envs)
    obs_now, steps, replay_length = run.obs_now, run.steps, run.replay_length

    clock = time.perf_counter
    policy_seconds = env_seconds = 0.0
    tick, wave, width = 0, 0, envs_per_task
    running = replayed = np.zeros(0, dtype=np.int64)
    while True:
        if not len(running) and not len(replayed):  # the first wave, or the next one
            if wave == run.num_waves:
                break
            tic = clock()
            started, replays = run.start(range(num_envs), tick, wave)
            env_seconds += clock() - tic
            width = run.wave_width(wave)
            wave += 1
            running = np.array(started, dtype=np.int64)
            replayed = np.array(replays, dtype=np.int64)
            continue
        if not len(running):  # only replayed episodes: skip to the tick where one ends
            skip = int(np.min(replay_length[replayed] - steps[replayed]))
            steps[replayed] += skip
            tick += skip
            ended = steps[replayed] == replay_length[replayed]
            running, replayed = run.end_episodes(
                replayed[ended].tolist(), running, replayed[~ended], tick
            )
            continue
        noise = run.noise[env_range, steps]
        tic = clock()
        act_h, dist = policy.sample(
            _first_copies(obs_now, num_tasks, envs_per_task, width),
            _first_copies(noise, num_tasks, envs_per_task, width),
        )
        policy_seconds += clock() - tic
        # The envs get exactly the stored (float32) actions, so stored data replay exactly.
        _first_copies(act_w[tick], num_tasks, envs_per_task, width, act_h)
        obs_w[tick] = obs_now
        _first_copies(mean_w[tick], num_tasks, envs_per_task, width, dist["mean"])
        _first_copies(log_std_w[tick], num_tasks, envs_per_task, width, dist["log_std"])
        tic = clock()
        step = envs.step(run.env_ids[running], act_w[tick][running])
        env_seconds += clock() - tic
        obs_now[running] = step.observations
        rew_w[tick, running] = step.rewards
        if info_w is None:
            info_w = {key: np.zeros((capacity, num_envs), np.float32) for key in step.infos}
        record_infos(info_w, step.infos, tick, running)
        steps[running] += 1
        ended = step.dones | (steps[running] == max_path_length)
        replay_ended = np.zeros(0, dtype=bool)
        if len(replayed):
            steps[replayed] += 1
            replay_ended = steps[replayed] == replay_length[replayed]
        tick += 1
        if ended.any() or replay_ended.any():
            tic = clock()
            finished = running[ended].tolist()
            if replay_ended.any():
                finished = sorted(finished + replayed[replay_ended].tolist())
            running, replayed = run.end_episodes(
                finished, running[~ended], replayed[~replay_ended] if len(replayed) else replayed,
                tick,
            )
            env_seconds += clock() - tic
    if exec_times is not None:
        exec_times.policy_seconds += policy_seconds
        exec_times.env_seconds += env_seconds

    counts = [task.num_returned for task in run.tasks]
    starts = np.zeros((num_tasks, max(counts)), dtype=np.int64)
    env_of = np.zeros((num_tasks, max(counts)), dtype=np.int64)
    lengths = np.zeros((num_tasks, max(counts)), dtype=np.int64)
    for t, (task, count) in enumerate(zip(run.tasks, counts)):
        first = task.share.first_episode
        for n in range(count):
            k = first + n
            starts[t, n], env_of[t, n] = task.starts[k], task.envs[k]
            lengths[t, n] = task.lengths[k]
    time_index = np.arange(max_path_length)
    real = time_index < lengths[..., None]  # [S, N, H]
    tick_index = (starts[..., None] + time_index)[real]
    env_index = np.broadcast_to(env_of[..., None], real.shape)[real]

    def gather(buffer: np.ndarray) -> np.ndarray:
        """``[ticks, S * E, ...]`` time-major buffer -> ``[n, ...]`` real steps in ``(row,
        episode, step)`` order."""
        return buffer[tick_index, env_index]

    return CompactPaths(
        lengths=lengths,
        horizon=max_path_length,
        observations=gather(obs_w),
        actions=gather(act_w),
        rewards=gather(rew_w),
        agent_infos={"mean": gather(mean_w), "log_std": gather(log_std_w)},
        env_infos={key: gather(buffer) for key, buffer in (info_w or {}).items()},
    )


def record_infos(
    buffers: dict[str, np.ndarray], infos: dict[str, np.ndarray], row: int, columns: np.ndarray
) -> None:
    """Store one step's ``infos`` (each ``[k]``) at ``buffers[key][row, columns]``.

    Raises:
        ValueError: if the env's infos changed keys since the first step.
    """
    if len(infos) != len(buffers) or any(key not in infos for key in buffers):
        raise ValueError(
            f"env infos have keys {sorted(infos)} at a later step, {sorted(buffers)} at the "
            "first: a MetaEnv must return the same info keys every step"
        )
    for key, buffer in buffers.items():
        buffer[row, columns] = infos[key]
