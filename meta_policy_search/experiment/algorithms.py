"""The run scripts' configs and builders: one ``*RunConfig`` and one ``make_*`` per algorithm.

Each script in ``experiments/`` is a thin entry point that calls
:func:`~meta_policy_search.experiment.registry.run_script`; what it trains lives here, so that
``meta_test.py``, ``reproduce.py``, ``gradient_variance.py`` and ``plot.py`` rebuild any run
through the registry (:mod:`~meta_policy_search.experiment.registry`) instead of importing a
script.

A ``*RunConfig`` subclasses a family config of :mod:`~meta_policy_search.experiment.configs`.
Its docstring is the script's ``--help`` description, and the fields it redeclares are the
script's own choices, which the paper config leaves alone (``paper.script_fields``: any class
outside ``configs``). A ``make_*(config, policy)`` builds the meta-algorithm from a config's
fields.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from meta_policy_search.experiment.configs import (
    DiceMAMLConfig,
    PPOMAMLConfig,
    ProMPConfig,
    TRPOMAMLConfig,
    VPGMAMLConfig,
)
from meta_policy_search.experiment.runner import (
    build_dice_sample_processor,
    build_sample_processor,
    resolved_horizon,
)


# ---------------------------------------------------------------------------- run configs
@dataclasses.dataclass(frozen=True)
class ProMPRunConfig(ProMPConfig):
    """ProMP on MuJoCo: the paper's settings (40 tasks x 20 rollouts, clip 0.3, 5 PPO steps)."""


@dataclasses.dataclass(frozen=True)
class ProMPPointMassConfig(ProMPConfig):
    """ProMP on PointEnvRandGoal, sized for a laptop: 20 tasks x 20 rollouts, H = 100."""

    env: str = "PointEnvRandGoal"
    """Env class name, built with ``meta_policy_search.envs.make_env``."""
    n_itr: int = 40
    """Number of meta-iterations."""
    meta_batch_size: int = 20
    """Number of tasks per meta-iteration."""
    max_path_length: int | None = 100
    """Horizon ``H`` (the MAML paper's 100)."""
    executor: str = "iterative"
    """Sample in the main process: the point env is too cheap for worker processes to pay."""
    paper_config: bool = False
    """Keep these quick-start settings (1 inner step, exactly 20 rollouts per task) instead of the
    paper's PointEnvRandGoal entry (3 inner steps, budget sampling); ``true`` applies the entry to
    the fields this script does not set itself."""


@dataclasses.dataclass(frozen=True)
class PPOMAMLRunConfig(PPOMAMLConfig):
    """PPO-MAML on MuJoCo: ProMP's paper settings (40 tasks x 20 rollouts, clip 0.3, 5 PPO steps)."""


@dataclasses.dataclass(frozen=True)
class TRPOMAMLRunConfig(TRPOMAMLConfig):
    """TRPO-MAML on MuJoCo: the ProMP paper's settings with a KL trust region of 0.01."""


@dataclasses.dataclass(frozen=True)
class EMAMLTRPORunConfig(TRPOMAMLConfig):
    """E-MAML-TRPO on MuJoCo: TRPO-MAML's settings with the exploration term on."""

    exploration: bool = True
    """Add E-MAML's exploration term."""


@dataclasses.dataclass(frozen=True)
class VPGMAMLRunConfig(VPGMAMLConfig):
    """VPG-MAML on MuJoCo: one Adam step on the post-update policy-gradient objective."""


@dataclasses.dataclass(frozen=True)
class EMAMLVPGRunConfig(VPGMAMLConfig):
    """E-MAML-VPG on MuJoCo: VPG-MAML's settings with the exploration term on."""

    exploration: bool = True
    """Add E-MAML's exploration term."""


@dataclasses.dataclass(frozen=True)
class DiceMAMLRunConfig(DiceMAMLConfig):
    """DiCE-MAML on MuJoCo: the ProMP paper's settings, one Adam step per iteration."""


@dataclasses.dataclass(frozen=True)
class VPGDiceRunConfig(DiceMAMLConfig):
    """VPG-DiCE on MuJoCo: the ProMP paper's settings, one Adam step per iteration."""


# ---------------------------------------------------------------------------- builders
def algorithm_from_config(algorithm_class: type, config: Any, policy: Any, **overrides: Any) -> Any:
    """``algorithm_class(policy, ...)`` with every constructor argument that has a config field of
    the same name set to that field's value; ``overrides`` win.

    Config fields and constructor arguments share their names (``inner_lr``, ``clip_eps``,
    ``step_size``, ...), so a new constructor argument reaches the run scripts by adding the
    config field, with no builder to edit.
    """
    fields = {field.name for field in dataclasses.fields(config)}
    arguments = {
        name: getattr(config, name)
        for name in inspect.signature(algorithm_class).parameters
        if name in fields and name != "policy"
    }
    return algorithm_class(policy=policy, **{**arguments, **overrides})


def make_promp(config: ProMPConfig, policy: Any) -> Any:
    """The ProMP meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import ProMP

    return algorithm_from_config(ProMP, config, policy)


def make_ppo_maml(config: PPOMAMLConfig, policy: Any) -> Any:
    """The PPO-MAML meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import PPOMAML

    return algorithm_from_config(PPOMAML, config, policy)


def make_trpo_maml(config: TRPOMAMLConfig, policy: Any) -> Any:
    """The TRPO-MAML meta-algorithm for ``policy`` (E-MAML-TRPO when ``config.exploration``)."""
    from meta_policy_search.meta_algos import TRPOMAML

    return algorithm_from_config(TRPOMAML, config, policy)


def make_trpo_maml_sample_processor(config: TRPOMAMLConfig) -> Any:
    """DiCE's processor for ``--inner_type dice`` (it needs adjusted rewards), else the default."""
    if config.inner_type == "dice":
        return build_dice_sample_processor(config)
    return build_sample_processor(config)


def make_vpg_maml(config: VPGMAMLConfig, policy: Any) -> Any:
    """The VPG-MAML meta-algorithm for ``policy`` (E-MAML when ``config.exploration``)."""
    from meta_policy_search.meta_algos import VPGMAML

    return algorithm_from_config(VPGMAML, config, policy)


def make_dice_maml(config: DiceMAMLConfig, policy: Any) -> Any:
    """The DiCE-MAML meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import DICEMAML

    return algorithm_from_config(
        DICEMAML, config, policy, max_path_length=resolved_horizon(config)
    )


def make_vpg_dice(config: DiceMAMLConfig, policy: Any) -> Any:
    """The VPG-DiCE meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import VPG_DICEMAML

    return algorithm_from_config(
        VPG_DICEMAML, config, policy, max_path_length=resolved_horizon(config)
    )
