"""The rollout loop shared by every executor: whole padded episodes for a block of tasks.

This module holds the ``'rollouts'`` sampling mode (exactly ``R`` episodes per task) and what
both modes share; the ``'budget'`` mode is in :mod:`meta_policy_search.samplers.budget_rollout`.

An executor owns ``envs_per_task`` (``E``) environment copies per task, as one
:class:`~meta_policy_search.envs.batched.BatchedMetaEnv` of ``T x E`` envs: the env's own batched
implementation when it has one (issue 7: whole-array dynamics, reward and observation), else an
:class:`~meta_policy_search.envs.batched.EnvList` that steps single envs one after the other.
To collect ``R`` episodes per task it runs ``ceil(R / E)`` *waves*; in a wave, the first
``min(E, R - r0)`` envs of every task step in lockstep for at most ``H`` steps. Each time step
costs one batched policy evaluation (:meth:`NumpyGaussianMLP.sample` on ``[T, E, obs_dim]``) plus
one batched env step of the running envs; everything else is whole-array numpy work on
preallocated buffers.

Randomness depends only on ``(seed, phase, global task index, rollout index)`` (see
:func:`episode_randomness`): not on the number of envs per task, the wave an episode runs in or
the worker that owns the task. This is what makes the iterative and the parallel executors
return identical arrays.

This module imports only numpy (and the TF-free policy, env protocol and types), so sampler
worker processes never load TensorFlow.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from meta_policy_search.envs.batched.base import BatchedMetaEnv
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.types import PathBatch

_RESET_SEED_BOUND = 2**31 - 1



@dataclasses.dataclass
class ExecTimes:
    """Seconds a sampling phase spent in the policy and in the envs (the original's
    ``PolicyExecTime`` and ``EnvExecTime``).

    Filled by the rollout loops; executors with several workers add up their workers' times, so
    with ``n`` workers the sum can reach ``n`` times the wall time.
    """

    policy_seconds: float = 0.0
    """In the policy's forward passes
    (:meth:`~meta_policy_search.policies.numpy_policy.NumpyGaussianMLP.sample`)."""
    env_seconds: float = 0.0
    """In the envs' ``reset`` and ``step``."""

    def __add__(self, other: ExecTimes) -> ExecTimes:
        return ExecTimes(
            self.policy_seconds + other.policy_seconds, self.env_seconds + other.env_seconds
        )


SAMPLING_MODES = ("rollouts", "budget")
"""Names accepted as ``sampling_mode``: exactly ``R`` episodes per task, or the original's step
budget of ``R x H`` real steps per task (see :mod:`meta_policy_search.samplers.budget_rollout`)."""


def check_sampling_mode(sampling_mode: object) -> str:
    """Return ``sampling_mode`` if it is one of :data:`SAMPLING_MODES`, else raise a ValueError."""
    if sampling_mode not in SAMPLING_MODES:
        raise ValueError(
            f"sampling_mode must be one of {SAMPLING_MODES}, got {sampling_mode!r}"
        )
    return str(sampling_mode)


def space_dim(space: Any, name: str) -> int:
    """Size of a flat (1-D) box space, used for observation and action spaces.

    Args:
        space: a gymnasium space.
        name: what the space is (for the error message), e.g. ``'observation_space'``.

    Returns:
        The length of the space's only dimension.

    Raises:
        ValueError: if the space does not have a 1-D shape.
    """
    shape = getattr(space, "shape", None)
    if shape is None or len(shape) != 1:
        raise ValueError(f"env.{name} must be a 1-D Box, got {space!r}")
    return int(shape[0])


def check_policy(policy: object, num_tasks: int, obs_dim: int, action_dim: int) -> None:
    """Check that a sampling policy fits the executor's tasks and env.

    Args:
        policy: should be a :class:`NumpyGaussianMLP`.
        num_tasks: expected number of tasks (the policy's leading axis).
        obs_dim: observation size of the env.
        action_dim: action size of the env.

    Raises:
        ValueError: on a wrong type, task count, input size or output size.
    """
    if not isinstance(policy, NumpyGaussianMLP):
        raise ValueError(f"policy must be a NumpyGaussianMLP, got {type(policy).__name__}")
    if policy.num_tasks != num_tasks:
        raise ValueError(f"policy has {policy.num_tasks} tasks, expected {num_tasks}")
    policy_obs_dim = policy.params["W0"].shape[1]
    if policy_obs_dim != obs_dim:
        raise ValueError(f"policy observation dim {policy_obs_dim} != env obs dim {obs_dim}")
    last = policy.params[f"W{policy.num_layers - 1}"].shape[-1]
    if last != action_dim or policy.params["log_std"].shape[-1] != action_dim:
        raise ValueError(f"policy action dim {last} != env action dim {action_dim}")


def episode_randomness(
    seed: int, phase: int, task_index: int, rollout_index: int, max_path_length: int, action_dim: int
) -> tuple[int, np.ndarray]:
    """The reset seed and action noise of one episode.

    Both come from ``np.random.default_rng([seed, phase, task_index, rollout_index])``, so an
    episode's randomness does not depend on how tasks are split across workers or envs.

    Args:
        seed: the sampler's root seed, ``>= 0``.
        phase: sampling-phase counter, ``>= 0``.
        task_index: global index of the task in the meta-batch.
        rollout_index: index of the episode within the task.
        max_path_length: ``H``.
        action_dim: action size.

    Returns:
        ``(reset_seed, noise)``: the seed for ``env.reset(seed=...)`` and standard normal action
        noise ``[H, action_dim]`` (float64).
    """
    rng = np.random.default_rng([seed, phase, task_index, rollout_index])
    reset_seed = int(rng.integers(_RESET_SEED_BOUND))
    return reset_seed, rng.standard_normal((max_path_length, action_dim))


def _to_task_major(wave: np.ndarray, num_tasks: int, num_envs: int) -> np.ndarray:
    """``[H, T * e, ...]`` (time-major wave buffer) -> ``[T, e, H, ...]``."""
    horizon = wave.shape[0]
    return np.moveaxis(wave.reshape((horizon, num_tasks, num_envs) + wave.shape[2:]), 0, 2)


def wave_env_indices(num_tasks: int, envs_per_task: int, num_envs: int) -> np.ndarray:
    """Flat env indices ``t * E + j`` (task-major) of the first ``num_envs`` envs of every task."""
    return (np.arange(num_tasks)[:, None] * envs_per_task + np.arange(num_envs)).reshape(-1)


def collect_rollouts(
    envs: BatchedMetaEnv,
    envs_per_task: int,
    policy: NumpyGaussianMLP,
    task_indices: Sequence[int],
    num_rollouts: int,
    max_path_length: int,
    seed: int,
    phase: int,
    exec_times: ExecTimes | None = None,
) -> PathBatch:
    """Run ``num_rollouts`` episodes per task with the given envs and policy.

    The envs must already be set to their tasks. Padded steps (after an episode terminated or
    was truncated) are zero in every array and have ``mask == 0``; the terminating step itself
    is real. The env's per-step infos are stacked into ``env_infos``.

    Args:
        envs: ``len(task_indices) * envs_per_task`` envs; env ``t * E + j`` is the ``j``-th copy
            of local task ``t`` (a batched env, or an
            :class:`~meta_policy_search.envs.batched.EnvList` of single envs).
        envs_per_task: ``E``, env copies per task.
        policy: per-task policies of these tasks (``num_tasks == len(task_indices)``).
        task_indices: global index of each local task, used to derive randomness.
        num_rollouts: ``R``, episodes per task.
        max_path_length: ``H``, steps per episode at most.
        seed: root seed, ``>= 0``.
        phase: sampling-phase counter, ``>= 0``.
        exec_times: if given, the seconds spent in the policy and the envs are added to it.

    Returns:
        A :class:`PathBatch` with leading dimensions ``[len(task_indices), R, H]``.

    Raises:
        ValueError: if an env's info lacks a key that the first step's info had.
    """
    num_tasks = len(task_indices)
    obs_dim = space_dim(envs.observation_space, "observation_space")
    act_dim = space_dim(envs.action_space, "action_space")
    horizon = max_path_length
    shape = (num_tasks, num_rollouts, horizon)

    reset_seeds = np.empty((num_tasks, num_rollouts), dtype=np.int64)
    noise = np.empty(shape + (act_dim,))
    for t, task_index in enumerate(task_indices):
        for r in range(num_rollouts):
            reset_seeds[t, r], noise[t, r] = episode_randomness(
                seed, phase, int(task_index), r, horizon, act_dim
            )

    observations = np.zeros(shape + (obs_dim,), dtype=np.float32)
    actions = np.zeros(shape + (act_dim,), dtype=np.float32)
    means = np.zeros(shape + (act_dim,), dtype=np.float32)
    log_stds = np.zeros(shape + (act_dim,), dtype=np.float32)
    rewards = np.zeros(shape, dtype=np.float32)
    lengths = np.full((num_tasks, num_rollouts), horizon, dtype=np.int64)
    env_infos: dict[str, np.ndarray] = {}
    policy_seconds = env_seconds = 0.0
    clock = time.perf_counter

    for r0 in range(0, num_rollouts, envs_per_task):
        e = min(envs_per_task, num_rollouts - r0)
        wave_envs = wave_env_indices(num_tasks, envs_per_task, e)
        n = len(wave_envs)
        tic = clock()
        obs_now = envs.reset(wave_envs, reset_seeds[:, r0 : r0 + e].reshape(-1).tolist())
        env_seconds += clock() - tic
        wave_noise = noise[:, r0 : r0 + e]  # [T, e, H, act]
        obs_w = np.empty((horizon, n, obs_dim), dtype=np.float32)
        act_w = np.empty((horizon, n, act_dim), dtype=np.float32)
        mean_w = np.empty((horizon, n, act_dim), dtype=np.float32)
        log_std_w = np.empty((horizon, n, act_dim), dtype=np.float32)
        rew_w = np.zeros((horizon, n), dtype=np.float32)
        info_w: dict[str, np.ndarray] | None = None
        wave_lengths = np.full(n, horizon, dtype=np.int64)
        active = np.arange(n)

        for h in range(horizon):
            tic = clock()
            act_h, dist = policy.sample(obs_now.reshape(num_tasks, e, obs_dim), wave_noise[:, :, h])
            policy_seconds += clock() - tic
            # The envs get exactly the stored (float32) actions, so stored data replay exactly.
            act_w[h] = act_h.reshape(n, act_dim)
            obs_w[h] = obs_now
            mean_w[h] = dist["mean"].reshape(n, act_dim)
            log_std_w[h] = dist["log_std"].reshape(n, act_dim)
            tic = clock()
            step = envs.step(wave_envs[active], act_w[h][active])
            env_seconds += clock() - tic
            obs_now[active] = step.observations
            rew_w[h, active] = step.rewards
            if info_w is None:
                info_w = {key: np.zeros((horizon, n), dtype=np.float32) for key in step.infos}
            record_infos(info_w, step.infos, h, active)
            if step.dones.any():
                wave_lengths[active[step.dones]] = h + 1
                active = active[~step.dones]
                if not len(active):
                    break

        # Steps after the last active env finished were never written: zero them out below via
        # the mask (the buffers are np.empty for speed).
        wave = slice(r0, r0 + e)
        observations[:, wave] = _to_task_major(obs_w, num_tasks, e)
        actions[:, wave] = _to_task_major(act_w, num_tasks, e)
        means[:, wave] = _to_task_major(mean_w, num_tasks, e)
        log_stds[:, wave] = _to_task_major(log_std_w, num_tasks, e)
        rewards[:, wave] = _to_task_major(rew_w, num_tasks, e)
        for key, buf in (info_w or {}).items():
            if key not in env_infos:
                env_infos[key] = np.zeros(shape, dtype=np.float32)
            env_infos[key][:, wave] = _to_task_major(buf, num_tasks, e)
        lengths[:, wave] = wave_lengths.reshape(num_tasks, e)

    if exec_times is not None:
        exec_times.policy_seconds += policy_seconds
        exec_times.env_seconds += env_seconds
    padding = np.arange(horizon) >= lengths[..., None]  # [T, R, H]
    for array in (observations, actions, means, log_stds, rewards, *env_infos.values()):
        array[padding] = 0.0
    return PathBatch(
        observations=observations,
        actions=actions,
        rewards=rewards,
        mask=(~padding).astype(np.float32),
        agent_infos={"mean": means, "log_std": log_stds},
        env_infos=env_infos,
    )


def record_infos(
    buffers: dict[str, np.ndarray], infos: dict[str, np.ndarray], row: int, columns: np.ndarray
) -> None:
    """Store one step's ``infos`` (each ``[k]``) at ``buffers[key][row, columns]``.

    Raises:
        ValueError: if the env's infos changed keys since the first step.
    """
    if len(infos) != len(buffers) or any(key not in infos for key in buffers):
        raise ValueError(
            f"env infos have keys {sorted(infos)} at a later step, {sorted(buffers)} at the "
            "first: a MetaEnv must return the same info keys every step"
        )
    for key, buffer in buffers.items():
        buffer[row, columns] = infos[key]


def concatenate_paths(batches: Sequence[PathBatch]) -> PathBatch:
    """Join path batches of disjoint task blocks along the task axis (in the given order).

    Batches with fewer episodes than the largest (``'budget'`` mode: each worker's episode axis
    is its own bucket) get whole padded episodes (all zero, mask 0) appended first.

    Args:
        batches: path batches with equal ``H`` and info keys.

    Returns:
        One :class:`PathBatch` whose task axis is the concatenation of the inputs' and whose
        episode axis is the largest of theirs.

    Raises:
        ValueError: if the batches' env-info keys differ.
    """
    if len(batches) == 1:
        return batches[0]
    keys = set(batches[0].env_infos)
    for batch in batches[1:]:
        if set(batch.env_infos) != keys:
            raise ValueError(
                f"workers returned different env_infos keys: {sorted(keys)} vs "
                f"{sorted(batch.env_infos)}"
            )
    num_episodes = max(batch.mask.shape[1] for batch in batches)

    def cat(arrays: Iterable[np.ndarray]) -> np.ndarray:
        parts = list(arrays)
        if all(part.shape[1] == num_episodes for part in parts):
            return np.concatenate(parts, axis=0)
        first = parts[0]
        out = np.zeros(
            (sum(len(part) for part in parts), num_episodes) + first.shape[2:], first.dtype
        )
        start = 0
        for array in parts:
            out[start : start + len(array), : array.shape[1]] = array
            start += len(array)
        return out

    return PathBatch(
        observations=cat(b.observations for b in batches),
        actions=cat(b.actions for b in batches),
        rewards=cat(b.rewards for b in batches),
        mask=cat(b.mask for b in batches),
        agent_infos={k: cat(b.agent_infos[k] for b in batches) for k in batches[0].agent_infos},
        env_infos={k: cat(b.env_infos[k] for b in batches) for k in batches[0].env_infos},
    )
