"""Executor whose Ray actors each own whole rollouts of their share of every phase.

The multi-machine version of :class:`~meta_policy_search.samplers.MetaParallelEnvExecutor`: a Ray
actor call costs about a millisecond, far too much per env step, so an actor owns all env copies
of its tasks and whole rollouts. Once per sampling phase the driver sends each actor its numpy
policy slice and every actor runs the same rollout loop
(:func:`~meta_policy_search.samplers.rollout.collect_paths`) and returns finished, padded arrays
(under a step budget padded to the actor's own episode bucket; the driver pads all to the
largest). Episode randomness depends only on ``(seed, phase, task, rollout)``, so the result is
identical to :class:`~meta_policy_search.samplers.MetaIterativeEnvExecutor`'s for any number of
actors or machines.

Ray is an optional dependency (``pip install meta_policy_search[ray]``) and is imported only
when an executor is built. Actors import this module, numpy, gymnasium and the envs, never
TensorFlow.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Sequence
from typing import Any

from meta_policy_search.samplers.executor_base import (
    RolloutWorker,
    WorkerSpec,
    check_num_workers,
    check_quota,
)
from meta_policy_search.samplers.quota import SamplingQuota
from meta_policy_search.samplers.worker_pool import WorkerLost, WorkerPoolExecutor, WorkerReply
from meta_policy_search.utils.validation import check_positive_int

_POLL_SECONDS = 0.5
"""How often a waiting driver checks its actors: a dead actor is reported within about this."""


def import_ray() -> Any:
    """Import and return the ``ray`` module.

    Raises:
        ImportError: if Ray is not installed, with the command that installs it.
    """
    try:
        # Ray is optional: loaded only when the Ray executor is used
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


class RolloutActor(RolloutWorker):
    """Body of one Ray actor: a :class:`RolloutWorker` built from a cloudpickled env.

    Plain class, turned into an actor with ``ray.remote`` by :class:`RayTransport`.

    Args:
        env: the env to copy (``envs_per_task`` copies per task); classes defined in
            ``__main__`` are copied too (cloudpickle, unlike pickle).
        spec: the actor's task block, sizes, seed and quota.
    """

    def __init__(self, env: Any, spec: WorkerSpec) -> None:
        # Ray is optional: loaded only when the Ray executor is used
        from ray import cloudpickle

        blob = cloudpickle.dumps(env)
        super().__init__(env=cloudpickle.loads(blob), spec=spec,
                         copy_env=lambda: cloudpickle.loads(blob))


class RayTransport:
    """Calls :class:`RolloutActor` s, one Ray actor (one CPU) per worker of the pool.

    A dead actor (killed, crashed or on a lost node) is noticed within about
    ``_POLL_SECONDS``. An actor's exception comes back as Ray's ``RayTaskError``; the reply
    carries the original exception and Ray's traceback text.

    Args:
        env: the env the actors copy; serialised once with Ray's cloudpickle, so a class defined
            in the running script is shipped by value, while a class from an installed module
            must be importable on every node.
        ray: the initialised ``ray`` module.
    """

    unit = "actor"

    def __init__(self, env: Any, ray: Any) -> None:
        self._ray = ray
        self._env = env
        self.actors: list[Any] = []
        self._refs: dict[int, Any] = {}

    def start(self, specs: Sequence[WorkerSpec]) -> None:
        """Create the actors and ask each for its :meth:`~RolloutWorker.info` (the ready reply)."""
        actor_cls = self._ray.remote(num_cpus=1, max_restarts=0)(RolloutActor)
        env_ref = self._ray.put(self._env)  # serialised once, shared by all actors
        self.actors = [actor_cls.remote(env_ref, spec) for spec in specs]
        for k in range(len(self.actors)):
            self.submit(k, "info", ())

    def submit(self, worker: int, method: str, args: tuple[Any, ...]) -> None:
        """Start the remote call (arguments go through the object store)."""
        self._refs[worker] = getattr(self.actors[worker], method).remote(*args)

    def wait(self, pending: Collection[int], timeout: float | None) -> list[tuple[int, WorkerReply]]:
        """Replies of the pending actors that are ready within ``min(timeout, _POLL_SECONDS)``."""
        # Ray is optional: loaded only when the Ray executor is used
        from ray.exceptions import GetTimeoutError, ObjectLostError, RayActorError, RayTaskError

        ray = self._ray
        refs = {self._refs[k]: k for k in pending}
        poll = _POLL_SECONDS if timeout is None else min(timeout, _POLL_SECONDS)
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=poll)
        replies = []
        for ref in ready:
            k = refs[ref]
            try:
                value = ray.get(ref, timeout=_POLL_SECONDS)
            except (RayActorError, ObjectLostError) as error:
                summary = (str(error).splitlines() or [""])[0]
                raise WorkerLost(k, f"{type(error).__name__}: {summary}") from error
            except GetTimeoutError:  # reported ready but not fetchable yet: wait again
                continue
            except RayTaskError as error:
                cause = getattr(error, "cause", None)
                original = cause if isinstance(cause, BaseException) else error
                replies.append((k, WorkerReply(
                    error=original, error_summary=f"{type(original).__name__}: {original}",
                    traceback=str(error),
                )))
            else:
                replies.append((k, WorkerReply(value)))
        return replies

    def describe(self, worker: int) -> str:
        """Nothing: an actor is named by its index and tasks."""
        return ""

    def hang_hint(self, what: str) -> str:
        """At start: each actor needs a free CPU, and what the cluster has."""
        if what != "start":
            return ""
        return (f" (each actor needs 1 free CPU; cluster resources: "
                f"{self._ray.available_resources()})")

    def close(self, wait_seconds: float) -> None:
        """Kill the actors; Ray itself keeps running."""
        for actor in self.actors:
            with contextlib.suppress(Exception):
                self._ray.kill(actor, no_restart=True)
        self.actors, self._refs = [], {}


class MetaRayEnvExecutor(WorkerPoolExecutor):
    """Run the tasks' environments in ``num_actors`` Ray actors, possibly on several machines.

    Actor ``k`` runs a contiguous block of the tasks' leading episodes (see
    :mod:`~meta_policy_search.samplers.split`), with ``envs_per_task`` env copies per task, and asks
    Ray for one CPU, so a cluster spreads the actors over its free cores. A dead actor (killed,
    crashed or on a lost node) makes the pending or next call raise a RuntimeError within about
    a second, and closes the executor. An exception inside an actor is re-raised in the caller
    (its original type, with the actor's traceback as ``__cause__``); the executor stays usable.

    Ray is initialised on first use if this process has not done so (see
    :func:`ensure_ray_initialized`); :meth:`close` kills the actors but leaves Ray running.

    Each actor runs its policy with one BLAS thread, as the parallel executor's workers do: Ray
    sets ``OMP_NUM_THREADS`` to an actor's CPU count (1) unless the user set it, and numpy's
    OpenBLAS reads it (checked with Ray 2.60: ``openblas_get_num_threads()`` is 1 in an actor).

    Args:
        env: the :class:`~meta_policy_search.envs.MetaEnv` to copy (see :class:`RayTransport`).
        meta_batch_size: number of tasks ``T``.
        envs_per_task: env copies per task ``E``.
        max_path_length: ``H``, steps per episode at most.
        seed: root seed of all episode randomness, ``>= 0``.
        num_actors: number of actors, at most ``meta_batch_size``; ``None`` means
            ``min(CPUs of the Ray cluster, meta_batch_size)``.
        ray_address: cluster to connect to if Ray is not initialised yet; ``None``: a local one.
        timeout: seconds a call may take before it fails with a RuntimeError (``None``: no
            limit; dead actors are detected regardless; ``'auto'``: see
            :class:`~meta_policy_search.samplers.worker_pool.SamplerTimeout`). Starting the
            actors may take at least 120 seconds.
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
        timeout: float | str | None = None,
        *,
        quota: SamplingQuota,
    ) -> None:
        meta_batch_size = check_positive_int("meta_batch_size", meta_batch_size)
        envs_per_task = check_positive_int("envs_per_task", envs_per_task)
        if num_actors is not None:
            leading = check_quota(quota).leading_episodes(envs_per_task)
            num_actors = check_num_workers("num_actors", num_actors, meta_batch_size, leading,
                                           "an actor")
        ray = ensure_ray_initialized(ray_address)
        if num_actors is None:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            num_actors = max(1, min(cpus, meta_batch_size))
        self.num_actors = num_actors
        self._ray_transport = RayTransport(env, ray)
        super().__init__(
            transport=self._ray_transport, env=env, meta_batch_size=meta_batch_size,
            envs_per_task=envs_per_task, max_path_length=max_path_length,
            seed=seed, quota=quota, num_workers=num_actors, timeout=timeout,
        )

    @property
    def actors(self) -> list[Any]:
        """The Ray actor handles, one per worker of the pool (empty once closed)."""
        return list(self._ray_transport.actors)
