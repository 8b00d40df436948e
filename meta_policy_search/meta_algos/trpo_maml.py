"""TRPO-MAML and E-MAML-TRPO (Finn et al. 2017; Al-Shedivat et al. 2018; Stadie et al. 2018)."""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from meta_policy_search.meta_algos.base import MAMLAlgo, mean_kl_of_dist_info
from meta_policy_search.meta_algos.batch import TensorBatch
from meta_policy_search.optimizers import ConjugateGradientOptimizer
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

    Arguments not listed below are those of :class:`MAMLAlgo`.

    Args:
        step_size: the KL trust region.
        inner_type: ``'likelihood_ratio'`` (LVC), ``'log_likelihood'`` (MAML) or ``'dice'``.
        exploration: add E-MAML's pre-update sampling term (E-MAML-TRPO).
        exploration_type: ``'original'`` (the original ProMP code's term) or ``'emaml_paper'``
            (see :meth:`MAMLAlgo.exploration_loss`).
        cg_iters: conjugate-gradient iterations.
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
              ``'exact'`` to rtol 1e-6 in float64); measured 1.4-1.8x faster TRPO steps
              (``benchmarks/results/algo_steps_metastep.md``). The KL must be 0 at the current
              parameters, i.e. the post-update batch sampled by the current adapted policy,
              as the Trainer does; otherwise the product is the Gauss-Newton approximation.
            * ``'exact'``: double backprop through the KL's gradient (third derivatives through
              the inner step).
            * ``'forward_over_reverse'``, ``'finite_difference'``: see the optimizer.
        jit_compile: compile the graphs with XLA. On by default here (off for the other
            algorithms): on the paper's HalfCheetah batch it made the TRPO step 1.2-1.3x faster
            (each Hessian-vector product about 1.2x) with the same results up to float32
            rounding; see ``benchmarks/results/algo_steps.md``.
    """

    def __init__(
        self,
        policy: MetaGaussianMLPPolicy,
        inner_lr: float = 0.1,
        meta_batch_size: int = 20,
        num_inner_grad_steps: int = 1,
        step_size: float = 0.01,
        inner_type: str = "likelihood_ratio",
        exploration: bool = False,
        trainable_inner_step_size: bool = False,
        first_order: bool = False,
        cg_iters: int = 10,
        hvp_approach: str = "gauss_newton",
        jit_compile: bool = True,
        exploration_type: str = "original",
    ) -> None:
        super().__init__(
            policy, inner_lr, meta_batch_size, num_inner_grad_steps,
            trainable_inner_step_size, inner_type, first_order, jit_compile=jit_compile,
            exploration=exploration, exploration_type=exploration_type,
        )
        if not step_size > 0:
            raise ValueError(f"step_size must be > 0, got {step_size!r}")
        self.step_size = float(step_size)
        self.optimizer = ConjugateGradientOptimizer(
            cg_iters=cg_iters, hvp_approach=hvp_approach, jit_compile=self.jit_compile
        )
        self.optimizer.build(
            self.meta_variables,
            self.meta_loss,
            constraint_fn=self.post_update_kl,
            max_constraint_value=self.step_size,
            loss_and_constraint_fn=self.meta_loss_and_kl,
            constraint_outputs_fn=self.post_update_dist_info,
            constraint_of_outputs_fn=self.kl_of_post_update_dist_info,
            loss_and_outputs_fn=self.meta_loss_and_post_update_dist_info,
        )

    def meta_loss_and_kl(self, batches: Sequence[TensorBatch]) -> tuple[tf.Tensor, tf.Tensor]:
        """:meth:`meta_loss` and :meth:`post_update_kl` from one inner-step chain."""
        loss, dist_info = self.meta_loss_and_post_update_dist_info(batches)
        return loss, self.kl_of_post_update_dist_info(dist_info, batches)

    def post_update_dist_info(self, batches: Sequence[TensorBatch]) -> dict[str, tf.Tensor]:
        """The adapted policy's ``{'mean', 'log_std'}`` ``[T, N, A]`` on the post-update batch."""
        chain = self.adapted_params(batches[:-1])
        return self.policy.forward(chain[-1], batches[-1].observations)

    def meta_loss_and_post_update_dist_info(
        self, batches: Sequence[TensorBatch]
    ) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        """:meth:`meta_loss` and :meth:`post_update_dist_info` from one inner-step chain."""
        chain = self.adapted_params(batches[:-1])
        loss = self.surrogate_meta_loss(batches, exploration=self.exploration, chain=chain)
        return loss, self.policy.forward(chain[-1], batches[-1].observations)

    @staticmethod
    def kl_of_post_update_dist_info(
        dist_info: dict[str, tf.Tensor], batches: Sequence[TensorBatch]
    ) -> tf.Tensor:
        """:meth:`post_update_kl` as a function of :meth:`post_update_dist_info`'s output."""
        return mean_kl_of_dist_info(dist_info, batches[-1])
