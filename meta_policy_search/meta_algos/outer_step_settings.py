"""How an algorithm declares its settings once: default, check and help text of each.

Standard library only, like :mod:`~meta_policy_search.meta_algos.inner_step_settings`: the run
scripts' configs (:mod:`~meta_policy_search.experiment.configs`) subclass an algorithm's
settings class to get its fields, defaults and help texts, and check a command line with the
same rules before TensorFlow loads; the algorithm's constructor takes its defaults from the
same class and runs the same check.

An algorithm's settings are a frozen dataclass subclassing :class:`AlgorithmSettings`, in a
TensorFlow-free ``*_settings.py`` beside the algorithm's module (``pro_mp_settings.py`` beside
``pro_mp.py``). Each field is written as ``name: type = setting(default, rule)`` followed by its
docstring, which is the ``--help`` text and the docs tables' description. The outer-step
settings several algorithms share (an Adam step, PPO's clipped steps, E-MAML's exploration term)
are the mixins of this module, so that each of those values, too, has one default.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self

from meta_policy_search.choices import EXPLORATION_TYPES


@dataclasses.dataclass(frozen=True)
class Rule:
    """A setting's valid values: ``check(value)`` is true for them, ``allowed`` describes them
    (as the error messages say it: ``must be <allowed>``)."""

    check: Callable[[Any], bool]
    allowed: str


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) \
        and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


POSITIVE = Rule(lambda v: _is_number(v) and v > 0, "a finite number > 0")
"""A finite number > 0."""
NON_NEGATIVE = Rule(lambda v: _is_number(v) and v >= 0, "a finite number >= 0")
"""A finite number >= 0."""
POSITIVE_INT = Rule(lambda v: _is_int(v) and v >= 1, "an integer >= 1")
"""An integer >= 1."""
BOOL = Rule(lambda v: isinstance(v, bool) or getattr(getattr(v, "dtype", None), "kind", "") == "b",
            "true or false")
"""``True`` or ``False`` (a numpy bool too)."""


def one_of(choices: tuple[str, ...]) -> Rule:
    """The rule of a setting with a fixed set of string values."""
    return Rule(lambda v: v in choices, "one of " + ", ".join(choices))


RULE_KEY = "rule"
"""Key of a setting's :class:`Rule` in its dataclass field's metadata."""


def setting(default: Any, rule: Rule) -> Any:
    """A settings field: its one default and its one check.

    Args:
        default: the default value (immutable).
        rule: the check, run by the algorithm's constructor and by the command-line parser.

    Returns:
        A :func:`dataclasses.field`.
    """
    return dataclasses.field(default=default, metadata={RULE_KEY: rule})


def field_rule(field: dataclasses.Field) -> Rule | None:
    """The :class:`Rule` a field was declared with by :func:`setting`, or ``None``."""
    rule = field.metadata.get(RULE_KEY)
    return rule if isinstance(rule, Rule) else None


@dataclasses.dataclass(frozen=True)
class AlgorithmSettings:
    """Base of an algorithm's settings: a frozen dataclass whose fields are declared with
    :func:`setting`.

    Constructing one does not check it (the configs subclass it and report every invalid flag
    at once, see :func:`~meta_policy_search.experiment.configs.validate_config`); the
    algorithm's constructor calls :meth:`checked`.
    """

    takes_horizon: ClassVar[bool] = False
    """Whether the algorithm's constructor also takes the run's ``max_path_length`` (DiCE's
    objectives need it); it is the env's horizon, not a setting of the algorithm."""

    def problems(self) -> list[tuple[str, Any, str]]:
        """``(name, value, allowed)`` of every field that breaks its rule; empty if valid."""
        return invalid_fields(type(self), {f.name: getattr(self, f.name)
                                           for f in dataclasses.fields(self)})

    def checked(self) -> Self:
        """This object, after checking every field.

        Raises:
            ValueError: naming every invalid field, its value and what it must be.
        """
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(
                f"{name} must be {allowed}, got {value!r}" for name, value, allowed in problems))
        return self


def invalid_fields(settings_cls: type, values: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """The entries of ``values`` that break the rules of ``settings_cls``'s fields.

    Args:
        settings_cls: a settings dataclass (or a config subclassing one).
        values: field name -> value; names without a rule are ignored.

    Returns:
        ``(name, value, allowed)`` per invalid value, in field order.
    """
    problems = []
    for field in dataclasses.fields(settings_cls):
        rule = field_rule(field)
        if rule is not None and field.name in values and not rule.check(values[field.name]):
            problems.append((field.name, values[field.name], rule.allowed))
    return problems


def settings_class(cls: type) -> type[AlgorithmSettings]:
    """The algorithm settings class ``cls`` is or subclasses: the first
    :class:`AlgorithmSettings` subclass on its MRO declared in an algorithm's settings module
    (not a shared mixin of this module, not a config).

    Raises:
        TypeError: if there is none.
    """
    for base in cls.__mro__:
        if (issubclass(base, AlgorithmSettings) and base.__module__ != __name__
                and base.__module__.startswith("meta_policy_search.meta_algos.")):
            return base
    raise TypeError(f"{cls.__name__} subclasses no algorithm settings class")


# ---------------------------------------------------------------------------- shared outer steps
@dataclasses.dataclass(frozen=True)
class AdamStepSettings(AlgorithmSettings):
    """An outer step with Adam."""

    learning_rate: float = setting(1e-3, POSITIVE)
    """Adam learning rate of the outer step."""


@dataclasses.dataclass(frozen=True)
class PPOStepSettings(AdamStepSettings):
    """PPO's outer step: clipped surrogate, several Adam epochs on the same samples."""

    num_ppo_steps: int = setting(5, POSITIVE_INT)
    """Adam epochs (one step per minibatch) per outer step, on the same samples."""
    num_minibatches: int = setting(1, POSITIVE_INT)
    """Minibatches (split over tasks) per PPO epoch."""
    clip_eps: float = setting(0.3, POSITIVE)
    """Clip range of the outer surrogate."""


@dataclasses.dataclass(frozen=True)
class ExplorationSettings(AlgorithmSettings):
    """E-MAML's exploration term (:meth:`~meta_policy_search.meta_algos.base.MAMLAlgo.exploration_loss`)."""

    exploration: bool = setting(False, BOOL)
    """Add E-MAML's exploration term (E-MAML-TRPO, E-MAML-VPG)."""
    exploration_type: str = setting("original", one_of(EXPLORATION_TYPES))
    """Form of E-MAML's term: ``original`` (the original ProMP code's) or ``emaml_paper``."""
