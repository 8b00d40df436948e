"""Tests for the per-task baselines (LinearFeatureBaseline, LinearTimeBaseline, ZeroBaseline)."""

import numpy as np
import pytest

from meta_policy_search.baselines import (
    Baseline,
    LinearFeatureBaseline,
    LinearTimeBaseline,
    ZeroBaseline,
)
from meta_policy_search.baselines.linear_baseline import ridge_least_squares


def hand_features(obs_path):
    """rllab/ProMP features of one episode ``[n, obs_dim]``, built row by row."""
    rows = []
    for h, o in enumerate(obs_path):
        o = np.clip(o, -10, 10)
        s = h / 100.0
        rows.append(np.concatenate([o, o**2, [s, s**2, s**3, 1.0]]))
    return np.array(rows)


def make_task_data(rng, num_rollouts=6, horizon=30, obs_dim=3, noise=0.05):
    lengths = rng.integers(5, horizon + 1, size=num_rollouts)
    lengths[0] = horizon
    mask = (np.arange(horizon) < lengths[:, None]).astype(np.float32)
    obs = rng.normal(size=(num_rollouts, horizon, obs_dim)).astype(np.float32)
    true_coeffs = rng.normal(size=2 * obs_dim + 4)
    feats = np.stack([hand_features(obs[r]) for r in range(num_rollouts)])
    returns = feats @ true_coeffs + noise * rng.normal(size=(num_rollouts, horizon))
    returns = (returns * mask).astype(np.float32)
    return obs, returns, mask, true_coeffs


def masked_mse(pred, target, mask):
    return float(np.sum((pred - target) ** 2 * mask) / mask.sum())


def test_linear_feature_baseline_matches_reference_lstsq():
    rng = np.random.default_rng(0)
    obs, returns, mask, _ = make_task_data(rng)
    baseline = LinearFeatureBaseline()
    baseline.fit(obs, returns, mask)
    lengths = mask.sum(1).astype(int)
    x = np.concatenate([hand_features(obs[r][: lengths[r]]) for r in range(len(lengths))])
    y = np.concatenate([returns[r][: lengths[r]] for r in range(len(lengths))])
    ref = np.linalg.lstsq(x.T @ x + 1e-5 * np.eye(x.shape[1]), x.T @ y, rcond=None)[0]
    np.testing.assert_allclose(baseline.get_param_values(), ref, rtol=1e-6, atol=1e-8)


def test_linear_feature_baseline_beats_zero_baseline():
    rng = np.random.default_rng(1)
    obs, returns, mask, true_coeffs = make_task_data(rng)
    linear, zero = LinearFeatureBaseline(), ZeroBaseline()
    for b in (linear, zero):
        b.fit(obs, returns, mask)
    err_linear = masked_mse(linear.predict(obs, mask), returns, mask)
    err_zero = masked_mse(zero.predict(obs, mask), returns, mask)
    assert err_linear < 0.01 * err_zero
    assert err_linear < 0.05**2 * 1.5  # close to the noise level
    # Observation coefficients are well identified (time ones are nearly collinear for s < 0.3).
    np.testing.assert_allclose(linear.get_param_values()[:6], true_coeffs[:6], atol=0.05)


def test_padding_does_not_change_fit_and_predicts_zero():
    rng = np.random.default_rng(2)
    obs, returns, mask, _ = make_task_data(rng)
    clean = LinearFeatureBaseline()
    clean.fit(obs, returns, mask)
    pad = mask == 0
    assert pad.any()
    dirty_obs = obs.copy()
    dirty_obs[pad] = rng.normal(size=(pad.sum(), obs.shape[-1])) * 1e4
    dirty_obs[pad, 0] = np.nan
    dirty_returns = returns.copy()
    dirty_returns[pad] = 1e6
    dirty = LinearFeatureBaseline()
    dirty.fit(dirty_obs, dirty_returns, mask)
    np.testing.assert_allclose(dirty.get_param_values(), clean.get_param_values(), rtol=1e-9)
    pred = dirty.predict(dirty_obs, mask)
    assert pred.dtype == np.float32 and pred.shape == mask.shape
    assert np.all(pred[pad] == 0.0)
    np.testing.assert_allclose(pred, clean.predict(obs, mask))


def test_linear_time_baseline_fits_time_polynomial():
    horizon = 50
    mask = np.ones((4, horizon), dtype=np.float32)
    mask[1, 30:] = 0
    s = np.arange(horizon) / 100.0
    returns = np.broadcast_to(2.0 - 3.0 * s + 0.5 * s**3, mask.shape) * mask
    obs = np.random.default_rng(3).normal(size=(4, horizon, 2)).astype(np.float32)
    baseline = LinearTimeBaseline()
    baseline.fit(obs, returns.astype(np.float32), mask)
    assert baseline.get_param_values().shape == (4,)
    pred = baseline.predict(obs, mask)
    assert masked_mse(pred, returns, mask) < 1e-6
    assert np.all(pred[mask == 0] == 0.0)


@pytest.mark.parametrize("cls", [LinearFeatureBaseline, LinearTimeBaseline])
def test_param_round_trip_and_unfitted_predicts_zero(cls):
    rng = np.random.default_rng(4)
    obs, returns, mask, _ = make_task_data(rng)
    fitted, restored = cls(), cls()
    np.testing.assert_array_equal(restored.predict(obs, mask), 0.0)
    assert restored.get_param_values().shape == (0,)
    fitted.fit(obs, returns, mask)
    restored.set_param_values(fitted.get_param_values())
    np.testing.assert_array_equal(restored.predict(obs, mask), fitted.predict(obs, mask))
    restored.set_param_values(np.zeros(0))
    np.testing.assert_array_equal(restored.predict(obs, mask), 0.0)
    with pytest.raises(ValueError, match="flat"):
        restored.set_param_values(np.zeros((2, 2)))


def test_zero_baseline():
    obs = np.ones((2, 5, 3), dtype=np.float32)
    mask = np.ones((2, 5), dtype=np.float32)
    baseline = ZeroBaseline()
    assert isinstance(baseline, Baseline)
    baseline.fit(obs, mask * 3.0, mask)
    np.testing.assert_array_equal(baseline.predict(obs, mask), np.zeros((2, 5)))
    assert baseline.get_param_values().size == 0
    baseline.set_param_values(np.zeros(0))
    with pytest.raises(ValueError):
        baseline.set_param_values(np.ones(3))


def test_ridge_gives_none_without_finite_solution():
    x = np.ones((5, 2))
    assert ridge_least_squares(x, np.full(5, np.nan)) is None
    coeffs = ridge_least_squares(x, np.arange(5.0))
    assert coeffs is not None and np.all(np.isfinite(coeffs))


@pytest.mark.parametrize("cls", [LinearFeatureBaseline, LinearTimeBaseline, ZeroBaseline])
def test_bad_shapes_raise(cls):
    baseline = cls()
    obs = np.zeros((2, 5, 3), dtype=np.float32)
    mask = np.ones((2, 5), dtype=np.float32)
    with pytest.raises(ValueError, match="observations"):
        baseline.fit(obs[0], mask, mask)
    with pytest.raises(ValueError, match="mask"):
        baseline.fit(obs, mask, mask[:, :4])
    with pytest.raises(ValueError, match="returns"):
        baseline.fit(obs, mask[:1], mask)
    with pytest.raises(ValueError, match="mask"):
        baseline.predict(obs, mask.T)
