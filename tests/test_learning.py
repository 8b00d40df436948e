"""Learning tests: with a fixed seed and a small config, each algorithm meta-learns 2-D navigation.

Thresholds were set from seeded runs: the post-update return must rise clearly over training
and end above the pre-update return (the inner step adapts the policy to the task). Algorithms in
``RETURN_THRESHOLDS`` must also end above an absolute return that the untrained (random-init)
policy of the same run stays clearly below, before and after its inner step.
"""

import numpy as np
import pytest
import tensorflow as tf

from meta_policy_search.baselines import LinearFeatureBaseline
from meta_policy_search.envs import make_env, normalize
from meta_policy_search.meta_algos import PPOMAML, TRPOMAML, VPGMAML, ProMP
from meta_policy_search.meta_algos.fo_maml import FOMAML
from meta_policy_search.meta_trainer import Trainer
from meta_policy_search.policies import MetaGaussianMLPPolicy
from meta_policy_search.samplers import MetaSampleProcessor, MetaSampler
from meta_policy_search.utils import logger

TASKS, ROLLOUTS, HORIZON = 10, 10, 50

ALGOS = {
    "ProMP": (lambda policy: ProMP(policy, inner_lr=0.1, learning_rate=3e-3,
                                   num_ppo_steps=5, clip_eps=0.3, init_inner_kl_penalty=5e-4,
                                   adaptive_inner_kl_penalty=False), 20),
    "PPO-MAML": (lambda policy: PPOMAML(policy, inner_lr=0.1, learning_rate=3e-3,
                                        num_ppo_steps=5, clip_eps=0.3), 20),
    "TRPO-MAML": (lambda policy: TRPOMAML(policy, inner_lr=0.1, step_size=0.02,
                                          inner_type="log_likelihood"), 20),
    "VPG-MAML": (lambda policy: VPGMAML(policy, inner_lr=0.1, learning_rate=1e-2,
                                        inner_type="log_likelihood"), 20),
    "FO-MAML": (lambda policy: FOMAML(policy, inner_lr=0.1, learning_rate=1e-2), 20),
}

RETURN_THRESHOLDS = {"PPO-MAML": -12.5, "FO-MAML": -12.5}
"""Mean post-update return of the last 3 iterations to beat. Measured (seeds 0, 1, 2): PPO-MAML
ends at -9.1, -9.9, -7.9, FO-MAML at -11.0, -10.0, -9.7; the random-init policy of iteration 0
returns -21.8, -18.3, -17.5 before and -19.8, -16.7, -16.1 after its inner step."""


def run(name, tmp_path, seed=0):
    make_algo, n_itr = ALGOS[name]
    tf.random.set_seed(seed)
    env = normalize(make_env("PointEnvRandGoal"), normalization_scale=10.0)
    policy = MetaGaussianMLPPolicy(TASKS, 2, 2, hidden_sizes=(64, 64), seed=seed)
    sampler = MetaSampler(env, policy, rollouts_per_meta_task=ROLLOUTS,
                          max_path_length=HORIZON, seed=seed)
    processor = MetaSampleProcessor(LinearFeatureBaseline(), discount=0.99, gae_lambda=1.0,
                                    normalize_adv=True)
    history = []
    logger.configure(dir=str(tmp_path), format_strs=["csv"])
    trainer = Trainer(make_algo(policy), env, sampler, processor, policy, n_itr=n_itr,
                      callbacks=[lambda trainer, itr, stats: history.append(
                          (stats["Step_0-AverageReturn"], stats["Step_1-AverageReturn"]))])
    trainer.train()
    return np.array(history)


@pytest.mark.parametrize("name", list(ALGOS))
def test_meta_learning_improves_post_update_return(name, tmp_path):
    history = run(name, tmp_path)
    pre, post = history[:, 0], history[:, 1]
    first, last = post[:3].mean(), post[-3:].mean()
    print(f"{name}: post-update {first:.2f} -> {last:.2f}, pre-update {pre[-3:].mean():.2f}")
    assert last > first + 2.0, f"post-update return did not rise: {first:.2f} -> {last:.2f}"
    assert last > pre[-3:].mean() + 2.0, "adaptation does not help: post-update <= pre-update"
    if name in RETURN_THRESHOLDS:
        threshold = RETURN_THRESHOLDS[name]
        assert max(pre[0], post[0]) < threshold, "the threshold does not separate a random policy"
        assert last > threshold, f"post-update return {last:.2f} below {threshold}"
