"""VPG-MAML, LVC-VPG and E-MAML-VPG: MAML with a first-order (Adam) outer step."""

from __future__ import annotations

from meta_policy_search.meta_algos.base import MAMLAlgo
from meta_policy_search.meta_algos.inner_step_settings import DEFAULTS, MAML_INNER_TYPE
from meta_policy_search.optimizers import MinibatchAdamOptimizer
from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy


class VPGMAML(MAMLAlgo):
    r"""MAML with one Adam step on the post-update policy-gradient objective.

    The outer loss is :math:`-\mathbb{E}_t[r A]` on the post-update batch with
    :math:`r = \pi_{\theta_K} / \pi_{\text{old}}`; at the sampling parameters its gradient equals
    that of :math:`-\log \pi\, A` (vanilla policy gradient), through the inner steps of type
    ``inner_type``.

    Arguments not listed below are those of :class:`MAMLAlgo`.

    Args:
        learning_rate: Adam learning rate.
        inner_type: ``'log_likelihood'`` (VPG-MAML, the default:
            :data:`~meta_policy_search.meta_algos.inner_step_settings.MAML_INNER_TYPE`),
            ``'likelihood_ratio'`` (LVC-VPG) or ``'dice'``.
        exploration: add E-MAML's pre-update sampling term (E-MAML-VPG).
        exploration_type: ``'original'`` (the original ProMP code's term) or ``'emaml_paper'``
            (see :meth:`MAMLAlgo.exploration_loss`).
        num_outer_steps: Adam steps per meta-iteration (1 is vanilla policy gradient).
    """

    def __init__(
        self,
        policy: MetaGaussianMLPPolicy,
        inner_lr: float = DEFAULTS.inner_lr,
        num_inner_grad_steps: int = DEFAULTS.num_inner_grad_steps,
        learning_rate: float = 1e-3,
        inner_type: str = MAML_INNER_TYPE,
        exploration: bool = False,
        trainable_inner_step_size: bool = DEFAULTS.trainable_inner_step_size,
        first_order: bool = DEFAULTS.first_order,
        num_outer_steps: int = 1,
        jit_compile: bool = DEFAULTS.jit_compile,
        exploration_type: str = "original",
    ) -> None:
        super().__init__(
            policy,
            inner_lr=inner_lr,
            num_inner_grad_steps=num_inner_grad_steps,
            trainable_inner_step_size=trainable_inner_step_size,
            inner_type=inner_type,
            first_order=first_order,
            jit_compile=jit_compile,
            exploration=exploration,
            exploration_type=exploration_type,
        )
        self.optimizer = MinibatchAdamOptimizer(
            learning_rate=learning_rate, max_epochs=num_outer_steps, jit_compile=self.jit_compile
        )
        self.optimizer.build(self.meta_variables, self.meta_loss)
