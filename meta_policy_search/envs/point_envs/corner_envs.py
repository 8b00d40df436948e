"""Point envs whose goal is one of the four corners ``(+-2, +-2)``: corner and momentum tasks."""

from __future__ import annotations

from typing import Any

import numpy as np

from meta_policy_search.envs.point_envs.base import (
    CORNERS,
    BatchedPointEnv,
    PointEnvBase,
    batched_dense_reward,
    batched_distance,
    check_corner,
    check_reward_type,
    dense_reward,
    distance,
    sample_corners,
)


class CornerGoalEnv(PointEnvBase):
    """Base of the envs whose task is a corner goal; holds the reward type and radius.

    Args:
        reward_type: ``'dense'``, ``'dense_squared'`` or ``'sparse'`` (see the subclasses).
        sparse_reward_radius: the radius used by the ``'sparse'`` reward, ``>= 0``.

    Raises:
        ValueError: for an unknown ``reward_type`` or a negative radius.
    """

    def __init__(self, reward_type: str, sparse_reward_radius: float) -> None:
        super().__init__()
        self.sparse_reward_radius = check_reward_type(reward_type, sparse_reward_radius)
        self.reward_type = reward_type
        self._goal = CORNERS[3].copy()

    def sample_tasks(self, n_tasks: int) -> list[np.ndarray]:
        """Draw ``n_tasks`` corner goals uniformly with ``task_rng``.

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` float64 arrays of shape ``[2]``, each one of ``(+-2, +-2)``.
        """
        return sample_corners(self.task_rng, n_tasks)

    def set_task(self, task: np.ndarray) -> None:
        """Set the goal corner.

        Args:
            task: ``[2]`` array, one of ``(-2, -2)``, ``(2, -2)``, ``(-2, 2)``, ``(2, 2)``.

        Raises:
            ValueError: if ``task`` is not one of the four corners.
        """
        self._goal = check_corner(task)

    def get_task(self) -> np.ndarray:
        """Return a copy of the current goal corner, ``[2]`` float64."""
        return self._goal.copy()


class MetaPointEnvCorner(CornerGoalEnv):
    """Reach one of the four corners ``(+-2, +-2)`` (ProMP's ``MetaPointEnvCorner``).

    * Task: the goal corner, ``[2]`` float64, drawn uniformly.
    * Reset: ``s ~ U(-0.2, 0.2)^2`` from gymnasium's ``np_random``.
    * Dynamics: ``s' = s + clip(a, -0.2, 0.2)``; action space ``Box(-0.2, 0.2, (2,))``.
    * Observation: the position ``s'``, float32 ``[2]``.
    * Reward, with ``g`` the goal:

      - ``'sparse'``: 0 while ``||s'||_1 < sparse_reward_radius`` (near the start); beyond it, the
        progress ``||s - g|| - ||s' - g||`` if ``g`` is the corner nearest to ``s'``, else 0.
      - ``'dense'``: ``-||s' - g||``; ``'dense_squared'``: ``-||s' - g||^2``.

    * Info: ``{'distance': ||s' - g||_2}``. Termination: never.

    Args:
        reward_type: ``'sparse'`` (default), ``'dense'`` or ``'dense_squared'``.
        sparse_reward_radius: L1 radius around the origin without sparse reward (default 0.5).

    Raises:
        ValueError: for an unknown ``reward_type`` or a negative radius.
    """

    action_bound = 0.2
    obs_dim = 2

    def make_batched(self, num_envs: int) -> BatchedPointEnvCorner:
        """``num_envs`` copies stepped as whole arrays (:class:`BatchedPointEnvCorner`)."""
        return BatchedPointEnvCorner(self, num_envs)

    def __init__(self, reward_type: str = "sparse", sparse_reward_radius: float = 0.5) -> None:
        super().__init__(reward_type, sparse_reward_radius)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, float]]:
        """Start at a uniform position in ``[-0.2, 0.2]^2``.

        Args:
            seed: seeds gymnasium's ``np_random`` before drawing the start.
            options: ignored.

        Returns:
            ``(observation [2] float32, {})``.
        """
        super().reset(seed=seed)
        self._state = self.np_random.uniform(-0.2, 0.2, size=2)
        return self._observation(), {}

    def reward(self, state: np.ndarray, next_state: np.ndarray) -> float:
        """Reward of the transition ``state -> next_state`` (both ``[2]``) for the current goal."""
        goal_distance = distance(next_state, self._goal)
        if self.reward_type != "sparse":
            return dense_reward(self.reward_type, goal_distance)
        if abs(next_state[0]) + abs(next_state[1]) < self.sparse_reward_radius:
            return 0.0
        nearest = min(distance(next_state, corner) for corner in CORNERS)
        # The goal is one of CORNERS, so its distance is bit-identical to one of those above.
        if goal_distance <= nearest:
            return distance(state, self._goal) - goal_distance
        return 0.0

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, float]]:
        """Move by the clipped action.

        Args:
            action: ``[2]`` displacement, clipped to ``[-0.2, 0.2]``.

        Returns:
            ``(observation [2], reward, False, False, {'distance': ||s' - g||})``.

        Raises:
            ValueError: if ``action`` does not have shape ``[2]``.
            RuntimeError: if :meth:`reset` was not called first.
        """
        state = self._current_state()
        self._state = state + self._clipped_action(action)
        reward = self.reward(state, self._state)
        info = {"distance": distance(self._state, self._goal)}
        return self._observation(), reward, False, False, info


class MetaPointEnvMomentum(CornerGoalEnv):
    """Reach a corner goal by accelerating a point with momentum (ProMP's ``MetaPointEnvMomentum``).

    * Task: the goal corner, ``[2]`` float64, drawn uniformly.
    * Reset: position ``U(-0.2, 0.2)^2`` and velocity ``U(-0.1, 0.1)^2`` from ``np_random``.
    * Dynamics: ``v' = v + clip(a, -0.1, 0.1)``, ``s' = s + v'``; action space
      ``Box(-0.1, 0.1, (2,))``. The velocity is not damped or bounded.
    * Observation: ``(s', v')``, float32 ``[4]``.
    * Reward on the position, with ``g`` the goal: ``'sparse'``:
      ``max(sparse_reward_radius - ||s' - g||, 0)``; ``'dense'``: ``-||s' - g||``;
      ``'dense_squared'``: ``-||s' - g||^2``.
    * Info: ``{'distance': ||s' - g||_2}``. Termination: never.

    Args:
        reward_type: ``'sparse'`` (default), ``'dense'`` or ``'dense_squared'``.
        sparse_reward_radius: radius of the sparse reward's support around the goal (default 2).

    Raises:
        ValueError: for an unknown ``reward_type`` or a negative radius.
    """

    action_bound = 0.1
    obs_dim = 4

    def make_batched(self, num_envs: int) -> BatchedPointEnvMomentum:
        """``num_envs`` copies stepped as whole arrays (:class:`BatchedPointEnvMomentum`)."""
        return BatchedPointEnvMomentum(self, num_envs)

    def __init__(self, reward_type: str = "sparse", sparse_reward_radius: float = 2.0) -> None:
        super().__init__(reward_type, sparse_reward_radius)
        self._velocity = np.zeros(2)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, float]]:
        """Draw the start position in ``[-0.2, 0.2]^2`` and velocity in ``[-0.1, 0.1]^2``.

        Args:
            seed: seeds gymnasium's ``np_random`` before drawing.
            options: ignored.

        Returns:
            ``(observation [4] float32, {})``.
        """
        super().reset(seed=seed)
        self._state = self.np_random.uniform(-0.2, 0.2, size=2)
        self._velocity = self.np_random.uniform(-0.1, 0.1, size=2)
        return self._observation(), {}

    def _observation(self) -> np.ndarray:
        return np.concatenate([self._state, self._velocity]).astype(np.float32)

    def reward(self, next_state: np.ndarray) -> float:
        """Reward for arriving at position ``next_state`` (``[2]``) for the current goal."""
        goal_distance = distance(next_state, self._goal)
        if self.reward_type == "sparse":
            return max(self.sparse_reward_radius - goal_distance, 0.0)
        return dense_reward(self.reward_type, goal_distance)

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, float]]:
        """Accelerate by the clipped action, then move by the new velocity.

        Args:
            action: ``[2]`` acceleration, clipped to ``[-0.1, 0.1]``.

        Returns:
            ``(observation [4], reward, False, False, {'distance': ||s' - g||})``.

        Raises:
            ValueError: if ``action`` does not have shape ``[2]``.
            RuntimeError: if :meth:`reset` was not called first.
        """
        self._velocity = self._velocity + self._clipped_action(action)
        self._state = self._current_state() + self._velocity
        info = {"distance": distance(self._state, self._goal)}
        return self._observation(), self.reward(self._state), False, False, info


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
            return batched_dense_reward(self.reward_type, goal_distance), goal_distance
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
            reward = batched_dense_reward(self.reward_type, goal_distance)
        return reward, {"distance": goal_distance}
