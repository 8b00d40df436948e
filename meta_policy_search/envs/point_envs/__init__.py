"""2-D point-mass meta-environments (pure numpy): MAML's navigation and ProMP's corner tasks.

:class:`~meta_policy_search.envs.point_envs.point_env_rand_goal.PointEnvRandGoal` is the MAML
paper's 2-D navigation (the quick start's task); the corner, momentum and walls tasks come from
the ProMP code. They need neither MuJoCo nor worker processes; each writes its step once over
rows (:mod:`~meta_policy_search.envs.point_envs.base`), which also steps them batched. The
registry (:mod:`meta_policy_search.envs.registry`) names them.
"""
