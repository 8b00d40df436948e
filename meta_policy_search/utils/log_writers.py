"""Output formats of :mod:`meta_policy_search.utils.logger`: stdout/text table, CSV, TensorBoard.

Each writer takes one dict of scalars per :func:`~meta_policy_search.utils.logger.dumpkvs` call
(``write_kvs``) and, for the human-readable formats, free text (``write_text``).
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import numbers
import os
import sys
from typing import Any

from meta_policy_search.utils.disk_space import disk_full_as_error
from meta_policy_search.utils.serialization import atomic_open

LogValue = float | int | str
"""A logged value: a number (stored as Python ``int``/``float``) or a string."""


class OutputFormat:
    """Base of the writers: ignores everything; subclasses override what they support."""

    def write_kvs(self, kvs: dict[str, LogValue], step: int) -> None:
        """Write one row of key/value pairs logged at iteration ``step``."""

    def write_text(self, text: str) -> None:
        """Write a line of free text (only the human-readable formats keep it)."""

    def close(self) -> None:
        """Flush and release files."""


def _format_value(value: LogValue) -> str:
    if isinstance(value, float):
        return f"{value:<8.3g}"
    return str(value)


def append_whole(path: str, fd: int, data: bytes) -> None:
    """Append ``data`` to the open file ``fd`` (of ``path``) completely or not at all.

    Written with ``os.write`` (no Python buffer that would retry a failed write when the file is
    closed); if a write fails part-way, the file is cut back to its old length, so a full disk
    leaves no half line that the next row would continue.

    Raises:
        DiskFullError: if the disk is full (the file is as it was).
        OSError: on another failure to write (the file is as it was).
    """
    size = os.fstat(fd).st_size
    try:
        with disk_full_as_error(path, len(data)):
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)  # needs no space
        raise


class HumanOutputFormat(OutputFormat):
    """A table per dump and free text lines, to stdout or to a text file.

    Args:
        path: text file to append to (created if missing), or ``None`` for ``sys.stdout``
            (looked up at every write, so redirections such as pytest's capture work).
        append: keep an existing file's content (``True``) or truncate it (``False``).
    """

    def __init__(self, path: str | None = None, append: bool = False) -> None:
        self.path = path
        self._fd: int | None = None
        if path is not None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if append else os.O_TRUNC)
            with disk_full_as_error(path, None):
                self._fd = os.open(path, flags, 0o666)

    def _write(self, text: str) -> None:
        if self._fd is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            append_whole(str(self.path), self._fd, text.encode("utf-8"))

    def write_kvs(self, kvs: dict[str, LogValue], step: int) -> None:
        """Write ``kvs`` as a two-column table sorted by key."""
        if not kvs:
            return
        rows = [(key, _format_value(value)) for key, value in sorted(kvs.items())]
        key_width = max(len(key) for key, _ in rows)
        value_width = max(len(value) for _, value in rows)
        dashes = "-" * (key_width + value_width + 7)
        lines = [dashes]
        lines += [f"| {key:<{key_width}} | {value:<{value_width}} |" for key, value in rows]
        lines.append(dashes)
        self._write("\n".join(lines) + "\n")

    def write_text(self, text: str) -> None:
        """Write ``text`` and a newline."""
        self._write(text + "\n")

    def close(self) -> None:
        """Close the file (never ``sys.stdout``)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


class CSVOutputFormat(OutputFormat):
    """``progress.csv``: one row per dump; a key first logged later widens the header.

    When a dump brings new keys, the whole file is rewritten (atomically) with the widened header
    and empty cells for the rows that lacked them, so the file is always a valid CSV that
    :class:`csv.DictReader` reads. Columns keep the order in which keys were first logged.

    Args:
        path: the CSV file.
        append: continue an existing file (its header is read back), e.g. when resuming a run;
            otherwise the file is truncated.
        keep_through: with ``append``, ``(step_key, step)``: rows whose ``step_key`` column is
            greater than ``step`` are removed first. A run killed after writing an iteration's
            row but before its checkpoint repeats that iteration when resumed; without this the
            file would hold the iteration twice.
    """

    def __init__(
        self, path: str, append: bool = False, keep_through: tuple[str, int] | None = None
    ) -> None:
        self.path = path
        self.keys: list[str] = []
        if append and os.path.exists(path):
            with open(path, newline="", encoding="utf-8") as f:
                self.keys = next(csv.reader(f), [])
            if keep_through is not None and keep_through[0] in self.keys:
                self._drop_rows_after(self.keys.index(keep_through[0]), keep_through[1])
        else:
            with disk_full_as_error(path, None), open(path, "w", encoding="utf-8"):
                pass

    def _drop_rows_after(self, column: int, step: int) -> None:
        with open(self.path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))[1:]
        kept = [row for row in rows if not _cell_after(row, column, step)]
        if len(kept) == len(rows):
            return
        self._replace_rows(self.keys, kept)

    def _rewrite_with_header(self, keys: list[str]) -> None:
        with open(self.path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))[1:]
        self._replace_rows(keys, [row + [""] * (len(keys) - len(row)) for row in rows])

    def _replace_rows(self, keys: list[str], rows: list[list[str]]) -> None:
        """Replace the file (atomically: a full disk leaves the old one) by ``keys`` and ``rows``."""
        data = _csv_lines([keys, *rows])
        with disk_full_as_error(self.path, len(data)), atomic_open(self.path, "wb") as f:
            f.write(data)

    def write_kvs(self, kvs: dict[str, LogValue], step: int) -> None:
        """Append one row, widening the header first if ``kvs`` has new keys.

        Raises:
            DiskFullError: if the disk is full; the file keeps its earlier rows, whole.
        """
        if not kvs:
            return
        new_keys = [key for key in kvs if key not in self.keys]
        keys = self.keys + new_keys
        if new_keys and self.keys:
            self._rewrite_with_header(keys)
        data = _csv_lines([[_csv_cell(kvs.get(key)) for key in keys]])
        if new_keys and not self.keys:
            data = _csv_lines([keys]) + data
        with disk_full_as_error(self.path, len(data)):
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            append_whole(self.path, fd, data)
        finally:
            os.close(fd)
        self.keys = keys


def _csv_lines(rows: list[list[str]]) -> bytes:
    """``rows`` as CSV lines (``\\r\\n``-terminated, as :func:`csv.writer` writes), UTF-8."""
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue().encode("utf-8")


def _cell_after(row: list[str], column: int, step: int) -> bool:
    """Whether ``row[column]`` is a number greater than ``step``."""
    try:
        return float(row[column]) > step
    except (IndexError, ValueError):
        return False


def _csv_cell(value: LogValue | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # shortest string that round-trips
    return str(value)


class TensorBoardOutputFormat(OutputFormat):
    """TensorBoard event files written with ``tf.summary.create_file_writer``.

    TensorFlow is imported here, when the writer is created, so the rest of the logger (and the
    sampler processes that use it) stay TensorFlow-free. Strings and non-finite numbers are
    skipped; every numeric value becomes a float32 scalar summary at the dump's ``step``.

    Values go through the core op ``tf.summary.write`` with the scalar plugin's metadata (what
    ``tf.summary.scalar`` writes), because ``tf.summary.scalar`` itself needs the ``tensorboard``
    package installed; the files are read by TensorBoard as ordinary scalar summaries.

    Args:
        logdir: directory for the ``events.out.tfevents.*`` files.
        keep_through: if given, summaries of existing event files in ``logdir`` at a step
            greater than this are removed first (those files are rewritten), so that a resumed
            run that repeats an iteration does not leave two values at one step.
    """

    def __init__(self, logdir: str, keep_through: int | None = None) -> None:
        import tensorflow as tf  # lazy: heavy, and only this writer needs it
        from tensorflow.core.framework import summary_pb2

        self._tf = tf
        self.logdir = logdir
        if keep_through is not None:
            for name in sorted(os.listdir(logdir)):
                if name.startswith("events.out.tfevents"):
                    _drop_events_after(tf, os.path.join(logdir, name), keep_through)
        self._writer = tf.summary.create_file_writer(logdir)
        # The scalars plugin's metadata: plugin name 'scalars', empty content (proto version 0).
        self._metadata = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"),
            data_class=summary_pb2.DATA_CLASS_SCALAR,
        )

    def write_kvs(self, kvs: dict[str, LogValue], step: int) -> None:
        """Write every finite numeric value of ``kvs`` as a scalar at ``step``.

        Raises:
            DiskFullError: if the disk is full (TensorFlow's error, named as a full disk).
        """
        # About 100 bytes per scalar event (tag, step, time, value and plugin metadata).
        with disk_full_as_error(os.path.join(self.logdir, "events.out.tfevents.*"),
                                100 * len(kvs)):
            with self._writer.as_default(step=int(step)):
                for key, value in kvs.items():
                    if isinstance(value, str) or not math.isfinite(value):
                        continue
                    tensor = self._tf.constant(float(value), dtype=self._tf.float32)
                    self._tf.summary.write(key, tensor, metadata=self._metadata)
            self._writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self._writer.close()


def _drop_events_after(tf: Any, path: str, step: int) -> None:
    """Rewrite the event file ``path`` without its summaries at steps ``> step`` (and without a
    record truncated by a kill); leave it alone if there is nothing to drop."""
    # TensorFlow loads only for the TensorBoard writer
    from tensorflow.core.util import event_pb2

    records, dropped = [], False
    try:
        for record in tf.data.TFRecordDataset(path):
            data = record.numpy()
            event = event_pb2.Event.FromString(data)
            if event.HasField("summary") and event.step > step:
                dropped = True
            else:
                records.append(data)
    except tf.errors.DataLossError:  # a record cut short by a kill
        dropped = True
    if not dropped:
        return
    tmp_path = path + ".rewrite"
    with tf.io.TFRecordWriter(tmp_path) as writer:
        for data in records:
            writer.write(data)
    os.replace(tmp_path, path)


def to_log_value(key: str, value: Any) -> LogValue:
    """Convert ``value`` (Python/numpy number, 0-d array, bool or str) to a :data:`LogValue`.

    Raises:
        ValueError: if ``value`` is not a scalar number or a string.
    """
    if isinstance(value, str):
        return value
    item = getattr(value, "item", None)  # numpy scalars, 0-d arrays, tf EagerTensor via .numpy()
    if hasattr(value, "numpy") and not isinstance(value, numbers.Number):
        value = value.numpy()
        item = getattr(value, "item", None)
    if item is not None and getattr(value, "shape", ()) in ((), (1,)):
        value = item()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise ValueError(f"logged value for key {key!r} must be a scalar number or str, got {value!r}")
