"""Batched meta-envs: many copies of one env stepped as whole arrays.

The protocol (:class:`~meta_policy_search.envs.base.BatchedMetaEnv`) lives beside the MetaEnv
protocol; :mod:`.base` holds the per-env path and the choice between the two, :mod:`.mujoco` the
stepping of MuJoCo copies (imported by the MuJoCo envs, so this package itself does not need
MuJoCo). The maths of each env lives with the env, written once over rows. Imports run one way:
the env packages import this one, never the reverse.
"""

from meta_policy_search.envs.batched.base import EnvList, NormalizedBatchedEnv, make_batched_env

__all__ = ["EnvList", "NormalizedBatchedEnv", "make_batched_env"]
