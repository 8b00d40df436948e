"""Reading a JSON object from a file, with one-line errors that name the file.

Needs nothing beyond the standard library, so the command-line checks that read ``params.json``
or a checkpoint's ``state.json`` load neither numpy nor TensorFlow.
"""

from __future__ import annotations

import json
from typing import Any


def read_json_object(
    path: str, error: type[Exception], expected: str, invalid: str = "not valid JSON"
) -> dict[str, Any]:
    """The JSON object in the file ``path``.

    Args:
        path: the file to read.
        error: the exception class raised on any problem, with a one-line message.
        expected: what the object holds, for the message when the file holds another JSON value
            (``'a JSON object of config keys'``).
        invalid: how the message describes text that is not JSON (``'corrupt, not valid JSON'``
            for a file the program wrote itself).

    Returns:
        The object, as a dict.

    Raises:
        Exception: an ``error``, with the line ``<path>: cannot read it (<why>)``,
            ``<path>: <invalid> (<where>)`` or ``<path>: expected <expected>, got <type>``.
    """
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except OSError as reason:
        raise error(f"{path}: cannot read it ({reason.strerror or reason})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as reason:
        raise error(f"{path}: {invalid} ({reason})") from None
    if not isinstance(value, dict):
        raise error(f"{path}: expected {expected}, got {type(value)}")
    return value
