"""The algorithm registry: every algorithm name -> its run script, extra flags and paper legend.

One place for the mapping that ``reproduce.py`` (which script runs ``lvc_vpg``?), ``plot.py``
(which paper curve belongs to a run's ``params.json``?) and ``meta_test.py`` (which config class
and ``make_algo`` rebuild a run?) need. An algorithm is a run script plus config overrides: LVC-VPG
is ``vpg_maml_run_mujoco.py`` with ``--inner_type likelihood_ratio``, so its runs record
``"algo": "vpg_maml"`` (the script's name, which also selects the paper-config section) and
``"inner_type": "likelihood_ratio"`` in ``params.json``.

Legend names are those of the ProMP paper's figures (``paper_reference.csv``); ``DiCE-VPG`` in
the gradient-variance figure is the original's ``DICEMAML`` (DiCE objective inside and outside,
Adam outer steps), i.e. ``dice_maml``. Algorithms the paper did not plot carry a descriptive
label instead (``ppo_maml``: ``PPO-MAML``).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
from types import ModuleType
from typing import Any

EXPERIMENTS_DIR = os.path.dirname(os.path.abspath(__file__))
"""This directory: the run scripts live here and import each other by module name."""


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """One algorithm of the registry."""

    name: str
    """Registry name (``reproduce.py --algos``), e.g. ``'lvc_vpg'``."""
    script: str
    """Run-script module in ``experiments/``, e.g. ``'vpg_maml_run_mujoco'``."""
    run_name: str
    """The ``algo_name`` the script passes to ``run_experiment``: ``params.json``'s ``algo`` and
    the section of ``paper_configs.json``."""
    legend: str
    """Name in the paper's figures (``paper_reference.csv``), or a label if the paper has none."""
    overrides: tuple[tuple[str, Any], ...] = ()
    """Config fields set on top of the script's config, as ``(field, value)`` pairs."""
    sample_processor: str = "build_sample_processor"
    """Builder in :mod:`meta_policy_search.utils.experiment` of the script's sample processor,
    used when the script defines no ``make_sample_processor`` of its own."""

    @property
    def script_path(self) -> str:
        """Absolute path of the run script."""
        return os.path.join(EXPERIMENTS_DIR, f"{self.script}.py")

    def flags(self) -> list[str]:
        """The overrides as command-line flags (``['--inner_type', 'likelihood_ratio']``)."""
        return [arg for key, value in self.overrides for arg in (f"--{key}", str(value))]

    def load(self) -> tuple[type, Any, Any]:
        """Import the run script.

        Returns:
            ``(Config, make_algo, make_sample_processor)``: the script's config class and
            ``make_algo``, and the sample processor builder (the script's own
            ``make_sample_processor`` if it has one, e.g. DiCE's processor for
            ``--inner_type dice``).
        """
        from meta_policy_search.utils import experiment

        module = load_script(self.script)
        builder = getattr(module, "make_sample_processor", None)
        return module.Config, module.make_algo, builder or getattr(experiment, self.sample_processor)

    def matches(self, params: dict[str, Any]) -> bool:
        """Whether a run's ``params.json`` is a run of this algorithm."""
        return params.get("algo") == self.run_name and all(
            params.get(key) == value for key, value in self.overrides)


ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in (
    Algorithm("promp", "promp_run_mujoco", "promp", "ProMP"),
    Algorithm("trpo_maml", "trpo_maml_run_mujoco", "trpo_maml", "MAML-TRPO"),
    Algorithm("e_maml_trpo", "e_maml_trpo_run_mujoco", "e_maml_trpo", "E-MAML-TRPO"),
    Algorithm("lvc_trpo", "trpo_maml_run_mujoco", "trpo_maml", "LVC-TRPO",
              (("inner_type", "likelihood_ratio"),)),
    Algorithm("vpg_maml", "vpg_maml_run_mujoco", "vpg_maml", "MAML-VPG"),
    Algorithm("e_maml_vpg", "e_maml_vpg_run_mujoco", "e_maml_vpg", "E-MAML-VPG"),
    Algorithm("lvc_vpg", "vpg_maml_run_mujoco", "vpg_maml", "LVC-VPG",
              (("inner_type", "likelihood_ratio"),)),
    Algorithm("ppo_maml", "ppo_maml_run_mujoco", "ppo_maml", "PPO-MAML"),
    Algorithm("dice_maml", "dice_maml_run_mujoco", "dice_maml", "DiCE-VPG",
              sample_processor="build_dice_sample_processor"),
    Algorithm("vpg_dice", "vpg_dice_run_mujoco", "vpg_dice", "VPG-DiCE",
              sample_processor="build_dice_sample_processor"),
)}
"""Registry name -> :class:`Algorithm`."""


def load_script(module_name: str) -> ModuleType:
    """Import a run script of ``experiments/`` by module name (they import each other)."""
    if EXPERIMENTS_DIR not in sys.path:
        sys.path.insert(0, EXPERIMENTS_DIR)
    return importlib.import_module(module_name)


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
