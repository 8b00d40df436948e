"""Shared data types: the padded, fixed-shape batches that flow from sampler to algorithm.

Shape conventions (see the documentation's *Architecture* page):

* ``T`` = ``meta_batch_size`` (number of tasks),
* ``R`` = ``rollouts_per_meta_task`` (episodes per task),
* ``N`` = the episode axis: ``R`` in the sampler's ``'rollouts'`` mode; in its ``'budget'`` mode
  the largest number of episodes of a task, rounded up to a fixed ladder of sizes, so tasks with
  fewer episodes end in whole padded episodes,
* ``H`` = ``max_path_length`` (time steps per episode, padded),
* ``mask[t, r, h] = 1`` for a real step and ``0`` for padding after an episode ended early or
  in a padded episode; episode ``r`` of task ``t`` is real iff ``mask[t, r, 0] == 1``.

This module imports only numpy, so sampler worker processes can use it without TensorFlow.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Task = Any
"""A task as returned by :meth:`MetaEnv.sample_tasks` (a float, an int or a numpy array)."""


@dataclass(frozen=True)
class PathBatch:
    """Raw rollouts of one inner step for all tasks, padded to a fixed shape.

    The episode axis ``R`` here is ``N`` of the module docstring: it may hold whole padded
    episodes (all zero, mask 0); :attr:`episode_mask` tells the real ones.

    Attributes:
        observations: ``[T, R, H, obs_dim]`` float32 observations the policy acted on.
        actions: ``[T, R, H, act_dim]`` float32 actions in the policy's action space (before any
            :func:`~meta_policy_search.envs.normalize` mapping onto the env bounds).
        rewards: ``[T, R, H]`` float32 rewards; 0 on padded steps.
        mask: ``[T, R, H]`` float32, 1 for a real step, 0 for padding.
        agent_infos: ``'mean'`` and ``'log_std'``, each ``[T, R, H, act_dim]``: the distribution
            the actions were drawn from.
        env_infos: per-step scalar diagnostics of the env, each ``[T, R, H]`` float32.
    """

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    mask: np.ndarray
    agent_infos: dict[str, np.ndarray] = field(default_factory=dict)
    env_infos: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def meta_batch_size(self) -> int:
        """Number of tasks ``T``."""
        return int(self.rewards.shape[0])

    @property
    def num_env_steps(self) -> int:
        """Number of real (unmasked) environment steps in the batch."""
        return int(self.mask.sum())

    @property
    def episode_mask(self) -> np.ndarray:
        """``[T, R]`` bool: True for a real episode (one with a real first step)."""
        return np.asarray(self.mask)[..., 0] > 0

    @property
    def episodes_per_task(self) -> np.ndarray:
        """``[T]`` int64: number of real episodes of each task."""
        return np.asarray(np.sum(self.episode_mask, axis=-1, dtype=np.int64))

    @property
    def episode_returns(self) -> np.ndarray:
        """``[T, R]`` float64 undiscounted return of each episode (0 for a padded episode)."""
        mask = np.asarray(self.mask)
        return np.sum(np.where(mask > 0, np.asarray(self.rewards, dtype=np.float64), 0.0), axis=-1)

    def real_episode_returns(self) -> np.ndarray:
        """``[num_real_episodes]`` float64 returns of the real episodes, task by task."""
        return self.episode_returns[self.episode_mask]

    def task_average_returns(self) -> np.ndarray:
        """``[T]`` float64: each task's mean return over its real episodes (NaN if none)."""
        counts = self.episodes_per_task
        totals = np.sum(self.episode_returns, axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, totals / counts, np.nan)

    def task_success_rates(self, info_key: str = "success") -> np.ndarray | None:
        """Each task's fraction of real episodes that succeed, if the env reports success.

        An episode succeeds if ``env_infos[info_key]`` is positive at some real step: Meta-World's
        criterion (``info['success']``), as its papers report the success rate.

        Returns:
            ``[T]`` float64 (NaN for a task without real episodes), or ``None`` when the env
            infos have no ``info_key``.
        """
        if info_key not in self.env_infos:
            return None
        real = np.asarray(self.mask) > 0
        succeeded = np.any((np.asarray(self.env_infos[info_key]) > 0) & real, axis=-1)  # [T, R]
        counts = self.episodes_per_task
        successes = np.sum(succeeded & self.episode_mask, axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, successes / np.maximum(counts, 1), np.nan)


@dataclass(frozen=True)
class SampleBatch(PathBatch):
    """A :class:`PathBatch` plus what a sample processor computes from it.

    Attributes:
        returns: ``[T, R, H]`` discounted reward-to-go, 0 on padding.
        baselines: ``[T, R, H]`` baseline predictions of the returns, 0 on padding.
        advantages: ``[T, R, H]`` GAE advantages (normalized per task if the processor says so),
            0 on padding.
        adjusted_rewards: ``[T, R, H]`` baseline-adjusted rewards for the DiCE objective, or
            ``None`` when the processor does not compute them.
    """

    returns: np.ndarray | None = None
    baselines: np.ndarray | None = None
    advantages: np.ndarray | None = None
    adjusted_rewards: np.ndarray | None = None

    @classmethod
    def from_paths(cls, paths: PathBatch, **computed: np.ndarray | None) -> SampleBatch:
        """Build a sample batch from ``paths`` and the processor's computed fields."""
        fields: dict[str, Any] = {f.name: getattr(paths, f.name) for f in dataclasses.fields(PathBatch)}
        fields.update(computed)
        return cls(**fields)
