"""Adam on raw ``tf.Variable`` lists, with checkpointable slots (no Keras).

Why not ``tf.keras.optimizers.Adam``: the project uses no Keras, and Keras 3 optimizers are not
guaranteed to track slots of raw ``tf.Variable`` objects in a ``tf.train.Checkpoint``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import tensorflow as tf

from meta_policy_search.optimizers.utils import check_variables


class Adam(tf.Module):
    """Adam (Kingma & Ba, 2015, Algorithm 1).

    For each variable ``theta`` with gradient ``g`` at step ``t = 1, 2, ...``::

        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g ** 2
        theta -= learning_rate * (m / (1 - beta1 ** t)) / (sqrt(v / (1 - beta2 ** t)) + epsilon)

    ``epsilon`` is added to the bias-corrected ``sqrt(v_hat)`` as in the paper (the original
    code's ``tf.train.AdamOptimizer`` added it to the uncorrected ``sqrt(v)``; the two differ
    only while ``sqrt(v)`` is comparable to ``epsilon``).

    Slots (``m``, ``v``) and the step counter are ``tf.Variable`` attributes created by
    :meth:`build`, so ``tf.train.Checkpoint(optimizer=adam)`` saves and restores them. The
    learning rate is a non-trainable variable: assigning a new value takes effect inside
    already traced ``tf.function`` steps.

    Args:
        learning_rate: step size, > 0.
        beta1: decay of the first moment, in [0, 1).
        beta2: decay of the second moment, in [0, 1).
        epsilon: denominator offset, > 0.
        name: module name.

    Raises:
        ValueError: on out-of-range hyperparameters.
    """

    def __init__(
        self,
        learning_rate: float = 1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        name: str = "adam",
    ) -> None:
        super().__init__(name=name)
        if not learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {learning_rate}")
        for key, value in (("beta1", beta1), ("beta2", beta2)):
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{key} must be in [0, 1), got {value}")
        if not epsilon > 0:
            raise ValueError(f"epsilon must be > 0, got {epsilon}")
        self._initial_learning_rate = float(learning_rate)
        self.beta1 = float(beta1)
        self.beta2 = float(beta2)
        self.epsilon = float(epsilon)
        self.learning_rate: tf.Variable | None = None
        self.iterations: tf.Variable | None = None
        self._m: list[tf.Variable] = []
        self._v: list[tf.Variable] = []
        # var.ref() -> slot index. Kept in a plain tuple of pairs (not a dict) so checkpoint
        # tracking ignores it: the optimized variables belong to the policy's checkpoint.
        self._slot_of: tuple = ()

    def build(self, variables: Sequence[tf.Variable]) -> None:
        """Create the slots for ``variables`` (call once, before :meth:`apply_gradients`).

        Args:
            variables: the variables this optimizer will update; one floating dtype.

        Raises:
            ValueError: if called twice or on invalid ``variables``.
        """
        if self.iterations is not None:
            raise ValueError(f"Adam {self.name!r} is already built; build it only once")
        variables = check_variables(variables)
        dtype = variables[0].dtype
        with self.name_scope:
            self.learning_rate = tf.Variable(
                self._initial_learning_rate, dtype=dtype, trainable=False, name="learning_rate"
            )
            self.iterations = tf.Variable(0, dtype=tf.int64, trainable=False, name="iterations")
            self._m = [
                tf.Variable(tf.zeros_like(v), trainable=False, name=f"m_{i}")
                for i, v in enumerate(variables)
            ]
            self._v = [
                tf.Variable(tf.zeros_like(v), trainable=False, name=f"v_{i}")
                for i, v in enumerate(variables)
            ]
        self._slot_of = tuple((v.ref(), i) for i, v in enumerate(variables))

    def _slot_index(self, var: tf.Variable) -> int:
        for ref, i in self._slot_of:
            if ref == var.ref():
                return i
        raise ValueError(f"variable {var.name} was not passed to Adam.build(); no slots for it")

    def apply_gradients(
        self, grads_and_vars: Iterable[tuple[tf.Tensor | None, tf.Variable]]
    ) -> tf.Tensor:
        """Apply one Adam step; ``None`` gradients leave their variable (and slots) unchanged.

        Works eagerly and inside ``tf.function``. The step counter advances once per call.

        Args:
            grads_and_vars: pairs ``(gradient, variable)``, the gradient shaped like the variable.

        Returns:
            The op incrementing the step counter (ignorable in eager mode).

        Raises:
            ValueError: if not built, or a variable was not passed to :meth:`build`.
        """
        if self.iterations is None or self.learning_rate is None:
            raise ValueError("call Adam.build(variables) before apply_gradients")
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        step = self.iterations.assign_add(1)
        dtype = self.learning_rate.dtype
        t = tf.cast(step, dtype)
        bias1 = 1.0 - tf.pow(tf.constant(self.beta1, dtype), t)
        bias2 = 1.0 - tf.pow(tf.constant(self.beta2, dtype), t)
        for grad, var in pairs:
            i = self._slot_index(var)
            grad = tf.convert_to_tensor(grad, dtype=dtype)
            m = self._m[i].assign(self.beta1 * self._m[i] + (1.0 - self.beta1) * grad)
            v = self._v[i].assign(self.beta2 * self._v[i] + (1.0 - self.beta2) * tf.square(grad))
            var.assign_sub(self.learning_rate * (m / bias1) / (tf.sqrt(v / bias2) + self.epsilon))
        return step
