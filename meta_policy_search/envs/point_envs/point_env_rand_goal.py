"""The MAML paper's 2-D navigation task (Finn et al. 2017, section 5.3)."""

from __future__ import annotations

import numpy as np

from meta_policy_search.envs.point_envs.base import PointEnvBase, as_point
from meta_policy_search.utils.validation import check_positive_int


class PointEnvRandGoal(PointEnvBase):
    """A point in the plane that must move to a goal drawn uniformly from ``[-0.5, 0.5]^2``.

    * Task: the goal, a float64 array of shape ``[2]`` with every coordinate in
      ``[-0.5, 0.5]``.
    * Reset: the point starts at the origin (no reset noise).
    * Dynamics: ``s' = s + clip(a, -0.1, 0.1)``; the action space is ``Box(-0.1, 0.1, (2,))``.
    * Observation: the position ``s'``, float32 ``[2]``.
    * Reward: ``-||s' - goal||_2``.
    * Info: ``{'distance': ||s' - goal||_2}``.
    * Termination: as in the MAML paper's released env, once the point is within
      ``goal_tolerance`` of the goal on both axes (``terminated=True``); the sampler cuts
      episodes at ``max_path_length`` (the MAML paper used 100). ``truncated`` is always
      ``False``.

    The termination matters for the paper's numbers: a stochastic policy that reaches the goal
    and keeps stepping pays ``-distance`` for its noise at every remaining step (about 5 per
    episode for the policies trained here, the gap between our earlier non-terminating
    2-D navigation results and the paper's after 2-3 steps).

    Before the first :meth:`set_task` the goal is the origin.

    Args:
        goal_tolerance: the episode ends when ``|s' - goal| < goal_tolerance`` on both axes
            (the MAML paper's 0.01); ``None``: it never ends early (every episode
            ``max_path_length`` steps, as in earlier versions of this library).

    Raises:
        ValueError: if ``goal_tolerance`` is not ``None`` or a finite number ``>= 0``.
    """

    action_bound = 0.1
    obs_dim = 2
    goal_bound = 0.5
    """Goals are drawn from ``[-goal_bound, goal_bound]^2``."""

    def __init__(self, goal_tolerance: float | None = 0.01) -> None:
        super().__init__()
        if goal_tolerance is not None and (
            isinstance(goal_tolerance, bool)
            or not isinstance(goal_tolerance, (int, float))
            or not 0 <= goal_tolerance < np.inf
        ):
            raise ValueError(
                f"goal_tolerance must be None or a finite number >= 0, got {goal_tolerance!r}"
            )
        self.goal_tolerance = None if goal_tolerance is None else float(goal_tolerance)

    def sample_tasks(self, n_tasks: int) -> list[np.ndarray]:
        """Draw ``n_tasks`` goals uniformly from ``[-0.5, 0.5]^2`` with ``task_rng``.

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` float64 arrays of shape ``[2]``.
        """
        n_tasks = check_positive_int("n_tasks", n_tasks)
        goals = self.task_rng.uniform(-self.goal_bound, self.goal_bound, size=(n_tasks, 2))
        return list(goals)

    def set_task(self, task: np.ndarray) -> None:
        """Set the goal.

        Args:
            task: ``[2]`` goal with coordinates in ``[-0.5, 0.5]``.

        Raises:
            ValueError: if ``task`` is not a finite ``[2]`` array inside ``[-0.5, 0.5]^2``.
        """
        goal = as_point(task, "goal")
        if np.any(np.abs(goal) > self.goal_bound):
            raise ValueError(
                f"goal must have shape (2,) with coordinates in [-{self.goal_bound}, "
                f"{self.goal_bound}], got {task!r}"
            )
        self._goal = goal

    def get_task(self) -> np.ndarray:
        """Return a copy of the current goal, ``[2]`` float64."""
        return self._goal.copy()

    def start_state(self) -> np.ndarray:
        """The origin (no reset noise)."""
        return np.zeros(2)
