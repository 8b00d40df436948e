"""Walker2d walking at a target velocity (ProMP's ``Walker2DRandVelEnv``)."""

from __future__ import annotations

from gymnasium.envs.mujoco.walker2d_v5 import Walker2dEnv

from meta_policy_search.envs.mujoco_envs.paper_physics import use_gym_walker2d_feet
from meta_policy_search.envs.mujoco_envs.tasks import VelocityTaskEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_direc import (
    CTRL_COST_WEIGHT,
    FRAME_SKIP,
    Walker2dBody,
)

SURVIVE_REWARD = 15.0


class Walker2DRandVelEnv(Walker2dBody, VelocityTaskEnv, Walker2dEnv):
    """Walker2d rewarded for walking at a target forward velocity ``v*``.

    * Task: ``v*`` uniform in ``[0, 10)`` (default 5).
    * Reward: ``-|v - v*| + 15 - 1e-3 * ||a||^2`` with ``v = dx / dt`` of the root,
      ``frame_skip = 8``.
    * Termination: unless ``0.8 < z < 2`` and ``-1 < angle < 1`` (gymnasium's healthy test).
    * Observation: gymnasium v5's 17 dims.
    * Info: ``forward_vel``, ``reward_forward`` (``-|v - v*|``), ``reward_ctrl``,
      ``reward_survive``.

    Model: gym 0.10.5's walker (see :class:`.Walker2DRandDirecEnv`).

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    velocity_range = (0.0, 10.0)
    ctrl_cost_weight = CTRL_COST_WEIGHT
    survive_reward = SURVIVE_REWARD

    def __init__(self, render_mode: str | None = None) -> None:
        Walker2dEnv.__init__(self, frame_skip=FRAME_SKIP, render_mode=render_mode)
        use_gym_walker2d_feet(self.model)
        self._finish_meta_init(self._default_velocity(), render_mode)
