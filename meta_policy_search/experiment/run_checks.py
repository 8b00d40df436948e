"""The checks of the env and the run directory a run makes before it loads TensorFlow or writes.

Each takes plain values (an env name, a directory), never the config: the settings themselves
were validated when the command line was parsed
(:func:`~meta_policy_search.experiment.config_parsing.parse_command_line`).
:func:`~meta_policy_search.experiment.runner.prepare_run` calls :func:`check_env` and
:func:`check_run_dir`, which also says whether a ``--resume`` has anything left to do. Every
problem is a :class:`~meta_policy_search.experiment.config_parsing.ConfigError`, which the
scripts print as one ``error:`` line per problem with exit status 2.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
import typing
from typing import Any

from meta_policy_search.experiment.config_parsing import (  # noqa: F401 - re-exported
    ConfigError,
    ParsedCommandLine,
    parse_command_line,
    resolve_config,
)
from meta_policy_search.experiment.configs import (  # noqa: F401 - re-exported
    ENV_SPEC_SEPARATOR,
    validate_config,
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
    """The iteration of its newest checkpoint (``None``: none), for :func:`check_unchanged`."""
    finished: bool = False
    """With ``--resume``: the run has already completed ``n_itr`` iterations (nothing to do)."""

    @property
    def checkpoint_dir(self) -> str:
        """``<dump_path>/checkpoints``."""
        return os.path.join(self.dump_path, "checkpoints")

    @property
    def last_itr(self) -> int | None:
        """With ``--resume``: the iteration of the checkpoint the run continues after."""
        return self.checkpoint_found if self.resume else None


def check_run_dir(dump_path: str, resume: bool, n_itr: int) -> RunDir:
    """Check that a run may use ``dump_path``, without writing anything.

    ``dump_path`` must be a writable directory (or creatable) that no other process owns
    (:mod:`~meta_policy_search.experiment.run_lock`); a new run must not overwrite a
    checkpointed one, and a resumed run needs a checkpoint whose ``state.json`` and
    ``state.pkl`` read back (checked here, before anything in the directory changes).

    Args:
        dump_path: the run directory.
        resume: whether the run continues from its checkpoint.
        n_itr: the run's number of iterations (a resumed run past it has nothing to do).

    Returns:
        The :class:`RunDir`.

    Raises:
        ConfigError: one message saying what is wrong and what to do.
    """
    from meta_policy_search.experiment.run_lock import check_run_owner

    check_writable_dir(dump_path, "--dump_path")
    check_run_owner(dump_path)
    found = _checked_checkpoint(os.path.join(dump_path, "checkpoints"), resume)
    if not resume and found is not None:
        raise ConfigError(
            f"--dump_path {dump_path} already holds a run: pass --resume to continue it, "
            "or choose another --dump_path"
        )
    if resume and found is None:
        raise ConfigError(
            f"--resume: {dump_path} has no checkpoint yet (the run stopped during its "
            "first iteration); start it again without --resume and with the same flags"
        )
    finished = resume and found is not None and found + 1 >= n_itr
    return RunDir(dump_path, resume, found, finished)


def check_unchanged(run_dir: RunDir) -> None:
    """Check, once this process holds the run directory's lock, that its checkpoint is still the
    one :func:`check_run_dir` saw: another run may have written one (or finished) in between.

    Raises:
        ConfigError: if the checkpoint changed, saying to run the command again.
    """
    found = _checked_checkpoint(run_dir.checkpoint_dir, run_dir.resume)
    if found != run_dir.checkpoint_found:
        raise ConfigError(
            f"--dump_path {run_dir.dump_path}: another run wrote a checkpoint there "
            f"(iteration {found}) while this one was starting; run the command again"
        )


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


def _checked_checkpoint(checkpoint_dir: str, resume: bool) -> int | None:
    """The iteration of the newest checkpoint in ``checkpoint_dir`` (``None``: none); with
    ``resume`` its side state is read back too.

    Raises:
        ConfigError: if its ``state.json`` or (with ``resume``) ``state.pkl`` is corrupt.
    """
    from meta_policy_search.utils.checkpoint import (
        CheckpointError,
        checkpoint_iteration,
        read_checkpoint_state,
    )

    if not os.path.isdir(checkpoint_dir):
        return None
    try:
        if resume:
            state = read_checkpoint_state(checkpoint_dir)
            return None if state is None else int(state["itr"])
        return checkpoint_iteration(checkpoint_dir)
    except CheckpointError as error:
        raise ConfigError(
            f"checkpoint: {error}; restore the run directory from a backup, or start a new run "
            "with another --dump_path"
        ) from None


def _check_env_kwargs(env: str, env_kwargs: dict[str, Any]) -> None:
    """Build the env once (no TensorFlow needed) so that bad ``env_kwargs`` fail early."""
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


def __getattr__(name: str) -> Any:
    """``prepare_run`` and ``PreparedRun`` under their old path (their module imports this one)."""
    if name in ("prepare_run", "PreparedRun"):
        from meta_policy_search.experiment import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
