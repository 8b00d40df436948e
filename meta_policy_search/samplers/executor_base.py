"""What every executor shares: argument checks and the rollout worker.

:class:`RolloutWorker` is what runs on every worker of a
:class:`~meta_policy_search.samplers.worker_pool.WorkerPoolExecutor` (in this process, in a
spawned process or in a Ray actor): the env copies of one block of tasks and the one rollout
loop (:func:`~meta_policy_search.samplers.rollout.collect_paths`) over its share of every sampling
phase (:mod:`~meta_policy_search.samplers.split`). :class:`ExecutorBase` checks
and stores the executor's sizes and its closed / tasks-set state.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Self

from meta_policy_search.envs.base import BatchedMetaEnv
from meta_policy_search.envs.batched.base import make_batched_env
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers.paths import CompactPaths
from meta_policy_search.samplers.quota import EpisodeQuota, SamplingQuota, StepBudget
from meta_policy_search.samplers.rollout import ExecTimes, collect_paths, space_dim
from meta_policy_search.samplers.split import Share, first_round_share
from meta_policy_search.types import Task
from meta_policy_search.utils.validation import check_non_negative_int, check_positive_int


def check_tasks(tasks: Sequence[Task], meta_batch_size: int) -> list[Task]:
    """Return ``tasks`` as a list, or raise a ValueError if there are not ``meta_batch_size``."""
    tasks = list(tasks)
    if len(tasks) != meta_batch_size:
        raise ValueError(f"expected meta_batch_size={meta_batch_size} tasks, got {len(tasks)}")
    return tasks


def check_policy(policy: object, num_tasks: int, obs_dim: int, action_dim: int) -> None:
    """Check that a sampling policy fits the executor's tasks and env.

    Args:
        policy: should be a :class:`NumpyGaussianMLP`.
        num_tasks: expected number of tasks (the policy's leading axis).
        obs_dim: observation size of the env.
        action_dim: action size of the env.

    Raises:
        ValueError: on a wrong type, task count, input size or output size.
    """
    if not isinstance(policy, NumpyGaussianMLP):
        raise ValueError(f"policy must be a NumpyGaussianMLP, got {type(policy).__name__}")
    if policy.num_tasks != num_tasks:
        raise ValueError(f"policy has {policy.num_tasks} tasks, expected {num_tasks}")
    policy_obs_dim = policy.params["W0"].shape[1]
    if policy_obs_dim != obs_dim:
        raise ValueError(f"policy observation dim {policy_obs_dim} != env obs dim {obs_dim}")
    last = policy.params[f"W{policy.num_layers - 1}"].shape[-1]
    if last != action_dim or policy.params["log_std"].shape[-1] != action_dim:
        raise ValueError(f"policy action dim {last} != env action dim {action_dim}")


def check_quota(quota: object) -> SamplingQuota:
    """Return ``quota`` after checking that it is an :class:`EpisodeQuota` or
    :class:`StepBudget`; raise a ValueError naming it otherwise."""
    if not isinstance(quota, (EpisodeQuota, StepBudget)):
        raise ValueError(
            "quota must be an EpisodeQuota or StepBudget (see "
            f"meta_policy_search.samplers.quota.make_quota), got {quota!r}"
        )
    return quota


def check_num_workers(
    name: str, value: int, meta_batch_size: int, episodes_per_task: int, unit: str
) -> int:
    """Check a number of workers (processes, actors): positive and at most the number of
    episodes a sampling phase can split (:func:`~meta_policy_search.samplers.split.split_episodes`).

    Args:
        name: argument name for the error message, e.g. ``"n_parallel"``.
        value: the number to check.
        meta_batch_size: number of tasks ``T``.
        episodes_per_task: the episodes of a task that can be split
            (:meth:`~meta_policy_search.samplers.quota.SamplingQuota.leading_episodes`).
        unit: what a worker is called in the message, with its article, e.g. ``"a worker"``.

    Returns:
        ``value`` as an int.

    Raises:
        ValueError: if ``value`` is not a positive integer or exceeds
            ``meta_batch_size x episodes_per_task``.
    """
    value = check_positive_int(name, value)
    if value > meta_batch_size * episodes_per_task:
        raise ValueError(
            f"{name}={value} exceeds meta_batch_size={meta_batch_size} x {episodes_per_task} "
            f"episode(s) per task that a phase can split = {meta_batch_size * episodes_per_task}: "
            f"{unit} needs at least one episode"
        )
    return value


@dataclasses.dataclass(frozen=True)
class WorkerSpec:
    """What a :class:`RolloutWorker` is built from, besides the env (sent once, at start).

    Attributes:
        task_start: global index of the worker's first task.
        task_stop: one past the global index of its last task.
        envs_per_task: env copies per task ``E``.
        max_path_length: ``H``.
        seed: root seed of the episode randomness.
        quota: the episodes each task gets per collection.
        use_batched_env: use the env's batched implementation if it has one.
        episodes: per task of the block, the ``(first, stop)`` range of its leading episodes
            (:meth:`~meta_policy_search.samplers.quota.SamplingQuota.leading_episodes`) that the
            worker runs (:func:`~meta_policy_search.samplers.split.split_episodes`); ``None``:
            all of them, for every task.
    """

    task_start: int
    task_stop: int
    envs_per_task: int
    max_path_length: int
    seed: int
    quota: SamplingQuota
    use_batched_env: bool = True
    episodes: tuple[tuple[int, int], ...] | None = None


class RolloutWorker:
    """The env copies of a block of tasks and the one rollout loop: what every worker runs.

    Each task of the block has ``E`` env copies (its env slot), set by :meth:`set_tasks`.
    :meth:`collect` runs the worker's share of a sampling phase; under a step budget,
    :meth:`continue_tasks` then runs the rest of tasks that were split over workers (a second
    round, with the policy and phase of the last :meth:`collect`).

    Args:
        env: the MetaEnv to copy (the prototype of the batched env, not stepped itself).
        spec: the worker's task block, sizes, seed, quota and share of the episodes.
        copy_env: returns a new independent copy of ``env`` (for the per-env path).
    """

    def __init__(self, env: Any, spec: WorkerSpec, copy_env: Callable[[], Any]) -> None:
        self.spec = spec
        self.task_indices = range(spec.task_start, spec.task_stop)
        self.envs: BatchedMetaEnv = make_batched_env(
            env, len(self.task_indices) * spec.envs_per_task, copy_env, spec.use_batched_env
        )
        leading = spec.quota.leading_episodes(spec.envs_per_task)
        ranges = spec.episodes or ((0, leading),) * len(self.task_indices)
        if len(ranges) != len(self.task_indices):
            raise ValueError(
                f"WorkerSpec has {len(ranges)} episode ranges for {len(self.task_indices)} tasks"
            )
        self.shares = [
            first_round_share(task, first, stop, spec.quota, spec.envs_per_task)
            for task, (first, stop) in zip(self.task_indices, ranges)
        ]
        """The worker's share of every sampling phase, one per task of its block."""
        self._last: tuple[NumpyGaussianMLP, int] | None = None

    def set_tasks(self, tasks: Sequence[Task]) -> None:
        """Set local task ``t`` on every env copy ``t * E + j`` of it."""
        self.envs.set_tasks([task for task in tasks for _ in range(self.spec.envs_per_task)])

    def collect(self, policy: NumpyGaussianMLP, phase: int) -> tuple[CompactPaths, ExecTimes]:
        """The worker's shares of the phase (row ``t``: the share of local task ``t`` from its
        first episode on), and the seconds spent in the policy and the envs."""
        spec, exec_times = self.spec, ExecTimes()
        self._last = (policy, phase)
        paths = collect_paths(
            self.envs, spec.envs_per_task, policy, self.shares, spec.max_path_length, spec.seed,
            phase, exec_times,
        )
        return paths, exec_times

    def continue_tasks(
        self, known_lengths: Sequence[tuple[int, tuple[int, ...]]]
    ) -> tuple[CompactPaths, ExecTimes]:
        """Continue tasks of the block whose leading episodes ran on several workers.

        Args:
            known_lengths: ``(task, lengths)`` pairs, ascending in ``task`` (global indices):
                the lengths of the task's leading episodes.

        Returns:
            The tasks' following episodes (from episode ``len(lengths)`` on), one row per task,
            and the seconds spent in the policy and the envs.

        Raises:
            RuntimeError: if :meth:`collect` was not called before.
        """
        if self._last is None:
            raise RuntimeError("continue_tasks() needs a collect() of the same phase before it")
        policy, phase = self._last
        spec, exec_times = self.spec, ExecTimes()
        slots = [task - spec.task_start for task, _ in known_lengths]
        rows = NumpyGaussianMLP(
            {name: value[slots] for name, value in policy.params.items()},
            policy.hidden_nonlinearity, policy.min_log_std,
        )
        shares = [Share(task, spec.quota, known_lengths=tuple(lengths))
                  for task, lengths in known_lengths]
        paths = collect_paths(
            self.envs, spec.envs_per_task, rows, shares, spec.max_path_length, spec.seed,
            phase, exec_times, env_slots=slots,
        )
        return paths, exec_times

    def info(self) -> dict[str, Any]:
        """:func:`process_info` of the process the worker runs in."""
        return process_info()

    def close(self) -> None:
        """Close the env copies."""
        self.envs.close()


def process_info() -> dict[str, Any]:
    """Diagnostics of this (worker) process.

    Returns:
        ``pid``, ``hostname``, ``tensorflow_imported`` (whether TensorFlow is loaded: it should
        not be in a worker) and ``cpu_seconds`` (the process's CPU time so far).
    """
    return {
        "pid": os.getpid(),
        "hostname": socket.gethostname(),
        "tensorflow_imported": "tensorflow" in sys.modules,
        "cpu_seconds": time.process_time(),
    }


class ExecutorBase:
    """Argument checks and context management shared by the executors.

    Subclasses call ``_init_sizes`` and ``_init_spaces`` in their constructor,
    ``_check_collect_args`` at the start of ``collect`` and set ``_tasks_set`` in
    ``set_tasks``; they define ``close``, which sets ``_closed``; ``collect`` sets
    ``last_exec_times``.
    """

    last_exec_times: ExecTimes = ExecTimes()
    """Seconds the last ``collect`` spent in the policy and the envs, summed over workers."""

    _closed: bool = False
    _tasks_set: bool = False
    _closed_message = "the executor is closed"

    meta_batch_size: int
    quota: SamplingQuota
    envs_per_task: int
    max_path_length: int
    seed: int
    obs_dim: int
    action_dim: int

    def _init_sizes(
        self, meta_batch_size: int, envs_per_task: int, max_path_length: int, seed: int,
        quota: SamplingQuota,
    ) -> None:
        """Check and store the sizes, the seed and the quota; raise ValueError on a bad one."""
        self.quota = check_quota(quota)
        self.meta_batch_size = check_positive_int("meta_batch_size", meta_batch_size)
        self.envs_per_task = check_positive_int("envs_per_task", envs_per_task)
        self.max_path_length = check_positive_int("max_path_length", max_path_length)
        self.seed = check_non_negative_int("seed", seed)

    def _init_spaces(self, env: Any) -> None:
        """Store the flat observation and action sizes of ``env``; ValueError if not flat."""
        self.obs_dim = space_dim(env.observation_space, "observation_space")
        self.action_dim = space_dim(env.action_space, "action_space")

    def _check_collect_args(self, policy: NumpyGaussianMLP, phase: int) -> int:
        """Check the executor's state and ``collect``'s arguments.

        Returns:
            ``phase`` as an int.

        Raises:
            RuntimeError: if the executor is closed or ``set_tasks`` was never called.
            ValueError: on a negative phase or a policy that does not fit the tasks and env.
        """
        self._check_open()
        phase = check_non_negative_int("phase", phase)
        check_policy(policy, self.meta_batch_size, self.obs_dim, self.action_dim)
        if not self._tasks_set:
            raise RuntimeError("call set_tasks() before collect()")
        return phase

    def _check_open(self) -> None:
        """Raise a RuntimeError if the executor is closed."""
        if self._closed:
            raise RuntimeError(self._closed_message)

    def close(self) -> None:
        """Release the executor's envs or workers (safe to call more than once)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
