"""Meta-gradients of every algorithm against central finite differences (float64).

The outer loss differentiates through 1 or 2 inner policy-gradient steps; the analytic gradient
must match finite differences and differ from the first-order (FO-MAML) gradient, which proves
the second-order term is present.
"""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from meta_policy_search.meta_algos import DICEMAML, PPOMAML, TRPOMAML, VPG_DICEMAML, VPGMAML, ProMP
from meta_policy_search.meta_algos.trpo_maml import post_update_kl
from meta_policy_search.policies import MetaGaussianMLPPolicy
from meta_policy_search.types import SampleBatch

T, R, H, OBS, ACT = 2, 2, 3, 2, 2


def make_policy(seed=0):
    return MetaGaussianMLPPolicy(T, OBS, ACT, hidden_sizes=(4,), init_std=0.8, seed=seed, dtype=tf.float64)


def make_samples(rng, policy, perturb=0.2):
    obs = rng.normal(size=(T, R, H, OBS))
    mask = np.ones((T, R, H))
    mask[0, 1, 2:] = 0.0  # one episode ends early
    dist = policy.forward(policy.stacked_params(), tf.constant(obs.reshape(T, R * H, OBS)))
    mean = dist["mean"].numpy().reshape(T, R, H, ACT) + perturb * rng.normal(size=(T, R, H, ACT))
    log_std = dist["log_std"].numpy().reshape(T, R, H, ACT) + perturb * rng.normal(size=(T, R, H, ACT))
    actions = mean + np.exp(log_std) * rng.normal(size=(T, R, H, ACT))
    return SampleBatch(
        observations=obs * mask[..., None],
        actions=actions * mask[..., None],
        rewards=rng.normal(size=(T, R, H)) * mask,
        mask=mask,
        agent_infos={"mean": mean, "log_std": log_std},
        env_infos={},
        returns=rng.normal(size=(T, R, H)) * mask,
        baselines=np.zeros((T, R, H)),
        advantages=rng.normal(size=(T, R, H)) * mask,
        adjusted_rewards=rng.normal(size=(T, R, H)) * mask,
    )


def flat_gradient(algo, batches):
    variables = algo.meta_variables
    with tf.GradientTape() as tape:
        loss, _ = algo.meta_loss(batches)
    return np.concatenate([tf.reshape(g, [-1]).numpy() for g in tape.gradient(loss, variables)])


def finite_difference_gradient(algo, batches, eps=1e-6):
    grads = []
    for var in algo.meta_variables:
        base = var.numpy().copy()
        flat = base.reshape(-1)
        for i in range(flat.size):
            values = []
            for sign in (1.0, -1.0):
                shifted = flat.copy()
                shifted[i] += sign * eps
                var.assign(shifted.reshape(base.shape))
                values.append(float(algo.meta_loss(batches)[0]))
            grads.append((values[0] - values[1]) / (2 * eps))
        var.assign(base)
    return np.array(grads)


ALGOS = {
    "ProMP": lambda p, k, **kw: ProMP(p, inner_lr=0.3, num_inner_grad_steps=k,
                                      init_inner_kl_penalty=0.1, clip_eps=0.2, **kw),
    "TRPO-MAML-LVC": lambda p, k, **kw: TRPOMAML(p, inner_lr=0.3, num_inner_grad_steps=k,
                                                 inner_type="likelihood_ratio", **kw),
    "TRPO-MAML-LL": lambda p, k, **kw: TRPOMAML(p, inner_lr=0.3, num_inner_grad_steps=k,
                                                inner_type="log_likelihood", **kw),
    "TRPO-MAML-DiCE": lambda p, k, **kw: TRPOMAML(p, inner_lr=0.3, num_inner_grad_steps=k,
                                                  inner_type="dice", **kw),
    "E-MAML-TRPO": lambda p, k, **kw: TRPOMAML(p, inner_lr=0.3, num_inner_grad_steps=k, exploration=True,
                                               **kw),
    "VPG-MAML": lambda p, k, **kw: VPGMAML(p, inner_lr=0.3, num_inner_grad_steps=k,
                                           inner_type="log_likelihood", **kw),
    "E-MAML-VPG": lambda p, k, **kw: VPGMAML(p, inner_lr=0.3, num_inner_grad_steps=k,
                                             inner_type="log_likelihood", exploration=True,
                                             **kw),
    "PPO-MAML": lambda p, k, **kw: PPOMAML(p, inner_lr=0.3, num_inner_grad_steps=k, clip_eps=0.2, **kw),
    "DiCE-MAML": lambda p, k, **kw: DICEMAML(p, inner_lr=0.3, max_path_length=H, num_inner_grad_steps=k,
                                             **kw),
    "VPG-DiCE": lambda p, k, **kw: VPG_DICEMAML(p, inner_lr=0.3, max_path_length=H, num_inner_grad_steps=k,
                                                **kw),
}


@pytest.mark.parametrize("num_inner_grad_steps", [1, 2])
@pytest.mark.parametrize("name", list(ALGOS))
def test_meta_gradient_matches_finite_differences(name, num_inner_grad_steps):
    rng = np.random.default_rng(1)
    policy = make_policy()
    algo = ALGOS[name](policy, num_inner_grad_steps)
    samples = [make_samples(rng, policy) for _ in range(num_inner_grad_steps + 1)]
    batches = tuple(algo.to_tensors(s) for s in samples)

    analytic = flat_gradient(algo, batches)
    numeric = finite_difference_gradient(algo, batches)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)

    first_order_algo = ALGOS[name](policy, num_inner_grad_steps, first_order=True)
    first_order = flat_gradient(first_order_algo, batches)
    relative_difference = np.linalg.norm(analytic - first_order) / np.linalg.norm(analytic)
    assert relative_difference > 1e-3, "the second-order term through the inner step is missing"


@pytest.mark.parametrize("num_inner_grad_steps", [1, 2])
def test_ppo_maml_meta_gradient_matches_independent_references(num_inner_grad_steps):
    """PPO-MAML against two other algorithms' graphs, on data where some ratios are clipped.

    Unclipped (``clip_eps`` huge) its loss is VPG-MAML's post-update surrogate; with LVC inner
    steps and a zero KL penalty it is ProMP. Clipping must change the gradient (it is active).
    """
    rng = np.random.default_rng(2)
    policy = make_policy()
    k = num_inner_grad_steps
    samples = [make_samples(rng, policy, perturb=0.5) for _ in range(k + 1)]

    def gradient(algo):
        return flat_gradient(algo, tuple(algo.to_tensors(s) for s in samples))

    ppo = gradient(PPOMAML(policy, inner_lr=0.3, num_inner_grad_steps=k, clip_eps=0.1))
    unclipped = gradient(PPOMAML(policy, inner_lr=0.3, num_inner_grad_steps=k, clip_eps=1e6))
    vpg = gradient(VPGMAML(policy, inner_lr=0.3, num_inner_grad_steps=k, inner_type="log_likelihood"))
    np.testing.assert_allclose(unclipped, vpg, rtol=1e-10, atol=1e-12)
    assert np.linalg.norm(ppo - unclipped) > 1e-2 * np.linalg.norm(unclipped), "no ratio clipped"
    lvc = gradient(PPOMAML(policy, inner_lr=0.3, num_inner_grad_steps=k, clip_eps=0.1,
                           inner_type="likelihood_ratio"))
    promp = gradient(ProMP(policy, inner_lr=0.3, num_inner_grad_steps=k, clip_eps=0.1,
                           init_inner_kl_penalty=0.0,
                           adaptive_inner_kl_penalty=False))
    np.testing.assert_allclose(lvc, promp, rtol=1e-10, atol=1e-12)
    assert np.linalg.norm(lvc - ppo) > 1e-3 * np.linalg.norm(ppo), "inner_type is ignored"


@pytest.mark.parametrize("name", ["ProMP", "VPG-MAML", "PPO-MAML"])
def test_trainable_inner_step_size_gets_meta_gradient_and_is_trained(name):
    rng = np.random.default_rng(2)
    policy = make_policy()
    algo = ALGOS[name](policy, 1, trainable_inner_step_size=True)
    samples = [make_samples(rng, policy) for _ in range(2)]
    batches = tuple(algo.to_tensors(s) for s in samples)
    assert any(v is algo.step_sizes["W0"] for v in algo.meta_variables)
    np.testing.assert_allclose(flat_gradient(algo, batches), finite_difference_gradient(algo, batches),
                               rtol=1e-5, atol=1e-7)
    before = {k: v.numpy().copy() for k, v in algo.step_sizes.items()}
    algo.optimize_policy(samples)
    changed = [k for k, v in algo.step_sizes.items() if not np.allclose(v.numpy(), before[k])]
    assert changed, "trainable_inner_step_size=True must change the step sizes"


def test_fixed_step_size_is_not_trained():
    rng = np.random.default_rng(3)
    policy = make_policy()
    algo = ALGOS["ProMP"](policy, 1)
    samples = [make_samples(rng, policy) for _ in range(2)]
    algo.optimize_policy(samples)
    for value in algo.step_sizes.values():
        np.testing.assert_allclose(value.numpy(), 0.3)


def test_adapt_matches_graph_inner_step_and_sets_policy():
    rng = np.random.default_rng(4)
    policy = make_policy()
    algo = VPGMAML(policy, inner_lr=0.3, num_inner_grad_steps=1, inner_type="log_likelihood")
    samples = make_samples(rng, policy)
    algo.adapt_policy(samples)
    batch = algo.to_tensors(samples)
    chain = algo.forward([batch, batch])
    for name, value in policy.get_task_param_values().items():
        np.testing.assert_allclose(value, chain.params[1][name].numpy(), rtol=1e-10)
    # a by-hand inner step for task 1 alone (per-task gradients must not mix)
    params = {k: tf.Variable(v.numpy()) for k, v in policy.get_params().items()}
    batch = algo.to_tensors(samples)
    with tf.GradientTape() as tape:
        task_params = {k: tf.stack([v, v]) for k, v in params.items()}
        loss = algo.inner_objective(task_params, batch)[0][1]
    grads = tape.gradient(loss, params)
    expected_w0 = params["W0"].numpy() - 0.3 * grads["W0"].numpy()
    np.testing.assert_allclose(policy.get_task_param_values()["W0"][1], expected_w0, rtol=1e-6)


def test_each_batch_is_converted_to_tensors_once_per_iteration(monkeypatch):
    from meta_policy_search.meta_algos import base

    conversions = []
    original = base.to_tensor_batch

    def counting(samples, *args, **kwargs):
        conversions.append(id(samples))
        return original(samples, *args, **kwargs)

    monkeypatch.setattr(base, "to_tensor_batch", counting)
    rng = np.random.default_rng(5)
    policy = make_policy()
    algo = ALGOS["ProMP"](policy, 2)
    for _ in range(2):  # two iterations: new batches are converted, old ones dropped
        policy.switch_to_pre_update()
        samples = [make_samples(rng, policy) for _ in range(3)]
        for batch in samples[:-1]:
            algo.adapt_policy(batch)
        algo.optimize_policy(samples)
        assert conversions[-3:] == [id(s) for s in samples]
    assert len(conversions) == 6
    assert len(algo._tensor_cache.entries) == 3


def on_policy_samples(rng, policy, algo, num_inner_grad_steps):
    """Batches each sampled by the policy adapted on the previous ones (``agent_infos`` exact).

    The post-update batch's sampling distribution is then the adapted policy at the current
    parameters, so TRPO's KL constraint is 0 there (the point where conjugate gradient runs).
    """
    policy.switch_to_pre_update()
    samples = []
    for k in range(num_inner_grad_steps + 1):
        batch = make_samples(rng, policy, perturb=0.0)
        obs = batch.observations.reshape(T, R * H, OBS)
        dist = policy.forward(
            {n: tf.constant(v) for n, v in policy.get_task_param_values().items()}, tf.constant(obs)
        )
        infos = {key: value.numpy().reshape(T, R, H, ACT) * batch.mask[..., None]
                 for key, value in dist.items()}
        samples.append(dataclasses.replace(batch, agent_infos=infos))
        if k < num_inner_grad_steps:
            algo.adapt_policy(samples[-1])
    return samples


@pytest.mark.parametrize(
    "name, num_inner_grad_steps, trainable",
    [("TRPO-MAML-LL", 1, False), ("TRPO-MAML-LVC", 2, False), ("TRPO-MAML-DiCE", 1, False),
     ("E-MAML-TRPO", 1, False), ("TRPO-MAML-LL", 1, True)],
)
def test_trpo_gauss_newton_hvp_and_step_equal_exact_at_old_parameters(
    name, num_inner_grad_steps, trainable
):
    """At the old parameters (KL = 0) the KL's Hessian is the Gauss-Newton matrix J^T F J.

    So ``hvp_approach='gauss_newton'`` (TRPO-MAML's default) must give the exact double-backprop
    product (float64) and, through conjugate gradient and the line search, the same step.
    """
    rng = np.random.default_rng(6)
    algos = {}
    for approach in ("exact", "gauss_newton"):
        policy = make_policy()
        algos[approach] = ALGOS[name](policy, num_inner_grad_steps, hvp_approach=approach,
                                      trainable_inner_step_size=trainable, jit_compile=False)
    samples = on_policy_samples(rng, algos["exact"].policy, algos["exact"], num_inner_grad_steps)
    batches = tuple(algos["exact"].to_tensors(s) for s in samples)
    post_dist_info = algos["exact"].forward(batches).post_dist_info
    assert abs(float(post_update_kl(post_dist_info, batches))) < 1e-12
    size = sum(int(np.prod(v.shape)) for v in algos["exact"].meta_variables)
    vector = rng.normal(size=size)
    exact = algos["exact"].optimizer.hvp(batches, vector).numpy()
    gauss_newton = algos["gauss_newton"].optimizer.hvp(batches, vector).numpy()
    np.testing.assert_allclose(gauss_newton, exact, rtol=1e-9, atol=1e-12 * np.abs(exact).max())
    start = np.concatenate([v.numpy().ravel() for v in algos["exact"].meta_variables])
    stats, steps = {}, {}
    for approach, algo in algos.items():
        algo.policy.switch_to_pre_update()
        stats[approach] = algo.optimize_policy(samples)
        steps[approach] = np.concatenate([v.numpy().ravel() for v in algo.meta_variables]) - start
    # Ten CG iterations on this tiny, ill-conditioned problem amplify rounding: the compiled
    # 'exact' step itself differs from its step-by-step reference by up to ~1e-5 of the step.
    assert stats["gauss_newton"]["NumBacktracks"] == stats["exact"]["NumBacktracks"]
    for key in stats["exact"]:
        np.testing.assert_allclose(stats["gauss_newton"][key], stats["exact"][key], rtol=1e-4,
                                   atol=1e-12, err_msg=key)
    gap = np.abs(steps["gauss_newton"] - steps["exact"]).max() / np.abs(steps["exact"]).max()
    assert gap < 1e-4


def test_trpo_default_hvp_is_gauss_newton():
    assert TRPOMAML(make_policy(), inner_lr=0.3).optimizer.hvp_approach == "gauss_newton"


@pytest.mark.parametrize("num_inner_grad_steps", [1, 2])
def test_first_order_maml_gradient_is_that_of_the_first_order_objective(num_inner_grad_steps):
    """FO-MAML's meta-gradient equals finite differences of the first-order objective
    ``theta -> L_out(theta + Delta)``, ``Delta = theta_K - theta`` the inner steps' total update
    held fixed at the current parameters, and differs from the exact (second-order) one."""
    from meta_policy_search.meta_algos.fo_maml import FOMAML
    from meta_policy_search.meta_algos.forward import AdaptationChain

    rng = np.random.default_rng(2)
    policy = make_policy()
    algo = FOMAML(policy, inner_lr=0.3, num_inner_grad_steps=num_inner_grad_steps)
    samples = [make_samples(rng, policy) for _ in range(num_inner_grad_steps + 1)]
    batches = tuple(algo.to_tensors(s) for s in samples)
    chain = algo.forward(batches)
    deltas = {name: (chain.params[-1][name] - chain.params[0][name]).numpy()
              for name in policy.trainable_param_names}

    def first_order_objective():
        theta = algo.tiled_params(T)
        adapted = {name: theta[name] + deltas.get(name, 0.0) for name in theta}
        post = policy.forward(adapted, batches[-1].observations)
        return algo.objective(AdaptationChain([theta, adapted], [post, post]), batches)

    class FirstOrderObjective:  # what finite_difference_gradient perturbs and evaluates
        meta_variables = algo.meta_variables

        @staticmethod
        def meta_loss(_):
            return first_order_objective()

    analytic = flat_gradient(algo, batches)
    numeric = finite_difference_gradient(FirstOrderObjective, batches)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)
    second_order = flat_gradient(VPGMAML(policy, inner_lr=0.3,
                                         num_inner_grad_steps=num_inner_grad_steps), batches)
    assert np.linalg.norm(analytic - second_order) / np.linalg.norm(second_order) > 1e-3


def test_first_order_maml_refuses_the_second_order_gradient():
    from meta_policy_search.meta_algos.fo_maml import FOMAML

    with pytest.raises(ValueError, match="first_order must be true for FOMAML"):
        FOMAML(make_policy(), first_order=False)
