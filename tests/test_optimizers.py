"""Tests of the optimizers against closed forms, numpy references and finite differences."""

import math

import numpy as np
import pytest
import tensorflow as tf

from meta_policy_search.optimizers import (
    Adam,
    ConjugateGradientOptimizer,
    Constraint,
    MAMLFirstOrderOptimizer,
    MinibatchAdamOptimizer,
    conjugate_gradient,
)
from meta_policy_search.optimizers.utils import flatten_tensors, unflatten_tensors


def build_constrained(opt, variables, loss_fn, constraint_fn, max_value, outputs_fn=None,
                      of_outputs=None):
    """Build ``opt`` on a loss and a constraint given as functions of the inputs, or (with
    ``outputs_fn``) on the constraint as a function of model outputs."""
    if outputs_fn is None:
        opt.build(variables, lambda inp: (loss_fn(inp), ()),
                  Constraint(lambda _, inp: constraint_fn(inp), max_value))
    else:
        opt.build(variables, lambda inp: (loss_fn(inp), outputs_fn(inp)),
                  Constraint(of_outputs, max_value))


def with_no_stats(loss_fn):
    """An Adam objective ``inputs -> (loss, {})`` from a loss function."""
    return lambda inp: (loss_fn(inp), {})


def _random_spd(rng, n, low=1.0, high=10.0):
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return q @ np.diag(rng.uniform(low, high, size=n)) @ q.T


# ----------------------------------------------------------------------------- conjugate gradient
@pytest.mark.parametrize("in_graph", [False, True])
def test_conjugate_gradient_solves_spd_system(in_graph):
    rng = np.random.default_rng(0)
    n = 12
    a = tf.constant(_random_spd(rng, n))
    b = tf.constant(rng.normal(size=n))

    def solve(b):
        return conjugate_gradient(lambda p: tf.linalg.matvec(a, p), b, cg_iters=50)

    x = tf.function(solve)(b) if in_graph else solve(b)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a.numpy(), b.numpy()), atol=1e-6)


def test_conjugate_gradient_stops_on_zero_rhs_and_validates():
    calls = []

    def hvp(p):
        calls.append(1)
        return p

    x = conjugate_gradient(hvp, tf.zeros(4, tf.float64), cg_iters=5)
    np.testing.assert_array_equal(x.numpy(), np.zeros(4))
    assert not calls
    with pytest.raises(ValueError, match="cg_iters"):
        conjugate_gradient(hvp, tf.ones(3), cg_iters=0)
    with pytest.raises(ValueError, match="flat"):
        conjugate_gradient(hvp, tf.ones((3, 1)))


def test_conjugate_gradient_sums_its_scalars_in_float64():
    # float32 vectors of a policy's size with heavy-tailed entries, an operator spanning six
    # decades: a float32 dot is off by ~2e-5 here and CG carries that into its answer (9e-5).
    rng = np.random.default_rng(0)
    n = 60_000
    diagonal = np.exp(rng.uniform(0.0, np.log(1e6), n)).astype(np.float32)
    b = (rng.standard_t(2, size=n) * np.sqrt(diagonal)).astype(np.float32)

    def reference_cg(iters: int = 10) -> np.ndarray:
        """CG with float32 vectors and float64 inner products and scalars, in numpy."""
        def dot(u, v):
            return u.astype(np.float64) @ v.astype(np.float64)
        x, r, p = np.zeros_like(b), b.copy(), b.copy()
        rdotr = dot(r, r)
        for _ in range(iters):
            z = diagonal * p
            alpha = np.float32(rdotr / dot(p, z))
            x, r = x + alpha * p, r - alpha * z
            new_rdotr = dot(r, r)
            p, rdotr = r + np.float32(new_rdotr / rdotr) * p, new_rdotr
        return x

    x = conjugate_gradient(lambda p: tf.constant(diagonal) * p, tf.constant(b), cg_iters=10)
    assert x.dtype == tf.float32
    expected = reference_cg()
    assert np.linalg.norm(x.numpy() - expected) / np.linalg.norm(expected) < 1e-6


def test_flatten_unflatten_roundtrip():
    tensors = [tf.reshape(tf.range(6.0), (2, 3)), tf.constant([7.0, 8.0])]
    flat = flatten_tensors(tensors)
    np.testing.assert_array_equal(flat.numpy(), [0, 1, 2, 3, 4, 5, 7, 8])
    back = unflatten_tensors(flat, [t.shape for t in tensors])
    for t, u in zip(tensors, back):
        np.testing.assert_array_equal(t.numpy(), u.numpy())


# ------------------------------------------------------------------------------ HVP correctness
def _forward(params, x):
    """The toy problems' one-layer tanh model on ``[T, N, 3]`` inputs."""
    return tf.tanh(tf.einsum("tni,ij->tnj", x, params[0]) + params[1])


def _inner_step(variables, inp):
    """``theta - 0.1 grad g(theta)``: the toy problems' differentiable inner step."""
    with tf.GradientTape() as tape:
        tape.watch(variables)
        inner = tf.reduce_mean(tf.math.softplus(_forward(variables, inp["x"]) * inp["y"]))
    grads = tape.gradient(inner, variables)
    return [v - 0.1 * g for v, g in zip(variables, grads)]


def _meta_problem(dtype=tf.float64):
    """Non-quadratic constraint through an inner gradient step: c(theta) = f(theta - 0.1 grad g)."""
    rng = np.random.default_rng(1)
    w = tf.Variable(rng.normal(size=(3, 2)) * 0.5, dtype=dtype)
    b = tf.Variable(rng.normal(size=2) * 0.5, dtype=dtype)
    variables = [w, b]
    inputs = {
        "x": tf.constant(rng.normal(size=(4, 5, 3)), dtype),
        "y": tf.constant(rng.normal(size=(4, 5, 2)), dtype),
    }

    def constraint_fn(inp):
        adapted = _inner_step(variables, inp)
        out = _forward(adapted, inp["x"])
        return tf.reduce_mean(tf.exp(0.5 * out) * inp["y"] ** 2) + tf.reduce_sum(adapted[0] ** 4)

    def loss_fn(inp):
        return tf.reduce_mean(_forward(variables, inp["x"]) * inp["y"])

    return variables, inputs, loss_fn, constraint_fn


def _reference_hvp(variables, constraint_fn, inputs, vector, eps=1e-5):
    """Central finite difference of the constraint gradient, computed independently."""
    theta = flatten_tensors(variables).numpy()
    shapes = [v.shape for v in variables]

    def grad_at(flat):
        for var, value in zip(variables, unflatten_tensors(tf.constant(flat), shapes)):
            var.assign(value)
        with tf.GradientTape() as tape:
            c = constraint_fn(inputs)
        return flatten_tensors(tape.gradient(c, variables)).numpy()

    hv = (grad_at(theta + eps * vector) - grad_at(theta - eps * vector)) / (2 * eps)
    grad_at(theta)  # restore
    return hv


@pytest.mark.parametrize(
    "approach, rtol",
    [("exact", 1e-6), ("forward_over_reverse", 1e-6), ("finite_difference", 1e-4),
     ("finite_difference_original", 1e-4)],
)
def test_hvp_through_inner_gradient_step_matches_finite_differences(approach, rtol):
    variables, inputs, loss_fn, constraint_fn = _meta_problem()
    opt = ConjugateGradientOptimizer(hvp_approach=approach)
    build_constrained(opt, variables, loss_fn, constraint_fn, 0.01)
    theta_before = flatten_tensors(variables).numpy()
    vector = np.random.default_rng(2).normal(size=theta_before.size)
    hv = opt.hvp(inputs, vector).numpy()
    reference = _reference_hvp(variables, constraint_fn, inputs, vector)
    np.testing.assert_allclose(hv, reference, rtol=rtol, atol=rtol * np.abs(reference).max())
    # The finite-difference path assigns the variables temporarily: they must be restored.
    np.testing.assert_array_equal(flatten_tensors(variables).numpy(), theta_before)


@pytest.mark.parametrize("approach", ["finite_difference", "finite_difference_original"])
def test_finite_difference_hvp_steps_as_documented(approach):
    """On c(theta) = sum(theta^4) / 4 the central difference along v with step h is
    3 theta^2 v + h^2 v^3 exactly, so the error term pins h: the original's absolute step
    ``finite_diff_eps`` along the unnormalised v, or the relative one."""
    theta0 = np.array([0.5, -1.0, 2.0])
    vector = np.array([300.0, -200.0, 100.0])
    var = tf.Variable(theta0)
    opt = ConjugateGradientOptimizer(hvp_approach=approach, finite_diff_eps=1e-5)
    build_constrained(opt, [var], lambda inp: tf.reduce_sum(var),
                      lambda inp: tf.reduce_sum(var**4) / 4, 1.0)
    hv = opt.hvp((tf.zeros((1, 1), tf.float64),), vector).numpy()
    error = hv - 3 * theta0**2 * vector
    if approach == "finite_difference_original":
        np.testing.assert_allclose(error, 1e-5**2 * vector**3, rtol=1e-4)  # 0.27, -0.08, 0.01
    else:
        h = 1e-5 * (1 + np.linalg.norm(theta0)) / np.linalg.norm(vector)
        np.testing.assert_allclose(error, h**2 * vector**3, rtol=0.2, atol=3e-8)


# ------------------------------------------------- compiled step vs step-by-step numpy reference
def _reference_trpo_step(opt, variables, loss_fn, constraint_fn, inputs):
    """The TRPO step of the class docstring, step by step in numpy (one graph call per HVP).

    The Hessian-vector products come from ``opt.hvp`` (recomputed from scratch every call), so
    this checks the compiled step's cached products, loops and line search together.
    """
    shapes = [v.shape for v in variables]

    def assign(flat):
        for var, value in zip(variables, unflatten_tensors(tf.constant(flat), shapes)):
            var.assign(value)

    theta0 = flatten_tensors(variables).numpy()
    with tf.GradientTape() as tape:
        loss_before = loss_fn(inputs)
    g = flatten_tensors(tape.gradient(loss_before, variables)).numpy()
    loss_before = float(loss_before)

    def damped(v):
        return opt.hvp(inputs, v).numpy() + opt.reg_coeff * v

    x, r, p = np.zeros_like(g), g.copy(), g.copy()
    rdotr = r @ r
    for _ in range(opt.cg_iters):
        if rdotr < opt.residual_tol:
            break
        z = damped(p)
        alpha = rdotr / (p @ z)
        x, r = x + alpha * p, r - alpha * z
        new_rdotr = r @ r
        p, rdotr = r + new_rdotr / rdotr * p, new_rdotr
    full_step = math.sqrt(2 * opt.max_constraint_value / (abs(x @ damped(x)) + 1e-8)) * x
    for n in range(opt.max_backtracks):
        assign(theta0 - opt.backtrack_ratio**n * full_step)
        loss, kl = float(loss_fn(inputs)), float(constraint_fn(inputs))
        if np.isfinite([loss, kl]).all() and loss < loss_before and kl <= opt.max_constraint_value:
            return flatten_tensors(variables).numpy(), n
    assign(theta0)
    return theta0, opt.max_backtracks


@pytest.mark.parametrize(
    "approach, max_kl, jit_compile",
    [("exact", 1e-3, False), ("exact", 3.0, False), ("exact", 3.0, True),
     ("forward_over_reverse", 3.0, False), ("finite_difference", 1e-3, False)],
)
def test_compiled_step_matches_step_by_step_reference(approach, max_kl, jit_compile):
    variables, inputs, loss_fn, constraint_fn = _meta_problem()
    theta0 = flatten_tensors(variables).numpy()
    opt = ConjugateGradientOptimizer(cg_iters=8, hvp_approach=approach, jit_compile=jit_compile)
    build_constrained(opt, variables, loss_fn, constraint_fn, max_kl)
    expected, expected_n = _reference_trpo_step(opt, variables, loss_fn, constraint_fn, inputs)
    for var, value in zip(variables, unflatten_tensors(tf.constant(theta0), [v.shape for v in variables])):
        var.assign(value)
    stats = opt.optimize(inputs)
    assert stats["NumBacktracks"] == expected_n
    if max_kl == 3.0:
        assert expected_n > 0  # the large trust region exercises the backtracking
    rtol = 1e-4 if approach == "finite_difference" else 1e-9
    np.testing.assert_allclose(flatten_tensors(variables).numpy(), expected, rtol=rtol, atol=rtol)


# ------------------------------------------------------------------------- TRPO step, quadratic
def _quadratic_problem(n=5, seed=3, extra_loss=None, constraint_fn=None, dtype=tf.float64):
    """Linear loss g^T theta and constraint 0.5 (theta - theta0)^T A (theta - theta0)."""
    rng = np.random.default_rng(seed)
    a = _random_spd(rng, n)
    g = rng.normal(size=n)
    theta0 = rng.normal(size=n)
    var = tf.Variable(theta0, dtype=dtype)
    a_t, g_t, theta0_t = (tf.constant(x, dtype) for x in (a, g, theta0))
    inputs = (tf.ones((2, 1), dtype),)  # unused data with a leading task axis

    def loss_fn(inp):
        loss = tf.tensordot(g_t, var, 1) * tf.reduce_mean(inp[0])
        return loss if extra_loss is None else loss + extra_loss(var - theta0_t)

    def quad_constraint(inp):
        d = var - theta0_t
        return 0.5 * tf.tensordot(d, tf.linalg.matvec(a_t, d), 1)

    return var, inputs, loss_fn, constraint_fn or quad_constraint, (a, g, theta0)


def test_trpo_step_lands_on_analytic_solution():
    delta, reg = 0.05, 1e-5
    var, inputs, loss_fn, constraint_fn, (a, g, theta0) = _quadratic_problem()
    opt = ConjugateGradientOptimizer(cg_iters=20, reg_coeff=reg)
    build_constrained(opt, [var], loss_fn, constraint_fn, delta)
    stats = opt.optimize(inputs)
    damped = a + reg * np.eye(len(g))
    x = np.linalg.solve(damped, g)
    expected = theta0 - math.sqrt(2 * delta / (x @ damped @ x)) * x
    np.testing.assert_allclose(var.numpy(), expected, rtol=1e-7)
    assert stats["NumBacktracks"] == 0
    assert stats["MeanKLBefore"] == 0.0
    assert 0.99 * delta < stats["MeanKL"] <= delta
    assert stats["LossAfter"] < stats["LossBefore"]
    assert stats["dLoss"] == pytest.approx(stats["LossBefore"] - stats["LossAfter"])
    assert opt.loss(inputs) == pytest.approx(stats["LossAfter"])
    assert opt.constraint_val(inputs) == pytest.approx(stats["MeanKL"])


def test_line_search_backtracks_until_constraint_holds():
    # Constraint 0.5 |d|^2 + k |d|^4: the quadratic model underestimates it, so the full step
    # (|d|^2 = 2 delta) violates it. Accepted ratio r needs r^2 + 4 k delta r^4 <= 1.
    delta, k, ratio = 0.1, 10.0, 0.8

    def constraint_fn(inp):
        d2 = tf.reduce_sum((var - theta0_t) ** 2)
        return 0.5 * d2 + k * d2**2

    var, inputs, loss_fn, _, (a, g, theta0) = _quadratic_problem(constraint_fn=constraint_fn)
    theta0_t = tf.constant(theta0)
    opt = ConjugateGradientOptimizer(cg_iters=10, reg_coeff=0.0, backtrack_ratio=ratio)
    build_constrained(opt, [var], loss_fn, constraint_fn, delta)
    stats = opt.optimize(inputs)
    expected_n = next(
        n for n in range(15) if ratio ** (2 * n) + 4 * k * delta * ratio ** (4 * n) <= 1
    )
    assert expected_n == 3
    assert stats["NumBacktracks"] == expected_n
    assert stats["MeanKL"] <= delta
    assert stats["LossAfter"] < stats["LossBefore"]
    # The step is along the (here isotropic) natural gradient -g with |d|^2 = 2 delta r^2.
    d = var.numpy() - theta0
    np.testing.assert_allclose(d, -g / np.linalg.norm(g) * math.sqrt(2 * delta) * ratio**3,
                               rtol=1e-6)


def test_line_search_restores_parameters_when_every_step_fails():
    # A steep quadratic term makes every tried step (down to 0.8^14 of the full one) raise the loss.
    var, inputs, loss_fn, constraint_fn, (_, _, theta0) = _quadratic_problem(
        extra_loss=lambda d: 1e5 * tf.reduce_sum(d**2)
    )
    opt = ConjugateGradientOptimizer()
    build_constrained(opt, [var], loss_fn, constraint_fn, 0.05)
    stats = opt.optimize(inputs)
    np.testing.assert_array_equal(var.numpy(), theta0)
    assert stats["NumBacktracks"] == 15
    assert stats["LossAfter"] == stats["LossBefore"]
    assert stats["dLoss"] == 0.0
    assert stats["MeanKL"] == stats["MeanKLBefore"]


def test_accept_violation_keeps_last_step():
    var, inputs, loss_fn, constraint_fn, (_, _, theta0) = _quadratic_problem(
        extra_loss=lambda d: 1e5 * tf.reduce_sum(d**2)
    )
    opt = ConjugateGradientOptimizer(accept_violation=True, max_backtracks=3)
    build_constrained(opt, [var], loss_fn, constraint_fn, 0.05)
    stats = opt.optimize(inputs)
    assert stats["NumBacktracks"] == 2
    assert stats["LossAfter"] > stats["LossBefore"]
    assert not np.array_equal(var.numpy(), theta0)


@pytest.mark.parametrize("where", ["loss", "constraint"])
def test_line_search_rejects_nan(where):
    # NaN once |d|^2 > 0.7 * 2 delta: the full step (r = 1) is NaN, r = 0.8 (0.64) is fine.
    delta = 0.05
    holder = {}

    def nan_beyond(d, value):
        return tf.where(tf.reduce_sum(d**2) > 0.7 * 2 * delta, tf.constant(np.nan, d.dtype), value)

    def constraint_fn(inp):
        d = holder["var"] - holder["theta0"]
        value = 0.5 * tf.reduce_sum(d**2)
        return nan_beyond(d, value) if where == "constraint" else value

    extra = (lambda d: nan_beyond(d, tf.constant(0.0, d.dtype))) if where == "loss" else None
    var, inputs, loss_fn, _, (_, _, theta0) = _quadratic_problem(
        extra_loss=extra, constraint_fn=constraint_fn
    )
    holder.update(var=var, theta0=tf.constant(theta0))
    opt = ConjugateGradientOptimizer(reg_coeff=0.0)
    build_constrained(opt, [var], loss_fn, constraint_fn, delta)
    stats = opt.optimize(inputs)
    assert stats["NumBacktracks"] == 1
    assert all(math.isfinite(v) for v in stats.values())
    assert stats["MeanKL"] == pytest.approx(delta * 0.64)


def test_accept_violation_never_keeps_nan_step():
    delta = 0.05
    holder = {}

    def constraint_fn(inp):
        d = holder["var"] - holder["theta0"]
        return tf.where(tf.reduce_sum(d**2) > delta, tf.constant(np.nan, d.dtype),
                        0.5 * tf.reduce_sum(d**2))

    var, inputs, loss_fn, _, (_, _, theta0) = _quadratic_problem(constraint_fn=constraint_fn)
    holder.update(var=var, theta0=tf.constant(theta0))
    opt = ConjugateGradientOptimizer(reg_coeff=0.0, accept_violation=True, max_backtracks=2)
    build_constrained(opt, [var], loss_fn, constraint_fn, delta)
    stats = opt.optimize(inputs)  # |d|^2 = 2 delta r^2 > delta for r = 1 and 0.8: both NaN
    assert stats["NumBacktracks"] == 2
    np.testing.assert_array_equal(var.numpy(), theta0)


def test_cg_optimizer_traces_once():
    traces = {"loss": 0, "constraint": 0}
    var, inputs, base_loss, base_constraint, _ = _quadratic_problem()

    def loss_fn(inp):
        traces["loss"] += 1
        return base_loss(inp)

    def constraint_fn(inp):
        traces["constraint"] += 1
        return base_constraint(inp)

    opt = ConjugateGradientOptimizer()
    build_constrained(opt, [var], loss_fn, constraint_fn, 1e-3)
    opt.optimize(inputs)
    after_first = dict(traces)
    for _ in range(2):
        opt.optimize((inputs[0].numpy(),))  # numpy inputs of the same shape reuse the traces
    assert traces == after_first


def test_cg_optimizer_float32_and_validation():
    var, inputs, loss_fn, constraint_fn, _ = _quadratic_problem(dtype=tf.float32)
    opt = ConjugateGradientOptimizer()
    with pytest.raises(ValueError, match="build"):
        opt.optimize(inputs)
    with pytest.raises(ValueError, match="max_value"):
        build_constrained(opt, [var], loss_fn, constraint_fn, -1.0)
    with pytest.raises(ValueError, match="hvp_approach"):
        ConjugateGradientOptimizer(hvp_approach="magic")
    build_constrained(opt, [var], loss_fn, constraint_fn, 0.05)
    stats = opt.optimize(inputs)
    assert stats["NumBacktracks"] == 0 and stats["MeanKL"] <= 0.05
    assert var.dtype == tf.float32


def test_cg_optimizer_reads_variable_coefficient_without_retracing():
    coeff = tf.Variable(1.0, dtype=tf.float64)
    traces = []
    var, inputs, base_loss, constraint_fn, _ = _quadratic_problem()

    def loss_fn(inp):
        traces.append(1)
        return coeff * base_loss(inp)

    opt = ConjugateGradientOptimizer()
    build_constrained(opt, [var], loss_fn, constraint_fn, 0.05)
    first = opt.loss(inputs)
    n_traces = len(traces)
    coeff.assign(3.0)
    assert opt.loss(inputs) == pytest.approx(3.0 * first)
    assert len(traces) == n_traces


# ------------------------------------------------------------------------------------- Adam
def test_adam_matches_numpy_formula_and_checkpoints(tmp_path):
    rng = np.random.default_rng(4)
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    values = [rng.normal(size=(3, 2)), rng.normal(size=4)]
    variables = [tf.Variable(v, dtype=tf.float64) for v in values]
    adam = Adam(lr, b1, b2, eps)
    adam.build(variables)
    step = tf.function(lambda grads: adam.apply_gradients(zip(grads, variables)))
    ref = [v.copy() for v in values]
    m = [np.zeros_like(v) for v in values]
    s = [np.zeros_like(v) for v in values]
    for t in range(1, 5):
        grads = [rng.normal(size=v.shape) for v in values]
        step([tf.constant(g) for g in grads])
        for i, g in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * g
            s[i] = b2 * s[i] + (1 - b2) * g**2
            ref[i] -= lr * (m[i] / (1 - b1**t)) / (np.sqrt(s[i] / (1 - b2**t)) + eps)
    for var, expected in zip(variables, ref):
        np.testing.assert_allclose(var.numpy(), expected, rtol=1e-12)
    assert int(adam.iterations) == 4

    path = tf.train.Checkpoint(optimizer=adam).write(str(tmp_path / "adam"))
    slots = [x.numpy().copy() for x in adam._m + adam._v]
    step([tf.ones_like(v) for v in variables])
    tf.train.Checkpoint(optimizer=adam).read(path).assert_consumed()
    assert int(adam.iterations) == 4
    for x, expected in zip(adam._m + adam._v, slots):
        np.testing.assert_array_equal(x.numpy(), expected)


def test_adam_rejects_unknown_variable_and_skips_none():
    a, b = tf.Variable([1.0]), tf.Variable([2.0])
    adam = Adam(0.1)
    adam.build([a])
    with pytest.raises(ValueError, match="build"):
        adam.apply_gradients([(tf.constant([1.0]), b)])
    adam.apply_gradients([(None, a)])
    assert a.numpy()[0] == 1.0
    with pytest.raises(ValueError, match="learning_rate"):
        Adam(0.0)


# -------------------------------------------------------------------- first-order optimizer
def _task_problem(num_tasks=6, dim=3, seed=5):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(num_tasks, dim))
    var = tf.Variable(np.zeros(dim), dtype=tf.float64)
    inputs = {"center": tf.constant(centers), "id": tf.range(num_tasks)}
    return var, inputs, centers


def test_first_order_optimizer_decreases_convex_loss():
    var, inputs, centers = _task_problem()

    def loss_fn(inp):
        return tf.reduce_mean(tf.reduce_sum((var - inp["center"]) ** 2, axis=-1))

    opt = MinibatchAdamOptimizer(learning_rate=0.05, max_epochs=300, num_minibatches=2)
    opt.build([var], with_no_stats(loss_fn))
    stats = opt.optimize(inputs)
    assert stats["LossAfter"] < stats["LossBefore"]
    np.testing.assert_allclose(var.numpy(), centers.mean(axis=0), atol=0.02)


def test_first_order_first_step_is_adam_sign_step():
    # Adam's first update is lr * m_hat / sqrt(v_hat) = lr * sign(g) (up to epsilon).
    var, inputs, centers = _task_problem()

    def loss_fn(inp):
        return tf.reduce_mean(tf.reduce_sum((var - inp["center"]) ** 2, axis=-1))

    opt = MinibatchAdamOptimizer(learning_rate=0.01)
    opt.build([var], with_no_stats(loss_fn))
    stats = opt.optimize(inputs)
    grad = 2 * (0.0 - centers.mean(axis=0))
    np.testing.assert_allclose(var.numpy(), -0.01 * np.sign(grad), rtol=1e-6)
    assert stats["LossBefore"] == pytest.approx(np.mean(np.sum(centers**2, axis=-1)))
    assert set(stats) == {"LossBefore", "LossAfter"}


def test_first_order_minibatches_split_task_axis_and_are_seeded():
    num_tasks, epochs, num_minibatches = 7, 2, 3

    def run(seed):
        var, inputs, _ = _task_problem(num_tasks)
        visits = tf.Variable(tf.zeros(num_tasks, tf.int32))

        def loss_fn(inp):
            visits.assign_add(tf.reduce_sum(tf.one_hot(inp["id"], num_tasks, dtype=tf.int32), 0))
            return tf.reduce_mean(tf.reduce_sum((var - inp["center"]) ** 2, axis=-1))

        opt = MinibatchAdamOptimizer(
            learning_rate=0.1, max_epochs=epochs, num_minibatches=num_minibatches, seed=seed
        )
        opt.build([var], with_no_stats(loss_fn))
        opt.optimize(inputs)
        return var.numpy(), visits.numpy()

    params0, visits = run(0)
    # Each epoch visits every task exactly once; the full-batch LossBefore and LossAfter add
    # one visit each.
    np.testing.assert_array_equal(visits, np.full(num_tasks, epochs + 2))
    np.testing.assert_array_equal(run(0)[0], params0)
    assert not np.array_equal(run(1)[0], params0)


def test_first_order_variable_coefficient_takes_effect_without_retracing():
    var, inputs, _ = _task_problem()
    coeff = tf.Variable(1.0, dtype=tf.float64)
    traces = []

    def loss_fn(inp):
        traces.append(1)
        return coeff * tf.reduce_mean(tf.reduce_sum((var - inp["center"]) ** 2, axis=-1))

    opt = MinibatchAdamOptimizer(learning_rate=1e-3)
    opt.build([var], with_no_stats(loss_fn))
    first = opt.optimize(inputs)
    n_traces = len(traces)
    coeff.assign(10.0)
    second = opt.optimize(inputs)
    assert len(traces) == n_traces
    assert second["LossBefore"] == pytest.approx(10.0 * first["LossAfter"])
    assert int(opt.checkpoint_state()["adam"].iterations) == 2


def test_first_order_objective_statistics_are_reported_after_the_steps():
    var, inputs, centers = _task_problem()

    def objective(inp):
        return tf.reduce_mean(tf.reduce_sum((var - inp["center"]) ** 2, axis=-1)), {"var": var + 0.0}

    opt = MinibatchAdamOptimizer(learning_rate=0.01, max_epochs=3)
    opt.build([var], objective)
    stats = opt.optimize(inputs)
    np.testing.assert_array_equal(stats["var"], var.numpy())
    assert stats["LossAfter"] == pytest.approx(opt.loss(inputs))
    assert MAMLFirstOrderOptimizer is MinibatchAdamOptimizer  # the original code's name


def test_first_order_validation():
    var, inputs, _ = _task_problem(num_tasks=2)
    opt = MinibatchAdamOptimizer(num_minibatches=3)
    opt.build([var], lambda inp: (tf.reduce_sum(var * var), {}))
    with pytest.raises(ValueError, match="num_minibatches"):
        opt.optimize(inputs)
    with pytest.raises(ValueError, match="leading task axis"):
        opt.optimize({"a": tf.ones((2, 1)), "b": tf.ones((3, 1))})
    with pytest.raises(ValueError, match="max_epochs"):
        MinibatchAdamOptimizer(max_epochs=0)


# -------------------------------------------------------------------- Gauss-Newton products
def _gauss_newton_problem(dtype=tf.float64):
    """:func:`_meta_problem`'s inner step, with the constraint a function of the adapted outputs."""
    variables, inputs, loss_fn, _ = _meta_problem(dtype)

    def outputs_fn(inp):
        return {"out": _forward(_inner_step(variables, inp), inp["x"])}

    def constraint_of_outputs(outputs, inp):
        return tf.reduce_mean(tf.exp(0.5 * outputs["out"]) * inp["y"] ** 2)

    def constraint_fn(inp):
        return constraint_of_outputs(outputs_fn(inp), inp)

    return variables, inputs, loss_fn, constraint_fn, outputs_fn, constraint_of_outputs


def test_gauss_newton_hvp_is_jacobian_transpose_output_hessian_jacobian():
    """Away from the constraint's minimum: J^T H_out J v with explicit Jacobian and Hessian."""
    variables, inputs, loss_fn, constraint_fn, outputs_fn, of_outputs = _gauss_newton_problem()
    opt = ConjugateGradientOptimizer(hvp_approach="gauss_newton")
    build_constrained(opt, variables, loss_fn, constraint_fn, 0.01, outputs_fn, of_outputs)
    vector = np.random.default_rng(2).normal(size=sum(int(np.prod(v.shape)) for v in variables))
    with tf.GradientTape(persistent=True) as tape:
        out = tf.reshape(outputs_fn(inputs)["out"], [-1])
    jacobian = np.concatenate(
        [tf.reshape(j, [out.shape[0], -1]).numpy() for j in tape.jacobian(out, variables)], axis=1
    )
    leaf = tf.Variable(out)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            c = of_outputs({"out": tf.reshape(leaf, [4, 5, 2])}, inputs)
        g = inner.gradient(c, leaf)
    output_hessian = outer.jacobian(g, leaf).numpy()
    expected = jacobian.T @ output_hessian @ jacobian @ vector
    np.testing.assert_allclose(opt.hvp(inputs, vector).numpy(), expected, rtol=1e-10, atol=1e-14)
    # ... which is not the exact Hessian here (the output gradient is not 0)
    exact = _reference_hvp(variables, constraint_fn, inputs, vector)
    assert np.linalg.norm(exact - expected) > 1e-3 * np.linalg.norm(exact)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_gauss_newton_step_matches_step_by_step_reference(jit_compile):
    """The compiled step with cached Gauss-Newton products against ``opt.hvp`` called per product."""
    variables, inputs, loss_fn, constraint_fn, outputs_fn, of_outputs = _gauss_newton_problem()
    theta0 = flatten_tensors(variables).numpy()
    opt = ConjugateGradientOptimizer(cg_iters=8, hvp_approach="gauss_newton", jit_compile=jit_compile)
    build_constrained(opt, variables, loss_fn, constraint_fn, 3.0, outputs_fn, of_outputs)
    expected, expected_n = _reference_trpo_step(opt, variables, loss_fn, constraint_fn, inputs)
    for var, value in zip(variables, unflatten_tensors(tf.constant(theta0), [v.shape for v in variables])):
        var.assign(value)
    stats = opt.optimize(inputs)
    assert stats["NumBacktracks"] == expected_n
    np.testing.assert_allclose(flatten_tensors(variables).numpy(), expected, rtol=1e-9, atol=1e-9)
