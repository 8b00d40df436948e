"""``rand_param_envs``' Walker2DRandParamsEnv and HopperRandParamsEnv on ``mujoco``, on our model.

The paper ran these two envs from ``rand_param_envs`` (dennisl88/rand_param_envs, read at
4d1529d; the envs, their gym ``MujocoEnv`` and XMLs last changed in c662ac8, which set the
XMLs' time step to 0.004), which vendors an old gym and mujoco-py 0.5.7 (MuJoCo 1.31): neither
can run today. The classes below repeat, line by line (the walker's and the hopper's
identical observation and reset once, in their base),
``rand_param_envs/base.py`` (``RandomEnv``), ``walker2d_rand_params.py``,
``hopper_rand_params.py`` and the parts of its ``gym/envs/mujoco/mujoco_env.py`` they use, on
the official ``mujoco`` bindings and on THE MODEL OF OUR ENVS: gymnasium's ``walker2d_v5.xml``
and ``hopper.xml`` with the time step of ``rand_param_envs``' XMLs (0.004 s) and, for the walker,
gym's right-foot friction 0.9 (as our ``paper_physics.py``). This module imports neither our
package nor the original (both are named ``meta_policy_search``) nor the shims of
:mod:`original_shims`; :mod:`rand_params_check` steps the envs beside ours.
"""

from __future__ import annotations

import os

import mujoco
import numpy as np
from gymnasium.utils import EzPickle
from original_env import GYMNASIUM_ASSETS, GymMujocoEnvParts, load_model

WALKER2D_XML = os.path.join(GYMNASIUM_ASSETS, "walker2d_v5.xml")
"""gymnasium's walker model (the model of our ``Walker2DRandParamsEnv``)."""
HOPPER_XML = os.path.join(GYMNASIUM_ASSETS, "hopper.xml")
"""gymnasium's hopper model (the model of our ``HopperRandParamsEnv``)."""

RAND_PARAM_ENVS_TIMESTEP = 0.004
"""``<option timestep>`` of ``rand_param_envs``' ``walker2d.xml`` and ``hopper.xml`` (gymnasium's:
0.002); our ``paper_physics.RAND_PARAM_ENVS_TIMESTEP``."""
GYM_WALKER2D_RIGHT_FOOT_FRICTION = 0.9
"""Sliding friction of ``foot_geom`` in gym's and ``rand_param_envs``' ``walker2d.xml``
(gymnasium's ``walker2d_v5.xml``: 1.9); our ``paper_physics.GYM_WALKER2D_RIGHT_FOOT_FRICTION``."""
FRAME_SKIP = 4
"""``RandomEnv.__init__`` calls ``MujocoEnv.__init__(self, file_name, 4)`` (the walker's extra
argument 5 lands in ``*args`` and is unused)."""


class OriginalRandomEnv(GymMujocoEnvParts, EzPickle):
    """``rand_param_envs``' ``RandomEnv`` and the parts of its gym ``MujocoEnv`` it uses, on ``mujoco``.

    * ``__init__`` (``MujocoEnv.__init__(file, 4)``): load the model (:meth:`_load_patched_model`),
      record ``init_qpos``/``init_qvel``, take one zero-action step to size the observation,
      action space from ``actuator_ctrlrange`` and unbounded observation space (float64, as that
      gym's ``Box`` kept the arrays it was given), episode RNG ``np_random`` from OS entropy
      (``seeding.np_random(None)``); then ``save_parameters``.
    * tasks: absolute parameter values, ``init * base ** U(-log_scale_limit, log_scale_limit)``
      per element from the global ``np.random``, drawn in the order body_mass (1.5),
      body_inertia (1.5), dof_damping (1.3), geom_friction (1.5); ``set_task`` writes them into
      the model, ``get_task`` returns them (the saved originals before any ``set_task``).
    * ``reset``: ``mj_resetData`` then the subclass's ``reset_model``.
    * ``log_diagnostics``: nothing (``rand_param_envs``' ``MetaEnv`` logs nothing).

    Args:
        log_scale_limit: half-width of the exponent's uniform range (3.0 in both envs).
    """

    RAND_PARAMS = ["body_mass", "dof_damping", "body_inertia", "geom_friction"]
    frame_skip = FRAME_SKIP

    def __init__(self, log_scale_limit: float) -> None:
        # rand_param_envs gym MujocoEnv.__init__(self, file_name, 4)
        self.init_mujoco(self._load_patched_model(), np.float64)
        # RandomEnv.__init__
        self.log_scale_limit = log_scale_limit
        self.rand_params = self.RAND_PARAMS
        self.save_parameters()

    def _load_patched_model(self) -> mujoco.MjModel:
        """The model of our env of the same name (subclasses: gymnasium's XML plus patches)."""
        raise NotImplementedError

    # --- rand_param_envs gym MujocoEnv (the rest: GymMujocoEnvParts)
    def state_vector(self) -> np.ndarray:
        """``[qpos, qvel]``."""
        return np.concatenate([self.data.qpos.flat, self.data.qvel.flat])

    # --- the walker's and the hopper's (identical in rand_param_envs) -----------------------
    def _get_obs(self) -> np.ndarray:
        return np.concatenate([self.data.qpos.flat[1:], np.clip(self.data.qvel.flat, -10, 10)])

    def reset_model(self) -> np.ndarray:
        """Set ``init_qpos/qvel + U(-0.005, 0.005)`` and return the observation."""
        qpos = self.init_qpos + self.np_random.uniform(low=-.005, high=.005, size=self.model.nq)
        qvel = self.init_qvel + self.np_random.uniform(low=-.005, high=.005, size=self.model.nv)
        self.set_state(qpos, qvel)
        return self._get_obs()

    # --- rand_param_envs RandomEnv ---------------------------------------------------------------
    def sample_tasks(self, n_tasks: int) -> list[dict[str, np.ndarray]]:
        """``n_tasks`` parameter sets from the global numpy RNG, as the original.

        Returns:
            A list of dicts ``field -> absolute values``; each field has the shape of the
            official bindings' ``MjModel`` field (mujoco-py 0.5.7 added a trailing axis of 1 to
            ``body_mass`` and ``dof_damping``; the draws, in count and order, are the same).
        """
        param_sets = []

        for _ in range(n_tasks):
            # body mass -> one multiplier for all body parts

            new_params = {}

            if "body_mass" in self.rand_params:
                body_mass_multiplyers = np.array(1.5) ** np.random.uniform(
                    -self.log_scale_limit, self.log_scale_limit, size=self.model.body_mass.shape)
                new_params["body_mass"] = self.init_params["body_mass"] * body_mass_multiplyers

            # body_inertia
            if "body_inertia" in self.rand_params:
                body_inertia_multiplyers = np.array(1.5) ** np.random.uniform(
                    -self.log_scale_limit, self.log_scale_limit, size=self.model.body_inertia.shape)
                new_params["body_inertia"] = body_inertia_multiplyers * self.init_params["body_inertia"]

            # damping -> different multiplier for different dofs/joints
            if "dof_damping" in self.rand_params:
                dof_damping_multipliers = np.array(1.3) ** np.random.uniform(
                    -self.log_scale_limit, self.log_scale_limit, size=self.model.dof_damping.shape)
                new_params["dof_damping"] = np.multiply(self.init_params["dof_damping"],
                                                        dof_damping_multipliers)

            # friction at the body components
            if "geom_friction" in self.rand_params:
                dof_damping_multipliers = np.array(1.5) ** np.random.uniform(
                    -self.log_scale_limit, self.log_scale_limit, size=self.model.geom_friction.shape)
                new_params["geom_friction"] = np.multiply(self.init_params["geom_friction"],
                                                          dof_damping_multipliers)

            param_sets.append(new_params)

        return param_sets

    def set_task(self, task: dict[str, np.ndarray]) -> None:
        """Write the task's absolute parameter values into the model."""
        for param, param_val in task.items():
            param_variable = getattr(self.model, param)
            assert param_variable.shape == param_val.shape, \
                "shapes of new parameter value and old one must match"
            param_variable[:] = param_val
        self.cur_params = task

    def get_task(self) -> dict[str, np.ndarray]:
        """Return the current task (the dict last given to :meth:`set_task`)."""
        return self.cur_params

    def save_parameters(self) -> None:
        """Copy the model's unscaled parameters (mujoco-py 0.5.7's getters returned copies)."""
        self.init_params = {}
        if "body_mass" in self.rand_params:
            self.init_params["body_mass"] = self.model.body_mass.copy()

        # body_inertia
        if "body_inertia" in self.rand_params:
            self.init_params["body_inertia"] = self.model.body_inertia.copy()

        # damping -> different multiplier for different dofs/joints
        if "dof_damping" in self.rand_params:
            self.init_params["dof_damping"] = self.model.dof_damping.copy()

        # friction at the body components
        if "geom_friction" in self.rand_params:
            self.init_params["geom_friction"] = self.model.geom_friction.copy()
        self.cur_params = self.init_params

    def log_diagnostics(self, paths: list[dict], prefix: str = "") -> None:
        """Log nothing, as ``rand_param_envs``' ``MetaEnv.log_diagnostics``."""


class OriginalWalker2DRandParamsEnv(OriginalRandomEnv):
    """``rand_param_envs``' ``Walker2DRandParamsEnv`` on ``mujoco`` and our walker model.

    Reward ``dx / dt + 1 - 1e-3 * sum(a**2)``; done unless ``0.8 < z < 2`` and
    ``-1 < angle < 1``; observation ``qpos[1:]``, ``clip(qvel, -10, 10)`` (17); reset noise
    ``U(-0.005, 0.005)`` on ``qpos`` and ``qvel``; empty info. Pickling/deep-copying through
    ``EzPickle`` with no arguments, as the original: a copy is a freshly constructed env (default
    ``log_scale_limit``, unscaled model, new ``np_random``).

    Args:
        log_scale_limit: half-width of the exponent's range, 3.0.
    """

    def __init__(self, log_scale_limit: float = 3.0) -> None:
        OriginalRandomEnv.__init__(self, log_scale_limit)
        EzPickle.__init__(self)

    def _load_patched_model(self) -> mujoco.MjModel:
        model = load_model(WALKER2D_XML)
        model.geom("foot_geom").friction[0] = GYM_WALKER2D_RIGHT_FOOT_FRICTION
        model.opt.timestep = RAND_PARAM_ENVS_TIMESTEP
        return model

    def step(self, a: np.ndarray) -> tuple[np.ndarray, float, bool, dict]:
        """One env step; returns ``(obs, reward, done, {})``."""
        posbefore = self.data.qpos[0]
        self.do_simulation(a, self.frame_skip)
        posafter, height, ang = self.data.qpos[0:3]
        alive_bonus = 1.0
        reward = ((posafter - posbefore) / self.dt)
        reward += alive_bonus
        reward -= 1e-3 * np.square(a).sum()
        done = not (height > 0.8 and height < 2.0 and
                    ang > -1.0 and ang < 1.0)
        ob = self._get_obs()
        return ob, reward, done, {}



class OriginalHopperRandParamsEnv(OriginalRandomEnv):
    """``rand_param_envs``' ``HopperRandParamsEnv`` on ``mujoco`` and our hopper model.

    Reward ``dx / dt + 1 - 1e-3 * sum(a**2)``; done unless the state is finite,
    ``|[qpos[2:], qvel]| < 100``, ``z > 0.7`` and ``|angle| < 0.2``; observation ``qpos[1:]``,
    ``clip(qvel, -10, 10)`` (11); reset noise ``U(-0.005, 0.005)``; empty info. Pickling as
    :class:`OriginalWalker2DRandParamsEnv`.

    Args:
        log_scale_limit: half-width of the exponent's range, 3.0.
    """

    def __init__(self, log_scale_limit: float = 3.0) -> None:
        OriginalRandomEnv.__init__(self, log_scale_limit)
        EzPickle.__init__(self)

    def _load_patched_model(self) -> mujoco.MjModel:
        model = load_model(HOPPER_XML)
        model.opt.timestep = RAND_PARAM_ENVS_TIMESTEP
        return model

    def step(self, a: np.ndarray) -> tuple[np.ndarray, float, bool, dict]:
        """One env step; returns ``(obs, reward, done, {})``."""
        posbefore = self.data.qpos[0]
        self.do_simulation(a, self.frame_skip)
        posafter, height, ang = self.data.qpos[0:3]
        alive_bonus = 1.0
        reward = (posafter - posbefore) / self.dt
        reward += alive_bonus
        reward -= 1e-3 * np.square(a).sum()
        s = self.state_vector()
        done = not (np.isfinite(s).all() and (np.abs(s[2:]) < 100).all() and
                    (height > .7) and (abs(ang) < .2))
        ob = self._get_obs()
        return ob, reward, done, {}



STANDALONE_ENVS: dict[str, type[OriginalRandomEnv]] = {
    "Walker2DRandParamsEnv": OriginalWalker2DRandParamsEnv,
    "HopperRandParamsEnv": OriginalHopperRandParamsEnv,
}
"""Our env class name -> the standalone env mirroring ``rand_param_envs``' class of that name."""
