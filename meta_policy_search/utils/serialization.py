"""Atomic file writes: a reader never sees a half-written checkpoint, CSV or JSON file.

Every writer goes to a temporary file in the destination's directory (same filesystem), is
flushed and fsync'ed, then moved over the destination with :func:`os.replace`, which is atomic
on POSIX and Windows. If writing fails the temporary file is removed and the destination is left
untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from meta_policy_search.utils.disk_space import disk_full_as_error

TEMP_PREFIX = ".tmp-"
"""Prefix of the temporary files (hidden, so a crash leaves no visible clutter)."""


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb") -> Iterator[IO]:
    """Open a temporary file that replaces ``path`` when the ``with`` block exits cleanly.

    Args:
        path: destination file; its directory must exist.
        mode: ``'wb'`` (bytes) or ``'w'`` (text, UTF-8, ``newline=''`` so the csv module
            controls line endings).

    Yields:
        The open temporary file.

    Raises:
        ValueError: if ``mode`` is not ``'wb'`` or ``'w'``.
        FileNotFoundError: if the directory of ``path`` does not exist.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp_path = tempfile.mkstemp(
        prefix=TEMP_PREFIX + os.path.basename(path) + ".", dir=directory
    )
    try:
        if mode == "w":
            file = os.fdopen(fd, mode, encoding="utf-8", newline="")
        else:
            file = os.fdopen(fd, mode)
        with file as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates the file 0600; give it the permissions a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_path, 0o666 & ~umask)
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp_path)
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_open`).

    Args:
        path: destination file; its directory must exist.
        data: the complete new content.

    Raises:
        DiskFullError: if the disk is full (``path`` is left as it was).
    """
    with disk_full_as_error(os.fspath(path), len(data)), atomic_open(path, "wb") as f:
        f.write(data)


def _json_default(obj: Any) -> Any:
    """Convert numpy scalars and arrays for :func:`json.dumps`; reject anything else."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serializable: {obj!r}")


def atomic_write_json(path: str | os.PathLike, obj: Any, indent: int | None = 2) -> None:
    """Write ``obj`` as JSON to ``path`` atomically.

    Numpy scalars and arrays are converted to Python numbers and lists.

    Args:
        path: destination file; its directory must exist.
        obj: a JSON-serializable object (dicts, lists, str, numbers, bool, None, numpy values).
        indent: passed to :func:`json.dumps`.

    Raises:
        TypeError: if ``obj`` contains something JSON cannot represent (nothing is written).
    """
    text = json.dumps(obj, indent=indent, default=_json_default)
    atomic_write_bytes(path, (text + "\n").encode("utf-8"))


def atomic_dump_joblib(path: str | os.PathLike, obj: Any) -> None:
    """Pickle ``obj`` with :func:`joblib.dump` to ``path`` atomically.

    Args:
        path: destination file; its directory must exist.
        obj: any object joblib can pickle.
    """
    import joblib  # local: only checkpointing needs it

    with atomic_open(path, "wb") as f:
        joblib.dump(obj, f)
