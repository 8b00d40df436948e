"""The built-in envs, one entry each (:data:`BUILT_IN_ENVS`), and :func:`make_env`, which builds
any meta-environment by name.

A built-in env is named by its class name; a user env by ``package.module:ClassName``
(:mod:`~meta_policy_search.envs.env_spec`). An env's module is imported only when it is built, so
the point envs (and this module) work without MuJoCo.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any, cast

from meta_policy_search.envs.base import MetaEnv
from meta_policy_search.envs.env_spec import (
    ENV_SPEC_FORMAT,
    check_env_instance,
    is_env_spec,
    load_env_class,
    suggest_spec,
)
from meta_policy_search.envs.metaworld_envs import make_metaworld_env

POINT_ENVS_PACKAGE = "meta_policy_search.envs.point_envs"
MUJOCO_ENVS_PACKAGE = "meta_policy_search.envs.mujoco_envs"

BUILT_IN_ENVS: dict[str, str] = {
    "PointEnvRandGoal": f"{POINT_ENVS_PACKAGE}.point_env_rand_goal",
    "MetaPointEnvCorner": f"{POINT_ENVS_PACKAGE}.corner_envs",
    "MetaPointEnvMomentum": f"{POINT_ENVS_PACKAGE}.corner_envs",
    "MetaPointEnvWalls": f"{POINT_ENVS_PACKAGE}.walls_env",
    "HalfCheetahRandDirecEnv": f"{MUJOCO_ENVS_PACKAGE}.half_cheetah_rand_direc",
    "HalfCheetahRandVelEnv": f"{MUJOCO_ENVS_PACKAGE}.half_cheetah_rand_vel",
    "AntRandDirecEnv": f"{MUJOCO_ENVS_PACKAGE}.ant_rand_direc",
    "AntRandDirec2DEnv": f"{MUJOCO_ENVS_PACKAGE}.ant_rand_direc_2d",
    "AntRandGoalEnv": f"{MUJOCO_ENVS_PACKAGE}.ant_rand_goal",
    "HumanoidRandDirecEnv": f"{MUJOCO_ENVS_PACKAGE}.humanoid_rand_direc",
    "HumanoidRandDirec2DEnv": f"{MUJOCO_ENVS_PACKAGE}.humanoid_rand_direc_2d",
    "Walker2DRandDirecEnv": f"{MUJOCO_ENVS_PACKAGE}.walker2d_rand_direc",
    "Walker2DRandVelEnv": f"{MUJOCO_ENVS_PACKAGE}.walker2d_rand_vel",
    "SwimmerRandVelEnv": f"{MUJOCO_ENVS_PACKAGE}.swimmer_rand_vel",
    "HopperRandParamsEnv": f"{MUJOCO_ENVS_PACKAGE}.hopper_rand_params",
    "Walker2DRandParamsEnv": f"{MUJOCO_ENVS_PACKAGE}.walker2d_rand_params",
}
"""Every built-in env: class name -> the module that defines it (imported when the env is built).
Adding an env to the suite is one module plus one line here (and its horizon in the paper
configs, see :doc:`/contributing`)."""

ENV_CLASS_NAMES: tuple[str, ...] = tuple(BUILT_IN_ENVS)
"""Every built-in env class name :func:`make_env` accepts (it also accepts Meta-World benchmark
names and user envs given as ``package.module:ClassName``)."""

POINT_ENV_CLASS_NAMES: tuple[str, ...] = tuple(
    name for name, module in BUILT_IN_ENVS.items() if module.startswith(POINT_ENVS_PACKAGE + ".")
)
"""Names of the pure-numpy point envs."""

MUJOCO_ENV_CLASS_NAMES: tuple[str, ...] = tuple(
    name for name, module in BUILT_IN_ENVS.items() if module.startswith(MUJOCO_ENVS_PACKAGE + ".")
)
"""Names of the MuJoCo meta-envs (their modules import MuJoCo)."""

METAWORLD_NAME_PREFIXES = ("ML1-", "ML10")
"""Names starting with these go to :mod:`meta_policy_search.envs.metaworld_envs` (imported lazily:
Meta-World is an optional install), e.g. ``'ML1-reach-v3'`` or ``'ML10'``."""


def env_class(name: str) -> type[MetaEnv]:
    """The class of the built-in env ``name``, importing its module.

    Args:
        name: a key of :data:`BUILT_IN_ENVS`.

    Raises:
        ValueError: if ``name`` is not a built-in env, or its module does not define a MetaEnv
            class of that name.
        ImportError: if the module cannot be imported (e.g. MuJoCo is not installed).
    """
    if name not in BUILT_IN_ENVS:
        raise ValueError(f"{name!r} is not a built-in env; valid names: {', '.join(BUILT_IN_ENVS)}")
    module = importlib.import_module(BUILT_IN_ENVS[name])
    cls = getattr(module, name, None)
    if not (isinstance(cls, type) and issubclass(cls, MetaEnv)):
        raise ValueError(f"{module.__name__} does not define a MetaEnv class {name!r}")
    return cls


def make_env(name: str, **kwargs: Any) -> MetaEnv:
    """Construct a meta-environment by class name or by ``package.module:ClassName``.

    Args:
        name: a class name from :data:`ENV_CLASS_NAMES`, e.g. ``'PointEnvRandGoal'`` or
            ``'HalfCheetahRandDirecEnv'``; a Meta-World benchmark: ``'ML1-<env>'`` (e.g.
            ``'ML1-reach-v3'``) or ``'ML10'``; or a user env class as ``'mypkg.tasks:MyEnv'``,
            imported and checked against the MetaEnv protocol
            (:func:`~meta_policy_search.envs.env_spec.load_env_class`).
        **kwargs: keyword arguments of that class's constructor (e.g. ``reward_type='dense'``).

    Returns:
        A new, un-normalized env instance (wrap it with
        :func:`~meta_policy_search.envs.normalize` if the policy should act in ``[-s, s]``).

    Raises:
        ValueError: if ``name`` is not a known env class; the message lists the valid names and
            suggests close matches (or the ``module:Class`` form for a dotted name). For a
            ``module:Class`` spec, an :class:`~meta_policy_search.envs.env_spec.EnvSpecError`
            naming it if it cannot be imported, is not a class, misses part of the MetaEnv
            protocol, or the built env's spaces are not 1-D boxes.
        ImportError: if ``name`` is a MuJoCo env but its module cannot be imported (e.g. MuJoCo
            is not installed), or a Meta-World env and ``metaworld`` is not installed (the
            message gives the install command).
    """
    if not isinstance(name, str):
        raise ValueError(f"env name must be a str, got {name!r}")
    if is_env_spec(name):
        env = load_env_class(name)(**kwargs)
        check_env_instance(env, name)
        return cast(MetaEnv, env)  # duck-typed: follows the protocol, may not subclass MetaEnv
    if name in BUILT_IN_ENVS:
        return env_class(name)(**kwargs)
    if name.startswith(METAWORLD_NAME_PREFIXES):
        return make_metaworld_env(name, **kwargs)
    close = difflib.get_close_matches(name, ENV_CLASS_NAMES, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    if "." in name:
        hint += (f" A user env class is given as {ENV_SPEC_FORMAT!r}, with a colon before the "
                 f"class: {suggest_spec(name)!r}.")
    raise ValueError(
        f"unknown env name {name!r}.{hint} Valid names: {', '.join(ENV_CLASS_NAMES)}"
    )
