"""TensorFlow view of a :class:`~meta_policy_search.types.SampleBatch` with a fixed signature."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import tensorflow as tf

from meta_policy_search.types import SampleBatch


class TensorBatch(NamedTuple):
    """One inner step's samples as tensors; the input of every meta-objective graph.

    Observations, actions and the sampling distribution are flattened over rollouts and time
    (``N = R * H``) so that per-task batched matmuls run the policy; per-step scalars keep the
    ``[T, R, H]`` layout that the DiCE objective needs.

    Attributes:
        observations: ``[T, N, obs_dim]``.
        actions: ``[T, N, act_dim]``.
        old_mean: ``[T, N, act_dim]`` mean of the sampling distribution.
        old_log_std: ``[T, N, act_dim]`` log-std of the sampling distribution.
        mask: ``[T, R, H]``.
        advantages: ``[T, R, H]``.
        rewards: ``[T, R, H]``.
        adjusted_rewards: ``[T, R, H]`` DiCE's adjusted rewards; zeros when the processor
            computed none and the algorithm does not read them (see :func:`to_tensor_batch`).
    """

    observations: tf.Tensor
    actions: tf.Tensor
    old_mean: tf.Tensor
    old_log_std: tf.Tensor
    mask: tf.Tensor
    advantages: tf.Tensor
    rewards: tf.Tensor
    adjusted_rewards: tf.Tensor

    @property
    def old_dist_info(self) -> dict[str, tf.Tensor]:
        """The sampling distribution as a ``dist_info`` dict."""
        return {"mean": self.old_mean, "log_std": self.old_log_std}

    def per_step(self, values: tf.Tensor) -> tf.Tensor:
        """Reshape ``[T, N]`` per-sample values to ``[T, R, H]``."""
        return tf.reshape(values, tf.shape(self.mask))


def to_tensor_batch(
    samples: SampleBatch, dtype: tf.DType = tf.float32, require_adjusted_rewards: bool = False
) -> TensorBatch:
    """Convert a processed :class:`SampleBatch` into a :class:`TensorBatch`.

    Args:
        samples: a batch returned by a sample processor.
        dtype: float dtype of the tensors (the policy's).
        require_adjusted_rewards: the caller's objectives read ``adjusted_rewards`` (DiCE);
            without it missing adjusted rewards become zeros, which only keeps the graph
            signature fixed.

    Raises:
        ValueError: if the batch has no advantages (it was not processed), ranks are wrong, or
            ``require_adjusted_rewards`` and the batch has none.
    """
    if samples.advantages is None:
        raise ValueError("samples have no advantages: pass them through a sample processor first")
    if require_adjusted_rewards and samples.adjusted_rewards is None:
        raise ValueError(
            "samples have no adjusted_rewards, but the DiCE objective (inner_type='dice', "
            "DICEMAML, VPG_DICEMAML) needs them: process the samples with DiceSampleProcessor "
            "instead of MetaSampleProcessor"
        )
    if samples.observations.ndim != 4 or samples.mask.ndim != 3:
        raise ValueError(
            "expected observations [T, R, H, obs_dim] and mask [T, R, H], got "
            f"{samples.observations.shape} and {samples.mask.shape}"
        )
    np_dtype = tf.as_dtype(dtype).as_numpy_dtype

    def flat(x: np.ndarray) -> tf.Tensor:
        x = np.asarray(x, np_dtype)
        return tf.constant(x.reshape(x.shape[0], x.shape[1] * x.shape[2], *x.shape[3:]))

    def step(x: np.ndarray | None) -> tf.Tensor:
        return tf.constant(np.zeros(samples.mask.shape, np_dtype) if x is None else np.asarray(x, np_dtype))

    return TensorBatch(
        observations=flat(samples.observations),
        actions=flat(samples.actions),
        old_mean=flat(samples.agent_infos["mean"]),
        old_log_std=flat(samples.agent_infos["log_std"]),
        mask=step(samples.mask),
        advantages=step(samples.advantages),
        rewards=step(samples.rewards),
        adjusted_rewards=step(samples.adjusted_rewards),
    )
