"""Half-cheetah running forward or backward (ProMP's ``HalfCheetahRandDirecEnv``)."""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

from meta_policy_search.envs.mujoco_envs._common import mujoco_warnings_to_python, squared_norm
from meta_policy_search.envs.mujoco_envs.diagnostics import velocity_diagnostics
from meta_policy_search.envs.mujoco_envs.tasks import DirectionTaskEnv
from meta_policy_search.types import PathBatch

CTRL_COST_WEIGHT = 0.05


class HalfCheetahRandDirecEnv(DirectionTaskEnv, HalfCheetahEnv):
    """Half-cheetah rewarded for running in direction ``d`` along x.

    * Task: ``d`` in ``{-1, +1}``, uniform (default ``+1``).
    * Reward: ``d * v - 0.05 * ||a||^2`` with ``v = dx / dt`` of the root, ``frame_skip = 5``.
    * Termination: never.
    * Observation: gymnasium v5's 17 dims (``qpos[1:]``, ``qvel``), as the original.
    * Info: ``forward_vel`` (``v``, not multiplied by ``d``), ``reward_forward``, ``reward_ctrl``.

    Differences from the paper's mujoco-py version: none intended; MuJoCo 3+ integrates the same
    model slightly differently, so returns are comparable but not identical.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        with mujoco_warnings_to_python():
            HalfCheetahEnv.__init__(self, frame_skip=5, render_mode=render_mode)
        self._finish_meta_init(1.0, render_mode)

    def _step_info(
        self, position_before: np.ndarray, position_after: np.ndarray, action: np.ndarray
    ) -> dict[str, float]:
        forward_vel = float(self.velocity(position_before, position_after)[0])
        return {
            "forward_vel": forward_vel,
            "reward_forward": self.goal_direction * forward_vel,
            "reward_ctrl": -CTRL_COST_WEIGHT * squared_norm(action),
        }

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """``AvgForwardVel``, ``AvgFinalForwardVel``, ``AvgCtrlCost`` (see :mod:`.diagnostics`)."""
        return velocity_diagnostics(paths, prefix)
