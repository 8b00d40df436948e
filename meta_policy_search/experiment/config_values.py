"""Config values: JSON and command-line values -> typed config fields; the error of a bad one.

The bottom of the parse layer: :mod:`~meta_policy_search.experiment.config_parsing` (a fresh
command line) and :mod:`~meta_policy_search.experiment.resume_parsing` (``--resume``) both build
configs here, and every bad value, flag or file raises :class:`ConfigError`, which the scripts
print as one ``error:`` line with exit status 2. Nothing here imports numpy or TensorFlow.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

from meta_policy_search.experiment.configs import RESERVED_KEYS
from meta_policy_search.utils.json_reading import read_json_object


class ConfigError(ValueError):
    """A bad command line or config file (scripts print it without a traceback).

    Args:
        messages: one message per problem; each is printed as its own ``error:`` line.
    """

    def __init__(self, *messages: str) -> None:
        super().__init__("\n".join(messages))
        self.messages = tuple(messages)


def coerce(name: str, value: Any, annotation: Any, from_cli: bool) -> Any:
    """Convert ``value`` to a config field's type.

    Args:
        name: the field, named in the error message.
        value: a JSON value, or the flag's text if ``from_cli``.
        annotation: the field's type (``int``, ``float | None``, ``tuple[int, ...]``, ...).
        from_cli: ``value`` is command-line text: parsed as JSON where it can be, else read as a
            comma-separated tuple, a boolean word or a float such as ``inf``.

    Returns:
        The value as the field's type.

    Raises:
        ConfigError: ``--<name>: cannot parse ...`` or ``<name>: expected <type>, got ...``.
    """
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if value is None or (from_cli and str(value).lower() in ("none", "null")):
            return None
        inner = [a for a in args if a is not type(None)]
        return coerce(name, value, inner[0], from_cli)
    expected = getattr(annotation, "__name__", str(annotation))
    if from_cli and annotation is not str:
        text = value
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            if origin is tuple:
                value = [v.strip() for v in text.strip("()[]").split(",") if v.strip()]
            elif annotation is bool and text.lower() in ("true", "false", "yes", "no"):
                value = text.lower() in ("true", "yes")
            elif annotation is float and _is_float(text):
                value = float(text)  # "inf", "nan": parsed so the validator names them
            else:
                raise ConfigError(f"--{name}: cannot parse {text!r} as {expected}") from None
        if origin is tuple and not isinstance(value, list):
            value = [value]  # "--hidden_sizes 64" is a one-layer network
    if annotation is bool and isinstance(value, (bool, int)) and value in (0, 1):
        return bool(value)
    if annotation is int and isinstance(value, (int, float)) and not isinstance(value, bool):
        if float(value).is_integer():
            return int(value)
    if annotation is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if annotation is str and isinstance(value, str):
        return value
    if origin is tuple and isinstance(value, (list, tuple)):
        item_type = args[0] if args else Any
        if item_type is Any:
            return tuple(value)
        return tuple(coerce(name, v, item_type, from_cli and isinstance(v, str)) for v in value)
    if (annotation is dict or origin is dict) and isinstance(value, dict):
        return dict(value)
    raise ConfigError(f"{name}: expected {expected}, got {value!r}")


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def upgrade_legacy_params(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (a ``params.json`` or config file) with the keys of older versions renamed.

    ``parallel`` (true/false) was a second switch for the executor: without an ``executor`` (or
    with ``executor`` null) it becomes ``executor`` ``parallel``/``iterative``; with one it is
    dropped (``executor`` already overrode it). A null ``executor`` alone is dropped (the config
    class's default). The one place that maps old runs, so they still resume and meta-test.

    Returns:
        A new dict; ``values`` is not changed.
    """
    values = dict(values)
    if "parallel" in values:
        parallel = values.pop("parallel")
        if values.get("executor") is None:
            values["executor"] = "parallel" if parallel else "iterative"
    elif "executor" in values and values["executor"] is None:
        del values["executor"]  # null meant "as parallel says": the config class's default
    return values


def config_from_dict(
    config_cls: type, values: dict[str, Any], base: Any = None, source: str | None = None
) -> Any:
    """Build a config from ``values``, starting from ``base`` (default: the dataclass defaults).

    Args:
        config_cls: the config dataclass.
        values: field name -> JSON value (lists become tuples, ints become floats, ...).
            Keys in :data:`RESERVED_KEYS` are ignored; older keys are mapped by
            :func:`upgrade_legacy_params`.
        base: a ``config_cls`` instance whose values ``values`` override.
        source: the file ``values`` came from, named in error messages.

    Returns:
        A ``config_cls`` instance.

    Raises:
        ValueError: on a key that is not a field (naming it) or a value of the wrong type.
    """
    values = upgrade_legacy_params(values)
    hints = typing.get_type_hints(config_cls)
    names = [f.name for f in dataclasses.fields(config_cls)]
    where = f"{source}: " if source else ""
    unknown = sorted(set(values) - set(names) - set(RESERVED_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}unknown config key(s) {unknown} for {config_cls.__name__}; valid keys: "
            f"{names}"
        )
    try:
        converted = {
            key: coerce(key, value, hints[key], from_cli=False)
            for key, value in values.items()
            if key in names
        }
    except ConfigError as error:
        raise ConfigError(f"{where}{error}") from None
    base = config_cls() if base is None else base
    return dataclasses.replace(base, **converted)


def load_json(path: str) -> dict[str, Any]:
    """Read a JSON object of config keys from ``path``.

    Raises:
        ConfigError: naming ``path`` if it cannot be read, is not JSON or not a JSON object.
    """
    return read_json_object(path, ConfigError, expected="a JSON object of config keys")
