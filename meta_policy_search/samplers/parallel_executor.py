"""Executor whose worker processes each own whole rollouts of their share of every phase.

Why whole rollouts: exchanging actions and observations over pipes every step was measured no
faster than a single process (the IPC eats the second core). Here the parent sends each worker
its tasks' numpy policy parameters once per sampling phase; the worker runs the same rollout loop
as :class:`~meta_policy_search.samplers.MetaIterativeEnvExecutor` and returns finished, padded
arrays. A phase is split in shares of the tasks' episodes, balanced to within one episode
(:mod:`~meta_policy_search.samplers.split`). Episode randomness depends only on ``(seed, phase,
task, rollout)`` and the policy rounds each episode's rows as in a whole-task collection, so the
result is identical to the iterative executor's for any number of workers.

Workers are started with the ``'spawn'`` method: the parent usually has TensorFlow loaded, which
must not be forked, and workers import only numpy, gymnasium and the envs. A training script
that imports TensorFlow at top level would normally be re-imported by every spawned child; when
the env's pickle does not refer to ``__main__``, the main module is hidden from the children so
that they stay TensorFlow-free.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import multiprocessing.connection as mp_connection
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Collection, Iterator, Sequence
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


def _reply_from_exception(exc: BaseException) -> WorkerReply:
    """A reply carrying ``exc`` pickled (``None`` if it cannot be), its summary and traceback."""
    try:
        pickle.dumps(exc)
        error: BaseException | None = exc
    except Exception:  # an exception that cannot be pickled is re-raised as a RuntimeError
        error = None
    return WorkerReply(error=error, error_summary=f"{type(exc).__name__}: {exc}",
                       traceback=traceback.format_exc())


def _worker_loop(conn: Any, env_bytes: bytes, spec: WorkerSpec) -> None:
    """Body of a worker process: build the worker, reply once, then serve calls until closed."""
    # Ctrl-C goes to the whole process group; the parent handles it and closes the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker = RolloutWorker(pickle.loads(env_bytes), spec, lambda: pickle.loads(env_bytes))
    except Exception as exc:
        conn.send(_reply_from_exception(exc))
        return
    conn.send(WorkerReply())
    while True:
        try:
            method, args = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if method == "close":
            worker.close()
            return
        try:
            reply = WorkerReply(getattr(worker, method)(*args))
        except Exception as exc:
            reply = _reply_from_exception(exc)
        conn.send(reply)


@contextlib.contextmanager
def _main_module_hidden(hide: bool) -> Iterator[None]:
    """Keep spawned children from re-importing ``__main__`` (and, with it, TensorFlow)."""
    main = sys.modules.get("__main__")
    if not hide or main is None:
        yield
        return
    hidden_keys = ("__file__", "__spec__")
    saved: dict[str, Any] = {key: main.__dict__[key] for key in hidden_keys if key in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Environment variables that set numpy's BLAS thread count, read when a worker imports numpy."""


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Start children with one BLAS thread each, unless the user set the variables.

    Each worker already owns a core: a multi-threaded BLAS in every worker oversubscribes the
    cores, and OpenBLAS's waiting threads then slow the policy's matmuls by orders of magnitude
    (measured: (128, 128) policy, 20 tasks x 20 envs, 163 ms per step against 3.7 ms with one
    thread, on 2 busy cores). Sets :data:`BLAS_THREAD_VARIABLES` that are unset to ``'1'`` for
    the block (spawned children copy the environment at start) and removes them afterwards.
    """
    added = [name for name in BLAS_THREAD_VARIABLES if name not in os.environ]
    os.environ.update({name: "1" for name in added})
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def default_num_workers(meta_batch_size: int) -> int:
    """``min(usable cpu count, meta_batch_size)``."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, meta_batch_size))


class PipeTransport:
    """Calls :class:`RolloutWorker` s in spawned worker processes over pipes.

    A worker that dies (e.g. killed by the OOM killer) is noticed through its process sentinel
    as soon as it is gone.

    Args:
        env: the env the workers copy; it must be picklable and its class importable by a fresh
            Python process.
    """

    unit = "worker"

    def __init__(self, env: Any) -> None:
        self._env_bytes = pickle.dumps(env)
        self.processes: list[Any] = []
        self._conns: list[Any] = []

    def start(self, specs: Sequence[WorkerSpec]) -> None:
        """Spawn one process per spec (one BLAS thread each, ``__main__`` hidden if possible)."""
        context = mp.get_context("spawn")
        with _main_module_hidden(b"__main__" not in self._env_bytes), single_threaded_blas():
            for k, spec in enumerate(specs):
                parent_conn, child_conn = context.Pipe()
                process = context.Process(
                    target=_worker_loop, args=(child_conn, self._env_bytes, spec),
                    name=f"MetaParallelEnvExecutor-worker-{k}", daemon=True,
                )
                process.start()
                child_conn.close()
                self.processes.append(process)
                self._conns.append(parent_conn)

    def submit(self, worker: int, method: str, args: tuple[Any, ...]) -> None:
        """Send the call down the worker's pipe."""
        try:
            self._conns[worker].send((method, args))
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            raise self._lost(worker) from None

    def wait(self, pending: Collection[int], timeout: float | None) -> list[tuple[int, WorkerReply]]:
        """Wait on the pending workers' pipes and process sentinels."""
        conns = {self._conns[k]: k for k in pending}
        sentinels = {self.processes[k].sentinel: k for k in pending}
        ready = mp_connection.wait(list(conns) + list(sentinels), timeout=timeout)
        replies = []
        for k in sorted({conns[obj] for obj in ready if obj in conns}):
            try:
                replies.append((k, self._conns[k].recv()))
            except (EOFError, OSError):
                raise self._lost(k) from None
        answered = {k for k, _ in replies}
        for obj in ready:
            # A sentinel is ready when its process ended; a reply sent before dying would have
            # made the pipe ready too, so a dead worker without a reply has failed.
            dead = sentinels.get(obj)
            if dead is not None and dead not in answered and not self._conns[dead].poll():
                raise self._lost(dead)
        return replies

    def _lost(self, worker: int) -> WorkerLost:
        process = self.processes[worker]
        process.join(timeout=1.0)
        return WorkerLost(worker, f"exit code {process.exitcode}")

    def describe(self, worker: int) -> str:
        """``'pid 123'``."""
        return f"pid {self.processes[worker].pid}"

    def hang_hint(self, what: str) -> str:
        """No advice beyond the pool's."""
        return ""

    def close(self, wait_seconds: float) -> None:
        """Ask the workers to exit; kill those still alive after ``wait_seconds``."""
        for conn in self._conns:
            with contextlib.suppress(Exception):
                conn.send(("close", ()))
        for process in self.processes:
            process.join(timeout=wait_seconds)
            if process.is_alive():
                process.kill()
                process.join(timeout=2.0)
        for conn in self._conns:
            conn.close()
        self.processes, self._conns = [], []


class MetaParallelEnvExecutor(WorkerPoolExecutor):
    """Run the tasks' environments in ``n_parallel`` worker processes.

    Worker ``k`` runs a contiguous block of the tasks' leading episodes (whole tasks, and at
    its ends part of a task it shares with its neighbour; see
    :mod:`~meta_policy_search.samplers.split`), with ``envs_per_task`` env copies per task. A dead
    worker (e.g. killed by the OOM killer) makes the pending or next call raise a RuntimeError
    as soon as its process is gone, and closes the executor. An exception inside a worker is
    re-raised in the parent (same type if it can be pickled, else RuntimeError) with the
    worker's traceback attached as ``__cause__``; the executor stays usable.

    Args:
        env: the :class:`~meta_policy_search.envs.MetaEnv` to copy; it must be picklable and
            its class importable by a fresh Python process.
        meta_batch_size: number of tasks ``T``.
        envs_per_task: env copies per task ``E``.
        max_path_length: ``H``, steps per episode at most.
        seed: root seed of all episode randomness, ``>= 0``.
        n_parallel: number of worker processes, at most the episodes a phase can split
            (``meta_batch_size x R``, under a step budget ``meta_batch_size x envs_per_task``);
            ``None`` means ``min(cpu count, meta_batch_size)``.
        timeout: seconds a call may wait for the workers' replies before the executor gives up
            on them as hung (e.g. an env stuck inside ``step``), closes and raises a
            RuntimeError; ``None`` waits as long as the workers are alive; ``'auto'``: see
            :class:`~meta_policy_search.samplers.worker_pool.SamplerTimeout`.
        use_batched_env: step the env's batched implementation (``env.make_batched``) in each
            worker if it has one; ``False`` steps single env copies (same results, slower).
        quota: the episodes each task gets per :meth:`collect`
            (:func:`~meta_policy_search.samplers.quota.make_quota`), sent to the workers once.

    Raises:
        ValueError: on non-positive sizes, ``n_parallel > meta_batch_size`` or a non-flat space.
        RuntimeError: if a worker fails to start.
    """

    def __init__(
        self,
        env: Any,
        meta_batch_size: int,
        envs_per_task: int,
        max_path_length: int,
        seed: int = 0,
        n_parallel: int | None = None,
        timeout: float | str | None = None,
        use_batched_env: bool = True,
        *,
        quota: SamplingQuota,
    ) -> None:
        meta_batch_size = check_positive_int("meta_batch_size", meta_batch_size)
        envs_per_task = check_positive_int("envs_per_task", envs_per_task)
        if n_parallel is None:
            n_parallel = default_num_workers(meta_batch_size)
        leading = check_quota(quota).leading_episodes(envs_per_task)
        self.n_parallel = check_num_workers("n_parallel", n_parallel, meta_batch_size, leading,
                                            "a worker")
        self._pipes = PipeTransport(env)
        super().__init__(
            transport=self._pipes, env=env, meta_batch_size=meta_batch_size,
            envs_per_task=envs_per_task, max_path_length=max_path_length, seed=seed,
            quota=quota, num_workers=self.n_parallel, timeout=timeout,
            use_batched_env=use_batched_env,
        )

    @property
    def _processes(self) -> list[Any]:
        """The worker processes (empty once closed)."""
        return self._pipes.processes
