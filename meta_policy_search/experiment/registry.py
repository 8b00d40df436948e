"""The algorithm registry: every algorithm name -> its config, builders, run script and legend.

One place for the mapping that ``reproduce.py`` (which script runs ``lvc_vpg``?), ``plot.py``
(which paper curve belongs to a run's ``params.json``?), ``meta_testing.py`` and
``gradient_variance.py`` (which config class and ``make_algo`` rebuild a run?) and the run
scripts (which entry does ``promp_run_mujoco.py`` pass to
:func:`~meta_policy_search.experiment.runner.run_algorithm`?) look up by name. Data: nothing
here parses or forwards a command line. An algorithm is its meta-algorithm class, a run config
class (the class's settings, declared once in its ``meta_algos/*_settings.py``, on top of the
shared run settings: :mod:`~meta_policy_search.experiment.algorithms`) and a sample-processor
builder
(:mod:`~meta_policy_search.experiment.components`, or the runner's for TRPO-MAML) plus config
overrides; one builder, :func:`~meta_policy_search.experiment.runner.make_algorithm`, builds every
class from its config. LVC-VPG is VPG-MAML with ``--inner_type likelihood_ratio``, so its runs
record ``"algo": "vpg_maml"`` (the run name, which also selects the paper-config section) and
``"inner_type": "likelihood_ratio"`` in ``params.json``; first-order MAML likewise records
``"first_order": true``.

Legend names are those of the ProMP paper's figures (``paper_reference.csv``); ``DiCE-VPG`` in
the gradient-variance figure is the original's ``DICEMAML`` (DiCE objective inside and outside,
Adam outer steps), i.e. ``dice_maml``. Algorithms the paper did not plot carry a descriptive
label instead (``ppo_maml``: ``PPO-MAML``).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Callable
from typing import Any

from meta_policy_search.experiment import algorithms as alg
from meta_policy_search.experiment import runner as build
from meta_policy_search.experiment.components import (
    build_dice_sample_processor,
    build_sample_processor,
)

ALGORITHMS_PACKAGE = "meta_policy_search.meta_algos"
"""The package of the meta-algorithm classes."""

EXPERIMENTS_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "experiments"
)
"""The run scripts' directory, ``experiments/`` of the source checkout."""


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """One algorithm of the registry."""

    name: str
    """Registry name (``reproduce.py --algos``), e.g. ``'lvc_vpg'``."""
    script: str
    """Run-script module in ``experiments/``, e.g. ``'vpg_maml_run_mujoco'`` (``reproduce.py``
    launches it as a subprocess)."""
    run_name: str
    """The ``algo_name`` passed to ``run_experiment``: ``params.json``'s ``algo`` and the section
    of ``paper_configs.json``."""
    legend: str
    """Name in the paper's figures (``paper_reference.csv``), or a label if the paper has none."""
    algorithm_name: str
    """Its meta-algorithm class, e.g. ``'VPGMAML'``, or ``'fo_maml:FOMAML'`` for a class of a
    module of :mod:`meta_policy_search.meta_algos` that the package does not export (a name:
    importing it imports TensorFlow, which ``--help`` and config errors avoid)."""
    config_cls: type
    """The run script's config dataclass: the class's settings on top of
    :class:`~meta_policy_search.experiment.configs.MetaRLConfig`."""
    make_sample_processor: Callable[[Any], Any] = build_sample_processor
    """``make_sample_processor(config)``: the sample processor."""
    overrides: tuple[tuple[str, Any], ...] = ()
    """Config fields set on top of the config class, as ``(field, value)`` pairs."""

    @property
    def algorithm_module(self) -> str:
        """The module :attr:`algorithm_class` is read from."""
        module, _, _ = self.algorithm_name.rpartition(":")
        return f"{ALGORITHMS_PACKAGE}.{module}" if module else ALGORITHMS_PACKAGE

    @property
    def algorithm_class(self) -> type:
        """The meta-algorithm class (imports TensorFlow)."""
        class_name = self.algorithm_name.rpartition(":")[2]
        return getattr(importlib.import_module(self.algorithm_module), class_name)

    def make_algo(self, config: Any, policy: Any) -> Any:
        """The meta-algorithm for ``policy`` with the settings of ``config``
        (:func:`~meta_policy_search.experiment.runner.make_algorithm`)."""
        return build.make_algorithm(self.algorithm_class, config, policy)

    @property
    def script_path(self) -> str:
        """Absolute path of the run script."""
        return os.path.join(EXPERIMENTS_DIR, f"{self.script}.py")

    def flags(self) -> list[str]:
        """The overrides as command-line flags (``['--inner_type', 'likelihood_ratio']``)."""
        return [arg for key, value in self.overrides for arg in (f"--{key}", str(value))]

    def load(self) -> tuple[type, Callable[[Any, Any], Any], Callable[[Any], Any]]:
        """``(config_cls, make_algo, make_sample_processor)``: what rebuilds a run."""
        return self.config_cls, self.make_algo, self.make_sample_processor

    def matches(self, params: dict[str, Any]) -> bool:
        """Whether a run's ``params.json`` is a run of this algorithm."""
        return params.get("algo") == self.run_name and all(
            params.get(key) == value for key, value in self.overrides)


_LVC = (("inner_type", "likelihood_ratio"),)

ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in (
    Algorithm("promp", "promp_run_mujoco", "promp", "ProMP", "ProMP", alg.ProMPRunConfig),
    Algorithm("trpo_maml", "trpo_maml_run_mujoco", "trpo_maml", "MAML-TRPO", "TRPOMAML",
              alg.TRPOMAMLRunConfig, build.make_trpo_maml_sample_processor),
    Algorithm("e_maml_trpo", "e_maml_trpo_run_mujoco", "e_maml_trpo", "E-MAML-TRPO", "TRPOMAML",
              alg.EMAMLTRPORunConfig, build.make_trpo_maml_sample_processor),
    Algorithm("lvc_trpo", "trpo_maml_run_mujoco", "trpo_maml", "LVC-TRPO", "TRPOMAML",
              alg.TRPOMAMLRunConfig, build.make_trpo_maml_sample_processor, _LVC),
    Algorithm("vpg_maml", "vpg_maml_run_mujoco", "vpg_maml", "MAML-VPG", "VPGMAML",
              alg.VPGMAMLRunConfig),
    Algorithm("e_maml_vpg", "e_maml_vpg_run_mujoco", "e_maml_vpg", "E-MAML-VPG", "VPGMAML",
              alg.EMAMLVPGRunConfig),
    Algorithm("lvc_vpg", "vpg_maml_run_mujoco", "vpg_maml", "LVC-VPG", "VPGMAML",
              alg.VPGMAMLRunConfig, overrides=_LVC),
    Algorithm("fo_maml", "fo_maml_run_mujoco", "vpg_maml", "FO-MAML", "fo_maml:FOMAML",
              alg.VPGMAMLRunConfig, overrides=(("first_order", True),)),
    Algorithm("ppo_maml", "ppo_maml_run_mujoco", "ppo_maml", "PPO-MAML", "PPOMAML",
              alg.PPOMAMLRunConfig),
    Algorithm("dice_maml", "dice_maml_run_mujoco", "dice_maml", "DiCE-VPG", "DICEMAML",
              alg.DiceMAMLRunConfig, build_dice_sample_processor),
    Algorithm("vpg_dice", "vpg_dice_run_mujoco", "vpg_dice", "VPG-DiCE", "VPG_DICEMAML",
              alg.VPGDiceRunConfig, build_dice_sample_processor),
)}
"""Registry name -> :class:`Algorithm`."""


def get_algorithm(name: str) -> Algorithm:
    """The registry entry ``name``.

    Raises:
        ValueError: if there is none, listing the valid names.
    """
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; valid names: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def algorithm_for_params(params: dict[str, Any]) -> Algorithm | None:
    """The registry entry a run belongs to, from its ``params.json``.

    The most specific match wins: ``vpg_maml`` with ``inner_type = likelihood_ratio`` is
    ``lvc_vpg``, with ``log_likelihood`` it is ``vpg_maml``.

    Returns:
        The entry, or ``None`` if no entry's script and overrides match.
    """
    matching = [a for a in ALGORITHMS.values() if a.matches(params)]
    return max(matching, key=lambda a: len(a.overrides), default=None)


def algorithm_for_run_name(run_name: str) -> Algorithm:
    """The plain entry (no overrides) of a script's ``algo_name``: enough to rebuild its runs.

    Raises:
        ValueError: if no script passes ``run_name``, listing the valid names.
    """
    for algorithm in ALGORITHMS.values():
        if algorithm.run_name == run_name and not algorithm.overrides:
            return algorithm
    names = sorted({a.run_name for a in ALGORITHMS.values()})
    raise ValueError(f"unknown algo {run_name!r} in params.json; expected one of {names}")
