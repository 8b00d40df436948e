"""First-order meta-optimizer: Adam epochs over minibatches of tasks (ProMP, VPG-MAML, PPO-MAML)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from meta_policy_search.optimizers.adam import Adam
from meta_policy_search.optimizers.utils import check_variables, leading_dim, to_tensor_nest

Inputs = Any
"""A nest (tuple, dict, NamedTuple) of tensors with a leading task axis."""

Objective = Callable[[Inputs], tuple[tf.Tensor, Mapping[str, tf.Tensor]]]
"""``inputs -> (scalar loss, {name: statistic})``, a pure function of the variables' values."""

_log = logging.getLogger(__name__)


class MinibatchAdamOptimizer:
    """Minimize an objective with Adam over ``max_epochs`` epochs of task minibatches.

    Pseudocode of :meth:`optimize`::

        for epoch in range(max_epochs):
            tasks = permutation(T)                                # seeded
            for minibatch in array_split(tasks, num_minibatches):
                loss, _ = objective(inputs[minibatch]); Adam step on grad loss
            if tolerance is set and |epoch loss change| < tolerance: stop
        loss_after, stats = objective(inputs)

    With one minibatch and no ``tolerance`` (ProMP's and VPG-MAML's configuration) all
    ``max_epochs`` Adam steps and the evaluation after them run as one ``tf.function`` with the
    loop inside the graph: one call and one host synchronisation per :meth:`optimize`.
    Otherwise each Adam step (gather, loss, gradient, update) is one ``tf.function`` traced once
    per minibatch shape. The objective may read other ``tf.Variable`` objects (e.g. ProMP's KL
    coefficients): new values are used on the next call without retracing.

    The original code's name for it, ``MAMLFirstOrderOptimizer``, is kept as an alias; it is
    first-order in the optimizer's sense (gradients only), unrelated to first-order MAML.

    Args:
        learning_rate: Adam step size.
        max_epochs: passes over all tasks per :meth:`optimize` call, >= 1.
        tolerance: if not ``None``, stop early once the mean minibatch loss of an epoch changes by
            less than this from the previous epoch.
        num_minibatches: task minibatches per epoch, >= 1 (at most the number of tasks).
        verbose: log each epoch's mean loss at INFO level.
        seed: seed of the minibatch shuffling.
        beta1: Adam first-moment decay.
        beta2: Adam second-moment decay.
        epsilon: Adam denominator offset.
        jit_compile: compile the Adam step and the loss with XLA
            (``tf.function(jit_compile=True)``).

    Raises:
        ValueError: on out-of-range arguments.
    """

    def __init__(
        self,
        learning_rate: float = 1e-3,
        max_epochs: int = 1,
        tolerance: float | None = None,
        num_minibatches: int = 1,
        verbose: bool = False,
        seed: int = 0,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        jit_compile: bool = False,
    ) -> None:
        if int(max_epochs) < 1:
            raise ValueError(f"max_epochs must be >= 1, got {max_epochs}")
        if int(num_minibatches) < 1:
            raise ValueError(f"num_minibatches must be >= 1, got {num_minibatches}")
        if tolerance is not None and not tolerance >= 0:
            raise ValueError(f"tolerance must be >= 0 or None, got {tolerance}")
        self.max_epochs = int(max_epochs)
        self.num_minibatches = int(num_minibatches)
        self.tolerance = tolerance
        self.verbose = bool(verbose)
        self.jit_compile = bool(jit_compile)
        self._rng = np.random.default_rng(seed)
        self._adam = Adam(learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon)
        self._built = False

    def build(self, variables: Sequence[tf.Variable], objective: Objective) -> None:
        """Create the Adam slots and the ``tf.function`` steps.

        Args:
            variables: the parameters to optimize (one floating dtype).
            objective: ``inputs -> (scalar loss, {name: statistic})``, a pure function of the
                current variable values; penalties belong in the loss. The statistics at the
                parameters after the last step are part of :meth:`optimize`'s result.

        Raises:
            ValueError: if ``variables`` are invalid.
        """
        self._variables = check_variables(variables)
        self._objective = objective
        self._adam.build(self._variables)
        compile_options = dict(reduce_retracing=True, jit_compile=self.jit_compile)
        self._step_tf = tf.function(self._step, **compile_options)
        self._epochs_tf = tf.function(self._epochs, **compile_options)
        self._evaluate_tf = tf.function(self._evaluate, **compile_options)
        self._built = True

    @property
    def adam(self) -> Adam:
        """The underlying :class:`Adam` (its ``learning_rate`` variable may be reassigned)."""
        return self._adam

    def _full_batch_step(self, batch: Inputs) -> tf.Tensor:
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(self._variables)
            loss, _ = self._objective(batch)
        grads = tape.gradient(loss, self._variables)
        self._adam.apply_gradients(zip(grads, self._variables))
        return loss

    def _step(self, inputs: Inputs, indices: tf.Tensor) -> tf.Tensor:
        batch = tf.nest.map_structure(
            lambda x: x if x is None else tf.gather(x, indices, axis=0), inputs
        )
        return self._full_batch_step(batch)

    def _evaluate(self, inputs: Inputs) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        loss, stats = self._objective(inputs)
        return loss, dict(stats)

    def _epochs(self, inputs: Inputs) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        """``max_epochs`` full-batch steps in a graph loop; their losses, then the objective."""
        dtype = self._variables[0].dtype
        losses = tf.TensorArray(dtype, size=self.max_epochs)
        for epoch in tf.range(self.max_epochs):
            losses = losses.write(epoch, tf.cast(self._full_batch_step(inputs), dtype))
        return (losses.stack(), *self._evaluate(inputs))

    def _check_built(self) -> None:
        if not self._built:
            raise ValueError("call build(variables, objective) before using the optimizer")

    def loss(self, inputs: Inputs) -> float:
        """Full-batch loss at the current parameters.

        Args:
            inputs: nest of ``[T, ...]`` tensors passed to the objective.

        Returns:
            The scalar loss.
        """
        self._check_built()
        return float(self._evaluate_tf(to_tensor_nest(inputs))[0])

    def optimize(self, inputs: Inputs) -> dict[str, float | np.ndarray]:
        """Run ``max_epochs`` epochs of Adam steps, updating the variables in place.

        Args:
            inputs: nest of ``[T, ...]`` tensors; minibatches split the leading task axis.

        Returns:
            ``LossBefore`` (full-batch loss before the first step) and ``LossAfter`` (after the
            last), floats, plus the objective's statistics after the last step (numpy arrays).

        Raises:
            ValueError: if not built, the inputs lack a common leading axis or have fewer tasks
                than ``num_minibatches``.
        """
        self._check_built()
        inputs = to_tensor_nest(inputs)
        num_tasks = leading_dim(inputs)
        if num_tasks < self.num_minibatches:
            raise ValueError(
                f"num_minibatches={self.num_minibatches} exceeds the {num_tasks} tasks in inputs"
            )
        if self.num_minibatches == 1 and self.tolerance is None:
            losses, loss_after, extra = self._epochs_tf(inputs)
            losses = losses.numpy()
            if self.verbose:
                for epoch, loss in enumerate(losses):
                    _log.info("epoch %d: mean minibatch loss %.6g", epoch, loss)
            return _statistics(float(losses[0]), loss_after, extra)
        if self.num_minibatches == 1:
            loss_before = None  # the first full-batch step reports it for free
        else:
            loss_before = self.loss(inputs)
        previous_epoch_loss = None
        for epoch in range(self.max_epochs):
            if self.num_minibatches == 1:
                splits = [np.arange(num_tasks)]
            else:
                splits = np.array_split(self._rng.permutation(num_tasks), self.num_minibatches)
            losses = [float(self._step_tf(inputs, tf.constant(idx, tf.int32))) for idx in splits]
            if loss_before is None:
                loss_before = losses[0]
            epoch_loss = float(np.mean(losses))
            if self.verbose:
                _log.info("epoch %d: mean minibatch loss %.6g", epoch, epoch_loss)
            if (
                self.tolerance is not None
                and previous_epoch_loss is not None
                and abs(previous_epoch_loss - epoch_loss) < self.tolerance
            ):
                break
            previous_epoch_loss = epoch_loss
        assert loss_before is not None  # max_epochs >= 1, so the first step has set it
        return _statistics(loss_before, *self._evaluate_tf(inputs))

    def checkpoint_state(self) -> dict[str, tf.Module | tf.Variable]:
        """Trackables for ``tf.train.Checkpoint``: the Adam slots, learning rate and step count.

        Returns:
            ``{'adam': Adam}``.
        """
        return {"adam": self._adam}


MAMLFirstOrderOptimizer = MinibatchAdamOptimizer
"""The original code's name of :class:`MinibatchAdamOptimizer`."""


def _statistics(
    loss_before: float, loss_after: tf.Tensor, extra: Mapping[str, tf.Tensor]
) -> dict[str, float | np.ndarray]:
    stats: dict[str, float | np.ndarray] = {
        "LossBefore": loss_before, "LossAfter": float(loss_after)
    }
    stats.update({key: value.numpy() for key, value in extra.items()})
    return stats
