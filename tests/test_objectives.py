"""Objectives against closed forms, DiCE against analytic derivatives, ProMP's rules."""

import numpy as np
import pytest
import tensorflow as tf

from meta_policy_search.meta_algos import DICEMAML, TRPOMAML, VPGMAML, ProMP, objectives
from meta_policy_search.meta_algos.forward import likelihood_ratio
from meta_policy_search.policies import DiagonalGaussian, MetaGaussianMLPPolicy
from meta_policy_search.types import SampleBatch


def test_masked_task_mean_ignores_padding():
    values = tf.constant([[1.0, 2.0, 100.0], [4.0, -50.0, 6.0]])
    mask = tf.constant([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    np.testing.assert_allclose(objectives.masked_task_mean(values, mask).numpy(), [1.5, 5.0])


def test_clipped_surrogate_by_hand():
    ratio = tf.constant([[0.5, 1.5, 1.1]])
    adv = tf.constant([[1.0, 1.0, -2.0]])
    mask = tf.ones_like(ratio)
    # min(r A, clip(r) A): 0.5*1 -> 0.5 (clip 0.8 larger), 1.5 -> clipped 1.2, 1.1*-2 = -2.2
    expected = -np.mean([0.5, 1.2, -2.2])
    objective = objectives.clipped_surrogate_objective(ratio, adv, mask, 0.2)
    np.testing.assert_allclose(objective.numpy(), [expected], rtol=1e-6)


def test_gaussian_log_likelihood_and_kl_closed_forms():
    rng = np.random.default_rng(0)
    m1, m2 = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    s1, s2 = rng.normal(size=(5, 3)) * 0.3, rng.normal(size=(5, 3)) * 0.3
    x = rng.normal(size=(5, 3))
    expected_ll = np.sum(-0.5 * ((x - m1) / np.exp(s1)) ** 2 - s1 - 0.5 * np.log(2 * np.pi), axis=-1)
    dist = {"mean": tf.constant(m1), "log_std": tf.constant(s1)}
    ll = DiagonalGaussian.log_likelihood(tf.constant(x), dist)
    np.testing.assert_allclose(ll.numpy(), expected_ll, rtol=1e-10)
    v1, v2 = np.exp(2 * s1), np.exp(2 * s2)
    expected_kl = np.sum(0.5 * (np.log(v2 / v1) + (v1 + (m1 - m2) ** 2) / v2 - 1), axis=-1)
    kl = DiagonalGaussian.kl({"mean": m1, "log_std": s1}, {"mean": m2, "log_std": s2})
    np.testing.assert_allclose(kl.numpy(), expected_kl, rtol=1e-10)
    ratio = DiagonalGaussian.likelihood_ratio(x, {"mean": m1, "log_std": s1}, {"mean": m2, "log_std": s2})
    ll2 = DiagonalGaussian.log_likelihood(x, {"mean": m2, "log_std": s2}).numpy()
    np.testing.assert_allclose(ratio.numpy(), np.exp(ll2 - expected_ll), rtol=1e-9)
    np.testing.assert_allclose(DiagonalGaussian.entropy({"log_std": tf.constant(s1)}).numpy(),
                               np.sum(s1 + 0.5 * np.log(2 * np.pi * np.e), axis=-1), rtol=1e-10)


def test_dice_first_and_second_derivatives_match_analytic_in_expectation():
    """a_1, a_2 ~ N(theta, 1), r_1 = a_1, r_2 = a_1 a_2: J = theta + theta^2, J' = 1 + 2 theta, J'' = 2.

    r_2 depends on the earlier action, so a correct estimator needs DiCE's causal cumulative box.
    """
    theta0, num_samples = 0.7, 1_000_000
    rng = np.random.default_rng(0)
    actions = theta0 + rng.standard_normal((1, num_samples, 2))
    rewards = tf.constant(np.stack([actions[..., 0], actions[..., 0] * actions[..., 1]], axis=-1))
    mask = tf.ones_like(rewards)
    theta = tf.Variable(theta0, dtype=tf.float64)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            log_likelihood = -0.5 * (actions - theta) ** 2
            loss = objectives.dice_objective(log_likelihood, log_likelihood, rewards, mask)[0]
        gradient = inner.gradient(loss, theta)
    hessian = outer.gradient(gradient, theta)
    # The loss is a mean over the N x H entries, so -H * loss estimates J (H = 2 steps).
    assert abs(-2 * float(loss) - (theta0 + theta0**2)) < 0.02
    assert abs(-2 * float(gradient) - (1 + 2 * theta0)) < 0.03
    assert abs(-2 * float(hessian) - 2.0) < 0.08
    # Without the cumulative box (each reward credited only to its own action) J' is biased.
    with tf.GradientTape() as tape:
        log_likelihood = -0.5 * (actions - theta) ** 2
        weights = tf.exp(log_likelihood - tf.stop_gradient(log_likelihood))
        naive = -tf.reduce_mean(tf.reduce_sum(weights * rewards, axis=-1))
    assert abs(-float(tape.gradient(naive, theta)) - (1 + 2 * theta0)) > 0.3


def _fresh_samples(policy, rng, R=3, H=4):
    """Samples whose agent_infos are the policy's current per-task distribution."""
    T, obs_dim = policy.meta_batch_size, policy.obs_dim
    obs = rng.normal(size=(T, R, H, obs_dim))
    sampler_policy = policy.get_sampling_policy()
    noise = rng.normal(size=(T, R * H, policy.action_dim))
    actions, infos = sampler_policy.sample(obs.reshape(T, R * H, obs_dim), noise)
    shape = (T, R, H, policy.action_dim)
    mask = np.ones((T, R, H))
    return SampleBatch(
        observations=obs, actions=actions.reshape(shape), rewards=rng.normal(size=(T, R, H)), mask=mask,
        agent_infos={k: v.reshape(shape) for k, v in infos.items()}, env_infos={},
        returns=np.zeros((T, R, H)), baselines=np.zeros((T, R, H)),
        advantages=rng.normal(size=(T, R, H)), adjusted_rewards=None,
    )


def test_promp_likelihood_ratio_is_one_on_fresh_samples():
    rng = np.random.default_rng(1)
    policy = MetaGaussianMLPPolicy(3, 2, 2, hidden_sizes=(8,), seed=0, dtype=tf.float64)
    algo = ProMP(policy, inner_lr=0.1, init_inner_kl_penalty=1.0)
    pre = _fresh_samples(policy, rng)
    algo.adapt_policy(pre)
    post = _fresh_samples(policy, rng)
    batches = (algo.to_tensors(pre), algo.to_tensors(post))
    # KL between the sampling and the current pre-update policy is 0, the ratio is 1:
    loss, stats = algo.meta_loss(batches)
    np.testing.assert_allclose(stats["KLInner"].numpy(), [0.0], atol=1e-12)
    expected = np.mean(-post.advantages.mean(axis=(1, 2)))
    np.testing.assert_allclose(float(loss), expected, rtol=1e-9)
    ratio = likelihood_ratio(algo.forward(batches).post_dist_info, batches[-1])
    np.testing.assert_allclose(ratio, 1.0, rtol=1e-9)


def test_promp_adaptive_kl_penalty_rule():
    policy = MetaGaussianMLPPolicy(2, 2, 1, hidden_sizes=(4,), seed=0)
    algo = ProMP(policy, num_inner_grad_steps=3, target_inner_step=0.01,
                 init_inner_kl_penalty=0.1)
    algo.adapt_kl_coeffs(np.array([0.001, 0.01, 0.05]))  # below target/1.5, inside, above 1.5 target
    np.testing.assert_allclose(algo.inner_kl_coeffs.numpy(), [0.05, 0.1, 0.2], rtol=1e-6)


def test_promp_defaults_are_the_papers_fixed_penalty():
    rng = np.random.default_rng(3)
    policy = MetaGaussianMLPPolicy(2, 2, 1, hidden_sizes=(4,), seed=0)
    algo = ProMP(policy, num_ppo_steps=1)
    assert algo.clip_eps == 0.3 and not algo.adaptive_inner_kl_penalty
    np.testing.assert_allclose(algo.inner_kl_coeffs.numpy(), [5e-4], rtol=1e-6)
    algo.optimize_policy([_fresh_samples(policy, rng), _fresh_samples(policy, rng)])
    np.testing.assert_allclose(algo.inner_kl_coeffs.numpy(), [5e-4], rtol=1e-6)


def test_promp_anneals_clip_range():
    rng = np.random.default_rng(2)
    policy = MetaGaussianMLPPolicy(2, 2, 1, hidden_sizes=(4,), seed=0)
    algo = ProMP(policy, clip_eps=0.3, anneal_factor=0.5, num_ppo_steps=1)
    samples = [_fresh_samples(policy, rng), _fresh_samples(policy, rng)]
    algo.optimize_policy(samples)
    algo.optimize_policy(samples)
    np.testing.assert_allclose(algo.current_clip_eps.numpy(), 0.3 * 0.25, rtol=1e-6)


def test_dice_without_adjusted_rewards_raises_instead_of_a_zero_loss():
    rng = np.random.default_rng(3)
    policy = MetaGaussianMLPPolicy(2, 2, 1, hidden_sizes=(4,), seed=0)
    samples = _fresh_samples(policy, rng)  # adjusted_rewards=None, as MetaSampleProcessor's
    for algo in (TRPOMAML(policy, inner_type="dice"),
                 VPGMAML(policy, inner_type="dice"),
                 DICEMAML(policy, max_path_length=4)):
        assert algo.needs_adjusted_rewards
        with pytest.raises(ValueError, match="DiceSampleProcessor"):
            algo.adapt_policy(samples)
        with pytest.raises(ValueError, match="DiceSampleProcessor"):
            algo.optimize_policy([samples, samples])
    lvc = VPGMAML(policy, inner_type="likelihood_ratio")
    assert not lvc.needs_adjusted_rewards
    np.testing.assert_array_equal(lvc.to_tensors(samples).adjusted_rewards.numpy(), 0.0)


def test_exploration_type_is_checked():
    policy = MetaGaussianMLPPolicy(2, 2, 1, hidden_sizes=(4,), seed=0)
    with pytest.raises(ValueError, match="exploration_type"):
        VPGMAML(policy, exploration=True, exploration_type="stadie")
    with pytest.raises(ValueError, match="exploration_type"):
        TRPOMAML(policy, exploration=True, exploration_type="paper")


@pytest.mark.parametrize("num_inner_grad_steps", [0, 1, 2])
def test_each_objective_runs_the_policy_once_per_batch(num_inner_grad_steps, monkeypatch):
    """The forward pass is computed once and shared: ProMP's surrogate, inner KLs and statistics,
    and TRPO's loss and KL constraint, run the policy on each of the K + 1 batches once."""
    rng = np.random.default_rng(4)
    policy = MetaGaussianMLPPolicy(2, 2, 2, hidden_sizes=(4,), seed=0, dtype=tf.float64)
    samples = [_fresh_samples(policy, rng) for _ in range(num_inner_grad_steps + 1)]
    calls = []
    forward = policy.forward

    def counting_forward(params, observations):
        calls.append(1)
        return forward(params, observations)

    monkeypatch.setattr(policy, "forward", counting_forward)
    promp = ProMP(policy, num_inner_grad_steps=num_inner_grad_steps)
    trpo = TRPOMAML(policy, inner_lr=0.1, num_inner_grad_steps=num_inner_grad_steps,
                    jit_compile=False)
    batches = tuple(promp.to_tensors(s) for s in samples)
    for evaluate in (promp.meta_loss, trpo.loss_and_post_update_dist_info):
        calls.clear()
        evaluate(batches)
        assert len(calls) == num_inner_grad_steps + 1
