"""The inner-step settings every meta-algorithm shares: one default and one check per value.

Standard library only (no TensorFlow, no numpy): the run scripts' configs
(:mod:`~meta_policy_search.experiment.configs`) take their defaults from :data:`DEFAULTS` and check
a command line with :func:`invalid_settings` before TensorFlow loads, and every algorithm
(:class:`~meta_policy_search.meta_algos.base.MAMLAlgo`) builds an :class:`InnerStepSettings`
from its keyword arguments, whose constructor runs the same check.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from typing import Any

from meta_policy_search.choices import INNER_TYPES


@dataclasses.dataclass(frozen=True)
class InnerStepSettings:
    r"""How the inner step :math:`\theta'_t = \theta_t - \alpha \nabla L^{\text{in}}_t(\theta_t)`
    is taken (:func:`~meta_policy_search.meta_algos.inner_step.adapt`).

    The field defaults are the only defaults of these values: algorithm signatures and configs
    read them from :data:`DEFAULTS`.

    Raises:
        ValueError: on construction, naming every invalid field, its value and what it must be
            (:func:`invalid_settings`).
    """

    inner_lr: float = 0.1
    """Initial inner step size ``alpha`` (one per parameter element), a finite number > 0."""
    num_inner_grad_steps: int = 1
    """Number of inner steps ``K >= 0``; ``K = 0`` is plain policy optimisation on the task
    mixture (the *pretrained* baseline of the MAML paper)."""
    inner_type: str = "likelihood_ratio"
    """Inner objective, one of :data:`~meta_policy_search.choices.INNER_TYPES`:
    ``'likelihood_ratio'`` (LVC), ``'log_likelihood'`` (MAML) or ``'dice'``."""
    trainable_inner_step_size: bool = False
    """Meta-learn ``alpha`` with the outer optimizer (Meta-SGD)."""
    first_order: bool = False
    """Drop the second-order term (first-order MAML approximation)."""
    jit_compile: bool = False
    """Compile the algorithm's graphs (inner step, outer objective, optimizer steps) with XLA;
    the results are the same up to floating point rounding."""

    def __post_init__(self) -> None:
        problems = invalid_settings(dataclasses.asdict(self))
        if problems:
            raise ValueError("; ".join(
                f"{name} must be {allowed}, got {value!r}" for name, value, allowed in problems))
        # Plain Python types (a numpy integer or bool from a user's grid becomes int or bool).
        object.__setattr__(self, "inner_lr", float(self.inner_lr))
        object.__setattr__(self, "num_inner_grad_steps", int(self.num_inner_grad_steps))
        for name in ("trainable_inner_step_size", "first_order", "jit_compile"):
            object.__setattr__(self, name, bool(getattr(self, name)))


FIELDS = tuple(field.name for field in dataclasses.fields(InnerStepSettings))
"""Names of the settings, also the names of the algorithms' arguments and the config fields."""

ALLOWED = {
    "inner_lr": "a finite number > 0",
    "num_inner_grad_steps": "an integer >= 0",
    "inner_type": "one of " + ", ".join(INNER_TYPES),
    "trainable_inner_step_size": "true or false",
    "first_order": "true or false",
    "jit_compile": "true or false",
}
"""Setting -> its valid values, as the error messages say them."""


def _is_valid(name: str, value: Any) -> bool:
    if name == "inner_lr":
        return isinstance(value, numbers.Real) and not isinstance(value, bool) \
            and math.isfinite(value) and float(value) > 0
    if name == "num_inner_grad_steps":
        return isinstance(value, numbers.Integral) and not isinstance(value, bool) \
            and int(value) >= 0
    if name == "inner_type":
        return value in INNER_TYPES
    return isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b"


def invalid_settings(values: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """The invalid entries of ``values`` among the inner-step settings (others are ignored).

    Args:
        values: setting name -> value, e.g. a config's fields.

    Returns:
        ``(name, value, allowed)`` per invalid setting, in :data:`FIELDS` order; empty if valid.
    """
    return [(name, values[name], ALLOWED[name]) for name in FIELDS
            if name in values and not _is_valid(name, values[name])]


DEFAULTS = InnerStepSettings()
"""The default settings: ``DEFAULTS.inner_lr`` is the default of every ``inner_lr`` argument
and config field, and so on; ``DEFAULTS.inner_type`` (LVC) is ProMP's, see
:data:`MAML_INNER_TYPE` for the others."""

MAML_INNER_TYPE = "log_likelihood"
"""The default ``inner_type`` of the algorithms named after MAML (TRPO-MAML, VPG-MAML,
PPO-MAML) and of their configs: MAML's own inner objective. The original ProMP code's classes
defaulted to ``likelihood_ratio``, but its MAML and E-MAML run scripts
(``run_scripts/maml_run_mujoco.py``, ``e-maml_run_mujoco.py``) always passed
``log_likelihood``, and the paper's MAML-TRPO, E-MAML and MAML-VPG curves use it; LVC-VPG and
LVC-TRPO are these algorithms with ``inner_type='likelihood_ratio'``."""
