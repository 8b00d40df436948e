"""Ant walking in a direction of the plane (ProMP's ``AntRandDirec2DEnv``)."""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.ant_v5 import AntEnv

from meta_policy_search.envs.mujoco_envs.ant_rand_direc import AntForwardMixin
from meta_policy_search.envs.mujoco_envs.tasks import Direction2DTaskEnv


class AntRandDirec2DEnv(AntForwardMixin, Direction2DTaskEnv, AntEnv):
    """Ant rewarded for walking along a unit direction ``d`` of the plane.

    * Task: ``d`` uniform on the unit circle (a normalised Gaussian; default ``(1, 0)``).
    * Reward: ``d . v_xy - 0.5 * ||a||^2 - 5e-4 * ||clip(cfrc_ext, -1, 1)||^2 + 1`` with
      ``v_xy`` the torso's planar velocity, ``frame_skip = 5``.
    * Termination: non-finite state or torso z outside ``[0.2, 1]`` (see
      :class:`AntRandDirecEnv`).
    * Observation: gymnasium v5's 105 dims (the original had 111, see
      :class:`AntRandDirecEnv`).
    * Info: ``forward_vel`` (``d . v_xy``, the speed along the task direction),
      ``reward_forward`` (equal to it), ``reward_ctrl``, ``reward_contact``, ``reward_survive``.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        AntEnv.__init__(self, frame_skip=5, render_mode=render_mode)
        self._finish_meta_init(np.array([1.0, 0.0]), render_mode)
