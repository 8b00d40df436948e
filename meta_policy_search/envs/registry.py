"""Build any meta-environment from its class name: :func:`make_env`.

A built-in env is named by its class name; a user env by ``package.module:ClassName``
(:mod:`~meta_policy_search.envs.env_spec`). The MuJoCo envs are imported only when one of them
is requested, so the point envs (and this module) work without MuJoCo.
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
from meta_policy_search.envs.point_envs import POINT_ENV_CLASSES

MUJOCO_ENVS_MODULE = "meta_policy_search.envs.mujoco_envs"
"""Module that exports the MuJoCo meta-env classes (imported lazily)."""

POINT_ENV_CLASS_NAMES: tuple[str, ...] = tuple(cls.__name__ for cls in POINT_ENV_CLASSES)
"""Names of the pure-numpy point envs."""

MUJOCO_ENV_CLASS_NAMES: tuple[str, ...] = (
    "HalfCheetahRandDirecEnv",
    "HalfCheetahRandVelEnv",
    "AntRandDirecEnv",
    "AntRandDirec2DEnv",
    "AntRandGoalEnv",
    "HumanoidRandDirecEnv",
    "HumanoidRandDirec2DEnv",
    "Walker2DRandDirecEnv",
    "Walker2DRandVelEnv",
    "SwimmerRandVelEnv",
    "HopperRandParamsEnv",
    "Walker2DRandParamsEnv",
)
"""Names of the MuJoCo meta-envs exported by :data:`MUJOCO_ENVS_MODULE`."""

ENV_CLASS_NAMES: tuple[str, ...] = POINT_ENV_CLASS_NAMES + MUJOCO_ENV_CLASS_NAMES
"""Every built-in env class name :func:`make_env` accepts (it also accepts Meta-World benchmark
names and user envs given as ``package.module:ClassName``)."""

METAWORLD_NAME_PREFIXES = ("ML1-", "ML10")
"""Names starting with these go to :mod:`meta_policy_search.envs.metaworld_envs` (imported lazily:
Meta-World is an optional install), e.g. ``'ML1-reach-v3'`` or ``'ML10'``."""


def _lookup_mujoco(name: str) -> type[MetaEnv] | None:
    """Return the MetaEnv class ``name`` of the MuJoCo envs module, or ``None`` if it has none."""
    module = importlib.import_module(MUJOCO_ENVS_MODULE)
    cls = getattr(module, name, None)
    if isinstance(cls, type) and issubclass(cls, MetaEnv):
        return cls
    return None


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
    point_classes = {cls.__name__: cls for cls in POINT_ENV_CLASSES}
    if name in point_classes:
        return point_classes[name](**kwargs)
    if name in MUJOCO_ENV_CLASS_NAMES:
        cls = _lookup_mujoco(name)
        if cls is None:
            raise ValueError(f"{MUJOCO_ENVS_MODULE} does not export a MetaEnv class {name!r}")
        return cls(**kwargs)
    if name.startswith(METAWORLD_NAME_PREFIXES):
        from meta_policy_search.envs.metaworld_envs import make_metaworld_env

        return make_metaworld_env(name, **kwargs)
    close = difflib.get_close_matches(name, ENV_CLASS_NAMES, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    if "." in name:
        hint += (f" A user env class is given as {ENV_SPEC_FORMAT!r}, with a colon before the "
                 f"class: {suggest_spec(name)!r}.")
    raise ValueError(
        f"unknown env name {name!r}.{hint} Valid names: {', '.join(ENV_CLASS_NAMES)}"
    )
