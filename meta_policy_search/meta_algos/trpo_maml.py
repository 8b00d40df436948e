"""TRPO-MAML and E-MAML-TRPO (Finn et al. 2017; Al-Shedivat et al. 2018; Stadie et al. 2018)."""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from meta_policy_search.meta_algos.base import MAMLAlgo
from meta_policy_search.meta_algos.batch import TensorBatch
from meta_policy_search.meta_algos.forward import mean_kl
from meta_policy_search.meta_algos.inner_step_settings import DEFAULTS as INNER_STEP
from meta_policy_search.meta_algos.trpo_maml_settings import DEFAULTS, TRPOMAMLSettings
from meta_policy_search.optimizers import ConjugateGradientOptimizer, Constraint
from meta_policy_search.policies.distributions import DistInfo
from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy


class TRPOMAML(MAMLAlgo):
    r"""MAML with a TRPO outer step.

    .. math::

       \min_\theta\ -\mathbb{E}_t[r A] \quad \text{s.t.} \quad
       \mathbb{E}_t\big[D_{\mathrm{KL}}(\pi_{\text{old}} \,\|\, \pi_{\theta_K})\big] \le \delta

    on the post-update batch, with :math:`r = \pi_{\theta_K} / \pi_{\text{old}}`,
    :math:`\theta_K(\theta)` the adapted parameters and :math:`\delta` = ``step_size``, solved
    with conjugate gradient on Hessian-vector products of the KL *through the inner steps*
    (exact at the old parameters, see ``hvp_approach``) and a backtracking line search
    (:class:`~meta_policy_search.optimizers.ConjugateGradientOptimizer`).

    The settings beyond :class:`MAMLAlgo`'s are those of
    :class:`~meta_policy_search.meta_algos.trpo_maml_settings.TRPOMAMLSettings`, which holds
    their defaults, checks and descriptions (``jit_compile`` is on by default here); they are
    stored as :attr:`settings`.

    Args:
        cg_iters: conjugate-gradient iterations (not a run-script flag).
        hvp_approach: how the conjugate gradient's Hessian-vector products of the KL are
            computed (see :class:`~meta_policy_search.optimizers.ConjugateGradientOptimizer`):

            * ``'gauss_newton'`` (default): :math:`J^\top F J v`, with :math:`J` the Jacobian of
              the adapted policy's ``(mean, log_std)`` on the post-update batch w.r.t.
              :math:`\theta` through the inner steps and :math:`F` the Hessian of the mean KL
              w.r.t. those outputs (the Gaussian's Fisher, diagonal: :math:`1/\sigma^2` for the
              mean, 2 for ``log_std``, times each step's averaging weight). The product is
              one Jacobian-vector and one vector-Jacobian product through the recorded inner
              step, with no third derivatives. Conjugate gradient runs at the old parameters,
              where the KL is 0 and so is its gradient w.r.t. the outputs: there the KL's
              Hessian *is* :math:`J^\top F J`, so the step is the exact one (tested against
              ``'exact'`` in float64), and faster (``benchmarks/results/algo_steps_metastep.md``).
              The KL must be 0 at the current
              parameters, i.e. the post-update batch sampled by the current adapted policy,
              as the Trainer does; otherwise the product is the Gauss-Newton approximation.
            * ``'exact'``: double backprop through the KL's gradient (third derivatives through
              the inner step).
            * ``'forward_over_reverse'``, ``'finite_difference'``,
              ``'finite_difference_original'`` (the original ProMP code's product): see the
              optimizer.

    Raises:
        ValueError: naming every invalid setting.
    """

    def __init__(
        self,
        policy: MetaGaussianMLPPolicy,
        inner_lr: float = INNER_STEP.inner_lr,
        num_inner_grad_steps: int = INNER_STEP.num_inner_grad_steps,
        step_size: float = DEFAULTS.step_size,
        inner_type: str = DEFAULTS.inner_type,
        exploration: bool = DEFAULTS.exploration,
        trainable_inner_step_size: bool = INNER_STEP.trainable_inner_step_size,
        first_order: bool = INNER_STEP.first_order,
        cg_iters: int = 10,
        hvp_approach: str = DEFAULTS.hvp_approach,
        jit_compile: bool = DEFAULTS.jit_compile,
        exploration_type: str = DEFAULTS.exploration_type,
    ) -> None:
        self.settings = TRPOMAMLSettings(
            step_size=step_size, inner_type=inner_type, exploration=exploration,
            hvp_approach=hvp_approach, jit_compile=jit_compile, exploration_type=exploration_type,
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
        self.step_size = float(step_size)
        self.optimizer = ConjugateGradientOptimizer(
            cg_iters=cg_iters, hvp_approach=hvp_approach, jit_compile=self.jit_compile
        )
        self.optimizer.build(
            self.meta_variables,
            self.loss_and_post_update_dist_info,
            Constraint(value=post_update_kl, max_value=self.step_size),
        )

    def loss_and_post_update_dist_info(
        self, batches: Sequence[TensorBatch]
    ) -> tuple[tf.Tensor, DistInfo]:
        """The outer loss and the adapted policy on the post-update batch, from one forward pass:
        the conjugate gradient optimizer's objective (the KL constraint reads the second).

        Args:
            batches: the ``K + 1`` batches, the last one post-update.

        Returns:
            ``(loss, {'mean', 'log_std'} [T, M, A])``.
        """
        chain = self.forward(batches)
        loss, _ = self.objective(chain, batches)
        return loss, chain.post_dist_info


def post_update_kl(post_dist_info: DistInfo, batches: Sequence[TensorBatch]) -> tf.Tensor:
    r"""TRPO-MAML's constraint: mean :math:`D_{\mathrm{KL}}(\pi_{\text{old}} \| \pi_{\theta_K})`
    over the real post-update steps of all tasks, from the adapted policy's ``post_dist_info``
    ``{'mean', 'log_std'}`` ``[T, M, A]`` on ``batches[-1]``."""
    return mean_kl(post_dist_info, batches[-1])
