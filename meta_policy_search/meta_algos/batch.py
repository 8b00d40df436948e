"""TensorFlow view of a :class:`~meta_policy_search.types.SampleBatch` with a fixed signature."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import tensorflow as tf

from meta_policy_search.types import SampleBatch


class TensorBatch(NamedTuple):
    """One inner step's samples as tensors; the input of every meta-objective graph.

    Observations, actions and the sampling distribution hold each task's real steps only,
    packed in order into ``M`` rows (rollout-major, then time; ``M`` is the largest real-step
    count of a task rounded up to a multiple of ``H``, at most ``R * H``), so that per-task
    batched matmuls run the policy on real steps: where episodes terminate early (Hopper,
    Walker, Humanoid) the padded ``[T, R, H]`` layout holds several times more rows than real
    steps. Per-step scalars keep the ``[T, R, H]`` layout that the DiCE objective needs;
    :meth:`per_step` maps one to the other.

    Attributes:
        observations: ``[T, M, obs_dim]``; rows past a task's real steps are zeros.
        actions: ``[T, M, act_dim]``.
        old_mean: ``[T, M, act_dim]`` mean of the sampling distribution.
        old_log_std: ``[T, M, act_dim]`` log-std of the sampling distribution.
        row_target: ``[T, M, 1]`` int32: where :meth:`per_step` writes each packed row's value
            in its own task's flattened ``[R * H]`` steps, or ``R * H`` (a slot dropped
            afterwards) for a row past the task's real steps. Relative to the task, so that a
            subset of tasks gathered from every field (an optimizer's minibatch) is a valid
            batch. ``None`` for an unpacked batch (``M = R * H``, rows in the ``[R, H]`` order).
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
    row_target: tf.Tensor | None
    mask: tf.Tensor
    advantages: tf.Tensor
    rewards: tf.Tensor
    adjusted_rewards: tf.Tensor

    @property
    def old_dist_info(self) -> dict[str, tf.Tensor]:
        """The sampling distribution as a ``dist_info`` dict."""
        return {"mean": self.old_mean, "log_std": self.old_log_std}

    def per_step(self, values: tf.Tensor) -> tf.Tensor:
        """Scatter ``[T, M]`` per-row values into the ``[T, R, H]`` layout, 0 on padding.

        A scatter, not a gather from the packed values: XLA differentiates ``scatter_nd`` twice
        (TRPO's Gauss-Newton product), where a gather's second derivative failed to compile.
        """
        shape = tf.shape(self.mask)
        if self.row_target is None:
            return tf.reshape(values, shape)
        num_tasks, slots = shape[0], shape[1] * shape[2]
        # Each task owns slots + 1 consecutive entries, the last one for its padding rows.
        task_offset = tf.reshape(tf.range(num_tasks) * (slots + 1), [-1, 1, 1])
        scattered = tf.scatter_nd(
            self.row_target + task_offset, values, tf.reshape(num_tasks * (slots + 1), [1])
        )
        return tf.reshape(tf.reshape(scattered, [num_tasks, slots + 1])[:, :slots], shape)


def to_tensor_batch(
    samples: SampleBatch,
    dtype: tf.DType = tf.float32,
    require_adjusted_rewards: bool = False,
    pack: bool = True,
) -> TensorBatch:
    """Convert a processed :class:`SampleBatch` into a :class:`TensorBatch`.

    Args:
        samples: a batch returned by a sample processor.
        dtype: float dtype of the tensors (the policy's).
        require_adjusted_rewards: the caller's objectives read ``adjusted_rewards`` (DiCE);
            without it missing adjusted rewards become zeros, which only keeps the graph
            signature fixed.
        pack: pack the real steps (see :class:`TensorBatch`); ``False`` keeps the padded
            ``R * H`` rows.

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
    packed_layout = packing(samples.mask) if pack else None

    def flat(x: np.ndarray) -> tf.Tensor:
        x = np.asarray(x, np_dtype)
        x = x.reshape(x.shape[0], x.shape[1] * x.shape[2], *x.shape[3:])
        if packed_layout is None:
            return tf.constant(x)
        rows, _, real_rows = packed_layout
        packed = np.take_along_axis(x, rows.reshape(*rows.shape, *([1] * (x.ndim - 2))), axis=1)
        packed[~real_rows] = 0
        return tf.constant(packed)

    def step(x: np.ndarray | None) -> tf.Tensor:
        return tf.constant(np.zeros(samples.mask.shape, np_dtype) if x is None else np.asarray(x, np_dtype))

    return TensorBatch(
        observations=flat(samples.observations),
        actions=flat(samples.actions),
        old_mean=flat(samples.agent_infos["mean"]),
        old_log_std=flat(samples.agent_infos["log_std"]),
        row_target=None if packed_layout is None else tf.constant(packed_layout[1]),
        mask=step(samples.mask),
        advantages=step(samples.advantages),
        rewards=step(samples.rewards),
        adjusted_rewards=step(samples.adjusted_rewards),
    )


def packing(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How :func:`to_tensor_batch` packs each task's real steps into ``M`` rows.

    Args:
        mask: ``[T, R, H]``, nonzero on real steps.

    Returns:
        ``(rows, row_target, real_rows)``: ``rows [T, M]`` the flat ``R * H`` position that each
        packed row takes its data from (real steps first, in order); ``row_target [T, M, 1]``
        int32, where :meth:`TensorBatch.per_step` writes each row within its task (that
        position, or ``R * H`` for rows past the real steps); ``real_rows [T, M]`` bool,
        whether a row holds a real step.
    """
    num_tasks, _, horizon = mask.shape
    real = np.asarray(mask).reshape(num_tasks, -1) != 0
    slots = real.shape[1]
    counts = real.sum(axis=1)
    most = int(counts.max(initial=0))
    num_rows = min(slots, max(horizon, -(-most // horizon) * horizon))
    rows = np.argsort(~real, axis=1, kind="stable")[:, :num_rows]
    real_rows = np.arange(num_rows) < counts[:, None]
    target = np.where(real_rows, rows, slots)
    return rows, target.astype(np.int32)[..., None], real_rows
