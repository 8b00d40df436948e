"""Tests for meta_policy_search.utils.rl_math against direct per-path Python references."""

import numpy as np
import pytest

from meta_policy_search.utils import rl_math


def random_masked_data(rng, shape=(3, 4, 9)):
    """Random rewards/baselines with prefix masks of random episode lengths 1..H."""
    horizon = shape[-1]
    lengths = rng.integers(1, horizon + 1, size=shape[:-1])
    lengths.flat[0] = horizon  # at least one full-length episode
    mask = (np.arange(horizon) < lengths[..., None]).astype(np.float32)
    rewards = rng.normal(size=shape).astype(np.float32) * mask
    baselines = rng.normal(size=shape).astype(np.float32)  # garbage on padding on purpose
    return rewards, baselines, mask, lengths


def reference_path(rewards, baselines, discount, gae_lambda):
    """Returns and GAE of one episode by direct double sums."""
    n = len(rewards)
    returns = [sum(discount**k * rewards[t + k] for k in range(n - t)) for t in range(n)]
    b_next = [baselines[t + 1] if t + 1 < n else 0.0 for t in range(n)]
    deltas = [rewards[t] + discount * b_next[t] - baselines[t] for t in range(n)]
    adv = [sum((discount * gae_lambda) ** k * deltas[t + k] for k in range(n - t)) for t in range(n)]
    return np.array(returns), np.array(adv)


@pytest.mark.parametrize("discount", [0.0, 0.5, 0.99, 1.0])
def test_discount_cumsum_matches_double_loop(discount):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 7))
    out = rl_math.discount_cumsum(x, discount)
    expected = np.zeros_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        for t in range(x.shape[-1]):
            for k in range(t, x.shape[-1]):
                expected[idx + (t,)] += discount ** (k - t) * x[idx + (k,)]
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    assert out.dtype == x.dtype


def test_discount_cumsum_keeps_float32():
    x = np.ones((4,), dtype=np.float32)
    out = rl_math.discount_cumsum(x, 0.5)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [1.875, 1.75, 1.5, 1.0])


@pytest.mark.parametrize("discount,gae_lambda", [(0.99, 1.0), (0.9, 0.95), (0.5, 0.0), (1.0, 0.7)])
def test_returns_gae_discounted_rewards_match_reference(discount, gae_lambda):
    rng = np.random.default_rng(1)
    rewards, baselines, mask, lengths = random_masked_data(rng)
    returns = rl_math.masked_discounted_returns(rewards, mask, discount)
    adv = rl_math.compute_gae(rewards, baselines, mask, discount, gae_lambda)
    discounted = rl_math.discounted_rewards(rewards, mask, discount)
    for idx in np.ndindex(lengths.shape):
        n = lengths[idx]
        ref_ret, ref_adv = reference_path(
            rewards[idx][:n].astype(np.float64), baselines[idx][:n].astype(np.float64),
            discount, gae_lambda,
        )
        np.testing.assert_allclose(returns[idx][:n], ref_ret, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(adv[idx][:n], ref_adv, rtol=1e-5, atol=1e-5)
        ref_discounted = [discount**t * float(rewards[idx][t]) for t in range(n)]
        np.testing.assert_allclose(discounted[idx][:n], ref_discounted, rtol=1e-5, atol=1e-6)
        for arr in (returns, adv, discounted):
            assert np.all(arr[idx][n:] == 0.0)


@pytest.mark.parametrize("discount", [0.9, 0.99])
def test_gae_lambda_one_is_returns_minus_baseline(discount):
    rng = np.random.default_rng(2)
    rewards, baselines, mask, _ = random_masked_data(rng)
    adv = rl_math.compute_gae(rewards, baselines, mask, discount, 1.0)
    returns = rl_math.masked_discounted_returns(rewards, mask, discount)
    np.testing.assert_allclose(adv, (returns - baselines) * mask, atol=1e-5)


def test_gae_lambda_zero_is_td_error():
    rewards = np.array([[1.0, 2.0, 3.0, 0.0]], dtype=np.float32)
    baselines = np.array([[0.5, 1.0, 2.0, 99.0]], dtype=np.float32)
    mask = np.array([[1.0, 1.0, 1.0, 0.0]], dtype=np.float32)
    adv = rl_math.compute_gae(rewards, baselines, mask, 0.5, 0.0)
    # delta_t = r_t + 0.5 b_{t+1} - b_t, b_3 = 0 (episode over; padding value 99 ignored).
    np.testing.assert_allclose(adv, [[1.0 + 0.5 - 0.5, 2.0 + 1.0 - 1.0, 3.0 - 2.0, 0.0]])


def test_real_episode_statistics_use_the_padded_array_of_real_episodes():
    """Statistics over N x H entries: time padding counts, whole padded episodes do not."""
    rng = np.random.default_rng(3)
    rewards, _, mask, lengths = random_masked_data(rng)
    mask[1, 2:] = 0.0  # task 1 keeps 2 real episodes
    x = np.where(mask > 0, rewards, 0.0).astype(np.float32)
    x[1, 2:] = 1e6  # values on whole padded episodes must not matter
    np.testing.assert_array_equal(rl_math.real_episodes(mask), mask[..., 0] > 0)
    standardized = rl_math.standardize_real_episodes(x, mask)
    shifted = rl_math.shift_real_episodes_to_positive(x, mask)
    for t in range(x.shape[0]):
        rows = [r for r in range(x.shape[1]) if mask[t, r, 0] > 0]
        padded = np.stack([np.where(mask[t, r] > 0, x[t, r], 0.0) for r in rows]).astype(np.float64)
        expected = (padded - padded.mean()) / (padded.std() + 1e-8)
        np.testing.assert_allclose(standardized[t, rows], expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(shifted[t, rows], padded - padded.min() + 1e-8, rtol=1e-5, atol=1e-5)
    assert np.all(standardized[1, 2:] == 0.0) and np.all(shifted[1, 2:] == 0.0)


def test_masked_mean_std_match_real_entries():
    rng = np.random.default_rng(4)
    x, _, mask, _ = random_masked_data(rng)
    x = np.where(mask > 0, x, np.nan).astype(np.float32)  # NaN padding must be ignored
    real = mask > 0
    assert np.isclose(rl_math.masked_mean(x, mask), x[real].astype(np.float64).mean())
    assert np.isclose(rl_math.masked_std(x, mask), x[real].astype(np.float64).std())
    per_task = rl_math.masked_mean(x, mask, axis=(1, 2))
    for t in range(x.shape[0]):
        assert np.isclose(per_task[t], x[t][real[t]].mean(), atol=1e-6)
    assert rl_math.masked_mean(x, np.zeros_like(mask)) == 0.0


def test_normalize_advantages_per_task():
    rng = np.random.default_rng(5)
    adv, _, mask, _ = random_masked_data(rng)
    adv = 3.0 * adv + 7.0 * mask
    out = rl_math.normalize_advantages(adv, mask, axis=(1, 2))
    assert out.dtype == np.float32
    real = mask > 0
    for t in range(adv.shape[0]):
        assert abs(out[t][real[t]].mean()) < 1e-5
        assert abs(out[t][real[t]].std() - 1.0) < 1e-4
    assert np.all(out[~real] == 0.0)


def test_shift_advantages_to_positive():
    rng = np.random.default_rng(6)
    adv, _, mask, _ = random_masked_data(rng)
    adv = np.where(mask > 0, adv, -1e6).astype(np.float32)  # padding must not set the minimum
    out = rl_math.shift_advantages_to_positive(adv.astype(np.float64), mask, axis=(1, 2))
    real = mask > 0
    for t in range(adv.shape[0]):
        assert np.isclose(out[t][real[t]].min(), 1e-8, atol=1e-12)
        np.testing.assert_allclose(
            out[t][real[t]] - out[t][real[t]].min(), adv[t][real[t]] - adv[t][real[t]].min()
        )
    assert np.all(out[~real] == 0.0)


def test_bad_inputs_raise():
    x = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(ValueError, match="shape mismatch"):
        rl_math.compute_gae(x, np.zeros((2, 4), np.float32), x, 0.9, 0.9)
    with pytest.raises(ValueError, match="floating point"):
        rl_math.masked_discounted_returns(np.zeros((2, 3), dtype=np.int64), x, 0.9)
    with pytest.raises(ValueError, match="discount"):
        rl_math.discount_cumsum(x, 1.5)
    with pytest.raises(ValueError, match="gae_lambda"):
        rl_math.compute_gae(x, x, x, 0.9, -0.1)
    with pytest.raises(ValueError, match="rank"):
        rl_math.discount_cumsum(np.float32(1.0), 0.9)
