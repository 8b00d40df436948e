"""The ``--resume`` command line: the run's ``params.json`` as the base, and which settings may
change.

:func:`~meta_policy_search.experiment.config_parsing.parse_command_line` hands a ``--resume``
command line to :func:`parse_resumed` (this module sits below it and does not import it): the
run's stored config replaces the class defaults and the paper config, the config file and flags
apply on top, and :func:`check_resume_changes` refuses any change outside
:data:`~meta_policy_search.experiment.configs.RESUME_CHANGEABLE`, so that a resumed run replays
the stored one. A fresh run never reaches this module.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, NamedTuple

from meta_policy_search.experiment.config_values import ConfigError, config_from_dict, load_json
from meta_policy_search.experiment.configs import RESUME_CHANGEABLE


class ResumedConfig(NamedTuple):
    """What :func:`parse_resumed` read for a ``--resume`` command line."""

    config: Any
    """The stored config with the config file and flags on top (not yet validated)."""
    paper_entry: dict[str, Any] | None
    """The paper entry the run's ``params.json`` recorded."""
    changes: tuple[str, ...]
    """The changed fields (:func:`check_resume_changes`)."""


def parse_resumed(
    config_cls: type, cli: dict[str, Any], file_values: dict[str, Any], config_file: str | None
) -> ResumedConfig:
    """The config of a resumed run: its ``params.json``, then the config file, then the flags.

    Args:
        config_cls: the script's config dataclass.
        cli: the flags, already converted to the fields' types (``dump_path`` required).
        file_values: the ``--config_file`` JSON (empty without one).
        config_file: its path, named in error messages.

    Returns:
        The config (not yet validated), the paper entry the run's ``params.json`` recorded and
        the changed fields.

    Raises:
        ConfigError: without ``--dump_path`` or a ``params.json`` in it, on a bad stored or
            config-file value, and on a change :func:`check_resume_changes` refuses.
    """
    if "dump_path" not in cli:
        raise ConfigError("--resume needs --dump_path (the run directory to continue)")
    params_path = os.path.join(cli["dump_path"], "params.json")
    if not os.path.isfile(params_path):
        raise ConfigError(
            f"--resume --dump_path {cli['dump_path']}: no params.json there, so no run to "
            "continue; drop --resume to start a new run"
        )
    stored_values = load_json(params_path)
    stored = config_from_dict(config_cls, stored_values, source=params_path)
    config = config_from_dict(config_cls, file_values, base=stored, source=config_file)
    config = dataclasses.replace(config, **cli)
    changes = check_resume_changes(stored, config, params_path)
    return ResumedConfig(config, stored_values.get("paper_config_entry"), changes)


def check_resume_changes(stored: Any, requested: Any, params_path: str) -> tuple[str, ...]:
    """The fields ``requested`` changes relative to the run's ``stored`` config, if allowed.

    Resuming replays the stored run exactly; only the fields of
    :data:`~meta_policy_search.experiment.configs.RESUME_CHANGEABLE` (iterations, logging, where
    and how sampling runs, fault handling) may differ.

    Args:
        stored: the config read from ``params_path``.
        requested: the config after the config file and flags were applied on top of it.
        params_path: named in the error message.

    Returns:
        The names of the changed fields (all changeable), in field order.

    Raises:
        ConfigError: naming every other changed field with its requested and stored values.
    """
    changed = [
        field.name for field in dataclasses.fields(stored)
        if getattr(stored, field.name) != getattr(requested, field.name)
    ]
    refused = [name for name in changed if name not in RESUME_CHANGEABLE]
    if refused:
        raise ConfigError(*[
            f"--resume: --{name} {_show(getattr(requested, name))} differs from the run's "
            f"stored value {_show(getattr(stored, name))} ({params_path}) and cannot change in "
            f"a resumed run; drop the flag, or start a new run with another --dump_path"
            for name in refused
        ])
    return tuple(changed)


def _show(value: Any) -> str:
    """A config value as it would be typed on the command line."""
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value) if value else "[]"
    if isinstance(value, (dict, bool)) or value is None:
        return json.dumps(value)
    return str(value)
