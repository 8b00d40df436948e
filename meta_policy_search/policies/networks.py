"""The Gaussian MLP as a pure TensorFlow function of (params, observations)."""

from __future__ import annotations

from collections.abc import Mapping

import tensorflow as tf

TF_NONLINEARITIES = {
    "tanh": tf.tanh,
    "relu": tf.nn.relu,
    "identity": tf.identity,
}


def gaussian_mlp_forward(
    params: Mapping[str, tf.Tensor],
    observations: tf.Tensor,
    hidden_nonlinearity: str = "tanh",
    min_log_std: float | None = None,
) -> dict[str, tf.Tensor]:
    """Action distribution of a Gaussian MLP policy.

    Works for one shared parameter set or for per-task parameter sets stacked on a leading task
    axis (then the layers run as batched matmuls, one per layer for all tasks).

    Args:
        params: ``W0, b0, ..., W{L}, b{L}, log_std``. Shared: ``W{i}`` ``[in, out]``, ``b{i}``
            ``[out]``, ``log_std`` ``[A]``. Per task: the same with a leading ``[T]`` axis.
        observations: ``[..., obs_dim]`` for shared parameters; ``[T, N, obs_dim]`` for per-task
            parameters.
        hidden_nonlinearity: ``'tanh'``, ``'relu'`` or ``'identity'``.
        min_log_std: lower bound on ``log_std`` (``None``: no bound).

    Returns:
        ``{'mean': [..., A], 'log_std': [..., A]}``.
    """
    activation = TF_NONLINEARITIES[hidden_nonlinearity]
    num_layers = sum(1 for name in params if name.startswith("W"))
    per_task = params["W0"].shape.rank == 3
    hidden = observations
    for i in range(num_layers):
        kernel, bias = params[f"W{i}"], params[f"b{i}"]
        if per_task:
            hidden = tf.matmul(hidden, kernel) + bias[:, None, :]
        else:
            hidden = tf.tensordot(hidden, kernel, axes=1) + bias
        if i < num_layers - 1:
            hidden = activation(hidden)
    log_std = params["log_std"]
    if min_log_std is not None:
        log_std = tf.maximum(log_std, tf.cast(min_log_std, log_std.dtype))
    if per_task:
        log_std = log_std[:, None, :]
    return {"mean": hidden, "log_std": tf.broadcast_to(log_std, tf.shape(hidden))}
