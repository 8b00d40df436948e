"""Objectives against independent numpy transcriptions of the original ProMP code (TF1).

Each reference below is written the way the original computed it: per task, from a list of ragged
paths (real steps only), zero-padded to ``[N, H]`` where the original padded, with a numpy
Gaussian MLP. Gradients of the references come from central finite differences in float64.
The batches are hand-made: 2 tasks, 3 episode slots, H = 4, episodes that end early and, in one
task, a whole padded episode (the budget sampler's layout); padded steps hold garbage.
"""

import numpy as np
import pytest
import tensorflow as tf

from meta_policy_search.meta_algos import DICEMAML, VPGMAML, ProMP
from meta_policy_search.policies import MetaGaussianMLPPolicy
from meta_policy_search.types import SampleBatch

T, R, H, OBS, ACT = 2, 3, 4, 2, 2
LENGTHS = np.array([[4, 2, 4], [3, 4, 0]])  # task 1's third episode is whole padding
GARBAGE = 7.0


# ------------------------------------------------------------------ numpy policy (reference)
def np_forward(params, obs):
    """Mean and log-std of the tanh Gaussian MLP for shared ``params`` (name -> array)."""
    num_layers = sum(1 for name in params if name.startswith("W"))
    hidden = obs
    for i in range(num_layers):
        hidden = hidden @ params[f"W{i}"] + params[f"b{i}"]
        if i < num_layers - 1:
            hidden = np.tanh(hidden)
    return hidden, np.broadcast_to(params["log_std"], hidden.shape)


def np_log_likelihood(actions, mean, log_std):
    z = (actions - mean) / np.exp(log_std)
    return np.sum(-0.5 * z**2 - log_std - 0.5 * np.log(2 * np.pi), axis=-1)


def np_kl(mean_old, log_std_old, mean_new, log_std_new):
    var_old, var_new = np.exp(2 * log_std_old), np.exp(2 * log_std_new)
    return np.sum(
        (mean_old - mean_new) ** 2 / (2 * var_new) + var_old / (2 * var_new) - 0.5
        + log_std_new - log_std_old,
        axis=-1,
    )


def finite_difference(fn, params, eps=1e-6):
    """Central differences of the scalar ``fn(params)`` for every entry of every parameter."""
    grads = {}
    for name, value in params.items():
        grad = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            shifted = {k: v.copy() for k, v in params.items()}
            shifted[name][idx] = value[idx] + eps
            plus = fn(shifted)
            shifted[name][idx] = value[idx] - eps
            grad[idx] = (plus - fn(shifted)) / (2 * eps)
        grads[name] = grad
    return grads


def pad(path_values, horizon):
    """The original's ``_pad``: zeros after the path's last step."""
    out = np.zeros((horizon, *path_values.shape[1:]))
    out[: len(path_values)] = path_values
    return out


# -------------------------------------------------------------------------- batches
def make_policy(seed=0):
    return MetaGaussianMLPPolicy(T, OBS, ACT, hidden_sizes=(3,), init_std=0.8, seed=seed,
                                 dtype=tf.float64)


def shared_params(policy):
    return {name: value.copy() for name, value in policy.get_param_values().items()}


def make_batch(rng, sampling_params, perturb=0.0):
    """A SampleBatch sampled by ``sampling_params`` (+ ``perturb`` noise on its distribution)."""
    mask = (np.arange(H) < LENGTHS[..., None]).astype(np.float64)
    obs = rng.normal(size=(T, R, H, OBS))
    mean, log_std = np_forward(sampling_params, obs)
    mean = mean + perturb * rng.normal(size=mean.shape)
    log_std = log_std + perturb * rng.normal(size=log_std.shape)
    actions = mean + np.exp(log_std) * rng.normal(size=mean.shape)
    real = mask[..., None] > 0

    def garbage(x):
        return np.where(real, x, GARBAGE)

    return SampleBatch(
        observations=garbage(obs), actions=garbage(actions),
        rewards=np.where(mask > 0, rng.normal(size=(T, R, H)), GARBAGE) * mask, mask=mask,
        agent_infos={"mean": garbage(mean), "log_std": garbage(log_std)}, env_infos={},
        returns=np.zeros((T, R, H)), baselines=np.zeros((T, R, H)),
        advantages=rng.normal(size=(T, R, H)) * mask,
        adjusted_rewards=rng.normal(size=(T, R, H)) * mask,
    )


def paths_of_task(samples, task):
    """The original's list of ragged paths of one task (real steps only, no padded episodes)."""
    paths = []
    for r in range(R):
        n = int(samples.mask[task, r].sum())
        if n == 0:
            continue
        paths.append({
            "observations": samples.observations[task, r, :n],
            "actions": samples.actions[task, r, :n],
            "rewards": samples.rewards[task, r, :n],
            "advantages": samples.advantages[task, r, :n],
            "adjusted_rewards": samples.adjusted_rewards[task, r, :n],
            "mean": samples.agent_infos["mean"][task, r, :n],
            "log_std": samples.agent_infos["log_std"][task, r, :n],
        })
    return paths


def tf_task_gradients(policy, loss_fn):
    """Per-task gradients ``[{name: grad}] * T`` of ``loss_fn() -> [T]`` wrt the shared params."""
    variables = policy.get_params()
    grads = []
    for task in range(T):
        with tf.GradientTape() as tape:
            loss = loss_fn()[task]
        task_grads = tape.gradient(loss, list(variables.values()))
        grads.append({name: g.numpy() for name, g in zip(variables, task_grads)})
    return grads


def assert_gradients_close(actual, expected):
    for name in expected:
        np.testing.assert_allclose(actual[name], expected[name], rtol=1e-6, atol=1e-9, err_msg=name)


# ------------------------------------------------------------------------------ DiCE
def original_dice_loss(params, sampling_params, paths):
    """dice_maml.py: -reduce_mean(magic_box(log_likelihood) * adjusted_rewards * mask).

    The magic box ``exp(tau - stop_gradient(tau))`` with ``tau = cumsum(log pi)`` over the
    zero-padded ``[N, H]`` arrays (no mask inside the cumsum, as the original); stop_gradient
    evaluates ``tau`` at the sampling parameters.
    """
    obs = np.stack([pad(p["observations"], H) for p in paths])
    actions = np.stack([pad(p["actions"], H) for p in paths])
    adjusted = np.stack([pad(p["adjusted_rewards"], H) for p in paths])
    mask = np.stack([pad(np.ones(len(p["rewards"])), H) for p in paths])
    tau = np.cumsum(np_log_likelihood(actions, *np_forward(params, obs)), axis=1)
    tau_stopped = np.cumsum(np_log_likelihood(actions, *np_forward(sampling_params, obs)), axis=1)
    return -np.mean(np.exp(tau - tau_stopped) * adjusted * mask)


def test_dice_inner_loss_and_gradient_match_the_original():
    rng = np.random.default_rng(0)
    policy = make_policy()
    params = shared_params(policy)
    samples = make_batch(rng, params)
    algo = DICEMAML(policy, inner_lr=0.1, max_path_length=H)
    batch = algo.to_tensors(samples)

    def loss_fn():
        return algo.inner_objective(algo.tiled_params(T), batch)[0]

    losses = loss_fn().numpy()
    grads = tf_task_gradients(policy, loss_fn)
    for task in range(T):
        paths = paths_of_task(samples, task)

        def reference(p, paths=paths):
            return original_dice_loss(p, params, paths)

        np.testing.assert_allclose(losses[task], reference(params), rtol=1e-10)
        assert_gradients_close(grads[task], finite_difference(reference, params))


# ---------------------------------------------------------------------------- E-MAML
def original_exploration_terms(params, pre_samples, post_samples):
    """trpo_maml.py / vpg_maml.py with exploration: per task
    ``-reduce_mean(adj_avg_rewards) * reduce_mean(log_likelihood_initial)``, with
    meta_sample_processor.py's ``adj_avg_rewards`` of the last step's samples."""
    post_paths = [paths_of_task(post_samples, t) for t in range(T)]
    all_rewards = np.concatenate([p["rewards"] for paths in post_paths for p in paths])
    mean, std = np.mean(all_rewards), np.std(all_rewards)
    terms = []
    for task in range(T):
        rewards = np.concatenate([p["rewards"] for p in post_paths[task]])
        adj_avg_rewards = (rewards - mean) / (std + 1e-8)
        pre_paths = paths_of_task(pre_samples, task)
        obs = np.concatenate([p["observations"] for p in pre_paths])
        actions = np.concatenate([p["actions"] for p in pre_paths])
        log_likelihood = np_log_likelihood(actions, *np_forward(params, obs))
        terms.append(-np.mean(adj_avg_rewards) * np.mean(log_likelihood))
    return np.array(terms)


def emaml_paper_terms(params, pre_samples, post_samples):
    """The trajectory form, one inner step: -mean_n[sum_h log pi] * (J_t - mean_{t' != t} J_t')."""
    returns = np.array([
        np.mean([p["rewards"].sum() for p in paths_of_task(post_samples, t)]) for t in range(T)
    ])
    terms = []
    for task in range(T):
        baseline = np.mean(np.delete(returns, task))
        trajectory_log_likelihoods = [
            np.sum(np_log_likelihood(p["actions"], *np_forward(params, p["observations"])))
            for p in paths_of_task(pre_samples, task)
        ]
        terms.append(-np.mean(trajectory_log_likelihoods) * (returns[task] - baseline))
    return np.array(terms)


@pytest.mark.parametrize(
    ("exploration_type", "num_inner_grad_steps"), [("original", 1), ("original", 2), ("emaml_paper", 1)]
)
def test_emaml_term_and_gradient_match_reference(exploration_type, num_inner_grad_steps):
    rng = np.random.default_rng(1)
    policy = make_policy()
    params = shared_params(policy)
    samples = [make_batch(rng, params, perturb=0.1) for _ in range(num_inner_grad_steps + 1)]
    post = samples[-1]  # rewards with a non-zero mean, so that the standardization matters
    samples[-1] = SampleBatch(**{**post.__dict__, "rewards": 3.0 * post.rewards + 2.0 * post.mask})
    algo = VPGMAML(policy, inner_lr=0.3, num_inner_grad_steps=num_inner_grad_steps,
                   inner_type="log_likelihood", exploration=True,
                   exploration_type=exploration_type)
    batches = tuple(algo.to_tensors(s) for s in samples)

    def loss_fn():
        return algo.exploration_loss(algo.forward(batches), batches)

    reference_fn = original_exploration_terms if exploration_type == "original" else emaml_paper_terms
    expected = reference_fn(params, samples[0], samples[-1])
    np.testing.assert_allclose(loss_fn().numpy(), expected, rtol=1e-10)
    grads = tf_task_gradients(policy, loss_fn)
    for task in range(T):
        assert_gradients_close(
            grads[task],
            finite_difference(lambda p, task=task: reference_fn(p, samples[0], samples[-1])[task], params),
        )
    # In the meta-loss the term is added to each task's surrogate, then averaged over tasks.
    with_term = float(algo.meta_loss(batches)[0])
    algo.exploration = False
    without_term = float(algo.meta_loss(batches)[0])
    np.testing.assert_allclose(with_term - without_term, np.mean(expected), rtol=1e-9)


# ----------------------------------------------------------------------------- ProMP
def original_promp_loss(chain, samples, coeffs, clip_eps):
    """pro_mp.py: mean_t(clipped surrogate) + reduce_mean(inner_kl_coeff * mean_inner_kl_per_step).

    ``chain[k][name][t]`` are task ``t``'s parameters after ``k`` inner steps.
    """
    def task_params(k, t):
        return {name: value[t] for name, value in chain[k].items()}

    kls = []
    for k in range(len(samples) - 1):
        per_task = []
        for t in range(T):
            paths = paths_of_task(samples[k], t)
            obs = np.concatenate([p["observations"] for p in paths])
            mean_old = np.concatenate([p["mean"] for p in paths])
            log_std_old = np.concatenate([p["log_std"] for p in paths])
            per_task.append(np.mean(np_kl(mean_old, log_std_old, *np_forward(task_params(k, t), obs))))
        kls.append(np.mean(per_task))
    surrogates = []
    for t in range(T):
        paths = paths_of_task(samples[-1], t)
        obs, actions, adv, mean_old, log_std_old = (
            np.concatenate([p[key] for p in paths])
            for key in ("observations", "actions", "advantages", "mean", "log_std")
        )
        ratio = np.exp(np_log_likelihood(actions, *np_forward(task_params(len(samples) - 1, t), obs))
                       - np_log_likelihood(actions, mean_old, log_std_old))
        clipped = np.minimum(ratio * adv, np.clip(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
        surrogates.append(-np.mean(clipped))
    return np.mean(surrogates) + np.mean(np.asarray(coeffs) * np.array(kls))


def test_promp_two_step_kl_penalty_is_the_mean_over_steps():
    rng = np.random.default_rng(2)
    policy = make_policy()
    params = shared_params(policy)
    samples = [make_batch(rng, params, perturb=0.3) for _ in range(3)]
    algo = ProMP(policy, inner_lr=0.3, num_inner_grad_steps=2, clip_eps=0.2)
    coeffs = [0.4, 3.0]
    algo.inner_kl_coeffs.assign(coeffs)
    batches = tuple(algo.to_tensors(s) for s in samples)
    chain = [{name: v.numpy() for name, v in params_k.items()}
             for params_k in algo.forward(batches).params]
    expected = original_promp_loss(chain, samples, coeffs, clip_eps=0.2)
    loss, stats = algo.meta_loss(batches)
    penalty = np.mean(np.array(coeffs) * stats["KLInner"].numpy())
    assert penalty > 0.1 * abs(expected)  # a sum over steps would change the loss by > 10%
    np.testing.assert_allclose(float(loss), expected, rtol=1e-8)
