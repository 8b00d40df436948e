"""User-defined envs for ``tests/test_env_spec.py``, named on the command line as
``--env user_envs:ClassName`` (pytest puts ``tests/`` on ``sys.path``; the parallel executor's
spawned workers inherit it).

Two good envs (a :class:`MetaEnv` subclass and a duck-typed ``gymnasium.Env``) and one bad case
per protocol problem the spec check must name.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from meta_policy_search.envs.base import MetaEnv


class PointLineGoalEnv(MetaEnv):
    """A point on a line must reach a goal in ``[-1, 1]`` (the task); reward: minus the distance."""

    def __init__(self, max_step: float = 0.1) -> None:
        if not max_step > 0:
            raise ValueError(f"max_step must be > 0, got {max_step!r}")
        self.max_step = float(max_step)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)
        self.action_space = gym.spaces.Box(-max_step, max_step, shape=(1,), dtype=np.float32)
        self.goal = 0.0
        self.position = np.zeros(1)

    def sample_tasks(self, n_tasks: int) -> list[float]:
        return [float(goal) for goal in self.task_rng.uniform(-1.0, 1.0, size=n_tasks)]

    def set_task(self, task: float) -> None:
        self.goal = float(task)

    def get_task(self) -> float:
        return self.goal

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.position = self.np_random.uniform(-0.05, 0.05, size=1)
        return self.position.astype(np.float32), {}

    def step(self, action: np.ndarray) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.position = self.position + np.clip(action, -self.max_step, self.max_step)
        distance = float(abs(self.position[0] - self.goal))
        return self.position.astype(np.float32), -distance, False, False, {"distance": distance}


class DuckTypedLineEnv(gym.Env):
    """The same task distribution without subclassing MetaEnv: it brings its own task RNG."""

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)
        self.action_space = gym.spaces.Box(-0.1, 0.1, shape=(1,), dtype=np.float32)
        self.task_rng = np.random.default_rng()
        self.goal = 0.0
        self.position = np.zeros(1)

    def seed_tasks(self, seed: int | None) -> None:
        self.task_rng = np.random.default_rng(seed)

    def sample_tasks(self, n_tasks: int) -> list[float]:
        return [float(goal) for goal in self.task_rng.uniform(-1.0, 1.0, size=n_tasks)]

    def set_task(self, task: float) -> None:
        self.goal = float(task)

    def get_task(self) -> float:
        return self.goal

    def log_diagnostics(self, paths: Any, prefix: str = "") -> dict[str, float]:
        return {prefix + "FinalDistance": float(np.mean(paths.env_infos["distance"][..., -1]))}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.position = np.zeros(1)
        return self.position.astype(np.float32), {}

    def step(self, action: np.ndarray) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.position = self.position + np.clip(action, -0.1, 0.1)
        distance = float(abs(self.position[0] - self.goal))
        return self.position.astype(np.float32), -distance, False, False, {"distance": distance}


# ---------------------------------------------------------------------------- bad cases
class NoTaskSetterEnv(MetaEnv):
    """Implements sample_tasks, reset and step but neither set_task nor get_task."""

    def sample_tasks(self, n_tasks: int) -> list[float]:
        return [0.0] * n_tasks

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        return np.zeros(1), {}

    def step(self, action: np.ndarray) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return np.zeros(1), 0.0, False, False, {}


class DuckWithoutSeedingEnv(DuckTypedLineEnv):
    """Duck-typed, but without the methods that MetaEnv would supply."""

    seed_tasks = None
    log_diagnostics = None


class DuckWithoutTaskRngEnv(DuckTypedLineEnv):
    """Duck-typed with every method, but its task generator is not a numpy Generator."""

    def __init__(self) -> None:
        super().__init__()
        self.task_rng = None


class NotAGymEnv:
    """Has the task methods but is no gymnasium.Env."""

    def sample_tasks(self, n_tasks: int) -> list[float]:
        return [0.0] * n_tasks

    def set_task(self, task: float) -> None:
        pass

    def get_task(self) -> float:
        return 0.0


class ImageObservationEnv(PointLineGoalEnv):
    """Follows the protocol but observes a 2-D array: the samplers need a flat box."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(4, 4), dtype=np.float32)


def make_line_env() -> PointLineGoalEnv:
    """A factory function, not a class: the spec must name the class."""
    return PointLineGoalEnv()


def _local_class() -> type:
    class HiddenEnv(PointLineGoalEnv):
        pass

    return HiddenEnv


AliasedLocalEnv = _local_class()
"""A class workers could not import back by its ``__qualname__`` (defined in a function)."""

SPEC_NOTE = "not an env: a module-level string"
"""The spec must name a class."""
