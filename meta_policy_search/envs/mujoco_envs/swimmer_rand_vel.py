"""Swimmer swimming at a target velocity (ProMP's ``SwimmerRandVelEnv``, sign fixed)."""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.swimmer_v5 import SwimmerEnv

from meta_policy_search.envs.batched.mujoco import MujocoRows
from meta_policy_search.envs.mujoco_envs.tasks import VelocityTaskEnv

CTRL_COST_WEIGHT = 1e-4


class SwimmerRandVelEnv(VelocityTaskEnv, SwimmerEnv):
    """Swimmer rewarded for swimming at a target forward velocity ``v*``.

    * Task: ``v*`` uniform in ``[0.1, 0.2)`` (default 0.15).
    * Reward: ``-|v - v*| - 1e-4 * ||a||^2`` with ``v = dx / dt`` of the root,
      ``frame_skip = 4``. Deliberate fix: the original *added* the velocity error
      (``+|v - v*|``), rewarding the wrong thing.
    * Termination: never.
    * Observation: gymnasium v5's 8 dims (``qpos[2:]``, ``qvel``), as the original.
    * Info: ``forward_vel``, ``reward_forward`` (``-|v - v*|``), ``reward_ctrl``.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    velocity_range = (0.1, 0.2)
    ctrl_cost_weight = CTRL_COST_WEIGHT

    def observations(self, rows: MujocoRows) -> np.ndarray:
        """``qpos[2:]`` and ``qvel`` for each row."""
        qpos = rows["qpos"]
        exclude = self._exclude_current_positions_from_observation
        return np.concatenate([qpos[:, 2:] if exclude else qpos, rows["qvel"]], axis=1)

    def __init__(self, render_mode: str | None = None) -> None:
        SwimmerEnv.__init__(self, frame_skip=4, render_mode=render_mode)
        self._finish_meta_init(self._default_velocity(), render_mode)
