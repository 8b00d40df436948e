"""The original ProMP ``HumanoidRandDirec2DEnv`` on the official ``mujoco`` bindings and our model.

The original (``meta_policy_search/envs/mujoco_envs/humanoid_rand_direc_2d.py`` at 93ae339)
inherits gym 0.10.5's mujoco-py ``MujocoEnv``, which cannot run today.
:class:`OriginalHumanoidRandDirec2DEnv` repeats it line by line on THE MODEL OF OUR ENV:
gymnasium's ``humanoid.xml`` with ``left_hip_y``'s range set back to gym's -120 to 20 degrees
(our ``paper_physics.use_gym_humanoid_hips``), frame skip 5. This module imports neither our
package nor the original (both are named ``meta_policy_search``) nor the shims of
:mod:`original_shims`; :mod:`humanoid_check` steps the env beside ours.
"""

from __future__ import annotations

import os

import mujoco
import numpy as np
from gymnasium.utils import EzPickle
from original_env import GYMNASIUM_ASSETS, GymMujocoEnvParts, load_model

HUMANOID_XML = os.path.join(GYMNASIUM_ASSETS, "humanoid.xml")
"""gymnasium's humanoid model (the model of our ``HumanoidRandDirec2DEnv``, before the patch)."""
GYM_HUMANOID_LEFT_HIP_Y_RANGE_DEGREES = (-120.0, 20.0)
"""Range of ``left_hip_y`` in gym 0.10.5's ``humanoid.xml`` (gymnasium's: -110 to 20); our
``paper_physics.GYM_HUMANOID_LEFT_HIP_Y_RANGE_DEGREES``."""
FRAME_SKIP = 5
"""``MujocoEnv.__init__(self, 'humanoid.xml', 5)``."""


def load_humanoid_model() -> mujoco.MjModel:
    """gymnasium's ``humanoid.xml`` with gym's ``left_hip_y`` range, as our env patches it."""
    model = load_model(HUMANOID_XML)
    model.joint("left_hip_y").range[:] = np.deg2rad(GYM_HUMANOID_LEFT_HIP_Y_RANGE_DEGREES)
    return model


def mass_center(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """The original's ``mass_center``: the mass-weighted mean of the bodies' ``xipos`` (3-D)."""
    mass = np.expand_dims(model.body_mass, 1)
    xpos = data.xipos
    return (np.sum(mass * xpos, 0) / np.sum(mass))


class OriginalHumanoidRandDirec2DEnv(GymMujocoEnvParts, EzPickle):
    """The original ProMP ``HumanoidRandDirec2DEnv`` (gym 0.10.5 + mujoco-py) on ``mujoco``.

    * ``__init__``: first a task from the global ``np.random`` (the original samples one before
      building the model, so every construction, also the executors' deep copies, draws two
      normals), then gym's ``MujocoEnv.__init__``: ``init_qpos``/``init_qvel`` of the fresh data,
      one zero-action step to size the observation, float32 Boxes (gym 0.10.5 auto-detected
      float32), episode RNG ``np_random`` from OS entropy.
    * tasks: ``normal(size=(n, 2))`` rows divided by their norms, from the global ``np.random``.
    * ``step``: ``ctrl = action``, 5 ``mj_step``s, then ``mj_rnePostConstraint`` (see
      :meth:`do_simulation`); reward ``0.25 * d . (com_xy_after - com_xy_before) / timestep
      - 0.1 * |ctrl|^2 - min(0.5e-6 * |cfrc_ext|^2, 10) + 5`` (the displacement over the physics
      ``timestep``, not over ``dt``; ``ctrl`` is ``data.ctrl``, i.e. the action as given); done
      when the root's ``z`` is below 1 or above 2; info ``reward_linvel``, ``reward_quadctrl``,
      ``reward_alive``, ``reward_impact``.
    * observation (376): ``qpos[2:]``, ``qvel``, ``cinert``, ``cvel``, ``qfrc_actuator``,
      ``cfrc_ext``, every row including the world body's.
    * ``reset``: ``mj_resetData`` then ``init_qpos``/``init_qvel`` plus ``U(-0.01, 0.01)`` from
      ``np_random``, ``mj_forward``.
    * ``log_diagnostics``: nothing (the original inherits ``MetaEnv``'s, which logs nothing).
    * pickling/deep-copying through ``EzPickle`` with no arguments: a copy is a freshly
      constructed env (new task from the global RNG, new ``np_random``), as the original's.
    """

    frame_skip = FRAME_SKIP

    def __init__(self) -> None:
        self.set_task(self.sample_tasks(1)[0])
        # gym 0.10.5 MujocoEnv.__init__(self, 'humanoid.xml', 5)
        self.init_mujoco(load_humanoid_model(), np.float32)
        EzPickle.__init__(self)

    # --- the original HumanoidRandDirec2DEnv --------------------------------------------------
    def sample_tasks(self, n_tasks: int) -> np.ndarray:
        """``n_tasks`` unit directions (normalised standard normal pairs) from ``np.random``."""
        directions = np.random.normal(size=(n_tasks, 2))
        directions /= np.linalg.norm(directions, axis=1)[..., np.newaxis]
        return directions

    def set_task(self, task: np.ndarray) -> None:
        """Set the direction ``d`` (a ``[2]`` unit vector)."""
        self.goal_direction = task

    def get_task(self) -> np.ndarray:
        """Return the direction ``d``."""
        return self.goal_direction

    def do_simulation(self, ctrl: np.ndarray, n_frames: int) -> None:
        """Set the control, step ``n_frames`` times, then ``mj_rnePostConstraint``.

        MuJoCo 1.50 (which the paper ran) filled ``cfrc_ext`` during ``mj_step``; MuJoCo 2 and
        later only in ``mj_rnePostConstraint``, without which the contact cost and the
        observation's ``cfrc_ext`` would be 0. Called once after the last step, from the
        kinematics and constraint forces ``mj_step`` leaves in ``data``, as gymnasium and our
        env do.
        """
        super().do_simulation(ctrl, n_frames)
        mujoco.mj_rnePostConstraint(self.model, self.data)

    def _get_obs(self) -> np.ndarray:
        data = self.data
        return np.concatenate([data.qpos.flat[2:],
                               data.qvel.flat,
                               data.cinert.flat,
                               data.cvel.flat,
                               data.qfrc_actuator.flat,
                               data.cfrc_ext.flat])

    def step(self, a: np.ndarray) -> tuple[np.ndarray, float, bool, dict[str, float]]:
        """One env step; returns ``(obs, reward, done, info)`` (gym 0.10.5's 4-tuple)."""
        pos_before = np.copy(mass_center(self.model, self.data)[:2])
        self.do_simulation(a, self.frame_skip)
        pos_after = mass_center(self.model, self.data)[:2]
        alive_bonus = 5.0
        data = self.data
        lin_vel_cost = 0.25 * np.sum(self.goal_direction * (pos_after - pos_before)) / self.model.opt.timestep
        quad_ctrl_cost = 0.1 * np.square(data.ctrl).sum()
        quad_impact_cost = .5e-6 * np.square(data.cfrc_ext).sum()
        quad_impact_cost = min(quad_impact_cost, 10)
        reward = lin_vel_cost - quad_ctrl_cost - quad_impact_cost + alive_bonus
        qpos = self.data.qpos
        done = bool((qpos[2] < 1.0) or (qpos[2] > 2.0))
        return self._get_obs(), reward, done, dict(reward_linvel=lin_vel_cost,
                                                   reward_quadctrl=-quad_ctrl_cost,
                                                   reward_alive=alive_bonus,
                                                   reward_impact=-quad_impact_cost)

    def reset_model(self) -> np.ndarray:
        """Set ``init_qpos/qvel + U(-0.01, 0.01)`` and return the observation."""
        c = 0.01
        self.set_state(
            self.init_qpos + self.np_random.uniform(low=-c, high=c, size=self.model.nq),
            self.init_qvel + self.np_random.uniform(low=-c, high=c, size=self.model.nv,)
        )
        return self._get_obs()

    def log_diagnostics(self, paths: list[dict], prefix: str = "") -> None:
        """Log nothing, as the original's ``MetaEnv.log_diagnostics``."""
