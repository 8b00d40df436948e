"""Executor whose Ray actors each own whole rollouts of a contiguous block of tasks.

The multi-machine version of :class:`~meta_policy_search.samplers.MetaParallelEnvExecutor`
across machines: a Ray actor call costs about a millisecond, far too much per env step,
so an actor owns all env copies of its tasks and whole rollouts. Once per sampling phase the
driver puts each actor's numpy policy slice into the object store and every actor runs the same
rollout loop (:func:`~meta_policy_search.samplers.executor_base.collect_paths`) and returns
finished, padded arrays (in the ``'budget'`` mode padded to the actor's own episode bucket; the
driver pads all to the largest). Episode randomness depends only on ``(seed, phase, task,
rollout)``, so the result is identical to
:class:`~meta_policy_search.samplers.MetaIterativeEnvExecutor`'s for any number of actors or
machines.

Ray is an optional dependency (``pip install meta_policy_search[ray]``) and is imported only
when an executor is built. Actors import this module, numpy, gymnasium and the envs, never
TensorFlow.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers.executor_base import (
    ExecutorBase,
    check_num_workers,
    check_tasks,
    check_timeout,
    make_envs,
    process_info,
    set_env_tasks,
    split_task_blocks,
    split_worker_results,
)
from meta_policy_search.samplers.quota import SamplingQuota
from meta_policy_search.samplers.rollout import ExecTimes, collect_paths, concatenate_paths
from meta_policy_search.types import PathBatch, Task

_POLL_SECONDS = 0.5
"""How often a waiting driver checks its actors: a dead actor is reported within about this."""


def import_ray() -> Any:
    """Import and return the ``ray`` module.

    Raises:
        ImportError: if Ray is not installed, with the command that installs it.
    """
    try:
        import ray
    except ImportError as error:
        raise ImportError(
            "the Ray executor needs Ray: pip install meta_policy_search[ray] (or pip install ray)"
        ) from error
    return ray


def ensure_ray_initialized(ray_address: str | None = None) -> Any:
    """Start or connect to Ray unless this process already has; return the ``ray`` module.

    Args:
        ray_address: address of a running Ray cluster (e.g. ``'auto'`` or ``'10.0.0.1:6379'``);
            ``None`` starts a local instance with all cores of this machine and no dashboard
            (unless the ``RAY_ADDRESS`` environment variable names a cluster). Ignored if Ray is
            already initialised in this process.

    Returns:
        The ``ray`` module.

    Raises:
        ImportError: if Ray is not installed.
    """
    ray = import_ray()
    if not ray.is_initialized():
        if ray_address is None:
            ray.init(include_dashboard=False)
        else:
            ray.init(address=ray_address)
    return ray


class RolloutActor:
    """Body of one Ray actor: env copies of a block of tasks and the shared rollout loop.

    Plain class, turned into an actor with ``ray.remote`` by :class:`MetaRayEnvExecutor`.

    Args:
        env: the env to copy (``envs_per_task`` copies per task).
        task_start: global index of the actor's first task.
        task_stop: one past the global index of its last task.
        envs_per_task: env copies per task ``E``.
        max_path_length: ``H``.
        seed: root seed of the episode randomness.
        quota: the episodes each task gets per :meth:`collect`.
    """

    def __init__(
        self,
        env: Any,
        task_start: int,
        task_stop: int,
        envs_per_task: int,
        max_path_length: int,
        seed: int,
        quota: SamplingQuota,
    ) -> None:
        from ray import cloudpickle  # copies classes defined in __main__ too, unlike pickle

        blob = cloudpickle.dumps(env)
        self.task_indices = range(task_start, task_stop)
        self.envs_per_task = envs_per_task
        self.envs = make_envs(
            cloudpickle.loads(blob), len(self.task_indices), envs_per_task,
            lambda: cloudpickle.loads(blob),
        )
        self.max_path_length = max_path_length
        self.seed = seed
        self.quota = quota

    def set_tasks(self, tasks: Sequence[Task]) -> None:
        """Set local task ``t`` on every env copy of task ``t``."""
        set_env_tasks(self.envs, tasks, self.envs_per_task)

    def collect(self, policy: NumpyGaussianMLP, phase: int) -> tuple[PathBatch, ExecTimes]:
        """Run :func:`collect_paths` on this actor's tasks: ``[T_local, N, H, ...]`` paths and
        the seconds spent in the policy and the envs."""
        exec_times = ExecTimes()
        paths = collect_paths(
            self.envs, self.envs_per_task, policy, self.task_indices, self.quota,
            self.max_path_length, self.seed, phase, exec_times,
        )
        return paths, exec_times

    def info(self) -> dict[str, Any]:
        """``pid``, ``hostname``, ``tensorflow_imported`` and ``cpu_seconds`` of this actor."""
        return {**process_info(), "hostname": os.uname().nodename}


def _writable(paths: PathBatch) -> PathBatch:
    """Copy of a path batch whose arrays are writable (Ray hands out read-only views)."""
    return PathBatch(
        observations=np.array(paths.observations),
        actions=np.array(paths.actions),
        rewards=np.array(paths.rewards),
        mask=np.array(paths.mask),
        agent_infos={k: np.array(v) for k, v in paths.agent_infos.items()},
        env_infos={k: np.array(v) for k, v in paths.env_infos.items()},
    )


class MetaRayEnvExecutor(ExecutorBase):
    """Run the tasks' environments in ``num_actors`` Ray actors, possibly on several machines.

    Actor ``k`` owns a contiguous block of tasks with ``envs_per_task`` env copies each and asks
    Ray for one CPU, so a cluster spreads the actors over its free cores. A dead actor (killed,
    crashed or on a lost node) makes the pending or next call raise a RuntimeError within about
    a second, and closes the executor. An exception inside an actor is re-raised in the caller by
    Ray (a ``RayTaskError`` that is also an instance of the original exception type, carrying
    the actor's traceback); the executor stays usable.

    Ray is initialised on first use if this process has not done so (see
    :func:`ensure_ray_initialized`); :meth:`close` kills the actors but leaves Ray running.

    Each actor runs its policy with one BLAS thread, as the parallel executor's workers do: Ray
    sets ``OMP_NUM_THREADS`` to an actor's CPU count (1) unless the user set it, and numpy's
    OpenBLAS reads it (checked with Ray 2.60: ``openblas_get_num_threads()`` is 1 in an actor).

    Args:
        env: the :class:`~meta_policy_search.envs.MetaEnv` to copy; it is serialised once with
            Ray's cloudpickle, so a class defined in the running script is shipped by value,
            while a class from an installed module must be importable on every node.
        meta_batch_size: number of tasks ``T``.
        envs_per_task: env copies per task ``E``.
        max_path_length: ``H``, steps per episode at most.
        seed: root seed of all episode randomness, ``>= 0``.
        num_actors: number of actors, at most ``meta_batch_size``; ``None`` means
            ``min(CPUs of the Ray cluster, meta_batch_size)``.
        ray_address: cluster to connect to if Ray is not initialised yet; ``None``: a local one.
        timeout: seconds a :meth:`collect` may take before it fails with a RuntimeError
            (``None``: no limit; dead actors are detected regardless). Starting the actors may
            take at most ``max(timeout, 120)`` seconds.
        quota: the episodes each task gets per :meth:`collect`
            (:func:`~meta_policy_search.samplers.quota.make_quota`), sent to the actors once.

    Raises:
        ImportError: if Ray is not installed.
        ValueError: on non-positive sizes, ``num_actors > meta_batch_size`` or a non-flat space.
        RuntimeError: if the actors cannot be started (e.g. the cluster lacks free CPUs).
    """

    _closed_message = "the executor is closed (after close() or an actor failure)"

    def __init__(
        self,
        env: Any,
        meta_batch_size: int,
        envs_per_task: int,
        max_path_length: int,
        seed: int = 0,
        num_actors: int | None = None,
        ray_address: str | None = None,
        timeout: float | None = None,
        *,
        quota: SamplingQuota,
    ) -> None:
        self._actors: list[Any] = []
        self._closed = True
        self._init_sizes(meta_batch_size, envs_per_task, max_path_length, seed, quota)
        self.timeout = check_timeout(timeout)
        if num_actors is not None:
            num_actors = check_num_workers(
                "num_actors", num_actors, self.meta_batch_size, "an actor"
            )
        self._init_spaces(env)

        self._ray = ray = ensure_ray_initialized(ray_address)
        if num_actors is None:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            num_actors = max(1, min(cpus, self.meta_batch_size))
        self.num_actors = num_actors
        self.task_blocks = split_task_blocks(self.meta_batch_size, num_actors)

        actor_cls = ray.remote(num_cpus=1, max_restarts=0)(RolloutActor)
        env_ref = ray.put(env)  # serialised once, shared by all actors
        self._actors = [
            actor_cls.remote(
                env_ref, start, stop, self.envs_per_task, self.max_path_length, self.seed,
                self.quota,
            )
            for start, stop in self.task_blocks
        ]
        self._closed = False
        startup_timeout = max(self.timeout or 0.0, 120.0)
        self._gather([actor.info.remote() for actor in self._actors], "start", startup_timeout)

    # ------------------------------------------------------------------ waiting on the actors
    def _fail(self, message: str, cause: BaseException | None = None) -> None:
        self.close()
        raise RuntimeError(f"{message} (the executor is now closed)") from cause

    def _gather(self, refs: list[Any], what: str, timeout: float | None) -> list[Any]:
        """Wait for one result per actor, checking every ``_POLL_SECONDS`` for dead actors."""
        ray = self._ray
        from ray.exceptions import GetTimeoutError, ObjectLostError, RayActorError

        pending = {ref: k for k, ref in enumerate(refs)}
        results: list[Any] = [None] * len(refs)
        deadline = None if timeout is None else time.monotonic() + timeout
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=_POLL_SECONDS)
            for ref in ready:
                k = pending.pop(ref)
                try:
                    results[k] = ray.get(ref, timeout=_POLL_SECONDS)
                except (RayActorError, ObjectLostError) as error:
                    start, stop = self.task_blocks[k]
                    summary = (str(error).splitlines() or [""])[0]
                    self._fail(
                        f"Ray sampler actor {k} (tasks {start}..{stop - 1}) died during {what}: "
                        f"{type(error).__name__}: {summary}",
                        error,
                    )
                except GetTimeoutError:  # reported ready but not fetchable yet: wait again
                    pending[ref] = k
            if pending and deadline is not None and time.monotonic() > deadline:
                waiting = ", ".join(
                    f"{k} (tasks {self.task_blocks[k][0]}..{self.task_blocks[k][1] - 1})"
                    for k in sorted(pending.values())
                )
                hint = ""
                if what == "start":
                    hint = (
                        f" (each actor needs 1 free CPU; cluster resources: "
                        f"{ray.available_resources()})"
                    )
                self._fail(f"Ray sampler actors {waiting} did not finish {what} after waiting "
                           f"{timeout:g} s (the sampler timeout, --sampler_timeout){hint}")
        return results

    # ------------------------------------------------------------------ executor interface
    def set_tasks(self, tasks: Sequence[Task]) -> None:
        """Send each actor the tasks of its block.

        Args:
            tasks: ``meta_batch_size`` tasks, e.g. from ``env.sample_tasks``.

        Raises:
            ValueError: if the number of tasks is not ``meta_batch_size``.
            RuntimeError: if an actor died or the executor is closed.
        """
        self._check_open()
        tasks = check_tasks(tasks, self.meta_batch_size)
        refs = [
            actor.set_tasks.remote(tasks[start:stop])
            for actor, (start, stop) in zip(self._actors, self.task_blocks)
        ]
        self._gather(refs, "set_tasks", self.timeout)
        self._tasks_set = True

    def collect(self, policy: NumpyGaussianMLP, phase: int) -> PathBatch:
        """Collect every task's episodes as the executor's quota says.

        Args:
            policy: per-task policies, ``num_tasks == meta_batch_size``; each actor's slice
                is put into the object store once and fetched only by that actor.
            phase: sampling-phase counter (``>= 0``) that, with the seed, fixes the randomness.

        Returns:
            A :class:`PathBatch` ``[T, N, H, ...]`` of writable arrays, identical to the
            iterative executor's.

        Raises:
            ValueError: on a mismatched policy or a negative phase (or re-raised from an actor).
            RuntimeError: if an actor died, the ``timeout`` passed, :meth:`set_tasks` was never
                called or the executor is closed.
        """
        phase = self._check_collect_args(policy, phase)
        refs = [
            actor.collect.remote(self._ray.put(policy.task_slice(start, stop)), phase)
            for actor, (start, stop) in zip(self._actors, self.task_blocks)
        ]
        batches, self.last_exec_times = split_worker_results(
            self._gather(refs, "collect", self.timeout)
        )
        paths = concatenate_paths(batches)
        # One actor: concatenate_paths returns its (read-only, object-store backed) arrays.
        return _writable(paths) if len(batches) == 1 else paths

    def worker_info(self) -> list[dict[str, Any]]:
        """Diagnostics of each actor.

        Returns:
            One dict per actor: ``pid``, ``hostname``, ``tensorflow_imported`` (it should be
            False) and ``cpu_seconds`` (the actor's CPU time so far).

        Raises:
            RuntimeError: if an actor died or the executor is closed.
        """
        self._check_open()
        return self._gather([a.info.remote() for a in self._actors], "worker_info", self.timeout)

    @property
    def actors(self) -> list[Any]:
        """The Ray actor handles, one per task block (empty once closed)."""
        return list(self._actors)

    def close(self) -> None:
        """Kill the actors (safe to call more than once); Ray itself keeps running."""
        self._closed = True
        for actor in self._actors:
            with contextlib.suppress(Exception):
                self._ray.kill(actor, no_restart=True)
        self._actors = []

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
