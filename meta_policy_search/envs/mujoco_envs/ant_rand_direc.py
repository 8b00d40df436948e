"""Ant walking forward or backward (ProMP's ``AntRandDirecEnv``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.envs.mujoco.ant_v5 import AntEnv

from meta_policy_search.envs.batched.mujoco import MujocoRows, squared_norms
from meta_policy_search.envs.mujoco_envs.common import ForwardRewardEnv, MujocoMetaEnv
from meta_policy_search.envs.mujoco_envs.diagnostics import forward_return_diagnostics
from meta_policy_search.envs.mujoco_envs.tasks import DirectionTaskEnv
from meta_policy_search.types import PathBatch

CTRL_COST_WEIGHT = 0.5
CONTACT_COST_WEIGHT = 5e-4
SURVIVE_REWARD = 1.0


class AntTorsoMixin(MujocoMetaEnv):
    """The Ant's rows, torso position, observation and cost terms, shared by the Ant meta-envs."""

    uses_contact_forces = True

    def extra_fields(self, model: Any) -> dict[str, int]:
        """The torso's x, y (the position whose difference is the velocity)."""
        return {"torso_xy": 2}

    def extra_views(self, model: Any, data: Any) -> tuple[np.ndarray, ...]:
        """A view of the torso's x, y in ``data``."""
        return (data.xpos[model.body("torso").id, :2],)

    def positions(self, rows: MujocoRows) -> np.ndarray:
        """The torso's x, y for each row."""
        return rows["torso_xy"]

    def observations(self, rows: MujocoRows) -> np.ndarray:
        """gymnasium Ant's observation (clipped contact forces of the bodies) for each row."""
        qpos = rows["qpos"]
        exclude = self._exclude_current_positions_from_observation
        low, high = self._contact_force_range
        contact = np.clip(rows["cfrc_ext"][:, 6:], low, high)
        return np.concatenate([qpos[:, 2:] if exclude else qpos, rows["qvel"], contact], axis=1)

    def _ant_costs(
        self, rows: MujocoRows, action: np.ndarray, ctrl_cost_weight: float
    ) -> dict[str, np.ndarray]:
        """``reward_ctrl`` and ``reward_contact`` (``-5e-4 ||clip(cfrc_ext, -1, 1)||^2``) for each
        row."""
        clipped = np.clip(rows["cfrc_ext"], -1.0, 1.0)
        contact = CONTACT_COST_WEIGHT * np.sum(np.square(clipped), axis=1)
        return {"reward_ctrl": -ctrl_cost_weight * squared_norms(action), "reward_contact": -contact}


class AntForwardMixin(AntTorsoMixin, ForwardRewardEnv):
    """Costs, survive bonus, termination and diagnostics of the Ant direction envs."""

    def _cost_terms(self, rows: MujocoRows, action: np.ndarray) -> dict[str, np.ndarray]:
        """The Ant's costs, then ``reward_survive``, for each row."""
        return {
            **self._ant_costs(rows, action, CTRL_COST_WEIGHT),
            "reward_survive": np.full(len(action), SURVIVE_REWARD),
        }

    def terminated(self, rows: MujocoRows) -> np.ndarray:
        """gymnasium Ant's unhealthy test (non-finite state or torso z out of range)."""
        qpos = rows["qpos"]
        min_z, max_z = self._healthy_z_range
        finite = np.all(np.isfinite(rows.state), axis=1)
        return ~(finite & (min_z <= qpos[:, 2]) & (qpos[:, 2] <= max_z))

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
