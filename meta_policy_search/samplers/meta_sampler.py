"""The meta-sampler: draws the meta-batch of tasks and collects padded rollouts for them."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from meta_policy_search.samplers.executor_base import check_tasks
from meta_policy_search.samplers.iterative_executor import MetaIterativeEnvExecutor
from meta_policy_search.samplers.parallel_executor import MetaParallelEnvExecutor
from meta_policy_search.samplers.quota import DEFAULT_SAMPLING_MODE, make_quota
from meta_policy_search.samplers.ray_executor import MetaRayEnvExecutor
from meta_policy_search.samplers.rollout import space_dim
from meta_policy_search.samplers.worker_pool import AUTO_TIMEOUT as AUTO_TIMEOUT
from meta_policy_search.samplers.worker_pool import SamplerTimeout
from meta_policy_search.types import PathBatch, Task
from meta_policy_search.utils.validation import check_non_negative_int, check_positive_int

NONFINITE_MODES = ("raise", "drop")
"""What ``MetaSampler(nonfinite_samples=...)`` does with a NaN or inf observation, action or
reward: raise a ``NonFiniteSampleError`` naming the task, rollout and step, or drop the episode."""

EXECUTORS = ("iterative", "parallel", "ray")
"""Names of the sampler executors (``executor`` argument and config field)."""

def resolve_executor(executor: str | None, parallel: bool | None) -> str:
    """The executor name from the ``executor`` and the older ``parallel`` arguments.

    Args:
        executor: one of :data:`EXECUTORS`, or ``None``.
        parallel: ``True``/``False``, or ``None`` (not given).

    Returns:
        ``executor`` if given, else ``'parallel'`` if ``parallel`` else ``'iterative'``.

    Raises:
        ValueError: on an unknown name, or if ``parallel`` contradicts ``executor``.
    """
    if executor is None:
        return "parallel" if parallel else "iterative"
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {EXECUTORS} or None, got {executor!r}")
    if parallel is not None and bool(parallel) != (executor != "iterative"):
        raise ValueError(
            f"parallel={parallel} contradicts executor={executor!r}; pass only executor"
        )
    return executor


class NonFiniteSampleError(FloatingPointError):
    """A sampled observation, action or reward is NaN or inf."""


def find_nonfinite(paths: PathBatch) -> np.ndarray:
    """``[T, N]`` bool: episodes holding a NaN or inf observation, action or reward.

    Checked on the whole padded arrays (padding is zeros), vectorized: about one pass over the
    batch, cheap next to sampling it.

    Finite values are not range-checked, however large (a reward of 1e30): the reward scale is
    the env's to choose and no bound would fit every env; with standardized advantages (the
    default ``normalize_adv``) a constant reward scale leaves the policy-gradient step unchanged;
    and a value that overflows float32 later becomes inf or NaN, which this check (in the next
    batch) or the Trainer's outer-step check names. See the FAQ, "A huge reward".
    """
    bad = ~np.isfinite(paths.rewards).all(axis=2)
    for array in (paths.observations, paths.actions):
        bad |= ~np.isfinite(array.reshape(array.shape[:2] + (-1,))).all(axis=2)
    return bad


def _first_nonfinite(paths: PathBatch, task: int, rollout: int) -> tuple[str, int, Any]:
    """``(array name, step, value)`` of the first non-finite entry of one episode.

    Within a step the cause comes first: the observation, then the action drawn from it, then
    the reward of that action (a NaN observation makes the step's action and reward NaN too).
    """
    candidates = []
    for order, (what, array) in enumerate((("observation", paths.observations),
                                           ("action", paths.actions),
                                           ("reward", paths.rewards))):
        episode = array[task, rollout]
        steps = ~np.isfinite(episode.reshape(episode.shape[0], -1)).all(axis=1)
        if steps.any():
            step = int(np.argmax(steps))
            candidates.append((step, order, what, episode[step]))
    step, _, what, value = min(candidates, key=lambda candidate: candidate[:2])
    return what, step, value


class MetaSampler:
    """Collect episodes for each of ``meta_batch_size`` tasks, in one of two sampling modes.

    Usage per meta-iteration (as :class:`~meta_policy_search.meta_trainer.Trainer` does it)::

        sampler.update_tasks()                  # new meta-batch of tasks
        for step in range(num_inner_grad_steps + 1):
            paths = sampler.obtain_samples()    # PathBatch [T, N, H, ...] for the current policy

    Every call of :meth:`obtain_samples` is one *sampling phase*; the phase counter and the root
    ``seed`` fix all episode randomness, so a run is reproducible and the iterative, parallel
    and Ray executors return the same arrays.

    Sampling modes (``R = rollouts_per_meta_task``, ``H = max_path_length``):

    * ``'rollouts'``: exactly ``R`` episodes per task, ``N = R``.
    * ``'budget'``: the original ProMP sampler's budget. Per task, episodes ``0, 1, 2, ...``
      (the same episodes as in ``'rollouts'`` mode for the same seed) are collected until the
      shortest prefix of them holding ``>= R x H`` real steps is complete; later episodes are
      dropped. A task whose episodes terminate early therefore gets more, shorter episodes
      instead of fewer samples; without early termination the result equals the
      ``'rollouts'`` mode's bit for bit. ``N`` is the largest episode count over the tasks
      rounded up to a fixed ladder (``R x {1, 1.25, 1.5, 1.75, 2, 2.5, ...}``, see
      :func:`~meta_policy_search.samplers.quota.episode_bucket`); tasks with fewer
      episodes end in whole padded episodes (mask 0). Use
      :attr:`~meta_policy_search.types.PathBatch.episode_mask` to tell real episodes.

      **A deliberate difference from the original:** its budget was global (all tasks
      together, ``meta_batch_size x R x H`` steps, envs running in lockstep), so one task's
      short episodes shifted the others' share. Here each task has its own budget of
      ``R x H`` steps, so workers never synchronise per step and the result does not depend
      on the executor, the split of tasks over workers or ``envs_per_task``. With
      ``envs_per_task < R`` an env may start episodes that turn out unneeded; they are
      stopped and dropped (extra env steps, not extra data).

    Args:
        env: the :class:`~meta_policy_search.envs.MetaEnv` (possibly wrapped in ``normalize``);
            its task RNG is seeded with ``seed`` here and the executor works on copies.
        policy: a meta-policy with ``get_sampling_policy() -> NumpyGaussianMLP`` and
            ``meta_batch_size``, ``T``, the tasks per meta-batch (the sampler reads it there);
            if it has ``obs_dim`` or ``action_dim`` attributes they are checked against the
            env.
        rollouts_per_meta_task: ``R``, episodes per task and phase (``'budget'`` mode: each
            task's budget is ``R x H`` real steps).
        max_path_length: ``H``, steps per episode at most.
        envs_per_task: env copies per task (``None`` means ``R``: one wave); ``R`` episodes take
            ``ceil(R / envs_per_task)`` waves (``'budget'`` mode: each copy runs episodes back
            to back).
        parallel: the original ProMP API's switch, kept for its users: use
            :class:`MetaParallelEnvExecutor` instead of :class:`MetaIterativeEnvExecutor`.
            ``executor`` says the same and more; the run scripts pass only ``executor``.
            ``None`` means False unless ``executor`` is given.
        n_parallel: worker processes of the parallel executor, or actors of the Ray executor
            (``None``: one per core of the machine or cluster, at most ``meta_batch_size``);
            ignored by the iterative executor.
        seed: root seed of tasks and episodes, ``>= 0``.
        executor: ``'iterative'`` (:class:`MetaIterativeEnvExecutor`), ``'parallel'``
            (:class:`MetaParallelEnvExecutor`) or ``'ray'``
            (:class:`~meta_policy_search.samplers.ray_executor.MetaRayEnvExecutor`, needs Ray);
            ``None``: ``'parallel'`` if ``parallel`` else ``'iterative'``. All three return
            identical arrays for the same seed.
        ray_address: Ray cluster to connect to if Ray is not initialised yet (``None``: start a
            local instance); only used by the Ray executor.
        timeout: seconds a sampling phase may wait for worker processes or Ray actors before
            they are presumed hung and a RuntimeError naming them is raised (``None``: no
            limit; a worker that *dies* is always detected at once); :data:`AUTO_TIMEOUT`:
            derived from the measured phase times (generous: a hung worker, e.g. stopped by
            SIGSTOP or blocked in an env, is the target, not a slow one). Ignored by the
            iterative executor.
        sampling_mode: ``'rollouts'`` or ``'budget'`` (see above), turned here into the
            executor's quota (:func:`~meta_policy_search.samplers.quota.make_quota`).
        nonfinite_samples: what a NaN or inf observation, action or reward does: ``'raise'`` a
            :class:`NonFiniteSampleError` naming what was non-finite (observation, action or
            reward), its value, the task, rollout and step; ``'drop'`` the episode (its mask
            becomes 0 and every per-step value, agent and env infos included, 0;
            ``NonFiniteEpisodesDropped`` counts them) unless a task would keep no episode,
            which raises as well.

    Raises:
        ValueError: on non-positive sizes, ``envs_per_task > rollouts_per_meta_task``, a
            policy whose sizes do not match the env, an unknown ``sampling_mode`` or
            ``executor``, or an ``executor`` that contradicts ``parallel``
            (``parallel=True`` with ``'iterative'``, ``parallel=False`` with ``'parallel'`` or
            ``'ray'``).
        ImportError: for ``executor='ray'`` without Ray installed.
    """

    def __init__(
        self,
        env: Any,
        policy: Any,
        rollouts_per_meta_task: int,
        max_path_length: int,
        envs_per_task: int | None = None,
        parallel: bool | None = None,
        n_parallel: int | None = None,
        seed: int = 0,
        executor: str | None = None,
        ray_address: str | None = None,
        timeout: float | str | None = None,
        sampling_mode: str = DEFAULT_SAMPLING_MODE,
        nonfinite_samples: str = "raise",
    ) -> None:
        if nonfinite_samples not in NONFINITE_MODES:
            raise ValueError(
                f"nonfinite_samples must be one of {NONFINITE_MODES}, got {nonfinite_samples!r}"
            )
        self.nonfinite_samples = nonfinite_samples
        self.num_nonfinite_dropped = 0
        """Episodes dropped so far for non-finite values (``nonfinite_samples='drop'``)."""
        self.rollouts_per_meta_task = check_positive_int(
            "rollouts_per_meta_task", rollouts_per_meta_task
        )
        self.meta_batch_size = check_positive_int(
            "policy.meta_batch_size", getattr(policy, "meta_batch_size", None))
        self.max_path_length = check_positive_int("max_path_length", max_path_length)
        if envs_per_task is None:
            envs_per_task = self.rollouts_per_meta_task
        self.envs_per_task = check_positive_int("envs_per_task", envs_per_task)
        self.quota = make_quota(sampling_mode, self.rollouts_per_meta_task)
        """The episodes each task gets per phase; the executor holds it from construction."""
        if self.envs_per_task > self.rollouts_per_meta_task:
            raise ValueError(
                f"envs_per_task={self.envs_per_task} exceeds rollouts_per_meta_task="
                f"{self.rollouts_per_meta_task}: the extra env copies would never run"
            )
        self.executor_name = resolve_executor(executor, parallel)
        SamplerTimeout(timeout)  # a bad timeout fails here, before workers start
        if self.executor_name == "iterative":
            n_parallel = None  # documented: ignored for the iterative executor
        self.seed = check_non_negative_int("seed", seed)
        obs_dim = space_dim(env.observation_space, "observation_space")
        action_dim = space_dim(env.action_space, "action_space")
        for name, expected in (("obs_dim", obs_dim), ("action_dim", action_dim)):
            value = getattr(policy, name, None)
            if value is not None and value != expected:
                raise ValueError(f"policy.{name}={value} does not match the expected {expected}")

        self.env = env
        self.policy = policy
        self.parallel = self.executor_name != "iterative"
        env.seed_tasks(self.seed)
        executor_args = (env, self.meta_batch_size, self.envs_per_task, self.max_path_length)
        self.executor: Any
        if self.executor_name == "parallel":
            self.executor = MetaParallelEnvExecutor(
                *executor_args, seed=self.seed, n_parallel=n_parallel, timeout=timeout,
                quota=self.quota,
            )
        elif self.executor_name == "ray":
            self.executor = MetaRayEnvExecutor(
                *executor_args, seed=self.seed, num_actors=n_parallel, ray_address=ray_address,
                timeout=timeout, quota=self.quota,
            )
        else:
            self.executor = MetaIterativeEnvExecutor(*executor_args, seed=self.seed, quota=self.quota)
        self.total_timesteps_sampled = 0
        self._phase = 0
        self._tasks: list[Task] | None = None

    @property
    def slowest_phase_seconds(self) -> float:
        """Wall time of the slowest sampling phase so far (the executor's measure; it sets the
        automatic timeout)."""
        return float(self.executor.slowest_phase_seconds)

    @property
    def sampling_mode(self) -> str:
        """``'rollouts'`` or ``'budget'``: the name of :attr:`quota`'s rule."""
        return self.quota.mode

    @property
    def tasks(self) -> list[Task] | None:
        """The current meta-batch of tasks (``None`` before :meth:`update_tasks`)."""
        return self._tasks

    @property
    def nominal_timesteps_per_phase(self) -> int:
        """``meta_batch_size x rollouts_per_meta_task x max_path_length``.

        The original's step count of one sampling phase (its budget), in both sampling modes;
        the Trainer's ``n_timesteps`` (the paper's x-axis) adds it up.
        """
        return self.meta_batch_size * self.rollouts_per_meta_task * self.max_path_length

    @property
    def phase(self) -> int:
        """Number of sampling phases run so far (the next phase's index)."""
        return self._phase

    def update_tasks(self) -> list[Task]:
        """Draw ``meta_batch_size`` tasks with ``env.sample_tasks`` and set them on the executor.

        Returns:
            The new tasks.
        """
        return self.set_tasks(self.env.sample_tasks(self.meta_batch_size))

    def set_tasks(self, tasks: Sequence[Task]) -> list[Task]:
        """Use the given tasks (e.g. held-out meta-test tasks) for the following phases.

        Args:
            tasks: ``meta_batch_size`` tasks accepted by ``env.set_task``.

        Returns:
            The tasks, as a list.

        Raises:
            ValueError: if the number of tasks is not ``meta_batch_size``.
        """
        tasks = check_tasks(tasks, self.meta_batch_size)
        self.executor.set_tasks(tasks)
        self._tasks = tasks
        return tasks

    def obtain_samples(self, log: bool = False, log_prefix: str = "") -> PathBatch:
        """Run one sampling phase with the policy's current (per-task) parameters.

        Args:
            log: log the wall time of the phase as ``log_prefix + 'Time-EnvExec'``, the seconds
                spent in the policy and in the envs (summed over worker processes) as
                ``log_prefix + 'PolicyExecTime'`` and ``log_prefix + 'EnvExecTime'`` (the
                original's keys), and the mean number of real episodes per task as
                ``log_prefix + 'EpisodesPerTask'``.
            log_prefix: prefix of logged keys, e.g. ``'Step_0-'``.

        Returns:
            A :class:`PathBatch` ``[meta_batch_size, N, max_path_length]`` with
            ``N = rollouts_per_meta_task`` in ``'rollouts'`` mode and a ladder size ``>= R`` in
            ``'budget'`` mode.

        Raises:
            RuntimeError: if :meth:`update_tasks` was never called, or from the executor.
        """
        if self._tasks is None:
            raise RuntimeError("call update_tasks() before obtain_samples()")
        sampling_policy = self.policy.get_sampling_policy()
        start = time.perf_counter()
        paths = self.executor.collect(sampling_policy, self._phase)
        elapsed = time.perf_counter() - start
        bad = find_nonfinite(paths)
        if bad.any():
            paths = self._handle_nonfinite(paths, bad)
        self._phase += 1
        self.total_timesteps_sampled += paths.num_env_steps
        if log:
            from meta_policy_search.utils import logger  # lazy: keeps this module light

            if self.nonfinite_samples == "drop":
                logger.logkv("NonFiniteEpisodesDropped", self.num_nonfinite_dropped)
            logger.logkv(log_prefix + "Time-EnvExec", elapsed)
            logger.logkv(log_prefix + "PolicyExecTime", self.executor.last_exec_times.policy_seconds)
            logger.logkv(log_prefix + "EnvExecTime", self.executor.last_exec_times.env_seconds)
            logger.logkv(log_prefix + "EpisodesPerTask", float(np.mean(paths.episodes_per_task)))
        return paths

    def _handle_nonfinite(self, paths: PathBatch, bad: np.ndarray) -> PathBatch:
        """Raise on, or drop, the episodes ``bad`` (``[T, N]``) of ``paths``."""
        episode_mask = paths.episode_mask
        if self.nonfinite_samples == "raise" or not (episode_mask & ~bad).any(axis=1).all():
            task, rollout = (int(i) for i in np.argwhere(bad)[0])
            what, step, value = _first_nonfinite(paths, task, rollout)
            task_value = repr(self._tasks[task]) if self._tasks is not None else "?"
            hint = (
                "every episode of the task is affected" if self.nonfinite_samples == "drop"
                else "pass --nonfinite_samples drop to drop such episodes instead"
            )
            raise NonFiniteSampleError(
                f"non-finite {what} {value} in sampling phase {self._phase}, task {task} "
                f"({task_value[:80]}), rollout {rollout}, step {step} "
                f"({int(bad.sum())} episode(s) of {bad.size} affected); {hint}"
            )
        self.num_nonfinite_dropped += int((bad & episode_mask).sum())
        keep = ~bad[:, :, None]

        def zero_dropped(array: np.ndarray) -> np.ndarray:
            # Every per-step array, env diagnostics and the policy's distribution included:
            # a mask of 0 does not hide a NaN (NaN x 0 is NaN in a masked mean).
            where = keep.reshape(keep.shape + (1,) * (array.ndim - keep.ndim))
            return np.where(where, array, 0).astype(array.dtype)

        return dataclasses.replace(
            paths,
            observations=zero_dropped(paths.observations),
            actions=zero_dropped(paths.actions),
            rewards=zero_dropped(paths.rewards),
            mask=zero_dropped(paths.mask),
            agent_infos={key: zero_dropped(value) for key, value in paths.agent_infos.items()},
            env_infos={key: zero_dropped(value) for key, value in paths.env_infos.items()},
        )

    def get_state(self) -> dict[str, Any]:
        """Everything needed to resume sampling exactly: phase, task RNG state, current tasks.

        Returns:
            A dict with keys ``phase`` and ``total_timesteps_sampled`` (ints),
            ``task_rng_state`` (numpy's ``bit_generator.state`` dict of the env's task RNG)
            and ``tasks`` (the current task list, or ``None``).
        """
        return {
            "phase": self._phase,
            "total_timesteps_sampled": self.total_timesteps_sampled,
            "task_rng_state": self.env.task_rng.bit_generator.state,
            "tasks": None if self._tasks is None else list(self._tasks),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore a state from :meth:`get_state` (and set its tasks on the executor).

        Args:
            state: a dict as returned by :meth:`get_state`.

        Raises:
            ValueError: if a key is missing.
        """
        missing = {"phase", "total_timesteps_sampled", "task_rng_state", "tasks"} - set(state)
        if missing:
            raise ValueError(f"sampler state lacks keys {sorted(missing)}")
        self.env.task_rng.bit_generator.state = state["task_rng_state"]
        self._phase = check_non_negative_int("phase", state["phase"])
        self.total_timesteps_sampled = int(state["total_timesteps_sampled"])
        self._tasks = None
        if state["tasks"] is not None:
            self.executor.set_tasks(state["tasks"])
            self._tasks = list(state["tasks"])

    def close(self) -> None:
        """Shut the executor down (its worker processes, if parallel)."""
        self.executor.close()

    def __enter__(self) -> MetaSampler:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
