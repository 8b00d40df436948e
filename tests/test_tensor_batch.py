"""The packed TensorBatch: the policy runs on real steps only, with the same losses and gradients."""

import numpy as np
import pytest
import tensorflow as tf

from meta_policy_search.meta_algos import PPOMAML, TRPOMAML, ProMP
from meta_policy_search.meta_algos.batch import to_tensor_batch
from meta_policy_search.policies import MetaGaussianMLPPolicy
from meta_policy_search.types import SampleBatch

T, R, H, OBS, ACT = 2, 4, 5, 3, 2


def terminating_mask():
    """Episodes of lengths 1..5 and one all-padding episode: 11 and 8 real steps of 20."""
    mask = np.zeros((T, R, H))
    for t, lengths in enumerate([(5, 1, 3, 2), (2, 4, 2, 0)]):
        for r, length in enumerate(lengths):
            mask[t, r, :length] = 1.0
    return mask


def make_samples(seed=0):
    rng = np.random.default_rng(seed)
    mask = terminating_mask()

    def per_step(*shape):
        return rng.normal(size=(T, R, H, *shape)) * mask.reshape(T, R, H, *[1] * len(shape))

    # a sampling distribution near the test policy's (std 0.8), so that importance weights stay moderate
    mean = 0.1 * per_step(ACT)
    log_std = (np.log(0.8) + 0.05 * rng.normal(size=(T, R, H, ACT))) * mask[..., None]
    return SampleBatch(
        observations=per_step(OBS),
        actions=mean + 0.8 * per_step(ACT),
        rewards=per_step(),
        mask=mask,
        agent_infos={"mean": mean, "log_std": log_std},
        env_infos={},
        returns=per_step(),
        baselines=np.zeros((T, R, H)),
        advantages=per_step(),
        adjusted_rewards=per_step(),
    )


def test_packed_batch_holds_only_the_real_steps_in_order():
    samples = make_samples()
    batch = to_tensor_batch(samples, tf.float64)
    # 11 real steps at most, rounded up to a multiple of H: 15 rows instead of R * H = 20
    assert batch.observations.shape == (T, 15, OBS)
    for t in range(T):
        real = samples.mask[t].reshape(-1) == 1
        count = int(real.sum())
        expected = samples.observations[t].reshape(R * H, OBS)[real]
        np.testing.assert_array_equal(batch.observations[t, :count].numpy(), expected)
        np.testing.assert_array_equal(batch.observations[t, count:].numpy(), 0.0)
    per_row = tf.reduce_sum(batch.observations, axis=-1) + 1.0  # nonzero on every row
    expected = (samples.observations.sum(axis=-1) + 1.0) * samples.mask
    np.testing.assert_allclose(batch.per_step(per_row).numpy(), expected, rtol=1e-12)


def test_unpacked_batch_keeps_the_padded_rows():
    samples = make_samples()
    batch = to_tensor_batch(samples, tf.float64, pack=False)
    assert batch.row_target is None
    np.testing.assert_array_equal(batch.observations.numpy(), samples.observations.reshape(T, R * H, OBS))


ALGOS = {
    "ProMP": lambda p: ProMP(p, inner_lr=0.3, num_inner_grad_steps=1,
                             init_inner_kl_penalty=0.1, clip_eps=0.2),
    "TRPO-MAML-LL": lambda p: TRPOMAML(p, inner_lr=0.3, num_inner_grad_steps=1, inner_type="log_likelihood"),
    "TRPO-MAML-DiCE": lambda p: TRPOMAML(p, inner_lr=0.3, num_inner_grad_steps=1, inner_type="dice"),
}


@pytest.mark.parametrize("name", sorted(ALGOS))
def test_packing_changes_no_loss_or_meta_gradient(name):
    policy = MetaGaussianMLPPolicy(T, OBS, ACT, hidden_sizes=(4,), init_std=0.8, seed=1, dtype=tf.float64)
    algo = ALGOS[name](policy)
    samples = [make_samples(seed) for seed in (1, 2)]
    results = []
    for pack in (True, False):
        batches = [to_tensor_batch(s, tf.float64, require_adjusted_rewards=True, pack=pack) for s in samples]
        with tf.GradientTape() as tape:
            loss, _ = algo.meta_loss(batches)
        grads = tape.gradient(loss, algo.meta_variables)
        results.append((float(loss), np.concatenate([tf.reshape(g, [-1]).numpy() for g in grads])))
    (packed_loss, packed_grad), (padded_loss, padded_grad) = results
    assert np.isfinite(packed_loss) and np.abs(packed_grad).max() > 1e-6
    np.testing.assert_allclose(packed_loss, padded_loss, rtol=1e-10)
    np.testing.assert_allclose(packed_grad, padded_grad, rtol=1e-9, atol=1e-12)


def test_xla_runs_on_the_packed_layout():
    """With XLA, TRPO-MAML packs too: its Gauss-Newton product differentiates the packed rows'
    scatter twice inside one compiled graph, and matches the padded layout without XLA."""
    samples = [make_samples(seed) for seed in (1, 2)]
    products = []
    for jit in (True, False):
        policy = MetaGaussianMLPPolicy(T, OBS, ACT, hidden_sizes=(4,), init_std=0.8, seed=1,
                                       dtype=tf.float64)
        algo = TRPOMAML(policy, inner_lr=0.3, num_inner_grad_steps=1, inner_type="dice", jit_compile=jit)
        if jit:
            batches = algo._check_all_samples(samples)
            assert all(batch.row_target is not None for batch in batches)
        else:
            batches = [to_tensor_batch(s, tf.float64, require_adjusted_rewards=True, pack=False)
                       for s in samples]
        size = sum(int(np.prod(v.shape)) for v in algo.meta_variables)
        vector = tf.constant(np.random.default_rng(5).normal(size=size))
        products.append(algo.optimizer.hvp(batches, vector).numpy())
    assert np.abs(products[1]).max() > 1e-6
    np.testing.assert_allclose(products[0], products[1], rtol=1e-8, atol=1e-12)


def test_a_task_subset_of_a_packed_batch_scatters_its_own_rows():
    """Minibatches gather a subset of tasks from every field: ``per_step`` of the subset must be
    the subset of ``per_step``, so each row's target is relative to its own task."""
    batch = to_tensor_batch(make_samples(), tf.float64)
    per_row = tf.reduce_sum(batch.observations, axis=-1) + 1.0
    full = batch.per_step(per_row).numpy()
    for tasks in ([1], [1, 0], [0]):
        subset = tf.nest.map_structure(
            lambda x: tf.gather(x, tasks, axis=0), batch  # noqa: B023 - used at once
        )
        np.testing.assert_array_equal(subset.per_step(tf.gather(per_row, tasks)).numpy(), full[tasks])


MINIBATCH_ALGOS = {
    "ProMP": lambda p: ProMP(p, inner_lr=0.3, num_inner_grad_steps=1,
                             init_inner_kl_penalty=0.1, clip_eps=0.2, num_minibatches=2),
    "PPO-MAML": lambda p: PPOMAML(p, inner_lr=0.3, num_inner_grad_steps=1,
                                  num_minibatches=2),
}


@pytest.mark.parametrize("name", sorted(MINIBATCH_ALGOS))
def test_minibatch_outer_steps_on_packed_batches_match_the_padded_layout(name):
    """Two task minibatches per epoch on packed batches whose episodes end early take the same
    Adam steps as on the padded layout."""
    samples = [make_samples(seed) for seed in (1, 2)]
    params = []
    for pack in (True, False):
        policy = MetaGaussianMLPPolicy(T, OBS, ACT, hidden_sizes=(4,), init_std=0.8, seed=1,
                                       dtype=tf.float64)
        algo = MINIBATCH_ALGOS[name](policy)
        batches = tuple(to_tensor_batch(s, tf.float64, pack=pack) for s in samples)
        assert (batches[0].row_target is not None) == pack
        algo.optimizer.optimize(batches)
        params.append(np.concatenate([tf.reshape(v, [-1]).numpy() for v in algo.meta_variables]))
    initial = MetaGaussianMLPPolicy(T, OBS, ACT, hidden_sizes=(4,), init_std=0.8, seed=1,
                                    dtype=tf.float64)
    start = np.concatenate([tf.reshape(v, [-1]).numpy() for v in initial.get_params().values()])
    assert np.abs(params[0] - start).max() > 1e-6
    np.testing.assert_allclose(params[0], params[1], rtol=1e-9, atol=1e-12)
