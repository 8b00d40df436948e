"""Task distributions shared by the MuJoCo meta-envs: directions, target velocities, goals.

Each mixin implements :meth:`~meta_policy_search.envs.base.MetaEnv.sample_tasks`,
:meth:`~meta_policy_search.envs.base.MetaEnv.set_task` and
:meth:`~meta_policy_search.envs.base.MetaEnv.get_task` of
:class:`~meta_policy_search.envs.base.MetaEnv` for one kind of task and stores the current task
in an attribute the env's reward reads (``goal_direction``, ``goal_velocity``, ``goal_position``).
Tasks are drawn from ``self.task_rng`` only.
"""

from __future__ import annotations

import numpy as np

from meta_policy_search.envs.base import as_finite_vector
from meta_policy_search.envs.batched.mujoco import row_dots
from meta_policy_search.envs.mujoco_envs.common import ForwardRewardEnv, MujocoMetaEnv
from meta_policy_search.envs.mujoco_envs.diagnostics import velocity_error_diagnostics
from meta_policy_search.types import PathBatch
from meta_policy_search.utils.validation import check_positive_int

_UNIT_NORM_TOLERANCE = 1e-5


def as_finite_scalar(task: object, name: str) -> float:
    """Return ``task`` as a Python float.

    Raises:
        ValueError: if ``task`` is not a finite real scalar.
    """
    if isinstance(task, (bool, np.bool_)):
        raise ValueError(f"{name} must be a finite real number, got {task!r}")
    return float(as_finite_vector(task, name, ()))


class DirectionTaskEnv(ForwardRewardEnv):
    """Task: a direction ``d`` in ``{-1.0, +1.0}``, drawn uniformly. Default task: ``+1.0``.

    ``reward_forward`` is ``d * v_x``; ``forward_vel`` is ``v_x``.
    """

    goal_direction: float = 1.0

    def sample_tasks(self, n_tasks: int) -> list[float]:
        """Draw ``n_tasks`` directions, each ``-1.0`` or ``+1.0`` with probability 1/2.

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` floats.

        Raises:
            ValueError: if ``n_tasks`` is not a positive integer.
        """
        n_tasks = check_positive_int("n_tasks", n_tasks)
        return [float(d) for d in self.task_rng.choice((-1.0, 1.0), size=n_tasks)]

    def set_task(self, task: float) -> None:
        """Set the direction.

        Args:
            task: ``-1`` or ``+1`` (int, float or numpy scalar).

        Raises:
            ValueError: if ``task`` is not exactly ``-1`` or ``+1``.
        """
        direction = as_finite_scalar(task, "direction task")
        if direction not in (-1.0, 1.0):
            raise ValueError(f"direction task must be -1.0 or +1.0, got {task!r}")
        self.goal_direction = direction

    def get_task(self) -> float:
        """Return the current direction, ``-1.0`` or ``+1.0``."""
        return self.goal_direction

    def task_array(self) -> float:
        """The direction ``d``."""
        return self.goal_direction

    def _forward_reward(self, task: np.ndarray, forward_vel: np.ndarray) -> np.ndarray:
        """``d * v_x`` for each row."""
        return task * forward_vel


class Direction2DTaskEnv(ForwardRewardEnv):
    """Task: a unit vector in the plane, uniform on the circle. Default task: ``(1, 0)``.

    ``forward_vel`` and ``reward_forward`` are both ``d . v_xy``, the speed along ``d``.
    """

    goal_direction: np.ndarray

    def sample_tasks(self, n_tasks: int) -> list[np.ndarray]:
        """Draw ``n_tasks`` unit directions (normalised standard Gaussian vectors).

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` float64 arrays of shape ``[2]`` and norm 1.

        Raises:
            ValueError: if ``n_tasks`` is not a positive integer.
        """
        n_tasks = check_positive_int("n_tasks", n_tasks)
        directions = self.task_rng.standard_normal(size=(n_tasks, 2))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return list(directions)

    def set_task(self, task: np.ndarray) -> None:
        """Set the direction.

        Args:
            task: ``[2]`` vector of norm 1 (within 1e-5).

        Raises:
            ValueError: if ``task`` is not a finite ``[2]`` vector of unit norm.
        """
        direction = as_finite_vector(task, "2-D direction task", (2,))
        norm = float(np.linalg.norm(direction))
        if abs(norm - 1.0) > _UNIT_NORM_TOLERANCE:
            raise ValueError(f"2-D direction task must have norm 1, got norm {norm}: {task!r}")
        self.goal_direction = direction / norm

    def get_task(self) -> np.ndarray:
        """Return a copy of the current ``[2]`` unit direction."""
        return self.goal_direction.copy()

    def task_array(self) -> np.ndarray:
        """The unit direction ``[2]``."""
        return self.goal_direction

    def _forward_velocity(self, task: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """``d . v`` for each row."""
        return row_dots(task, velocity)


class VelocityTaskEnv(ForwardRewardEnv):
    """Task: a target forward velocity ``v*`` uniform in ``velocity_range``.

    Default task: the middle of the range. :meth:`set_task` accepts any finite velocity, so
    targets outside the training range can be evaluated. ``reward_forward`` is
    ``-|v_x - v*|``; ``forward_vel`` is ``v_x``.
    """

    velocity_range: tuple[float, float] = (0.0, 1.0)
    goal_velocity: float = 0.5

    def sample_tasks(self, n_tasks: int) -> list[float]:
        """Draw ``n_tasks`` target velocities uniform in ``[low, high)`` of ``velocity_range``.

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` floats.

        Raises:
            ValueError: if ``n_tasks`` is not a positive integer.
        """
        n_tasks = check_positive_int("n_tasks", n_tasks)
        low, high = self.velocity_range
        return [float(v) for v in self.task_rng.uniform(low, high, size=n_tasks)]

    def set_task(self, task: float) -> None:
        """Set the target velocity.

        Args:
            task: a finite real number.

        Raises:
            ValueError: if ``task`` is not a finite real scalar.
        """
        self.goal_velocity = as_finite_scalar(task, "target velocity task")

    def get_task(self) -> float:
        """Return the current target velocity."""
        return self.goal_velocity

    def _default_velocity(self) -> float:
        low, high = self.velocity_range
        return 0.5 * (low + high)

    def task_array(self) -> float:
        """The target velocity."""
        return self.goal_velocity

    def _forward_reward(self, task: np.ndarray, forward_vel: np.ndarray) -> np.ndarray:
        """``-|v_x - target|`` for each row."""
        return -np.abs(forward_vel - task)

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """Velocity statistics plus ``AvgVelError`` (see :mod:`.diagnostics`)."""
        return velocity_error_diagnostics(paths, prefix)


class GoalTaskEnv(MujocoMetaEnv):
    """Task: a goal position uniform in the disk of radius ``goal_radius``. Default: the origin.

    :meth:`set_task` accepts any finite ``[2]`` position.
    """

    goal_radius: float = 3.0
    goal_position: np.ndarray

    def sample_tasks(self, n_tasks: int) -> list[np.ndarray]:
        """Draw ``n_tasks`` goals uniform in the disk (radius ``goal_radius * sqrt(U)``).

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` float64 arrays of shape ``[2]``.

        Raises:
            ValueError: if ``n_tasks`` is not a positive integer.
        """
        n_tasks = check_positive_int("n_tasks", n_tasks)
        angle = self.task_rng.uniform(0.0, 2.0 * np.pi, size=n_tasks)
        radius = self.goal_radius * np.sqrt(self.task_rng.uniform(0.0, 1.0, size=n_tasks))
        return list(np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=-1))

    def set_task(self, task: np.ndarray) -> None:
        """Set the goal.

        Args:
            task: ``[2]`` goal position ``(x, y)``.

        Raises:
            ValueError: if ``task`` is not a finite ``[2]`` vector.
        """
        self.goal_position = as_finite_vector(task, "goal task", (2,))

    def task_array(self) -> np.ndarray:
        """The goal position ``[2]``."""
        return self.goal_position

    def get_task(self) -> np.ndarray:
        """Return a copy of the current ``[2]`` goal."""
        return self.goal_position.copy()
