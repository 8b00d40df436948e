"""What the executors share: argument checks, the split into task blocks, context management.

:class:`ExecutorBase` is the common base of
:class:`~meta_policy_search.samplers.MetaIterativeEnvExecutor`,
:class:`~meta_policy_search.samplers.MetaParallelEnvExecutor` and
:class:`~meta_policy_search.samplers.MetaRayEnvExecutor`; it only checks and stores arguments,
the stepping is each executor's own.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from meta_policy_search.envs.base import check_positive_int
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers.rollout import check_non_negative_int, check_policy, space_dim


def check_num_workers(name: str, value: int, meta_batch_size: int, unit: str) -> int:
    """Check a number of workers (processes, actors): positive and at most ``meta_batch_size``.

    Args:
        name: argument name for the error message, e.g. ``"n_parallel"``.
        value: the number to check.
        meta_batch_size: number of tasks ``T``.
        unit: what a worker is called in the message, with its article, e.g. ``"a worker"``.

    Returns:
        ``value`` as an int.

    Raises:
        ValueError: if ``value`` is not a positive integer or exceeds ``meta_batch_size``.
    """
    value = check_positive_int(name, value)
    if value > meta_batch_size:
        raise ValueError(
            f"{name}={value} exceeds meta_batch_size={meta_batch_size}: {unit} needs at least "
            "one task"
        )
    return value


def split_task_blocks(meta_batch_size: int, num_blocks: int) -> list[tuple[int, int]]:
    """Split ``range(meta_batch_size)`` into ``num_blocks`` contiguous blocks of near-equal size.

    Args:
        meta_batch_size: number of tasks ``T``.
        num_blocks: number of blocks, ``1 <= num_blocks <= meta_batch_size``.

    Returns:
        ``num_blocks`` half-open ``(start, stop)`` ranges covering ``0 .. T`` in order; the
        first ``T % num_blocks`` blocks hold one task more than the others.
    """
    blocks = np.array_split(np.arange(meta_batch_size), num_blocks)
    return [(int(block[0]), int(block[-1]) + 1) for block in blocks]


class ExecutorBase:
    """Argument checks and context management shared by the executors.

    Subclasses call :meth:`_init_sizes` and :meth:`_init_spaces` in their constructor and
    :meth:`_check_collect_args` at the start of ``collect``, and define ``close``.
    """

    meta_batch_size: int
    envs_per_task: int
    max_path_length: int
    seed: int
    obs_dim: int
    action_dim: int

    def _init_sizes(
        self, meta_batch_size: int, envs_per_task: int, max_path_length: int, seed: int
    ) -> None:
        """Check and store the sizes and the seed; raise ValueError on a bad one."""
        self.meta_batch_size = check_positive_int("meta_batch_size", meta_batch_size)
        self.envs_per_task = check_positive_int("envs_per_task", envs_per_task)
        self.max_path_length = check_positive_int("max_path_length", max_path_length)
        self.seed = check_non_negative_int("seed", seed)

    def _init_spaces(self, env: Any) -> None:
        """Store the flat observation and action sizes of ``env``; ValueError if not flat."""
        self.obs_dim = space_dim(env.observation_space, "observation_space")
        self.action_dim = space_dim(env.action_space, "action_space")

    def _check_collect_args(
        self, policy: NumpyGaussianMLP, num_rollouts: int, phase: int
    ) -> tuple[int, int]:
        """Check ``collect``'s arguments; return ``(num_rollouts, phase)`` as ints."""
        num_rollouts = check_positive_int("num_rollouts", num_rollouts)
        phase = check_non_negative_int("phase", phase)
        check_policy(policy, self.meta_batch_size, self.obs_dim, self.action_dim)
        return num_rollouts, phase

    def close(self) -> None:
        """Release the executor's envs or workers (safe to call more than once)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
