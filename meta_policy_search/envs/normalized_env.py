"""Action normalization: the policy acts in ``[-s, s]``, mapped linearly onto the env's bounds."""

from __future__ import annotations

from typing import Any, SupportsFloat, cast

import gymnasium as gym
import numpy as np

from meta_policy_search.envs.base import BatchedMetaEnv, MetaEnv, batched_form
from meta_policy_search.envs.batched.base import NormalizedBatchedEnv
from meta_policy_search.types import PathBatch, Task


class NormalizedEnv(gym.Wrapper, MetaEnv):
    """Wrap a :class:`MetaEnv` so that actions in ``[-scale, scale]`` cover its action box.

    An action ``a`` is mapped to ``low + (a + scale) / (2 * scale) * (high - low)`` and then
    clipped to ``[low, high]``. The paper used ``scale = 10`` with an initial policy std of 1,
    i.e. exploration noise of 10% of the action range.

    The task interface (:meth:`sample_tasks`, :meth:`set_task`, ...) is forwarded to the wrapped
    env.
    """

    def __init__(self, env: MetaEnv, normalization_scale: float = 10.0) -> None:
        if not isinstance(env.action_space, gym.spaces.Box):
            raise ValueError(f"normalize() needs a Box action space, got {env.action_space!r}")
        if not normalization_scale > 0:
            raise ValueError(f"normalization_scale must be > 0, got {normalization_scale!r}")
        super().__init__(env)
        self.normalization_scale = float(normalization_scale)
        shape = env.action_space.shape
        self.action_space = gym.spaces.Box(
            -self.normalization_scale, self.normalization_scale, shape=shape, dtype=np.float32
        )
        # a -> low + (a + s) * (high - low) / (2 s), precomputed as a * scale + offset
        low, high = env.action_space.low, env.action_space.high
        self._low, self._high = low, high
        self._scale = 0.5 * (high - low) / self.normalization_scale
        self._offset = low + self.normalization_scale * self._scale

    def action(self, action: np.ndarray) -> np.ndarray:
        """Map a policy action onto the wrapped env's bounds (then clip)."""
        scaled = np.asarray(action) * self._scale + self._offset
        return np.minimum(np.maximum(scaled, self._low), self._high)

    def step(self, action: np.ndarray) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        return self.env.step(self.action(action))

    # The task interface goes straight through to the wrapped env.
    @property
    def _meta_env(self) -> MetaEnv:
        # The constructor takes a MetaEnv, so the innermost env is one.
        return cast(MetaEnv, self.env.unwrapped)

    @property
    def task_rng(self) -> np.random.Generator:
        return self._meta_env.task_rng

    def seed_tasks(self, seed: int | None) -> None:
        self._meta_env.seed_tasks(seed)

    def sample_tasks(self, n_tasks: int) -> list[Task]:
        return self._meta_env.sample_tasks(n_tasks)

    def sample_test_tasks(self, n_tasks: int) -> list[Task]:
        return self._meta_env.sample_test_tasks(n_tasks)

    def set_task(self, task: Task) -> None:
        self._meta_env.set_task(task)

    def get_task(self) -> Task:
        return self._meta_env.get_task()

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        return self._meta_env.log_diagnostics(paths, prefix)

    def make_batched(self, num_envs: int) -> BatchedMetaEnv | None:
        """The wrapped env's batched implementation with this action mapping, if it has one."""
        if not isinstance(self.env, MetaEnv):  # another wrapper in between: per-env path
            return None
        inner = batched_form(self.env, num_envs)
        if inner is None:
            return None
        return NormalizedBatchedEnv(inner, self.action_space, self.action)


def normalize(env: MetaEnv, normalization_scale: float = 10.0) -> NormalizedEnv:
    """Return ``env`` wrapped in a :class:`NormalizedEnv` (the original's ``normalize``)."""
    return NormalizedEnv(env, normalization_scale=normalization_scale)
