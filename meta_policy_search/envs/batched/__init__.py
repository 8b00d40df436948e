"""Batched meta-envs: many copies of one env stepped as whole arrays (issue 7).

See :mod:`meta_policy_search.envs.batched.base` for the protocol. The point envs' implementations
are in :mod:`.point`, the MuJoCo envs' in :mod:`.mujoco` (imported lazily by the envs'
``make_batched``, so this package does not need MuJoCo).
"""

from meta_policy_search.envs.batched.base import (
    BatchedMetaEnv,
    BatchedStep,
    EnvList,
    NormalizedBatchedEnv,
    make_batched_env,
)

__all__ = ["BatchedMetaEnv", "BatchedStep", "EnvList", "NormalizedBatchedEnv", "make_batched_env"]
