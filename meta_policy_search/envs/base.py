"""The :class:`MetaEnv` protocol, a gymnasium env with a distribution over tasks, and its batched
form :class:`BatchedMetaEnv`, many copies stepped as whole arrays.

Each built-in env writes its reward, termination and observation once, over a batch of ``k``
rows; its gymnasium ``step`` is the case ``k = 1`` and its ``make_batched`` steps ``num_envs``
copies with the same methods (:mod:`meta_policy_search.envs.point_envs.base`,
:mod:`meta_policy_search.envs.mujoco_envs.common`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from meta_policy_search.types import PathBatch, Task


class BatchedStep(NamedTuple):
    """What :meth:`BatchedMetaEnv.step` returns for ``k`` stepped envs.

    Attributes:
        observations: ``[k, obs_dim]`` float64.
        rewards: ``[k]`` float64.
        dones: ``[k]`` bool: the episode terminated (or the env truncated it).
        infos: info name -> ``[k]`` float64, the same keys (in the same order) every step.
    """

    observations: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    infos: dict[str, np.ndarray]


class BatchedMetaEnv:
    """``num_envs`` copies of a MetaEnv, each with its own task and episode.

    The rollout loop (:mod:`meta_policy_search.samplers.rollout`) steps one of these. Contract,
    checked against the single env by ``tests/test_batched_envs.py``: for the same task, reset
    seed and actions, env ``i`` returns the same observations, rewards, termination flags and
    info values (the scalar-number entries of the single env's info, in the same key order) as
    the single env's ``reset(seed=...)`` and ``step``.

    Args:
        num_envs: number of env copies, positive.
        observation_space: the single env's observation space (1-D box).
        action_space: the single env's action space (1-D box); actions are given in its units.
    """

    def __init__(self, num_envs: int, observation_space: Any, action_space: Any) -> None:
        self.num_envs = int(num_envs)
        self.observation_space = observation_space
        self.action_space = action_space

    def set_tasks(self, tasks: Sequence[Task]) -> None:
        """Set ``tasks[i]`` on env ``i`` (``len(tasks) == num_envs``).

        Raises:
            ValueError: on a wrong number of tasks or a task the single env rejects.
        """
        raise NotImplementedError

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """Start a new episode in the envs ``indices`` (ascending), as ``reset(seed=seeds[k])``.

        Returns:
            ``[len(indices), obs_dim]`` float64 first observations.
        """
        raise NotImplementedError

    def step(self, indices: np.ndarray, actions: np.ndarray) -> BatchedStep:
        """Step the envs ``indices`` (ascending, each reset before) with ``actions[k]``.

        Args:
            indices: ``[k]`` int env indices.
            actions: ``[k, act_dim]`` actions in the action space's units.

        Raises:
            ValueError: if an env's info lacks a key that its earlier steps had.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Release the envs' resources."""


def check_num_tasks(tasks: Sequence[Task], num_envs: int) -> None:
    """Raise a ValueError unless there is one task per env."""
    if len(tasks) != num_envs:
        raise ValueError(f"expected one task per env ({num_envs}), got {len(tasks)}")


class MetaEnv(gym.Env):
    """A :class:`gymnasium.Env` whose dynamics or reward depend on a task.

    Subclasses implement :meth:`sample_tasks`, :meth:`set_task` and :meth:`get_task`, and may
    override :meth:`log_diagnostics`, and :meth:`sample_test_tasks` when the env has held-out
    test tasks of its own (a benchmark's test split, as in Meta-World). Tasks are drawn from ``task_rng``, a
    :class:`numpy.random.Generator` owned by the env and seeded with :meth:`seed_tasks`; the
    global ``np.random`` state is never used. Episode randomness (reset noise) comes from
    gymnasium's own ``np_random``, seeded through ``reset(seed=...)``.

    No MetaEnv has a time limit of its own: the sampler cuts episodes at ``max_path_length``.
    """

    _task_rng: np.random.Generator | None = None

    @property
    def task_rng(self) -> np.random.Generator:
        """Generator used by :meth:`sample_tasks` (unseeded until :meth:`seed_tasks` is called)."""
        if self._task_rng is None:
            self._task_rng = np.random.default_rng()
        return self._task_rng

    def seed_tasks(self, seed: int | None) -> None:
        """Seed the task distribution's random generator.

        Args:
            seed: seed for :class:`numpy.random.Generator`; ``None`` draws fresh entropy.
        """
        self._task_rng = np.random.default_rng(seed)

    def sample_tasks(self, n_tasks: int) -> list[Task]:
        """Draw ``n_tasks`` tasks from the task distribution.

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` tasks, each accepted by :meth:`set_task`.
        """
        raise NotImplementedError

    def sample_test_tasks(self, n_tasks: int) -> list[Task]:
        """Draw ``n_tasks`` tasks for meta-testing
        (:func:`~meta_policy_search.evaluation.adaptation.draw_tasks`).

        By default the training distribution (:meth:`sample_tasks`): the paper's envs have no
        separate test tasks, held-out tasks are fresh draws. An env with a benchmark's test
        split overrides this.

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` tasks, each accepted by :meth:`set_task`.
        """
        return self.sample_tasks(n_tasks)

    def set_task(self, task: Task) -> None:
        """Make ``task`` the task of all following episodes.

        Raises:
            ValueError: if ``task`` does not have the shape or range of this env's tasks.
        """
        raise NotImplementedError

    def get_task(self) -> Task:
        """Return the current task."""
        raise NotImplementedError

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """Compute env-specific statistics of a batch of rollouts.

        Args:
            paths: the padded rollouts of one inner step; ``paths.env_infos`` holds the per-step
                infos this env returns, each ``[T, R, H]``.
            prefix: prepended to every key, e.g. ``'Step_0-'``.

        Returns:
            A dict of scalar statistics (empty by default).
        """
        return {}

    def make_batched(self, num_envs: int) -> BatchedMetaEnv | None:
        """``num_envs`` copies of this env stepped as whole arrays, or ``None`` if the env has no
        batched implementation (the samplers then step copies one at a time).

        Args:
            num_envs: number of env copies, positive.

        Returns:
            A :class:`BatchedMetaEnv` whose env ``i`` behaves
            like a copy of this env (same task semantics, reset noise and steps), or ``None``.
        """
        return None


LIBRARY_PACKAGE = "meta_policy_search"
"""Classes defined in this package are the ones the library's batched forms reproduce."""

SAFE_OVERRIDES = frozenset({
    "__init__", "sample_tasks", "sample_test_tasks", "get_task", "seed_tasks", "log_diagnostics",
    "render", "close",
})
"""Methods a user subclass may override and still be stepped by its library parent's batched
form: they do not take part in stepping (``__init__`` may change parameters, which the batched
forms read from the env instance)."""

_log = logging.getLogger(__name__)
_reported: set[type] = set()


def unreproduced_overrides(cls: type) -> list[str]:
    """The stepping methods a user subclass overrides that its library parent's batched form
    might not reproduce.

    Walks ``cls``'s method resolution order down to the first class of this library: every
    method, property or class attribute that is callable, defined by a class on the way and also
    defined by the library class (``step``, ``reset``, ``set_task``, a reward, observation or
    termination method, ...) counts, except :data:`SAFE_OVERRIDES` and dunder methods. A class
    on the way that defines ``make_batched`` declares that its batched form reproduces it (its
    maths is written over rows, as the library's), and nothing counts.

    Args:
        cls: an env class.

    Returns:
        The overridden names, sorted; empty if the batched form reproduces ``cls``.
    """
    library = next((k for k in cls.__mro__ if k.__module__.split(".")[0] == LIBRARY_PACKAGE), None)
    if library is None:
        return []
    names = set()
    for klass in cls.__mro__:
        if klass is library:
            break
        if "make_batched" in klass.__dict__:
            return []
        for name, value in klass.__dict__.items():
            if name in SAFE_OVERRIDES or (name.startswith("__") and name.endswith("__")):
                continue
            stepping = callable(value) or isinstance(value, (property, staticmethod, classmethod))
            if stepping and hasattr(library, name):
                names.add(name)
    return sorted(names)


def batched_form(env: object, num_envs: int) -> BatchedMetaEnv | None:
    """``env.make_batched(num_envs)``, unless ``env``'s class changes what that batched form
    reproduces.

    A user subclass of a library env that overrides ``step``, ``reset``, its reward, observation
    or termination (see :func:`unreproduced_overrides`) is not served by the parent's batched
    form unless it defines ``make_batched`` itself: it gets ``None`` (its copies are stepped one
    at a time, running its own code), and the log says so once per class. The batched forms
    call the env's own row methods, so such a subclass keeps its results either way; the
    declaration guards against a method written for one row only.

    Args:
        env: a MetaEnv (or a wrapper with ``make_batched``).
        num_envs: number of env copies, positive.

    Returns:
        The batched form, or ``None`` for the per-env path.
    """
    make = getattr(env, "make_batched", None)
    if make is None or getattr(type(env), "make_batched", None) is MetaEnv.make_batched:
        return None  # no batched form at all: nothing to say
    overrides = unreproduced_overrides(type(env))
    if overrides:
        cls = type(env)
        if cls not in _reported:
            _reported.add(cls)
            _log.warning(
                "%s overrides %s, which the batched form of its library parent may not "
                "reproduce: its copies are stepped one at a time (define make_batched to declare "
                "a batched form, e.g. the parent's if the overrides are written over rows)",
                cls.__qualname__, ", ".join(overrides),
            )
        return None
    batched: BatchedMetaEnv | None = make(num_envs)
    return batched


def as_finite_vector(task: object, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Return ``task`` as a new float64 array of ``shape``.

    Args:
        task: anything :func:`numpy.array` accepts.
        name: what ``task`` is, for the error message (e.g. ``'goal'``).
        shape: the required shape, e.g. ``(2,)``.

    Returns:
        A new float64 array of shape ``shape``.

    Raises:
        ValueError: if ``task`` has another shape or non-finite entries.
    """
    try:
        array = np.array(task, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a float array of shape {shape}, got {task!r}") from error
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got shape {array.shape}: {task!r}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {task!r}")
    return array
