"""Point envs whose goal is one of the four corners ``(+-2, +-2)``: corner and momentum tasks."""

from __future__ import annotations

import numpy as np

from meta_policy_search.envs.point_envs.base import (
    CORNERS,
    PointEnvBase,
    check_corner,
    check_reward_type,
    dense_rewards,
    distances,
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

    def __init__(self, reward_type: str = "sparse", sparse_reward_radius: float = 0.5) -> None:
        super().__init__(reward_type=reward_type, sparse_reward_radius=sparse_reward_radius)

    def start_state(self) -> np.ndarray:
        """A uniform position in ``[-0.2, 0.2]^2``."""
        return self.np_random.uniform(-0.2, 0.2, size=2)

    def rewards(
        self, state: np.ndarray, next_state: np.ndarray, goal: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(rewards [k], goal distances [k])`` of ``k`` transitions ``state -> next_state``
        (each ``[k, 2]``) towards the goals ``[k, 2]``."""
        goal_distance = distances(next_state, goal)
        if self.reward_type != "sparse":
            return dense_rewards(self.reward_type, goal_distance), goal_distance
        near_start = np.abs(next_state[:, 0]) + np.abs(next_state[:, 1]) < self.sparse_reward_radius
        nearest = np.minimum.reduce([distances(next_state, corner) for corner in CORNERS])
        # The goal is one of CORNERS, so its distance is bit-identical to one of those above.
        rewarded = ~near_start & (goal_distance <= nearest)
        progress = distances(state, goal) - goal_distance
        return np.where(rewarded, progress, 0.0), goal_distance

    def reward(self, state: np.ndarray, next_state: np.ndarray) -> float:
        """Reward of the transition ``state -> next_state`` (both ``[2]``) for the current goal."""
        rewards, _ = self.rewards(np.asarray(state, dtype=np.float64)[None],
                                  np.asarray(next_state, dtype=np.float64)[None], self._goal[None])
        return float(rewards[0])

    def transition(
        self, state: np.ndarray, task: np.ndarray, action: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``s' = s + a``; :meth:`rewards` of the move."""
        next_state = state + action
        rewards, goal_distance = self.rewards(state, next_state, task)
        return next_state, rewards, {"distance": goal_distance}


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
    state_dim = 4

    def __init__(self, reward_type: str = "sparse", sparse_reward_radius: float = 2.0) -> None:
        super().__init__(reward_type=reward_type, sparse_reward_radius=sparse_reward_radius)

    def start_state(self) -> np.ndarray:
        """Position uniform in ``[-0.2, 0.2]^2``, then velocity uniform in ``[-0.1, 0.1]^2``."""
        position = self.np_random.uniform(-0.2, 0.2, size=2)
        velocity = self.np_random.uniform(-0.1, 0.1, size=2)
        return np.concatenate([position, velocity])

    def rewards(self, next_state: np.ndarray, goal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(rewards [k], goal distances [k])`` for arriving at the positions ``next_state``
        (``[k, 2]``) with goals ``goal`` (``[k, 2]``)."""
        goal_distance = distances(next_state, goal)
        if self.reward_type != "sparse":
            return dense_rewards(self.reward_type, goal_distance), goal_distance
        rewards = self.sparse_reward_radius - goal_distance
        return np.where(0.0 > rewards, 0.0, rewards), goal_distance  # max(rewards, 0.0)

    def reward(self, next_state: np.ndarray) -> float:
        """Reward for arriving at position ``next_state`` (``[2]``) for the current goal."""
        rewards, _ = self.rewards(np.asarray(next_state, dtype=np.float64)[None], self._goal[None])
        return float(rewards[0])

    def transition(
        self, state: np.ndarray, task: np.ndarray, action: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``v' = v + a``, ``s' = s + v'`` (state ``(s, v)``); :meth:`rewards` at ``s'``."""
        velocity = state[:, 2:] + action
        position = state[:, :2] + velocity
        rewards, goal_distance = self.rewards(position, task)
        return np.concatenate([position, velocity], axis=1), rewards, {"distance": goal_distance}
