"""Half-cheetah running forward or backward (ProMP's ``HalfCheetahRandDirecEnv``)."""

from __future__ import annotations

from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

from meta_policy_search.envs.mujoco_envs.common import mujoco_warnings_to_python
from meta_policy_search.envs.mujoco_envs.tasks import DirectionTaskEnv

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

    ctrl_cost_weight = CTRL_COST_WEIGHT

    def __init__(self, render_mode: str | None = None) -> None:
        with mujoco_warnings_to_python():
            HalfCheetahEnv.__init__(self, frame_skip=5, render_mode=render_mode)
        self._finish_meta_init(1.0, render_mode)
