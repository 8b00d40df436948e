"""2-D point-mass meta-environments (pure numpy): MAML's navigation and ProMP's corner tasks.

:class:`~meta_policy_search.envs.point_envs.point_env_rand_goal.PointEnvRandGoal` is the MAML
paper's 2-D navigation (the quick start's task); the corner, momentum and walls tasks come from
the ProMP code. They need neither MuJoCo nor worker processes; each writes its step once over
rows (:mod:`~meta_policy_search.envs.point_envs.base`), which also steps them batched. The
registry (:mod:`meta_policy_search.envs.registry`) names them; each class is also importable
from this package, as in the original ProMP code.
"""

from meta_policy_search.envs.point_envs.corner_envs import MetaPointEnvCorner, MetaPointEnvMomentum
from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal
from meta_policy_search.envs.point_envs.walls_env import MetaPointEnvWalls

__all__ = [
    "MetaPointEnvCorner",
    "MetaPointEnvMomentum",
    "MetaPointEnvWalls",
    "PointEnvRandGoal",
]
