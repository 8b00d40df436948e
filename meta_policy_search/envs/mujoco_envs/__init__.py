"""The paper's MuJoCo task distributions, built on gymnasium's v5 MuJoCo envs.

One module per env (the registry, :data:`~meta_policy_search.envs.registry.BUILT_IN_ENVS`, names
them), sharing :mod:`.common` (the step, written once over rows), :mod:`.tasks` and
:mod:`.rand_params` (task distributions) and :mod:`.diagnostics`. Every env class is a
:class:`~meta_policy_search.envs.base.MetaEnv`: construct it directly or with
:func:`~meta_policy_search.envs.make_env` (no ``gym.make``, so there is no time limit), seed its
task distribution with ``seed_tasks``, and reset it with ``reset(seed=...)``. Each class
docstring gives its task distribution, reward, termination and where it differs from the
paper's mujoco-py version.
"""
