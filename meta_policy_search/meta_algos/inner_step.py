"""The inner adaptation step, written once for every algorithm."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import tensorflow as tf

Params = Mapping[str, tf.Tensor]


def adapt(
    params: Params,
    step_sizes: Mapping[str, tf.Tensor],
    inner_loss_fn: Callable[[Params], tuple[tf.Tensor, Any]],
    first_order: bool = False,
) -> tuple[dict[str, tf.Tensor], Any]:
    r"""One gradient step per task: :math:`\theta'_t = \theta_t - \alpha \nabla L_t(\theta_t)`.

    ``params`` hold one parameter set per task on a leading axis ``[T, ...]`` and
    ``inner_loss_fn`` returns the per-task losses ``[T]`` (and values computed on the way, as
    JAX's ``has_aux``); since task ``t``'s loss depends only
    on ``params[:, t]``, the gradient of their sum gives every task's own gradient in one
    backward pass. Called under an outer ``GradientTape``, the step stays differentiable, so
    the outer gradient includes the second-order term through ``grad L_t`` (unless
    ``first_order``).

    Args:
        params: name -> ``[T, ...]`` per-task parameters.
        step_sizes: name -> per-parameter step size ``alpha`` (shape of one task's parameter);
            only the parameters named here are adapted, the rest are passed through.
        inner_loss_fn: maps per-task params to ``(per-task losses [T], aux)``; ``aux`` (e.g.
            the policy's distribution on the batch) is returned as computed, differentiable.
        first_order: stop the gradient through ``grad L_t`` (first-order MAML approximation).

    Returns:
        ``(adapted, aux)``: the adapted per-task parameters (all names of ``params``) and the
        ``aux`` of ``inner_loss_fn`` at ``params``.
    """
    names = list(step_sizes)
    with tf.GradientTape() as tape:
        tape.watch([params[name] for name in names])
        losses, aux = inner_loss_fn(params)
        loss = tf.reduce_sum(losses)
    grads = tape.gradient(loss, [params[name] for name in names])
    adapted = dict(params)
    for name, grad in zip(names, grads):
        if grad is None:  # the loss does not depend on this parameter
            continue
        if first_order:
            grad = tf.stop_gradient(grad)
        adapted[name] = params[name] - step_sizes[name] * grad
    return adapted, aux
