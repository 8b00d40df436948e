"""XLA (``jit_compile=True``) gives the same results as plain graphs, and nothing retraces.

Two paths that must agree on a small float32 problem: every algorithm built with
``jit_compile=False`` and with ``jit_compile=True`` from the same initial parameters, on the same
data. Compared: the inner step (``adapt_policy``), the meta-loss and meta-gradient of the compiled
graph, the optimizer's own compiled loss (and TRPO's Hessian-vector product), and one
``optimize_policy`` call.
"""

import numpy as np
import pytest
import tensorflow as tf

from meta_policy_search.meta_algos import DICEMAML, PPOMAML, TRPOMAML, VPG_DICEMAML, VPGMAML, ProMP
from meta_policy_search.policies import MetaGaussianMLPPolicy
from meta_policy_search.types import SampleBatch

T, R, H, OBS, ACT = 3, 2, 4, 3, 2


def make_policy():
    return MetaGaussianMLPPolicy(T, OBS, ACT, hidden_sizes=(8,), init_std=0.8, seed=0)


def make_samples(rng, policy):
    """A float32 batch sampled (up to a perturbation) by ``policy``; one episode ends early."""
    mask = np.ones((T, R, H), np.float32)
    mask[0, 1, 2:] = 0.0
    obs = rng.normal(size=(T, R * H, OBS)).astype(np.float32)
    dist = policy.forward(policy.stacked_params(), tf.constant(obs))
    mean = dist["mean"].numpy() + 0.1 * rng.normal(size=(T, R * H, ACT))
    log_std = dist["log_std"].numpy() + 0.1 * rng.normal(size=(T, R * H, ACT))
    actions = mean + np.exp(log_std) * rng.normal(size=(T, R * H, ACT))

    def steps(x):
        return (x.reshape(T, R, H, -1) * mask[..., None]).astype(np.float32)

    def scalars():
        return (rng.normal(size=(T, R, H)) * mask).astype(np.float32)

    return SampleBatch(
        observations=steps(obs), actions=steps(actions), rewards=scalars(), mask=mask,
        agent_infos={"mean": steps(mean), "log_std": steps(log_std)}, env_infos={},
        returns=scalars(), baselines=np.zeros_like(mask), advantages=scalars(),
        adjusted_rewards=scalars(),
    )


ALGOS = {
    "ProMP-K2": lambda p, j: ProMP(p, inner_lr=0.3, num_inner_grad_steps=2, init_inner_kl_penalty=0.1,
                                   jit_compile=j),
    "TRPO-MAML-LL": lambda p, j: TRPOMAML(p, inner_lr=0.3, num_inner_grad_steps=1,
                                          inner_type="log_likelihood", jit_compile=j),
    "TRPO-MAML-DiCE": lambda p, j: TRPOMAML(p, inner_lr=0.3, num_inner_grad_steps=1, inner_type="dice",
                                            jit_compile=j),
    "E-MAML-VPG": lambda p, j: VPGMAML(p, inner_lr=0.3, num_inner_grad_steps=1, exploration=True,
                                       jit_compile=j),
    "PPO-MAML-K2": lambda p, j: PPOMAML(p, inner_lr=0.3, num_inner_grad_steps=2, jit_compile=j),
    "DiCE-MAML": lambda p, j: DICEMAML(p, inner_lr=0.3, max_path_length=H, jit_compile=j),
    "VPG-DiCE": lambda p, j: VPG_DICEMAML(p, inner_lr=0.3, max_path_length=H, jit_compile=j),
}


def close(actual, expected, rtol=2e-5):
    """float32 agreement: relative to the largest entry (XLA reorders sums)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * np.max(np.abs(expected)))


def loss_and_gradient(algo, batches, jit_compile):
    @tf.function(jit_compile=jit_compile)
    def graph(batches):
        with tf.GradientTape() as tape:
            loss, _ = algo.meta_loss(batches)
        return loss, tape.gradient(loss, algo.meta_variables)

    loss, grads = graph(batches)
    return float(loss), np.concatenate([tf.reshape(g, [-1]).numpy() for g in grads])


@pytest.mark.parametrize("name", list(ALGOS))
def test_jit_on_and_off_agree(name):
    rng = np.random.default_rng(0)
    data_policy = make_policy()
    samples = [make_samples(rng, data_policy) for _ in range(3)]
    results = {}
    for jit in (False, True):
        policy = make_policy()
        algo = ALGOS[name](policy, jit)
        assert algo.jit_compile is jit and algo.optimizer.jit_compile is jit
        samples_k = samples[: algo.num_inner_grad_steps + 1]
        batches = algo._check_all_samples(samples_k)
        algo.adapt_policy(samples_k[0])
        adapted = policy.get_task_param_values()
        loss, grad = loss_and_gradient(algo, batches, jit)
        optimizer_loss = algo.optimizer.loss(batches)
        hvp = None
        if isinstance(algo, TRPOMAML):
            vector = tf.constant(np.random.default_rng(5).normal(size=grad.size).astype(np.float32))
            hvp = algo.optimizer.hvp(batches, vector).numpy()
        stats = algo.optimize_policy(samples_k)
        results[jit] = dict(adapted=adapted, loss=loss, grad=grad, optimizer_loss=optimizer_loss,
                            hvp=hvp, stats=stats, params=policy.get_param_values())
    off, on = results[False], results[True]
    for key, value in off["adapted"].items():
        close(on["adapted"][key], value)
    close(on["loss"], off["loss"])
    close(on["optimizer_loss"], off["loss"])
    close(off["optimizer_loss"], off["loss"])
    close(on["grad"], off["grad"], rtol=1e-4)
    assert np.linalg.norm(off["grad"]) > 0
    if off["hvp"] is not None:
        close(on["hvp"], off["hvp"], rtol=1e-4)
    for key in ("LossBefore", "LossAfter"):
        close(on["stats"][key], off["stats"][key], rtol=1e-4)


def test_jit_defaults():
    """XLA is on by default only where the benchmark found it clearly faster (TRPO-MAML)."""
    assert TRPOMAML(make_policy(), inner_lr=0.3).optimizer.jit_compile is True
    for algo in (ProMP(make_policy(), inner_lr=0.3), VPGMAML(make_policy(), inner_lr=0.3),
                 PPOMAML(make_policy(), inner_lr=0.3),
                 DICEMAML(make_policy(), inner_lr=0.3, max_path_length=H)):
        assert algo.jit_compile is False and algo.optimizer.jit_compile is False


def test_functions_trace_once_across_iterations():
    """Every tf.function of an algorithm and its optimizer traces once for one data shape."""
    rng = np.random.default_rng(1)
    for make in (ALGOS["ProMP-K2"], ALGOS["TRPO-MAML-LL"]):
        policy = make_policy()
        algo = make(policy, False)
        for _ in range(3):
            policy.switch_to_pre_update()
            samples = [make_samples(rng, policy) for _ in range(algo.num_inner_grad_steps + 1)]
            for batch in samples[:-1]:
                algo.adapt_policy(batch)
            algo.optimize_policy(samples)
        functions = {
            f"{owner_name}.{key}": value
            for owner_name, owner in (("algo", algo), ("optimizer", algo.optimizer))
            for key, value in vars(owner).items()
            if hasattr(value, "experimental_get_tracing_count")
        }
        counts = {key: f.experimental_get_tracing_count() for key, f in functions.items()}
        used = {key: n for key, n in counts.items() if n > 0}
        assert "algo._adapt_graph" in used and used, counts
        assert all(n == 1 for n in used.values()), counts
