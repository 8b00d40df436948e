"""Meta-test evaluation: adapt a policy on held-out tasks for ``0..K`` inner steps.

The protocol of the MAML paper's evaluation (Finn et al. 2017, section 5.3): for every held-out
task, sample with the current (per-task) parameters, record the average return, take one inner
policy-gradient step on those fresh samples, and repeat; ``K`` may exceed the number of inner
steps used in meta-training. The same procedure serves the baselines (a randomly initialised
policy, or a policy pretrained by another run) so the curves are directly comparable.

The package sits above the experiment layer, whose configs and builders rebuild a run. Its
modules: :mod:`~meta_policy_search.evaluation.adaptation` (the protocol),
:mod:`~meta_policy_search.evaluation.setup` (the components, built as the run script builds
them), :mod:`~meta_policy_search.evaluation.run_loading` (a run's config and checkpoints),
:mod:`~meta_policy_search.evaluation.comparison` (the MAML paper's meta-test comparison: the
random-init, pretrained and oracle baselines, the step-size schedule, the result table). This
package only names their public functions. Typical use (``experiments/meta_testing.py`` is the
command-line front end)::

    config = load_run_config(run_dir, Config)
    setup = build_evaluation(config, make_algo, build_sample_processor, n_tasks=20, seed=7)
    restore_run(run_dir, setup.algo, setup.policy)
    tasks = draw_tasks(setup.env, 20, seed=7)
    results = evaluate_adaptation(setup.algo, setup.policy, setup.sampler,
                                  setup.sample_processor, tasks, num_adapt_steps=3)

Only reading (``params.json``, checkpoints) happens here; writing results is the script's job.
"""

from meta_policy_search.evaluation.adaptation import (
    EVAL_SEED_OFFSET,
    default_eval_seed,
    draw_tasks,
    evaluate_adaptation,
    success_rate_lines,
    summarize_returns,
)
from meta_policy_search.evaluation.run_loading import (
    CHECKPOINT_CHOICES,
    checkpoint_choice,
    find_checkpoint_dir,
    load_run_config,
    read_run_params,
    restore_policy_params,
    restore_run,
)
from meta_policy_search.evaluation.setup import EvaluationSetup, build_evaluation

__all__ = [
    "CHECKPOINT_CHOICES",
    "EVAL_SEED_OFFSET",
    "EvaluationSetup",
    "build_evaluation",
    "checkpoint_choice",
    "default_eval_seed",
    "draw_tasks",
    "evaluate_adaptation",
    "find_checkpoint_dir",
    "load_run_config",
    "read_run_params",
    "restore_policy_params",
    "restore_run",
    "success_rate_lines",
    "summarize_returns",
]
