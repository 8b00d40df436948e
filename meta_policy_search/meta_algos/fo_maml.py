"""First-order MAML (Finn et al. 2017, section 5.2): the inner gradient is a constant of the
meta-gradient."""

from __future__ import annotations

from meta_policy_search.meta_algos.inner_step_settings import DEFAULTS as INNER_STEP
from meta_policy_search.meta_algos.vpg_maml import VPGMAML
from meta_policy_search.meta_algos.vpg_maml_settings import DEFAULTS
from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy


class FOMAML(VPGMAML):
    r"""First-order MAML: VPG-MAML whose meta-gradient treats the inner gradient as a constant.

    The inner step is MAML's, :math:`\theta'_t = \theta - \alpha \nabla_\theta L^{\text{in}}_t(\theta)`;
    the outer loss is VPG-MAML's :math:`L^{\text{out}}_t(\theta'_t)` (one Adam step on the
    post-update policy-gradient surrogate). Its exact meta-gradient is
    :math:`(I - \alpha \nabla^2_\theta L^{\text{in}}_t)\, \nabla L^{\text{out}}_t(\theta'_t)`;
    the first-order approximation drops the Hessian term, holding
    :math:`\nabla_\theta L^{\text{in}}_t` constant
    (:func:`~meta_policy_search.meta_algos.inner_step.adapt` with ``first_order``), so the
    meta-gradient is the post-update gradient :math:`\nabla L^{\text{out}}_t(\theta'_t)` itself,
    with no second derivatives. With ``K`` inner steps every inner gradient is held constant.
    The step sizes, if ``trainable_inner_step_size``, still get their gradient
    :math:`-\nabla L^{\text{in}}_t \cdot \nabla L^{\text{out}}_t(\theta'_t)`.

    This is :class:`VPGMAML` with ``first_order=True``; the run scripts' entry ``fo_maml`` is
    ``vpg_maml`` with ``--first_order true`` (its runs record ``"algo": "vpg_maml"`` and
    ``"first_order": true``, and take the paper's MAML-VPG settings).

    The settings are those of
    :class:`~meta_policy_search.meta_algos.vpg_maml_settings.VPGMAMLSettings` and the inner
    step's, with their defaults.

    Args:
        first_order: must be true (it is the algorithm); kept as an argument so that every
            inner-step setting of a config can be passed.

    Raises:
        ValueError: if ``first_order`` is false, or naming every invalid setting.
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
        first_order: bool = True,
        jit_compile: bool = INNER_STEP.jit_compile,
        exploration_type: str = DEFAULTS.exploration_type,
    ) -> None:
        if first_order is not True:
            raise ValueError(
                f"first_order must be true for FOMAML (the first-order algorithm), got "
                f"{first_order!r}; VPGMAML gives the second-order meta-gradient")
        super().__init__(
            policy=policy,
            inner_lr=inner_lr,
            num_inner_grad_steps=num_inner_grad_steps,
            learning_rate=learning_rate,
            inner_type=inner_type,
            exploration=exploration,
            trainable_inner_step_size=trainable_inner_step_size,
            first_order=True,
            jit_compile=jit_compile,
            exploration_type=exploration_type,
        )
