"""Atomic training checkpoints: TensorFlow state plus a pickled side file.

A checkpoint directory holds one sub-directory per saved iteration and a pointer file::

    checkpoint_dir/
        latest                 # text: the name of the newest complete checkpoint (a hint)
        itr_000012/
            tf_state.index     # tf.train.Checkpoint of the algorithm's trackables
            tf_state.data-*
            state.pkl          # iteration, sampler state, baseline parameters, ...
            state.json         # the iteration, save time, and each file's size and SHA-256

Why this layout: a checkpoint is first written completely into a hidden temporary directory,
then renamed into place (``os.replace``, atomic on POSIX), and only then does the ``latest``
pointer, itself replaced atomically, move to it. Leftovers of an interrupted save are temporary
directories that the next save removes.

A checkpoint is found by scanning the ``itr_*`` directories, newest first, for the first that
verifies (:func:`find_checkpoint`: its ``state.json`` and ``state.pkl`` read back and every file
has the size and checksum ``state.json`` recorded), never by trusting the pointer alone: a
pointer that is missing, garbled or names a missing folder must not make a run look empty (a
fresh start would then replace it). The pointer is kept as a hint for people and other tools;
:class:`CheckpointLookup` reports where it disagrees with the scan. None of this imports
TensorFlow except :func:`verify_tf_checkpoint` and the save and restore themselves.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import re
import shutil
import tempfile
import time
from typing import TYPE_CHECKING, Any

from meta_policy_search.utils.disk_space import disk_full_as_error
from meta_policy_search.utils.serialization import TEMP_PREFIX, atomic_write_bytes

POINTER_FILE = "latest"
TF_PREFIX = "tf_state"
STATE_FILE = "state.pkl"
INFO_FILE = "state.json"
_TMP_PREFIX = TEMP_PREFIX  # also the prefix of the pointer file's temporary files
_CKPT_PREFIX = "itr_"
_CKPT_NAME = re.compile(r"^itr_(\d+)(?:\.(\d+))?$")
"""``itr_000012`` or, for a second save of the same iteration, ``itr_000012.1``."""

if TYPE_CHECKING:
    import tensorflow as tf


def _make_checkpoint(trackables: dict[str, Any]) -> tf.train.Checkpoint:
    # TensorFlow is imported here, not at the top: the run scripts check a run directory's
    # checkpoint (find_checkpoint) before TensorFlow is loaded.
    import tensorflow as tf

    if not isinstance(trackables, dict):
        raise ValueError(f"trackables must be a dict name -> trackable, got {type(trackables)}")
    return tf.train.Checkpoint(**trackables)


class CheckpointError(ValueError):
    """A checkpoint's files are missing, cut short or corrupt; the message names the file."""


def checkpoint_dirs(checkpoint_dir: str) -> list[str]:
    """The names of the ``itr_*`` checkpoint directories in ``checkpoint_dir``, newest first
    (by iteration, then by the suffix of a second save of one iteration); empty if none."""
    try:
        names = os.listdir(checkpoint_dir)
    except OSError:
        return []
    found = []
    for name in names:
        match = _CKPT_NAME.match(name)
        if match and os.path.isdir(os.path.join(checkpoint_dir, name)):
            found.append(((int(match.group(1)), int(match.group(2) or 0)), name))
    return [name for _, name in sorted(found, reverse=True)]


def _file_digest(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _manifest(path: str) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of every file of the checkpoint directory ``path`` but ``state.json``."""
    return {name: {"size": os.path.getsize(os.path.join(path, name)),
                   "sha256": _file_digest(os.path.join(path, name))}
            for name in sorted(os.listdir(path)) if name != INFO_FILE}


def verify_checkpoint(path: str) -> dict[str, Any]:
    """Check one checkpoint directory without TensorFlow and return its side state.

    Checked: ``state.json`` holds an iteration number; every file that it lists (checkpoints
    written since the list exists) has its recorded size and SHA-256, so a file cut short or
    overwritten is found before anything is restored; ``state.pkl`` unpickles to a dict of the
    same iteration; ``tf_state.index`` and a ``tf_state.data-*`` file exist.

    Args:
        path: a checkpoint directory (``checkpoint_dir/itr_000012``).

    Returns:
        The side state (``state.pkl``'s dict, with ``'itr'``).

    Raises:
        CheckpointError: naming the first file that is missing, cut short or corrupt.
    """
    info_path = os.path.join(path, INFO_FILE)
    try:
        with open(info_path, encoding="utf-8") as f:
            info = json.load(f)
    except OSError as error:
        raise CheckpointError(f"{info_path}: cannot read it ({error.strerror or error})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{info_path}: corrupt, not valid JSON ({error})") from None
    itr = info.get("itr") if isinstance(info, dict) else None
    if isinstance(itr, bool) or not isinstance(itr, int) or itr < 0:
        raise CheckpointError(f"{info_path}: corrupt, no iteration number 'itr' in {info!r:.80}")
    files = info.get("files")
    for name, expected in (files.items() if isinstance(files, dict) else ()):
        file_path = os.path.join(path, name)
        if not os.path.isfile(file_path):
            raise CheckpointError(f"{file_path}: missing (listed in {INFO_FILE})")
        size = os.path.getsize(file_path)
        if size != expected.get("size"):
            raise CheckpointError(f"{file_path}: damaged, {size} bytes where {INFO_FILE} "
                                  f"recorded {expected.get('size')}")
        if _file_digest(file_path) != expected.get("sha256"):
            raise CheckpointError(f"{file_path}: damaged, its SHA-256 differs from the one "
                                  f"{INFO_FILE} recorded")
    state_path = os.path.join(path, STATE_FILE)
    try:
        with open(state_path, "rb") as f:
            state = pickle.load(f)
    except OSError as error:
        raise CheckpointError(f"{state_path}: cannot read it ({error.strerror or error})") from None
    except Exception as error:  # unpickling corrupt bytes raises nearly any exception type
        raise CheckpointError(
            f"{state_path}: corrupt, cannot unpickle it ({type(error).__name__}: {error})"
        ) from None
    if not isinstance(state, dict) or state.get("itr") != itr:
        found = state.get("itr") if isinstance(state, dict) else type(state).__name__
        raise CheckpointError(
            f"{state_path}: corrupt, holds iteration {found!r} where {INFO_FILE} says {itr}"
        )
    index_path = os.path.join(path, TF_PREFIX + ".index")
    if not os.path.isfile(index_path):
        raise CheckpointError(f"{index_path}: missing")
    if not any(name.startswith(TF_PREFIX + ".data-") for name in os.listdir(path)):
        raise CheckpointError(f"{os.path.join(path, TF_PREFIX + '.data-*')}: missing")
    return state


def verify_tf_checkpoint(path: str) -> None:
    """Read every tensor of a checkpoint directory's TensorFlow checkpoint (imports TensorFlow).

    What a restore will read, read now, so that a resume can refuse a damaged checkpoint before
    it changes anything; it also covers checkpoints older than the checksums of
    :func:`verify_checkpoint`.

    Raises:
        CheckpointError: naming ``tf_state.index`` if the checkpoint cannot be opened, or its
            data file if a tensor cannot be read.
    """
    from meta_policy_search.utils.quiet_tf import import_tensorflow

    tf = import_tensorflow()  # filtered start-up lines, as the run scripts import it

    prefix = os.path.join(path, TF_PREFIX)
    try:
        reader = tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError, OSError) as error:
        raise CheckpointError(f"{prefix}.index: unreadable ({_first_line(error)})") from None
    data_files = sorted(name for name in os.listdir(path) if name.startswith(TF_PREFIX + ".data-"))
    try:
        for name in reader.get_variable_to_dtype_map():
            reader.get_tensor(name)
    except Exception as error:  # a truncated data file raises IndexError, DataLossError, ...
        where = os.path.join(path, data_files[0]) if data_files else prefix + ".data-*"
        raise CheckpointError(f"{where}: unreadable ({_first_line(error)})") from None


def _first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"


@dataclasses.dataclass(frozen=True)
class CheckpointLookup:
    """What :func:`find_checkpoint` found in a checkpoint directory."""

    checkpoint_dir: str
    """The directory scanned."""
    path: str | None
    """The newest checkpoint directory that verifies (``None``: none does)."""
    state: dict[str, Any] | None
    """Its side state (``state.pkl``, with ``'itr'``)."""
    damaged: tuple[str, ...]
    """One message per newer ``itr_*`` directory that did not verify, newest first."""
    pointer_note: str | None
    """Set when the ``latest`` pointer is missing, unreadable or names another directory than
    the one found: what it said and what was used instead."""

    @property
    def itr(self) -> int | None:
        """The iteration of the checkpoint found."""
        return None if self.state is None else int(self.state["itr"])

    @property
    def any_checkpoint(self) -> bool:
        """Whether the directory holds any ``itr_*`` directory, complete or not."""
        return self.path is not None or bool(self.damaged)

    def notes(self) -> list[str]:
        """What a user should know about the lookup: damaged checkpoints skipped, a bad pointer."""
        used = ("no checkpoint that reads back" if self.path is None else
                f"using {os.path.basename(self.path)} (iteration {self.itr})")
        notes = [f"skipped damaged checkpoint {message}; {used}" for message in self.damaged
                 if self.path is not None]
        return notes + ([self.pointer_note] if self.pointer_note else [])

    def require(self) -> str:
        """The checkpoint found.

        Raises:
            FileNotFoundError: if the directory holds no ``itr_*`` checkpoint at all.
            CheckpointError: if it holds some but none verifies (naming the newest's problem).
        """
        if self.path is not None:
            return self.path
        if self.damaged:
            raise CheckpointError(self.damaged[0])
        raise FileNotFoundError(f"no complete checkpoint in {self.checkpoint_dir!r}")


def find_checkpoint(checkpoint_dir: str) -> CheckpointLookup:
    """The newest checkpoint of ``checkpoint_dir`` that verifies (:func:`verify_checkpoint`).

    Scans the ``itr_*`` directories newest first; the ``latest`` pointer is only compared with
    the result. Never raises for a damaged checkpoint: the result says what it skipped.

    Args:
        checkpoint_dir: a directory written by :func:`save_checkpoint` (it need not exist).

    Returns:
        The :class:`CheckpointLookup`.
    """
    damaged: list[str] = []
    path = state = None
    for name in checkpoint_dirs(checkpoint_dir):
        try:
            state = verify_checkpoint(os.path.join(checkpoint_dir, name))
        except CheckpointError as error:
            damaged.append(str(error))
            continue
        path = os.path.join(checkpoint_dir, name)
        break
    pointer_note = None
    if path is not None or damaged:
        pointer_note = _pointer_disagreement(checkpoint_dir, path)
    return CheckpointLookup(checkpoint_dir, path, state, tuple(damaged), pointer_note)


def _pointer_disagreement(checkpoint_dir: str, found: str | None) -> str | None:
    """A note if the ``latest`` pointer does not name ``found``, else ``None``."""
    pointer = os.path.join(checkpoint_dir, POINTER_FILE)
    used = ("no checkpoint reads back" if found is None
            else f"found {os.path.basename(found)} by scanning instead")
    try:
        with open(pointer, "rb") as f:
            raw = f.read(256)
    except FileNotFoundError:
        return f"{pointer} is missing; {used}"
    except OSError as error:
        return f"{pointer} cannot be read ({error.strerror or error}); {used}"
    name = raw.decode("utf-8", "replace").strip()
    if found is not None and name == os.path.basename(found):
        return None
    if not _CKPT_NAME.match(name) or not os.path.isdir(os.path.join(checkpoint_dir, name)):
        return f"{pointer} names {name[:40]!r}, not a checkpoint there; {used}"
    names = checkpoint_dirs(checkpoint_dir)
    if found is not None and names.index(name) > names.index(os.path.basename(found)):
        # A save stopped between moving its checkpoint in place and moving the pointer.
        return f"{pointer} names {name}, an older checkpoint; {used}"
    return f"{pointer} names {name}, which does not verify; {used}"


def latest_checkpoint(checkpoint_dir: str) -> str | None:
    """Path of the newest complete checkpoint in ``checkpoint_dir`` (:func:`find_checkpoint`).

    Args:
        checkpoint_dir: a directory written by :func:`save_checkpoint`.

    Returns:
        The checkpoint's sub-directory, or ``None`` if no checkpoint verifies.
    """
    return find_checkpoint(checkpoint_dir).path


def checkpoint_iteration(checkpoint_dir: str) -> int | None:
    """The iteration of the newest complete checkpoint (no TensorFlow).

    Returns:
        The last completed iteration, or ``None`` if ``checkpoint_dir`` holds no checkpoint.

    Raises:
        CheckpointError: if it holds checkpoints but none verifies.
    """
    state = read_checkpoint_state(checkpoint_dir)
    return None if state is None else int(state["itr"])


def read_checkpoint_state(checkpoint_dir: str) -> dict[str, Any] | None:
    """The side state (``state.pkl``) of the newest complete checkpoint, checked, without
    TensorFlow: what a resume reads before it changes anything in the run directory.

    Returns:
        The saved state dict (with ``'itr'``), or ``None`` if there is no checkpoint at all.

    Raises:
        CheckpointError: if there are checkpoints but none verifies (:func:`verify_checkpoint`).
    """
    lookup = find_checkpoint(checkpoint_dir)
    if not lookup.any_checkpoint:
        return None
    lookup.require()
    return lookup.state


def save_checkpoint(
    checkpoint_dir: str, itr: int, trackables: dict[str, Any], state: dict[str, Any]
) -> str:
    """Atomically save TensorFlow trackables and a picklable state dict.

    Args:
        checkpoint_dir: where checkpoints live; created if missing.
        itr: the iteration the checkpoint belongs to (the last completed one).
        trackables: name -> ``tf.Variable`` / ``tf.Module`` / optimizer (dicts of variables are
            fine), saved with :class:`tf.train.Checkpoint`.
        state: any picklable Python state (numpy arrays, RNG states, counters).

    Returns:
        The path of the new checkpoint directory (``checkpoint_dir/itr_<itr>``).

    Raises:
        ValueError: if ``itr`` is negative, ``trackables`` is not a dict, or a variable of
            ``trackables`` or an array of ``state`` holds NaN or inf (such a checkpoint would
            poison every resumed run, so none is written).
        DiskFullError: if the disk fills up while writing (naming ``checkpoint_dir`` and about
            how much space the checkpoint needs); the previous checkpoint is kept.
    """
    if itr < 0:
        raise ValueError(f"itr must be >= 0, got {itr}")
    arrays = _float_arrays(trackables, "") + _float_arrays(state, "state.")
    non_finite = [label for label, array in arrays if not _all_finite(array)]
    if non_finite:
        raise ValueError(
            f"refusing to write the checkpoint of iteration {itr}: non-finite values in "
            f"{', '.join(non_finite[:5])}; the previous checkpoint is kept"
        )
    state_bytes = pickle.dumps({"itr": int(itr), **state}, protocol=pickle.HIGHEST_PROTOCOL)
    # The data file holds the trackables' arrays; the index and state.json are small.
    needed = len(state_bytes) + sum(array.nbytes for label, array in arrays
                                    if not label.startswith("state.")) + 4096
    with disk_full_as_error(checkpoint_dir, needed):
        os.makedirs(checkpoint_dir, exist_ok=True)
        _remove_stale_tmp(checkpoint_dir)
        checkpoint = _make_checkpoint(trackables)
        tmp_dir = tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=checkpoint_dir)
        try:
            checkpoint.write(os.path.join(tmp_dir, TF_PREFIX))
            with open(os.path.join(tmp_dir, STATE_FILE), "wb") as f:
                f.write(state_bytes)
                f.flush()
                os.fsync(f.fileno())
            info = {"itr": int(itr), "time": time.time(), "files": _manifest(tmp_dir)}
            with open(os.path.join(tmp_dir, INFO_FILE), "w", encoding="utf-8") as f:
                json.dump(info, f)
            final_name = _free_name(checkpoint_dir, itr)
            os.replace(tmp_dir, os.path.join(checkpoint_dir, final_name))
        except BaseException:
            shutil.rmtree(tmp_dir, ignore_errors=True)
            raise
        atomic_write_bytes(os.path.join(checkpoint_dir, POINTER_FILE), final_name.encode("utf-8"))
    _remove_old(checkpoint_dir, keep=final_name)
    return os.path.join(checkpoint_dir, final_name)


def restore_checkpoint(
    checkpoint_dir: str, trackables: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Restore the newest complete checkpoint of ``checkpoint_dir`` (:func:`find_checkpoint`).

    The trackables must be built (same structure as when saving) before calling this: we
    restore state into existing objects, we do not rebuild them. Optimizer slot variables that
    do not exist yet are restored when they are created (TensorFlow's deferred restoration).

    Args:
        checkpoint_dir: a directory written by :func:`save_checkpoint`.
        trackables: the same names as at save time, mapping to freshly built objects whose
            values get overwritten; ``None`` restores only the side state.

    Returns:
        The saved state dict, including ``'itr'``.

    Raises:
        FileNotFoundError: if ``checkpoint_dir`` holds no checkpoint.
        CheckpointError: if it holds checkpoints but none verifies.
    """
    lookup = find_checkpoint(checkpoint_dir)
    path = lookup.require()
    assert lookup.state is not None
    if trackables:
        status = _make_checkpoint(trackables).read(os.path.join(path, TF_PREFIX))
        status.assert_existing_objects_matched()
        status.expect_partial()
    return lookup.state


def _float_arrays(item: Any, name: str) -> list[tuple[str, Any]]:
    """``(label, array)`` of every float variable or array in ``item`` (nested dicts, lists,
    ``tf.Module`` s, variables, numpy arrays)."""
    import numpy as np

    if isinstance(item, dict):
        return [pair for key, value in item.items() for pair in _float_arrays(value, f"{name}{key}.")]
    if isinstance(item, (list, tuple)):
        return [pair for k, value in enumerate(item) for pair in _float_arrays(value, f"{name}{k}.")]
    if hasattr(item, "assign") and hasattr(item, "numpy"):  # a tf.Variable
        array = np.asarray(item.numpy())
        label = name.rstrip(".") or item.name
    elif hasattr(item, "variables") and not isinstance(item, np.ndarray):  # a tf.Module
        return [pair for variable in item.variables
                for pair in _float_arrays(variable, f"{name}{variable.name.split(':')[0]}.")]
    elif isinstance(item, (np.ndarray, np.floating, float)):
        array, label = np.asarray(item), name.rstrip(".")
    else:
        return []
    return [(label, array)] if np.issubdtype(array.dtype, np.inexact) else []


def _all_finite(array: Any) -> bool:
    import numpy as np

    return bool(np.all(np.isfinite(array)))


def _free_name(checkpoint_dir: str, itr: int) -> str:
    """A checkpoint directory name for ``itr`` that does not clobber the current checkpoint."""
    base = f"{_CKPT_PREFIX}{itr:06d}"
    current = latest_checkpoint(checkpoint_dir)
    current_name = os.path.basename(current) if current else None
    name, counter = base, 0
    while os.path.exists(os.path.join(checkpoint_dir, name)):
        if name != current_name:
            # Not the checkpoint a resume would use (a damaged one, or one newer than it that a
            # restart repeats): this iteration's new checkpoint replaces it.
            shutil.rmtree(os.path.join(checkpoint_dir, name))
            break
        counter += 1
        name = f"{base}.{counter}"
    return name


def _remove_stale_tmp(checkpoint_dir: str) -> None:
    for name in os.listdir(checkpoint_dir):
        if name.startswith(_TMP_PREFIX):
            path = os.path.join(checkpoint_dir, name)
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.remove(path)


def _remove_old(checkpoint_dir: str, keep: str) -> None:
    for name in checkpoint_dirs(checkpoint_dir):
        if name != keep:
            shutil.rmtree(os.path.join(checkpoint_dir, name), ignore_errors=True)
