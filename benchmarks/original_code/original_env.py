"""The original ProMP ``HalfCheetahRandDirecEnv`` re-written on the official ``mujoco`` bindings.

The original inherits gym 0.10.5's mujoco-py ``MujocoEnv``, which cannot run today. This module
has no dependency on the original package or on the shims of :mod:`original_shims`;
:func:`check_env` steps it beside our package's env.
"""

from __future__ import annotations

import os
import sys
import warnings

import gymnasium
import mujoco
import numpy as np
from gymnasium.utils import EzPickle

GYMNASIUM_ASSETS = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")
"""gymnasium's MuJoCo models, which our envs load (patched where the paper's physics differs)."""
HALF_CHEETAH_XML = os.path.join(GYMNASIUM_ASSETS, "half_cheetah.xml")
"""gymnasium's half-cheetah model (the model of gymnasium's HalfCheetah v5 and of our env)."""

FRAME_SKIP = 5

# ---------------------------------------------------------------------------------------------
# The env: the original's HalfCheetahRandDirecEnv on the official mujoco bindings
# ---------------------------------------------------------------------------------------------
def load_model(xml_path: str) -> mujoco.MjModel:
    """Compile ``xml_path``, dropping MuJoCo's ``settotalmass`` deprecation warning.

    MuJoCo's default handler would print it and append it to ``MUJOCO_LOG.TXT`` in the working
    directory once per compiled env (800 envs per run); other warnings become Python warnings.
    The same as our ``mujoco_envs.common.mujoco_warnings_to_python``, written again because this
    module must load without our package (the original's package has the same name).
    """

    def handler(message: str) -> None:
        if "settotalmass" not in message:
            warnings.warn(f"MuJoCo: {message}", RuntimeWarning, stacklevel=2)

    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(handler)
    try:
        return mujoco.MjModel.from_xml_path(xml_path)
    finally:
        mujoco.set_mju_user_warning(previous)


class GymMujocoEnvParts:
    """The parts of gym's mujoco-py ``MujocoEnv`` the standalone envs use, on ``mujoco``.

    gym 0.10.5's (for the cheetah) and ``rand_param_envs``' older copy (for the rand-params
    envs) agree on these: subclasses set ``model``, ``data``, ``frame_skip`` and define
    ``reset_model``.
    """

    model: mujoco.MjModel
    data: mujoco.MjData
    frame_skip: int

    def init_mujoco(self, model: mujoco.MjModel, space_dtype: type) -> None:
        """``MujocoEnv.__init__`` after loading the model: record ``init_qpos``/``init_qvel`` of
        the fresh data, take one zero-action step to size the observation, action space from
        ``actuator_ctrlrange`` and an unbounded observation space (Boxes of ``space_dtype``),
        episode RNG from OS entropy."""
        self.model = model
        self.data = mujoco.MjData(self.model)
        self.init_qpos = self.data.qpos.ravel().copy()
        self.init_qvel = self.data.qvel.ravel().copy()
        observation, _reward, done, _info = self.step(np.zeros(self.model.nu))
        assert not done
        self.obs_dim = observation.size
        bounds = self.model.actuator_ctrlrange.copy()
        low, high = bounds[:, 0].astype(space_dtype), bounds[:, 1].astype(space_dtype)
        self.action_space = gymnasium.spaces.Box(low=low, high=high, dtype=space_dtype)
        high = np.inf * np.ones(self.obs_dim, dtype=space_dtype)
        self.observation_space = gymnasium.spaces.Box(-high, high, dtype=space_dtype)
        self.seed()

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, dict]:
        """One env step; returns ``(obs, reward, done, info)`` (subclasses)."""
        raise NotImplementedError

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the episode RNG (``None``: fresh OS entropy, what gym's ``MujocoEnv`` did)."""
        self.np_random = np.random.RandomState(seed)
        return [seed]

    @property
    def dt(self) -> float:
        """Duration of one env step, ``timestep * frame_skip``."""
        return self.model.opt.timestep * self.frame_skip

    def do_simulation(self, ctrl: np.ndarray, n_frames: int) -> None:
        """Set the control and advance the physics ``n_frames`` MuJoCo steps."""
        self.data.ctrl[:] = ctrl
        for _ in range(n_frames):
            mujoco.mj_step(self.model, self.data)

    def set_state(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Set joint positions and velocities, then ``mj_forward`` (mujoco-py's ``set_state``;
        mujoco-py 0.5.7's also ran ``_compute_subtree``, ``mj_sensor`` and ``mj_energy``, which
        leave the state unchanged)."""
        assert qpos.shape == (self.model.nq,) and qvel.shape == (self.model.nv,)
        self.data.qpos[:] = qpos
        self.data.qvel[:] = qvel
        mujoco.mj_forward(self.model, self.data)

    def reset(self) -> np.ndarray:
        """``sim.reset()`` (``mj_resetData``) then :meth:`reset_model`; returns the observation."""
        mujoco.mj_resetData(self.model, self.data)
        return self.reset_model()

    def reset_model(self) -> np.ndarray:
        """Set the noisy initial state and return its observation (subclasses)."""
        raise NotImplementedError


class OriginalHalfCheetahRandDirecEnv(GymMujocoEnvParts, EzPickle):
    """The original ProMP ``HalfCheetahRandDirecEnv`` (gym 0.10.5 + mujoco-py) on ``mujoco``.

    Mirrors, line by line, ``meta_policy_search/envs/mujoco_envs/half_cheetah_rand_direc.py`` of
    the original and the parts of gym 0.10.5's ``MujocoEnv`` it uses:

    * model: gymnasium's ``half_cheetah.xml``, ``frame_skip`` 5 (``dt`` 0.05 s);
    * ``__init__``: records ``init_qpos``/``init_qvel`` of the fresh data, takes one zero-action
      step to size the observation (as gym's ``MujocoEnv.__init__``), action space from
      ``actuator_ctrlrange``, unbounded observation space (float32 Boxes, as gym 0.10.5
      auto-detected), and an episode RNG ``np_random`` seeded from OS entropy (gym's
      ``seed()`` with no seed);
    * ``step``: ``ctrl = action``, ``frame_skip`` x ``mj_step``, reward
      ``d * (x_after - x_before) / dt - 0.5 * 0.1 * sum(action**2)``, never done, info
      ``reward_run``/``reward_ctrl``;
    * ``reset``: ``mj_resetData`` then ``qpos = init_qpos + U(-0.1, 0.1)``,
      ``qvel = init_qvel + 0.1 * randn`` from ``np_random``, ``mj_forward``;
    * tasks from the global ``np.random`` (``np.random.choice((-1.0, 1.0), (n,))``);
    * pickling/deep-copying through ``EzPickle``: a copy is a freshly constructed env (new
      ``np_random`` from OS entropy, task back to the constructor's), as the original's.

    Args:
        goal_direction: initial task, ``-1.0`` or ``1.0``; ``None`` (or 0) means ``1.0``.
    """

    frame_skip = FRAME_SKIP

    def __init__(self, goal_direction: float | None = None) -> None:
        self.goal_direction = goal_direction if goal_direction else 1.0
        # gym 0.10.5 MujocoEnv.__init__(self, 'half_cheetah.xml', 5)
        self.init_mujoco(load_model(HALF_CHEETAH_XML), np.float32)
        EzPickle.__init__(self, goal_direction)

    # --- the original HalfCheetahRandDirecEnv ----------------------------------------------------
    def sample_tasks(self, n_tasks: int) -> np.ndarray:
        """``n_tasks`` directions from the global numpy RNG, as the original."""
        # for fwd/bwd env, goal direc is backwards if - 1.0, forwards if + 1.0
        return np.random.choice((-1.0, 1.0), (n_tasks,))

    def set_task(self, task: float) -> None:
        """Set the direction ``d``."""
        self.goal_direction = task

    def get_task(self) -> float:
        """Return the direction ``d``."""
        return self.goal_direction

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, dict[str, float]]:
        """One env step; returns ``(obs, reward, done=False, info)`` (gym 0.10.5's 4-tuple)."""
        xposbefore = self.data.qpos[0]
        self.do_simulation(action, self.frame_skip)
        xposafter = self.data.qpos[0]
        ob = self._get_obs()
        reward_ctrl = -0.5 * 0.1 * np.square(action).sum()
        reward_run = self.goal_direction * (xposafter - xposbefore) / self.dt
        reward = reward_ctrl + reward_run
        done = False
        return ob, reward, done, dict(reward_run=reward_run, reward_ctrl=reward_ctrl)

    def _get_obs(self) -> np.ndarray:
        return np.concatenate([self.data.qpos.flat[1:], self.data.qvel.flat])

    def reset_model(self) -> np.ndarray:
        """Set the noisy initial state and return its observation."""
        qpos = self.init_qpos + self.np_random.uniform(low=-0.1, high=0.1, size=self.model.nq)
        qvel = self.init_qvel + self.np_random.randn(self.model.nv) * 0.1
        self.set_state(qpos, qvel)
        return self._get_obs()

    def log_diagnostics(self, paths: list[dict], prefix: str = "") -> None:
        """Log the original's diagnostics (its ``AvgCtrlCost`` is a std, kept as in the original).

        Imports the logger of the ``meta_policy_search`` package loaded in this process, which in
        a training run is the original's.
        """
        from meta_policy_search.utils import logger

        fwrd_vel = [path["env_infos"]["reward_run"] for path in paths]
        final_fwrd_vel = [path["env_infos"]["reward_run"][-1] for path in paths]
        ctrl_cost = [-path["env_infos"]["reward_ctrl"] for path in paths]

        logger.logkv(prefix + "AvgForwardVel", np.mean(fwrd_vel))
        logger.logkv(prefix + "AvgFinalForwardVel", np.mean(final_fwrd_vel))
        logger.logkv(prefix + "AvgCtrlCost", np.std(ctrl_cost))

    def __str__(self) -> str:
        return "HalfCheetahRandDirecEnv"


# ---------------------------------------------------------------------------------------------
# --check_env: our package's env vs OriginalHalfCheetahRandDirecEnv
# ---------------------------------------------------------------------------------------------
def check_env(n_episodes: int = 10, n_steps: int = 100, seed: int = 0) -> dict[str, float]:
    """Step our package's env and :class:`OriginalHalfCheetahRandDirecEnv` side by side.

    Run in a process where ``meta_policy_search`` is OUR package (``PYTHONPATH=.`` from the repository root).
    For each episode: a task ``d`` (alternating -1/+1), both envs reset, then both set to the
    same random ``qpos``/``qvel`` (the original's reset distribution), then ``n_steps`` steps
    with the same random actions, uniform in [-1.2, 1.2] (a little beyond the control range,
    which MuJoCo clamps while the cost uses the action as given). Compares observations (also
    right after setting the state) and rewards.

    Returns:
        Max absolute differences ``obs``, ``reward`` and ``reward_run``, the number of compared
        steps, and the file our env class came from.
    """
    from meta_policy_search.envs.mujoco_envs.half_cheetah_rand_direc import HalfCheetahRandDirecEnv

    ours = HalfCheetahRandDirecEnv()
    standalone = OriginalHalfCheetahRandDirecEnv()
    ours_file = sys.modules[HalfCheetahRandDirecEnv.__module__].__file__
    rng = np.random.default_rng(seed)
    assert ours.dt == standalone.dt, (ours.dt, standalone.dt)
    assert ours.observation_space.shape == standalone.observation_space.shape
    assert np.array_equal(ours.action_space.low, standalone.action_space.low)
    assert np.array_equal(ours.action_space.high, standalone.action_space.high)
    max_obs = max_rew = max_run = 0.0
    n_compared = 0
    for episode in range(n_episodes):
        task = (-1.0, 1.0)[episode % 2]
        ours.set_task(task)
        standalone.set_task(task)
        ours.reset(seed=int(rng.integers(2**31)))
        standalone.reset()
        qpos = standalone.init_qpos + rng.uniform(-0.1, 0.1, standalone.model.nq)
        qvel = standalone.init_qvel + 0.1 * rng.standard_normal(standalone.model.nv)
        ours.set_state(qpos, qvel)
        standalone.set_state(qpos, qvel)
        max_obs = max(max_obs, float(np.max(np.abs(ours._get_obs() - standalone._get_obs()))))
        for _ in range(n_steps):
            action = rng.uniform(-1.2, 1.2, standalone.model.nu)
            obs_a, rew_a, terminated, truncated, info_a = ours.step(action.copy())
            obs_b, rew_b, done_b, info_b = standalone.step(action.copy())
            assert not terminated and not truncated and not done_b
            max_obs = max(max_obs, float(np.max(np.abs(obs_a - obs_b))))
            max_rew = max(max_rew, abs(float(rew_a) - float(rew_b)))
            max_run = max(max_run, abs(float(info_a["reward_forward"]) - float(info_b["reward_run"])))
            n_compared += 1
    return {"max_abs_obs_diff": max_obs, "max_abs_reward_diff": max_rew,
            "max_abs_reward_run_diff": max_run, "n_steps_compared": n_compared, "our_env_file": ours_file}
