"""DiCE-MAML (Foerster et al. 2018) on a MuJoCo meta-RL task.

The inner and outer objectives are DiCE's magic-box objective; samples are processed with
``DiceSampleProcessor``. Usage::

    python experiments/dice_maml_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
"""

from __future__ import annotations

import dataclasses

from meta_policy_search.utils.experiment import (
    DiceMAMLConfig,
    build_dice_sample_processor,
    run_experiment,
)


@dataclasses.dataclass(frozen=True)
class Config(DiceMAMLConfig):
    """DiCE-MAML on MuJoCo: the ProMP paper's settings, one Adam step per iteration."""


def make_algo(config: DiceMAMLConfig, policy):
    """The DiCE-MAML meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import DICEMAML

    return DICEMAML(
        policy=policy,
        inner_lr=config.inner_lr,
        meta_batch_size=config.meta_batch_size,
        max_path_length=config.max_path_length,
        num_inner_grad_steps=config.num_inner_grad_steps,
        learning_rate=config.learning_rate,
        trainable_inner_step_size=config.trainable_inner_step_size,
        first_order=config.first_order,
        jit_compile=config.jit_compile,
    )


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_experiment(Config, "dice_maml", make_algo, build_dice_sample_processor, argv=argv)


if __name__ == "__main__":
    main()
