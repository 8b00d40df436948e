"""Humanoid walking forward or backward (ProMP's ``HumanoidRandDirecEnv``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.envs.mujoco.humanoid_v5 import HumanoidEnv

from meta_policy_search.envs.batched.mujoco import MujocoRows, squared_norms
from meta_policy_search.envs.mujoco_envs.common import ForwardRewardEnv
from meta_policy_search.envs.mujoco_envs.diagnostics import forward_return_diagnostics
from meta_policy_search.envs.mujoco_envs.paper_physics import use_gym_humanoid_hips
from meta_policy_search.envs.mujoco_envs.tasks import DirectionTaskEnv
from meta_policy_search.types import PathBatch

VELOCITY_WEIGHT = 0.25
"""Weight of the centre-of-mass displacement divided by the physics ``timestep``."""
CTRL_COST_WEIGHT = 0.1
CONTACT_COST_WEIGHT = 5e-7
CONTACT_COST_MAX = 10.0
SURVIVE_REWARD = 5.0


class HumanoidMixin(ForwardRewardEnv):
    """Centre-of-mass velocity, costs, observation and termination shared by the Humanoid
    meta-envs.

    ``reward_forward`` is the task's forward reward times ``_forward_weight``.
    """

    uses_contact_forces = True

    def extra_fields(self, model: Any) -> dict[str, int]:
        """The fields of gymnasium Humanoid's observation, and the bodies' positions."""
        nbody, nv = model.nbody, model.nv
        return {"cinert": 10 * (nbody - 1), "cvel": 6 * (nbody - 1), "qfrc_actuator": nv - 6,
                "xipos": 3 * nbody}

    def extra_views(self, model: Any, data: Any) -> tuple[np.ndarray, ...]:
        """Views of :meth:`extra_fields` in ``data``."""
        return (data.cinert[1:].ravel(), data.cvel[1:].ravel(), data.qfrc_actuator[6:],
                data.xipos.ravel())

    def positions(self, rows: MujocoRows) -> np.ndarray:
        """gymnasium's ``mass_center`` (x, y) for each row (the same reduction order)."""
        body_mass = rows.model.body_mass
        xipos = rows["xipos"].reshape(len(rows), -1, 3)
        return (np.einsum("b,nbj->nj", body_mass, xipos) / body_mass.sum())[:, 0:2]

    def observations(self, rows: MujocoRows) -> np.ndarray:
        """gymnasium Humanoid's observation for each row."""
        qpos = rows["qpos"]
        exclude = self._exclude_current_positions_from_observation
        parts = [qpos[:, 2:] if exclude else qpos, rows["qvel"]]
        parts += [rows[name] for name in ("cinert", "cvel", "qfrc_actuator")]
        parts.append(rows["cfrc_ext"][:, 6:])
        return np.concatenate(parts, axis=1)

    def terminated(self, rows: MujocoRows) -> np.ndarray:
        """Root z outside ``(1, 2)`` for each row."""
        z = rows["qpos"][:, 2]
        min_z, max_z = self._healthy_z_range
        return ~((min_z < z) & (z < max_z))

    def _forward_weight(self) -> float:
        # The original divided the displacement by model.opt.timestep, not by dt; in terms of
        # v = dx / dt that is a weight of 0.25 * frame_skip (1.25 for frame_skip 5).
        return VELOCITY_WEIGHT * self.dt / self.model.opt.timestep

    def _forward_reward(self, task: np.ndarray, forward_vel: np.ndarray) -> np.ndarray:
        """The task's forward term times :meth:`_forward_weight`, for each row."""
        # The task's term is d * v (d = +-1) or d . v, so the product is exact in either order.
        return self._forward_weight() * super()._forward_reward(task, forward_vel)

    def _cost_terms(self, rows: MujocoRows, action: np.ndarray) -> dict[str, np.ndarray]:
        """``reward_ctrl``, ``reward_contact`` (``-min(5e-7 ||cfrc_ext||^2, 10)``) and
        ``reward_survive`` for each row."""
        contact = CONTACT_COST_WEIGHT * np.sum(np.square(rows["cfrc_ext"]), axis=1)
        return {
            "reward_ctrl": -CTRL_COST_WEIGHT * squared_norms(action),
            "reward_contact": -np.where(CONTACT_COST_MAX < contact, CONTACT_COST_MAX, contact),
            "reward_survive": np.full(len(action), SURVIVE_REWARD),
        }

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """Forward-return statistics and ``AverageCtrlCost`` (see :mod:`.diagnostics`)."""
        return forward_return_diagnostics(paths, prefix)


class HumanoidRandDirecEnv(HumanoidMixin, DirectionTaskEnv, HumanoidEnv):
    """Humanoid rewarded for walking in direction ``d`` along x.

    * Task: ``d`` in ``{-1, +1}``, uniform (default ``+1``).
    * Reward: ``0.25 * d * dx_com / timestep - 0.1 * ||a||^2
      - min(5e-7 * ||cfrc_ext||^2, 10) + 5`` with ``dx_com`` the centre-of-mass displacement
      over the ``frame_skip = 5`` physics steps (i.e. ``1.25 * d * v_x``).
    * Termination: root z outside ``(1, 2)``.
    * Observation: gymnasium v5's 348 dims. The original had 376: gymnasium v5 leaves out the
      world body's rows of ``cinert``, ``cvel`` and ``cfrc_ext``, which carry no information.
    * Model: gym 0.10.5's humanoid, as the paper ran it: gymnasium's ``humanoid.xml`` with
      ``left_hip_y``'s range set back to -120 to 20 degrees (see :mod:`.paper_physics`).
    * Info: ``forward_vel`` (``v_x`` of the centre of mass, not multiplied by ``d``),
      ``reward_forward``, ``reward_ctrl``, ``reward_contact``, ``reward_survive``.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        HumanoidEnv.__init__(self, frame_skip=5, render_mode=render_mode)
        use_gym_humanoid_hips(self.model)
        self._finish_meta_init(1.0, render_mode)
