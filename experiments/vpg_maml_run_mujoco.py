"""VPG-MAML on a MuJoCo meta-RL task; ``--inner_type likelihood_ratio`` gives LVC-VPG.

Usage::

    python experiments/vpg_maml_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
    python experiments/vpg_maml_run_mujoco.py --inner_type likelihood_ratio   # LVC-VPG
"""

from __future__ import annotations

import dataclasses

from meta_policy_search.utils.experiment import VPGMAMLConfig, run_experiment


@dataclasses.dataclass(frozen=True)
class Config(VPGMAMLConfig):
    """VPG-MAML on MuJoCo: one Adam step on the post-update policy-gradient objective."""


def make_algo(config: VPGMAMLConfig, policy):
    """The VPG-MAML meta-algorithm for ``policy`` (E-MAML when ``config.exploration``)."""
    from meta_policy_search.meta_algos import VPGMAML

    return VPGMAML(
        policy=policy,
        inner_lr=config.inner_lr,
        meta_batch_size=config.meta_batch_size,
        num_inner_grad_steps=config.num_inner_grad_steps,
        learning_rate=config.learning_rate,
        inner_type=config.inner_type,
        exploration=config.exploration,
        exploration_type=config.exploration_type,
        trainable_inner_step_size=config.trainable_inner_step_size,
        first_order=config.first_order,
        jit_compile=config.jit_compile,
    )


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_experiment(Config, "vpg_maml", make_algo, argv=argv)


if __name__ == "__main__":
    main()
