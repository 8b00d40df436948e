"""The run scripts' configs: one ``*RunConfig`` per algorithm (and the quick start's).

A ``*RunConfig`` subclasses a family config of :mod:`~meta_policy_search.experiment.configs`.
Its docstring is the script's ``--help`` description, and the fields it redeclares are the
script's own choices, which the paper config leaves alone
(:func:`~meta_policy_search.experiment.paper.script_fields`: any class outside
``configs``, hence this separate module). The registry
(:mod:`~meta_policy_search.experiment.registry`) pairs each with its algorithm class, which
:func:`~meta_policy_search.experiment.runner.make_algorithm` builds from the config's fields.
"""

from __future__ import annotations

import dataclasses

from meta_policy_search.experiment.configs import (
    DiceMAMLConfig,
    PPOMAMLConfig,
    ProMPConfig,
    TRPOMAMLConfig,
    VPGMAMLConfig,
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
