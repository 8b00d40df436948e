"""Argument checks shared by every layer: each returns the checked value or raises a ValueError
that names the argument, its value and what was expected."""

from __future__ import annotations

import numpy as np


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int, or raise a ValueError naming ``name`` if it is not > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_non_negative_int(name: str, value: object) -> int:
    """Return ``value`` as an int, or raise a ValueError naming ``name`` if it is not >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)
