"""The checks a run script makes before it loads TensorFlow or writes anything.

:func:`prepare_run` parses the command line (:mod:`~meta_policy_search.experiment.config_parsing`),
validates every value, checks the env arguments and the run directory, and says whether a
``--resume`` has anything left to do. Every problem is a
:class:`~meta_policy_search.experiment.config_parsing.ConfigError`, which the scripts print as one
``error:`` line per problem with exit status 2.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Sequence
from typing import Any

from meta_policy_search.experiment.config_parsing import (
    ConfigError,
    ParsedCommandLine,
    parse_command_line,
    resolve_config,
)
from meta_policy_search.experiment.configs import ENV_SPEC_SEPARATOR, validate_config


@dataclasses.dataclass(frozen=True)
class PreparedRun:
    """A checked command line of a run script: what :func:`prepare_run` returns."""

    config: Any
    """The resolved config (``max_path_length`` and ``dump_path`` filled in)."""
    parsed: ParsedCommandLine
    """What :func:`~meta_policy_search.experiment.config_parsing.parse_command_line` read."""
    checkpoint_dir: str
    """``<dump_path>/checkpoints``."""
    last_itr: int | None
    """With ``--resume``: the iteration of the checkpoint the run continues after."""
    finished: bool = False
    """With ``--resume``: the run has already completed ``n_itr`` iterations (nothing to do)."""
    checkpoint_found: int | None = None
    """The iteration of the directory's checkpoint when it was checked (``None``: none), for
    :func:`check_unchanged` once the run holds the directory's lock."""


def prepare_run(
    config_cls: type, algo_name: str, argv: Sequence[str] | None = None
) -> PreparedRun:
    """Parse and check a run script's command line without writing anything or loading TF.

    Checks, in order: the flags and config file, every value
    (:func:`~meta_policy_search.experiment.configs.validate_config`), the resume
    constraints (:func:`~meta_policy_search.experiment.config_parsing.check_resume_changes`), a user
    env (``--env package.module:ClassName``: importable, following the MetaEnv protocol, built
    once), the env arguments and a Meta-World env's package, then the run directory:
    ``dump_path`` must be a writable directory (or creatable) that no other process owns
    (:mod:`~meta_policy_search.experiment.run_lock`), a new run must not overwrite a
    checkpointed one, and a resumed run needs a checkpoint whose ``state.json`` and
    ``state.pkl`` read back (checked here, before anything in the directory changes).

    Args:
        config_cls: the script's config dataclass.
        algo_name: the algorithm's name (paper config section, default ``dump_path``).
        argv: arguments without the program name; ``None`` reads ``sys.argv``.

    Returns:
        The :class:`PreparedRun`.

    Raises:
        ConfigError: one message per problem found.
    """
    from meta_policy_search.envs.metaworld_envs import import_metaworld, is_metaworld_env_name
    from meta_policy_search.experiment.run_lock import check_run_owner

    parsed = parse_command_line(config_cls, argv, algo_name)
    errors = validate_config(parsed.config)
    if errors:
        raise ConfigError(*errors)
    if ENV_SPEC_SEPARATOR in parsed.config.env:
        _check_user_env(parsed.config.env, parsed.config.env_kwargs)
    elif is_metaworld_env_name(parsed.config.env):
        try:
            import_metaworld()
        except ImportError as error:
            raise ConfigError(f"--env {parsed.config.env}: {error}") from None
    elif parsed.config.env_kwargs:
        _check_env_kwargs(parsed.config.env, parsed.config.env_kwargs)
    config = resolve_config(parsed.config, algo_name)
    _check_dump_path(config.dump_path)
    check_run_owner(config.dump_path)
    checkpoint_dir = os.path.join(config.dump_path, "checkpoints")
    last_itr = _checked_checkpoint(checkpoint_dir, parsed.resume)
    if not parsed.resume and last_itr is not None:
        raise ConfigError(
            f"--dump_path {config.dump_path} already holds a run: pass --resume to continue it, "
            "or choose another --dump_path"
        )
    if parsed.resume and last_itr is None:
        raise ConfigError(
            f"--resume: {config.dump_path} has no checkpoint yet (the run stopped during its "
            "first iteration); start it again without --resume and with the same flags"
        )
    finished = parsed.resume and last_itr is not None and last_itr + 1 >= config.n_itr
    return PreparedRun(config, parsed, checkpoint_dir, last_itr if parsed.resume else None,
                       finished, last_itr)


def check_unchanged(prepared: PreparedRun) -> None:
    """Check, once this process holds the run directory's lock, that its checkpoint is still the
    one :func:`prepare_run` saw: another run may have written one (or finished) in between.

    Raises:
        ConfigError: if the checkpoint changed, saying to run the command again.
    """
    found = _checked_checkpoint(prepared.checkpoint_dir, prepared.parsed.resume)
    if found != prepared.checkpoint_found:
        raise ConfigError(
            f"--dump_path {prepared.config.dump_path}: another run wrote a checkpoint there "
            f"(iteration {found}) while this one was starting; run the command again"
        )


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


def _check_dump_path(dump_path: str) -> None:
    """Raise a ConfigError if ``dump_path`` is not, and cannot become, a writable directory."""
    check_writable_dir(dump_path, "--dump_path")


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
