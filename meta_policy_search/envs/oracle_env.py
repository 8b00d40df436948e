"""The *oracle* baseline of the MAML paper: the task parameters appended to every observation.

Finn et al. (2017, section 5) compare the meta-learned policy with an oracle that receives the
task (e.g. the goal position) as part of its input: an upper bound on what adaptation can reach.
:class:`OracleEnv` wraps any :class:`~meta_policy_search.envs.MetaEnv` that way; the run scripts
build it with ``--oracle true`` (recorded in ``params.json``, so ``experiments/meta_testing.py``
rebuilds the same env).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, SupportsFloat, cast

import gymnasium as gym
import numpy as np

from meta_policy_search.envs.base import (
    BatchedMetaEnv,
    BatchedStep,
    MetaEnv,
    batched_form,
    check_num_tasks,
)
from meta_policy_search.types import PathBatch, Task


def task_features(task: Task) -> np.ndarray:
    """The task parameters as a flat float64 vector.

    * a number (a direction ``+-1``, a target velocity): ``[task]``;
    * an array (a goal position, a 2-D direction): its entries, flattened;
    * a dict of arrays (``RandParams`` multipliers): the flattened values in sorted key order.

    Args:
        task: a task returned by a MetaEnv's ``get_task`` or ``sample_tasks``.

    Returns:
        ``[task_dim]`` float64 array.

    Raises:
        ValueError: if ``task`` is none of the above, is empty, or has non-finite entries.
    """
    if isinstance(task, dict):
        if not task:
            raise ValueError("task_features: got an empty dict task; expected named arrays")
        parts = [task_features(task[key]) for key in sorted(task)]
        return np.concatenate(parts)
    if isinstance(task, (bool, np.bool_)) or not (
        isinstance(task, (numbers.Real, np.ndarray, list, tuple))
    ):
        raise ValueError(
            f"task_features: expected a number, an array or a dict of arrays as the task, "
            f"got {type(task).__name__} {task!r}"
        )
    try:
        features = np.asarray(task, dtype=np.float64).ravel()
    except (TypeError, ValueError) as error:
        raise ValueError(f"task_features: task {task!r} is not numeric") from error
    if features.size == 0 or not np.all(np.isfinite(features)):
        raise ValueError(f"task_features: expected a non-empty finite task, got {task!r}")
    return features


class OracleEnv(gym.Wrapper, MetaEnv):
    """A MetaEnv whose observations end with :func:`task_features` of the current task.

    Observation ``[obs_dim + task_dim]`` float32: the wrapped env's observation followed by the
    task's features. The task interface goes to the wrapped env; actions are unchanged. Wrap the
    normalized env (``OracleEnv(normalize(env))``) to keep its batched stepping path.

    Args:
        env: the MetaEnv to wrap (possibly a ``NormalizedEnv``).

    Raises:
        ValueError: if the observation space is not a 1-D box or ``env.get_task()`` is not a task
            :func:`task_features` accepts.
    """

    def __init__(self, env: MetaEnv) -> None:
        space = env.observation_space
        if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
            raise ValueError(f"OracleEnv needs a 1-D Box observation space, got {space!r}")
        super().__init__(env)
        self._features = task_features(env.get_task())
        self.task_dim = int(self._features.size)
        """Number of task features appended to each observation."""
        low = np.concatenate([space.low, np.full(self.task_dim, -np.inf)])
        high = np.concatenate([space.high, np.full(self.task_dim, np.inf)])
        self.observation_space = gym.spaces.Box(low.astype(np.float32), high.astype(np.float32),
                                                dtype=np.float32)

    def _with_task(self, observation: Any) -> np.ndarray:
        return np.concatenate([np.asarray(observation, dtype=np.float32).ravel(),
                               self._features.astype(np.float32)])

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the wrapped env; the observation carries the current task's features."""
        observation, info = self.env.reset(seed=seed, options=options)
        return self._with_task(observation), info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the wrapped env; the observation carries the current task's features."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._with_task(observation), reward, terminated, truncated, info

    @property
    def _meta_env(self) -> MetaEnv:
        return cast(MetaEnv, self.env)

    @property
    def task_rng(self) -> np.random.Generator:
        """The wrapped env's task generator."""
        return self._meta_env.task_rng

    def seed_tasks(self, seed: int | None) -> None:
        """Seed the wrapped env's task generator."""
        self._meta_env.seed_tasks(seed)

    def sample_tasks(self, n_tasks: int) -> list[Task]:
        """Tasks of the wrapped env."""
        return self._meta_env.sample_tasks(n_tasks)

    def sample_test_tasks(self, n_tasks: int) -> list[Task]:
        """Test tasks of the wrapped env."""
        return self._meta_env.sample_test_tasks(n_tasks)

    def set_task(self, task: Task) -> None:
        """Set ``task`` on the wrapped env and append its features from now on."""
        self._meta_env.set_task(task)
        self._features = self._checked_features(task)

    def get_task(self) -> Task:
        """The wrapped env's current task."""
        return self._meta_env.get_task()

    def _checked_features(self, task: Task) -> np.ndarray:
        features = task_features(task)
        if features.size != self.task_dim:
            raise ValueError(
                f"task {task!r} has {features.size} features, expected {self.task_dim} (the "
                "size of the wrapped env's tasks)"
            )
        return features

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """The wrapped env's diagnostics."""
        return self._meta_env.log_diagnostics(paths, prefix)

    def make_batched(self, num_envs: int) -> BatchedMetaEnv | None:
        """The wrapped env's batched implementation with the features appended, if it has one."""
        if not isinstance(self.env, MetaEnv):
            return None
        inner = batched_form(self.env, num_envs)
        if inner is None:
            return None
        return OracleBatchedEnv(inner, self.observation_space, self._checked_features)


class OracleBatchedEnv(BatchedMetaEnv):
    """A batched env whose observations end with each env's task features.

    Args:
        env: the wrapped env's batched implementation.
        observation_space: the oracle observation space (the ``observation_space`` of :class:`OracleEnv`).
        features: maps a task to its ``[task_dim]`` features (and checks its size).
    """

    def __init__(self, env: BatchedMetaEnv, observation_space: Any, features: Any) -> None:
        super().__init__(num_envs=env.num_envs, observation_space=observation_space,
                         action_space=env.action_space)
        self.env = env
        self._features_of = features
        task_dim = observation_space.shape[0] - env.observation_space.shape[0]
        self._features = np.zeros((env.num_envs, task_dim))

    def set_tasks(self, tasks: Sequence[Task]) -> None:
        """Set ``tasks[i]`` on env ``i`` and remember its features."""
        check_num_tasks(tasks, self.num_envs)
        self.env.set_tasks(tasks)
        # Rounded as the single env rounds them (float32 observations): the same numbers.
        features = np.stack([self._features_of(task) for task in tasks])
        self._features = features.astype(np.float32).astype(np.float64)

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """Reset the envs ``indices``; observations carry their task features."""
        observations = self.env.reset(indices, seeds)
        return np.concatenate([observations, self._features[indices]], axis=1)

    def step(self, indices: np.ndarray, actions: np.ndarray) -> BatchedStep:
        """Step the envs ``indices``; observations carry their task features."""
        result = self.env.step(indices, actions)
        observations = np.concatenate([result.observations, self._features[indices]], axis=1)
        return result._replace(observations=observations)

    def close(self) -> None:
        """Close the wrapped batched env."""
        self.env.close()
