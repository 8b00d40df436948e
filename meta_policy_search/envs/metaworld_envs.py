"""Meta-World's ML1 and ML10 benchmarks as :class:`~meta_policy_search.envs.MetaEnv` s.

Meta-World (Yu et al. 2019, `metaworld <https://github.com/Farama-Foundation/Metaworld>`_) is
the standard manipulation benchmark of meta-RL. It is an optional dependency with its own venv
(``make venv-metaworld``: metaworld 3.1.1 pins mujoco 3.3.0). This module imports ``metaworld``
only when an env is built, so it imports (and documents) without it.

Tasks are integer indices into the benchmark's task list, training tasks first:
``0 .. num_train_tasks - 1`` are the benchmark's ``train_tasks``, the rest its ``test_tasks``.
:meth:`~MetaWorldBenchmarkEnv.sample_tasks` draws training tasks only (meta-training),
:meth:`~MetaWorldBenchmarkEnv.sample_test_tasks` the held-out ones (meta-testing,
:func:`meta_policy_search.evaluation.adaptation.draw_tasks` and
:mod:`meta_policy_search.evaluation.metaworld_protocol`). Both draw the same number of tasks from
every env class of the split, as Meta-World's own vectorised ML envs do. An index is small,
picklable and JSON-able; :meth:`~MetaWorldBenchmarkEnv.task_parameters` tells what it stands for
(env name, goal vector).

The reward function is selectable: ``reward_function_version`` ``'v2'`` (Meta-World's default
since its v2 envs, Meta-World+'s "V2") or ``'v1'`` (the reward of the original paper, Meta-World+'s
"V1"; McLean et al. 2025, arXiv:2505.11289). Give it as ``--env_kwargs
'{"reward_function_version": "v1"}'``; the ``ML10`` paper config writes it into ``params.json``.

Run scripts and :func:`~meta_policy_search.envs.make_env` take the names ``ML1-<env>`` (e.g.
``ML1-reach-v3``) and ``ML10``.
"""

from __future__ import annotations

import pickle
import sys
from types import ModuleType
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from meta_policy_search.envs.base import MetaEnv
from meta_policy_search.types import PathBatch, Task

ML1_PREFIX = "ML1-"
"""Names ``ML1-<env>`` build :class:`MetaWorldML1Env` on Meta-World env ``<env>``."""

ML10_NAME = "ML10"
"""The name that builds :class:`MetaWorldML10Env`."""

METAWORLD_MAX_PATH_LENGTH = 500
"""Meta-World's horizon; the run scripts' default ``max_path_length`` for these envs."""

INSTALL_HINT = (
    "the Meta-World envs need the optional package metaworld (which pins mujoco 3.3.0): run "
    "`make venv-metaworld` and use .venv-metaworld/bin/python, or "
    "`pip install -r requirements-metaworld.txt` in a venv of its own"
)
"""What to do when ``metaworld`` cannot be imported."""

INFO_KEYS = ("success", "near_object", "grasp_success", "obj_to_target")
"""Meta-World's per-step infos passed on to the sampler (as floats)."""

REWARD_FUNCTION_VERSIONS = ("v1", "v2")
"""Meta-World's reward functions (its envs' ``reward_function_version``): ``v1`` is the reward of
the original benchmark (Yu et al. 2019), ``v2`` the one its envs use by default since."""

DEFAULT_REWARD_FUNCTION_VERSION = "v2"
"""Meta-World's default, and Meta-World+'s default in its baselines (``metaworld-algorithms``)."""

SPLITS = ("train", "test")
"""A benchmark's task splits: meta-training and held-out meta-test tasks."""


def is_metaworld_env_name(name: object) -> bool:
    """Whether ``name`` is a Meta-World env name: ``ML10`` or ``ML1-<env>``."""
    return isinstance(name, str) and (
        name == ML10_NAME or (name.startswith(ML1_PREFIX) and len(name) > len(ML1_PREFIX))
    )


def check_reward_function_version(value: object) -> str:
    """Return ``value`` if it is one of :data:`REWARD_FUNCTION_VERSIONS`.

    Raises:
        ValueError: naming the value and the valid ones.
    """
    if value not in REWARD_FUNCTION_VERSIONS:
        raise ValueError(f"reward_function_version must be one of {REWARD_FUNCTION_VERSIONS}, "
                         f"got {value!r}")
    return str(value)


def import_metaworld() -> ModuleType:
    """Import ``metaworld``.

    Raises:
        ImportError: if it is not installed; the message says how to install it.
    """
    try:
        # Meta-World is optional: loaded only when one of its envs is built
        import metaworld
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error
    return metaworld


def make_metaworld_env(name: str, **kwargs: Any) -> MetaWorldBenchmarkEnv:
    """Build the Meta-World env called ``name``.

    Args:
        name: ``'ML1-<env>'`` (e.g. ``'ML1-reach-v3'``) or ``'ML10'``.
        **kwargs: constructor arguments (``benchmark_seed``, ``reward_function_version``).

    Returns:
        A :class:`MetaWorldML1Env` or :class:`MetaWorldML10Env`.

    Raises:
        ValueError: if ``name`` is not a Meta-World name, or ``<env>`` is not a Meta-World env.
        ImportError: if ``metaworld`` is not installed.
    """
    if name == ML10_NAME:
        return MetaWorldML10Env(**kwargs)
    if is_metaworld_env_name(name):
        return MetaWorldML1Env(env_name=name[len(ML1_PREFIX):], **kwargs)
    raise ValueError(f"{name!r} is not a Meta-World env name: use {ML1_PREFIX}<env> or {ML10_NAME}")


class MetaWorldBenchmarkEnv(MetaEnv):
    """A Meta-World meta-learning benchmark: one MetaEnv over all its train and test tasks.

    Holds one Meta-World env per env class of the benchmark, built when a task of that class is
    first set (about 0.3 s each). Differences from the raw Meta-World envs:

    * no time limit: the sampler cuts episodes at ``max_path_length`` (Meta-World's own is
      :data:`METAWORLD_MAX_PATH_LENGTH`, the run scripts' default);
    * actions are clipped to the action box ``[-1, 1]^4``;
    * ``reset(seed=...)`` seeds the Meta-World env (its own ``reset`` ignores the seed; with a
      task set, Meta-World's resets are deterministic anyway);
    * infos are the floats of :data:`INFO_KEYS`; :meth:`log_diagnostics` reports
      ``SuccessRate``, the fraction of episodes with ``success`` at some step (Meta-World's
      success criterion), and ``AverageFinalObjToTarget``.

    A copy made by pickling carries the task list, not the MuJoCo envs (tens of MB each): it
    rebuilds them on use. Every sampler env copy therefore builds its own env; with large
    ``rollouts_per_meta_task`` prefer a small ``--envs_per_task``.

    Args:
        benchmark: a Meta-World benchmark (``metaworld.ML1(...)``, ``metaworld.ML10(...)``, ...):
            its ``train_classes``/``test_classes`` and ``train_tasks``/``test_tasks`` are used.
        reward_function_version: one of :data:`REWARD_FUNCTION_VERSIONS`, passed to every
            Meta-World env built.

    Raises:
        ValueError: if ``reward_function_version`` is not one of :data:`REWARD_FUNCTION_VERSIONS`,
            or the benchmark lacks train or test tasks.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, benchmark: Any,
                 reward_function_version: str = DEFAULT_REWARD_FUNCTION_VERSION) -> None:
        self.reward_function_version = check_reward_function_version(reward_function_version)
        """Meta-World's reward function of every env: ``'v1'`` or ``'v2'``."""
        self._classes: dict[str, type] = {**benchmark.train_classes, **benchmark.test_classes}
        train, test = list(benchmark.train_tasks), list(benchmark.test_tasks)
        if not train or not test:
            raise ValueError("the benchmark must have train and test tasks")
        self._metaworld_tasks = train + test
        self.num_train_tasks = len(train)
        """Number of training tasks (indices ``0 .. num_train_tasks - 1``)."""
        self.num_test_tasks = len(test)
        """Number of test tasks (the indices after the training tasks)."""
        self._split_classes: dict[str, dict[str, list[int]]] = {
            split: _indices_by_env_name(tasks, first_index)
            for split, tasks, first_index in (("train", train, 0), ("test", test, len(train)))
        }
        self._envs: dict[str, Any] = {}
        self._task: int | None = None
        env = self._env_for(self._metaworld_tasks[0])
        self.observation_space = gym.spaces.Box(
            -np.inf, np.inf, shape=env.observation_space.shape, dtype=np.float64
        )
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=env.action_space.shape,
                                           dtype=np.float32)

    # ----------------------------------------------------------------------- tasks
    def sample_tasks(self, n_tasks: int) -> list[Task]:
        """Draw ``n_tasks`` training tasks, the same number from every training env class.

        See :meth:`tasks_by_class` for how the draw is balanced; a test task is never drawn.
        """
        return self._sample_balanced("train", n_tasks)

    def sample_test_tasks(self, n_tasks: int) -> list[Task]:
        """Draw ``n_tasks`` of the benchmark's test tasks, balanced over the test env classes as
        :meth:`sample_tasks`."""
        return self._sample_balanced("test", n_tasks)

    def tasks_by_class(self, split: str) -> dict[str, list[int]]:
        """The task indices of a split, per env class, in the benchmark's order.

        Meta-World's vectorised ML envs (``metaworld.make_ml_envs``) give every env class of a
        split ``meta_batch_size / num_classes`` envs; :meth:`sample_tasks` and
        :meth:`sample_test_tasks` draw alike: ``n // num_classes`` goals of every class (the
        ``n % num_classes`` left over from distinct classes drawn at random), each class's goals
        without replacement while it has enough. With one class (ML1) this is a plain draw
        without replacement.

        Args:
            split: ``'train'`` or ``'test'``.

        Returns:
            Env name (e.g. ``'reach-v3'``) -> its task indices.

        Raises:
            ValueError: on another ``split``.
        """
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        return {name: list(indices) for name, indices in self._split_classes[split].items()}

    def _sample_balanced(self, split: str, n_tasks: int) -> list[Task]:
        groups = list(self._split_classes[split].values())
        counts = [n_tasks // len(groups)] * len(groups)
        remainder = n_tasks % len(groups)
        if remainder:  # no draw otherwise: ML1's task draws stay those of a plain choice
            for group in self.task_rng.choice(len(groups), size=remainder, replace=False):
                counts[int(group)] += 1
        tasks: list[Task] = []
        for group, count in zip(groups, counts):
            picks = self.task_rng.choice(len(group), size=count, replace=count > len(group))
            tasks += [group[int(i)] for i in picks]
        return tasks

    def set_task(self, task: Task) -> None:
        """Make the benchmark task with index ``task`` the current one.

        Raises:
            ValueError: if ``task`` is not an integer in ``[0, num_train_tasks + num_test_tasks)``.
        """
        index = self._checked_index(task)
        metaworld_task = self._metaworld_tasks[index]
        self._env_for(metaworld_task).set_task(metaworld_task)
        self._task = index

    def get_task(self) -> Task:
        """The current task index (``None`` before :meth:`set_task`)."""
        return self._task

    def task_parameters(self, task: Task) -> tuple[str, np.ndarray]:
        """What task index ``task`` stands for.

        Returns:
            ``(env_name, rand_vec)``: the Meta-World env (e.g. ``'reach-v3'``) and the task's
            vector of initial object and goal positions.
        """
        metaworld_task = self._metaworld_tasks[self._checked_index(task)]
        data = pickle.loads(metaworld_task.data)
        return metaworld_task.env_name, np.asarray(data["rand_vec"], dtype=np.float64)

    def _checked_index(self, task: Task) -> int:
        num_tasks = len(self._metaworld_tasks)
        if isinstance(task, (bool, np.bool_)) or not isinstance(task, (int, np.integer)) or not (
            0 <= task < num_tasks
        ):
            raise ValueError(f"a Meta-World task is an integer index in [0, {num_tasks}), "
                             f"got {task!r}")
        return int(task)

    def _env_for(self, metaworld_task: Any) -> Any:
        name = metaworld_task.env_name
        if name not in self._envs:
            env = self._classes[name](reward_function_version=self.reward_function_version)
            # No time limit of its own: Meta-World's step() refuses to go past max_path_length.
            env.max_path_length = sys.maxsize
            self._envs[name] = env
        return self._envs[name]

    @property
    def _active_env(self) -> Any:
        if self._task is None:
            raise RuntimeError("call set_task before reset or step")
        return self._envs[self._metaworld_tasks[self._task].env_name]

    # ----------------------------------------------------------------------- gymnasium
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        env = self._active_env
        if seed is not None:
            env.seed(seed)
        observation, _ = env.reset()
        return np.asarray(observation, dtype=np.float64), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, SupportsFloat, bool, bool,
                                                dict[str, Any]]:
        action = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
        observation, reward, _, _, info = self._active_env.step(action)
        infos = {key: float(info[key]) for key in INFO_KEYS}
        return np.asarray(observation, dtype=np.float64), float(reward), False, False, infos

    def close(self) -> None:
        for env in self._envs.values():
            env.close()
        self._envs.clear()

    # ----------------------------------------------------------------------- pickling
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_envs"] = {}  # rebuilt on use: a pickled MuJoCo env is tens of MB
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._task is not None:
            self.set_task(self._task)

    # ----------------------------------------------------------------------- diagnostics
    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """``SuccessRate`` (fraction of episodes with ``success`` at some real step) and
        ``AverageFinalObjToTarget`` (object-goal distance at the episodes' last step)."""
        # loads MuJoCo, which only a run that logs these diagnostics needs
        from meta_policy_search.envs.mujoco_envs.diagnostics import final_step_values

        mask = np.asarray(paths.mask) > 0
        episodes = paths.episode_mask
        if not episodes.any() or "success" not in paths.env_infos:
            return {}
        success = np.any((np.asarray(paths.env_infos["success"]) > 0) & mask, axis=-1)
        final_distance = final_step_values(
            np.asarray(paths.env_infos["obj_to_target"], dtype=np.float64), mask
        )
        success = success[episodes]
        return {
            prefix + "SuccessRate": float(np.mean(success)),
            prefix + "AverageFinalObjToTarget": float(np.mean(final_distance)),
        }


class MetaWorldML1Env(MetaWorldBenchmarkEnv):
    """Meta-World ML1: one manipulation env, 50 training and 50 test goal configurations.

    The goal is not in the observation (Meta-World's meta-learning setting).

    Args:
        env_name: a Meta-World v3 env, e.g. ``'reach-v3'``, ``'push-v3'``, ``'pick-place-v3'``.
        benchmark_seed: seed of the benchmark's task lists (Meta-World draws the test tasks
            with ``benchmark_seed + 1``); ``None``: new tasks every time.
        reward_function_version: ``'v2'`` (default) or ``'v1'``, see
            :data:`REWARD_FUNCTION_VERSIONS`.

    Raises:
        ValueError: if ``env_name`` is not a Meta-World v3 env or the reward version is unknown.
        ImportError: if ``metaworld`` is not installed.
    """

    def __init__(self, env_name: str = "reach-v3", benchmark_seed: int | None = 0,
                 reward_function_version: str = DEFAULT_REWARD_FUNCTION_VERSION) -> None:
        metaworld = import_metaworld()
        if env_name not in metaworld.ML1.ENV_NAMES:
            raise ValueError(f"{env_name!r} is not a Meta-World v3 env; valid: "
                             f"{', '.join(metaworld.ML1.ENV_NAMES)}")
        self.env_name = env_name
        super().__init__(benchmark=metaworld.ML1(env_name, seed=benchmark_seed),
                         reward_function_version=reward_function_version)


class MetaWorldML10Env(MetaWorldBenchmarkEnv):
    """Meta-World ML10: 10 training envs and 5 held-out test envs, 50 goals each.

    Training envs: reach, push, pick-place, door-open, drawer-close, button-press-topdown,
    peg-insert-side, window-open, sweep, basketball; test envs: drawer-open, door-close,
    shelf-place, sweep-into, lever-pull (all ``-v3``). Meta-training samples only the 500
    training tasks (:meth:`sample_tasks`), balanced over the 10 envs; the 250 test tasks are for
    meta-testing. Every env has the same 39-dim observation and 4-dim action, so one policy
    serves all; the goal (and which env it is) is not in the observation. Building the benchmark
    takes tens of seconds (Meta-World samples the goals of 15 envs).

    Args:
        benchmark_seed: seed of the benchmark's task lists (train and test alike); ``None``: new
            tasks every time.
        reward_function_version: ``'v2'`` (default) or ``'v1'``, see
            :data:`REWARD_FUNCTION_VERSIONS`.

    Raises:
        ValueError: if the reward version is unknown.
        ImportError: if ``metaworld`` is not installed.
    """

    def __init__(self, benchmark_seed: int | None = 0,
                 reward_function_version: str = DEFAULT_REWARD_FUNCTION_VERSION) -> None:
        check_reward_function_version(reward_function_version)  # before the slow build
        super().__init__(benchmark=import_metaworld().ML10(seed=benchmark_seed),
                         reward_function_version=reward_function_version)


def _indices_by_env_name(tasks: list[Any], first_index: int) -> dict[str, list[int]]:
    """Task index (``first_index + position``) per env name, in the order of ``tasks``."""
    groups: dict[str, list[int]] = {}
    for position, task in enumerate(tasks):
        groups.setdefault(task.env_name, []).append(first_index + position)
    return groups
