"""Meta-environments: the :class:`MetaEnv` protocol, action normalization, the task suite.

Build an env by name with :func:`make_env` (the registry,
:data:`~meta_policy_search.envs.registry.BUILT_IN_ENVS`, names every built-in env and its
module), or import its class from its module. Importing this package does not import MuJoCo;
:func:`make_env` imports an env's module only when that env is built.
"""

from meta_policy_search.envs.base import MetaEnv
from meta_policy_search.envs.normalized_env import NormalizedEnv, normalize
from meta_policy_search.envs.registry import ENV_CLASS_NAMES, make_env

__all__ = ["ENV_CLASS_NAMES", "MetaEnv", "NormalizedEnv", "make_env", "normalize"]
