"""Ant walking to a goal position (ProMP's ``AntRandGoalEnv``)."""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.ant_v5 import AntEnv

from meta_policy_search.envs.batched.mujoco import MujocoRows, row_dots
from meta_policy_search.envs.mujoco_envs.ant_rand_direc import AntTorsoMixin
from meta_policy_search.envs.mujoco_envs.diagnostics import goal_diagnostics
from meta_policy_search.envs.mujoco_envs.tasks import GoalTaskEnv
from meta_policy_search.types import PathBatch

CTRL_COST_WEIGHT = 0.1


class AntRandGoalEnv(AntTorsoMixin, GoalTaskEnv, AntEnv):
    """Ant rewarded for walking to a goal position in the plane.

    * Task: goal ``g`` uniform in the disk of radius 3 around the origin (default the origin).
    * Reward: ``-||xy(torso) - g||_1 - 0.1 * ||a||^2 - 5e-4 * ||clip(cfrc_ext, -1, 1)||^2``
      after the step, ``frame_skip = 5``; no survive bonus.
    * Termination: never.
    * Observation: 107 dims: gymnasium v5's Ant observation with the torso's x, y kept
      (``qpos``, ``qvel``, clipped ``cfrc_ext`` of the 13 bodies). The original had 113: it
      also included the world body's (always zero) contact forces.
    * Info: ``reward_forward`` (the goal term, named as in the original so the Ant diagnostics
      apply), ``reward_ctrl``, ``reward_contact``, ``goal_distance`` (Euclidean distance of the
      torso to the goal).

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        AntEnv.__init__(
            self,
            frame_skip=5,
            terminate_when_unhealthy=False,
            exclude_current_positions_from_observation=False,
            render_mode=render_mode,
        )
        self._finish_meta_init(np.zeros(2), render_mode)

    def step_info(
        self, rows: MujocoRows, task: np.ndarray, before: np.ndarray, after: np.ndarray,
        action: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """The goal term, the Ant's costs and the goal distance for each row."""
        offset = after - task
        return {
            "reward_forward": -(np.abs(offset[:, 0]) + np.abs(offset[:, 1])),
            **self._ant_costs(rows, action, CTRL_COST_WEIGHT),
            "goal_distance": np.sqrt(row_dots(offset, offset)),
        }

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """Ant forward-return statistics plus ``AvgFinalGoalDistance`` (see :mod:`.diagnostics`)."""
        return goal_diagnostics(paths, prefix)
