"""ProMP (Rothfuss et al. 2019) on a MuJoCo meta-RL task.

Usage::

    python experiments/promp_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
    python experiments/promp_run_mujoco.py --config_file my.json --n_itr 200
    python experiments/promp_run_mujoco.py --dump_path data/promp/run1 --resume

Defaults are the paper's; ``--help`` lists every flag.
"""

from __future__ import annotations

import dataclasses

from meta_policy_search.utils.experiment import ProMPConfig, run_experiment


@dataclasses.dataclass(frozen=True)
class Config(ProMPConfig):
    """ProMP on MuJoCo: the paper's settings (40 tasks x 20 rollouts, clip 0.3, 5 PPO steps)."""


def make_algo(config: Config, policy):
    """The ProMP meta-algorithm for ``policy``."""
    from meta_policy_search.meta_algos import ProMP

    return ProMP(
        policy=policy,
        inner_lr=config.inner_lr,
        meta_batch_size=config.meta_batch_size,
        num_inner_grad_steps=config.num_inner_grad_steps,
        learning_rate=config.learning_rate,
        num_ppo_steps=config.num_ppo_steps,
        num_minibatches=config.num_minibatches,
        clip_eps=config.clip_eps,
        target_inner_step=config.target_inner_step,
        init_inner_kl_penalty=config.init_inner_kl_penalty,
        adaptive_inner_kl_penalty=config.adaptive_inner_kl_penalty,
        anneal_factor=config.anneal_factor,
        trainable_inner_step_size=config.trainable_inner_step_size,
        first_order=config.first_order,
        jit_compile=config.jit_compile,
    )


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_experiment(Config, "promp", make_algo, argv=argv)


if __name__ == "__main__":
    main()
