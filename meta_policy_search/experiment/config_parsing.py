"""Config parsing of the run scripts: command line -> validated config; ``params.json``.

:func:`parse_command_line` is where every setting gets its value and is validated, once. Each
layer overrides the ones before it: the config class's defaults; the paper's values for the
(algorithm, env) (:func:`~meta_policy_search.experiment.paper.paper_overrides`, unless
``paper_config`` is false; the env is the flags', else the config file's, else the default; never
the fields a run config redeclares); ``--config_file`` JSON; the flags ``--<field> <value>``.
With ``--resume`` the run's ``params.json`` replaces the first two
(:mod:`~meta_policy_search.experiment.resume_parsing`). ``params.json`` records the resolved
config, the algorithm and the paper entry applied. Nothing here imports TensorFlow, so a bad
command line fails in well under a second, before anything is written.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime
import functools
import inspect
import os
import re
import textwrap
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from meta_policy_search.experiment.config_values import (
    ConfigError,
    coerce,
    config_from_dict,
    load_json,
)
from meta_policy_search.experiment.configs import (
    DEFAULT_MAX_PATH_LENGTH,
    env_settings,
    validate_config,
)
from meta_policy_search.experiment.exit_codes import EPILOG
from meta_policy_search.experiment.paper import paper_overrides
from meta_policy_search.experiment.resume_parsing import parse_resumed
from meta_policy_search.experiment.script_help import DefaultsOnceHelpFormatter, run_script_epilog
from meta_policy_search.utils.serialization import atomic_write_json


@functools.cache
def field_docs(config_cls: type) -> Mapping[str, str]:
    """The docstrings written under each dataclass field (of ``config_cls`` and its bases):
    the help text each field was declared with (an algorithm's settings class holds its own),
    read once per class.

    Args:
        config_cls: a dataclass.

    Returns:
        Field name -> its docstring (fields without one are missing).
    """
    docs: dict[str, str] = {}
    for cls in reversed(config_cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, following in zip(body, body[1:]):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                docs[node.target.id] = " ".join(following.value.value.split())
    if dataclasses.is_dataclass(config_cls):  # not the class variables' docstrings
        fields = {field.name for field in dataclasses.fields(config_cls)}
        docs = {name: doc for name, doc in docs.items() if name in fields}
    return types.MappingProxyType(docs)


_ROLE = re.compile(r":[\w:]+:`(~?)([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_EMPHASIS = re.compile(r"(?<![\w*])\*(\w[^*]*?)\*(?![\w*])")


def plain_text(doc: str) -> str:
    """A docstring's reStructuredText markup as plain text, for ``--help``.

    ``:class:`~a.b.C``` -> ``C``, ``:mod:`a.b``` -> ``a.b``, double-backquoted literals and
    ``*emphasis*`` lose their markup.
    """
    doc = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), doc)
    return _EMPHASIS.sub(r"\1", _LITERAL.sub(r"\1", doc))


def make_parser(config_cls: type, description: str | None = None) -> argparse.ArgumentParser:
    """An argparse parser with ``--config_file``, ``--resume``, ``--overwrite`` and one
    ``--<field>`` per field; the exit-status contract is its epilog.

    Flags left out are not set (``argparse.SUPPRESS``), so they do not override a config file.
    """
    parser = argparse.ArgumentParser(
        description=plain_text(description or config_cls.__doc__ or ""),
        epilog=f"{run_script_epilog()} {EPILOG}",
        formatter_class=DefaultsOnceHelpFormatter,
    )
    parser.add_argument("--config_file", help="JSON file of config overrides")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --dump_path from its last checkpoint and params.json",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="a fresh start may replace a run already in --dump_path: its checkpoints, "
        "progress.csv, params.json, log.txt and event files are deleted first (without it, a "
        "fresh start on a directory holding a checkpoint or a progress.csv row is refused)",
    )
    docs = field_docs(config_cls)
    defaults = config_cls()
    for field in dataclasses.fields(config_cls):
        default = getattr(defaults, field.name)
        parser.add_argument(
            f"--{field.name}",
            default=argparse.SUPPRESS,
            metavar=field.name.upper(),
            help=_flag_help(field.name, docs.get(field.name, ""), default),
        )
    return parser


def _flag_help(name: str, doc: str, default: Any) -> str:
    """A run-script flag's help: its field docstring and default; ``--env`` also points to the
    list of environments after the flags (the docstring names only a few)."""
    text = plain_text(doc)
    if name == "env":
        text += " Every name: the list after the flags."
    return f"{text} (default: {default!r})".replace("%", "%%")


@dataclasses.dataclass(frozen=True)
class ParsedCommandLine:
    """What :func:`parse_command_line` read: the config, whether to resume, the paper entry."""

    config: Any
    """The config (not yet resolved, see :func:`resolve_config`)."""
    resume: bool
    """``--resume`` was given."""
    paper_entry: dict[str, Any] | None
    """The paper-config entry applied
    (:func:`~meta_policy_search.experiment.paper.paper_overrides`; with ``--resume``, the one the run's
    ``params.json`` recorded), or ``None``."""
    resume_changes: tuple[str, ...] = ()
    """With ``--resume``: the fields (all in
    :data:`~meta_policy_search.experiment.configs.RESUME_CHANGEABLE`) whose requested value
    differs from the run's ``params.json``; ``params.json`` is rewritten only to record these."""
    overwrite: bool = False
    """``--overwrite`` was given: a fresh start may replace a run in ``dump_path``."""


def parse_command_line(
    config_cls: type, argv: Sequence[str] | None = None, algo_name: str | None = None
) -> ParsedCommandLine:
    """Parse the command line into a config, applying the precedence of the module docstring.

    Args:
        config_cls: the script's config dataclass.
        argv: arguments without the program name; ``None`` reads ``sys.argv``.
        algo_name: the algorithm's name (``'promp'``, ``'trpo_maml'``, ...), which selects the
            paper config's section; ``None`` applies no paper config.

    Returns:
        The validated config (not yet resolved, see :func:`resolve_config`), ``resume`` and the
        paper entry applied.

    Raises:
        ConfigError: on unknown flags or config-file keys (naming them), unparsable values,
            ``--resume`` without ``--dump_path`` or changing a fixed setting, and invalid values
            (every message of :func:`~meta_policy_search.experiment.configs.validate_config`).
    """
    args, unknown = make_parser(config_cls).parse_known_args(argv)
    if unknown:
        raise ConfigError(f"unknown command-line argument(s) {unknown}")
    hints = typing.get_type_hints(config_cls)
    cli = {k: coerce(k, v, hints[k], from_cli=True)
           for k, v in vars(args).items() if k not in ("config_file", "resume", "overwrite")}
    file_values = load_json(args.config_file) if args.config_file else {}
    if args.resume:
        resumed = parse_resumed(config_cls, cli, file_values, args.config_file)
        parsed = ParsedCommandLine(resumed.config, True, resumed.paper_entry, resumed.changes)
    else:
        config, entry = _paper_config_base(config_cls, algo_name, [cli, file_values])
        if file_values:
            config = config_from_dict(config_cls, file_values, base=config,
                                      source=args.config_file)
        parsed = ParsedCommandLine(dataclasses.replace(config, **cli), False, entry)
    errors = validate_config(parsed.config)
    if errors:
        raise ConfigError(*errors)
    return dataclasses.replace(parsed, overwrite=args.overwrite)


def parse_config(
    config_cls: type, argv: Sequence[str] | None = None, algo_name: str | None = None
) -> tuple[Any, bool]:
    """``(config, resume)`` of :func:`parse_command_line` (same arguments and errors)."""
    parsed = parse_command_line(config_cls, argv, algo_name)
    return parsed.config, parsed.resume


def _paper_config_base(
    config_cls: type, algo_name: str | None, layers: Sequence[dict[str, Any]]
) -> tuple[Any, dict[str, Any] | None]:
    """The class defaults with the paper entry applied, for the env and ``paper_config`` that the
    highest of ``layers`` (typed flags first, then the config file's JSON) chooses."""
    defaults = config_cls()
    if algo_name is None:
        return defaults, None
    hints = typing.get_type_hints(config_cls)

    def chosen(name: str) -> Any:
        for layer in layers:
            if name in layer:
                return coerce(name, layer[name], hints[name], from_cli=False)
        return getattr(defaults, name)

    if not chosen("paper_config"):
        return defaults, None
    entry = paper_overrides(config_cls, algo_name, chosen("env"))
    if entry is None:
        return defaults, None
    return config_from_dict(config_cls, entry["applied"], base=defaults), entry


def resolve_config(config: Any, algo_name: str) -> Any:
    """Fill the ``None`` fields that have computed defaults: ``max_path_length``, ``dump_path``.

    Args:
        config: a :class:`MetaRLConfig` (subclass) instance.
        algo_name: used in the default ``dump_path`` ``data/<algo>/<env>/run_<timestamp>``
            (``<env>``: :func:`env_dir_name`).

    Returns:
        A copy of ``config`` with those fields set.
    """
    updates: dict[str, Any] = {}
    if config.max_path_length is None:
        settings = env_settings(config.env)
        updates["max_path_length"] = settings.get("max_path_length", DEFAULT_MAX_PATH_LENGTH)
    if config.dump_path is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S_%f")
        updates["dump_path"] = os.path.join("data", algo_name, env_dir_name(config.env),
                                            f"run_{stamp}")
    return dataclasses.replace(config, **updates)


def env_dir_name(env: str) -> str:
    """``env`` as a directory name: a user env's ``mypkg.tasks:MyEnv`` becomes
    ``mypkg.tasks.MyEnv`` (no colon in paths); a built-in name is unchanged."""
    return env.replace(":", ".")


def config_to_dict(
    config: Any, algo_name: str | None = None, paper_config_entry: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The config as a JSON-ready dict (what ``params.json`` holds).

    Args:
        config: a config dataclass instance.
        algo_name: if given, recorded as ``'algo'`` (first key).
        paper_config_entry: if ``algo_name`` is given, recorded as ``'paper_config_entry'``
            (last key; ``None`` when no paper config was applied).

    Returns:
        Field name -> JSON value, plus the metadata keys (:data:`RESERVED_KEYS`).
    """
    values = dataclasses.asdict(config)
    if not algo_name:
        return values
    return {"algo": algo_name, **values, "paper_config_entry": paper_config_entry}


def write_params(
    config: Any, dump_path: str, algo_name: str, paper_config_entry: dict[str, Any] | None = None
) -> str:
    """Atomically write ``params.json`` (the full config) into ``dump_path``; return its path."""
    path = os.path.join(dump_path, "params.json")
    atomic_write_json(path, config_to_dict(config, algo_name, paper_config_entry))
    return path

