"""The paper's MuJoCo task distributions, built on gymnasium's v5 MuJoCo envs.

One module per env (the registry, :data:`~meta_policy_search.envs.registry.BUILT_IN_ENVS`, names
them; each class is also importable from this package, its public name in the original ProMP
code), sharing :mod:`.common` (the step, written once over rows), :mod:`.tasks` and
:mod:`.rand_params` (task distributions) and :mod:`.diagnostics`. Every env class is a
:class:`~meta_policy_search.envs.base.MetaEnv`: construct it directly or with
:func:`~meta_policy_search.envs.make_env` (no ``gym.make``, so there is no time limit), seed its
task distribution with ``seed_tasks``, and reset it with ``reset(seed=...)``. Each class
docstring gives its task distribution, reward, termination and where it differs from the
paper's mujoco-py version.
"""

from meta_policy_search.envs.mujoco_envs.ant_rand_direc import AntRandDirecEnv
from meta_policy_search.envs.mujoco_envs.ant_rand_direc_2d import AntRandDirec2DEnv
from meta_policy_search.envs.mujoco_envs.ant_rand_goal import AntRandGoalEnv
from meta_policy_search.envs.mujoco_envs.half_cheetah_rand_direc import HalfCheetahRandDirecEnv
from meta_policy_search.envs.mujoco_envs.half_cheetah_rand_vel import HalfCheetahRandVelEnv
from meta_policy_search.envs.mujoco_envs.hopper_rand_params import HopperRandParamsEnv
from meta_policy_search.envs.mujoco_envs.humanoid_rand_direc import HumanoidRandDirecEnv
from meta_policy_search.envs.mujoco_envs.humanoid_rand_direc_2d import HumanoidRandDirec2DEnv
from meta_policy_search.envs.mujoco_envs.swimmer_rand_vel import SwimmerRandVelEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_direc import Walker2DRandDirecEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_params import Walker2DRandParamsEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_vel import Walker2DRandVelEnv

__all__ = [
    "AntRandDirec2DEnv",
    "AntRandDirecEnv",
    "AntRandGoalEnv",
    "HalfCheetahRandDirecEnv",
    "HalfCheetahRandVelEnv",
    "HopperRandParamsEnv",
    "HumanoidRandDirec2DEnv",
    "HumanoidRandDirecEnv",
    "SwimmerRandVelEnv",
    "Walker2DRandDirecEnv",
    "Walker2DRandParamsEnv",
    "Walker2DRandVelEnv",
]
