"""Walker2d walking forward or backward (ProMP's ``Walker2DRandDirecEnv``)."""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.walker2d_v5 import Walker2dEnv

from meta_policy_search.envs.batched.mujoco import MujocoRows
from meta_policy_search.envs.mujoco_envs.common import (
    MujocoMetaEnv,
    planar_healthy,
    planar_observations,
)
from meta_policy_search.envs.mujoco_envs.paper_physics import use_gym_walker2d_feet
from meta_policy_search.envs.mujoco_envs.tasks import DirectionTaskEnv

CTRL_COST_WEIGHT = 1e-3
SURVIVE_REWARD = 1.0
FRAME_SKIP = 8


class Walker2dBody(MujocoMetaEnv):
    """The observation and termination of the Walker2d meta-envs."""

    def observations(self, rows: MujocoRows) -> np.ndarray:
        """``qpos[1:]`` and ``qvel`` clipped to ``[-10, 10]`` for each row."""
        return planar_observations(self, rows)

    def terminated(self, rows: MujocoRows) -> np.ndarray:
        """gymnasium Walker2d's unhealthy test (height and angle) for each row."""
        return ~planar_healthy(self, rows)


class Walker2DRandDirecEnv(Walker2dBody, DirectionTaskEnv, Walker2dEnv):
    """Walker2d rewarded for walking in direction ``d`` along x.

    * Task: ``d`` in ``{-1, +1}``, uniform (default ``+1``).
    * Reward: ``d * v + 1 - 1e-3 * ||a||^2`` with ``v = dx / dt`` of the root,
      ``frame_skip = 8``. The survive bonus is 1 on every step, also the terminating one.
    * Termination: unless ``0.8 < z < 2`` and ``-1 < angle < 1`` (gymnasium's healthy test).
    * Observation: gymnasium v5's 17 dims (``qpos[1:]``, ``qvel`` clipped to ``[-10, 10]``).
    * Info: ``forward_vel`` (``v``, not multiplied by ``d``), ``reward_forward``,
      ``reward_ctrl``, ``reward_survive``.

    Model: gym 0.10.5's walker, as the paper ran it: gymnasium's ``walker2d_v5.xml`` with the
    right foot's friction set back to 0.9 (gymnasium gives both feet 1.9; see
    :mod:`.paper_physics` and :doc:`/differences`). The engine is MuJoCo 4, not 1.50.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    ctrl_cost_weight = CTRL_COST_WEIGHT
    survive_reward = SURVIVE_REWARD

    def __init__(self, render_mode: str | None = None) -> None:
        Walker2dEnv.__init__(self, frame_skip=FRAME_SKIP, render_mode=render_mode)
        use_gym_walker2d_feet(self.model)
        self._finish_meta_init(1.0, render_mode)
