"""ProMP: Proximal Meta-Policy Search (Rothfuss et al., ICLR 2019)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from meta_policy_search.meta_algos.base import MAMLAlgo
from meta_policy_search.meta_algos.batch import TensorBatch
from meta_policy_search.meta_algos.forward import (
    AdaptationChain,
    inner_step_kls,
    post_update_surrogate,
)
from meta_policy_search.meta_algos.inner_step_settings import DEFAULTS as INNER_STEP
from meta_policy_search.meta_algos.pro_mp_settings import DEFAULTS, ProMPSettings
from meta_policy_search.optimizers import MinibatchAdamOptimizer
from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy
from meta_policy_search.types import SampleBatch


class ProMP(MAMLAlgo):
    r"""ProMP: LVC inner steps, clipped post-update surrogate plus an inner-step KL penalty.

    Outer loss, minimised with Adam for ``num_ppo_steps`` steps on the same samples:

    .. math::

       \begin{aligned}
       L(\theta) = {} & -\mathbb{E}_t\big[\min\big(r A,\
           \operatorname{clip}(r, 1 - \epsilon, 1 + \epsilon) A\big)\big]
           && \text{on } \mathcal{D}_K,\ \theta_K(\theta) \\
         & + \frac{1}{K} \sum_{k=0}^{K-1} \eta_k\, \mathbb{E}_t\big[
           D_{\mathrm{KL}}(\pi_{\text{old},k} \,\|\, \pi_{\theta_k})\big]
           && \text{on } \mathcal{D}_k,\ k < K
       \end{aligned}

    with :math:`r = \pi_{\theta_K} / \pi_{\text{old},K}`. The KL penalty is the *mean* over the
    :math:`K` inner steps, as in the original code
    (``tf.reduce_mean(inner_kl_coeff * mean_inner_kl_per_step)``): with :math:`K > 1` each
    :math:`\eta_k` weighs :math:`1/K` of what a sum would give it.
    :math:`\epsilon` = ``clip_eps * anneal_factor ** n`` after ``n`` meta-iterations. With
    ``adaptive_inner_kl_penalty``, after each outer step :math:`\eta_k` is halved if
    :math:`\mathrm{KL}_k <` ``target_inner_step / 1.5`` and doubled if
    :math:`\mathrm{KL}_k >` ``1.5 * target_inner_step``.

    The settings beyond :class:`MAMLAlgo`'s (the inner step's) are those of
    :class:`~meta_policy_search.meta_algos.pro_mp_settings.ProMPSettings`, which holds their
    defaults (the paper's), checks and descriptions; they are stored as :attr:`settings`.

    Raises:
        ValueError: naming every invalid setting.
    """

    settings: ProMPSettings
    """ProMP's own settings, checked, fixed at construction."""

    optimizer: MinibatchAdamOptimizer
    """Adam on :meth:`meta_loss`, run by :meth:`optimize_policy` with ProMP's own statistics."""

    def __init__(
        self,
        policy: MetaGaussianMLPPolicy,
        inner_lr: float = INNER_STEP.inner_lr,
        num_inner_grad_steps: int = INNER_STEP.num_inner_grad_steps,
        learning_rate: float = DEFAULTS.learning_rate,
        num_ppo_steps: int = DEFAULTS.num_ppo_steps,
        num_minibatches: int = DEFAULTS.num_minibatches,
        clip_eps: float = DEFAULTS.clip_eps,
        target_inner_step: float = DEFAULTS.target_inner_step,
        init_inner_kl_penalty: float = DEFAULTS.init_inner_kl_penalty,
        adaptive_inner_kl_penalty: bool = DEFAULTS.adaptive_inner_kl_penalty,
        anneal_factor: float = DEFAULTS.anneal_factor,
        trainable_inner_step_size: bool = INNER_STEP.trainable_inner_step_size,
        first_order: bool = INNER_STEP.first_order,
        jit_compile: bool = INNER_STEP.jit_compile,
    ) -> None:
        self.settings = ProMPSettings(
            learning_rate=learning_rate, num_ppo_steps=num_ppo_steps,
            num_minibatches=num_minibatches, clip_eps=clip_eps,
            target_inner_step=target_inner_step, init_inner_kl_penalty=init_inner_kl_penalty,
            adaptive_inner_kl_penalty=adaptive_inner_kl_penalty, anneal_factor=anneal_factor,
        ).checked()
        super().__init__(
            policy=policy,
            inner_lr=inner_lr,
            num_inner_grad_steps=num_inner_grad_steps,
            trainable_inner_step_size=trainable_inner_step_size,
            inner_type="likelihood_ratio",
            first_order=first_order,
            jit_compile=jit_compile,
        )
        self.clip_eps = float(clip_eps)
        self.target_inner_step = float(target_inner_step)
        self.adaptive_inner_kl_penalty = bool(adaptive_inner_kl_penalty)
        self.anneal_factor = float(anneal_factor)
        dtype = policy.dtype
        self.inner_kl_coeffs = tf.Variable(
            tf.fill([self.num_inner_grad_steps], tf.cast(init_inner_kl_penalty, dtype)),
            trainable=False, name="inner_kl_coeffs",
        )
        self.current_clip_eps = tf.Variable(tf.cast(clip_eps, dtype), trainable=False, name="clip_eps")
        # Meta-iterations (outer updates of num_ppo_steps Adam steps each) so far: drives the
        # clipping annealing.
        self.num_meta_iterations = tf.Variable(
            0, dtype=tf.int64, trainable=False, name="num_meta_iterations"
        )
        self.optimizer = MinibatchAdamOptimizer(
            learning_rate=learning_rate, max_epochs=num_ppo_steps, num_minibatches=num_minibatches,
            jit_compile=self.jit_compile,
        )
        self.optimizer.build(self.meta_variables, self.meta_loss)

    def objective(
        self, chain: AdaptationChain, batches: Sequence[TensorBatch]
    ) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        """ProMP's outer loss (see the class docstring) and the ``[K]`` inner KLs.

        Args:
            chain: :meth:`forward` on ``batches``.
            batches: the ``K + 1`` batches, the last one post-update.

        Returns:
            ``(loss, {'KLInner': [K] mean KL of each inner step's policy from its sampler})``.
        """
        loss = tf.reduce_mean(post_update_surrogate(chain, batches, self.current_clip_eps))
        kls = inner_step_kls(chain, batches, self.policy.dtype)
        if self.num_inner_grad_steps > 0:  # the mean over no inner steps would be NaN
            loss += tf.reduce_mean(self.inner_kl_coeffs * kls)
        return loss, {"KLInner": kls}

    def adapt_kl_coeffs(self, inner_kls: np.ndarray) -> None:
        """The adaptive penalty rule: halve ``eta_k`` below target/1.5, double above 1.5 target."""
        coeffs = self.inner_kl_coeffs.numpy()
        coeffs = np.where(inner_kls < self.target_inner_step / 1.5, coeffs / 2.0, coeffs)
        coeffs = np.where(inner_kls > self.target_inner_step * 1.5, coeffs * 2.0, coeffs)
        self.inner_kl_coeffs.assign(coeffs)

    def optimize_policy(self, all_samples_data: Sequence[SampleBatch]) -> dict[str, float]:
        """Run ``num_ppo_steps`` Adam epochs on the meta-objective, then adapt the KL penalty.

        Args:
            all_samples_data: the ``K + 1`` processed batches of one meta-iteration.

        Returns:
            ``LossBefore``, ``LossAfter``, ``ClipEps`` and, with inner steps, ``KLInner`` (the
            mean), ``KLCoeffInner`` and ``KLInner_k`` per inner step.
        """
        batches = self._check_all_samples(all_samples_data)
        optimizer_stats = self.optimizer.optimize(batches)
        inner_kls = np.asarray(optimizer_stats["KLInner"])
        stats = {
            "LossBefore": float(optimizer_stats["LossBefore"]),
            "LossAfter": float(optimizer_stats["LossAfter"]),
            "ClipEps": float(self.current_clip_eps.numpy()),
        }
        if inner_kls.size:  # none with num_inner_grad_steps = 0
            stats["KLInner"] = float(np.mean(inner_kls))
            stats["KLCoeffInner"] = float(np.mean(self.inner_kl_coeffs.numpy()))
        for k, kl in enumerate(inner_kls):
            stats[f"KLInner_{k}"] = float(kl)
        if self.adaptive_inner_kl_penalty:
            self.adapt_kl_coeffs(inner_kls)
        self.num_meta_iterations.assign_add(1)
        self.current_clip_eps.assign(
            self.clip_eps * self.anneal_factor ** int(self.num_meta_iterations.numpy())
        )
        return stats

    def checkpoint_state(self) -> dict[str, tf.Module | tf.Variable]:
        """As :meth:`MAMLAlgo.checkpoint_state`, plus KL coefficients and clip annealing."""
        state = super().checkpoint_state()
        state.update(
            inner_kl_coeffs=self.inner_kl_coeffs,
            clip_eps=self.current_clip_eps,
            num_meta_iterations=self.num_meta_iterations,
        )
        return state

