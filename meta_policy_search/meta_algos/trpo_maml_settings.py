"""TRPO-MAML's settings (:class:`~meta_policy_search.meta_algos.trpo_maml.TRPOMAML`, also
LVC-TRPO and E-MAML-TRPO): standard library only."""

from __future__ import annotations

import dataclasses

from meta_policy_search.choices import HVP_APPROACHES
from meta_policy_search.meta_algos.inner_step_settings import MAML_INNER_TYPE
from meta_policy_search.meta_algos.outer_step_settings import (
    ExplorationSettings,
    Rule,
    one_of,
    setting,
)

# A bound on the mean KL (nats) of one TRPO step. TRPO's step is sqrt(2 step_size / s'Hs) times
# the CG direction s, from a quadratic model of the KL that holds only near 0, and the line
# search shrinks it by at most 0.8^15 = 0.035: far above the paper's 0.01 the "trust region"
# bounds nothing (1e30 makes the first try 1e15 times the step of 1). Above 1 nat is refused
# rather than warned about: a run with it is wasted compute.
STEP_SIZE = Rule(
    lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 1,
    "a finite number in (0, 1], the mean KL bound of one TRPO step in nats (the paper: 0.01)",
)
"""TRPO's ``step_size`` rule."""


@dataclasses.dataclass(frozen=True)
class TRPOMAMLSettings(ExplorationSettings):
    """TRPO-MAML's settings: the KL trust region of its outer step and how it is solved."""

    step_size: float = setting(0.01, STEP_SIZE)
    """TRPO trust region: maximum mean KL (nats) of the outer step, in (0, 1]."""
    inner_type: str = MAML_INNER_TYPE
    """Inner objective: ``log_likelihood`` (MAML, the default:
    :data:`~meta_policy_search.meta_algos.inner_step_settings.MAML_INNER_TYPE`),
    ``likelihood_ratio`` (LVC) or ``dice``."""
    hvp_approach: str = setting("gauss_newton", one_of(HVP_APPROACHES))
    """Hessian-vector products of the conjugate gradient: ``gauss_newton`` (exact at the old
    parameters, the fastest), ``exact``, ``forward_over_reverse``, ``finite_difference`` or
    ``finite_difference_original`` (the original ProMP code's float32 finite difference, to
    measure its effect)."""
    jit_compile: bool = True
    """Compile with XLA: faster TRPO steps with the same results up to floating point rounding
    (``benchmarks/results/algo_steps.md``); off by default for the other algorithms."""


DEFAULTS = TRPOMAMLSettings()
"""TRPO-MAML's default settings: the defaults of its constructor and its run configs."""
