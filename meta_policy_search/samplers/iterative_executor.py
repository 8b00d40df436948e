"""Executor that steps all environments in the calling process."""

from __future__ import annotations

import pickle
from collections.abc import Collection, Sequence
from typing import Any

from meta_policy_search.samplers.executor_base import RolloutWorker, WorkerSpec
from meta_policy_search.samplers.quota import SamplingQuota
from meta_policy_search.samplers.worker_pool import WorkerPoolExecutor, WorkerReply


def copy_env(env: Any) -> Any:
    """An independent copy of ``env`` made through pickle (MetaEnvs are picklable)."""
    return pickle.loads(pickle.dumps(env))


class InProcessTransport:
    """Calls :class:`RolloutWorker` s in this process; a worker's exception propagates at once.

    Args:
        env: the env the workers copy (through pickle).
    """

    unit = "worker"

    def __init__(self, env: Any) -> None:
        self._env_bytes = pickle.dumps(env)
        self.workers: list[RolloutWorker] = []
        self._replies: dict[int, WorkerReply] = {}

    def start(self, specs: Sequence[WorkerSpec]) -> None:
        """Build the workers' env copies here."""
        env_bytes = self._env_bytes
        for k, spec in enumerate(specs):
            self.workers.append(
                RolloutWorker(pickle.loads(env_bytes), spec, lambda: pickle.loads(env_bytes))
            )
            self._replies[k] = WorkerReply()

    def submit(self, worker: int, method: str, args: tuple[Any, ...]) -> None:
        """Run the call now (exceptions propagate with their own traceback)."""
        self._replies[worker] = WorkerReply(getattr(self.workers[worker], method)(*args))

    def wait(self, pending: Collection[int], timeout: float | None) -> list[tuple[int, WorkerReply]]:
        """The replies of the calls already run."""
        return [(k, self._replies.pop(k)) for k in pending if k in self._replies]

    def describe(self, worker: int) -> str:
        """Nothing: the worker is this process."""
        return ""

    def hang_hint(self, what: str) -> str:
        """No advice: calls in this process never time out."""
        return ""

    def close(self, wait_seconds: float) -> None:
        """Close the workers' env copies."""
        for worker in self.workers:
            worker.close()
        self.workers = []


class MetaIterativeEnvExecutor(WorkerPoolExecutor):
    """Run every task's environment copies in this process, one policy call per time step.

    Each of the ``meta_batch_size`` tasks gets ``envs_per_task`` copies of ``env``; see
    :mod:`meta_policy_search.samplers.rollout` for how episodes are collected and seeded.

    Args:
        env: the :class:`~meta_policy_search.envs.MetaEnv` to copy (it is not stepped itself).
        meta_batch_size: number of tasks ``T``.
        envs_per_task: env copies per task ``E``.
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

    _closed_message = "the executor is closed"

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
        super().__init__(
            transport=InProcessTransport(env), env=env, meta_batch_size=meta_batch_size,
            envs_per_task=envs_per_task, max_path_length=max_path_length, seed=seed,
            quota=quota, num_workers=1, timeout=None, use_batched_env=use_batched_env,
        )
