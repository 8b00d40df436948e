"""Humanoid walking in a direction of the plane (ProMP's ``HumanoidRandDirec2DEnv``)."""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.humanoid_v5 import HumanoidEnv

from meta_policy_search.envs.mujoco_envs.humanoid_rand_direc import HumanoidMixin
from meta_policy_search.envs.mujoco_envs.paper_physics import use_gym_humanoid_hips
from meta_policy_search.envs.mujoco_envs.tasks import Direction2DTaskEnv


class HumanoidRandDirec2DEnv(HumanoidMixin, Direction2DTaskEnv, HumanoidEnv):
    """Humanoid rewarded for walking along a unit direction ``d`` of the plane.

    * Task: ``d`` uniform on the unit circle (a normalised Gaussian; default ``(1, 0)``).
    * Reward: ``0.25 * d . dxy_com / timestep - 0.1 * ||a||^2
      - min(5e-7 * ||cfrc_ext||^2, 10) + 5``, ``frame_skip = 5``.
    * Termination: root z outside ``(1, 2)``.
    * Observation: gymnasium v5's 348 dims (the original had 376, see
      :class:`HumanoidRandDirecEnv`).
    * Info: ``forward_vel`` (``d . v_xy`` of the centre of mass), ``reward_forward``,
      ``reward_ctrl``, ``reward_contact``, ``reward_survive``.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        HumanoidEnv.__init__(self, frame_skip=5, render_mode=render_mode)
        use_gym_humanoid_hips(self.model)
        self._finish_meta_init(np.array([1.0, 0.0]), render_mode)
