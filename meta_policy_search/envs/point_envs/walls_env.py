"""A corner-goal point env with two circular walls, each with a gap (ProMP's walls task)."""

from __future__ import annotations

import numpy as np

from meta_policy_search.envs.base import as_finite_vector
from meta_policy_search.envs.point_envs.base import (
    check_corner,
    dense_rewards,
    distances,
    sample_corners,
)
from meta_policy_search.envs.point_envs.corner_envs import MetaPointEnvCorner
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

    def __init__(self, reward_type: str = "dense", sparse_reward_radius: float = 2.0) -> None:
        super().__init__(reward_type=reward_type, sparse_reward_radius=sparse_reward_radius)
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

    def task_array(self) -> np.ndarray:
        """The task ``[3, 2]``: goal, inner gap, outer gap (as :meth:`get_task`)."""
        return self.get_task()

    def rewards(
        self, state: np.ndarray, next_state: np.ndarray, goal: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(rewards [k], goal distances [k])`` of ``k`` transitions ``state -> next_state``
        (each ``[k, 2]``, after the walls) towards the goals ``[k, 2]``."""
        goal_distance = distances(next_state, goal)
        if self.reward_type != "sparse":
            return dense_rewards(self.reward_type, goal_distance), goal_distance
        progress = distances(state, goal) - goal_distance
        return np.where(goal_distance < self.sparse_reward_radius, progress, 0.0), goal_distance

    def walls(
        self, state: np.ndarray, next_state: np.ndarray, gaps: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Block the steps that cross a wall outside its gap.

        Args:
            state: ``[k, 2]`` positions before the step.
            next_state: ``[k, 2]`` unconstrained positions after the step.
            gaps: ``[k, 2, 2]`` each copy's inner and outer gap points.

        Returns:
            ``(positions [k, 2], blocked [k] bool)``: ``next_state``, or its radial projection
            just inside the first wall it crosses away from that wall's gap.
        """
        zeros = np.zeros(2)
        radius_before = distances(state, zeros)
        radius_after = distances(next_state, zeros)
        position = next_state.copy()
        blocked = np.zeros(len(state), dtype=bool)
        decided = np.zeros(len(state), dtype=bool)  # the first crossed wall decides
        for w, wall_radius in enumerate(WALL_RADII):
            crossing = ~decided & (radius_before < wall_radius) & (wall_radius < radius_after)
            hit = crossing & (distances(next_state, gaps[:, w]) > GAP_HALF_WIDTH)
            factor = (wall_radius * _INSIDE) / radius_after[hit]
            position[hit] = next_state[hit] * factor[:, None]
            blocked |= hit
            decided |= crossing
        return position, blocked

    def apply_walls(self, state: np.ndarray, next_state: np.ndarray) -> tuple[np.ndarray, bool]:
        """:meth:`walls` for one step of this env: ``(position [2], blocked)``."""
        position, blocked = self.walls(np.asarray(state, dtype=np.float64)[None],
                                       np.asarray(next_state, dtype=np.float64)[None],
                                       self._gaps[None])
        return position[0], bool(blocked[0])

    def transition(
        self, state: np.ndarray, task: np.ndarray, action: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``s' = s + a`` stopped by :meth:`walls`; :meth:`rewards` at the position reached."""
        next_state, blocked = self.walls(state, state + action, task[:, 1:])
        rewards, goal_distance = self.rewards(state, next_state, task[:, 0])
        return next_state, rewards, {"distance": goal_distance,
                                     "wall_hit": blocked.astype(np.float64)}
