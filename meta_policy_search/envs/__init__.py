"""Meta-environments: the :class:`MetaEnv` protocol, action normalization, the task suite.

Importing this package does not import MuJoCo; :func:`make_env` imports the MuJoCo envs only
when one of them is requested.
"""

from meta_policy_search.envs.base import MetaEnv
from meta_policy_search.envs.normalized_env import NormalizedEnv, normalize
from meta_policy_search.envs.point_envs import (
    MetaPointEnvCorner,
    MetaPointEnvMomentum,
    MetaPointEnvWalls,
    PointEnvRandGoal,
)
from meta_policy_search.envs.registry import ENV_CLASS_NAMES, make_env

__all__ = [
    "ENV_CLASS_NAMES",
    "MetaEnv",
    "MetaPointEnvCorner",
    "MetaPointEnvMomentum",
    "MetaPointEnvWalls",
    "NormalizedEnv",
    "PointEnvRandGoal",
    "make_env",
    "normalize",
]
