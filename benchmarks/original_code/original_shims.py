"""Import-time shims that let the original ProMP code (TF1, gym 0.10.5) import on today's stack.

Also one run-time shim: numpy 1.x's ``reshape(a, newshape=...)`` for the original's TRPO
optimizer (``--algo trpo_maml``), set after the import.

A diagnostic outside our package: ``tf.compat.v1`` is used here on purpose (the original is TF1
graph code). See ``README.md`` in this folder for the list of shimmed names.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
import types

import gymnasium
import numpy as np
from gymnasium.utils import EzPickle


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


def _numpy_with_newshape() -> types.ModuleType:
    """numpy, whose ``reshape`` takes numpy 1.x's ``newshape`` argument (removed in numpy 2.4).

    Set as the ``np`` of the original's TRPO optimizer module only (its ``_unflatten_params``
    calls ``np.reshape(x, newshape=shape)``); every other name is numpy's own.
    """

    def reshape(a: object, newshape: object, order: str = "C") -> np.ndarray:
        """numpy 1.x's ``np.reshape(a, newshape, order='C')``."""
        return np.reshape(a, newshape, order=order)

    module = _ForwardingModule("numpy")
    module._target = np
    module.reshape = reshape
    return module


def install_other_shims() -> None:
    """Install the ``gym``, ``rand_param_envs``, ``scipy``, ``pyprind`` and ``mpi4py`` shims, and
    numpy 1.x's ``np.cast`` (removed in numpy 2; the original's TRPO optimizer module, imported by
    its ``optimizers`` package also when ProMP runs, calls it at import time)."""
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
    from meta_policy_search.meta_algos.trpo_maml import TRPOMAML
    from meta_policy_search.meta_trainer import Trainer
    from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy
    from meta_policy_search.samplers.meta_sample_processor import MetaSampleProcessor
    from meta_policy_search.samplers.meta_sampler import MetaSampler
    from meta_policy_search.utils import logger
    from meta_policy_search.utils.utils import ClassEncoder, set_seed

    sys.modules["meta_policy_search.optimizers.conjugate_gradient_optimizer"].np = _numpy_with_newshape()
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "meta_policy_search" and getattr(module, "__file__", None):
            if not os.path.realpath(module.__file__).startswith(original_repo + os.sep):
                raise RuntimeError(f"{name} was imported from {module.__file__}, not from {original_repo}")
    return dict(
        LinearFeatureBaseline=LinearFeatureBaseline,
        normalize=normalize,
        ProMP=ProMP,
        TRPOMAML=TRPOMAML,
        Trainer=Trainer,
        MetaGaussianMLPPolicy=MetaGaussianMLPPolicy,
        MetaSampleProcessor=MetaSampleProcessor,
        MetaSampler=MetaSampler,
        logger=logger,
        ClassEncoder=ClassEncoder,
        set_seed=set_seed,
    )
