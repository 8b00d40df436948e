"""ProMP's settings (:class:`~meta_policy_search.meta_algos.pro_mp.ProMP`): standard library only."""

from __future__ import annotations

import dataclasses
import math
import numbers

from meta_policy_search.meta_algos.outer_step_settings import (
    BOOL,
    NON_NEGATIVE,
    POSITIVE,
    PPOStepSettings,
    Rule,
    setting,
)

# The clipping range is multiplied by the factor after every meta-iteration, so a factor above 1
# would widen it without bound (the original's docstring: 'if anneal_factor < 1,
# clip_eps <- anneal_factor * clip_eps').
ANNEAL_FACTOR = Rule(
    lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
    and 0 < float(v) <= 1,
    "a number in (0, 1]",
)
"""ProMP's ``anneal_factor`` rule."""


@dataclasses.dataclass(frozen=True)
class ProMPSettings(PPOStepSettings):
    """ProMP's settings beyond the inner step's: PPO's outer step and the inner KL penalty.

    The defaults are the paper's (Rothfuss et al. 2019, appendix, and the original run
    scripts): clipping range 0.3 and a fixed KL penalty 5e-4; the original class defaulted to
    0.2 and an adaptive penalty from 0.01, which its scripts always overrode.
    """

    target_inner_step: float = setting(0.01, POSITIVE)
    """Target inner KL of the adaptive penalty (unused without ``adaptive_inner_kl_penalty``)."""
    init_inner_kl_penalty: float = setting(5e-4, NON_NEGATIVE)
    """Initial coefficient ``eta`` of the inner KL penalty."""
    adaptive_inner_kl_penalty: bool = setting(False, BOOL)
    """Adapt ``eta`` towards ``target_inner_step``: halve it below target/1.5, double it above
    1.5 target."""
    anneal_factor: float = setting(1.0, ANNEAL_FACTOR)
    """Multiplies the clip range after every meta-iteration, in (0, 1]."""


DEFAULTS = ProMPSettings()
"""ProMP's default settings: the defaults of its constructor and its run configs."""
