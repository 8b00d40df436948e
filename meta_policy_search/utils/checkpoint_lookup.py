"""Finding and checking the checkpoints of :mod:`~meta_policy_search.utils.checkpoint` (the layout
is described there), without TensorFlow except :func:`verify_tf_checkpoint`.

A checkpoint is found by scanning the ``itr_*`` directories, newest first, for the first that
verifies (:func:`find_checkpoint`: its ``state.json`` and ``state.pkl`` read back and every file
has the size and checksum ``state.json`` recorded), never by trusting the ``latest`` pointer
alone: a pointer that is missing, garbled or names a missing folder must not make a run look
empty (a fresh start would then replace it). The pointer is kept as a hint for people and other
tools; :class:`CheckpointLookup` reports where it disagrees with the scan.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import re
from typing import Any

from meta_policy_search.utils.json_reading import read_json_object
from meta_policy_search.utils.quiet_tf import import_tensorflow

POINTER_FILE = "latest"
"""The pointer file: the name of the newest complete checkpoint, a hint (see above)."""
TF_PREFIX = "tf_state"
STATE_FILE = "state.pkl"
INFO_FILE = "state.json"
CHECKPOINT_PREFIX = "itr_"
_CKPT_NAME = re.compile(r"^itr_(\d+)(?:\.(\d+))?$")
"""``itr_000012`` or, for a second save of the same iteration, ``itr_000012.1``."""


class CheckpointError(ValueError):
    """A checkpoint's files are missing, cut short or corrupt; the message names the file."""


def checkpoint_name_iteration(name: str) -> int:
    """The iteration of a checkpoint directory's name: ``itr_000012`` or ``itr_000012.1`` -> 12.

    Raises:
        ValueError: if ``name`` is not such a name.
    """
    match = _CKPT_NAME.match(name)
    if match is None:
        raise ValueError(f"not a checkpoint directory name: {name!r}")
    return int(match.group(1))


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


def checkpoint_manifest(path: str) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of every file of the checkpoint directory ``path`` but ``state.json``
    (what :func:`verify_checkpoint` compares with)."""
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
    info = read_json_object(info_path, CheckpointError, expected="a JSON object with 'itr'",
                            invalid="corrupt, not valid JSON")
    itr = info.get("itr")
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
