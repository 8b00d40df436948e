"""Batched point envs: all copies' positions, goals and rewards as ``[n, 2]`` numpy arrays.

Each class mirrors one env of :mod:`meta_policy_search.envs.point_envs` operation by operation, so
that results are bit-identical (checked by ``tests/test_batched_envs.py``). Euclidean distances
use :func:`math.hypot` (mapped over the batch) like the single envs: :func:`numpy.hypot` calls
the C library's ``hypot``, which may differ in the last bit. Tasks are validated, and reset
noise drawn, by a private copy of the single env (its own ``set_task`` and ``reset``), so both
follow the single env exactly (same ``np_random`` draws for the same reset seed).
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Sequence

import numpy as np

from meta_policy_search.envs.batched.base import BatchedMetaEnv, BatchedStep, check_num_tasks
from meta_policy_search.envs.point_envs.base import CORNERS, PointEnvBase
from meta_policy_search.envs.point_envs.corner_envs import MetaPointEnvCorner, MetaPointEnvMomentum
from meta_policy_search.envs.point_envs.walls_env import _INSIDE, GAP_HALF_WIDTH, WALL_RADII
from meta_policy_search.types import Task


def batched_distance(points: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``[n]`` Euclidean distances of ``[n, 2]`` points to ``[n, 2]`` (or ``[2]``) targets.

    Bit-identical to :func:`meta_policy_search.envs.point_envs.base.distance` per row.
    """
    offset = points - targets
    num = len(offset)
    return np.fromiter(map(math.hypot, offset[:, 0].tolist(), offset[:, 1].tolist()), float, num)


def _dense_reward(reward_type: str, distance: np.ndarray) -> np.ndarray:
    return -distance if reward_type == "dense" else -distance * distance


class BatchedPointEnv(BatchedMetaEnv):
    """``num_envs`` copies of a point env (:class:`PointEnvRandGoal` semantics by default).

    Subclasses override ``_read_reset``, ``_read_task`` and ``_transition``.

    Args:
        env: the single env (copied; not modified).
        num_envs: number of copies.
    """

    def __init__(self, env: PointEnvBase, num_envs: int) -> None:
        super().__init__(num_envs, env.observation_space, env.action_space)
        self._proto: PointEnvBase = pickle.loads(pickle.dumps(env))
        self.action_bound = float(env.action_bound)
        self.state = np.zeros((num_envs, 2))
        self.goal = np.zeros((num_envs, 2))
        self.goal_tolerance = env.goal_tolerance
        self._read_task(slice(None))

    # ------------------------------------------------------------------ hooks
    def _read_task(self, index: int | slice) -> None:
        """Copy the proto env's task into row(s) ``index``."""
        self.goal[index] = self._proto._goal

    def _read_reset(self, index: int) -> None:
        """Copy the proto env's freshly reset episode state into row ``index``."""
        assert self._proto._state is not None
        self.state[index] = self._proto._state

    def _observation(self, indices: np.ndarray) -> np.ndarray:
        return self.state[indices].astype(np.float32).astype(np.float64)

    def _transition(
        self, indices: np.ndarray, action: np.ndarray
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Update the state of ``indices`` with the clipped ``action``; return reward and infos."""
        self.state[indices] = self.state[indices] + action
        distance = batched_distance(self.state[indices], self.goal[indices])
        return -distance, {"distance": distance}

    # ------------------------------------------------------------------ protocol
    def set_tasks(self, tasks: Sequence[Task]) -> None:
        check_num_tasks(tasks, self.num_envs)
        for i, task in enumerate(tasks):
            self._proto.set_task(task)
            self._read_task(i)

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        for i, seed in zip(indices, seeds):
            self._proto.reset(seed=int(seed))
            self._read_reset(int(i))
        return self._observation(np.asarray(indices))

    def step(self, indices: np.ndarray, actions: np.ndarray) -> BatchedStep:
        indices = np.asarray(indices)
        action = np.asarray(actions, dtype=np.float64)
        if action.shape != (len(indices), 2):
            raise ValueError(f"actions must have shape ({len(indices)}, 2), got {action.shape}")
        clipped = np.minimum(np.maximum(action, -self.action_bound), self.action_bound)
        rewards, infos = self._transition(indices, clipped)
        if self.goal_tolerance is None:
            dones = np.zeros(len(indices), dtype=bool)
        else:
            offset = np.abs(self.state[indices] - self.goal[indices])
            dones = np.all(offset < self.goal_tolerance, axis=1)
        return BatchedStep(self._observation(indices), rewards, dones, infos)


class BatchedPointEnvCorner(BatchedPointEnv):
    """Batched :class:`MetaPointEnvCorner` (all reward types)."""

    _proto: MetaPointEnvCorner

    def __init__(self, env: MetaPointEnvCorner, num_envs: int) -> None:
        super().__init__(env, num_envs)
        self.reward_type = env.reward_type
        self.sparse_reward_radius = env.sparse_reward_radius

    def _reward(
        self, state: np.ndarray, next_state: np.ndarray, goal: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(reward, goal distance)`` as :meth:`MetaPointEnvCorner.reward`."""
        goal_distance = batched_distance(next_state, goal)
        if self.reward_type != "sparse":
            return _dense_reward(self.reward_type, goal_distance), goal_distance
        near_start = np.abs(next_state[:, 0]) + np.abs(next_state[:, 1]) < self.sparse_reward_radius
        nearest = np.minimum.reduce([batched_distance(next_state, corner) for corner in CORNERS])
        progress = batched_distance(state, goal) - goal_distance
        rewarded = ~near_start & (goal_distance <= nearest)
        return np.where(rewarded, progress, 0.0), goal_distance

    def _transition(
        self, indices: np.ndarray, action: np.ndarray
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        state = self.state[indices]
        next_state = state + action
        self.state[indices] = next_state
        reward, goal_distance = self._reward(state, next_state, self.goal[indices])
        return reward, {"distance": goal_distance}


class BatchedPointEnvMomentum(BatchedPointEnv):
    """Batched :class:`MetaPointEnvMomentum` (all reward types)."""

    _proto: MetaPointEnvMomentum

    def __init__(self, env: MetaPointEnvMomentum, num_envs: int) -> None:
        self.velocity = np.zeros((num_envs, 2))
        super().__init__(env, num_envs)
        self.reward_type = env.reward_type
        self.sparse_reward_radius = env.sparse_reward_radius

    def _read_reset(self, index: int) -> None:
        super()._read_reset(index)
        self.velocity[index] = self._proto._velocity

    def _observation(self, indices: np.ndarray) -> np.ndarray:
        both = np.concatenate([self.state[indices], self.velocity[indices]], axis=1)
        return both.astype(np.float32).astype(np.float64)

    def _transition(
        self, indices: np.ndarray, action: np.ndarray
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        velocity = self.velocity[indices] + action
        state = self.state[indices] + velocity
        self.velocity[indices], self.state[indices] = velocity, state
        goal_distance = batched_distance(state, self.goal[indices])
        if self.reward_type == "sparse":
            reward = self.sparse_reward_radius - goal_distance
            reward = np.where(0.0 > reward, 0.0, reward)  # Python's max(reward, 0.0)
        else:
            reward = _dense_reward(self.reward_type, goal_distance)
        return reward, {"distance": goal_distance}


class BatchedPointEnvWalls(BatchedPointEnvCorner):
    """Batched :class:`MetaPointEnvWalls` (all reward types)."""

    def __init__(self, env: MetaPointEnvCorner, num_envs: int) -> None:
        self.gaps = np.zeros((num_envs, 2, 2))
        super().__init__(env, num_envs)

    def _read_task(self, index: int | slice) -> None:
        super()._read_task(index)
        self.gaps[index] = self._proto._gaps  # type: ignore[attr-defined]

    def _apply_walls(
        self, state: np.ndarray, next_state: np.ndarray, gaps: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`MetaPointEnvWalls.apply_walls` for every row: ``(position, blocked)``."""
        zeros = np.zeros(2)
        radius_before = batched_distance(state, zeros)
        radius_after = batched_distance(next_state, zeros)
        position = next_state.copy()
        blocked = np.zeros(len(state), dtype=bool)
        decided = np.zeros(len(state), dtype=bool)  # the first crossed wall decides
        for w, wall_radius in enumerate(WALL_RADII):
            crossing = ~decided & (radius_before < wall_radius) & (wall_radius < radius_after)
            hit = crossing & (batched_distance(next_state, gaps[:, w]) > GAP_HALF_WIDTH)
            factor = (wall_radius * _INSIDE) / radius_after[hit]
            position[hit] = next_state[hit] * factor[:, None]
            blocked |= hit
            decided |= crossing
        return position, blocked

    def _reward(
        self, state: np.ndarray, next_state: np.ndarray, goal: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        goal_distance = batched_distance(next_state, goal)
        if self.reward_type != "sparse":
            return _dense_reward(self.reward_type, goal_distance), goal_distance
        progress = batched_distance(state, goal) - goal_distance
        return np.where(goal_distance < self.sparse_reward_radius, progress, 0.0), goal_distance

    def _transition(
        self, indices: np.ndarray, action: np.ndarray
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        state = self.state[indices]
        next_state, blocked = self._apply_walls(state, state + action, self.gaps[indices])
        self.state[indices] = next_state
        reward, goal_distance = self._reward(state, next_state, self.goal[indices])
        return reward, {"distance": goal_distance, "wall_hit": blocked.astype(np.float64)}
