"""Hopper with randomised physical parameters (ProMP's ``HopperRandParamsEnv``)."""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.hopper_v5 import HopperEnv

from meta_policy_search.envs.batched.mujoco import MujocoRows
from meta_policy_search.envs.mujoco_envs.common import (
    ForwardRewardEnv,
    planar_healthy,
    planar_observations,
)
from meta_policy_search.envs.mujoco_envs.paper_physics import use_rand_param_envs_timestep
from meta_policy_search.envs.mujoco_envs.rand_params import RandParamsEnv

CTRL_COST_WEIGHT = 1e-3
SURVIVE_REWARD = 1.0


class PlanarRunMixin(ForwardRewardEnv):
    """Forward-running reward ``v + 1 - 1e-3 ||a||^2`` of the rand-params envs."""

    ctrl_cost_weight = CTRL_COST_WEIGHT
    survive_reward = SURVIVE_REWARD


class HopperRandParamsEnv(PlanarRunMixin, RandParamsEnv, HopperEnv):
    """Hopper running forward with randomised body masses, inertias, frictions and dampings.

    * Task: per-element multipliers of ``body_mass``, ``body_inertia``, ``geom_friction``
      (``1.5 ** U(-3, 3)``) and ``dof_damping`` (``1.3 ** U(-3, 3)``), see
      :mod:`.rand_params` (default: all ones).
    * Reward: ``v + 1 - 1e-3 * ||a||^2`` with ``v = dx / dt`` of the root, ``frame_skip = 4``.
    * Termination: gymnasium Hopper's unhealthy test: not (``z > 0.7``, ``|angle| < 0.2``
      and ``|qpos[2:], qvel| < 100``).
    * Observation: gymnasium v5's 11 dims (``qpos[1:]``, ``qvel`` clipped to ``[-10, 10]``).
    * Info: ``forward_vel``, ``reward_forward``, ``reward_ctrl``, ``reward_survive``.

    Model: ``rand_param_envs``' hopper, as the paper ran it: gym's ``hopper.xml`` at its time
    step of 0.004 s, so one env step is 4 x 0.004 = 0.016 s (gymnasium's model: 0.008 s). See
    :mod:`.paper_physics`.

    Differences from the paper's version: the task holds multipliers rather than absolute
    values. As in the original, derived model constants (``body_subtreemass``,
    ``*_invweight0``) are not recomputed after scaling. The engine is MuJoCo 4 here, MuJoCo 1.31
    (mujoco-py 0.5.7 in ``rand_param_envs``) in the paper.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def observations(self, rows: MujocoRows) -> np.ndarray:
        """``qpos[1:]`` and ``qvel`` clipped to ``[-10, 10]`` for each row."""
        return planar_observations(self, rows)

    def terminated(self, rows: MujocoRows) -> np.ndarray:
        """gymnasium Hopper's unhealthy test for each row."""
        min_state, max_state = self._healthy_state_range
        state = rows.state[:, 2:]
        healthy = planar_healthy(self, rows)
        healthy &= np.all((min_state < state) & (state < max_state), axis=1)
        return ~healthy

    def __init__(self, render_mode: str | None = None) -> None:
        HopperEnv.__init__(self, frame_skip=4, render_mode=render_mode)
        use_rand_param_envs_timestep(self)
        self._save_original_params()
        self._finish_meta_init(self.default_task(), render_mode)
