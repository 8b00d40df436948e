"""Policies: the TensorFlow meta-policy with one parameter set per task, and its numpy twin.

:class:`~meta_policy_search.policies.meta_gaussian_mlp_policy.MetaGaussianMLPPolicy` holds the
shared parameters and the per-task adapted ones the inner steps set; the sampler acts with
:class:`~meta_policy_search.policies.numpy_policy.NumpyGaussianMLP`, a copy of its weights.
TensorFlow is imported lazily so that sampler workers can use
:mod:`meta_policy_search.policies.numpy_policy` without loading it.
"""

from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.utils.lazy import lazy_getattr

_LAZY = {
    "DiagonalGaussian": "meta_policy_search.policies.distributions",
    "GaussianMLPPolicy": "meta_policy_search.policies.gaussian_mlp_policy",
    "MetaGaussianMLPPolicy": "meta_policy_search.policies.meta_gaussian_mlp_policy",
    "gaussian_mlp_forward": "meta_policy_search.policies.networks",
}

__all__ = ["NumpyGaussianMLP", *_LAZY]


__getattr__ = lazy_getattr(__name__, _LAZY)
