"""The forward pass every meta-objective reads: the adaptation chain and the policy's
distributions on each batch, computed once and named."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import tensorflow as tf

from meta_policy_search.meta_algos import objectives
from meta_policy_search.meta_algos.batch import TensorBatch
from meta_policy_search.meta_algos.inner_step import Params
from meta_policy_search.policies.distributions import DiagonalGaussian, DistInfo


class AdaptationChain(NamedTuple):
    r"""One evaluation of the inner steps, from the shared parameters to the adapted ones.

    Built by :meth:`~meta_policy_search.meta_algos.base.MAMLAlgo.forward`; every tensor is
    differentiable w.r.t. the meta-variables (through the inner steps).

    Attributes:
        params: ``[theta_0, ..., theta_K]``, each name -> ``[T, ...]`` per-task parameters;
            ``theta_0`` is the shared parameters tiled over the tasks, ``theta_{k+1}`` the inner
            step from ``theta_k`` on batch ``k``.
        dist_infos: ``K + 1`` dicts ``{'mean', 'log_std'}`` ``[T, M, A]``: :math:`\pi_{\theta_k}`
            on batch ``k``. The first ``K`` come from the inner steps' own forward passes; the
            last is the adapted policy on the post-update batch.
    """

    params: list[Params]
    dist_infos: list[DistInfo]

    @property
    def inner_dist_infos(self) -> list[DistInfo]:
        r""":math:`\pi_{\theta_k}` on inner batch ``k``, ``k < K``."""
        return self.dist_infos[:-1]

    @property
    def post_dist_info(self) -> DistInfo:
        r"""The adapted policy :math:`\pi_{\theta_K}` on the post-update batch."""
        return self.dist_infos[-1]


def log_likelihood(dist_info: DistInfo, batch: TensorBatch) -> tf.Tensor:
    """Per-step log-likelihoods ``[T, R, H]`` of ``batch``'s actions under ``dist_info``.

    Args:
        dist_info: ``{'mean', 'log_std'}`` ``[T, M, A]`` on ``batch``'s packed rows.
        batch: the batch whose actions are scored.

    Returns:
        ``[T, R, H]``, 0 on padding.
    """
    return batch.per_step(DiagonalGaussian.log_likelihood(batch.actions, dist_info))


def old_log_likelihood(batch: TensorBatch) -> tf.Tensor:
    """Per-step log-likelihoods ``[T, R, H]`` under the distribution that sampled ``batch``."""
    return log_likelihood(batch.old_dist_info, batch)


def likelihood_ratio(dist_info: DistInfo, batch: TensorBatch) -> tf.Tensor:
    r"""Per-step :math:`\pi(a \mid s) / \pi_{\text{old}}(a \mid s)` ``[T, R, H]`` on ``batch``."""
    return tf.exp(log_likelihood(dist_info, batch) - old_log_likelihood(batch))


def mean_kl(dist_info: DistInfo, batch: TensorBatch) -> tf.Tensor:
    r"""Mean :math:`D_{\mathrm{KL}}(\pi_{\text{old}} \| \pi)` over the real steps of ``batch``,
    averaged over tasks, with ``dist_info`` :math:`\pi`'s ``{'mean', 'log_std'}`` ``[T, M, A]``."""
    kl = batch.per_step(DiagonalGaussian.kl(batch.old_dist_info, dist_info))
    return tf.reduce_mean(objectives.masked_task_mean(kl, batch.mask))


def inner_step_kls(chain: AdaptationChain, batches: Sequence[TensorBatch], dtype: tf.DType) -> tf.Tensor:
    r"""``[K]``: :func:`mean_kl` of :math:`\pi_{\theta_k}` on each inner batch ``k < K``.

    With no inner step (``K = 0``, plain policy optimisation on the task mixture) the result is
    empty, of ``dtype``.
    """
    kls = [mean_kl(dist_info, batch) for dist_info, batch in zip(chain.inner_dist_infos, batches)]
    return tf.stack(kls) if kls else tf.zeros([0], dtype)


def post_update_surrogate(
    chain: AdaptationChain,
    batches: Sequence[TensorBatch],
    clip_eps: tf.Tensor | float | None = None,
) -> tf.Tensor:
    r"""Per-task surrogate ``[T]`` of the adapted policy on the post-update batch.

    :math:`-\mathbb{E}[r A]` with :math:`r = \pi_{\theta_K}(a \mid s) / \pi_{\text{old}}(a \mid s)`
    (:func:`~meta_policy_search.meta_algos.objectives.surrogate_objective`), or with ``clip_eps``
    :math:`\epsilon` PPO's clipped
    :math:`-\mathbb{E}[\min(r A, \operatorname{clip}(r, 1 - \epsilon, 1 + \epsilon) A)]`
    (:func:`~meta_policy_search.meta_algos.objectives.clipped_surrogate_objective`).

    Args:
        chain: the forward pass on ``batches``.
        batches: the ``K + 1`` batches, the last one post-update.
        clip_eps: PPO's clipping range, or ``None`` for the unclipped surrogate.

    Returns:
        ``[T]`` per-task losses.
    """
    post = batches[-1]
    ratio = likelihood_ratio(chain.post_dist_info, post)
    if clip_eps is None:
        return objectives.surrogate_objective(ratio, post.advantages, post.mask)
    return objectives.clipped_surrogate_objective(ratio, post.advantages, post.mask, clip_eps)
