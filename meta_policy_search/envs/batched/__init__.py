"""Batched meta-envs: many copies of one env stepped as whole arrays.

See :mod:`meta_policy_search.envs.batched.base` for the protocol. Each env's batched form lives
with the env: the point envs' twins next to them in :mod:`meta_policy_search.envs.point_envs`,
the MuJoCo envs' ``batched_*`` maths in their classes, stepped by :mod:`.mujoco` (imported by
the MuJoCo envs, so this package itself does not need MuJoCo). Imports run one way: the env
packages import this one, never the reverse.
"""

from meta_policy_search.envs.batched.base import (
    BatchedMetaEnv,
    BatchedStep,
    EnvList,
    NormalizedBatchedEnv,
    make_batched_env,
)

__all__ = ["BatchedMetaEnv", "BatchedStep", "EnvList", "NormalizedBatchedEnv", "make_batched_env"]
