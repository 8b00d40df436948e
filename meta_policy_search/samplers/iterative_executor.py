"""Executor that steps all environments in the calling process."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

from meta_policy_search.envs.batched.base import BatchedMetaEnv
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers.executor_base import (
    ExecutorBase,
    check_tasks,
    close_envs,
    make_envs,
    set_env_tasks,
)
from meta_policy_search.samplers.quota import SamplingQuota
from meta_policy_search.samplers.rollout import ExecTimes, collect_paths
from meta_policy_search.types import PathBatch, Task


def copy_env(env: Any) -> Any:
    """An independent copy of ``env`` made through pickle (MetaEnvs are picklable)."""
    return pickle.loads(pickle.dumps(env))


class MetaIterativeEnvExecutor(ExecutorBase):
    """Run every task's environment copies in this process, one policy call per time step.

    Each of the ``meta_batch_size`` tasks gets ``envs_per_task`` copies of ``env``; see
    :mod:`meta_policy_search.samplers.rollout` for how episodes are collected and seeded.

    Args:
        env: the :class:`~meta_policy_search.envs.MetaEnv` to copy (it is not stepped itself).
        meta_batch_size: number of tasks ``T``.
        envs_per_task: env copies per task ``E``; each copy runs its episodes back to back.
        max_path_length: ``H``, steps per episode at most.
        seed: root seed of all episode randomness, ``>= 0``.
        use_batched_env: step the env's batched implementation (``env.make_batched``) if it has
            one; ``False`` steps single env copies one after the other (same results, slower).
        quota: the episodes each task gets per :meth:`collect`
            (:func:`~meta_policy_search.samplers.quota.make_quota`).

    Raises:
        ValueError: on non-positive sizes, a negative seed, a non-flat observation or action
            space, or a ``quota`` that is not one.
    """

    def __init__(
        self,
        env: Any,
        meta_batch_size: int,
        envs_per_task: int,
        max_path_length: int,
        seed: int = 0,
        use_batched_env: bool = True,
        *,
        quota: SamplingQuota,
    ) -> None:
        self._init_sizes(meta_batch_size, envs_per_task, max_path_length, seed, quota)
        self._init_spaces(env)
        self.envs: BatchedMetaEnv | None = make_envs(
            env, self.meta_batch_size, self.envs_per_task, lambda: copy_env(env), use_batched_env
        )

    def set_tasks(self, tasks: Sequence[Task]) -> None:
        """Set task ``t`` on every env copy of task ``t``.

        Args:
            tasks: ``meta_batch_size`` tasks, e.g. from ``env.sample_tasks``.

        Raises:
            ValueError: if the number of tasks is not ``meta_batch_size``.
        """
        self._check_open()
        assert self.envs is not None
        set_env_tasks(self.envs, check_tasks(tasks, self.meta_batch_size), self.envs_per_task)
        self._tasks_set = True

    def collect(self, policy: NumpyGaussianMLP, phase: int) -> PathBatch:
        """Collect every task's episodes as the executor's quota says.

        Args:
            policy: per-task policies, ``num_tasks == meta_batch_size``.
            phase: sampling-phase counter (``>= 0``) that, with the seed, fixes the randomness.

        Returns:
            A :class:`PathBatch` ``[T, N, H, ...]``: ``N = R`` for an
            :class:`~meta_policy_search.samplers.quota.EpisodeQuota`, a ladder size
            (:func:`~meta_policy_search.samplers.quota.episode_bucket`) for a
            :class:`~meta_policy_search.samplers.quota.StepBudget`.

        Raises:
            ValueError: on a mismatched policy or a negative phase.
            RuntimeError: if :meth:`set_tasks` was never called or the executor is closed.
        """
        phase = self._check_collect_args(policy, phase)
        assert self.envs is not None
        self.last_exec_times = ExecTimes()
        return collect_paths(
            self.envs, self.envs_per_task, policy, range(self.meta_batch_size), self.quota,
            self.max_path_length, self.seed, phase, self.last_exec_times,
        )

    def close(self) -> None:
        """Close all env copies (safe to call more than once)."""
        if self.envs is not None:
            close_envs(self.envs)
        self.envs = None
        self._closed = True
