"""Sample processing for the DiCE objective: adds discounted baseline-adjusted rewards."""

from __future__ import annotations

import numpy as np

from meta_policy_search.baselines.base import Baseline
from meta_policy_search.samplers.meta_sample_processor import MetaSampleProcessor
from meta_policy_search.types import PathBatch
from meta_policy_search.utils import rl_math


class DiceSampleProcessor(MetaSampleProcessor):
    """:class:`MetaSampleProcessor` plus the baseline-adjusted rewards of the DiCE objective.

    On real steps (0 on padding), with ``b_{t+1} = 0`` after an episode's last real step::

        adjusted_rewards_t = gamma^t * (r_t + gamma * b_{t+1} - b_t)

    **Why these rewards.** The DiCE objective (Foerster et al. 2018, "DiCE: the infinitely
    differentiable Monte-Carlo estimator") over one episode is::

        L = sum_t magic_box(sum_{t' <= t} log pi_t') * adjusted_rewards_t

    where ``magic_box(x) = exp(x - stop_gradient(x))`` evaluates to 1 and has gradient
    ``grad magic_box(x) = magic_box(x) * grad x``. Its first-order gradient is therefore::

        grad L = sum_t (sum_{t' <= t} grad log pi_t') * adjusted_rewards_t
               = sum_t' grad log pi_t' * sum_{t >= t'} adjusted_rewards_t

    and the inner sum telescopes, because each ``gamma^{t+1} b_{t+1}`` added at step ``t`` is
    removed at step ``t + 1`` and the last one is 0::

        sum_{t >= t'} gamma^t (r_t + gamma b_{t+1} - b_t)
            = sum_{t >= t'} gamma^t r_t - gamma^t' b_t'
            = gamma^t' (R_t' - b_t')

    with ``R_t'`` the discounted reward-to-go. Hence
    ``grad L = sum_t' grad log pi_t' * gamma^t' * (R_t' - b_t')``, the policy gradient with
    baseline ``b``; the baseline lowers the variance of the DiCE estimator (Mao et al. 2019,
    "A baseline for any order gradient estimation in stochastic computation graphs") without
    biasing it. Over a full episode ``sum_t adjusted_rewards_t = sum_t gamma^t r_t - b_0``.

    The GAE advantages are computed exactly as by :class:`MetaSampleProcessor` (the VPG-DiCE
    outer step uses them).

    Args:
        baseline: a :class:`~meta_policy_search.baselines.Baseline`, refit on each task.
        max_path_length: ``H``; every processed batch must have this time dimension.
        discount: ``gamma`` in ``[0, 1]``.
        gae_lambda: GAE ``lambda`` in ``[0, 1]``.
        normalize_adv: standardize advantages per task (not the adjusted rewards).
        positive_adv: shift advantages per task so that the smallest is ``1e-8``.

    Raises:
        ValueError: if ``max_path_length < 1`` or an argument of :class:`MetaSampleProcessor`
            is invalid.
    """

    def __init__(
        self,
        baseline: Baseline,
        max_path_length: int,
        discount: float = 0.99,
        gae_lambda: float = 1.0,
        normalize_adv: bool = True,
        positive_adv: bool = False,
    ) -> None:
        if int(max_path_length) < 1:
            raise ValueError(f"max_path_length must be >= 1, got {max_path_length}")
        super().__init__(
            baseline,
            discount=discount,
            gae_lambda=gae_lambda,
            normalize_adv=normalize_adv,
            positive_adv=positive_adv,
        )
        self.max_path_length = int(max_path_length)

    def _compute_fields(self, paths: PathBatch) -> dict[str, np.ndarray]:
        """Add ``adjusted_rewards`` ``[T, R, H]`` to the fields of :class:`MetaSampleProcessor`."""
        horizon = np.shape(paths.rewards)[-1]
        if horizon != self.max_path_length:
            raise ValueError(
                f"paths have H = {horizon} steps (rewards shape {np.shape(paths.rewards)}), "
                f"expected max_path_length = {self.max_path_length}"
            )
        fields = super()._compute_fields(paths)
        rewards = np.asarray(paths.rewards, dtype=np.float32)
        mask = np.asarray(paths.mask, dtype=np.float32)
        fields["adjusted_rewards"] = rl_math.baseline_adjusted_rewards(
            rewards, fields["baselines"], mask, self.discount
        ).astype(np.float32)
        return fields
