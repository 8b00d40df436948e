"""Meta-train ProMP from Python, then load its checkpoint and evaluate the adapted policy.

Run it from the repository root (about a minute on 2 cores)::

    python docs/examples/from_python.py

``tests/test_docs_examples.py`` runs it, so the code on the "From Python" page cannot rot.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any


def build(meta_batch_size: int, seed: int) -> tuple[Any, ...]:
    """The components of a ProMP run on the MAML paper's 2-D navigation task.

    Returns:
        ``(env, policy, sampler, sample_processor, algo)``, one parameter set per task.
    """
    from meta_policy_search.baselines import LinearFeatureBaseline
    from meta_policy_search.envs import make_env, normalize
    from meta_policy_search.meta_algos import ProMP
    from meta_policy_search.policies import MetaGaussianMLPPolicy
    from meta_policy_search.samplers import MetaSampleProcessor, MetaSampler

    env = normalize(make_env("PointEnvRandGoal"))
    env.seed_tasks(seed)
    policy = MetaGaussianMLPPolicy(
        meta_batch_size=meta_batch_size, obs_dim=env.observation_space.shape[0],
        action_dim=env.action_space.shape[0], hidden_sizes=(32, 32), seed=seed,
    )
    # The sampler and the algorithm read the number of tasks from the policy.
    sampler = MetaSampler(env=env, policy=policy, rollouts_per_meta_task=10, max_path_length=50,
                          parallel=False, seed=seed)
    processor = MetaSampleProcessor(baseline=LinearFeatureBaseline(), discount=0.99)
    # The paper's ProMP settings (also the class's defaults), spelled out, except the outer
    # learning rate: the default is 1e-3, this short example takes 1e-2. The Trainer takes the
    # number of inner steps from the algorithm.
    algo = ProMP(policy=policy, inner_lr=0.1, num_inner_grad_steps=1, learning_rate=1e-2,
                 num_ppo_steps=5, clip_eps=0.3, init_inner_kl_penalty=5e-4,
                 adaptive_inner_kl_penalty=False)
    return env, policy, sampler, processor, algo


def train(run_dir: str, n_itr: int = 20, seed: int = 1) -> None:
    """Meta-train for ``n_itr`` iterations; checkpoints go to ``run_dir/checkpoints``."""
    from meta_policy_search.meta_trainer import Trainer
    from meta_policy_search.utils import logger

    logger.configure(dir=run_dir, format_strs=("csv",))  # run_dir/progress.csv
    env, policy, sampler, processor, algo = build(meta_batch_size=10, seed=seed)
    Trainer(algo=algo, env=env, sampler=sampler, sample_processor=processor, policy=policy,
            n_itr=n_itr,
            checkpoint_dir=os.path.join(run_dir, "checkpoints")).train()
    sampler.close()


def evaluate(run_dir: str, n_tasks: int = 10, num_adapt_steps: int = 2,
             seed: int = 10_001) -> list[dict[str, Any]]:
    """Restore the checkpoint and adapt on held-out tasks for ``0..num_adapt_steps`` steps.

    Returns:
        Per number of inner steps, ``mean_return``, ``std_return`` (over tasks) and more
        (:func:`~meta_policy_search.evaluation.adaptation.evaluate_adaptation`).
    """
    from meta_policy_search import evaluation

    env, policy, sampler, processor, algo = build(meta_batch_size=n_tasks, seed=seed)
    itr = evaluation.restore_run(run_dir, algo, policy)
    tasks = evaluation.draw_tasks(env, n_tasks, seed)
    results = evaluation.evaluate_adaptation(algo, policy, sampler, processor, tasks,
                                             num_adapt_steps)
    print(f"checkpoint of iteration {itr}, {n_tasks} held-out tasks:")
    for step in results:
        print(f"  after {step['num_grad_steps']} inner steps: {step['mean_return']:.1f} "
              f"+- {step['std_return']:.1f} (mean +- std over tasks)")

    # The adapted policy itself: one inner step on fresh episodes, then act with it.
    sampler.set_tasks(tasks)
    policy.switch_to_pre_update()
    algo.adapt_policy(processor.process_samples(sampler.obtain_samples()))
    adapted = sampler.obtain_samples()  # PathBatch of the adapted policies, [T, R, H, ...]
    last = adapted.mask.sum(axis=-1).astype(int) - 1  # each episode's last real step
    final_positions = adapted.observations[0, range(last.shape[1]), last[0]]
    print(f"task 0, goal {tasks[0]}: the adapted policy's episodes end near "
          f"{final_positions.mean(0)}")
    sampler.close()
    return results


def evaluate_script_run(run_dir: str, n_tasks: int = 10, num_adapt_steps: int = 3,
                        seed: int = 10_001) -> list[dict[str, Any]]:
    """The same for a run directory of a run script (its ``params.json`` says how)."""
    from meta_policy_search import evaluation
    from meta_policy_search.experiment.registry import algorithm_for_run_name

    params = evaluation.read_run_params(run_dir)
    algorithm = algorithm_for_run_name(params["algo"])
    config_cls, make_algo, make_sample_processor = algorithm.load()
    config = evaluation.load_run_config(run_dir, config_cls)
    setup = evaluation.build_evaluation(config, make_algo, make_sample_processor,
                                        n_tasks=n_tasks, seed=seed)
    try:
        evaluation.restore_run(run_dir, setup.algo, setup.policy)
        tasks = evaluation.draw_tasks(setup.env, n_tasks, seed)
        return evaluation.evaluate_adaptation(
            setup.algo, setup.policy, setup.sampler, setup.sample_processor, tasks,
            num_adapt_steps)
    finally:
        setup.sampler.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as run_dir:
        train(run_dir)
        evaluate(run_dir)
