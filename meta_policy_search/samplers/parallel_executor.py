"""Executor whose worker processes each own whole rollouts of a contiguous block of tasks.

Why whole rollouts: exchanging actions and observations over pipes every step was measured no
faster than a single process (the IPC eats the second core). Here the parent sends each worker
its tasks' numpy policy parameters once per sampling phase; the worker runs the same rollout loop
as :class:`~meta_policy_search.samplers.MetaIterativeEnvExecutor` and returns finished, padded
arrays. Episode randomness depends only on ``(seed, phase, task, rollout)``, so the result is
identical to the iterative executor's for any number of workers. Under a step budget each worker
pads its episode axis to its own bucket and the parent pads all to the largest (the bucket of the
largest episode count), as the iterative executor does.

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
import time
import traceback
from collections.abc import Iterator, Sequence
from typing import Any

from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers.executor_base import (
    ExecutorBase,
    check_num_workers,
    check_tasks,
    check_timeout,
    close_envs,
    make_envs,
    process_info,
    set_env_tasks,
    split_task_blocks,
    split_worker_results,
)
from meta_policy_search.samplers.quota import SamplingQuota
from meta_policy_search.samplers.rollout import ExecTimes, collect_paths, concatenate_paths
from meta_policy_search.types import PathBatch, Task


class RemoteTraceback(Exception):  # noqa: N818 - not an error itself, named like concurrent.futures'
    """Carries a worker's formatted traceback; set as ``__cause__`` of re-raised exceptions."""

    def __str__(self) -> str:
        return "\n" + str(self.args[0])


def _pack_exception(exc: BaseException) -> tuple[bytes | None, str, str]:
    formatted = traceback.format_exc()
    try:
        payload = pickle.dumps(exc)
    except Exception:  # an exception that cannot be pickled is re-raised as a RuntimeError
        payload = None
    return payload, f"{type(exc).__name__}: {exc}", formatted


def _worker_loop(
    conn: Any,
    env_bytes: bytes,
    task_start: int,
    task_stop: int,
    envs_per_task: int,
    max_path_length: int,
    seed: int,
    quota: SamplingQuota,
    use_batched_env: bool = True,
) -> None:
    """Body of a worker process: build env copies, then serve commands until told to close."""
    # Ctrl-C goes to the whole process group; the parent handles it and closes the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        envs = make_envs(
            pickle.loads(env_bytes), task_stop - task_start, envs_per_task,
            lambda: pickle.loads(env_bytes), use_batched_env,
        )
    except Exception as exc:
        conn.send(("error", _pack_exception(exc)))
        return
    conn.send(("ok", None))
    while True:
        try:
            command, payload = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if command == "close":
            close_envs(envs)
            return
        result: tuple[PathBatch, ExecTimes] | dict[str, Any] | None
        try:
            if command == "set_tasks":
                set_env_tasks(envs, payload, envs_per_task)
                result = None
            elif command == "collect":
                policy, phase = payload
                exec_times = ExecTimes()
                paths = collect_paths(
                    envs, envs_per_task, policy, range(task_start, task_stop), quota,
                    max_path_length, seed, phase, exec_times,
                )
                result = (paths, exec_times)
            elif command == "info":
                result = process_info()
            else:
                raise ValueError(f"unknown worker command {command!r}")
        except Exception as exc:
            conn.send(("error", _pack_exception(exc)))
        else:
            conn.send(("ok", result))


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


class MetaParallelEnvExecutor(ExecutorBase):
    """Run the tasks' environments in ``n_parallel`` worker processes.

    Worker ``k`` owns a contiguous block of tasks with ``envs_per_task`` env copies each. A dead
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
        n_parallel: number of worker processes, at most ``meta_batch_size``; ``None`` means
            ``min(cpu count, meta_batch_size)``.
        timeout: seconds a call may wait for the workers' replies before the executor gives up
            on them as hung (e.g. an env stuck inside ``step``), closes and raises a
            RuntimeError; ``None`` waits as long as the workers are alive.
        use_batched_env: step the env's batched implementation (``env.make_batched``) in each
            worker if it has one; ``False`` steps single env copies (same results, slower).
        quota: the episodes each task gets per :meth:`collect`
            (:func:`~meta_policy_search.samplers.quota.make_quota`), sent to the workers once.

    Raises:
        ValueError: on non-positive sizes, ``n_parallel > meta_batch_size`` or a non-flat space.
        RuntimeError: if a worker fails to start.
    """

    _closed_message = "the executor is closed (after close() or a worker failure)"

    def __init__(
        self,
        env: Any,
        meta_batch_size: int,
        envs_per_task: int,
        max_path_length: int,
        seed: int = 0,
        n_parallel: int | None = None,
        timeout: float | None = None,
        use_batched_env: bool = True,
        *,
        quota: SamplingQuota,
    ) -> None:
        self._processes: list[Any] = []
        self.timeout = check_timeout(timeout)
        self._conns: list[Any] = []
        self._init_sizes(meta_batch_size, envs_per_task, max_path_length, seed, quota)
        if n_parallel is None:
            n_parallel = default_num_workers(self.meta_batch_size)
        self.n_parallel = check_num_workers(
            "n_parallel", n_parallel, self.meta_batch_size, "a worker"
        )
        self._init_spaces(env)
        self.task_blocks = split_task_blocks(self.meta_batch_size, self.n_parallel)

        env_bytes = pickle.dumps(env)
        context = mp.get_context("spawn")
        with _main_module_hidden(b"__main__" not in env_bytes), single_threaded_blas():
            for k, (start, stop) in enumerate(self.task_blocks):
                parent_conn, child_conn = context.Pipe()
                process = context.Process(
                    target=_worker_loop,
                    args=(child_conn, env_bytes, start, stop, self.envs_per_task,
                          self.max_path_length, self.seed, self.quota, use_batched_env),
                    name=f"MetaParallelEnvExecutor-worker-{k}",
                    daemon=True,
                )
                process.start()
                child_conn.close()
                self._processes.append(process)
                self._conns.append(parent_conn)
        self._gather()  # each worker reports once its env copies are built

    def _fail(self, error: BaseException) -> None:
        # The other workers may be busy with a long collect: don't wait for them.
        self._shutdown(join_timeout=0.2)
        raise error

    def _send(self, messages: Sequence[tuple[str, Any]]) -> None:
        for k, (conn, message) in enumerate(zip(self._conns, messages)):
            try:
                conn.send(message)
            except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
                self._fail(self._dead_worker_error(k))

    def _dead_worker_error(self, k: int) -> RuntimeError:
        process = self._processes[k]
        process.join(timeout=1.0)
        return RuntimeError(
            f"sampler worker {k} (pid {process.pid}, tasks {self.task_blocks[k]}) died with "
            f"exit code {process.exitcode}; the executor is closed"
        )

    def _hung_message(self, workers: list[int]) -> str:
        described = "; ".join(
            f"worker {k} (pid {self._processes[k].pid}, tasks "
            f"{self.task_blocks[k][0]}..{self.task_blocks[k][1] - 1})"
            for k in workers
        )
        return (
            f"sampler {described} sent no reply after waiting {self.timeout:g} s (the sampler "
            "timeout, --sampler_timeout) and presumed hung (stopped, or an env stuck in step); "
            "the executor is closed"
        )

    def _gather(self) -> list[Any]:
        """Wait for one reply per worker; raise if one died or reported an exception."""
        results: list[Any] = [None] * len(self._conns)
        errors: list[tuple[int, tuple[bytes | None, str, str]]] = []
        pending = {conn: k for k, conn in enumerate(self._conns)}
        sentinels = {self._processes[k].sentinel: k for k in range(len(self._conns))}
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = mp_connection.wait(
                list(pending) + [s for s, k in sentinels.items() if k in pending.values()],
                timeout=remaining,
            )
            if not ready:
                self._fail(RuntimeError(self._hung_message(sorted(pending.values()))))
            ready_conns: list[Any] = [obj for obj in ready if obj in pending]  # like self._conns
            for conn in ready_conns:
                k = pending.pop(conn)
                try:
                    status, payload = conn.recv()
                except (EOFError, OSError):
                    self._fail(self._dead_worker_error(k))
                if status == "ok":
                    results[k] = payload
                else:
                    errors.append((k, payload))
            for obj in ready:
                # A sentinel is ready when its process ended; a message sent before dying would
                # have made the pipe ready too, so a dead worker without a reply has failed.
                if obj in sentinels and sentinels[obj] in pending.values():
                    k = sentinels[obj]
                    if not self._conns[k].poll():
                        self._fail(self._dead_worker_error(k))
        if errors:
            k, (exc_bytes, summary, formatted) = errors[0]
            error: BaseException | None = None
            if exc_bytes is not None:
                with contextlib.suppress(Exception):
                    error = pickle.loads(exc_bytes)
            if error is None:
                error = RuntimeError(f"sampler worker {k} raised {summary}")
            error.__cause__ = RemoteTraceback(f"in sampler worker {k}:\n{formatted}")
            raise error  # every worker has replied: the executor stays usable
        return results

    def set_tasks(self, tasks: Sequence[Task]) -> None:
        """Send each worker the tasks of its block.

        Args:
            tasks: ``meta_batch_size`` tasks, e.g. from ``env.sample_tasks``.

        Raises:
            ValueError: if the number of tasks is not ``meta_batch_size``.
            RuntimeError: if a worker died or the executor is closed.
        """
        self._check_open()
        tasks = check_tasks(tasks, self.meta_batch_size)
        self._send([("set_tasks", tasks[start:stop]) for start, stop in self.task_blocks])
        self._gather()
        self._tasks_set = True

    def collect(self, policy: NumpyGaussianMLP, phase: int) -> PathBatch:
        """Collect every task's episodes as the executor's quota says.

        Args:
            policy: per-task policies, ``num_tasks == meta_batch_size``; worker ``k`` receives
                only the parameters of its tasks.
            phase: sampling-phase counter (``>= 0``) that, with the seed, fixes the randomness.

        Returns:
            A :class:`PathBatch` ``[T, N, H, ...]``, identical to the iterative executor's.

        Raises:
            ValueError: on a mismatched policy or a negative phase (or re-raised from a worker).
            RuntimeError: if a worker died, :meth:`set_tasks` was never called or the executor is
                closed.
        """
        phase = self._check_collect_args(policy, phase)
        self._send(
            [("collect", (policy.task_slice(start, stop), phase)) for start, stop in self.task_blocks]
        )
        batches, self.last_exec_times = split_worker_results(self._gather())
        return concatenate_paths(batches)

    def worker_info(self) -> list[dict[str, Any]]:
        """Diagnostics of each worker.

        Returns:
            One dict per worker: ``pid``, ``tensorflow_imported`` (whether the worker has loaded
            TensorFlow: it should not) and ``cpu_seconds`` (its CPU time so far).
        """
        self._check_open()
        self._send([("info", None)] * len(self._conns))
        return self._gather()

    def close(self) -> None:
        """Stop all workers (safe to call more than once)."""
        self._shutdown(join_timeout=2.0)

    def _shutdown(self, join_timeout: float) -> None:
        """Ask the workers to exit; kill those still alive after ``join_timeout`` seconds."""
        self._closed = True
        for conn in self._conns:
            with contextlib.suppress(Exception):
                conn.send(("close", None))
        for process in self._processes:
            process.join(timeout=join_timeout)
            if process.is_alive():
                process.kill()
                process.join(timeout=2.0)
        for conn in self._conns:
            conn.close()
        self._processes, self._conns = [], []

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
