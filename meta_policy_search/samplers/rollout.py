"""The rollout loop shared by every executor: whole padded episodes for a block of tasks.

This module holds the ``'rollouts'`` sampling mode (exactly ``R`` episodes per task) and what
both modes share; the ``'budget'`` mode is in :mod:`meta_policy_search.samplers.budget_rollout`.

An executor owns ``envs_per_task`` (``E``) environment copies per task. To collect ``R``
episodes per task it runs ``ceil(R / E)`` *waves*; in a wave, the first ``min(E, R - r0)`` envs
of every task step in lockstep for at most ``H`` steps. Each time step costs one batched policy
evaluation (:meth:`NumpyGaussianMLP.sample` on ``[T, E, obs_dim]``) plus one ``env.step`` per
running env; everything else is whole-array numpy work on preallocated buffers.

Randomness depends only on ``(seed, phase, global task index, rollout index)`` (see
:func:`episode_randomness`): not on the number of envs per task, the wave an episode runs in or
the worker that owns the task. This is what makes the iterative and the parallel executors
return identical arrays.

This module imports only numpy (and the TF-free policy and types), so sampler worker processes
never load TensorFlow.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.types import PathBatch

_RESET_SEED_BOUND = 2**31 - 1

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


def check_non_negative_int(name: str, value: object) -> int:
    """Return ``value`` as an int, or raise a ValueError naming ``name`` if it is not >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


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


def _is_scalar_number(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "biuf"
    return isinstance(value, (numbers.Real, np.bool_)) and not isinstance(value, str)


class InfoRecorder:
    """Stacks the scalar-number entries of per-step env infos into float32 buffers.

    The keys are those of the first recorded info whose values are scalar numbers (other entries
    are dropped), unless given.

    Args:
        shape: ``(rows, columns)`` of each buffer, e.g. ``(H, num_envs)``.
        keys: the keys to record; ``None``: taken from the first recorded info.
    """

    def __init__(self, shape: tuple[int, int], keys: Sequence[str] | None = None) -> None:
        self.shape = shape
        self.buffers: dict[str, np.ndarray] = {}
        self._items: list[tuple[str, np.ndarray]] | None = None
        if keys is not None:
            self._allocate(keys)

    def _allocate(self, keys: Iterable[str]) -> list[tuple[str, np.ndarray]]:
        self.buffers = {key: np.zeros(self.shape, dtype=np.float32) for key in keys}
        self._items = list(self.buffers.items())
        return self._items

    @property
    def keys(self) -> list[str] | None:
        """The recorded keys, or ``None`` before the first info."""
        return None if self._items is None else list(self.buffers)

    def record(self, info: dict[str, Any], row: int, column: int, step: int) -> None:
        """Store ``info``'s values at ``[row, column]`` of each buffer.

        Args:
            info: the info dict of one ``env.step``.
            row: buffer row (e.g. the time step).
            column: buffer column (e.g. the env).
            step: the step's index within its episode (for the error message).

        Raises:
            ValueError: if ``info`` lacks a recorded key.
        """
        items = self._items
        if items is None:
            items = self._allocate(key for key, value in info.items() if _is_scalar_number(value))
        try:
            for key, buffer in items:
                buffer[row, column] = info[key]
        except KeyError as err:
            raise ValueError(
                f"env info at step {step} lacks key {err}, which earlier steps had: a "
                "MetaEnv must return the same info keys every step"
            ) from None


def _to_task_major(wave: np.ndarray, num_tasks: int, num_envs: int) -> np.ndarray:
    """``[H, T * e, ...]`` (time-major wave buffer) -> ``[T, e, H, ...]``."""
    horizon = wave.shape[0]
    return np.moveaxis(wave.reshape((horizon, num_tasks, num_envs) + wave.shape[2:]), 0, 2)


def collect_rollouts(
    envs: Sequence[Sequence[Any]],
    policy: NumpyGaussianMLP,
    task_indices: Sequence[int],
    num_rollouts: int,
    max_path_length: int,
    seed: int,
    phase: int,
) -> PathBatch:
    """Run ``num_rollouts`` episodes per task with the given env copies and policy.

    The envs must already be set to their tasks. Padded steps (after an episode terminated or
    was truncated) are zero in every array and have ``mask == 0``; the terminating step itself
    is real. Per-step info values that are scalar numbers are stacked into ``env_infos``
    (the keys of the first step; other entries are dropped).

    Args:
        envs: ``envs[t][j]`` is the ``j``-th env copy of local task ``t``; every task has the
            same number ``E`` of copies.
        policy: per-task policies of these tasks (``num_tasks == len(envs)``).
        task_indices: global index of each local task, used to derive randomness.
        num_rollouts: ``R``, episodes per task.
        max_path_length: ``H``, steps per episode at most.
        seed: root seed, ``>= 0``.
        phase: sampling-phase counter, ``>= 0``.

    Returns:
        A :class:`PathBatch` with leading dimensions ``[len(envs), R, H]``.

    Raises:
        ValueError: if an env's info lacks a key that the first step's info had.
    """
    num_tasks, envs_per_task = len(envs), len(envs[0])
    env0 = envs[0][0]
    obs_dim = space_dim(env0.observation_space, "observation_space")
    act_dim = space_dim(env0.action_space, "action_space")
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
    info_keys: list[str] | None = None
    env_infos: dict[str, np.ndarray] = {}

    for r0 in range(0, num_rollouts, envs_per_task):
        e = min(envs_per_task, num_rollouts - r0)
        wave_envs = [envs[t][j] for t in range(num_tasks) for j in range(e)]
        n = len(wave_envs)
        obs_now = np.empty((n, obs_dim))
        for i, env in enumerate(wave_envs):
            t, j = divmod(i, e)
            obs_now[i], _ = env.reset(seed=int(reset_seeds[t, r0 + j]))
        wave_noise = noise[:, r0 : r0 + e]  # [T, e, H, act]
        obs_w = np.empty((horizon, n, obs_dim), dtype=np.float32)
        act_w = np.empty((horizon, n, act_dim), dtype=np.float32)
        mean_w = np.empty((horizon, n, act_dim), dtype=np.float32)
        log_std_w = np.empty((horizon, n, act_dim), dtype=np.float32)
        rew_w = np.zeros((horizon, n), dtype=np.float32)
        infos = InfoRecorder((horizon, n), info_keys)
        wave_lengths = np.full(n, horizon, dtype=np.int64)
        step_fns = [env.step for env in wave_envs]
        active = list(range(n))

        for h in range(horizon):
            act_h, dist = policy.sample(obs_now.reshape(num_tasks, e, obs_dim), wave_noise[:, :, h])
            # The envs get exactly the stored (float32) actions, so stored data replay exactly.
            act_w[h] = act_h.reshape(n, act_dim)
            act_h = act_w[h]
            obs_w[h] = obs_now
            mean_w[h] = dist["mean"].reshape(n, act_dim)
            log_std_w[h] = dist["log_std"].reshape(n, act_dim)
            rew_h = rew_w[h]
            still_active = []
            for i in active:
                obs, reward, terminated, truncated, info = step_fns[i](act_h[i])
                obs_now[i] = obs
                rew_h[i] = reward
                infos.record(info, h, i, h)
                if terminated or truncated:
                    wave_lengths[i] = h + 1
                else:
                    still_active.append(i)
            active = still_active
            if not active:
                break

        # Steps after the last active env finished were never written: zero them out below via
        # the mask (the buffers are np.empty for speed).
        wave = slice(r0, r0 + e)
        observations[:, wave] = _to_task_major(obs_w, num_tasks, e)
        actions[:, wave] = _to_task_major(act_w, num_tasks, e)
        means[:, wave] = _to_task_major(mean_w, num_tasks, e)
        log_stds[:, wave] = _to_task_major(log_std_w, num_tasks, e)
        rewards[:, wave] = _to_task_major(rew_w, num_tasks, e)
        info_keys = infos.keys
        for key, buf in infos.buffers.items():
            if key not in env_infos:
                env_infos[key] = np.zeros(shape, dtype=np.float32)
            env_infos[key][:, wave] = _to_task_major(buf, num_tasks, e)
        lengths[:, wave] = wave_lengths.reshape(num_tasks, e)

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
