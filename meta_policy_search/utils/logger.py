"""Experiment logger: key/value diagnostics, text and snapshots (the ProMP/baselines module API).

Usage::

    from meta_policy_search.utils import logger

    logger.configure(dir="data/run", format_strs=("stdout", "log", "csv", "tensorboard"))
    for itr in range(n_itr):
        logger.logkv("Itr", itr)
        logger.logkv_mean("Step_0-AverageReturn", value)
        logger.dumpkvs()                          # one row of every output
        logger.save_itr_params(itr, params)        # snapshot per ``snapshot_mode``

Outputs in ``dir``: ``log.txt`` (tables and :func:`log` lines), ``progress.csv`` (one row per
:func:`dumpkvs`; see :class:`~meta_policy_search.utils.log_writers.CSVOutputFormat`),
TensorBoard event files and the ``*.pkl`` snapshots. Unlike the original there is no MPI.

The module-level functions act on :attr:`Logger.CURRENT`; before :func:`configure` (and after
:func:`reset`) that is a stdout-only logger without a directory.
"""

from __future__ import annotations

import datetime
import os
import tempfile
from collections.abc import Sequence
from typing import Any

from meta_policy_search.utils.log_writers import (
    CSVOutputFormat,
    HumanOutputFormat,
    LogValue,
    OutputFormat,
    TensorBoardOutputFormat,
    to_log_value,
)
from meta_policy_search.utils.serialization import atomic_dump_joblib

FORMAT_STRS = ("stdout", "log", "csv", "tensorboard")
"""Output formats :func:`configure` accepts."""

SNAPSHOT_MODES = ("all", "last", "gap", "last_gap", "none")
"""Snapshot policies of :func:`save_itr_params`."""

STEP_KEY = "Itr"
"""If a dump contains this key, its value is the TensorBoard step (else a dump counter)."""


def _make_output(
    format_str: str, log_dir: str | None, append: bool, keep_through: int | None = None
) -> OutputFormat:
    if format_str == "stdout":
        return HumanOutputFormat(None)
    if log_dir is None:
        raise ValueError(f"output format {format_str!r} needs a log directory")
    if format_str == "log":
        return HumanOutputFormat(os.path.join(log_dir, "log.txt"), append=append)
    if format_str == "csv":
        keep = None if keep_through is None else (STEP_KEY, keep_through)
        return CSVOutputFormat(os.path.join(log_dir, "progress.csv"), append, keep)
    if format_str == "tensorboard":
        return TensorBoardOutputFormat(log_dir, keep_through if append else None)
    raise ValueError(f"unknown output format {format_str!r}; expected some of {FORMAT_STRS}")


class Logger:
    """Accumulates key/values between dumps and writes them to its output formats.

    Args:
        dir: log directory (created if missing), or ``None`` for no files (stdout only).
        format_strs: outputs, a subset of :data:`FORMAT_STRS`; all but ``'stdout'`` need ``dir``.
        snapshot_mode: one of :data:`SNAPSHOT_MODES` (see :meth:`save_itr_params`).
        snapshot_gap: iterations between snapshots in the ``'gap'`` modes, positive.
        append: continue existing ``log.txt``/``progress.csv`` in ``dir`` (resuming a run)
            instead of truncating them.
        keep_through: with ``append``, the last iteration (:data:`STEP_KEY`) to keep: rows of
            ``progress.csv`` and TensorBoard summaries of later iterations are removed (the
            resumed run repeats them from its checkpoint); ``None`` keeps everything.

    Raises:
        ValueError: for an unknown format, snapshot mode, a non-positive gap, or a file format
            without ``dir``.
    """

    CURRENT: Logger
    """The logger the module-level functions use."""

    DEFAULT: Logger
    """The stdout-only logger in place before :func:`configure` and after :func:`reset`."""

    def __init__(
        self,
        dir: str | None = None,
        format_strs: Sequence[str] = ("stdout",),
        snapshot_mode: str = "last",
        snapshot_gap: int = 1,
        append: bool = False,
        keep_through: int | None = None,
    ) -> None:
        if isinstance(format_strs, str):
            raise ValueError(f"format_strs must be a sequence of str, got the str {format_strs!r}")
        unknown = [f for f in format_strs if f not in FORMAT_STRS]
        if unknown:
            raise ValueError(f"unknown output formats {unknown}; expected some of {FORMAT_STRS}")
        if snapshot_mode not in SNAPSHOT_MODES:
            raise ValueError(
                f"snapshot_mode must be one of {SNAPSHOT_MODES}, got {snapshot_mode!r}"
            )
        if isinstance(snapshot_gap, bool) or not isinstance(snapshot_gap, int) or snapshot_gap < 1:
            raise ValueError(f"snapshot_gap must be a positive int, got {snapshot_gap!r}")
        self.dir = None if dir is None else os.fspath(dir)
        if self.dir is not None:
            os.makedirs(self.dir, exist_ok=True)
        self.snapshot_mode = snapshot_mode
        self.snapshot_gap = snapshot_gap
        self.output_formats: list[OutputFormat] = []
        try:
            for format_str in dict.fromkeys(format_strs):  # drop duplicates, keep order
                self.output_formats.append(
                    _make_output(format_str, self.dir, append, keep_through if append else None)
                )
        except BaseException:
            self.close()
            raise
        self._values: dict[str, LogValue] = {}
        self._counts: dict[str, int] = {}
        self._num_dumps = 0

    def logkv(self, key: str, val: Any) -> None:
        """Record ``val`` under ``key`` for the next dump (overwrites an earlier value)."""
        self._values[key] = to_log_value(key, val)
        self._counts.pop(key, None)

    def logkv_mean(self, key: str, val: Any) -> None:
        """Record ``val`` under ``key``; the dump writes the mean of all values since the last."""
        value = to_log_value(key, val)
        if isinstance(value, str):
            raise ValueError(f"logkv_mean needs a number for key {key!r}, got {val!r}")
        count = self._counts.get(key, 0)
        # A running mean is always a float (logkv, which may store a string, resets the count).
        old = float(self._values.get(key, 0.0)) if count else 0.0
        self._values[key] = (old * count + value) / (count + 1)
        self._counts[key] = count + 1

    def dumpkvs(self) -> dict[str, LogValue]:
        """Write the recorded values to every output and clear them.

        Returns:
            The dict that was written (empty if nothing was recorded; then nothing is written).
        """
        kvs = self._values
        self._values, self._counts = {}, {}
        if not kvs:
            return {}
        step_value = kvs.get(STEP_KEY)
        step = int(step_value) if isinstance(step_value, (int, float)) else self._num_dumps
        for output in self.output_formats:
            output.write_kvs(kvs, step)
        self._num_dumps += 1
        return dict(kvs)

    def log(self, *args: Any) -> None:
        """Write ``args`` joined by spaces to stdout and ``log.txt`` (the text outputs)."""
        text = " ".join(str(arg) for arg in args)
        for output in self.output_formats:
            output.write_text(text)

    def save_itr_params(self, itr: int, params: Any) -> list[str]:
        """Pickle ``params`` (with joblib) according to the snapshot mode, atomically.

        Modes: ``'all'`` writes ``itr_{itr}.pkl`` every iteration; ``'last'`` overwrites
        ``params.pkl``; ``'gap'`` writes ``itr_{itr}.pkl`` when ``itr % snapshot_gap == 0``;
        ``'last_gap'`` does both ``'last'`` and ``'gap'``; ``'none'`` writes nothing.

        Args:
            itr: the iteration, ``>= 0``.
            params: anything joblib can pickle (e.g. a dict of numpy arrays).

        Returns:
            The paths written (possibly none).

        Raises:
            ValueError: if ``itr`` is not a non-negative int.
            RuntimeError: if a snapshot is due but the logger has no directory.
        """
        if isinstance(itr, bool) or not isinstance(itr, int) or itr < 0:
            raise ValueError(f"itr must be a non-negative int, got {itr!r}")
        mode = self.snapshot_mode
        names = []
        if mode == "all" or (mode in ("gap", "last_gap") and itr % self.snapshot_gap == 0):
            names.append(f"itr_{itr}.pkl")
        if mode in ("last", "last_gap"):
            names.append("params.pkl")
        if names and self.dir is None:
            raise RuntimeError("save_itr_params needs a log directory: call configure(dir=...)")
        paths = [os.path.join(self.dir, name) for name in names] if self.dir else []
        for path in paths:
            atomic_dump_joblib(path, params)
        return paths

    def close(self) -> None:
        """Close every output."""
        for output in self.output_formats:
            output.close()
        self.output_formats = []


Logger.DEFAULT = Logger.CURRENT = Logger()


def _default_dir() -> str:
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S-%f")
    return os.path.join(tempfile.gettempdir(), f"meta_policy_search-{stamp}")


def configure(
    dir: str | None = None,
    format_strs: Sequence[str] = FORMAT_STRS,
    snapshot_mode: str = "last",
    snapshot_gap: int = 1,
    append: bool = False,
    keep_through: int | None = None,
) -> Logger:
    """Replace the current logger (closing it) with one writing to ``dir``.

    Args:
        dir: log directory, created if missing; ``None`` picks a new timestamped directory under
            the system temp dir.
        format_strs: outputs, a subset of ``('stdout', 'log', 'csv', 'tensorboard')``.
        snapshot_mode: ``'all'``, ``'last'``, ``'gap'``, ``'last_gap'`` or ``'none'``.
        snapshot_gap: iterations between snapshots in the ``'gap'`` modes.
        append: continue existing ``log.txt``/``progress.csv`` (for resumed runs).
        keep_through: with ``append``, drop logged iterations after this one (see
            :class:`Logger`): the resumed run continues after its checkpoint's iteration.

    Returns:
        The new current :class:`Logger`.

    Raises:
        ValueError: for an unknown format or snapshot mode, or a non-positive gap.
    """
    new = Logger(
        dir if dir is not None else _default_dir(),
        format_strs=format_strs,
        snapshot_mode=snapshot_mode,
        snapshot_gap=snapshot_gap,
        append=append,
        keep_through=keep_through,
    )
    if Logger.CURRENT is not Logger.DEFAULT:
        Logger.CURRENT.close()
    Logger.CURRENT = new
    new.log(f"Logging to {new.dir}")
    return new


def reset() -> None:
    """Close the current logger and go back to the stdout-only default."""
    if Logger.CURRENT is not Logger.DEFAULT:
        Logger.CURRENT.close()
    Logger.CURRENT = Logger.DEFAULT


def logkv(key: str, val: Any) -> None:
    """Record ``val`` (a number or str) under ``key`` for the next :func:`dumpkvs`."""
    Logger.CURRENT.logkv(key, val)


def logkv_mean(key: str, val: Any) -> None:
    """Record ``val``; :func:`dumpkvs` writes the mean of the values logged since the last dump."""
    Logger.CURRENT.logkv_mean(key, val)


def dumpkvs() -> dict[str, LogValue]:
    """Write the recorded values to every output, clear them and return the dict written."""
    return Logger.CURRENT.dumpkvs()


def log(*args: Any) -> None:
    """Write ``args`` joined by spaces to stdout and ``log.txt``."""
    Logger.CURRENT.log(*args)


def get_dir() -> str | None:
    """Return the current log directory (``None`` before :func:`configure`)."""
    return Logger.CURRENT.dir


def save_itr_params(itr: int, params: Any) -> list[str]:
    """Snapshot ``params`` for iteration ``itr`` (see :meth:`Logger.save_itr_params`)."""
    return Logger.CURRENT.save_itr_params(itr, params)
