"""Checks of algorithm-specific settings that the run scripts' configs share: one check per value.

Standard library only, like :mod:`~meta_policy_search.meta_algos.inner_step_settings`: the
configs (:mod:`~meta_policy_search.experiment.configs`) check a command line with these before
TensorFlow loads, and the algorithm's constructor runs the same check.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

ANNEAL_FACTOR_ALLOWED = "a number in (0, 1]"
"""ProMP's ``anneal_factor`` as the error messages say it: the clipping range is multiplied by
it after every meta-iteration, so a factor above 1 would widen the range without bound (the
original's docstring: 'if anneal_factor < 1, clip_eps <- anneal_factor * clip_eps')."""


def is_anneal_factor(value: Any) -> bool:
    """Whether ``value`` is a valid ProMP ``anneal_factor`` (:data:`ANNEAL_FACTOR_ALLOWED`)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) \
        and math.isfinite(value) and 0 < float(value) <= 1
