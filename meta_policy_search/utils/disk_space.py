"""A full disk as one clear error: which file could not be written and how much space it needs.

A write that fails with ``ENOSPC`` deep inside a run (the run lock, ``log.txt``,
``progress.csv``, a checkpoint) raises :class:`DiskFullError`, an :class:`OSError` with that
errno whose message names the path, the space the write needed and the space left, so that the
scripts print it as one line (:mod:`meta_policy_search.experiment.exit_codes`). TensorFlow
reports the same condition in its own error types; :func:`is_disk_full` recognises both. No
TensorFlow is imported here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator

_NO_SPACE_TEXT = "No space left on device"
"""How ``strerror(ENOSPC)`` reads; TensorFlow's errors carry it in their message."""


def format_bytes(num_bytes: float) -> str:
    """``1536`` -> ``'1.5 KiB'``: a size in binary units, for messages."""
    size = float(num_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def free_bytes(path: str) -> int | None:
    """Bytes free to this user on the file system holding ``path`` (or its nearest existing
    ancestor); ``None`` if that cannot be read."""
    existing = os.path.abspath(path)
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    try:
        return shutil.disk_usage(existing).free
    except OSError:
        return None


class DiskFullError(OSError):
    """A write failed because the file system is full (``errno.ENOSPC``).

    Args:
        path: the file or directory being written.
        needed_bytes: about how many bytes the write needed (``None``: unknown).
    """

    def __init__(self, path: str, needed_bytes: int | None) -> None:
        self.path = path
        self.needed_bytes = needed_bytes
        free = free_bytes(path)
        needed = "" if needed_bytes is None else f" needs about {format_bytes(needed_bytes)}"
        left = "" if free is None else f" ({format_bytes(free)} free there)"
        super().__init__(errno.ENOSPC, f"no space left on device: writing {path}{needed}{left}")

    def __str__(self) -> str:
        return str(self.strerror)

    def __reduce__(self) -> tuple:
        return type(self), (self.path, self.needed_bytes)


def is_disk_full(error: BaseException) -> bool:
    """Whether ``error`` says the disk is full: an ``OSError`` with ``errno.ENOSPC``, or another
    error (TensorFlow's ``ResourceExhaustedError`` of a checkpoint write) whose message says so."""
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return True
    return _NO_SPACE_TEXT.lower() in str(error).lower()


@contextlib.contextmanager
def disk_full_as_error(path: str, needed_bytes: int | None) -> Iterator[None]:
    """Turn a full-disk failure inside the ``with`` block into a :class:`DiskFullError`.

    Args:
        path: the file or directory the block writes.
        needed_bytes: about how many bytes it writes (``None``: unknown).

    Raises:
        DiskFullError: if the block raised an error that :func:`is_disk_full` recognises (other
            errors pass unchanged).
    """
    try:
        yield
    except DiskFullError:
        raise
    except Exception as error:
        if is_disk_full(error):
            raise DiskFullError(path, needed_bytes) from error
        raise
