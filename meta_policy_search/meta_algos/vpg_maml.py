"""VPG-MAML, LVC-VPG and E-MAML-VPG: MAML with a first-order (Adam) outer step."""

from __future__ import annotations

from meta_policy_search.meta_algos.base import MAMLAlgo
from meta_policy_search.meta_algos.inner_step_settings import DEFAULTS as INNER_STEP
from meta_policy_search.meta_algos.vpg_maml_settings import DEFAULTS, VPGMAMLSettings
from meta_policy_search.optimizers import MinibatchAdamOptimizer
from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy


class VPGMAML(MAMLAlgo):
    r"""MAML with one Adam step on the post-update policy-gradient objective.

    The outer loss is :math:`-\mathbb{E}_t[r A]` on the post-update batch with
    :math:`r = \pi_{\theta_K} / \pi_{\text{old}}`; at the sampling parameters its gradient equals
    that of :math:`-\log \pi\, A` (vanilla policy gradient), through the inner steps of type
    ``inner_type``.

    The settings beyond :class:`MAMLAlgo`'s are those of
    :class:`~meta_policy_search.meta_algos.vpg_maml_settings.VPGMAMLSettings`, which holds their
    defaults, checks and descriptions; they are stored as :attr:`settings`.

    Args:
        num_outer_steps: Adam steps per meta-iteration (1, the default, is vanilla policy
            gradient; not a run-script flag).

    Raises:
        ValueError: naming every invalid setting.
    """

    def __init__(
        self,
        policy: MetaGaussianMLPPolicy,
        inner_lr: float = INNER_STEP.inner_lr,
        num_inner_grad_steps: int = INNER_STEP.num_inner_grad_steps,
        learning_rate: float = DEFAULTS.learning_rate,
        inner_type: str = DEFAULTS.inner_type,
        exploration: bool = DEFAULTS.exploration,
        trainable_inner_step_size: bool = INNER_STEP.trainable_inner_step_size,
        first_order: bool = INNER_STEP.first_order,
        num_outer_steps: int = 1,
        jit_compile: bool = INNER_STEP.jit_compile,
        exploration_type: str = DEFAULTS.exploration_type,
    ) -> None:
        self.settings = VPGMAMLSettings(
            learning_rate=learning_rate, inner_type=inner_type, exploration=exploration,
            exploration_type=exploration_type,
        ).checked()
        super().__init__(
            policy=policy,
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
