"""One owner per run directory: an exclusive OS file lock on ``RUN_DIR/run.lock``.

A training run (fresh or ``--resume``) holds the lock from before it writes anything until it
exits. The lock is ``flock(2)``'s: the kernel releases it when the owning process dies, however
it dies (SIGKILL included), so a killed run never leaves a stale lock behind; the file itself
stays and only records the last owner's pid and host. A second process on the same directory
(another run script, ``reproduce.py`` relaunching the run, a scheduler's retry) finds the lock
held and stops with a :class:`~meta_policy_search.experiment.config_values.ConfigError` naming
the owner, before it reads or writes anything else there. Two writers on one run directory
otherwise delete each other's in-progress checkpoints and interleave their ``progress.csv`` rows.

``flock`` locks are per open file description: file descriptors opened here are not inherited
by child processes (Python opens them non-inheritable), so worker processes never keep a lock
alive after the run died. No TensorFlow is imported here.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import time

from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.utils.disk_space import DiskFullError, disk_full_as_error

LOCK_FILE = "run.lock"
"""The lock file's name inside a run directory."""

_PID_WAIT_SECONDS = 1.0
"""How long to wait for a new owner to write its pid into the lock file."""


class RunLock:
    """The held lock of a run directory; :meth:`release` (or process exit) frees it.

    Use :func:`acquire_run_lock` to get one.
    """

    def __init__(self, run_dir: str, fd: int) -> None:
        """
        Args:
            run_dir: the locked run directory.
            fd: the open, locked descriptor of its lock file (owned by this object).
        """
        self.run_dir = run_dir
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Release the lock (closing its file); a no-op if already released."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the only descriptor of the open file drops the flock

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def lock_path(run_dir: str) -> str:
    """Path of ``run_dir``'s lock file."""
    return os.path.join(run_dir, LOCK_FILE)


def _owner_error(run_dir: str, owner: str) -> ConfigError:
    return ConfigError(
        f"--dump_path {run_dir}: in use by another run ({owner}); wait for it to finish or stop "
        "it, or choose another --dump_path"
    )


def _describe_owner(fd: int) -> str:
    """``'pid 1234 on host h'`` from a lock file's contents (waiting briefly for a new owner's
    pid), or ``'pid unknown'``."""
    deadline = time.monotonic() + _PID_WAIT_SECONDS
    while True:
        os.lseek(fd, 0, os.SEEK_SET)
        words = os.read(fd, 256).decode("utf-8", "replace").split()
        if words and words[0].isdigit():
            host = f" on host {words[1]}" if len(words) > 1 else ""
            return f"pid {words[0]}{host}"
        if time.monotonic() >= deadline:
            return "pid unknown"
        time.sleep(0.05)


def _try_lock(fd: int) -> bool:
    """Take the exclusive lock of ``fd`` without waiting; ``False`` if another process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def check_run_owner(run_dir: str) -> None:
    """Raise if a live process owns ``run_dir``; writes nothing (a read-only probe).

    Args:
        run_dir: a run directory (it need not exist).

    Raises:
        ConfigError: naming the owner's pid, if another process holds the directory's lock.
    """
    try:
        fd = os.open(lock_path(run_dir), os.O_RDONLY)
    except OSError:
        return  # no lock file (or unreadable: the acquisition will say so)
    try:
        if not _try_lock(fd):
            raise _owner_error(run_dir, _describe_owner(fd))
    finally:
        os.close(fd)  # also drops the probe's own lock, if it got it


def acquire_run_lock(run_dir: str) -> RunLock:
    """Create ``run_dir`` if needed and take its lock, recording this process's pid and host.

    Args:
        run_dir: the run directory.

    Returns:
        The held :class:`RunLock`; keep it (and call :meth:`RunLock.release`) for the run's
        whole life.

    Raises:
        ConfigError: naming the owner's pid if another process holds the lock, or if the
            directory or its lock file cannot be created.
        DiskFullError: if the disk is full.
    """
    owner = f"{os.getpid()} {socket.gethostname()}\n".encode()
    try:
        with disk_full_as_error(lock_path(run_dir), len(owner)):
            os.makedirs(run_dir, exist_ok=True)
            fd = os.open(lock_path(run_dir), os.O_RDWR | os.O_CREAT, 0o644)
    except DiskFullError:
        raise
    except OSError as error:
        raise ConfigError(
            f"--dump_path {run_dir}: cannot write there ({error.strerror or error})"
        ) from None
    try:
        if not _try_lock(fd):
            raise _owner_error(run_dir, _describe_owner(fd))
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        with disk_full_as_error(lock_path(run_dir), len(owner)):
            os.write(fd, owner)
    except BaseException:
        os.close(fd)
        raise
    return RunLock(run_dir, fd)
