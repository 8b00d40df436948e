"""Hopper with randomised physical parameters (ProMP's ``HopperRandParamsEnv``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from gymnasium.envs.mujoco.hopper_v5 import HopperEnv

from meta_policy_search.envs.mujoco_envs._common import MujocoMetaEnv, squared_norm
from meta_policy_search.envs.mujoco_envs.diagnostics import velocity_diagnostics
from meta_policy_search.envs.mujoco_envs.rand_params import RandParamsEnv
from meta_policy_search.types import PathBatch

CTRL_COST_WEIGHT = 1e-3
SURVIVE_REWARD = 1.0


class PlanarRunMixin(MujocoMetaEnv):
    """Forward-running reward ``v + 1 - 1e-3 ||a||^2`` of the rand-params envs."""

    if TYPE_CHECKING:
        # gymnasium's HopperEnv / Walker2dEnv defines this property; declared for the type checker only, as a
        # definition here would shadow it (the mixin precedes the env in the MRO).
        @property
        def is_healthy(self) -> bool: ...

    def _step_info(
        self, position_before: np.ndarray, position_after: np.ndarray, action: np.ndarray
    ) -> dict[str, float]:
        forward_vel = float(self.velocity(position_before, position_after)[0])
        return {
            "forward_vel": forward_vel,
            "reward_forward": forward_vel,
            "reward_ctrl": -CTRL_COST_WEIGHT * squared_norm(action),
            "reward_survive": SURVIVE_REWARD,
        }

    def _is_terminated(self) -> bool:
        return not self.is_healthy

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """``AvgForwardVel``, ``AvgFinalForwardVel``, ``AvgCtrlCost`` (see :mod:`.diagnostics`)."""
        return velocity_diagnostics(paths, prefix)


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

    Differences from the paper's mujoco-py version: the task holds multipliers rather than
    absolute values. As in the original, derived model constants (``body_subtreemass``,
    ``*_invweight0``) are not recomputed after scaling.

    Args:
        render_mode: gymnasium render mode, or ``None``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        HopperEnv.__init__(self, frame_skip=4, render_mode=render_mode)
        self._save_original_params()
        self._finish_meta_init(self.default_task(), render_mode)
