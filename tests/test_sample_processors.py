"""Tests for MetaSampleProcessor and DiceSampleProcessor against per-path references."""

import sys
import types

import numpy as np
import pytest

from meta_policy_search.baselines import LinearFeatureBaseline, LinearTimeBaseline, ZeroBaseline
from meta_policy_search.samplers.dice_sample_processor import DiceSampleProcessor
from meta_policy_search.samplers.meta_sample_processor import MetaSampleProcessor
from meta_policy_search.types import PathBatch, SampleBatch

T, R, H, OBS, ACT = 3, 4, 12, 2, 1


def make_paths(seed=0, horizon=H):
    """A PathBatch with episodes ending at random times; padding holds garbage observations."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, horizon + 1, size=(T, R))
    lengths[:, 0] = horizon
    mask = (np.arange(horizon) < lengths[..., None]).astype(np.float32)
    obs = rng.normal(size=(T, R, horizon, OBS)).astype(np.float32)
    obs[mask == 0] = 1e3
    rewards = ((1.0 + obs[..., 0] + rng.normal(size=(T, R, horizon))) * mask).astype(np.float32)
    zeros = np.zeros((T, R, horizon, ACT), dtype=np.float32)
    return PathBatch(
        observations=obs, actions=zeros, rewards=rewards, mask=mask,
        agent_infos={"mean": zeros, "log_std": zeros}, env_infos={},
    ), lengths


def per_path(rewards, baselines, discount, gae_lambda):
    n = len(rewards)
    ret = np.array([sum(discount**k * rewards[t + k] for k in range(n - t)) for t in range(n)])
    b_next = np.append(baselines[1:], 0.0)
    delta = rewards + discount * b_next - baselines
    adv = np.array(
        [sum((discount * gae_lambda) ** k * delta[t + k] for k in range(n - t)) for t in range(n)]
    )
    return ret, adv


@pytest.mark.parametrize("discount,gae_lambda", [(0.99, 1.0), (0.9, 0.8), (1.0, 0.5)])
def test_meta_processor_matches_per_path_reference(discount, gae_lambda):
    paths, lengths = make_paths(0)
    proc = MetaSampleProcessor(LinearFeatureBaseline(), discount=discount, gae_lambda=gae_lambda)
    samples = proc.process_samples(paths)
    assert isinstance(samples, SampleBatch) and samples.adjusted_rewards is None
    np.testing.assert_array_equal(samples.observations, paths.observations)
    for name in ("returns", "baselines", "advantages"):
        arr = getattr(samples, name)
        assert arr.shape == (T, R, H) and arr.dtype == np.float32
        assert np.all(arr[paths.mask == 0] == 0.0)
    for t in range(T):
        # Baseline: a fresh fit on this task's returns alone.
        ref_baseline = LinearFeatureBaseline()
        ref_baseline.fit(paths.observations[t], samples.returns[t], paths.mask[t])
        np.testing.assert_allclose(
            samples.baselines[t], ref_baseline.predict(paths.observations[t], paths.mask[t]),
            rtol=1e-5, atol=1e-5,
        )
        for r in range(R):
            n = lengths[t, r]
            ret, adv = per_path(
                paths.rewards[t, r, :n].astype(np.float64),
                samples.baselines[t, r, :n].astype(np.float64), discount, gae_lambda,
            )
            np.testing.assert_allclose(samples.returns[t, r, :n], ret, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(samples.advantages[t, r, :n], adv, rtol=1e-5, atol=1e-4)


def test_baseline_lowers_advantage_variance():
    paths, _ = make_paths(1)
    mask = paths.mask > 0
    zero = MetaSampleProcessor(ZeroBaseline()).process_samples(paths)
    linear = MetaSampleProcessor(LinearFeatureBaseline()).process_samples(paths)
    np.testing.assert_allclose(zero.advantages, zero.returns, atol=1e-6)
    np.testing.assert_allclose(linear.advantages, linear.returns - linear.baselines, atol=1e-4)
    assert linear.advantages[mask].var() < 0.5 * zero.advantages[mask].var()


def test_normalize_and_positive_advantages_per_task():
    paths, _ = make_paths(2)
    real = paths.mask > 0
    norm = MetaSampleProcessor(LinearFeatureBaseline(), normalize_adv=True).process_samples(paths)
    both = MetaSampleProcessor(
        LinearFeatureBaseline(), normalize_adv=True, positive_adv=True
    ).process_samples(paths)
    for t in range(T):
        a = norm.advantages[t][real[t]].astype(np.float64)
        assert abs(a.mean()) < 1e-5 and abs(a.std() - 1.0) < 1e-4
        p = both.advantages[t][real[t]].astype(np.float64)
        assert abs(p.min()) < 1e-6 and np.all(p > 0)
        np.testing.assert_allclose(p - p.min(), a - a.min(), atol=1e-5)
    assert np.all(norm.advantages[~real] == 0) and np.all(both.advantages[~real] == 0)


def test_statistics_and_logging(monkeypatch):
    logged = {}
    fake_logger = types.ModuleType("meta_policy_search.utils.logger")
    fake_logger.logkv = lambda key, val: logged.__setitem__(key, val)
    monkeypatch.setitem(sys.modules, "meta_policy_search.utils.logger", fake_logger)

    paths, lengths = make_paths(3)
    proc = MetaSampleProcessor(ZeroBaseline(), discount=0.9)
    proc.process_samples(paths, log=True, log_prefix="Step_1-")
    undiscounted, discounted = [], []
    for t in range(T):
        for r in range(R):
            rew = [float(x) for x in paths.rewards[t, r, : lengths[t, r]]]
            undiscounted.append(sum(rew))
            discounted.append(sum(0.9**k * x for k, x in enumerate(rew)))
    expected = {
        "Step_1-AverageDiscountedReturn": np.mean(discounted),
        "Step_1-AverageReturn": np.mean(undiscounted),
        "Step_1-NumTrajs": T * R,
        "Step_1-StdReturn": np.std(undiscounted),
        "Step_1-MaxReturn": max(undiscounted),
        "Step_1-MinReturn": min(undiscounted),
    }
    assert set(proc.last_statistics) == set(expected)
    for key, value in expected.items():
        assert proc.last_statistics[key] == pytest.approx(value, rel=1e-5, abs=1e-5), key
    assert logged == proc.last_statistics

    logged.clear()
    proc.process_samples(paths)  # log=False: statistics stored, nothing logged
    assert not logged and set(proc.last_statistics) == {k[len("Step_1-"):] for k in expected}


def with_padded_episodes(paths):
    """``paths`` where task 1 has one and task 2 two whole padded episodes (budget sampling).

    Rewards are rescaled to ``10 |r| + 3``: positive and far from standardized, so that a
    missing or wrong standardization shows, and without a reward baseline the zeros after an
    episode's end are the smallest entries of the padded array.
    """
    mask = paths.mask.copy()
    mask[1, 3] = 0.0
    mask[2, 2:] = 0.0
    return PathBatch(
        observations=np.where(mask[..., None] > 0, paths.observations, 1e3).astype(np.float32),
        actions=paths.actions, rewards=((10.0 * np.abs(paths.rewards) + 3.0) * mask).astype(np.float32),
        mask=mask,
        agent_infos=paths.agent_infos, env_infos={},
    )


def original_dice_adjusted_rewards(
    path_rewards, discount, horizon, normalize_adv, positive_adv, time_baseline=True
):
    """The original's DiceSampleProcessor for one task, transcribed from its code.

    ``path_rewards`` is the task's list of ragged reward arrays; returns the padded ``[N, H]``
    adjusted rewards (padding included, as the original passed them on). ``time_baseline``:
    a LinearTimeBaseline, else a zero baseline.
    """
    discount_array = np.cumprod(np.concatenate([np.ones(1), np.ones(horizon - 1) * discount]))
    discounted = [rewards * discount_array[: len(rewards)] for rewards in path_rewards]

    def time_features(length):  # LinearTimeBaseline._features
        tt = np.arange(length).reshape(-1, 1) / 100.0
        return np.concatenate([tt, tt**2, tt**3, np.ones((length, 1))], axis=1)

    featmat = np.concatenate([time_features(len(d)) for d in discounted])
    target = np.concatenate(discounted)
    coeffs = np.linalg.lstsq(featmat.T @ featmat + 1e-5 * np.identity(4), featmat.T @ target,
                             rcond=None)[0] * float(time_baseline)
    adjusted = [d - time_features(len(d)) @ coeffs for d in discounted]
    padded = np.stack([np.pad(a, (0, horizon - len(a))) for a in adjusted])
    if normalize_adv:
        padded = (padded - np.mean(padded)) / (padded.std() + 1e-8)
    if positive_adv:
        padded = (padded - np.min(padded)) + 1e-8
    return padded


@pytest.mark.parametrize("reward_baseline", [LinearTimeBaseline, ZeroBaseline])
@pytest.mark.parametrize(
    ("normalize_adv", "positive_adv"), [(True, False), (False, False), (True, True), (False, True)]
)
def test_dice_adjusted_rewards_match_the_original(normalize_adv, positive_adv, reward_baseline):
    discount = 0.95
    raw_paths, _ = make_paths(4)
    paths = with_padded_episodes(raw_paths)
    lengths = paths.mask.sum(-1).astype(int)
    dice = DiceSampleProcessor(LinearFeatureBaseline(), max_path_length=H, discount=discount,
                               normalize_adv=normalize_adv, positive_adv=positive_adv,
                               reward_baseline=reward_baseline())
    samples = dice.process_samples(paths)
    adj = samples.adjusted_rewards
    assert adj.shape == (T, R, H) and adj.dtype == np.float32
    assert np.all(adj[paths.mask == 0] == 0.0)
    for t in range(T):
        real = [r for r in range(R) if lengths[t, r] > 0]
        expected = original_dice_adjusted_rewards(
            [paths.rewards[t, r, : lengths[t, r]].astype(np.float64) for r in real],
            discount, H, normalize_adv, positive_adv, reward_baseline is LinearTimeBaseline,
        )
        for i, r in enumerate(real):
            n = lengths[t, r]
            np.testing.assert_allclose(adj[t, r, :n], expected[i, :n], rtol=1e-5, atol=1e-5)
    # The returns, baselines and GAE advantages are MetaSampleProcessor's.
    meta = MetaSampleProcessor(LinearFeatureBaseline(), discount=discount,
                               normalize_adv=normalize_adv, positive_adv=positive_adv)
    meta_samples = meta.process_samples(paths)
    for name in ("returns", "baselines", "advantages"):
        np.testing.assert_allclose(getattr(samples, name), getattr(meta_samples, name))


def test_dice_reward_baseline_defaults_to_the_original_and_is_checked():
    paths, _ = make_paths(7)
    assert isinstance(DiceSampleProcessor(ZeroBaseline(), max_path_length=H).reward_baseline,
                      LinearTimeBaseline)
    zero = DiceSampleProcessor(LinearFeatureBaseline(), max_path_length=H, discount=0.9,
                               normalize_adv=False, reward_baseline=ZeroBaseline())
    adj = zero.process_samples(paths).adjusted_rewards
    np.testing.assert_allclose(adj, 0.9 ** np.arange(H) * paths.rewards * paths.mask, rtol=1e-6)
    with pytest.raises(ValueError, match="reward_baseline"):
        DiceSampleProcessor(ZeroBaseline(), max_path_length=H, reward_baseline=object())
    assert DiceSampleProcessor.computes_adjusted_rewards
    assert not MetaSampleProcessor.computes_adjusted_rewards


def test_dice_defaults_normalize_and_checks_horizon():
    paths, _ = make_paths(5)
    samples = DiceSampleProcessor(ZeroBaseline(), max_path_length=H).process_samples(paths)
    real = paths.mask > 0
    for t in range(T):
        assert abs(samples.advantages[t][real[t]].mean()) < 1e-5
    with pytest.raises(ValueError, match="max_path_length"):
        DiceSampleProcessor(ZeroBaseline(), max_path_length=H + 1).process_samples(paths)
    with pytest.raises(ValueError, match="max_path_length"):
        DiceSampleProcessor(ZeroBaseline(), max_path_length=0)


def test_bad_inputs_raise():
    paths, _ = make_paths(6)
    proc = MetaSampleProcessor(ZeroBaseline())

    def replaced(**kw):
        fields = dict(paths.__dict__)
        fields.update(kw)
        return PathBatch(**fields)

    with pytest.raises(ValueError, match="mask"):
        proc.process_samples(replaced(mask=paths.mask[:, :, :-1]))
    with pytest.raises(ValueError, match="rewards"):
        proc.process_samples(replaced(rewards=paths.rewards[0]))
    with pytest.raises(ValueError, match="observations"):
        proc.process_samples(replaced(observations=paths.observations[..., 0]))
    bad_mask = paths.mask.copy()
    bad_mask[0, 0, :] = 0.0
    bad_mask[0, 0, -1] = 1.0
    with pytest.raises(ValueError, match="prefix"):
        proc.process_samples(replaced(mask=bad_mask))
    with pytest.raises(ValueError, match="only 0 and 1"):
        proc.process_samples(replaced(mask=paths.mask * 0.5))
    with pytest.raises(ValueError, match="discount"):
        MetaSampleProcessor(ZeroBaseline(), discount=1.1)
    with pytest.raises(ValueError, match="gae_lambda"):
        MetaSampleProcessor(ZeroBaseline(), gae_lambda=-1)
    with pytest.raises(ValueError, match="baseline"):
        MetaSampleProcessor(object())
