"""Half-cheetah running at a target velocity (ProMP's ``HalfCheetahRandVelEnv``)."""

from __future__ import annotations

from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

from meta_policy_search.envs.mujoco_envs.common import mujoco_warnings_to_python
from meta_policy_search.envs.mujoco_envs.tasks import VelocityTaskEnv

CTRL_COST_WEIGHT = 0.05


class HalfCheetahRandVelEnv(VelocityTaskEnv, HalfCheetahEnv):
    """Half-cheetah rewarded for running at a target forward velocity ``v*``.

    * Task: ``v*`` uniform in ``[0, 3)`` (default 1.5).
    * Reward: ``-|v - v*| - 0.05 * ||a||^2`` with ``v = dx / dt`` of the root,
      ``frame_skip = 5``.
    * Termination: never.
    * Observation: gymnasium v5's 17 dims, as the original.
    * Info: ``forward_vel``, ``reward_forward`` (``-|v - v*|``), ``reward_ctrl``.

    Differences from the paper's mujoco-py version: none intended (MuJoCo 3+ numerics only).

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    velocity_range = (0.0, 3.0)
    ctrl_cost_weight = CTRL_COST_WEIGHT

    def __init__(self, render_mode: str | None = None) -> None:
        with mujoco_warnings_to_python():
            HalfCheetahEnv.__init__(self, frame_skip=5, render_mode=render_mode)
        self._finish_meta_init(self._default_velocity(), render_mode)
