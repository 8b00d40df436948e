"""A corner-goal point env with two circular walls, each with a gap (ProMP's walls task)."""

from __future__ import annotations

import math

import numpy as np

from meta_policy_search.envs.base import as_finite_vector
from meta_policy_search.envs.point_envs.base import (
    batched_dense_reward,
    batched_distance,
    check_corner,
    dense_reward,
    distance,
    sample_corners,
)
from meta_policy_search.envs.point_envs.corner_envs import BatchedPointEnvCorner, MetaPointEnvCorner
from meta_policy_search.utils.validation import check_positive_int

WALL_RADII = (1.0, 2.0)
"""Radii of the inner and outer circular walls around the origin."""

GAP_HALF_WIDTH = 1.0
"""A crossing point within this Euclidean distance of a wall's gap point passes through."""

_INSIDE = 1.0 - 1e-6
"""Blocked points are put just inside the wall, so stepping outward again counts as crossing."""


class MetaPointEnvWalls(MetaPointEnvCorner):
    """Reach a corner goal through gaps in two circular walls at radius 1 and 2.

    * Task: a float64 array of shape ``[3, 2]``: row 0 the goal corner ``(+-2, +-2)`` (uniform),
      row 1 the inner gap point on the unit circle, row 2 the outer gap point on the circle of
      radius 2 (both in a direction drawn from an isotropic Gaussian with ``task_rng``).
    * Reset, dynamics and action space as :class:`MetaPointEnvCorner`:
      ``s ~ U(-0.2, 0.2)^2``, ``s' = s + clip(a, -0.2, 0.2)``.
    * Walls: a step from inside radius ``r`` (1 or 2) to outside it whose end point is farther
      than :data:`GAP_HALF_WIDTH` from that wall's gap point is blocked: ``s'`` is projected
      radially back onto (just inside) the wall. Walls only block outward crossings.
    * Observation: the position ``s'`` after the projection, float32 ``[2]``.
    * Reward, with ``g`` the goal and ``s'`` the position after the projection:
      ``'dense'`` (default) ``-||s' - g||``; ``'dense_squared'`` ``-||s' - g||^2``; ``'sparse'``:
      the progress ``||s - g|| - ||s' - g||`` while ``||s' - g|| < sparse_reward_radius``, else 0.
    * Info: ``{'distance': ||s' - g||_2, 'wall_hit': 1.0 if the step was blocked else 0.0}``.
      Termination: never.

    Deliberate fixes of the original: its sparse reward returned ``None`` outside the radius
    (here 0), and it computed the reward *before* projecting the point back onto the wall, so a
    blocked step was still rewarded for where it would have gone (here the reward is computed
    on the position the agent actually reaches). The original's task was a dict
    ``{goal, gap_1, gap_2}``; here it is one ``[3, 2]`` array so tasks stay plain numpy.

    Args:
        reward_type: ``'dense'`` (default), ``'dense_squared'`` or ``'sparse'``.
        sparse_reward_radius: radius around the goal inside which the sparse reward is paid
            (default 2).

    Raises:
        ValueError: for an unknown ``reward_type`` or a negative radius.
    """

    def make_batched(self, num_envs: int) -> BatchedPointEnvWalls:
        """``num_envs`` copies stepped as whole arrays (:class:`BatchedPointEnvWalls`)."""
        return BatchedPointEnvWalls(self, num_envs)

    def __init__(self, reward_type: str = "dense", sparse_reward_radius: float = 2.0) -> None:
        super().__init__(reward_type, sparse_reward_radius)
        self._gaps = np.array([[WALL_RADII[0], 0.0], [WALL_RADII[1], 0.0]])

    def sample_tasks(self, n_tasks: int) -> list[np.ndarray]:
        """Draw ``n_tasks`` (goal corner, inner gap, outer gap) tasks with ``task_rng``.

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` float64 arrays of shape ``[3, 2]``.
        """
        n_tasks = check_positive_int("n_tasks", n_tasks)
        goals = sample_corners(self.task_rng, n_tasks)
        directions = self.task_rng.normal(size=(n_tasks, 2, 2))
        directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
        gaps = directions * np.array(WALL_RADII)[None, :, None]
        return [np.concatenate([goal[None], gap], axis=0) for goal, gap in zip(goals, gaps)]

    def set_task(self, task: np.ndarray) -> None:
        """Set the goal and the two gap points.

        Args:
            task: ``[3, 2]`` array: goal corner, gap point at radius 1, gap point at radius 2.

        Raises:
            ValueError: if ``task`` is not a finite ``[3, 2]`` array whose first row is a corner
                and whose other rows lie on the circles of radius 1 and 2.
        """
        array = as_finite_vector(task, "walls task", (3, 2))
        norms = np.linalg.norm(array[1:], axis=1)
        if not np.allclose(norms, WALL_RADII, rtol=1e-5, atol=0.0):
            raise ValueError(
                f"walls task rows 1 and 2 must be gap points at radius {WALL_RADII}, got radii "
                f"{norms.tolist()} in {task!r}"
            )
        self._goal = check_corner(array[0])
        self._gaps = array[1:].copy()

    def get_task(self) -> np.ndarray:
        """Return the task as a new ``[3, 2]`` float64 array (goal, inner gap, outer gap)."""
        return np.concatenate([self._goal[None], self._gaps], axis=0)

    def reward(self, state: np.ndarray, next_state: np.ndarray) -> float:
        """Reward of the transition ``state -> next_state`` (both ``[2]``, after the walls)."""
        goal_distance = distance(next_state, self._goal)
        if self.reward_type != "sparse":
            return dense_reward(self.reward_type, goal_distance)
        if goal_distance < self.sparse_reward_radius:
            return distance(state, self._goal) - goal_distance
        return 0.0

    def apply_walls(self, state: np.ndarray, next_state: np.ndarray) -> tuple[np.ndarray, bool]:
        """Block a step that crosses a wall outside its gap.

        Args:
            state: ``[2]`` position before the step.
            next_state: ``[2]`` unconstrained position after the step.

        Returns:
            ``(position [2], blocked)``: ``next_state`` itself, or its radial projection just
            inside the crossed wall when the step is blocked.
        """
        radius_before = math.hypot(state[0], state[1])
        radius_after = math.hypot(next_state[0], next_state[1])
        for wall_radius, gap in zip(WALL_RADII, self._gaps):
            if radius_before < wall_radius < radius_after:
                if distance(next_state, gap) > GAP_HALF_WIDTH:
                    return next_state * (wall_radius * _INSIDE / radius_after), True
                return next_state, False
        return next_state, False

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, float]]:
        """Move by the clipped action, stopping at a wall crossed away from its gap.

        Args:
            action: ``[2]`` displacement, clipped to ``[-0.2, 0.2]``.

        Returns:
            ``(observation [2], reward, False, False, {'distance', 'wall_hit'})``.

        Raises:
            ValueError: if ``action`` does not have shape ``[2]``.
            RuntimeError: if :meth:`reset` was not called first.
        """
        state = self._current_state()
        self._state, blocked = self.apply_walls(state, state + self._clipped_action(action))
        reward = self.reward(state, self._state)
        info = {"distance": distance(self._state, self._goal), "wall_hit": float(blocked)}
        return self._observation(), reward, False, False, info


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
            return batched_dense_reward(self.reward_type, goal_distance), goal_distance
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
