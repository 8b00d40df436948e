"""The helpers of ``benchmarks/original_code/trpo_step_compare.py`` (not the comparison itself,
which needs the original ProMP code and minutes of sampling)."""

from __future__ import annotations

import importlib
import os
import sys

import numpy as np
import tensorflow as tf

from meta_policy_search.optimizers.conjugate_gradient_optimizer import conjugate_gradient

ORIGINAL_CODE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "original_code"
)


def _module():
    sys.path.insert(0, ORIGINAL_CODE)
    try:
        return importlib.import_module("trpo_step_compare")
    finally:
        sys.path.pop(0)


def _spd(n: int, low: float, high: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (q * np.logspace(np.log10(low), np.log10(high), n)) @ q.T


def test_traced_conjugate_gradient_solves_a_small_system_in_float64():
    compare = _module()
    a = _spd(12, 0.5, 5.0)
    b = np.random.default_rng(1).standard_normal(12)
    x, trace = compare.conjugate_gradient_traced(lambda p: a @ p, b, 12, np.float64)
    # the products see the vector rounded to float32 (as the comparison's products are float32)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-5, atol=1e-6)
    assert trace.shape[0] <= 12 and trace[-1] < 1e-10 * b.dot(b) + 1e-10


def test_unrolled_conjugate_gradient_is_our_packages_conjugate_gradient():
    compare = _module()
    a = _spd(30, 1e-2, 1e2)
    b = np.random.default_rng(2).standard_normal(30)
    matrix = tf.constant(a, tf.float64)

    def product(p):
        return tf.linalg.matvec(matrix, p)

    ours = conjugate_gradient(product, tf.constant(b), 10).numpy()
    unrolled, trace = compare.conjugate_gradient_unrolled(
        product, tf.constant(b), 10, lambda u, v: tf.tensordot(u, v, 1)
    )
    np.testing.assert_allclose(unrolled.numpy(), ours, rtol=1e-10, atol=1e-12)
    traced, trace_np = compare.conjugate_gradient_traced(lambda p: a @ p, b, 10, np.float64)
    np.testing.assert_allclose(traced, ours, rtol=1e-3, atol=1e-4)  # float32-rounded product inputs
    np.testing.assert_allclose(trace.numpy(), trace_np, rtol=1e-3)


def test_flat_unflat_and_vector_comparison():
    compare = _module()
    shapes = {"W0": (3, 2), "b0": (2,), "W1": (2, 2), "b1": (2,), "W2": (2, 1), "b2": (1,), "log_std": (1,)}
    rng = np.random.default_rng(3)
    values = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    vector = compare.flat(values)
    assert vector.shape == (sum(int(np.prod(s)) for s in shapes.values()),)
    back = compare.unflat(vector, shapes)
    assert all(np.array_equal(back[n], values[n]) for n in shapes)
    result = compare.vector_comparison(2.0 * vector, vector, shapes)
    assert np.isclose(result["rel_err"], 1.0) and np.isclose(result["cos"], 1.0)
    assert np.isclose(result["norm_ratio"], 2.0)
    assert set(result["per_param"]) == set(shapes)
