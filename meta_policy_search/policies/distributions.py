"""Diagonal Gaussian distribution math (TensorFlow), as pure functions of ``mean``/``log_std``.

A distribution is described by a dict ``{'mean': [..., A], 'log_std': [..., A]}`` (the
original's ``dist_info``). All reductions are over the last (action) axis.
"""

from __future__ import annotations

import math

import tensorflow as tf

from meta_policy_search.utils.validation import check_positive_int

DistInfo = dict[str, tf.Tensor]

_LOG_2PI = math.log(2.0 * math.pi)


class DiagonalGaussian:
    """A Gaussian with diagonal covariance over ``dim`` action dimensions.

    Args:
        dim: the action dimension ``A``.
    """

    def __init__(self, dim: int) -> None:
        self.dim = check_positive_int("dim", dim)

    @staticmethod
    def log_likelihood(x: tf.Tensor, dist_info: DistInfo) -> tf.Tensor:
        """``log N(x; mean, diag(exp(log_std)^2))`` summed over the action axis.

        Args:
            x: ``[..., A]`` actions.
            dist_info: ``mean`` and ``log_std``, both broadcastable to ``[..., A]``.

        Returns:
            ``[...]`` log-densities.
        """
        mean, log_std = dist_info["mean"], dist_info["log_std"]
        z = (x - mean) * tf.exp(-log_std)
        return -tf.reduce_sum(log_std + 0.5 * tf.square(z) + 0.5 * _LOG_2PI, axis=-1)

    @staticmethod
    def likelihood_ratio(x: tf.Tensor, old_dist_info: DistInfo, new_dist_info: DistInfo) -> tf.Tensor:
        """``pi_new(x) / pi_old(x)``, computed in log space. Returns ``[...]``."""
        log_new = DiagonalGaussian.log_likelihood(x, new_dist_info)
        log_old = DiagonalGaussian.log_likelihood(x, old_dist_info)
        return tf.exp(log_new - log_old)

    @staticmethod
    def kl(old_dist_info: DistInfo, new_dist_info: DistInfo) -> tf.Tensor:
        r"""``KL(old || new)`` summed over the action axis:

        .. math::

           D_{\mathrm{KL}} = \sum_i \log\frac{\sigma_{\text{new},i}}{\sigma_{\text{old},i}}
             + \frac{\sigma_{\text{old},i}^2 + (\mu_{\text{old},i} - \mu_{\text{new},i})^2}
                    {2 \sigma_{\text{new},i}^2} - \frac{1}{2}

        Returns:
            ``[...]`` KL divergences.
        """
        old_mean, old_log_std = old_dist_info["mean"], old_dist_info["log_std"]
        new_mean, new_log_std = new_dist_info["mean"], new_dist_info["log_std"]
        numerator = tf.square(old_mean - new_mean) + tf.exp(2.0 * old_log_std)
        denominator = 2.0 * tf.exp(2.0 * new_log_std)
        return tf.reduce_sum(new_log_std - old_log_std + numerator / denominator - 0.5, axis=-1)

    @staticmethod
    def entropy(dist_info: DistInfo) -> tf.Tensor:
        r"""Differential entropy :math:`\sum_i \big(\log \sigma_i + (1 + \log 2\pi) / 2\big)`.

        Returns ``[...]``.
        """
        return tf.reduce_sum(dist_info["log_std"] + 0.5 * (1.0 + _LOG_2PI), axis=-1)
