"""Valid values of the meta-algorithms' string settings, declared once.

This module imports nothing (no TensorFlow), so that the command-line validation of
:mod:`meta_policy_search.experiment.configs` and the algorithms of
:mod:`meta_policy_search.meta_algos` read the same lists.
"""

INNER_TYPES = ("likelihood_ratio", "log_likelihood", "dice")
"""Inner objectives: LVC (``likelihood_ratio``), MAML (``log_likelihood``) and DiCE (``dice``)."""

EXPLORATION_TYPES = ("original", "emaml_paper")
"""Forms of E-MAML's exploration term: the original ProMP code's and the E-MAML paper's
trajectory form."""

HVP_APPROACHES = (
    "exact", "gauss_newton", "forward_over_reverse", "finite_difference",
    "finite_difference_original",
)
"""How the TRPO step's conjugate gradient computes Hessian-vector products of the KL (see
:class:`~meta_policy_search.optimizers.ConjugateGradientOptimizer`)."""
