"""DiCE-MAML and VPG-DiCE: MAML with DiCE inner steps (Foerster et al., ICML 2018)."""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from meta_policy_search.meta_algos import objectives
from meta_policy_search.meta_algos.batch import TensorBatch
from meta_policy_search.meta_algos.dice_maml_settings import DEFAULTS
from meta_policy_search.meta_algos.forward import (
    AdaptationChain,
    log_likelihood,
    old_log_likelihood,
    post_update_surrogate,
)
from meta_policy_search.meta_algos.inner_step_settings import DEFAULTS as INNER_STEP
from meta_policy_search.meta_algos.vpg_maml import VPGMAML
from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy
from meta_policy_search.types import SampleBatch
from meta_policy_search.utils.validation import check_positive_int


class DICEMAML(VPGMAML):
    r"""DiCE inner steps and a DiCE outer objective, optimised with Adam.

    Inner and outer losses are, per task,
    :math:`-\mathbb{E}_{n,h}\big[\boxdot\big(\sum_{h' \le h} \log \pi(a_{h'} \mid s_{h'})\big)\,
    \tilde r_h\big]` over the task's padded ``[N, H]`` array
    (:func:`~meta_policy_search.meta_algos.objectives.dice_objective`), with the adjusted
    rewards :math:`\tilde r_h` of :class:`~meta_policy_search.samplers.DiceSampleProcessor`
    (discounted rewards minus a baseline, standardized); differentiating the outer loss through
    the DiCE inner step gives the DiCE second-order terms. The samples must come from a
    ``DiceSampleProcessor``.

    The settings beyond :class:`MAMLAlgo`'s are those of
    :class:`~meta_policy_search.meta_algos.dice_maml_settings.DiceMAMLSettings` (the inner
    objective is DiCE's).

    Args:
        max_path_length: ``H`` of the samples (checked against the batches); the run scripts
            pass the env's horizon.
    """

    def __init__(
        self,
        policy: MetaGaussianMLPPolicy,
        inner_lr: float = INNER_STEP.inner_lr,
        max_path_length: int = 100,
        num_inner_grad_steps: int = INNER_STEP.num_inner_grad_steps,
        learning_rate: float = DEFAULTS.learning_rate,
        trainable_inner_step_size: bool = INNER_STEP.trainable_inner_step_size,
        first_order: bool = INNER_STEP.first_order,
        jit_compile: bool = INNER_STEP.jit_compile,
    ) -> None:
        self.max_path_length = check_positive_int("max_path_length", max_path_length)
        super().__init__(
            policy=policy,
            inner_lr=inner_lr,
            num_inner_grad_steps=num_inner_grad_steps,
            learning_rate=learning_rate,
            inner_type="dice",
            trainable_inner_step_size=trainable_inner_step_size,
            first_order=first_order,
            jit_compile=jit_compile,
        )

    def _check_all_samples(self, all_samples_data: Sequence[SampleBatch]) -> tuple[TensorBatch, ...]:
        for samples in all_samples_data:
            if samples.mask.shape[-1] != self.max_path_length:
                raise ValueError(
                    f"samples have H={samples.mask.shape[-1]}, "
                    f"expected max_path_length={self.max_path_length}"
                )
        return super()._check_all_samples(all_samples_data)

    def objective(
        self, chain: AdaptationChain, batches: Sequence[TensorBatch]
    ) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        """The DiCE objective of the post-update batch under the adapted parameters.

        Args:
            chain: :meth:`forward` on ``batches``.
            batches: the ``K + 1`` batches, the last one post-update.

        Returns:
            ``(loss, {})``, the loss the mean over tasks.
        """
        post = batches[-1]
        dice = objectives.dice_objective(
            log_likelihood(chain.post_dist_info, post), old_log_likelihood(post),
            post.adjusted_rewards, post.mask,
        )
        return tf.reduce_mean(dice), {}


class VPG_DICEMAML(DICEMAML):  # noqa: N801 - the original's public name
    r"""DiCE inner steps, vanilla policy-gradient outer step on GAE advantages (Adam).

    The inner steps use the DiCE objective of :class:`DICEMAML`; the outer loss is the
    post-update surrogate :math:`-\mathbb{E}_t[r A]` on the GAE advantages. Arguments are those of
    :class:`DICEMAML`.
    """

    def objective(
        self, chain: AdaptationChain, batches: Sequence[TensorBatch]
    ) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        r"""Post-update surrogate :math:`-\mathbb{E}_t[r A]` through the DiCE inner steps.

        Args:
            chain: :meth:`forward` on ``batches``.
            batches: the ``K + 1`` batches, the last one post-update.

        Returns:
            ``(loss, {})``, the loss the mean over tasks.
        """
        return tf.reduce_mean(post_update_surrogate(chain, batches)), {}
