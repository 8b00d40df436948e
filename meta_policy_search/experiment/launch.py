"""Run experiment commands as fresh Python processes: locally a few at a time, or as Ray tasks.

Shared by ``sweep.py`` (one script, many seeds, on Ray) and ``reproduce.py`` (a grid of
algorithms, envs and seeds, locally or on Ray). Every run is ``python SCRIPT ARGS...`` in a new
process whose stdout and stderr go to a file in its run directory, so runs share nothing and a
crash of one does not touch the others.

Both launchers have the same interface: :meth:`~LocalLauncher.submit` a run under a key,
:meth:`~LocalLauncher.wait` for finished runs (``(key, result)`` pairs, ``result`` as returned
by :func:`run_command`), :meth:`~LocalLauncher.running` for the keys that have started. Ray is
imported only when a :class:`RayLauncher` is built (``pip install meta_policy_search[ray]``).
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
from collections import deque
from typing import IO, Any

from meta_policy_search.utils.validation import check_positive_int


def split_passthrough_args(argv: list[str] | None) -> tuple[list[str], list[str]]:
    """Split a command line at ``--``: (the launcher's own arguments, those for every run).

    Args:
        argv: arguments without the program name; ``None`` reads ``sys.argv[1:]``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        return argv, []
    split = argv.index("--")
    return argv[:split], argv[split + 1:]


def run_command(command: list[str], run_dir: str, output_name: str) -> dict[str, Any]:
    """Run ``command`` (its first element is replaced by this process's Python) into ``run_dir``.

    Args:
        command: ``['python', SCRIPT, ARGS...]``.
        run_dir: the run's output directory (created); receives ``output_name``.
        output_name: file name of the run's stdout and stderr.

    Returns:
        ``{'returncode', 'host', 'seconds', 'output'}`` (``output``: the log file path).
    """
    os.makedirs(run_dir, exist_ok=True)
    output = os.path.join(run_dir, output_name)
    start = time.perf_counter()
    with open(output, "w", encoding="utf-8") as log:
        returncode = subprocess.run([sys.executable, *command[1:]], stdout=log,
                                    stderr=subprocess.STDOUT, check=False).returncode
    return {"returncode": returncode, "host": socket.gethostname(),
            "seconds": time.perf_counter() - start, "output": output}


class LocalLauncher:
    """Runs at most ``n_concurrent`` commands at a time as subprocesses of this process."""

    def __init__(self, n_concurrent: int, output_name: str) -> None:
        """
        Args:
            n_concurrent: runs at a time, positive.
            output_name: file name (in each run directory) of a run's stdout and stderr.

        Raises:
            ValueError: if ``n_concurrent`` is not positive.
        """
        self.n_concurrent = check_positive_int("n_concurrent", n_concurrent)
        self.output_name = output_name
        self._queue: deque[tuple[Any, list[str], str]] = deque()
        self._running: dict[Any, tuple[subprocess.Popen, IO[str], float, str]] = {}

    def submit(self, key: Any, command: list[str], run_dir: str) -> None:
        """Queue ``command`` (``['python', SCRIPT, ARGS...]``) to run into ``run_dir``."""
        self._queue.append((key, command, run_dir))
        self._start_queued()

    def running(self) -> list[Any]:
        """Keys of the runs that have started and not finished."""
        return list(self._running)

    def wait(self, timeout: float | None) -> list[tuple[Any, dict[str, Any]]]:
        """Wait up to ``timeout`` seconds (``None``: until one finishes) for runs to finish.

        Queued runs start as running ones finish.

        Returns:
            ``(key, result)`` of every run that finished (possibly none).
        """
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        finished: list[tuple[Any, dict[str, Any]]] = []
        while True:
            for key, (process, log, start, output) in list(self._running.items()):
                if process.poll() is not None:
                    log.close()
                    del self._running[key]
                    finished.append((key, {"returncode": process.returncode,
                                           "host": socket.gethostname(),
                                           "seconds": time.perf_counter() - start,
                                           "output": output}))
            self._start_queued()
            if finished or not self._running or time.monotonic() >= deadline:
                return finished
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))

    def _start_queued(self) -> None:
        while self._queue and len(self._running) < self.n_concurrent:
            key, command, run_dir = self._queue.popleft()
            os.makedirs(run_dir, exist_ok=True)
            output = os.path.join(run_dir, self.output_name)
            log = open(output, "w", encoding="utf-8")  # closed in wait() or close()
            process = subprocess.Popen([sys.executable, *command[1:]], stdout=log,
                                       stderr=subprocess.STDOUT)
            self._running[key] = (process, log, time.perf_counter(), output)

    def close(self) -> None:
        """Stop the runs still going (e.g. on Ctrl-C); their checkpoints let them resume."""
        self._queue.clear()
        for process, _, _, _ in self._running.values():
            process.terminate()
        for process, log, _, _ in self._running.values():
            process.wait()
            log.close()
        self._running.clear()


class RayLauncher:
    """Runs every command as a Ray task reserving ``cpus_per_run`` CPUs (Ray schedules them)."""

    def __init__(self, ray_address: str | None, cpus_per_run: float, output_name: str) -> None:
        """
        Args:
            ray_address: Ray cluster address (``'auto'``, ``'HOST:6379'``); ``None``: a local
                Ray instance (see :func:`~meta_policy_search.samplers.ray_executor.ensure_ray_initialized`).
            cpus_per_run: CPUs Ray reserves per run.
            output_name: file name (in each run directory) of a run's stdout and stderr.

        Raises:
            ImportError: if Ray is not installed.
        """
        # the sampling stack (numpy, gymnasium) loads only for a Ray launch
        from meta_policy_search.samplers.ray_executor import ensure_ray_initialized

        self.ray = ensure_ray_initialized(ray_address)
        # Ray is optional: loaded only for a Ray launch
        from ray import cloudpickle

        # Ray workers cannot import this file (experiments/ is not a package): ship it by value.
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
        self.output_name = output_name
        self._remote = self.ray.remote(num_cpus=cpus_per_run, max_retries=0)(run_command)
        self._pending: dict[Any, Any] = {}  # object ref -> key
        self._outputs: dict[Any, str] = {}  # key -> output file (exists once the task started)

    def submit(self, key: Any, command: list[str], run_dir: str) -> None:
        """Submit ``command`` (``['python', SCRIPT, ARGS...]``) as a Ray task into ``run_dir``."""
        output = os.path.join(run_dir, self.output_name)
        if os.path.exists(output):
            os.remove(output)  # its reappearance tells running() the task started
        self._pending[self._remote.remote(command, run_dir, self.output_name)] = key
        self._outputs[key] = output

    def running(self) -> list[Any]:
        """Keys of the submitted runs whose task has started (its output file exists)."""
        keys = list(self._pending.values())
        return [key for key in keys if os.path.exists(self._outputs[key])]

    def wait(self, timeout: float | None) -> list[tuple[Any, dict[str, Any]]]:
        """Wait up to ``timeout`` seconds (``None``: until one finishes) for tasks to finish.

        Returns:
            ``(key, result)`` of every task that finished (possibly none); a task that Ray lost
            gets ``returncode`` ``'Ray error <type>'``.
        """
        if not self._pending:
            return []
        refs = list(self._pending)
        done, _ = self.ray.wait(refs, num_returns=1, timeout=timeout)
        if done:  # and whatever else has finished meanwhile
            done, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
        finished = []
        for ref in done:
            key = self._pending.pop(ref)
            try:
                result = self.ray.get(ref)
            except self.ray.exceptions.RayError as error:
                result = {"returncode": f"Ray error {type(error).__name__}", "host": "?",
                          "seconds": float("nan"), "output": str(error).splitlines()[0]}
            finished.append((key, result))
        return finished

    def close(self) -> None:
        """Cancel the tasks still pending."""
        for ref in list(self._pending):
            self.ray.cancel(ref, force=True)
        self._pending.clear()
