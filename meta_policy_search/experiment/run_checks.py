"""The checks of the env and the run directory a run makes before it writes anything.

Each takes plain values (an env name, a directory), never the config: the settings themselves
were validated when the command line was parsed
(:func:`~meta_policy_search.experiment.config_parsing.parse_command_line`).
:func:`~meta_policy_search.experiment.runner.prepare_run` calls :func:`check_env` and
:func:`check_run_dir`, which also says whether a ``--resume`` has anything left to do. All of
this runs before TensorFlow is loaded, except :func:`check_checkpoint_tensors`, the last check of
a resume (it reads the checkpoint's tensors). Every problem is a
:class:`~meta_policy_search.experiment.config_values.ConfigError`, which the scripts print as
one ``error:`` line per problem with exit status 2.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import typing
from typing import Any

from meta_policy_search.best_checkpoint import best_checkpoint_dir
from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.experiment.configs import ENV_SPEC_SEPARATOR
from meta_policy_search.experiment.run_lock import check_run_owner
from meta_policy_search.periodic_checkpoint import EVERY_DIR_NAME, kept_iterations
from meta_policy_search.utils.checkpoint_lookup import (
    CheckpointError,
    CheckpointLookup,
    checkpoint_dirs,
    checkpoint_name_iteration,
    find_checkpoint,
    verify_tf_checkpoint,
)


def exit_with_config_error(error: ConfigError) -> typing.NoReturn:
    """Print one ``error:`` line per message of ``error`` to stderr and exit with status 2."""
    for message in error.messages or (str(error),):
        print(f"error: {message}", file=sys.stderr)
    raise ConfigExit(str(error))


class ConfigExit(SystemExit):
    """``SystemExit(2)`` after a config error was printed; ``str()`` is the message."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message

    def __str__(self) -> str:
        return self.message


def check_env(env: str, env_kwargs: dict[str, Any]) -> None:
    """Check that ``env`` can be built with ``env_kwargs``, without TensorFlow.

    A user env (``--env package.module:ClassName``) must be importable and follow the MetaEnv
    protocol; a Meta-World env needs its package; a built-in env given ``env_kwargs`` is built
    once so that bad arguments fail now.

    Raises:
        ConfigError: naming the env or its arguments and what was wrong.
    """
    # gymnasium and numpy load only when an env is checked, not for the directory checks
    from meta_policy_search.envs.metaworld_envs import import_metaworld, is_metaworld_env_name

    if ENV_SPEC_SEPARATOR in env:
        _check_user_env(env, env_kwargs)
    elif is_metaworld_env_name(env):
        try:
            import_metaworld()
        except ImportError as error:
            raise ConfigError(f"--env {env}: {error}") from None
    elif env_kwargs:
        _check_env_kwargs(env, env_kwargs)


@dataclasses.dataclass(frozen=True)
class RunDir:
    """The state of a run directory when it was checked: what :func:`check_run_dir` returns."""

    dump_path: str
    """The run directory."""
    resume: bool
    """``--resume`` was given."""
    checkpoint_found: int | None
    """The iteration of its newest checkpoint that verifies (``None``: none), for
    :func:`check_unchanged`."""
    finished: bool = False
    """With ``--resume``: the run has already completed ``n_itr`` iterations (nothing to do)."""
    checkpoint_path: str | None = None
    """With ``--resume``: the checkpoint directory the run continues from."""
    best_checkpoint_path: str | None = None
    """With ``--resume``: the ``--keep_best`` checkpoint the run will read, if it has one."""
    notes: tuple[str, ...] = ()
    """What the checkpoint lookup skipped or found wrong (a damaged pointer), for the user."""
    checkpoint_names: tuple[str, ...] = ()
    """The ``itr_*`` directories of ``checkpoints/`` when checked, for :func:`check_unchanged`."""

    @property
    def checkpoint_dir(self) -> str:
        """``<dump_path>/checkpoints``."""
        return os.path.join(self.dump_path, "checkpoints")

    @property
    def last_itr(self) -> int | None:
        """With ``--resume``: the iteration of the checkpoint the run continues after."""
        return self.checkpoint_found if self.resume else None


PROGRESS_FILE = "progress.csv"
"""The run's per-iteration log (:mod:`meta_policy_search.utils.logger`)."""


def check_run_dir(
    dump_path: str, resume: bool, n_itr: int, overwrite: bool = False,
    reads_best_checkpoint: bool = False,
) -> RunDir:
    """Check that a run may use ``dump_path``, without writing anything or loading TensorFlow.

    ``dump_path`` must be a writable directory (or creatable) that no other process owns
    (:mod:`~meta_policy_search.experiment.run_lock`). A fresh start refuses a directory that
    holds a run (any checkpoint, complete or not, or a row of ``progress.csv``) unless
    ``overwrite``. A resume checks everything it will read before anything changes: the newest
    checkpoint that verifies (:func:`~meta_policy_search.utils.checkpoint_lookup.find_checkpoint`, found
    by scanning, not by trusting the ``latest`` pointer), the ``--keep_best`` checkpoint it
    reads, and ``progress.csv``; ``params.json`` was read when the command line was parsed, and
    the TensorFlow tensors are read by :func:`check_checkpoint_tensors`.

    Args:
        dump_path: the run directory.
        resume: whether the run continues from its checkpoint.
        n_itr: the run's number of iterations (a resumed run past it has nothing to do).
        overwrite: a fresh start may replace a run already there (``--overwrite``).
        reads_best_checkpoint: the resumed run reads ``checkpoints_best`` (``--keep_best``).

    Returns:
        The :class:`RunDir`.

    Raises:
        ConfigError: one message saying what is wrong and what to do.
    """
    check_writable_dir(dump_path, "--dump_path")
    check_run_owner(dump_path)
    if overwrite and resume:
        raise ConfigError("--overwrite and --resume exclude each other: --resume continues the "
                          "run in --dump_path, --overwrite deletes it and starts afresh")
    lookup = find_checkpoint(os.path.join(dump_path, "checkpoints"))
    names = tuple(checkpoint_dirs(lookup.checkpoint_dir))
    if not resume:
        existing = existing_run(dump_path, lookup)
        if existing and not overwrite:
            resumable = (" pass --resume to continue it," if lookup.path is not None else "")
            raise ConfigError(
                f"--dump_path {dump_path} already holds a run ({existing}):{resumable} choose "
                "another --dump_path, or add --overwrite to delete that run and start afresh"
            )
        return RunDir(dump_path, resume, lookup.itr, checkpoint_names=names)
    if lookup.path is None:
        raise ConfigError(_nothing_to_resume(dump_path, lookup))
    _check_progress(os.path.join(dump_path, PROGRESS_FILE))
    best_path = None
    best_dir = best_checkpoint_dir(dump_path)
    if reads_best_checkpoint and os.path.isdir(best_dir):
        best = find_checkpoint(best_dir)
        if best.any_checkpoint and best.path is None:
            raise ConfigError(f"--resume: {best.damaged[0]}; {_DAMAGED_ADVICE}")
        best_path = best.path
    found = lookup.itr
    assert found is not None
    return RunDir(dump_path, resume, found, found + 1 >= n_itr, lookup.path, best_path,
                  tuple(lookup.notes()), names)


_DAMAGED_ADVICE = ("nothing in the run was changed; restore the run directory from a backup, or "
                   "start a new run with another --dump_path")


def _nothing_to_resume(dump_path: str, lookup: CheckpointLookup) -> str:
    """Why ``--resume`` finds no checkpoint in ``dump_path``, and what to do instead."""
    if lookup.damaged:
        return f"--resume: {lookup.damaged[0]}; {_DAMAGED_ADVICE}"
    rows = _progress_rows(os.path.join(dump_path, PROGRESS_FILE))
    if rows:
        return (f"--resume: {dump_path} has no checkpoint to continue from, but {rows} "
                f"iteration(s) in {PROGRESS_FILE} (it stopped before its first checkpoint was "
                "written); start a new run with another --dump_path, or add --overwrite "
                "(without --resume) to delete this one and start afresh")
    return (f"--resume: {dump_path} has no checkpoint yet (the run stopped during its first "
            "iteration); start it again without --resume and with the same flags")


def existing_run(dump_path: str, lookup: CheckpointLookup | None = None) -> str:
    """What of a run ``dump_path`` holds that a fresh start would destroy: any checkpoint
    (complete or not, ``--keep_best``'s and ``--keep_every``'s too) or a row of
    ``progress.csv``; ``''`` if none.

    Args:
        dump_path: a run directory (it need not exist).
        lookup: its :func:`~meta_policy_search.utils.checkpoint_lookup.find_checkpoint` of
            ``checkpoints/`` if already made.
    """
    if lookup is None:
        lookup = find_checkpoint(os.path.join(dump_path, "checkpoints"))
    found = []
    if lookup.path is not None:
        found.append(f"a checkpoint of iteration {lookup.itr}")
    elif lookup.any_checkpoint:
        found.append(f"a checkpoint that does not read back ({lookup.damaged[0]})")
    if checkpoint_dirs(best_checkpoint_dir(dump_path)) and not found:
        found.append("a --keep_best checkpoint")
    if kept_iterations(dump_path) and not found:
        found.append("a --keep_every checkpoint")
    rows = _progress_rows(os.path.join(dump_path, PROGRESS_FILE))
    if rows:
        found.append(f"{rows} iteration(s) in {PROGRESS_FILE}")
    return " and ".join(found)


def _progress_rows(path: str) -> int:
    """Data rows of a ``progress.csv`` (``0`` if missing; one for a file that cannot be
    decoded, which a fresh start must not truncate either)."""
    try:
        return _check_progress(path)
    except ConfigError:
        return 1


def _check_progress(path: str) -> int:
    """Read ``progress.csv`` as a resume will (UTF-8 CSV) and return its number of data rows.

    Raises:
        ConfigError: naming the file if it cannot be read or decoded.
    """
    if not os.path.exists(path):
        return 0
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = sum(1 for _ in csv.reader(f))
    except OSError as error:
        raise ConfigError(f"--resume: {path}: cannot read it ({error.strerror or error}); "
                          f"{_DAMAGED_ADVICE}") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise ConfigError(f"--resume: {path}: corrupt, not a UTF-8 CSV file "
                          f"({' '.join(str(error).split())[:120]}); {_DAMAGED_ADVICE}") from None
    return max(rows - 1, 0)


def check_checkpoint_tensors(run_dir: RunDir) -> None:
    """Read every tensor of the checkpoints a resume will restore (this imports TensorFlow).

    The last check of a resume, before the run takes its lock or writes anything: a data file cut
    short or a missing index is refused here instead of failing after ``params.json``,
    ``log.txt`` and the event files were touched.

    Raises:
        ConfigError: naming the unreadable file.
    """
    for path in (run_dir.checkpoint_path, run_dir.best_checkpoint_path):
        if path is None:
            continue
        try:
            verify_tf_checkpoint(path)
        except CheckpointError as error:
            raise ConfigError(f"--resume: {error}; {_DAMAGED_ADVICE}") from None


def check_unchanged(run_dir: RunDir) -> None:
    """Check, once this process holds the run directory's lock, that its checkpoint is still the
    one :func:`check_run_dir` saw: another run may have written one (or finished) in between.

    Raises:
        ConfigError: if the checkpoint changed, saying to run the command again.
    """
    names = tuple(checkpoint_dirs(run_dir.checkpoint_dir))
    if names != run_dir.checkpoint_names:
        lookup = find_checkpoint(run_dir.checkpoint_dir)
        newest = checkpoint_name_iteration(names[0]) if names else None
        found = lookup.itr if lookup.itr is not None else newest
        raise ConfigError(
            f"--dump_path {run_dir.dump_path}: another run wrote a checkpoint there "
            f"(iteration {found}) while this one was starting; run the command again"
        )


TRAINING_OUTPUTS = ("checkpoints", "checkpoints_best", EVERY_DIR_NAME, PROGRESS_FILE, "log.txt",
                    "params.json", "provenance.json")
"""What a training run writes into its directory (besides TensorBoard's ``events.out.*``):
what ``--overwrite`` deletes before a fresh start, so that nothing of the old run mixes with
the new one. Other files there (``meta_test/``, your own) are left alone."""


def remove_training_outputs(dump_path: str) -> list[str]:
    """Delete the outputs of the run in ``dump_path`` (:data:`TRAINING_OUTPUTS` and the event
    files), for ``--overwrite``; call it only while holding the directory's lock.

    Returns:
        The names deleted.
    """
    removed = []
    for name in sorted(os.listdir(dump_path)) if os.path.isdir(dump_path) else []:
        path = os.path.join(dump_path, name)
        if name in TRAINING_OUTPUTS or name.startswith("events.out.tfevents"):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
            removed.append(name)
    return removed


def make_run_dir(dump_path: str) -> None:
    """Create ``dump_path`` and check that files can be written in it.

    Raises:
        ConfigError: if it cannot be created or written (e.g. a read-only file system).
    """
    try:
        os.makedirs(dump_path, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"--dump_path {dump_path}: cannot create it ({error.strerror or error})"
        ) from None
    check_writable_dir(dump_path, "--dump_path")


def _check_env_kwargs(env: str, env_kwargs: dict[str, Any]) -> None:
    """Build the env once (no TensorFlow needed) so that bad ``env_kwargs`` fail early."""
    # gymnasium and numpy load only when an env is checked, not for the directory checks
    from meta_policy_search.envs import make_env

    try:
        make_env(env, **env_kwargs).close()
    except (TypeError, ValueError) as error:
        raise ConfigError(
            f"--env_kwargs {json.dumps(env_kwargs)}: {env} rejects them ({error})"
        ) from None
    except Exception as error:  # the constructor's own failure, whatever its type
        raise ConfigError(f"--env {env}: {_construction_failure(env_kwargs, error)}") from None


def _check_user_env(env: str, env_kwargs: dict[str, Any]) -> None:
    """Import, check and build a user env (``--env package.module:ClassName``) once, so that a
    bad spec, a class missing part of the MetaEnv protocol or bad ``env_kwargs`` fail early.

    The working directory is searched for the module too
    (:func:`~meta_policy_search.envs.env_spec.search_working_directory`).
    """
    # gymnasium and numpy load only when an env is checked, not for the directory checks
    from meta_policy_search.envs.env_spec import (
        EnvSpecError,
        load_env_class,
        search_working_directory,
    )

    search_working_directory()
    try:
        cls = load_env_class(env)
    except EnvSpecError as error:
        raise ConfigError(f"--env {env}: {error.reason}") from None
    try:
        # gymnasium and numpy load only when an env is checked, not for the directory checks
        from meta_policy_search.envs import make_env

        make_env(env, **env_kwargs).close()
    except EnvSpecError as error:
        raise ConfigError(f"--env {env}: {error.reason}") from None
    except (TypeError, ValueError) as error:
        raise ConfigError(
            f"--env_kwargs {json.dumps(env_kwargs)}: {cls.__qualname__} rejects them ({error})"
        ) from None
    except Exception as error:  # the constructor's own failure, whatever its type
        raise ConfigError(f"--env {env}: {_construction_failure(env_kwargs, error)}") from None


def _construction_failure(env_kwargs: dict[str, Any], error: Exception) -> str:
    """What building an env raised, on one line."""
    detail = " ".join(str(error).split()) or "no message"
    return (f"building it with env_kwargs {json.dumps(env_kwargs)} raised "
            f"{type(error).__name__}: {detail}")


def check_writable_dir(path: str, flag: str) -> None:
    """Check that ``path`` is, or can be created as, a directory this process can write in.

    Nothing is left behind: the write test is an anonymous temporary file in the deepest
    existing ancestor, removed at once.

    Args:
        path: the directory a command will write into.
        flag: the command-line flag that named it, for the message (e.g. ``'--output_dir'``).

    Raises:
        ConfigError: ``<flag> <path>: <why>`` if it is (under) a file or cannot be written.
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise ConfigError(f"{flag} {path}: is a file, not a directory")
    existing = os.path.abspath(path)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise ConfigError(f"{flag} {path}: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{flag} {path}: {existing} is not writable")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise ConfigError(
            f"{flag} {path}: cannot write in {existing} ({error.strerror or error})"
        ) from None

