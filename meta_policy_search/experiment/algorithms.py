"""The run scripts' configs and builders: one ``*RunConfig`` and one ``make_*`` per algorithm.

Each script in ``experiments/`` is a thin entry point that calls
:func:`~meta_policy_search.experiment.registry.run_script`; what it trains lives here, so that
``meta_testing.py``, ``reproduce.py``, ``gradient_variance.py`` and ``plot.py`` rebuild any run
through the registry (:mod:`~meta_policy_search.experiment.registry`) instead of importing a
script.

A ``*RunConfig`` subclasses a family config of :mod:`~meta_policy_search.experiment.configs`.
Its docstring is the script's ``--help`` description, and the fields it redeclares are the
script's own choices, which the paper config leaves alone (``paper.script_fields``: any class
outside ``configs``). A ``make_*(config, policy)`` builds the meta-algorithm from a config's
fields by an explicit call: a new constructor argument is passed here, next to its config field.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from meta_policy_search.experiment.configs import (
    DiceMAMLConfig,
    MetaRLConfig,
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
def inner_step_arguments(config: MetaRLConfig) -> dict[str, Any]:
    """The inner-step settings every meta-algorithm takes, as keyword arguments.

    Args:
        config: any algorithm's config.

    Returns:
        ``inner_lr``, ``meta_batch_size``, ``num_inner_grad_steps``,
        ``trainable_inner_step_size``, ``first_order`` and ``jit_compile`` from ``config``
        (checked when the config was parsed, by
        :class:`~meta_policy_search.meta_algos.inner_step_settings.InnerStepSettings`'s check;
        the algorithm stores them as that class).
    """
    return dict(
        inner_lr=config.inner_lr,
        meta_batch_size=config.meta_batch_size,
        num_inner_grad_steps=config.num_inner_grad_steps,
        trainable_inner_step_size=config.trainable_inner_step_size,
        first_order=config.first_order,
        jit_compile=config.jit_compile,
    )


def make_promp(config: ProMPConfig, policy: Any) -> Any:
    """The ProMP meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import ProMP

    return ProMP(
        policy,
        **inner_step_arguments(config),
        learning_rate=config.learning_rate,
        num_ppo_steps=config.num_ppo_steps,
        num_minibatches=config.num_minibatches,
        clip_eps=config.clip_eps,
        target_inner_step=config.target_inner_step,
        init_inner_kl_penalty=config.init_inner_kl_penalty,
        adaptive_inner_kl_penalty=config.adaptive_inner_kl_penalty,
        anneal_factor=config.anneal_factor,
    )


def make_ppo_maml(config: PPOMAMLConfig, policy: Any) -> Any:
    """The PPO-MAML meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import PPOMAML

    return PPOMAML(
        policy,
        **inner_step_arguments(config),
        learning_rate=config.learning_rate,
        num_ppo_steps=config.num_ppo_steps,
        num_minibatches=config.num_minibatches,
        clip_eps=config.clip_eps,
        inner_type=config.inner_type,
    )


def make_trpo_maml(config: TRPOMAMLConfig, policy: Any) -> Any:
    """The TRPO-MAML meta-algorithm for ``policy`` (E-MAML-TRPO when ``config.exploration``)."""
    from meta_policy_search.meta_algos import TRPOMAML

    return TRPOMAML(
        policy,
        **inner_step_arguments(config),
        step_size=config.step_size,
        inner_type=config.inner_type,
        exploration=config.exploration,
        exploration_type=config.exploration_type,
    )


def make_trpo_maml_sample_processor(config: TRPOMAMLConfig) -> Any:
    """DiCE's processor for ``--inner_type dice`` (it needs adjusted rewards), else the default."""
    if config.inner_type == "dice":
        return build_dice_sample_processor(config)
    return build_sample_processor(config)


def make_vpg_maml(config: VPGMAMLConfig, policy: Any) -> Any:
    """The VPG-MAML meta-algorithm for ``policy`` (E-MAML when ``config.exploration``)."""
    from meta_policy_search.meta_algos import VPGMAML

    return VPGMAML(
        policy,
        **inner_step_arguments(config),
        learning_rate=config.learning_rate,
        inner_type=config.inner_type,
        exploration=config.exploration,
        exploration_type=config.exploration_type,
    )


def make_dice_maml(config: DiceMAMLConfig, policy: Any) -> Any:
    """The DiCE-MAML meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import DICEMAML

    return DICEMAML(
        policy,
        **inner_step_arguments(config),
        learning_rate=config.learning_rate,
        max_path_length=resolved_horizon(config),
    )


def make_vpg_dice(config: DiceMAMLConfig, policy: Any) -> Any:
    """The VPG-DiCE meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import VPG_DICEMAML

    return VPG_DICEMAML(
        policy,
        **inner_step_arguments(config),
        learning_rate=config.learning_rate,
        max_path_length=resolved_horizon(config),
    )
