"""Shared machinery of the 2-D point-mass meta-environments (pure numpy, no MuJoCo).

A point env keeps its position as a float64 numpy array (observations are float32 copies), reads
its task from :attr:`~meta_policy_search.envs.base.MetaEnv.task_rng` and its reset noise from
gymnasium's ``np_random``. Every step reports ``info = {'distance': ||s' - goal||_2}`` so that
:meth:`PointEnvBase.log_diagnostics` can summarise how close the rollouts got to their goals.

The envs hold only numpy state, so plain :mod:`pickle` copies them (no ``__init__`` re-run).
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Sequence

import gymnasium as gym
import numpy as np

from meta_policy_search.envs.base import MetaEnv, as_finite_vector
from meta_policy_search.envs.batched.base import BatchedMetaEnv, BatchedStep, check_num_tasks
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


def dense_reward(reward_type: str, distance: float) -> float:
    """The ``'dense'`` (``-d``) or ``'dense_squared'`` (``-d**2``) reward at goal distance ``d``."""
    return -distance if reward_type == "dense" else -distance * distance


def sample_corners(rng: np.random.Generator, n_tasks: int) -> list[np.ndarray]:
    """Draw ``n_tasks`` corners uniformly (with replacement) from :data:`CORNERS`."""
    n_tasks = check_positive_int("n_tasks", n_tasks)
    return [CORNERS[i].copy() for i in rng.integers(len(CORNERS), size=n_tasks)]


def distance(a: np.ndarray, b: np.ndarray) -> float:
    """Euclidean distance of two ``[2]`` points (``math.hypot``: ~10x faster than linalg.norm)."""
    return math.hypot(a[0] - b[0], a[1] - b[1])


class PointEnvBase(MetaEnv):
    """Common base of the point envs: spaces, action checks, episode state and diagnostics.

    Subclasses set the class attributes ``action_bound`` and ``obs_dim`` and implement
    :meth:`sample_tasks`, :meth:`set_task`, :meth:`get_task`, ``reset`` and ``step``
    (gymnasium's).
    """

    metadata = {"render_modes": []}
    action_bound: float = 0.1
    """Actions are clipped to ``[-action_bound, action_bound]`` per coordinate; this is also the
    action :class:`~gymnasium.spaces.Box`, so :func:`~meta_policy_search.envs.normalize` maps the
    policy's box onto it."""
    obs_dim: int = 2
    """Size of the observation vector."""
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

    def _current_state(self) -> np.ndarray:
        """The position ``[2]``; raises RuntimeError if :meth:`reset` was not called."""
        if self._state is None:
            raise RuntimeError(f"{type(self).__name__}: call reset() before step()")
        return self._state

    def _clipped_action(self, action: object) -> np.ndarray:
        """Check that reset() was called and ``action`` has shape ``[2]``; return it clipped."""
        self._current_state()
        act = np.asarray(action, dtype=np.float64)
        if act.shape != (2,):
            raise ValueError(f"action must have shape (2,), got shape {act.shape}: {action!r}")
        # np.minimum/np.maximum: same result as np.clip, about 1 us faster per step.
        return np.minimum(np.maximum(act, -self.action_bound), self.action_bound)

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

    def _observation(self) -> np.ndarray:
        assert self._state is not None
        return self._state.astype(np.float32)


__all__ = [
    "CORNERS",
    "REWARD_TYPES",
    "PointEnvBase",
    "as_point",
    "check_corner",
    "check_reward_type",
    "dense_reward",
    "distance",
    "sample_corners",
]


def batched_distance(points: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``[n]`` Euclidean distances of ``[n, 2]`` points to ``[n, 2]`` (or ``[2]``) targets.

    Bit-identical to :func:`distance` per row: :func:`numpy.hypot` calls the C library's
    ``hypot``, which may differ from :func:`math.hypot` in the last bit, so this maps the latter.
    """
    offset = points - targets
    num = len(offset)
    return np.fromiter(map(math.hypot, offset[:, 0].tolist(), offset[:, 1].tolist()), float, num)


def batched_dense_reward(reward_type: str, distance: np.ndarray) -> np.ndarray:
    """``-d`` (``'dense'``) or ``-d^2`` (``'dense_squared'``) for ``[n]`` distances."""
    return -distance if reward_type == "dense" else -distance * distance


class BatchedPointEnv(BatchedMetaEnv):
    """``num_envs`` copies of a point env, all positions and goals as ``[n, 2]`` arrays.

    The batched twin of :class:`PointEnvBase` with
    :class:`~meta_policy_search.envs.point_envs.PointEnvRandGoal`'s transition by default; each
    point env's twin sits next to it and overrides ``_read_reset``, ``_read_task`` and
    ``_transition``, mirroring the single env operation by operation (bit-identical results,
    ``tests/test_batched_envs.py``). Tasks are validated, and reset noise drawn, by a private
    copy of the single env (its own ``set_task`` and ``reset``).

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
