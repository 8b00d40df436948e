"""2-D point-mass meta-environments (pure numpy): MAML's navigation and ProMP's corner tasks.

:class:`~meta_policy_search.envs.point_envs.point_env_rand_goal.PointEnvRandGoal` is the MAML
paper's 2-D navigation (the quick start's task); the corner, momentum and walls tasks come from
the ProMP code. They need neither MuJoCo nor worker processes, and have batched versions.
"""

from meta_policy_search.envs.point_envs.base import CORNERS, PointEnvBase
from meta_policy_search.envs.point_envs.corner_envs import (
    CornerGoalEnv,
    MetaPointEnvCorner,
    MetaPointEnvMomentum,
)
from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal
from meta_policy_search.envs.point_envs.walls_env import MetaPointEnvWalls

POINT_ENV_CLASSES = (PointEnvRandGoal, MetaPointEnvCorner, MetaPointEnvMomentum, MetaPointEnvWalls)
"""The concrete point env classes, in the order the registry lists them."""

__all__ = [
    "CORNERS",
    "POINT_ENV_CLASSES",
    "CornerGoalEnv",
    "MetaPointEnvCorner",
    "MetaPointEnvMomentum",
    "MetaPointEnvWalls",
    "PointEnvBase",
    "PointEnvRandGoal",
]
