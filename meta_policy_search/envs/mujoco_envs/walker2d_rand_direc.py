"""Walker2d walking forward or backward (ProMP's ``Walker2DRandDirecEnv``)."""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.walker2d_v5 import Walker2dEnv

from meta_policy_search.envs.mujoco_envs._common import squared_norm
from meta_policy_search.envs.mujoco_envs.diagnostics import velocity_diagnostics
from meta_policy_search.envs.mujoco_envs.tasks import DirectionTaskEnv
from meta_policy_search.types import PathBatch

CTRL_COST_WEIGHT = 1e-3
SURVIVE_REWARD = 1.0
FRAME_SKIP = 8


class Walker2DRandDirecEnv(DirectionTaskEnv, Walker2dEnv):
    """Walker2d rewarded for walking in direction ``d`` along x.

    * Task: ``d`` in ``{-1, +1}``, uniform (default ``+1``).
    * Reward: ``d * v + 1 - 1e-3 * ||a||^2`` with ``v = dx / dt`` of the root,
      ``frame_skip = 8``. The survive bonus is 1 on every step, also the terminating one.
    * Termination: unless ``0.8 < z < 2`` and ``-1 < angle < 1`` (gymnasium's healthy test).
    * Observation: gymnasium v5's 17 dims (``qpos[1:]``, ``qvel`` clipped to ``[-10, 10]``).
    * Info: ``forward_vel`` (``v``, not multiplied by ``d``), ``reward_forward``,
      ``reward_ctrl``, ``reward_survive``.

    Differences from the paper's mujoco-py version: gymnasium v5's ``walker2d_v5.xml`` gives
    both feet the same friction (0.9); the old model's left foot had 1.9.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        Walker2dEnv.__init__(self, frame_skip=FRAME_SKIP, render_mode=render_mode)
        self._finish_meta_init(1.0, render_mode)

    def _step_info(
        self, position_before: np.ndarray, position_after: np.ndarray, action: np.ndarray
    ) -> dict[str, float]:
        forward_vel = float(self.velocity(position_before, position_after)[0])
        return {
            "forward_vel": forward_vel,
            "reward_forward": self.goal_direction * forward_vel,
            "reward_ctrl": -CTRL_COST_WEIGHT * squared_norm(action),
            "reward_survive": SURVIVE_REWARD,
        }

    def _is_terminated(self) -> bool:
        return not self.is_healthy

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """``AvgForwardVel``, ``AvgFinalForwardVel``, ``AvgCtrlCost`` (see :mod:`.diagnostics`)."""
        return velocity_diagnostics(paths, prefix)
