"""First-order meta-optimizer: Adam epochs over minibatches of tasks (ProMP, VPG-MAML)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from meta_policy_search.optimizers.adam import Adam
from meta_policy_search.optimizers.utils import check_variables, leading_dim, to_tensor_nest

Inputs = Any
"""A nest (tuple, dict, NamedTuple) of tensors with a leading task axis."""

_log = logging.getLogger(__name__)


class MAMLFirstOrderOptimizer:
    """Minimize ``loss_fn`` with Adam over ``max_epochs`` epochs of task minibatches.

    Pseudocode of :meth:`optimize`::

        for epoch in range(max_epochs):
            tasks = permutation(T)                                # seeded
            for minibatch in array_split(tasks, num_minibatches):
                loss = loss_fn(inputs[minibatch]); Adam step on grad loss
            if tolerance is set and |epoch loss change| < tolerance: stop

    With one minibatch and no ``tolerance`` (ProMP's and VPG-MAML's configuration) all
    ``max_epochs`` Adam steps, and the optional ``stats_fn`` after them, run as one
    ``tf.function`` with the loop inside the graph: one call and one host synchronisation per
    :meth:`optimize` (issue 7). Otherwise each Adam step (gather, loss, gradient, update) is one
    ``tf.function`` traced once per minibatch shape. ``loss_fn`` may read other ``tf.Variable``
    objects (e.g. ProMP's KL coefficients): new values are used on the next call without
    retracing.

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

    def build(
        self,
        variables: Sequence[tf.Variable],
        loss_fn: Callable[[Inputs], tf.Tensor],
        constraint_fn: Callable[[Inputs], tf.Tensor] | None = None,
        max_constraint_value: float | None = None,
        stats_fn: Callable[[Inputs], dict[str, tf.Tensor]] | None = None,
    ) -> None:
        """Create the Adam slots and the ``tf.function`` step.

        Args:
            variables: the parameters to optimize (one floating dtype).
            loss_fn: ``inputs -> scalar`` loss, a pure function of the current variable values.
            constraint_fn: unused (accepted for a common optimizer interface); must be ``None``.
            max_constraint_value: unused; must be ``None``.
            stats_fn: optional ``inputs -> {name: tensor}`` evaluated on the full batch after
                the last step (e.g. ProMP's ``LossAfter`` and inner KLs); its values are added
                to :meth:`optimize`'s result as numpy arrays.

        Raises:
            ValueError: if a constraint is given or ``variables`` are invalid.
        """
        if constraint_fn is not None or max_constraint_value is not None:
            raise ValueError(
                "MAMLFirstOrderOptimizer is unconstrained; put penalties into loss_fn instead of "
                "passing constraint_fn / max_constraint_value"
            )
        self._variables = check_variables(variables)
        self._loss_fn = loss_fn
        self._stats_fn = stats_fn
        self._adam.build(self._variables)
        compile_options = dict(reduce_retracing=True, jit_compile=self.jit_compile)
        self._step_tf = tf.function(self._step, **compile_options)
        self._epochs_tf = tf.function(self._epochs, **compile_options)
        self._stats_tf = tf.function(self._stats, **compile_options)
        self._loss_tf = tf.function(lambda inputs: loss_fn(inputs), **compile_options)
        self._built = True

    @property
    def adam(self) -> Adam:
        """The underlying :class:`Adam` (its ``learning_rate`` variable may be reassigned)."""
        return self._adam

    def _full_batch_step(self, batch: Inputs) -> tf.Tensor:
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(self._variables)
            loss = self._loss_fn(batch)
        grads = tape.gradient(loss, self._variables)
        self._adam.apply_gradients(zip(grads, self._variables))
        return loss

    def _step(self, inputs: Inputs, indices: tf.Tensor) -> tf.Tensor:
        batch = tf.nest.map_structure(
            lambda x: x if x is None else tf.gather(x, indices, axis=0), inputs
        )
        return self._full_batch_step(batch)

    def _stats(self, inputs: Inputs) -> dict[str, tf.Tensor]:
        return {} if self._stats_fn is None else dict(self._stats_fn(inputs))

    def _epochs(self, inputs: Inputs) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        """``max_epochs`` full-batch steps in a graph loop; their losses and ``stats_fn``."""
        dtype = self._variables[0].dtype
        losses = tf.TensorArray(dtype, size=self.max_epochs)
        for epoch in tf.range(self.max_epochs):
            losses = losses.write(epoch, tf.cast(self._full_batch_step(inputs), dtype))
        return losses.stack(), self._stats(inputs)

    def _check_built(self) -> None:
        if not self._built:
            raise ValueError("call build(variables, loss_fn) before using the optimizer")

    def loss(self, inputs: Inputs) -> float:
        """Full-batch loss at the current parameters.

        Args:
            inputs: nest of ``[T, ...]`` tensors passed to ``loss_fn``.

        Returns:
            The scalar loss.
        """
        self._check_built()
        return float(self._loss_tf(to_tensor_nest(inputs)))

    def optimize(self, inputs: Inputs, *, loss_after: bool = True) -> dict[str, float | np.ndarray]:
        """Run ``max_epochs`` epochs of Adam steps, updating the variables in place.

        Args:
            inputs: nest of ``[T, ...]`` tensors; minibatches split the leading task axis.
            loss_after: also evaluate the full-batch loss after optimizing (one extra forward
                pass); if ``False``, ``LossAfter`` is left out of the result.

        Returns:
            ``LossBefore`` (full-batch loss before the first step) and ``LossAfter`` (floats),
            plus the values of ``stats_fn`` (numpy arrays).

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
            losses, extra = self._epochs_tf(inputs)
            losses = losses.numpy()
            if self.verbose:
                for epoch, loss in enumerate(losses):
                    _log.info("epoch %d: mean minibatch loss %.6g", epoch, loss)
            stats: dict[str, float | np.ndarray] = {"LossBefore": float(losses[0])}
            if loss_after:
                stats["LossAfter"] = float(self._loss_tf(inputs))
            stats.update({key: value.numpy() for key, value in extra.items()})
            return stats
        if self.num_minibatches == 1:
            loss_before = None  # the first full-batch step reports it for free
        else:
            loss_before = float(self._loss_tf(inputs))
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
        stats = {"LossBefore": loss_before}
        if loss_after:
            stats["LossAfter"] = float(self._loss_tf(inputs))
        stats.update({key: value.numpy() for key, value in self._stats_tf(inputs).items()})
        return stats

    def checkpoint_state(self) -> dict[str, tf.Module | tf.Variable]:
        """Trackables for ``tf.train.Checkpoint``: the Adam slots, learning rate and step count.

        Returns:
            ``{'adam': Adam}``.
        """
        return {"adam": self._adam}
