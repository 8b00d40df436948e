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
    collect_paths,
    make_envs,
    set_env_tasks,
)
from meta_policy_search.types import PathBatch, Task


def copy_env(env: Any) -> Any:
    """An independent copy of ``env`` made through pickle (MetaEnvs are picklable)."""
    return pickle.loads(pickle.dumps(env))


class MetaIterativeEnvExecutor(ExecutorBase):
    """Run every task's environment copies in this process, one policy call per time step.

    Each of the ``meta_batch_size`` tasks gets ``envs_per_task`` copies of ``env``; see
    :mod:`meta_policy_search.samplers.rollout` and
    :mod:`meta_policy_search.samplers.budget_rollout` for how episodes are collected and seeded.

    Args:
        env: the :class:`~meta_policy_search.envs.MetaEnv` to copy (it is not stepped itself).
        meta_batch_size: number of tasks ``T``.
        envs_per_task: env copies per task ``E``; ``R`` rollouts take ``ceil(R / E)`` waves.
        max_path_length: ``H``, steps per episode at most.
        seed: root seed of all episode randomness, ``>= 0``.
        use_batched_env: step the env's batched implementation (``env.make_batched``) if it has
            one; ``False`` steps single env copies one after the other (same results, slower).

    Raises:
        ValueError: on non-positive sizes, a negative seed or a non-flat observation or action
            space.
    """

    def __init__(
        self,
        env: Any,
        meta_batch_size: int,
        envs_per_task: int,
        max_path_length: int,
        seed: int = 0,
        use_batched_env: bool = True,
    ) -> None:
        self._init_sizes(meta_batch_size, envs_per_task, max_path_length, seed)
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

    def collect(
        self,
        policy: NumpyGaussianMLP,
        num_rollouts: int,
        phase: int,
        sampling_mode: str = "rollouts",
    ) -> PathBatch:
        """Collect ``num_rollouts`` episodes (or ``num_rollouts x H`` steps) for every task.

        Args:
            policy: per-task policies, ``num_tasks == meta_batch_size``.
            num_rollouts: ``R``, episodes per task, or the per-task budget in units of ``H``.
            phase: sampling-phase counter (``>= 0``) that, with the seed, fixes the randomness.
            sampling_mode: ``'rollouts'`` (exactly ``R`` episodes per task) or ``'budget'``
                (complete episodes until each task holds ``R x H`` real steps).

        Returns:
            A :class:`PathBatch` ``[T, N, H, ...]``: ``N = R`` in ``'rollouts'`` mode, a ladder
            size (:func:`~meta_policy_search.samplers.budget_rollout.episode_bucket`) in
            ``'budget'`` mode.

        Raises:
            ValueError: on a mismatched policy, bad sizes or an unknown ``sampling_mode``.
            RuntimeError: if :meth:`set_tasks` was never called or the executor is closed.
        """
        num_rollouts, phase, sampling_mode = self._check_collect_args(
            policy, num_rollouts, phase, sampling_mode
        )
        assert self.envs is not None
        paths, self.last_exec_times = collect_paths(
            self.envs,
            self.envs_per_task,
            policy,
            range(self.meta_batch_size),
            num_rollouts,
            self.max_path_length,
            self.seed,
            phase,
            sampling_mode,
        )
        return paths

    def close(self) -> None:
        """Close all env copies (safe to call more than once)."""
        if self.envs is not None:
            close_envs(self.envs)
        self.envs = None
        self._closed = True
