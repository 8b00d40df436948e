"""Run the ORIGINAL ProMP code (jonasrothfuss/ProMP, TF1 graph code) on HalfCheetahRandDirecEnv.

A diagnostic outside our package: it answers whether the original algorithm code, on the same
physics as our reimplementation (MuJoCo 3+ through the official ``mujoco`` bindings, gymnasium's
``half_cheetah.xml``), "takes off" as late as ours does. The original code is imported unmodified
from ``--original_repo`` (default ``/work/orig_promp``, master 93ae339); nothing of it is copied
here. Before importing it, this script installs import-time shims (see ``README.md`` in this
folder for the full list):

* ``tensorflow`` -> ``tf.compat.v1`` with v2 behaviour disabled (graph mode, sessions,
  placeholders, ref variables). Using ``tf.compat.v1`` is fine here because this is a diagnostic
  outside our package. Added: ``contrib.layers.xavier_initializer`` (=
  ``glorot_uniform_initializer``) and ``layers.dense`` (Keras 3 removed ``tf.compat.v1.layers.dense``;
  the replacement creates the same ``<name>/kernel`` and ``<name>/bias`` variables, same
  initializers, same ops).
* ``gym`` (0.10.5 is not installable) -> gymnasium's ``Env``, ``spaces``, ``EzPickle``, and a
  ``MujocoEnv`` that cannot be instantiated (only needed as a base class at import time).
* ``rand_param_envs.gym.spaces.Box`` -> a class nothing is an instance of.
* ``scipy.signal.lfilter`` -> the one filter the original uses (discounted cumulative sum),
  ``y[n] = x[n] + d * y[n-1]``, the same float operations as scipy's.
* ``pyprind.ProgBar`` -> a silent progress bar; ``mpi4py.MPI.COMM_WORLD.Get_rank()`` -> 0.
* ``numpy.cast`` (removed in numpy 2) -> ``np.asarray(x, dtype)``; only the original's TRPO
  optimizer uses it, at import time.

The env, :class:`OriginalHalfCheetahRandDirecEnv`, is written here: the original's
``HalfCheetahRandDirecEnv`` inherits gym 0.10.5's mujoco-py ``MujocoEnv``, which cannot run. It
reproduces the original's semantics on the official bindings and is importable without the
original package or the shims (``--check_env`` compares it with our package's env).

Usage (see ``README.md``)::

    nice -n 10 python benchmarks/original_code/run_original_promp.py --seed 1 --n_itr 30 \\
        --dump_path /work/orig_runs/promp/HalfCheetahRandDirecEnv/seed_1
    PYTHONPATH=/work/wtorig python benchmarks/original_code/run_original_promp.py --check_env
"""

from __future__ import annotations

import argparse
import importlib.machinery
import json
import os
import platform
import socket
import subprocess
import sys
import time
import types
import warnings

import gymnasium
import mujoco
import numpy as np
from gymnasium.utils import EzPickle

ORIGINAL_REPO_DEFAULT = "/work/orig_promp"
ORIGINAL_COMMIT = "93ae339"
"""Commit of jonasrothfuss/ProMP (master) extracted at ``--original_repo``."""

HALF_CHEETAH_XML = os.path.join(
    os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "half_cheetah.xml"
)
"""gymnasium's half-cheetah model (the model of gymnasium's HalfCheetah v5 and of our env)."""

FRAME_SKIP = 5

PAPER_CONFIG = {
    # the keys and their order follow run_scripts/pro-mp_run_mujoco.py's default config
    "seed": 1,
    "baseline": "LinearFeatureBaseline",
    "env": "HalfCheetahRandDirecEnv",
    # sampler config
    "rollouts_per_meta_task": 20,
    "max_path_length": 100,
    "parallel": False,
    # sample processor config
    "discount": 0.99,
    "gae_lambda": 1,
    "normalize_adv": True,
    # policy config
    "hidden_sizes": (64, 64),
    "learn_std": True,  # in the original's config but not passed to the policy (default True)
    # ProMP config
    "inner_lr": 0.1,
    "learning_rate": 1e-3,
    "num_promp_steps": 5,
    "clip_eps": 0.3,
    "target_inner_step": 0.01,
    "init_inner_kl_penalty": 5e-4,
    "adaptive_inner_kl_penalty": False,
    "n_itr": 30,
    "meta_batch_size": 40,
    "num_inner_grad_steps": 1,
}
"""The run's configuration: the original run script's defaults except ``n_itr`` (script: 1001;
here ``--n_itr``, default 30) and ``parallel`` (script: True; here ``--parallel``, default
iterative, faster on 2 cores). Every value equals our committed HalfCheetah params.json."""


# ---------------------------------------------------------------------------------------------
# The env: the original's HalfCheetahRandDirecEnv on the official mujoco bindings
# ---------------------------------------------------------------------------------------------
def _load_model(xml_path: str) -> mujoco.MjModel:
    """Compile ``xml_path``, dropping MuJoCo's ``settotalmass`` deprecation warning.

    MuJoCo's default handler would print it and append it to ``MUJOCO_LOG.TXT`` in the working
    directory once per compiled env (800 envs per run); other warnings become Python warnings.
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


class OriginalHalfCheetahRandDirecEnv(EzPickle):
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
        self.model = _load_model(HALF_CHEETAH_XML)
        self.data = mujoco.MjData(self.model)
        self.init_qpos = self.data.qpos.ravel().copy()
        self.init_qvel = self.data.qvel.ravel().copy()
        observation, _reward, done, _info = self.step(np.zeros(self.model.nu))
        assert not done
        self.obs_dim = observation.size
        bounds = self.model.actuator_ctrlrange.copy()
        low, high = bounds[:, 0].astype(np.float32), bounds[:, 1].astype(np.float32)
        self.action_space = gymnasium.spaces.Box(low=low, high=high, dtype=np.float32)
        high = np.inf * np.ones(self.obs_dim, dtype=np.float32)
        self.observation_space = gymnasium.spaces.Box(-high, high, dtype=np.float32)
        self.seed()
        EzPickle.__init__(self, goal_direction)

    # --- gym 0.10.5 MujocoEnv ------------------------------------------------------------------
    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the episode RNG (``None``: fresh OS entropy, what gym's ``MujocoEnv`` did)."""
        self.np_random = np.random.RandomState(seed)
        return [seed]

    @property
    def dt(self) -> float:
        """Duration of one env step, ``timestep * frame_skip`` (0.05 s)."""
        return self.model.opt.timestep * self.frame_skip

    def do_simulation(self, ctrl: np.ndarray, n_frames: int) -> None:
        """Set the control and advance the physics ``n_frames`` MuJoCo steps."""
        self.data.ctrl[:] = ctrl
        for _ in range(n_frames):
            mujoco.mj_step(self.model, self.data)

    def set_state(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Set joint positions and velocities, then ``mj_forward`` (mujoco-py's ``set_state``)."""
        assert qpos.shape == (self.model.nq,) and qvel.shape == (self.model.nv,)
        self.data.qpos[:] = qpos
        self.data.qvel[:] = qvel
        mujoco.mj_forward(self.model, self.data)

    def reset(self) -> np.ndarray:
        """``sim.reset()`` (``mj_resetData``) then :meth:`reset_model`; returns the observation."""
        mujoco.mj_resetData(self.model, self.data)
        return self.reset_model()

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
# Import-time shims
# ---------------------------------------------------------------------------------------------
def _module(name: str, **attrs: object) -> types.ModuleType:
    """A new module ``name`` with ``attrs``, registered in ``sys.modules``."""
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


class _ForwardingModule(types.ModuleType):
    """A module whose missing attributes are looked up on ``_target``."""

    _target: object

    def __getattr__(self, name: str) -> object:
        return getattr(self._target, name)


def install_tensorflow_shim() -> types.ModuleType:
    """Make ``import tensorflow`` return ``tf.compat.v1`` in graph mode, plus the removed names.

    Returns:
        The shim module now in ``sys.modules['tensorflow']``.
    """
    import tensorflow as real_tf

    v1 = real_tf.compat.v1
    v1.disable_v2_behavior()  # graph mode, ref variables, v1 TensorShape (as TF 1.x)

    def xavier_initializer(uniform: bool = True, seed: int | None = None, dtype: object = v1.float32):
        """TF1 ``tf.contrib.layers.xavier_initializer``: uniform in +-sqrt(6 / (fan_in + fan_out))."""
        if not uniform:
            raise NotImplementedError("the original uses only the uniform xavier initializer")
        return v1.glorot_uniform_initializer(seed=seed, dtype=dtype)

    def dense(
        inputs,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer=None,
        bias_initializer=None,
        name=None,
        reuse=None,
    ):
        """TF1 ``tf.layers.dense`` for rank-2 inputs: variables ``<name>/kernel`` and
        ``<name>/bias`` (created in that order, trainable), ``activation(x @ kernel + bias)``."""
        if bias_initializer is None:
            bias_initializer = v1.zeros_initializer()  # TF1's default
        if inputs.shape.ndims != 2:
            raise NotImplementedError("the shim's dense supports rank-2 inputs only")
        with v1.variable_scope(name, default_name="dense", reuse=reuse):
            dtype = inputs.dtype.base_dtype
            kernel = v1.get_variable(
                "kernel", shape=[inputs.shape[-1], units], dtype=dtype, initializer=kernel_initializer
            )
            outputs = v1.matmul(inputs, kernel)
            if use_bias:
                bias = v1.get_variable("bias", shape=[units], dtype=dtype, initializer=bias_initializer)
                outputs = v1.nn.bias_add(outputs, bias)
            if activation is not None:
                outputs = activation(outputs)
        return outputs

    layers = _ForwardingModule("tensorflow.layers")
    layers._target = v1.layers
    layers.dense = dense

    shim = _ForwardingModule("tensorflow")
    shim._target = v1
    shim.__path__ = list(real_tf.__path__)  # submodule imports (tensorflow.python...) still resolve
    shim.__spec__ = importlib.machinery.ModuleSpec("tensorflow", None, is_package=True)
    shim.layers = layers
    shim.contrib = types.SimpleNamespace(layers=types.SimpleNamespace(xavier_initializer=xavier_initializer))
    shim.__version__ = real_tf.__version__
    sys.modules["tensorflow"] = shim
    return shim


class _UnavailableMujocoEnv(gymnasium.Env):
    """gym 0.10.5's mujoco-py ``MujocoEnv``: importable as a base class, not instantiable."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError(
            "gym 0.10.5's mujoco-py MujocoEnv is not available; use OriginalHalfCheetahRandDirecEnv"
        )


class _NeverInstance:
    """Stand-in for ``rand_param_envs.gym.spaces.Box``: no space is an instance of it."""


def _lfilter(b, a, x, axis=-1):
    """``scipy.signal.lfilter`` for the original's only use, ``lfilter([1], [1, -d], x, axis=0)``.

    ``y[n] = x[n] + d * y[n-1]`` along axis 0, the same float operations as scipy's direct-form
    II transposed filter for these coefficients.
    """
    b, a = np.asarray(b, dtype=np.float64), np.asarray(a, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    if b.shape != (1,) or b[0] != 1.0 or a.shape != (2,) or a[0] != 1.0 or axis not in (0, -x.ndim):
        raise NotImplementedError("the shim implements lfilter([1], [1, -d], x, axis=0) only")
    d = -a[1]
    y = np.empty_like(x)
    acc = np.zeros_like(x[0]) if x.shape[0] else None
    for n in range(x.shape[0]):
        acc = x[n] + d * acc
        y[n] = acc
    return y


class _SilentProgBar:
    """``pyprind.ProgBar`` without output."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def update(self, *args: object, **kwargs: object) -> None:
        """Do nothing."""

    def stop(self) -> None:
        """Do nothing."""


class _NumpyCast:
    """numpy 1.x's ``np.cast``: ``np.cast['float32'](x)`` is ``np.asarray(x, dtype='float32')``."""

    def __getitem__(self, dtype: object):
        return lambda x: np.asarray(x, dtype=dtype)


def install_other_shims() -> None:
    """Install the ``gym``, ``rand_param_envs``, ``scipy``, ``pyprind`` and ``mpi4py`` shims, and
    numpy 1.x's ``np.cast`` (removed in numpy 2; the original's TRPO optimizer, imported by its
    ``optimizers`` package but not used by ProMP, calls it at import time)."""
    if not hasattr(np, "cast"):
        np.cast = _NumpyCast()
    gym = _module("gym", __path__=[])
    gym.core = _module("gym.core", Env=gymnasium.Env)
    gym.Env = gymnasium.Env
    sys.modules["gym.spaces"] = gymnasium.spaces
    gym.spaces = gymnasium.spaces
    gym.utils = _module("gym.utils", EzPickle=EzPickle, __path__=[])
    gym.envs = _module("gym.envs", __path__=[])
    gym.envs.mujoco = _module("gym.envs.mujoco", MujocoEnv=_UnavailableMujocoEnv, __path__=[])
    gym.envs.mujoco.mujoco_env = _module("gym.envs.mujoco.mujoco_env", MujocoEnv=_UnavailableMujocoEnv)

    rpe = _module("rand_param_envs", __path__=[])
    rpe.gym = _module("rand_param_envs.gym", __path__=[])
    rpe.gym.spaces = _module("rand_param_envs.gym.spaces", Box=_NeverInstance)

    scipy = _module("scipy", __path__=[])
    scipy.signal = _module("scipy.signal", lfilter=_lfilter)

    _module("pyprind", ProgBar=_SilentProgBar)

    comm = types.SimpleNamespace(Get_rank=lambda: 0, Get_size=lambda: 1)
    mpi4py = _module("mpi4py", __path__=[])
    mpi4py.MPI = _module("mpi4py.MPI", COMM_WORLD=comm)


def import_original(original_repo: str) -> dict[str, object]:
    """Install the shims and import the original's classes from ``original_repo``.

    Our package (also named ``meta_policy_search``, installed editable in the venv) is made
    unimportable in this process: its finder is removed from ``sys.meta_path``, and the original
    repository is put first on ``sys.path``. Checks that every imported module comes from
    ``original_repo``.

    Returns:
        The names the original run script uses, mapped to the original's objects.
    """
    original_repo = os.path.realpath(original_repo)
    if any(name == "meta_policy_search" or name.startswith("meta_policy_search.") for name in sys.modules):
        raise RuntimeError("a meta_policy_search package is already imported in this process")
    sys.meta_path[:] = [f for f in sys.meta_path if "meta_policy_search" not in getattr(f, "__module__", "")]
    sys.path[:] = [original_repo] + [p for p in sys.path if os.path.realpath(p or ".") != original_repo]

    install_tensorflow_shim()
    install_other_shims()

    from meta_policy_search.baselines.linear_baseline import LinearFeatureBaseline
    from meta_policy_search.envs.normalized_env import normalize
    from meta_policy_search.meta_algos.pro_mp import ProMP
    from meta_policy_search.meta_trainer import Trainer
    from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy
    from meta_policy_search.samplers.meta_sample_processor import MetaSampleProcessor
    from meta_policy_search.samplers.meta_sampler import MetaSampler
    from meta_policy_search.utils import logger
    from meta_policy_search.utils.utils import ClassEncoder, set_seed

    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "meta_policy_search" and getattr(module, "__file__", None):
            if not os.path.realpath(module.__file__).startswith(original_repo + os.sep):
                raise RuntimeError(f"{name} was imported from {module.__file__}, not from {original_repo}")
    return dict(
        LinearFeatureBaseline=LinearFeatureBaseline,
        normalize=normalize,
        ProMP=ProMP,
        Trainer=Trainer,
        MetaGaussianMLPPolicy=MetaGaussianMLPPolicy,
        MetaSampleProcessor=MetaSampleProcessor,
        MetaSampler=MetaSampler,
        logger=logger,
        ClassEncoder=ClassEncoder,
        set_seed=set_seed,
    )


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------
def run(config: dict, orig: dict[str, object]) -> None:
    """The original ``run_scripts/pro-mp_run_mujoco.py`` ``main(config)``, with our env class.

    Args:
        config: the run configuration (keys of :data:`PAPER_CONFIG`).
        orig: the original's objects, from :func:`import_original`.
    """
    orig["set_seed"](config["seed"])

    baseline = orig["LinearFeatureBaseline"]()

    env = OriginalHalfCheetahRandDirecEnv()  # instantiate env
    env = orig["normalize"](env)  # apply normalize wrapper to env

    policy = orig["MetaGaussianMLPPolicy"](
        name="meta-policy",
        obs_dim=np.prod(env.observation_space.shape),
        action_dim=np.prod(env.action_space.shape),
        meta_batch_size=config["meta_batch_size"],
        hidden_sizes=config["hidden_sizes"],
    )

    sampler = orig["MetaSampler"](
        env=env,
        policy=policy,
        rollouts_per_meta_task=config["rollouts_per_meta_task"],  # This batch_size is confusing
        meta_batch_size=config["meta_batch_size"],
        max_path_length=config["max_path_length"],
        parallel=config["parallel"],
    )

    sample_processor = orig["MetaSampleProcessor"](
        baseline=baseline,
        discount=config["discount"],
        gae_lambda=config["gae_lambda"],
        normalize_adv=config["normalize_adv"],
    )

    algo = orig["ProMP"](
        policy=policy,
        inner_lr=config["inner_lr"],
        meta_batch_size=config["meta_batch_size"],
        num_inner_grad_steps=config["num_inner_grad_steps"],
        learning_rate=config["learning_rate"],
        num_ppo_steps=config["num_promp_steps"],
        clip_eps=config["clip_eps"],
        target_inner_step=config["target_inner_step"],
        init_inner_kl_penalty=config["init_inner_kl_penalty"],
        adaptive_inner_kl_penalty=config["adaptive_inner_kl_penalty"],
    )

    trainer = orig["Trainer"](
        algo=algo,
        policy=policy,
        env=env,
        sampler=sampler,
        sample_processor=sample_processor,
        n_itr=config["n_itr"],
        num_inner_grad_steps=config["num_inner_grad_steps"],
    )

    trainer.train()


def _git(args: list[str], cwd: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
        return done.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def provenance(args: argparse.Namespace) -> dict[str, object]:
    """Where this run came from: commits, library versions, host, command line."""
    import tensorflow as tf  # the shim in a run; its __version__ is the real one

    here = os.path.dirname(os.path.realpath(__file__))
    return {
        "script": os.path.realpath(__file__),
        "wtorig_commit": _git(["rev-parse", "HEAD"], here),
        "wtorig_dirty": bool(_git(["status", "--porcelain"], here)),
        "original_repo": os.path.realpath(args.original_repo),
        "original_commit": ORIGINAL_COMMIT,
        "env_class": f"{__name__}.{OriginalHalfCheetahRandDirecEnv.__name__}",
        "env_xml": HALF_CHEETAH_XML,
        "python": sys.version.split()[0],
        "tensorflow": tf.__version__,
        "numpy": np.__version__,
        "mujoco": mujoco.__version__,
        "gymnasium": gymnasium.__version__,
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "command_line": [sys.executable, *sys.argv],
        "start_time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


# ---------------------------------------------------------------------------------------------
# --check_env: our package's env vs OriginalHalfCheetahRandDirecEnv
# ---------------------------------------------------------------------------------------------
def check_env(n_episodes: int = 10, n_steps: int = 100, seed: int = 0) -> dict[str, float]:
    """Step our package's env and :class:`OriginalHalfCheetahRandDirecEnv` side by side.

    Run in a process where ``meta_policy_search`` is OUR package (``PYTHONPATH=/work/wtorig``).
    For each episode: a task ``d`` (alternating -1/+1), both envs reset, then both set to the
    same random ``qpos``/``qvel`` (the original's reset distribution), then ``n_steps`` steps
    with the same random actions, uniform in [-1.2, 1.2] (a little beyond the control range,
    which MuJoCo clamps while the cost uses the action as given). Compares observations (also
    right after setting the state) and rewards.

    Returns:
        Max absolute differences ``obs``, ``reward`` and ``reward_run``, the number of compared
        steps, and the file our env class came from.
    """
    from meta_policy_search.envs.mujoco_envs import HalfCheetahRandDirecEnv

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


# ---------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line arguments (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--original_repo", default=ORIGINAL_REPO_DEFAULT,
                        help="path of the original ProMP repository (its meta_policy_search is imported)")
    parser.add_argument("--seed", type=int, default=PAPER_CONFIG["seed"])
    parser.add_argument("--n_itr", type=int, default=PAPER_CONFIG["n_itr"])
    parser.add_argument("--dump_path", default=None,
                        help="log directory (progress.csv, params.json, provenance.json); "
                             "default /tmp/orig_promp/run_<time>")
    parser.add_argument("--parallel", action="store_true",
                        help="the original's MetaParallelEnvExecutor (one process per task) instead of the "
                             "iterative executor (faster on 2 cores, see README)")
    parser.add_argument("--meta_batch_size", type=int, default=PAPER_CONFIG["meta_batch_size"])
    parser.add_argument("--rollouts_per_meta_task", type=int, default=PAPER_CONFIG["rollouts_per_meta_task"])
    parser.add_argument("--max_path_length", type=int, default=PAPER_CONFIG["max_path_length"])
    parser.add_argument("--check_env", action="store_true",
                        help="compare our package's env with the standalone env and exit (run with "
                             "PYTHONPATH=<our repo>; the original is not imported)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``--check_env``, or a training run of the original ProMP code."""
    args = parse_args(argv)
    if args.check_env:
        print(json.dumps(check_env(), indent=2))
        return

    orig = import_original(args.original_repo)
    config = dict(PAPER_CONFIG)
    config.update(
        seed=args.seed,
        n_itr=args.n_itr,
        parallel=args.parallel,
        meta_batch_size=args.meta_batch_size,
        rollouts_per_meta_task=args.rollouts_per_meta_task,
        max_path_length=args.max_path_length,
    )
    dump_path = args.dump_path or f"/tmp/orig_promp/run_{int(time.time())}"

    # as the original run script: configure the logger, dump the configuration, train
    orig["logger"].configure(dir=dump_path, format_strs=["stdout", "log", "csv"], snapshot_mode="last_gap")
    with open(os.path.join(dump_path, "params.json"), "w") as f:
        json.dump(config, f, cls=orig["ClassEncoder"])
    with open(os.path.join(dump_path, "provenance.json"), "w") as f:
        json.dump(provenance(args), f, indent=2)
    run(config, orig)


if __name__ == "__main__":
    main()
