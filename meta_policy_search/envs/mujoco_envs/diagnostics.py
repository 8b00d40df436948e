"""Mask-aware statistics of rollouts for the MuJoCo envs' ``log_diagnostics``.

All functions read ``paths.env_infos`` (each ``[T, R, H]``) and ``paths.mask`` (``[T, R, H]``,
1 for a real step): padded steps after an early termination never enter a statistic.
"""

from __future__ import annotations

import numpy as np

from meta_policy_search.types import PathBatch


def _info(paths: PathBatch, key: str) -> np.ndarray:
    """Return ``paths.env_infos[key]`` as float64, checked against the mask's shape."""
    if key not in paths.env_infos:
        raise ValueError(
            f"env_infos has no {key!r} (keys: {sorted(paths.env_infos)}); "
            "were these paths collected from this env?"
        )
    values = np.asarray(paths.env_infos[key], dtype=np.float64)
    if values.shape != np.shape(paths.mask):
        raise ValueError(
            f"env_infos[{key!r}] must have the mask's shape {np.shape(paths.mask)}, "
            f"got {values.shape}"
        )
    return values


def masked_mean(values: np.ndarray, mask: np.ndarray) -> float:
    """Mean of ``values`` over the steps where ``mask`` is 1 (NaN if there are none).

    Args:
        values: ``[T, R, H]`` per-step values.
        mask: ``[T, R, H]`` 0/1 weights.
    """
    total = float(np.sum(mask))
    if total == 0.0:
        return float("nan")
    return float(np.sum(values * mask) / total)


def final_step_values(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Value at each episode's last real step.

    Args:
        values: ``[T, R, H]`` per-step values.
        mask: ``[T, R, H]`` 0/1, each episode's real steps first.

    Returns:
        ``[num_episodes]`` values, one per episode with at least one real step.
    """
    values = values.reshape(-1, values.shape[-1])
    mask = np.asarray(mask).reshape(values.shape)
    lengths = np.sum(mask > 0, axis=-1)
    has_steps = lengths > 0
    last = np.maximum(lengths - 1, 0)
    return values[np.arange(values.shape[0]), last][has_steps]


def episode_sums(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Undiscounted per-episode sums over real steps, for the real episodes only.

    An episode is real iff its first step is (whole padded episodes, from the sampler's
    ``'budget'`` mode, are left out).

    Returns:
        ``[num_real_episodes]`` sums.
    """
    mask = np.asarray(mask)
    return np.sum(values * mask, axis=-1)[mask[..., 0] > 0]


def velocity_diagnostics(paths: PathBatch, prefix: str = "") -> dict[str, float]:
    """Forward-velocity statistics (the original half-cheetah keys).

    Returns:
        ``AvgForwardVel`` (mean over real steps of ``forward_vel``), ``AvgFinalForwardVel``
        (mean over episodes of the velocity at the last real step) and ``AvgCtrlCost`` (mean
        over real steps of ``-reward_ctrl``; the original logged a standard deviation by
        mistake), each prefixed with ``prefix``.
    """
    mask = np.asarray(paths.mask, dtype=np.float64)
    forward_vel = _info(paths, "forward_vel")
    final = final_step_values(forward_vel, mask)
    return {
        prefix + "AvgForwardVel": masked_mean(forward_vel, mask),
        prefix + "AvgFinalForwardVel": float(np.mean(final)) if final.size else float("nan"),
        prefix + "AvgCtrlCost": masked_mean(-_info(paths, "reward_ctrl"), mask),
    }


def velocity_error_diagnostics(paths: PathBatch, prefix: str = "") -> dict[str, float]:
    """:func:`velocity_diagnostics` plus ``AvgVelError``, the mean of ``|v - v*|`` over real steps.

    Needs ``reward_forward = -|v - v*|`` in the infos.
    """
    stats = velocity_diagnostics(paths, prefix)
    mask = np.asarray(paths.mask, dtype=np.float64)
    stats[prefix + "AvgVelError"] = masked_mean(-_info(paths, "reward_forward"), mask)
    return stats


def forward_return_diagnostics(paths: PathBatch, prefix: str = "") -> dict[str, float]:
    """Forward-return statistics (the original Ant keys).

    Returns:
        ``AverageForwardReturn``, ``MaxForwardReturn``, ``MinForwardReturn`` and
        ``StdForwardReturn``: statistics over episodes of the undiscounted sum of
        ``reward_forward`` over real steps; ``AverageCtrlCost``: mean over real steps of
        ``-reward_ctrl``. Keys are prefixed with ``prefix``.
    """
    mask = np.asarray(paths.mask, dtype=np.float64)
    returns = episode_sums(_info(paths, "reward_forward"), mask)
    return {
        prefix + "AverageForwardReturn": float(np.mean(returns)),
        prefix + "MaxForwardReturn": float(np.max(returns)),
        prefix + "MinForwardReturn": float(np.min(returns)),
        prefix + "StdForwardReturn": float(np.std(returns)),
        prefix + "AverageCtrlCost": masked_mean(-_info(paths, "reward_ctrl"), mask),
    }


def goal_diagnostics(paths: PathBatch, prefix: str = "") -> dict[str, float]:
    """:func:`forward_return_diagnostics` plus ``AvgFinalGoalDistance``.

    ``AvgFinalGoalDistance`` is the mean over episodes of ``goal_distance`` at the last real step.
    """
    stats = forward_return_diagnostics(paths, prefix)
    final = final_step_values(_info(paths, "goal_distance"), np.asarray(paths.mask))
    stats[prefix + "AvgFinalGoalDistance"] = float(np.mean(final)) if final.size else float("nan")
    return stats
