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
directories that the next save removes. Checkpoints are found by scanning, not through the
pointer: :mod:`~meta_policy_search.utils.checkpoint_lookup`.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from meta_policy_search.utils.checkpoint_lookup import (
    CHECKPOINT_PREFIX,
    INFO_FILE,
    POINTER_FILE,
    STATE_FILE,
    TF_PREFIX,
    checkpoint_dirs,
    checkpoint_manifest,
    find_checkpoint,
    latest_checkpoint,
)
from meta_policy_search.utils.disk_space import disk_full_as_error
from meta_policy_search.utils.serialization import TEMP_PREFIX, atomic_write_bytes

_TMP_PREFIX = TEMP_PREFIX  # also the prefix of the pointer file's temporary files

if TYPE_CHECKING:
    import tensorflow as tf


def _make_checkpoint(trackables: dict[str, Any]) -> tf.train.Checkpoint:
    # TensorFlow is imported here, not at the top: the run scripts check a run directory's
    # checkpoint (find_checkpoint) before TensorFlow is loaded.
    import tensorflow as tf

    if not isinstance(trackables, dict):
        raise ValueError(f"trackables must be a dict name -> trackable, got {type(trackables)}")
    return tf.train.Checkpoint(**trackables)


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
            info = {"itr": int(itr), "time": time.time(), "files": checkpoint_manifest(tmp_dir)}
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
    return bool(np.all(np.isfinite(array)))


def _free_name(checkpoint_dir: str, itr: int) -> str:
    """A checkpoint directory name for ``itr`` that does not clobber the current checkpoint."""
    base = f"{CHECKPOINT_PREFIX}{itr:06d}"
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
