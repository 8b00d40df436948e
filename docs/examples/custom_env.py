"""Your own task distribution: a point that must reach a goal on a circle, trained with ProMP.

Run it from the repository root (about a minute on 2 cores)::

    python docs/examples/custom_env.py

``tests/test_docs_examples.py`` runs it and checks that the adapted policy learns.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from meta_policy_search.envs.base import MetaEnv


class PointCircleGoalEnv(MetaEnv):
    """A point in the plane moves by its action; each task is a goal on the unit circle.

    * Task: the goal angle in radians, a float in ``[0, 2 pi)``.
    * Observation: the position, ``[2]``. Action: the step, clipped to ``[-0.1, 0.1]^2``.
    * Reward: minus the distance to the goal after the step. Never terminates.
    """

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Box(-0.1, 0.1, shape=(2,), dtype=np.float32)
        self.goal_angle = 0.0
        self.position = np.zeros(2)

    # -- the task protocol of MetaEnv ------------------------------------------------------
    def sample_tasks(self, n_tasks: int) -> list[float]:
        """Draw goal angles uniformly, from the env's own generator (never ``np.random``)."""
        return list(self.task_rng.uniform(0.0, 2.0 * np.pi, size=n_tasks))

    def set_task(self, task: float) -> None:
        """Make ``task`` (a goal angle) the goal of the following episodes."""
        angle = float(task)
        if not np.isfinite(angle):
            raise ValueError(f"the task must be a finite goal angle, got {task!r}")
        self.goal_angle = angle

    def get_task(self) -> float:
        """The current goal angle."""
        return self.goal_angle

    # -- gymnasium's episode API -----------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        """Start an episode at the origin."""
        super().reset(seed=seed)
        self.position = np.zeros(2)
        return self.position.astype(np.float32), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Move by the clipped action; the reward is minus the distance to the goal."""
        self.position = self.position + np.clip(action, -0.1, 0.1)
        goal = np.array([np.cos(self.goal_angle), np.sin(self.goal_angle)])
        distance = float(np.linalg.norm(self.position - goal))
        # info values are scalar floats with the same keys at every step (they are logged)
        return self.position.astype(np.float32), -distance, False, False, {"distance": distance}


def train(n_itr: int = 30, seed: int = 1) -> list[tuple[float, float]]:
    """Meta-train ProMP on :class:`PointCircleGoalEnv` with the library's components.

    The run scripts build the same components from a config (``run_experiment``); here they are
    spelled out, as in the original ProMP code's scripts.

    Returns:
        Per iteration, the average return before and after the inner step
        (``Step_0-AverageReturn``, ``Step_1-AverageReturn``).
    """
    from meta_policy_search.baselines import LinearFeatureBaseline
    from meta_policy_search.meta_algos import ProMP
    from meta_policy_search.meta_trainer import Trainer
    from meta_policy_search.policies import MetaGaussianMLPPolicy
    from meta_policy_search.samplers import MetaSampleProcessor, MetaSampler
    from meta_policy_search.utils import logger

    logger.configure(format_strs=("csv",))  # progress.csv in a temporary directory, no table

    meta_batch_size, horizon = 10, 20
    env = PointCircleGoalEnv()
    env.seed_tasks(seed)
    policy = MetaGaussianMLPPolicy(
        meta_batch_size=meta_batch_size, obs_dim=2, action_dim=2, hidden_sizes=(32, 32),
        init_std=0.1, seed=seed,
    )
    sampler = MetaSampler(
        env=env, policy=policy, rollouts_per_meta_task=10, max_path_length=horizon,
        parallel=False, seed=seed,
    )
    processor = MetaSampleProcessor(baseline=LinearFeatureBaseline(), discount=0.99)
    # Ten times the paper's outer learning rate, to learn within 30 iterations. At that rate
    # training stays stable with the original class's settings (clip range 0.2, an adaptive
    # inner KL penalty from 0.01), not with the paper's (0.3, a fixed penalty of 5e-4).
    algo = ProMP(policy=policy, inner_lr=0.1, num_inner_grad_steps=1, learning_rate=1e-2,
                 clip_eps=0.2, init_inner_kl_penalty=1e-2, adaptive_inner_kl_penalty=True)

    returns: list[tuple[float, float]] = []

    def record(trainer: Trainer, itr: int, stats: dict[str, float]) -> None:
        returns.append((stats["Step_0-AverageReturn"], stats["Step_1-AverageReturn"]))
        print(f"itr {itr}: return before {returns[-1][0]:.1f}, after one step {returns[-1][1]:.1f}")

    Trainer(algo=algo, env=env, sampler=sampler, sample_processor=processor, policy=policy,
            n_itr=n_itr, callbacks=[record]).train()
    return returns


if __name__ == "__main__":
    train()
