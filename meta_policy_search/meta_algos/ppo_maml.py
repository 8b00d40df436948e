"""PPO-MAML: MAML inner steps, PPO's clipped surrogate as the outer objective (Adam steps).

The meta-RL baseline of garage (``MAMLPPO``), RLlib (``MAML``) and torchrl: ProMP's outer
optimisation without ProMP's LVC inner objective and inner KL penalty.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from meta_policy_search.meta_algos.base import MAMLAlgo
from meta_policy_search.meta_algos.batch import TensorBatch
from meta_policy_search.meta_algos.forward import AdaptationChain, post_update_surrogate
from meta_policy_search.meta_algos.inner_step_settings import DEFAULTS as INNER_STEP
from meta_policy_search.meta_algos.ppo_maml_settings import DEFAULTS, PPOMAMLSettings
from meta_policy_search.optimizers import MinibatchAdamOptimizer
from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy


class PPOMAML(MAMLAlgo):
    r"""MAML with PPO's clipped surrogate on the post-update batch as the outer loss.

    The outer loss, minimised with Adam for ``num_ppo_steps`` steps on the same samples, is

    .. math::

        L(\theta) = -\frac{1}{T} \sum_{t=1}^{T} \mathbb{E}_{\mathcal{D}_t^{(K)}}\Big[
            \min\big(r_h A_h,\ \operatorname{clip}(r_h, 1 - \epsilon, 1 + \epsilon)\, A_h\big)\Big],
        \qquad r_h = \frac{\pi_{\theta_t^{(K)}(\theta)}(a_h \mid s_h)}{\pi_{\text{old}}(a_h \mid s_h)}

    with :math:`\theta_t^{(K)}(\theta)` the parameters after ``K`` inner steps of type
    ``inner_type`` (MAML's log-likelihood loss by default), differentiated through, and
    :math:`\epsilon` = ``clip_eps``. Compared with :class:`~meta_policy_search.meta_algos.ProMP`
    there is no KL penalty on the inner steps, and the inner objective is MAML's unless
    ``inner_type='likelihood_ratio'`` (which gives ProMP with a zero KL penalty).

    The settings beyond :class:`MAMLAlgo`'s are those of
    :class:`~meta_policy_search.meta_algos.ppo_maml_settings.PPOMAMLSettings`, which holds their
    defaults, checks and descriptions; they are stored as :attr:`settings`.

    Raises:
        ValueError: naming every invalid setting.
    """

    def __init__(
        self,
        policy: MetaGaussianMLPPolicy,
        inner_lr: float = INNER_STEP.inner_lr,
        num_inner_grad_steps: int = INNER_STEP.num_inner_grad_steps,
        learning_rate: float = DEFAULTS.learning_rate,
        num_ppo_steps: int = DEFAULTS.num_ppo_steps,
        num_minibatches: int = DEFAULTS.num_minibatches,
        clip_eps: float = DEFAULTS.clip_eps,
        inner_type: str = DEFAULTS.inner_type,
        trainable_inner_step_size: bool = INNER_STEP.trainable_inner_step_size,
        first_order: bool = INNER_STEP.first_order,
        jit_compile: bool = INNER_STEP.jit_compile,
    ) -> None:
        self.settings = PPOMAMLSettings(
            learning_rate=learning_rate, num_ppo_steps=num_ppo_steps,
            num_minibatches=num_minibatches, clip_eps=clip_eps, inner_type=inner_type,
        ).checked()
        super().__init__(
            policy=policy,
            inner_lr=inner_lr,
            num_inner_grad_steps=num_inner_grad_steps,
            trainable_inner_step_size=trainable_inner_step_size,
            inner_type=inner_type,
            first_order=first_order,
            jit_compile=jit_compile,
        )
        self.clip_eps = float(clip_eps)
        self.optimizer = MinibatchAdamOptimizer(
            learning_rate=learning_rate, max_epochs=num_ppo_steps, num_minibatches=num_minibatches,
            jit_compile=self.jit_compile,
        )
        self.optimizer.build(self.meta_variables, self.meta_loss)

    def objective(
        self, chain: AdaptationChain, batches: Sequence[TensorBatch]
    ) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        """The clipped post-update surrogate (see the class docstring).

        Args:
            chain: :meth:`forward` on ``batches``.
            batches: the ``K + 1`` batches of one meta-iteration, the last one post-update.

        Returns:
            ``(loss, {})``, the loss the mean over tasks.
        """
        return tf.reduce_mean(post_update_surrogate(chain, batches, self.clip_eps)), {}
