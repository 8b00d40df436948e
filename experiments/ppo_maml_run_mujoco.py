"""PPO-MAML on a MuJoCo meta-RL task: MAML inner steps, PPO's clipped surrogate outside.

The meta-RL baseline of garage (``MAMLPPO``), RLlib and torchrl; not in the ProMP paper, whose
ProMP settings it takes on the paper's environments (the ``promp`` section of
``paper_configs.json``: same PPO steps and clip range, no inner KL penalty).

Usage::

    python experiments/ppo_maml_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
    python experiments/ppo_maml_run_mujoco.py --num_ppo_steps 3 --clip_eps 0.2
    python experiments/ppo_maml_run_mujoco.py --inner_type likelihood_ratio   # ProMP without KL

``--help`` lists every flag.
"""

from __future__ import annotations

import dataclasses

from meta_policy_search.utils.experiment import PPOMAMLConfig, run_experiment


@dataclasses.dataclass(frozen=True)
class Config(PPOMAMLConfig):
    """PPO-MAML on MuJoCo: ProMP's paper settings (40 tasks x 20 rollouts, clip 0.3, 5 PPO steps)."""


def make_algo(config: PPOMAMLConfig, policy):
    """The PPO-MAML meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import PPOMAML

    return PPOMAML(
        policy=policy,
        inner_lr=config.inner_lr,
        meta_batch_size=config.meta_batch_size,
        num_inner_grad_steps=config.num_inner_grad_steps,
        learning_rate=config.learning_rate,
        num_ppo_steps=config.num_ppo_steps,
        num_minibatches=config.num_minibatches,
        clip_eps=config.clip_eps,
        inner_type=config.inner_type,
        trainable_inner_step_size=config.trainable_inner_step_size,
        first_order=config.first_order,
        jit_compile=config.jit_compile,
    )


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_experiment(Config, "ppo_maml", make_algo, argv=argv)


if __name__ == "__main__":
    main()
