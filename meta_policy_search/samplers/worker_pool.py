"""One executor over a pool of rollout workers, whatever carries the calls to them.

:class:`WorkerPoolExecutor` splits every sampling phase into contiguous blocks of the tasks'
episodes, one per worker (:mod:`~meta_policy_search.samplers.split`;
:class:`~meta_policy_search.samplers.executor_base.RolloutWorker`: the env copies of its tasks and
the one rollout loop), and runs every call the same way: submit one call per worker,
gather the replies before a deadline, turn a dead or hung worker into one ``RuntimeError`` (and
close the pool), re-raise a worker's exception once every worker has replied (the pool stays
usable). A :class:`Transport` carries the calls: in this process
(:class:`~meta_policy_search.samplers.iterative_executor.InProcessTransport`), over pipes to
spawned processes (:class:`~meta_policy_search.samplers.parallel_executor.PipeTransport`) or to
Ray actors (:class:`~meta_policy_search.samplers.ray_executor.RayTransport`).

The pool owns its deadline (:class:`SamplerTimeout`): fixed seconds, none, or ``'auto'``, derived
from the slowest phase it has measured.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Collection, Sequence
from typing import Any, Protocol, Self

import numpy as np

from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers.executor_base import ExecutorBase, WorkerSpec, check_tasks
from meta_policy_search.samplers.paths import CompactPaths, assemble_shares
from meta_policy_search.samplers.quota import SamplingQuota
from meta_policy_search.samplers.rollout import ExecTimes
from meta_policy_search.samplers.split import (
    assign_continuations,
    complete_prefix,
    split_episodes,
)
from meta_policy_search.types import PathBatch, Task

AUTO_TIMEOUT = "auto"
"""``timeout=AUTO_TIMEOUT``: a phase may take the larger of :data:`AUTO_TIMEOUT_FLOOR` seconds
and :data:`AUTO_TIMEOUT_FACTOR` times the slowest phase so far."""
AUTO_TIMEOUT_FLOOR = 600.0
"""Seconds: the automatic timeout's minimum (generous, a slow phase must never trip it)."""
AUTO_TIMEOUT_FACTOR = 20.0
"""The automatic timeout is at least this many times the slowest phase so far."""
STARTUP_TIMEOUT = 120.0
"""Seconds the workers may take to start (build their env copies) at least."""


class SamplerTimeout:
    """How long a call may wait for the workers: fixed seconds, no limit, or automatic.

    Args:
        timeout: seconds ``> 0``; ``None`` (no limit: a worker that *dies* is still detected at
            once); or :data:`AUTO_TIMEOUT`, the larger of :data:`AUTO_TIMEOUT_FLOOR` and
            :data:`AUTO_TIMEOUT_FACTOR` times the slowest :meth:`record` ed phase (generous: a
            hung worker, e.g. stopped by SIGSTOP or blocked in an env, is the target, not a slow
            one).

    Raises:
        ValueError: on anything else.
    """

    def __init__(self, timeout: float | str | None) -> None:
        self.auto = timeout == AUTO_TIMEOUT
        if not self.auto and timeout is not None and (
            isinstance(timeout, (str, bool)) or not timeout > 0
        ):
            raise ValueError(
                f"timeout must be > 0 seconds, None or {AUTO_TIMEOUT!r}, got {timeout!r}"
            )
        self._fixed = None if self.auto or timeout is None else float(timeout)
        self.slowest_phase_seconds = 0.0
        """Wall time of the slowest phase recorded so far."""

    @property
    def seconds(self) -> float | None:
        """The deadline of the next call, in seconds (``None``: no limit)."""
        if self.auto:
            return max(AUTO_TIMEOUT_FLOOR, AUTO_TIMEOUT_FACTOR * self.slowest_phase_seconds)
        return self._fixed

    def record(self, phase_seconds: float) -> None:
        """Record the wall time of a sampling phase (sets the automatic timeout)."""
        self.slowest_phase_seconds = max(self.slowest_phase_seconds, phase_seconds)


@dataclasses.dataclass
class WorkerReply:
    """What a worker answered to one call.

    Attributes:
        value: the call's result (``None`` if it raised).
        error: the exception it raised, or ``None``; ``None`` with ``error_summary`` set means
            the exception could not be sent back.
        error_summary: ``'TypeName: message'`` of the exception, or ``''``.
        traceback: the worker's formatted traceback (``''`` in this process).
    """

    value: Any = None
    error: BaseException | None = None
    error_summary: str = ""
    traceback: str = ""


class WorkerLost(Exception):  # noqa: N818 - a signal between transport and pool, not for users
    """Raised by a :class:`Transport` when worker ``worker`` died; ``detail`` says how."""

    def __init__(self, worker: int, detail: str) -> None:
        super().__init__(worker, detail)
        self.worker, self.detail = worker, detail


class RemoteTraceback(Exception):  # noqa: N818 - not an error itself, named like concurrent.futures'
    """Carries a worker's formatted traceback; set as ``__cause__`` of re-raised exceptions."""

    def __str__(self) -> str:
        return "\n" + str(self.args[0])


class Transport(Protocol):
    """Carries calls to the workers of a :class:`WorkerPoolExecutor`.

    Workers are numbered ``0 .. num_workers - 1`` in task-block order. A worker answers every
    call it receives, in order, with one :class:`WorkerReply`; :meth:`start` arranges one reply
    per worker once it is ready (its env copies built).
    """

    unit: str
    """What a worker is called in messages: ``'worker'`` or ``'actor'``."""

    def start(self, specs: Sequence[WorkerSpec]) -> None:
        """Start one worker per spec; each replies once it is ready."""
        ...

    def submit(self, worker: int, method: str, args: tuple[Any, ...]) -> None:
        """Send ``worker`` the call ``RolloutWorker.<method>(*args)``; raise :class:`WorkerLost`."""
        ...

    def wait(self, pending: Collection[int], timeout: float | None) -> list[tuple[int, WorkerReply]]:
        """Replies of ``pending`` workers, waiting at most ``timeout`` seconds for the first
        (``None``: until one arrives); may return none. Raises :class:`WorkerLost`."""
        ...

    def describe(self, worker: int) -> str:
        """Identification of a worker for messages, e.g. ``'pid 123'`` (``''`` if none)."""
        ...

    def hang_hint(self, what: str) -> str:
        """Extra advice when workers did not answer ``what`` in time (``''`` if none)."""
        ...

    def close(self, wait_seconds: float) -> None:
        """Stop the workers, killing those that have not exited after ``wait_seconds``."""
        ...


def describe_tasks(start: int, stop: int) -> str:
    """The one way task ranges are written in messages: ``'tasks 2..4'`` for ``range(2, 5)``."""
    return f"tasks {start}..{stop - 1}"


class WorkerPoolExecutor(ExecutorBase):
    """Rollouts in a pool of workers, one contiguous block of the tasks' episodes each, over a
    transport.

    Under a step budget a task whose leading episodes were split over workers and do not fill
    its budget is continued by one of them in a second round of calls
    (:meth:`~meta_policy_search.samplers.executor_base.RolloutWorker.continue_tasks`).

    Args:
        transport: what carries the calls (see :class:`Transport`).
        env: the :class:`~meta_policy_search.envs.MetaEnv` every worker copies.
        meta_batch_size: number of tasks ``T``.
        envs_per_task: env copies per task ``E``.
        max_path_length: ``H``, steps per episode at most.
        seed: root seed of all episode randomness, ``>= 0``.
        quota: the episodes each task gets per :meth:`collect`
            (:func:`~meta_policy_search.samplers.quota.make_quota`), given to the workers once.
        num_workers: workers, at least 1 and at most the episodes a phase can split
            (``meta_batch_size x quota.leading_episodes(envs_per_task)``).
        timeout: see :class:`SamplerTimeout`; starting the workers may take at least
            :data:`STARTUP_TIMEOUT` seconds.
        use_batched_env: step the env's batched implementation (``env.make_batched``) if it has
            one; ``False`` steps single env copies (same results, slower).

    Raises:
        ValueError: on non-positive sizes, a bad quota or timeout, or a non-flat space.
        RuntimeError: if a worker fails to start.
    """

    _closed_message = "the executor is closed (after close() or a worker failure)"

    def __init__(
        self,
        transport: Transport,
        env: Any,
        meta_batch_size: int,
        envs_per_task: int,
        max_path_length: int,
        seed: int,
        quota: SamplingQuota,
        num_workers: int,
        timeout: float | str | None = None,
        use_batched_env: bool = True,
    ) -> None:
        self._transport = transport
        self._closed = True  # until the workers are up
        self._init_sizes(meta_batch_size, envs_per_task, max_path_length, seed, quota)
        self.timeout = SamplerTimeout(timeout)
        """The pool's deadline per call."""
        self._init_spaces(env)
        self.leading_episodes = self.quota.leading_episodes(self.envs_per_task)
        """The episodes of every task that a phase splits over the workers."""
        self.shares = split_episodes(self.meta_batch_size, self.leading_episodes, num_workers)
        """Per worker, the ``(task, first, stop)`` ranges of leading episodes it runs
        (:func:`~meta_policy_search.samplers.split.split_episodes`)."""
        self.task_blocks = [(block[0][0], block[-1][0] + 1) for block in self.shares]
        """Half-open ``(start, stop)`` range of the tasks each worker holds (neighbours share
        a task whose episodes are split between them)."""
        specs = [
            WorkerSpec(start, stop, self.envs_per_task, self.max_path_length, self.seed,
                       self.quota, use_batched_env,
                       episodes=tuple((first, stop) for _, first, stop in block))
            for (start, stop), block in zip(self.task_blocks, self.shares)
        ]
        try:
            transport.start(specs)
        except WorkerLost as lost:
            self._fail(self._lost_message(lost, "start"), lost)
        self._closed = False
        startup = max(self.timeout.seconds or 0.0, STARTUP_TIMEOUT)
        self._gather("start", startup)

    @property
    def num_workers(self) -> int:
        """Number of workers."""
        return len(self.task_blocks)

    @property
    def slowest_phase_seconds(self) -> float:
        """Wall time of the slowest :meth:`collect` so far."""
        return self.timeout.slowest_phase_seconds

    # ------------------------------------------------------------------ messages
    def _describe(self, worker: int) -> str:
        start, stop = self.task_blocks[worker]
        identity = self._transport.describe(worker)
        return (f"{self._transport.unit} {worker} ("
                f"{identity + ', ' if identity else ''}{describe_tasks(start, stop)})")

    def _lost_message(self, lost: WorkerLost, what: str) -> str:
        return f"sampler {self._describe(lost.worker)} died during {what}: {lost.detail}"

    def _fail(self, message: str, cause: BaseException | None = None) -> None:
        # Other workers may be busy with a long collect: don't wait for them.
        self._closed = True
        self._transport.close(wait_seconds=0.2)
        raise RuntimeError(f"{message}; the executor is closed") from cause

    # ------------------------------------------------------------------ calls
    def _call(self, method: str, args: Sequence[tuple[Any, ...]], what: str) -> list[Any]:
        """Call ``method`` on every worker (``args[k]`` for worker ``k``); return the results."""
        results = self._call_some(method, dict(enumerate(args)), what)
        return [results[k] for k in range(len(args))]

    def _call_some(
        self, method: str, args: dict[int, tuple[Any, ...]], what: str,
        timeout: float | None = None,
    ) -> dict[int, Any]:
        """Call ``method`` on the workers ``args`` names (``args[k]`` for worker ``k``) and wait
        at most ``timeout`` seconds (``None``: the pool's deadline); return their results."""
        self._check_open()
        for k, worker_args in args.items():
            try:
                self._transport.submit(k, method, worker_args)
            except WorkerLost as lost:
                self._fail(self._lost_message(lost, what), lost)
        return self._gather(what, self.timeout.seconds if timeout is None else timeout, args)

    def _gather(
        self, what: str, timeout: float | None, workers: Collection[int] | None = None
    ) -> dict[int, Any]:
        """One reply per worker (of ``workers``; ``None``: all) before ``timeout`` seconds;
        raise on a dead, hung or failing worker."""
        pending = set(range(self.num_workers) if workers is None else workers)
        results: dict[int, Any] = {}
        failed: list[tuple[int, WorkerReply]] = []
        deadline = None if timeout is None else time.monotonic() + timeout
        while pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                replies = self._transport.wait(pending, remaining)
            except WorkerLost as lost:
                self._fail(self._lost_message(lost, what), lost)
            for k, reply in replies:
                pending.discard(k)
                if reply.error_summary:
                    failed.append((k, reply))
                else:
                    results[k] = reply.value
            if pending and deadline is not None and time.monotonic() >= deadline:
                described = "; ".join(self._describe(k) for k in sorted(pending))
                self._fail(
                    f"sampler {described} sent no reply after waiting {timeout:g} s during {what} "
                    "(the sampler timeout, --sampler_timeout) and presumed hung (stopped, or an "
                    f"env stuck in step){self._transport.hang_hint(what)}"
                )
        if failed:
            self._raise_worker_error(*failed[0], what)
        return results

    def _raise_worker_error(self, k: int, reply: WorkerReply, what: str) -> None:
        """Re-raise a worker's exception (its type if it could be sent back, else RuntimeError)
        with the worker's traceback as ``__cause__``; every worker has replied, so the pool
        stays usable."""
        if what == "start":
            self._fail(f"sampler {self._describe(k)} failed to start: {reply.error_summary}")
        error = reply.error
        if error is None:
            error = RuntimeError(f"sampler {self._describe(k)} raised {reply.error_summary}")
        if reply.traceback:
            error.__cause__ = RemoteTraceback(f"in sampler {self._describe(k)}:\n{reply.traceback}")
        raise error

    # ------------------------------------------------------------------ executor interface
    def set_tasks(self, tasks: Sequence[Task]) -> None:
        """Give each worker the tasks of its block.

        Args:
            tasks: ``meta_batch_size`` tasks, e.g. from ``env.sample_tasks``.

        Raises:
            ValueError: if the number of tasks is not ``meta_batch_size`` (or from a worker).
            RuntimeError: if a worker died or hung, or the executor is closed.
        """
        self._check_open()
        tasks = check_tasks(tasks, self.meta_batch_size)
        self._call("set_tasks", [(tasks[start:stop],) for start, stop in self.task_blocks],
                   "set_tasks")
        self._tasks_set = True

    def collect(self, policy: NumpyGaussianMLP, phase: int) -> PathBatch:
        """Collect every task's episodes as the executor's quota says.

        Args:
            policy: per-task policies, ``num_tasks == meta_batch_size``; worker ``k`` receives
                only the parameters of its tasks.
            phase: sampling-phase counter (``>= 0``) that, with the seed, fixes the randomness.

        Returns:
            A :class:`PathBatch` ``[T, N, H, ...]`` of writable arrays: ``N = R`` for an
            :class:`~meta_policy_search.samplers.quota.EpisodeQuota`, a ladder size
            (:func:`~meta_policy_search.samplers.quota.episode_bucket`) for a
            :class:`~meta_policy_search.samplers.quota.StepBudget`; identical for every
            transport and number of workers.

        Raises:
            ValueError: on a mismatched policy or a negative phase (or re-raised from a worker).
            RuntimeError: if a worker died or hung, :meth:`set_tasks` was never called or the
                executor is closed.
        """
        phase = self._check_collect_args(policy, phase)
        start = time.perf_counter()
        deadline = None if self.timeout.seconds is None else start + self.timeout.seconds
        results = self._call(
            "collect",
            [(policy if self.num_workers == 1 else policy.task_slice(a, b), phase)
             for a, b in self.task_blocks],
            "collect",
        )
        batches = [paths for paths, _ in results]
        exec_times = sum((times for _, times in results), ExecTimes())
        pieces, counts, continued = self._first_round_pieces(batches)
        if continued:
            remaining = None if deadline is None else max(0.0, deadline - time.perf_counter())
            for worker, (batch, times) in self._continue(continued, remaining).items():
                exec_times += times
                for row, (task, lengths) in enumerate(continued[worker]):
                    count = int(np.count_nonzero(batch.lengths[row]))
                    pieces.append((batch, row, task, len(lengths), count))
                    counts[task] = len(lengths) + count
        paths = assemble_shares(pieces, self.meta_batch_size, self.quota.num_slots(max(counts)))
        self.timeout.record(time.perf_counter() - start)
        self.last_exec_times = exec_times
        return paths

    def _first_round_pieces(
        self, batches: Sequence[CompactPaths]
    ) -> tuple[list[tuple[CompactPaths, int, int, int, int]], list[int],
               dict[int, list[tuple[int, tuple[int, ...]]]]]:
        """Where the first round's episodes go, each task's episode count so far, and the
        tasks split over workers that need a second round (under a step budget).

        Returns:
            ``(pieces, counts, continued)``: pieces for
            :func:`~meta_policy_search.samplers.paths.assemble_shares`; per task its episodes;
            worker -> the ``(task, leading episodes' lengths)`` it continues.
        """
        pieces: list[tuple[CompactPaths, int, int, int, int]] = []
        counts = [0] * self.meta_batch_size
        split: dict[int, list[int]] = {}
        holders: dict[int, list[int]] = {}
        for worker, (batch, block) in enumerate(zip(batches, self.shares)):
            for row, (task, first, stop) in enumerate(block):
                whole = (first, stop) == (0, self.leading_episodes)
                count = int(np.count_nonzero(batch.lengths[row])) if whole else stop - first
                pieces.append((batch, row, task, first, count))
                counts[task] = max(counts[task], first + count)
                if not whole:
                    split.setdefault(task, [0] * self.leading_episodes)[first:stop] = [
                        int(n) for n in batch.lengths[row, :count]
                    ]
                    holders.setdefault(task, []).append(worker)
        if self.quota.waves:  # every episode was fixed in advance: nothing to continue
            return pieces, counts, {}
        candidates, remaining = {}, {}
        for task, lengths in split.items():
            # A budget of R x H steps needs at least R >= E episodes, so a complete prefix
            # here is all E leading episodes, each of H steps.
            complete = complete_prefix(self.quota, lengths, self.max_path_length)
            if complete is not None:
                counts[task] = complete
                continue
            candidates[task] = holders[task]
            budget = self.quota.num_rollouts * self.max_path_length
            remaining[task] = max(budget - sum(lengths), 1)
        continued = {
            worker: [(task, tuple(split[task])) for task in tasks]
            for worker, tasks in assign_continuations(candidates, remaining).items()
        }
        return pieces, counts, continued

    def _continue(
        self, continued: dict[int, list[tuple[int, tuple[int, ...]]]], timeout: float | None
    ) -> dict[int, tuple[CompactPaths, ExecTimes]]:
        """The second round: each named worker continues its tasks (``continue_tasks``)."""
        return self._call_some(
            "continue_tasks", {worker: (tasks,) for worker, tasks in continued.items()},
            "collect", timeout=timeout,
        )

    def worker_info(self) -> list[dict[str, Any]]:
        """Diagnostics of each worker.

        Returns:
            One dict per worker: ``pid``, ``hostname``, ``tensorflow_imported`` (whether it has
            loaded TensorFlow: it should not) and ``cpu_seconds`` (its CPU time so far).

        Raises:
            RuntimeError: if a worker died or hung, or the executor is closed.
        """
        return self._call("info", [()] * self.num_workers, "worker_info")

    def close(self) -> None:
        """Stop the workers (safe to call more than once)."""
        if not self._closed:
            self._closed = True
            self._transport.close(wait_seconds=2.0)

    def __enter__(self) -> Self:
        return self

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to release
            pass
