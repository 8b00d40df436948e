"""Walker2d with randomised physical parameters (ProMP's ``Walker2DRandParamsEnv``)."""

from __future__ import annotations

from gymnasium.envs.mujoco.walker2d_v5 import Walker2dEnv

from meta_policy_search.envs.mujoco_envs.hopper_rand_params import PlanarRunMixin
from meta_policy_search.envs.mujoco_envs.paper_physics import (
    use_gym_walker2d_feet,
    use_rand_param_envs_timestep,
)
from meta_policy_search.envs.mujoco_envs.rand_params import RandParamsEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_direc import Walker2dBody


class Walker2DRandParamsEnv(Walker2dBody, PlanarRunMixin, RandParamsEnv, Walker2dEnv):
    """Walker2d walking forward with randomised body masses, inertias, frictions and dampings.

    * Task: per-element multipliers as in :class:`HopperRandParamsEnv` (default: all ones).
    * Reward: ``v + 1 - 1e-3 * ||a||^2`` with ``v = dx / dt`` of the root, ``frame_skip = 4``.
    * Termination: unless ``0.8 < z < 2`` and ``-1 < angle < 1`` (gymnasium's healthy test).
    * Observation: gymnasium v5's 17 dims (``qpos[1:]``, ``qvel`` clipped to ``[-10, 10]``).
    * Info: ``forward_vel``, ``reward_forward``, ``reward_ctrl``, ``reward_survive``.

    Model: ``rand_param_envs``' walker, as the paper ran it: gym's walker (right foot friction
    0.9, see :class:`.Walker2DRandDirecEnv`) at its time step of 0.004 s, so one env step is
    4 x 0.004 = 0.016 s (gymnasium's model: 0.008 s). See :mod:`.paper_physics`.

    Differences from the paper's version: multipliers as tasks (see
    :class:`HopperRandParamsEnv`) and the engine (MuJoCo 4 here, 1.31 in the paper).

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        Walker2dEnv.__init__(self, frame_skip=4, render_mode=render_mode)
        use_gym_walker2d_feet(self.model)
        use_rand_param_envs_timestep(self)
        self._save_original_params()
        self._finish_meta_init(self.default_task(), render_mode)
