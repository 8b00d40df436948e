"""Shared machinery of the 2-D point-mass meta-environments (pure numpy, no MuJoCo).

A point env writes its step once, over a batch of ``k`` rows (:meth:`PointEnvBase.transition`):
``[k, state_dim]`` episode states (the position, and the velocity for the momentum task),
``[k, ...]`` task arrays and ``[k, 2]`` clipped actions in, next states, rewards and infos out.
Its gymnasium ``step`` is that method on one row; :class:`BatchedPointEnv` runs it on every
stepped copy at once, for any point env. Tasks come from
:attr:`~meta_policy_search.envs.base.MetaEnv.task_rng`, reset noise from gymnasium's
``np_random``. Every step reports ``info = {'distance': ||s' - goal||_2}`` so that
:meth:`PointEnvBase.log_diagnostics` can summarise how close the rollouts got to their goals.

The envs hold only numpy state, so plain :mod:`pickle` copies them (no ``__init__`` re-run).
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from meta_policy_search.envs.base import (
    BatchedMetaEnv,
    BatchedStep,
    MetaEnv,
    as_finite_vector,
    check_num_tasks,
)
from meta_policy_search.types import PathBatch, Task
from meta_policy_search.utils.validation import check_positive_int

CORNERS = np.array([[-2.0, -2.0], [2.0, -2.0], [-2.0, 2.0], [2.0, 2.0]])
"""``[4, 2]`` the corner goals of the corner, momentum and walls tasks."""

REWARD_TYPES = ("dense", "dense_squared", "sparse")
"""Reward variants accepted by the corner-goal envs."""


def as_point(value: object, name: str) -> np.ndarray:
    """Return ``value`` as a finite float64 array of shape ``[2]``.

    Args:
        value: anything :func:`numpy.asarray` accepts.
        name: what ``value`` is, for the error message (e.g. ``'goal'``, ``'action'``).

    Returns:
        A new float64 array of shape ``[2]``.

    Raises:
        ValueError: if ``value`` does not have shape ``[2]`` or is not finite.
    """
    return as_finite_vector(value, name, (2,))


def check_corner(goal: object) -> np.ndarray:
    """Return ``goal`` as a ``[2]`` float64 array, or raise if it is not one of :data:`CORNERS`.

    Raises:
        ValueError: if ``goal`` is not shape ``[2]`` or not one of the four corners ``(+-2, +-2)``.
    """
    point = as_point(goal, "goal")
    if not np.any(np.all(CORNERS == point, axis=1)):
        raise ValueError(f"goal must be one of the corners (+-2, +-2) of shape (2,), got {goal!r}")
    return point


def check_reward_type(reward_type: str, sparse_reward_radius: float) -> float:
    """Validate the reward arguments of a corner-goal env; return the radius as a float.

    Raises:
        ValueError: if ``reward_type`` is not in :data:`REWARD_TYPES` or the radius is negative or
            not finite.
    """
    if reward_type not in REWARD_TYPES:
        raise ValueError(f"reward_type must be one of {REWARD_TYPES}, got {reward_type!r}")
    radius = float(sparse_reward_radius)
    if not (math.isfinite(radius) and radius >= 0.0):
        raise ValueError(
            f"sparse_reward_radius must be a finite number >= 0, got {sparse_reward_radius!r}"
        )
    return radius


def dense_rewards(reward_type: str, distance: np.ndarray) -> np.ndarray:
    """``-d`` (``'dense'``) or ``-d^2`` (``'dense_squared'``) for ``[k]`` goal distances."""
    return -distance if reward_type == "dense" else -distance * distance


def sample_corners(rng: np.random.Generator, n_tasks: int) -> list[np.ndarray]:
    """Draw ``n_tasks`` corners uniformly (with replacement) from :data:`CORNERS`."""
    n_tasks = check_positive_int("n_tasks", n_tasks)
    return [CORNERS[i].copy() for i in rng.integers(len(CORNERS), size=n_tasks)]


def distances(points: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``[k]`` Euclidean distances of ``[k, 2]`` points to ``[k, 2]`` (or ``[2]``) targets.

    Maps :func:`math.hypot` over the rows: :func:`numpy.hypot` calls the C library's ``hypot``,
    which may differ from it in the last bit, and a row's distance must not depend on how many
    rows are stepped together.
    """
    offset = points - targets
    num = len(offset)
    return np.fromiter(map(math.hypot, offset[:, 0].tolist(), offset[:, 1].tolist()), float, num)


class PointEnvBase(MetaEnv):
    """Common base of the point envs: spaces, the one-row step, episode state and diagnostics.

    Subclasses set the class attributes ``action_bound``, ``obs_dim`` and ``state_dim``,
    implement :meth:`sample_tasks`, :meth:`set_task`, :meth:`get_task` and :meth:`start_state`,
    and write their step once over ``k`` rows in :meth:`transition` (by default the 2-D
    navigation's, :class:`~meta_policy_search.envs.point_envs.point_env_rand_goal.PointEnvRandGoal`).
    :meth:`task_array` gives the task as the array :meth:`transition` reads, :meth:`observations`
    the observation of a state (by default the state itself).
    """

    metadata = {"render_modes": []}
    action_bound: float = 0.1
    """Actions are clipped to ``[-action_bound, action_bound]`` per coordinate; this is also the
    action :class:`~gymnasium.spaces.Box`, so :func:`~meta_policy_search.envs.normalize` maps the
    policy's box onto it."""
    obs_dim: int = 2
    """Size of the observation vector."""
    state_dim: int = 2
    """Size of the episode state (the position, plus the velocity for the momentum task)."""
    goal_tolerance: float | None = None
    """An episode ends once the point is within this distance of the goal on both axes
    (``terminated=True``); ``None``: never early."""

    def __init__(self) -> None:
        super().__init__()
        bound = np.float32(self.action_bound)
        self.action_space = gym.spaces.Box(-bound, bound, shape=(2,), dtype=np.float32)
        self.observation_space = gym.spaces.Box(
            -np.inf, np.inf, shape=(self.obs_dim,), dtype=np.float32
        )
        self._state: np.ndarray | None = None
        self._goal = np.zeros(2)

    # ------------------------------------------------------------------ the step, over k rows
    def task_array(self) -> np.ndarray:
        """The current task as the array :meth:`transition` reads (the goal ``[2]``)."""
        return self._goal

    def transition(
        self, state: np.ndarray, task: np.ndarray, action: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """One step of ``k`` copies: ``s' = s + a``, reward ``-||s' - goal||``.

        Args:
            state: ``[k, state_dim]`` states before the step.
            task: ``[k, ...]`` :meth:`task_array` of each copy's task.
            action: ``[k, 2]`` actions, already clipped to the action box.

        Returns:
            ``(next_state [k, state_dim], rewards [k], infos)``, each info ``[k]``.
        """
        next_state = state + action
        distance = distances(next_state, task)
        return next_state, -distance, {"distance": distance}

    def terminated(self, state: np.ndarray, task: np.ndarray) -> np.ndarray:
        """``[k]`` bool: within ``goal_tolerance`` of the goal on both axes (never if ``None``)."""
        if self.goal_tolerance is None:
            return np.zeros(len(state), dtype=bool)
        return np.all(np.abs(state[:, :2] - task) < self.goal_tolerance, axis=1)

    def observations(self, state: np.ndarray) -> np.ndarray:
        """``[k, obs_dim]`` float32 observations of ``[k, state_dim]`` states."""
        return state.astype(np.float32)

    def step_rows(
        self, state: np.ndarray, task: np.ndarray, action: np.ndarray
    ) -> tuple[np.ndarray, BatchedStep]:
        """Clip the ``[k, 2]`` actions and step ``k`` copies: ``(next_state, step)`` with float32
        observations (what :meth:`step` and :class:`BatchedPointEnv` both return)."""
        clipped = np.minimum(np.maximum(action, -self.action_bound), self.action_bound)
        next_state, rewards, infos = self.transition(state, task, clipped)
        dones = self.terminated(next_state, task)
        return next_state, BatchedStep(self.observations(next_state), rewards, dones, infos)

    # ------------------------------------------------------------------ gymnasium API, one row
    def start_state(self) -> np.ndarray:
        """A new episode's ``[state_dim]`` state, drawn from ``self.np_random``."""
        raise NotImplementedError

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, float]]:
        """Start an episode at :meth:`start_state`.

        Args:
            seed: seeds gymnasium's ``np_random`` before drawing the start.
            options: ignored.

        Returns:
            ``(observation [obs_dim] float32, {})``.
        """
        super().reset(seed=seed)
        self._state = self.start_state()
        return self.observations(self._state[None])[0], {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, float]]:
        """:meth:`step_rows` on this env's one row.

        Args:
            action: ``[2]`` action, clipped to the action box.

        Returns:
            ``(observation [obs_dim] float32, reward, terminated, False, info)``.

        Raises:
            ValueError: if ``action`` does not have shape ``[2]``.
            RuntimeError: if :meth:`reset` was not called first.
        """
        if self._state is None:
            raise RuntimeError(f"{type(self).__name__}: call reset() before step()")
        act = np.asarray(action, dtype=np.float64)
        if act.shape != (2,):
            raise ValueError(f"action must have shape (2,), got shape {act.shape}: {action!r}")
        next_state, step = self.step_rows(self._state[None], self.task_array()[None], act[None])
        self._state = next_state[0]
        info = {key: float(value[0]) for key, value in step.infos.items()}
        return step.observations[0], float(step.rewards[0]), bool(step.dones[0]), False, info

    def make_batched(self, num_envs: int) -> BatchedPointEnv:
        """``num_envs`` copies stepped as whole arrays (:class:`BatchedPointEnv`)."""
        return BatchedPointEnv(self, num_envs)

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """Goal-distance statistics of a batch of rollouts.

        Args:
            paths: rollouts whose ``env_infos['distance']`` is ``[T, R, H]`` (padding masked out
                by ``paths.mask``).
            prefix: prepended to every key.

        Returns:
            ``AverageDistance`` (mask-weighted mean over all real steps),
            ``AverageFinalDistance``, ``MinFinalDistance`` and ``MaxFinalDistance`` (over the
            last real step of every episode); empty if the paths carry no ``'distance'`` info or
            no real step.
        """
        if "distance" not in paths.env_infos:
            return {}
        dist = np.asarray(paths.env_infos["distance"], dtype=np.float64)
        mask = np.asarray(paths.mask, dtype=np.float64)
        lengths = mask.sum(axis=-1).astype(np.int64)  # [T, R]; masks are 1 then 0 padding
        if lengths.max(initial=0) == 0:
            return {}
        real = lengths > 0
        last = np.take_along_axis(dist, np.maximum(lengths - 1, 0)[..., None], axis=-1)[..., 0]
        final = last[real]
        return {
            prefix + "AverageDistance": float((dist * mask).sum() / mask.sum()),
            prefix + "AverageFinalDistance": float(final.mean()),
            prefix + "MinFinalDistance": float(final.min()),
            prefix + "MaxFinalDistance": float(final.max()),
        }


class BatchedPointEnv(BatchedMetaEnv):
    """``num_envs`` copies of any point env, states and tasks as ``[num_envs, ...]`` arrays.

    Each step runs the env's own :meth:`PointEnvBase.step_rows` on the stepped rows, so the
    results are those of the single env (``tests/test_batched_envs.py``). Tasks are validated,
    and reset noise drawn, by a private copy of the single env (its own ``set_task`` and
    ``reset``).

    Args:
        env: the single env (copied; not modified).
        num_envs: number of copies.
    """

    def __init__(self, env: PointEnvBase, num_envs: int) -> None:
        super().__init__(num_envs=num_envs, observation_space=env.observation_space,
                         action_space=env.action_space)
        self._proto: PointEnvBase = pickle.loads(pickle.dumps(env))
        self.state = np.zeros((num_envs, env.state_dim))
        task = self._proto.task_array()
        self.task = np.repeat(task[None], num_envs, axis=0)

    def set_tasks(self, tasks: Sequence[Task]) -> None:
        check_num_tasks(tasks, self.num_envs)
        for i, task in enumerate(tasks):
            self._proto.set_task(task)
            self.task[i] = self._proto.task_array()

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        indices = np.asarray(indices)
        proto = self._proto
        for i, seed in zip(indices.tolist(), seeds):
            proto.reset(seed=int(seed))
            assert proto._state is not None
            self.state[i] = proto._state
        return proto.observations(self.state[indices]).astype(np.float64)

    def step(self, indices: np.ndarray, actions: np.ndarray) -> BatchedStep:
        indices = np.asarray(indices)
        action = np.asarray(actions, dtype=np.float64)
        if action.shape != (len(indices), 2):
            raise ValueError(f"actions must have shape ({len(indices)}, 2), got {action.shape}")
        next_state, step = self._proto.step_rows(self.state[indices], self.task[indices], action)
        self.state[indices] = next_state
        return step._replace(observations=step.observations.astype(np.float64))


__all__ = [
    "CORNERS",
    "REWARD_TYPES",
    "BatchedPointEnv",
    "PointEnvBase",
    "as_point",
    "check_corner",
    "check_reward_type",
    "dense_rewards",
    "distances",
    "sample_corners",
]
