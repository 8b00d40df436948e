"""Turn raw padded rollouts into training batches: returns, baselines, GAE advantages."""

from __future__ import annotations

import importlib

import numpy as np

from meta_policy_search.baselines.base import Baseline
from meta_policy_search.types import PathBatch, SampleBatch
from meta_policy_search.utils import rl_math


def check_path_batch(paths: PathBatch) -> None:
    """Validate the shapes and the mask of a :class:`PathBatch`.

    Args:
        paths: the batch; ``rewards`` and ``mask`` must be ``[T, R, H]`` and ``observations``
            ``[T, R, H, obs_dim]``; the mask must hold only 0 and 1, as a prefix along ``H``
            (``1 ... 1 0 ... 0``).

    Raises:
        ValueError: naming the offending array and its shape.
    """
    rewards = np.asarray(paths.rewards)
    mask = np.asarray(paths.mask)
    observations = np.asarray(paths.observations)
    if rewards.ndim != 3:
        raise ValueError(f"paths.rewards must be [T, R, H], got shape {rewards.shape}")
    if mask.shape != rewards.shape:
        raise ValueError(
            f"paths.mask must have the shape of paths.rewards {rewards.shape}, got {mask.shape}"
        )
    if observations.ndim != 4 or observations.shape[:3] != rewards.shape:
        raise ValueError(
            f"paths.observations must be [T, R, H, obs_dim] with [T, R, H] = {rewards.shape}, "
            f"got shape {observations.shape}"
        )
    if rewards.size == 0:
        raise ValueError(f"paths must hold at least one step, got rewards of shape {rewards.shape}")
    for name, arr in (("rewards", rewards), ("mask", mask), ("observations", observations)):
        if not np.issubdtype(arr.dtype, np.floating):
            raise ValueError(f"paths.{name} must be floating point, got dtype {arr.dtype}")
    if not np.all((mask == 0) | (mask == 1)):
        raise ValueError("paths.mask must contain only 0 and 1")
    if mask.shape[-1] > 1 and np.any(np.diff(mask, axis=-1) > 0):
        raise ValueError(
            "paths.mask must be a prefix mask along H (1 ... 1 0 ... 0): a real step follows "
            "padding"
        )


def fit_predict_baselines(
    baseline: Baseline, observations: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> np.ndarray:
    """Fit ``baseline`` on each task's targets in turn and predict them.

    Args:
        baseline: refit on every task (its state after the call is the last task's fit).
        observations: ``[T, R, H, obs_dim]``.
        targets: ``[T, R, H]`` regression targets (e.g. discounted returns).
        mask: ``[T, R, H]``, 1 for real steps; padded steps take no part in the fit.

    Returns:
        ``[T, R, H]`` float32 predictions, 0 on padding.
    """
    predictions = np.zeros(targets.shape, dtype=np.float32)
    for task in range(targets.shape[0]):
        baseline.fit(observations[task], targets[task], mask[task])
        predictions[task] = baseline.predict(observations[task], mask[task])
    return predictions * mask


class MetaSampleProcessor:
    """Compute returns, per-task baselines and GAE advantages for all tasks of an inner step.

    For each task ``t`` (in order, as the original ProMP):

    1. ``returns = discounted reward-to-go`` within each episode;
    2. ``baseline.fit(obs[t], returns[t], mask[t])``, then ``baselines[t] = baseline.predict``;
    3. ``advantages`` by GAE with ``b = 0`` after each episode's last real step;
    4. optionally normalize the advantages over the task's real steps, then optionally shift
       them to be positive.

    Everything is 0 on padded steps.

    Args:
        baseline: a :class:`~meta_policy_search.baselines.Baseline`, refit on each task.
        discount: ``gamma`` in ``[0, 1]``.
        gae_lambda: GAE ``lambda`` in ``[0, 1]`` (1 gives ``returns - baselines``).
        normalize_adv: standardize advantages per task (mask-weighted mean and std, eps 1e-8).
        positive_adv: shift advantages per task so that the smallest is ``1e-8``.

    Attributes:
        computes_adjusted_rewards: whether the batches hold DiCE's ``adjusted_rewards`` (False
            here; algorithms with DiCE objectives need a processor where it is True).
        last_statistics: the statistics of the last :meth:`process_samples` call (keys with the
            ``log_prefix``), empty before the first call.

    Raises:
        ValueError: if ``discount`` or ``gae_lambda`` is outside ``[0, 1]`` or ``baseline`` is
            not a :class:`~meta_policy_search.baselines.Baseline`.
    """

    computes_adjusted_rewards: bool = False

    def __init__(
        self,
        baseline: Baseline,
        discount: float = 0.99,
        gae_lambda: float = 1.0,
        normalize_adv: bool = False,
        positive_adv: bool = False,
    ) -> None:
        if not isinstance(baseline, Baseline):
            raise ValueError(
                f"baseline must be a meta_policy_search.baselines.Baseline, got {type(baseline)}"
            )
        for name, value in (("discount", discount), ("gae_lambda", gae_lambda)):
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        self.baseline = baseline
        self.discount = float(discount)
        self.gae_lambda = float(gae_lambda)
        self.normalize_adv = bool(normalize_adv)
        self.positive_adv = bool(positive_adv)
        self.last_statistics: dict[str, float] = {}

    def process_samples(
        self, paths: PathBatch, log: bool = False, log_prefix: str = ""
    ) -> SampleBatch:
        """Process one inner step's rollouts of all tasks.

        Args:
            paths: ``[T, R, H, ...]`` rollouts with their mask.
            log: if true, write the statistics with ``meta_policy_search.utils.logger.logkv``.
            log_prefix: prefix of the statistic keys (e.g. ``'Step_0-'``).

        Returns:
            A :class:`~meta_policy_search.types.SampleBatch` with float32 ``returns``,
            ``baselines`` and ``advantages`` (``[T, R, H]``, 0 on padding).

        Raises:
            ValueError: on wrong shapes or an invalid mask (see :func:`check_path_batch`).
        """
        check_path_batch(paths)
        fields = self._compute_fields(paths)
        stats = self._path_statistics(paths, fields["returns"], log_prefix)
        self.last_statistics = stats
        if log:
            logger = importlib.import_module("meta_policy_search.utils.logger")
            for key, value in stats.items():
                logger.logkv(key, value)
        return SampleBatch.from_paths(paths, **fields)

    def _compute_fields(self, paths: PathBatch) -> dict[str, np.ndarray]:
        """Return the computed ``SampleBatch`` fields (all ``[T, R, H]`` float32).

        ``adjusted_rewards`` is left out (so it is ``None`` in the batch) unless a subclass adds it.
        """
        rewards = np.asarray(paths.rewards, dtype=np.float32)
        mask = np.asarray(paths.mask, dtype=np.float32)
        observations = np.asarray(paths.observations)
        returns = rl_math.masked_discounted_returns(rewards, mask, self.discount)
        baselines = fit_predict_baselines(self.baseline, observations, returns, mask)
        advantages = rl_math.compute_gae(
            rewards, baselines, mask, self.discount, self.gae_lambda
        )
        if self.normalize_adv:
            advantages = rl_math.normalize_advantages(advantages, mask, axis=(1, 2))
        if self.positive_adv:
            advantages = rl_math.shift_advantages_to_positive(advantages, mask, axis=(1, 2))
        return {
            "returns": returns.astype(np.float32),
            "baselines": baselines.astype(np.float32),
            "advantages": advantages.astype(np.float32),
        }

    def _path_statistics(
        self, paths: PathBatch, returns: np.ndarray, log_prefix: str
    ) -> dict[str, float]:
        """The original ProMP's episode statistics over the real episodes of all tasks.

        Whole padded episodes (``'budget'`` sampling mode) are left out.
        """
        real = paths.episode_mask
        undiscounted = paths.episode_returns[real]
        discounted = np.asarray(returns, dtype=np.float64)[..., 0][real]
        return {
            log_prefix + "AverageDiscountedReturn": float(np.mean(discounted)),
            log_prefix + "AverageReturn": float(np.mean(undiscounted)),
            log_prefix + "NumTrajs": int(undiscounted.size),
            log_prefix + "StdReturn": float(np.std(undiscounted)),
            log_prefix + "MaxReturn": float(np.max(undiscounted)),
            log_prefix + "MinReturn": float(np.min(undiscounted)),
        }
