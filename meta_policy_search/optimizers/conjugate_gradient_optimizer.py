r"""TRPO's constrained step: conjugate gradient on Hessian-vector products plus a line search.

Solves, around the current parameters :math:`\theta_0`,

.. math::

   \min_\theta\ \mathrm{loss}(\theta) \quad \text{s.t.} \quad \mathrm{constraint}(\theta) \le
   \delta

with the usual local model (Schulman et al., 2015, "Trust Region Policy Optimization"):
the step direction is :math:`x = (H + \lambda I)^{-1} g` (:math:`\lambda` = ``reg_coeff``) with
:math:`g` the loss gradient and :math:`H` the constraint's Hessian, both at :math:`\theta_0`
(:math:`\delta` = ``max_constraint_value``); the step is scaled so that the quadratic model of
the constraint equals its bound, then shrunk by a backtracking line search.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import tensorflow as tf

from meta_policy_search.choices import HVP_APPROACHES
from meta_policy_search.optimizers.utils import (
    check_variables,
    flatten_tensors,
    leading_dim,
    to_tensor_nest,
    unflatten_tensors,
)

Inputs = Any
"""A nest (tuple, dict, NamedTuple) of tensors with a leading task axis."""

Outputs = Any
"""A nest of tensors: the model outputs a Gauss-Newton constraint is a function of."""

Objective = Callable[[Inputs], tuple[tf.Tensor, Outputs]]
"""``inputs -> (scalar loss, outputs)``: the loss and, from the same forward pass, the model
outputs the constraint is a function of (e.g. the adapted policy's ``{'mean', 'log_std'}``)."""


class Constraint(NamedTuple):
    r"""The trust region of a constrained step: ``value(outputs, inputs) <= max_value``.

    Attributes:
        value: ``(outputs, inputs) -> scalar``, ``outputs`` the second result of the objective
            (e.g. TRPO's mean KL of the adapted policy's ``{'mean', 'log_std'}`` from the old
            one). ``'gauss_newton'`` differentiates it twice w.r.t. ``outputs`` only, so keep it
            cheap (elementwise); the other approaches differentiate it through the objective's
            forward pass.
        max_value: the bound :math:`\delta` (TRPO's ``step_size``), > 0.
    """

    value: Callable[[Outputs, Inputs], tf.Tensor]
    max_value: float


def inner_product(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
    """The inner product of two ``[n]`` vectors, accumulated in float64 (a float64 scalar).

    A float32 ``tf.tensordot`` over a policy's ~6e4 parameters is off by about 2e-5 relative,
    and conjugate gradient amplifies such errors in its scalars: on a humanoid MAML-TRPO step the
    float32 version's direction was 7 % off the float64 one
    (``benchmarks/results/trpo_step_compare/``), where float64 sums bring it to rounding.
    """
    return tf.reduce_sum(tf.cast(a, tf.float64) * tf.cast(b, tf.float64))


def conjugate_gradient(
    hvp_fn: Callable[[tf.Tensor], tf.Tensor],
    b: tf.Tensor,
    cg_iters: int = 10,
    residual_tol: float = 1e-10,
) -> tf.Tensor:
    """Approximately solve ``A x = b`` for symmetric positive definite ``A`` given ``x -> A x``.

    Standard conjugate gradient (Hestenes & Stiefel, 1952; Nocedal & Wright, Algorithm 5.2),
    started from ``x = 0``. Stops after ``cg_iters`` products or once the squared residual norm
    ``r^T r`` drops below ``residual_tol``. The vectors keep ``b``'s dtype; the inner products and
    the scalars ``alpha`` and ``beta`` are float64 (:func:`inner_product`). Runs eagerly
    (``hvp_fn`` may then be a ``tf.function``) or inside a ``tf.function`` (built on
    ``tf.while_loop``).

    Args:
        hvp_fn: maps a ``[n]`` vector ``p`` to ``A p`` (``[n]``, same dtype).
        b: ``[n]`` right-hand side.
        cg_iters: maximum number of iterations (products with ``A``), >= 1.
        residual_tol: stop when ``r^T r < residual_tol``.

    Returns:
        ``[n]`` approximate solution ``x``, same dtype as ``b``.

    Raises:
        ValueError: if ``b`` is not a vector or ``cg_iters < 1``.
    """
    b = tf.convert_to_tensor(b)
    if b.shape.rank != 1:
        raise ValueError(f"b must be a flat [n] vector, got shape {b.shape}")
    if int(cg_iters) < 1:
        raise ValueError(f"cg_iters must be >= 1, got {cg_iters}")
    tol = tf.constant(residual_tol, tf.float64)

    def cond(
        i: tf.Tensor, x: tf.Tensor, r: tf.Tensor, p: tf.Tensor, rdotr: tf.Tensor
    ) -> tf.Tensor:
        return tf.logical_and(i < cg_iters, rdotr >= tol)

    def body(
        i: tf.Tensor, x: tf.Tensor, r: tf.Tensor, p: tf.Tensor, rdotr: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        z = hvp_fn(p)
        alpha = tf.cast(rdotr / inner_product(p, z), b.dtype)
        x = x + alpha * p
        r = r - alpha * z
        new_rdotr = inner_product(r, r)
        p = r + tf.cast(new_rdotr / rdotr, b.dtype) * p
        return i + 1, x, r, p, new_rdotr

    init = (tf.constant(0), tf.zeros_like(b), b, b, inner_product(b, b))
    _, x, _, _, _ = tf.while_loop(cond, body, init, maximum_iterations=int(cg_iters))
    return x


class ConjugateGradientOptimizer:
    r"""Constrained TRPO step (the original's ``ConjugateGradientOptimizer``).

    Pseudocode of :meth:`optimize`::

        g = grad loss(theta_0)
        x = CG((H + reg_coeff * I), g, cg_iters)           # H = Hessian of constraint at theta_0
        full_step = sqrt(2 * max_constraint_value / (x^T (H + reg_coeff * I) x + 1e-8)) * x
        for n in 0 .. max_backtracks - 1:
            theta = theta_0 - backtrack_ratio ** n * full_step
            accept if loss(theta), constraint(theta) are finite,
                      loss(theta) < loss(theta_0) and constraint(theta) <= max_constraint_value
        if nothing accepted: restore theta_0
            (with accept_violation, keep the smallest step unless it produced NaN)

    Hessian-vector products (``hvp_approach``):

    * ``'exact'``: reverse-over-reverse double backprop (nested ``tf.GradientTape``). Inside
      :meth:`optimize` the forward pass and the first backward pass (the constraint gradient,
      e.g. through MAML's inner steps) are recorded once per step; each product is then one
      backward pass of that gradient with ``v`` as its output gradient, so the conjugate
      gradient iterations do not recompute the inner-step chain.
    * ``'gauss_newton'``: the generalized Gauss-Newton product :math:`J^\top H_o J v`, with
      :math:`J` the Jacobian of the objective's model outputs ``o`` w.r.t.
      :math:`\theta` and :math:`H_o` the Hessian of ``constraint.value(o, inputs)``
      w.r.t. ``o`` (e.g. TRPO's mean KL as a function of the policy's mean and log-std: the
      Gaussian's diagonal Fisher). Since
      :math:`\nabla^2 c = J^\top H_o J + \sum_i \partial c / \partial o_i\, \nabla^2 o_i`,
      this is the exact Hessian wherever :math:`\partial c / \partial o = 0`, e.g. for
      :math:`\mathrm{KL}(\pi_{\text{old}} \| \pi_\theta)` at the old parameters, where
      conjugate gradient runs; elsewhere it is the (positive semi-definite for a convex
      ``constraint.value``) Gauss-Newton approximation. Inside :meth:`optimize` the
      forward pass is recorded once; each product is then ``J v`` (the double-VJP trick: the
      gradient w.r.t. ``u`` of the recorded ``J^T u``) and one ``J^T`` product, with no third
      derivatives through an inner step (faster than ``'exact'``, see
      ``benchmarks/results/algo_steps_metastep.md``).
    * ``'forward_over_reverse'``: ``tf.autodiff.ForwardAccumulator`` over the gradient tape; same
      value as ``'exact'``, recomputed for every product.
    * ``'finite_difference'``: central difference of the gradient,
      ``(grad(theta + h v) - grad(theta - h v)) / (2 h)`` with
      ``h = finite_diff_eps * (1 + ||theta||) / ||v||`` (a relative step along ``v``). Assigns
      the variables temporarily. With float32 variables use ``finite_diff_eps`` around 1e-3.
    * ``'finite_difference_original'``: the original ProMP code's product (its
      ``FiniteDifferenceHvp``, the one its TRPO-MAML ran): the same central difference with the
      absolute step ``h = finite_diff_eps`` (1e-5 there) along the unnormalised vector. In
      float32 this step is near the parameters' rounding, so the product is noisy and tends
      to underestimate the curvature (``benchmarks/original_code/README.md``); it is here to
      measure what that does to learning, not as a recommended setting. The original also
      had ``reg_coeff = 0``.

    The objective may itself use ``tf.GradientTape`` (e.g. MAML's inner step): the HVP then
    differentiates through that inner gradient.

    Args:
        cg_iters: conjugate gradient iterations (Hessian-vector products per step).
        reg_coeff: Tikhonov damping added to the Hessian, >= 0.
        backtrack_ratio: line search shrink factor, in (0, 1).
        max_backtracks: number of step sizes tried, >= 1.
        accept_violation: keep the last (smallest) step even if it breaks the constraint or does
            not decrease the loss.
        hvp_approach: ``'exact'``, ``'gauss_newton'`` (the constraint must depend on the
            variables only through the objective's outputs), ``'forward_over_reverse'`` or
            ``'finite_difference'``.
        finite_diff_eps: relative step of the finite-difference HVP, > 0.
        residual_tol: conjugate gradient stops once the squared residual falls below this.
        jit_compile: compile the step with XLA (``tf.function(jit_compile=True)``). The whole
            step (gradient, conjugate gradient loop, line search, statistics) is one
            ``tf.function`` either way, with the loops as ``tf.while_loop``: one call and one
            host synchronisation per step.

    Raises:
        ValueError: on out-of-range arguments.
    """

    def __init__(
        self,
        cg_iters: int = 10,
        reg_coeff: float = 1e-5,
        backtrack_ratio: float = 0.8,
        max_backtracks: int = 15,
        accept_violation: bool = False,
        hvp_approach: str = "exact",
        finite_diff_eps: float = 1e-5,
        residual_tol: float = 1e-10,
        jit_compile: bool = False,
    ) -> None:
        if int(cg_iters) < 1:
            raise ValueError(f"cg_iters must be >= 1, got {cg_iters}")
        if not reg_coeff >= 0:
            raise ValueError(f"reg_coeff must be >= 0, got {reg_coeff}")
        if not 0.0 < backtrack_ratio < 1.0:
            raise ValueError(f"backtrack_ratio must be in (0, 1), got {backtrack_ratio}")
        if int(max_backtracks) < 1:
            raise ValueError(f"max_backtracks must be >= 1, got {max_backtracks}")
        if hvp_approach not in HVP_APPROACHES:
            raise ValueError(f"hvp_approach must be one of {HVP_APPROACHES}, got {hvp_approach!r}")
        if not finite_diff_eps > 0:
            raise ValueError(f"finite_diff_eps must be > 0, got {finite_diff_eps}")
        self.cg_iters = int(cg_iters)
        self.reg_coeff = float(reg_coeff)
        self.backtrack_ratio = float(backtrack_ratio)
        self.max_backtracks = int(max_backtracks)
        self.accept_violation = bool(accept_violation)
        self.hvp_approach = hvp_approach
        self.finite_diff_eps = float(finite_diff_eps)
        self.residual_tol = float(residual_tol)
        self.jit_compile = bool(jit_compile)
        self._built = False

    # ------------------------------------------------------------------ build
    def build(
        self, variables: Sequence[tf.Variable], objective: Objective, constraint: Constraint
    ) -> None:
        """Set the problem and trace-once ``tf.function`` wrappers.

        Args:
            variables: the parameters ``theta`` (one floating dtype).
            objective: ``inputs -> (loss, outputs)``, a pure function of the current variable
                values: the scalar loss and the model outputs (a nest of tensors) that the
                constraint reads, from one forward pass.
            constraint: the trust region ``constraint.value(outputs, inputs) <=
                constraint.max_value``.

        Raises:
            ValueError: if ``constraint.max_value`` is not > 0.
        """
        if not constraint.max_value > 0:
            raise ValueError(f"constraint.max_value must be > 0, got {constraint.max_value}")
        self._variables = check_variables(variables)
        self._shapes = [v.shape for v in self._variables]
        self._dtype = self._variables[0].dtype
        self._objective = objective
        self._constraint = constraint
        self.max_constraint_value = float(constraint.max_value)
        self._hvp_impl = {
            "exact": self._hvp_reverse_over_reverse,
            "gauss_newton": self._hvp_gauss_newton,
            "forward_over_reverse": self._hvp_forward_over_reverse,
            "finite_difference": self._hvp_finite_difference,
            "finite_difference_original": self._hvp_finite_difference,
        }[self.hvp_approach]
        compile_options = dict(reduce_retracing=True, jit_compile=self.jit_compile)
        self._hvp_tf = tf.function(self._hvp_impl, **compile_options)
        self._loss_and_constraint_tf = tf.function(self._loss_and_constraint, **compile_options)
        self._step_tf = tf.function(self._step, **compile_options)
        self._built = True

    # ---------------------------------------------------------- graph pieces
    def _loss_and_constraint(self, inputs: Inputs) -> tuple[tf.Tensor, tf.Tensor]:
        loss, outputs = self._objective(inputs)
        return loss, self._constraint.value(outputs, inputs)

    def _constraint_value(self, inputs: Inputs) -> tf.Tensor:
        return self._loss_and_constraint(inputs)[1]

    def _flat_params(self) -> tf.Tensor:
        return flatten_tensors([tf.identity(v) for v in self._variables])

    def _assign_flat(self, flat: tf.Tensor) -> None:
        for var, value in zip(self._variables, unflatten_tensors(flat, self._shapes)):
            var.assign(value)

    def _flat_gradient(
        self, fn: Callable[[Inputs], tf.Tensor], inputs: Inputs
    ) -> tuple[tf.Tensor, tf.Tensor]:
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(self._variables)
            value = fn(inputs)
        grads = tape.gradient(
            value, self._variables, unconnected_gradients=tf.UnconnectedGradients.ZERO
        )
        return value, flatten_tensors(grads)

    def _hvp_reverse_over_reverse(self, inputs: Inputs, vector: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape(watch_accessed_variables=False) as outer:
            outer.watch(self._variables)
            _, grad = self._flat_gradient(self._constraint_value, inputs)
            grad_dot_v = tf.tensordot(grad, tf.stop_gradient(vector), 1)
        hv = outer.gradient(
            grad_dot_v, self._variables, unconnected_gradients=tf.UnconnectedGradients.ZERO
        )
        return flatten_tensors(hv)

    def _gauss_newton_start(
        self, inputs: Inputs
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, Callable[[tf.Tensor], tf.Tensor]]:
        """Loss, constraint, flat loss gradient and ``v -> J^T H_out J v`` at the current point.

        ``J`` is the Jacobian of the constraint's outputs w.r.t. the variables and ``H_out`` the
        Hessian of ``constraint.value`` w.r.t. those outputs. The forward pass (and the
        inner-step chain inside it) is recorded once; every product then reuses it.
        """
        variables = self._variables
        zero = tf.UnconnectedGradients.ZERO
        with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            tape.watch(variables)
            loss, outputs_nest = self._objective(inputs)
        outputs = tf.nest.flatten(outputs_nest)
        # H_out: the constraint as a function of (constant) outputs, differentiated twice; cheap
        # elementwise ops, recorded once.
        leaves = [tf.stop_gradient(o) for o in outputs]
        with tf.GradientTape(persistent=True, watch_accessed_variables=False) as out_outer:
            out_outer.watch(leaves)
            with tf.GradientTape(watch_accessed_variables=False) as out_inner:
                out_inner.watch(leaves)
                constraint = self._constraint.value(
                    tf.nest.pack_sequence_as(outputs_nest, leaves), inputs
                )
            out_grads = out_inner.gradient(constraint, leaves, unconnected_gradients=zero)
        grad = flatten_tensors(tape.gradient(loss, variables, unconnected_gradients=zero))
        # J v by the double-VJP trick: u -> J^T u is linear, recorded once with a dummy u; its
        # gradient w.r.t. u with output gradient v is J v. Measured faster than a
        # ForwardAccumulator, which re-runs the inner-step chain for every product.
        dummies = [tf.zeros_like(o) for o in outputs]
        with tf.GradientTape(persistent=True, watch_accessed_variables=False) as dummy_tape:
            dummy_tape.watch(dummies)
            vjp = flatten_tensors(tape.gradient(
                outputs, variables, output_gradients=dummies, unconnected_gradients=zero
            ))

        def jvp(vector: tf.Tensor) -> list[tf.Tensor]:
            return dummy_tape.gradient(
                vjp, dummies, output_gradients=vector, unconnected_gradients=zero
            )

        def hvp(vector: tf.Tensor) -> tf.Tensor:
            jv = jvp(tf.stop_gradient(vector))
            h_jv = out_outer.gradient(
                out_grads, leaves, output_gradients=jv, unconnected_gradients=zero
            )
            hv = tape.gradient(outputs, variables, output_gradients=h_jv, unconnected_gradients=zero)
            return flatten_tensors(hv)

        return loss, constraint, grad, hvp

    def _hvp_gauss_newton(self, inputs: Inputs, vector: tf.Tensor) -> tf.Tensor:
        return self._gauss_newton_start(inputs)[3](vector)

    def _hvp_forward_over_reverse(self, inputs: Inputs, vector: tf.Tensor) -> tf.Tensor:
        tangents = unflatten_tensors(vector, self._shapes)
        with tf.autodiff.ForwardAccumulator(self._variables, tangents) as acc:
            _, grad = self._flat_gradient(self._constraint_value, inputs)
        hv = acc.jvp(grad, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return hv

    def _hvp_finite_difference(self, inputs: Inputs, vector: tf.Tensor) -> tf.Tensor:
        theta = self._flat_params()
        v_norm = tf.norm(vector)
        if self.hvp_approach == "finite_difference_original":
            h = tf.constant(self.finite_diff_eps, theta.dtype)
        else:
            h = self.finite_diff_eps * (1.0 + tf.norm(theta)) / tf.maximum(v_norm, 1e-30)
        self._assign_flat(theta + h * vector)
        _, grad_plus = self._flat_gradient(self._constraint_value, inputs)
        self._assign_flat(theta - h * vector)
        _, grad_minus = self._flat_gradient(self._constraint_value, inputs)
        self._assign_flat(theta)
        hv = (grad_plus - grad_minus) / (2.0 * h)
        return tf.where(v_norm > 0, hv, tf.zeros_like(hv))

    def _start(
        self, inputs: Inputs
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, Callable[[tf.Tensor], tf.Tensor]]:
        """Loss, constraint, flat loss gradient and ``v -> H v`` at the current parameters.

        For ``'exact'`` the returned product reuses this forward pass and the recorded
        constraint gradient (one backward pass per product); otherwise it is ``_hvp_impl``.
        """
        variables = self._variables
        zero = tf.UnconnectedGradients.ZERO
        if self.hvp_approach == "gauss_newton":
            return self._gauss_newton_start(inputs)
        exact = self.hvp_approach == "exact"
        with tf.GradientTape(persistent=True, watch_accessed_variables=False) as outer:
            outer.watch(variables)
            with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
                tape.watch(variables)
                loss, constraint = self._loss_and_constraint(inputs)
            if exact:
                constraint_grad = flatten_tensors(
                    tape.gradient(constraint, variables, unconnected_gradients=zero)
                )
        grad = flatten_tensors(tape.gradient(loss, variables, unconnected_gradients=zero))
        if not exact:
            return loss, constraint, grad, lambda v: self._hvp_impl(inputs, v)

        def hvp(vector: tf.Tensor) -> tf.Tensor:
            hv = outer.gradient(
                constraint_grad, variables, output_gradients=tf.stop_gradient(vector),
                unconnected_gradients=zero,
            )
            return flatten_tensors(hv)

        return loss, constraint, grad, hvp

    def _step(self, inputs: Inputs) -> dict[str, tf.Tensor]:
        """The whole constrained step of :meth:`optimize` as one graph."""
        dtype = self._dtype
        theta0 = self._flat_params()
        loss_before, kl_before, grad, hvp = self._start(inputs)
        reg = tf.constant(self.reg_coeff, dtype)

        def damped_hvp(v: tf.Tensor) -> tf.Tensor:
            return hvp(v) + reg * v

        direction = conjugate_gradient(damped_hvp, grad, self.cg_iters, self.residual_tol)
        curvature = inner_product(direction, damped_hvp(direction))
        search = tf.logical_and(tf.math.is_finite(curvature), tf.norm(direction) > 0)
        # The step size in float64, as the step-by-step version computed it in Python.
        step_size = tf.sqrt(2.0 * self.max_constraint_value / (tf.abs(curvature) + 1e-8))
        full_step = tf.cast(tf.where(search, step_size, 0.0), dtype) * direction
        ratios = tf.constant([self.backtrack_ratio**n for n in range(self.max_backtracks)], dtype)
        last = self.max_backtracks - 1
        max_kl = tf.constant(self.max_constraint_value, tf.float64)

        def cond(n: tf.Tensor, accepted: tf.Tensor, loss: tf.Tensor, kl: tf.Tensor) -> tf.Tensor:
            return tf.logical_and(search, tf.logical_and(n < self.max_backtracks, ~accepted))

        def body(
            n: tf.Tensor, accepted: tf.Tensor, loss: tf.Tensor, kl: tf.Tensor
        ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
            self._assign_flat(theta0 - ratios[n] * full_step)
            loss, kl = self._loss_and_constraint(inputs)
            finite = tf.logical_and(tf.math.is_finite(loss), tf.math.is_finite(kl))
            improves = tf.logical_and(loss < loss_before, tf.cast(kl, tf.float64) <= max_kl)
            accepted = tf.logical_and(finite, improves)
            if self.accept_violation:
                accepted = tf.logical_or(accepted, tf.logical_and(finite, n == last))
            return n + 1, accepted, loss, kl

        n, accepted, loss, kl = tf.while_loop(
            cond, body, (tf.constant(0), tf.constant(False), loss_before, kl_before),
            maximum_iterations=self.max_backtracks,
        )
        if not accepted:  # autograph: a tf.cond restoring theta_0
            self._assign_flat(theta0)
        loss_after = tf.where(accepted, loss, loss_before)
        return {
            "dLoss": tf.cast(loss_before, tf.float64) - tf.cast(loss_after, tf.float64),
            "LossBefore": loss_before,
            "LossAfter": loss_after,
            "MeanKLBefore": kl_before,
            "MeanKL": tf.where(accepted, kl, kl_before),
            "NumBacktracks": tf.where(accepted, n - 1, self.max_backtracks),
        }

    # ------------------------------------------------------------ public API
    def _check_built(self) -> None:
        if not self._built:
            raise ValueError("call build(variables, objective, constraint) first")

    def hvp(self, inputs: Inputs, vector: tf.Tensor) -> tf.Tensor:
        """Hessian of the constraint at the current parameters times ``vector`` (no damping).

        With ``'gauss_newton'``: the Gauss-Newton matrix times ``vector`` (the Hessian where the
        constraint's gradient w.r.t. its outputs is 0).

        Args:
            inputs: nest of tensors passed to the objective.
            vector: ``[n]`` flat vector, ``n`` the total number of parameters, ordered as the
                concatenated row-major variables.

        Returns:
            ``[n]`` product ``H vector``.
        """
        self._check_built()
        vector = tf.convert_to_tensor(vector, dtype=self._dtype)
        return self._hvp_tf(to_tensor_nest(inputs), vector)

    def loss(self, inputs: Inputs) -> float:
        """Loss at the current parameters.

        Args:
            inputs: nest of tensors passed to the objective.

        Returns:
            The scalar loss.
        """
        self._check_built()
        return float(self._loss_and_constraint_tf(to_tensor_nest(inputs))[0])

    def constraint_val(self, inputs: Inputs) -> float:
        """Constraint value (e.g. mean KL) at the current parameters.

        Args:
            inputs: nest of tensors passed to the objective.

        Returns:
            The scalar constraint value.
        """
        self._check_built()
        return float(self._loss_and_constraint_tf(to_tensor_nest(inputs))[1])

    def optimize(self, inputs: Inputs) -> dict[str, float]:
        """Take one constrained step (see the class docstring), updating the variables in place.

        Args:
            inputs: nest of tensors with a leading task axis, passed to the objective.

        Returns:
            ``LossBefore``, ``LossAfter``, ``MeanKLBefore`` and ``MeanKL`` (constraint before and
            after), ``dLoss`` (before - after) and ``NumBacktracks``: the index ``n`` of the
            accepted step size ``backtrack_ratio ** n``, or ``max_backtracks`` if every step was
            rejected (parameters restored).

        Raises:
            ValueError: if not built or the inputs lack a common leading axis.
        """
        self._check_built()
        inputs = to_tensor_nest(inputs)
        leading_dim(inputs)
        stats = self._step_tf(inputs)
        return {key: float(value) for key, value in stats.items()}

    def checkpoint_state(self) -> dict[str, tf.Module | tf.Variable]:
        """Trackables for ``tf.train.Checkpoint``: none, the TRPO step keeps no state.

        Returns:
            An empty dict.
        """
        return {}
