"""Sample processing for the DiCE objective: adds the baseline-adjusted discounted rewards."""

from __future__ import annotations

import numpy as np

from meta_policy_search.baselines.base import Baseline
from meta_policy_search.baselines.linear_baseline import LinearTimeBaseline
from meta_policy_search.samplers.meta_sample_processor import (
    MetaSampleProcessor,
    fit_predict_baselines,
)
from meta_policy_search.types import PathBatch
from meta_policy_search.utils import rl_math


class DiceSampleProcessor(MetaSampleProcessor):
    """:class:`MetaSampleProcessor` plus the adjusted rewards of the DiCE objective.

    As the original ProMP's ``DiceSampleProcessor``, for each task separately::

        discounted_rewards_h = gamma^h * r_h
        reward_baseline.fit(discounted_rewards)                  # e.g. LinearTimeBaseline
        adjusted_rewards_h   = discounted_rewards_h - reward_baseline(h)
        if normalize_adv:  adjusted_rewards = (adjusted_rewards - mean) / (std + 1e-8)
        if positive_adv:   adjusted_rewards = adjusted_rewards - min + 1e-8

    where ``mean``, ``std`` and ``min`` are taken over the task's zero-padded ``[N, H]`` array:
    every time step of its ``N`` real episodes, including the zeros after an episode ended
    (whole padded episodes, see :func:`~meta_policy_search.utils.rl_math.real_episodes`, do not
    count). The DiCE objective
    (:func:`~meta_policy_search.meta_algos.objectives.dice_objective`) weights
    ``adjusted_rewards_h`` with the magic box of the log-probabilities of steps ``0..h``; the
    baseline is subtracted from each discounted reward, not from the reward-to-go (Foerster et
    al. 2018, "DiCE: the infinitely differentiable Monte-Carlo estimator"; Mao et al. 2019, "A
    baseline for any order gradient estimation in stochastic computation graphs").

    The returns, the GAE advantages (fitted with ``baseline``; the VPG-DiCE outer step uses
    them) and their normalization are exactly those of :class:`MetaSampleProcessor`, like the
    original's ``return_baseline`` advantages. The adjusted rewards are 0 on padded steps (the
    objective masks them anyway).

    Args:
        baseline: the baseline of the returns and GAE advantages (:class:`MetaSampleProcessor`).
        max_path_length: ``H``; every processed batch must have this time dimension.
        discount: ``gamma`` in ``[0, 1]``.
        gae_lambda: GAE ``lambda`` in ``[0, 1]``.
        normalize_adv: standardize the advantages (over each task's real steps) and the adjusted
            rewards (over each task's padded ``[N, H]`` array).
        positive_adv: shift the advantages and the adjusted rewards per task to be positive.
        reward_baseline: the baseline fitted to the discounted rewards, refit on each task;
            ``None``: a :class:`~meta_policy_search.baselines.LinearTimeBaseline` (the
            original's).

    Raises:
        ValueError: if ``max_path_length < 1``, ``reward_baseline`` is not a
            :class:`~meta_policy_search.baselines.Baseline` or an argument of
            :class:`MetaSampleProcessor` is invalid.
    """

    computes_adjusted_rewards = True

    def __init__(
        self,
        baseline: Baseline,
        max_path_length: int,
        discount: float = 0.99,
        gae_lambda: float = 1.0,
        normalize_adv: bool = True,
        positive_adv: bool = False,
        reward_baseline: Baseline | None = None,
    ) -> None:
        if int(max_path_length) < 1:
            raise ValueError(f"max_path_length must be >= 1, got {max_path_length}")
        if reward_baseline is None:
            reward_baseline = LinearTimeBaseline()
        if not isinstance(reward_baseline, Baseline):
            raise ValueError(
                "reward_baseline must be a meta_policy_search.baselines.Baseline (or None for a "
                f"LinearTimeBaseline), got {type(reward_baseline)}"
            )
        super().__init__(
            baseline=baseline,
            discount=discount,
            gae_lambda=gae_lambda,
            normalize_adv=normalize_adv,
            positive_adv=positive_adv,
        )
        self.max_path_length = int(max_path_length)
        self.reward_baseline = reward_baseline

    def _compute_fields(self, paths: PathBatch) -> dict[str, np.ndarray]:
        """Add ``adjusted_rewards`` ``[T, R, H]`` to the fields of :class:`MetaSampleProcessor`."""
        horizon = np.shape(paths.rewards)[-1]
        if horizon != self.max_path_length:
            raise ValueError(
                f"paths have H = {horizon} steps (rewards shape {np.shape(paths.rewards)}), "
                f"expected max_path_length = {self.max_path_length}"
            )
        fields = super()._compute_fields(paths)
        fields["adjusted_rewards"] = self._adjusted_rewards(paths)
        return fields

    def _adjusted_rewards(self, paths: PathBatch) -> np.ndarray:
        """The DiCE adjusted rewards of the class docstring, refitting :attr:`reward_baseline`.

        Args:
            paths: ``[T, R, H]`` rollouts with their mask.

        Returns:
            ``[T, R, H]`` float32 adjusted rewards, 0 on padded steps.
        """
        rewards = np.asarray(paths.rewards, dtype=np.float32)
        mask = np.asarray(paths.mask, dtype=np.float32)
        discounted = rl_math.discounted_rewards(rewards, mask, self.discount)
        reward_baselines = fit_predict_baselines(
            self.reward_baseline, np.asarray(paths.observations), discounted, mask
        )
        adjusted = (discounted.astype(np.float64) - reward_baselines) * mask
        if self.normalize_adv:
            adjusted = rl_math.standardize_real_episodes(adjusted, mask)
        if self.positive_adv:
            adjusted = rl_math.shift_real_episodes_to_positive(adjusted, mask)
        return (adjusted * mask).astype(np.float32)
