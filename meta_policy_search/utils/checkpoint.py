"""Atomic training checkpoints: TensorFlow state plus a pickled side file.

A checkpoint directory holds one sub-directory per saved iteration and a pointer file::

    checkpoint_dir/
        latest                 # text: the name of the newest complete checkpoint
        itr_000012/
            tf_state.index     # tf.train.Checkpoint of the algorithm's trackables
            tf_state.data-*
            state.pkl          # iteration, sampler state, baseline parameters, ...
            state.json         # the iteration and save time, for humans

Why this layout: a checkpoint is first written completely into a hidden temporary directory,
then renamed into place (``os.replace``, atomic on POSIX), and only then does the ``latest``
pointer, itself replaced atomically, move to it. A crash at any point therefore leaves
``latest`` naming the previous complete checkpoint; leftovers of the interrupted save are
temporary directories that the next save removes.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
import time
from typing import TYPE_CHECKING, Any

from meta_policy_search.utils.serialization import TEMP_PREFIX, atomic_write_bytes

POINTER_FILE = "latest"
TF_PREFIX = "tf_state"
STATE_FILE = "state.pkl"
INFO_FILE = "state.json"
_TMP_PREFIX = TEMP_PREFIX  # also the prefix of the pointer file's temporary files
_CKPT_PREFIX = "itr_"

if TYPE_CHECKING:
    import tensorflow as tf


def _make_checkpoint(trackables: dict[str, Any]) -> tf.train.Checkpoint:
    # TensorFlow is imported here, not at the top: the run scripts check a run directory's
    # checkpoint (latest_checkpoint, checkpoint_iteration) before TensorFlow is loaded.
    import tensorflow as tf

    if not isinstance(trackables, dict):
        raise ValueError(f"trackables must be a dict name -> trackable, got {type(trackables)}")
    return tf.train.Checkpoint(**trackables)


def latest_checkpoint(checkpoint_dir: str) -> str | None:
    """Path of the newest complete checkpoint in ``checkpoint_dir``.

    Args:
        checkpoint_dir: a directory written by :func:`save_checkpoint`.

    Returns:
        The checkpoint's sub-directory, or ``None`` if there is no complete checkpoint.
    """
    pointer = os.path.join(checkpoint_dir, POINTER_FILE)
    if not os.path.isfile(pointer):
        return None
    with open(pointer, encoding="utf-8") as f:
        name = f.read().strip()
    path = os.path.join(checkpoint_dir, name)
    return path if os.path.isdir(path) else None


class CheckpointError(ValueError):
    """A checkpoint's side files (``state.json``, ``state.pkl``) are missing or corrupt."""


def checkpoint_iteration(checkpoint_dir: str) -> int | None:
    """The iteration of the newest complete checkpoint, from its ``state.json`` (no TensorFlow).

    Returns:
        The last completed iteration, or ``None`` if there is no complete checkpoint.

    Raises:
        CheckpointError: if ``state.json`` cannot be read or holds no integer ``itr``.
    """
    path = latest_checkpoint(checkpoint_dir)
    if path is None:
        return None
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
    return itr


def read_checkpoint_state(checkpoint_dir: str) -> dict[str, Any] | None:
    """The side state (``state.pkl``) of the newest complete checkpoint, checked, without
    TensorFlow: what a resume reads before it changes anything in the run directory.

    Returns:
        The saved state dict (with ``'itr'``), or ``None`` if there is no complete checkpoint.

    Raises:
        CheckpointError: if ``state.json`` or ``state.pkl`` cannot be read or is corrupt, or
            they disagree on the iteration.
    """
    itr = checkpoint_iteration(checkpoint_dir)
    path = latest_checkpoint(checkpoint_dir)
    if itr is None or path is None:
        return None
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
            f"{state_path}: corrupt, holds iteration {found!r} where state.json says {itr}"
        )
    return state


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
    """
    if itr < 0:
        raise ValueError(f"itr must be >= 0, got {itr}")
    non_finite = _non_finite_names(trackables, "") + _non_finite_names(state, "state.")
    if non_finite:
        raise ValueError(
            f"refusing to write the checkpoint of iteration {itr}: non-finite values in "
            f"{', '.join(non_finite[:5])}; the previous checkpoint is kept"
        )
    os.makedirs(checkpoint_dir, exist_ok=True)
    _remove_stale_tmp(checkpoint_dir)
    checkpoint = _make_checkpoint(trackables)
    tmp_dir = tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=checkpoint_dir)
    try:
        checkpoint.write(os.path.join(tmp_dir, TF_PREFIX))
        with open(os.path.join(tmp_dir, STATE_FILE), "wb") as f:
            pickle.dump({"itr": int(itr), **state}, f, protocol=pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        info = {"itr": int(itr), "time": time.time()}
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
    """Restore the newest complete checkpoint of ``checkpoint_dir``.

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
        FileNotFoundError: if ``checkpoint_dir`` holds no complete checkpoint.
        CheckpointError: if its ``state.json`` or ``state.pkl`` is corrupt.
    """
    path = latest_checkpoint(checkpoint_dir)
    state = read_checkpoint_state(checkpoint_dir)
    if path is None or state is None:
        raise FileNotFoundError(f"no complete checkpoint in {checkpoint_dir!r}")
    if trackables:
        status = _make_checkpoint(trackables).read(os.path.join(path, TF_PREFIX))
        status.assert_existing_objects_matched()
        status.expect_partial()
    return state


def _non_finite_names(item: Any, name: str) -> list[str]:
    """Names of the float variables/arrays in ``item`` (nested dicts, lists, ``tf.Module`` s,
    variables, numpy arrays) holding a NaN or inf."""
    import numpy as np

    if isinstance(item, dict):
        return [bad for key, value in item.items() for bad in _non_finite_names(value, f"{name}{key}.")]
    if isinstance(item, (list, tuple)):
        return [bad for k, value in enumerate(item) for bad in _non_finite_names(value, f"{name}{k}.")]
    if hasattr(item, "assign") and hasattr(item, "numpy"):  # a tf.Variable
        array = item.numpy()
        label = name.rstrip(".") or item.name
    elif hasattr(item, "variables") and not isinstance(item, np.ndarray):  # a tf.Module
        return [bad for variable in item.variables
                for bad in _non_finite_names(variable, f"{name}{variable.name.split(':')[0]}.")]
    elif isinstance(item, (np.ndarray, np.floating, float)):
        array, label = np.asarray(item), name.rstrip(".")
    else:
        return []
    if np.issubdtype(array.dtype, np.inexact) and not np.all(np.isfinite(array)):
        return [label]
    return []


def _free_name(checkpoint_dir: str, itr: int) -> str:
    """A checkpoint directory name for ``itr`` that does not clobber the current checkpoint."""
    base = f"{_CKPT_PREFIX}{itr:06d}"
    current = latest_checkpoint(checkpoint_dir)
    current_name = os.path.basename(current) if current else None
    name, counter = base, 0
    while os.path.exists(os.path.join(checkpoint_dir, name)):
        if name != current_name:
            # Left by a save that crashed before moving the pointer: never referenced.
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
    for name in os.listdir(checkpoint_dir):
        if name.startswith(_CKPT_PREFIX) and name != keep:
            shutil.rmtree(os.path.join(checkpoint_dir, name), ignore_errors=True)
