"""TRPO-MAML (Finn et al. 2017) on a MuJoCo meta-RL task.

Usage::

    python experiments/trpo_maml_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1

``--inner_type likelihood_ratio`` gives LVC-TRPO; ``--inner_type dice`` DiCE inner steps (with
``DiceSampleProcessor``); ``--help`` lists every flag.
"""

from __future__ import annotations

import dataclasses

from meta_policy_search.utils.experiment import (
    TRPOMAMLConfig,
    build_dice_sample_processor,
    build_sample_processor,
    run_experiment,
)


@dataclasses.dataclass(frozen=True)
class Config(TRPOMAMLConfig):
    """TRPO-MAML on MuJoCo: the ProMP paper's settings with a KL trust region of 0.01."""


def make_algo(config: TRPOMAMLConfig, policy):
    """The TRPO-MAML meta-algorithm for ``policy`` (E-MAML when ``config.exploration``)."""
    from meta_policy_search.meta_algos import TRPOMAML

    return TRPOMAML(
        policy=policy,
        inner_lr=config.inner_lr,
        meta_batch_size=config.meta_batch_size,
        num_inner_grad_steps=config.num_inner_grad_steps,
        step_size=config.step_size,
        inner_type=config.inner_type,
        exploration=config.exploration,
        exploration_type=config.exploration_type,
        trainable_inner_step_size=config.trainable_inner_step_size,
        first_order=config.first_order,
        jit_compile=config.jit_compile,
    )


def make_sample_processor(config: TRPOMAMLConfig):
    """DiCE's processor for ``--inner_type dice`` (it needs adjusted rewards), else the default."""
    if config.inner_type == "dice":
        return build_dice_sample_processor(config)
    return build_sample_processor(config)


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_experiment(Config, "trpo_maml", make_algo, make_sample_processor, argv=argv)


if __name__ == "__main__":
    main()
