"""Argument checks shared by every layer: each returns the checked value or raises a ValueError
that names the argument, its value and what was expected.

Standard library only: the configuration and launcher code that uses them loads no numpy (a
numpy integer is a :class:`numbers.Integral` and passes).
"""

from __future__ import annotations

import numbers


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int, or raise a ValueError naming ``name`` if it is not > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_non_negative_int(name: str, value: object) -> int:
    """Return ``value`` as an int, or raise a ValueError naming ``name`` if it is not >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)
