"""Optimizers for the meta-objective: TRPO's conjugate gradient step and first-order Adam.

:class:`~meta_policy_search.optimizers.first_order_optimizer.MAMLFirstOrderOptimizer` runs Adam
epochs on one batch (ProMP, PPO-MAML, the VPG and DiCE algorithms);
:class:`~meta_policy_search.optimizers.conjugate_gradient_optimizer.ConjugateGradientOptimizer`
takes TRPO's step under a KL constraint (TRPO-MAML, E-MAML-TRPO).
"""

from meta_policy_search.optimizers.adam import Adam
from meta_policy_search.optimizers.conjugate_gradient_optimizer import (
    ConjugateGradientOptimizer,
    Constraint,
    conjugate_gradient,
)
from meta_policy_search.optimizers.first_order_optimizer import (
    MAMLFirstOrderOptimizer,
    MinibatchAdamOptimizer,
)

__all__ = [
    "Adam",
    "ConjugateGradientOptimizer",
    "Constraint",
    "MAMLFirstOrderOptimizer",
    "MinibatchAdamOptimizer",
    "conjugate_gradient",
]
