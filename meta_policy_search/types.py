"""Shared data types: the padded, fixed-shape batches that flow from sampler to algorithm.

Shape conventions (see ``design.md`` section 2):

* ``T`` = ``meta_batch_size`` (number of tasks),
* ``R`` = ``rollouts_per_meta_task`` (episodes per task),
* ``H`` = ``max_path_length`` (time steps per episode, padded),
* ``mask[t, r, h] = 1`` for a real step and ``0`` for padding after an episode ended early.

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
