"""Ant walking forward or backward (ProMP's ``AntRandDirecEnv``)."""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.ant_v5 import AntEnv

from meta_policy_search.envs.mujoco_envs.common import (
    ForwardRewardEnv,
    HealthyTerminationMixin,
    MujocoMetaEnv,
    clipped_contact_cost,
    squared_norm,
)
from meta_policy_search.envs.mujoco_envs.diagnostics import forward_return_diagnostics
from meta_policy_search.envs.mujoco_envs.tasks import DirectionTaskEnv
from meta_policy_search.types import PathBatch

CTRL_COST_WEIGHT = 0.5
CONTACT_COST_WEIGHT = 5e-4
SURVIVE_REWARD = 1.0


class AntTorsoMixin(MujocoMetaEnv):
    """Torso-position velocity and the Ant's cost terms, shared by the Ant meta-envs."""

    def _position(self) -> np.ndarray:
        return self.data.xpos[self.model.body("torso").id, :2].copy()

    def _ant_costs(self, action: np.ndarray, ctrl_cost_weight: float) -> dict[str, float]:
        return {
            "reward_ctrl": -ctrl_cost_weight * squared_norm(action),
            "reward_contact": -clipped_contact_cost(self.data.cfrc_ext, CONTACT_COST_WEIGHT),
        }


class AntForwardMixin(AntTorsoMixin, HealthyTerminationMixin, ForwardRewardEnv):
    """Costs, survive bonus, termination and diagnostics of the Ant direction envs."""

    def _cost_terms(self, action: np.ndarray) -> dict[str, float]:
        return {**self._ant_costs(action, CTRL_COST_WEIGHT), "reward_survive": SURVIVE_REWARD}

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """Forward-return statistics and ``AverageCtrlCost`` (see :mod:`.diagnostics`)."""
        return forward_return_diagnostics(paths, prefix)


class AntRandDirecEnv(AntForwardMixin, DirectionTaskEnv, AntEnv):
    """Ant rewarded for walking in direction ``d`` along x.

    * Task: ``d`` in ``{-1, +1}``, uniform (default ``+1``).
    * Reward: ``d * v_x - 0.5 * ||a||^2 - 5e-4 * ||clip(cfrc_ext, -1, 1)||^2 + 1`` with ``v_x``
      the torso's x velocity, ``frame_skip = 5``. The survive bonus is 1 on every step, also
      the terminating one, as in the original.
    * Termination: non-finite state or torso z outside ``[0.2, 1]``. The original checked
      ``[0, 1]``; this deliberate fix uses gymnasium's healthy range, which also ends the
      episodes of an ant that has collapsed onto its belly.
    * Observation: gymnasium v5's 105 dims (``qpos[2:]``, ``qvel``, clipped ``cfrc_ext`` of
      the 13 bodies). The original had 111 dims: gymnasium v5 leaves out the world body's
      contact forces, which are always zero.
    * Info: ``forward_vel`` (``v_x``, not multiplied by ``d``), ``reward_forward``,
      ``reward_ctrl``, ``reward_contact``, ``reward_survive``.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        AntEnv.__init__(self, frame_skip=5, render_mode=render_mode)
        self._finish_meta_init(1.0, render_mode)
