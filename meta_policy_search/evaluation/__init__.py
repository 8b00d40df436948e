"""Meta-test evaluation: adapt a policy on held-out tasks for ``0..K`` inner steps.

The protocol of the MAML paper's evaluation (Finn et al. 2017, section 5.3): for every held-out
task, sample with the current (per-task) parameters, record the average return, take one inner
policy-gradient step on those fresh samples, and repeat; ``K`` may exceed the number of inner
steps used in meta-training. The same procedure serves the baselines (a randomly initialised
policy, or a policy pretrained by another run) so the curves are directly comparable.

The package sits above the experiment layer, whose configs and builders rebuild a run; its
module :mod:`~meta_policy_search.evaluation.comparison` holds the MAML paper's meta-test
comparison (the random-init, pretrained and oracle baselines, the step-size schedule, the result
table). Typical use (``experiments/meta_testing.py`` is the command-line front end)::

    config = load_run_config(run_dir, Config)
    setup = build_evaluation(config, make_algo, build_sample_processor, n_tasks=20, seed=7)
    restore_run(run_dir, setup.algo, setup.policy)
    tasks = draw_tasks(setup.env, 20, seed=7)
    results = evaluate_adaptation(setup.algo, setup.policy, setup.sampler,
                                  setup.sample_processor, tasks, num_adapt_steps=3)

Only reading (``params.json``, checkpoints) happens here; writing results is the script's job.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from meta_policy_search.types import Task
from meta_policy_search.utils.validation import check_positive_int

EVAL_SEED_OFFSET = 10_000
"""Default evaluation seed = training seed + this offset, so held-out tasks and episode noise
differ from training's (training derives its seeds from ``seed`` itself)."""


@dataclasses.dataclass
class EvaluationSetup:
    """The components that evaluate one policy (built by :func:`build_evaluation`)."""

    config: Any
    """The run's config with ``meta_batch_size`` set to the number of evaluation tasks."""
    env: Any
    """The (normalized) meta-environment."""
    policy: Any
    """A ``MetaGaussianMLPPolicy`` with one parameter set per evaluation task."""
    sampler: Any
    """A ``MetaSampler`` over ``policy``; call ``sampler.close()`` when done."""
    sample_processor: Any
    """The run's sample processor (advantages for the inner step)."""
    algo: Any
    """The run's meta-algorithm over ``policy``; only its ``adapt_policy`` is used."""


def _check_num_adapt_steps(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"num_adapt_steps must be a non-negative integer (K >= 0), got {value!r}")
    return int(value)


def default_eval_seed(train_seed: int) -> int:
    """The default evaluation seed of a run trained with ``train_seed``.

    Args:
        train_seed: the run's ``seed`` (from ``params.json``).

    Returns:
        ``train_seed + EVAL_SEED_OFFSET``.
    """
    return int(train_seed) + EVAL_SEED_OFFSET


def summarize_returns(task_returns: np.ndarray) -> dict[str, float]:
    """Mean, standard deviation and standard error of per-task average returns.

    Args:
        task_returns: ``[n_tasks]`` average return of each task.

    Returns:
        ``{'mean_return', 'std_return', 'stderr_return'}``: the mean over tasks, the sample
        standard deviation over tasks (``ddof=1``; 0 for a single task) and the standard error
        ``std / sqrt(n_tasks)``.

    Raises:
        ValueError: if ``task_returns`` is not a non-empty 1-D array.
    """
    task_returns = np.asarray(task_returns, dtype=np.float64)
    if task_returns.ndim != 1 or task_returns.size == 0:
        raise ValueError(f"task_returns must be a non-empty [n_tasks] array, got shape "
                         f"{task_returns.shape}")
    n = task_returns.size
    std = float(np.std(task_returns, ddof=1)) if n > 1 else 0.0
    return {
        "mean_return": float(np.mean(task_returns)),
        "std_return": std,
        "stderr_return": std / math.sqrt(n),
    }


def success_rate_lines(results: dict[str, Any]) -> list[str]:
    """Lines giving each policy's success rate per number of inner steps, for a meta-test's
    console table and ``meta_test.md``; none when the env reports no success.

    Args:
        results: ``meta_test.json``'s content (``policies``: label -> the list of
            :func:`evaluate_adaptation`, whose steps carry ``success_rate`` for such envs).

    Returns:
        E.g. ``['Success rate (mean over 10 tasks of the fraction of episodes that succeed):',
        'promp: 0.20, 0.70']``, one value per number of inner steps ``0..K``.
    """
    rows = [(label, [step["success_rate"] for step in steps])
            for label, steps in results["policies"].items()
            if steps and all("success_rate" in step for step in steps)]
    if not rows:
        return []
    header = (f"Success rate after 0..{len(rows[0][1]) - 1} inner steps (mean over "
              f"{results.get('n_tasks')} tasks of the fraction of episodes that succeed):")
    return [header] + [f"{label}: " + ", ".join(f"{rate:.2f}" for rate in rates)
                       for label, rates in rows]


def evaluate_adaptation(
    algo: Any,
    policy: Any,
    sampler: Any,
    sample_processor: Any,
    tasks: Sequence[Task],
    num_adapt_steps: int,
) -> list[dict[str, Any]]:
    """Average return on ``tasks`` after ``0, 1, ..., num_adapt_steps`` inner steps.

    Pseudocode::

        policy.switch_to_pre_update()
        for k in 0..K:
            paths_k = sampler.obtain_samples()          # fresh episodes with theta_k
            record the per-task average return of paths_k
            if k < K: algo.adapt_policy(process(paths_k))     # theta_{k+1} from theta_k

    The shared (trained) parameters are never changed: ``adapt_policy`` only sets per-task parameters,
    and the policy is switched back to its pre-update parameters afterwards (also on error).
    The sampler's tasks are replaced by ``tasks`` and its phase counter advances by ``K + 1``;
    the numbers are a function of the sampler's seed and phase, the tasks and the policy.

    Args:
        algo: a meta-algorithm whose ``adapt_policy(samples)`` sets the policy's per-task parameters;
            built for ``meta_batch_size == len(tasks)``.
        policy: the algorithm's ``MetaGaussianMLPPolicy``.
        sampler: a ``MetaSampler`` over ``policy`` with ``meta_batch_size == len(tasks)``.
        sample_processor: turns a ``PathBatch`` into the ``SampleBatch`` ``algo`` expects.
        tasks: the held-out tasks (e.g. from :func:`draw_tasks`).
        num_adapt_steps: ``K >= 0``; may exceed the algorithm's ``num_inner_grad_steps``.

    Returns:
        ``K + 1`` dicts, one per number of inner steps ``k``, with keys ``num_grad_steps``
        (``k``), ``mean_return``, ``std_return``, ``stderr_return`` (see
        :func:`summarize_returns`), ``n_tasks``, ``task_returns`` (``[n_tasks]`` list: each task's
        undiscounted return averaged over its real episodes) and ``num_env_steps``; for an env
        that reports success (Meta-World) also ``success_rate`` (the mean over tasks) and
        ``task_success_rates`` (see
        :meth:`~meta_policy_search.types.PathBatch.task_success_rates`).

    Raises:
        ValueError: if ``num_adapt_steps < 0``, ``tasks`` is empty, or the number of tasks differs
            from the sampler's ``meta_batch_size``.
    """
    num_adapt_steps = _check_num_adapt_steps(num_adapt_steps)
    tasks = list(tasks)
    if not tasks:
        raise ValueError("tasks must hold at least one task, got an empty sequence")
    if len(tasks) != sampler.meta_batch_size:
        raise ValueError(
            f"got {len(tasks)} tasks but the sampler was built for meta_batch_size="
            f"{sampler.meta_batch_size}; build the components with meta_batch_size=len(tasks)"
        )
    sampler.set_tasks(tasks)
    results: list[dict[str, Any]] = []
    policy.switch_to_pre_update()
    try:
        for step in range(num_adapt_steps + 1):
            paths = sampler.obtain_samples()
            task_returns = paths.task_average_returns()  # over real episodes only
            results.append({
                "num_grad_steps": step,
                **summarize_returns(task_returns),
                "n_tasks": len(tasks),
                "task_returns": [float(r) for r in task_returns],
                "num_env_steps": int(paths.num_env_steps),
            })
            success = paths.task_success_rates()
            if success is not None:
                results[-1]["success_rate"] = float(np.nanmean(success))
                results[-1]["task_success_rates"] = [float(r) for r in success]
            if step < num_adapt_steps:
                algo.adapt_policy(sample_processor.process_samples(paths))
    finally:
        policy.switch_to_pre_update()
    return results


def draw_tasks(env: Any, n_tasks: int, seed: int) -> list[Task]:
    """Draw ``n_tasks`` held-out tasks from ``env``'s test tasks with their own seed.

    The tasks come from ``env.sample_test_tasks``: a benchmark's test split where the env has
    one (Meta-World), else fresh draws from the training distribution. Re-seeds ``env``'s task
    RNG with ``seed`` (executors work on copies of the env, so this does not disturb sampling).

    Args:
        env: a ``MetaEnv`` (possibly normalized).
        n_tasks: number of tasks, positive.
        seed: seed of the task RNG.

    Returns:
        ``n_tasks`` tasks.

    Raises:
        ValueError: if ``n_tasks <= 0``.
    """
    n_tasks = check_positive_int("n_tasks", n_tasks)
    env.seed_tasks(int(seed))
    return list(env.sample_test_tasks(n_tasks))


def read_run_params(run_dir: str) -> dict[str, Any]:
    """Read a run's ``params.json`` as a dict (the config's fields plus ``'algo'``).

    Args:
        run_dir: a run directory written by ``run_experiment``.

    Returns:
        The JSON object.

    Raises:
        FileNotFoundError: if ``run_dir/params.json`` does not exist.
        ValueError: if it does not hold a JSON object.
    """
    from meta_policy_search.experiment.config_values import load_json

    path = os.path.join(run_dir, "params.json")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} not found: {run_dir!r} is not a run directory")
    return load_json(path)


def load_run_config(run_dir: str, config_cls: type) -> Any:
    """Read a run's ``params.json`` into ``config_cls``.

    Args:
        run_dir: a run directory written by ``run_experiment``.
        config_cls: the config dataclass of the run's script.

    Returns:
        A ``config_cls`` instance with the run's values.

    Raises:
        FileNotFoundError: if ``run_dir/params.json`` does not exist.
        ValueError: if it holds keys that are not fields of ``config_cls``.
    """
    from meta_policy_search.experiment.config_values import config_from_dict

    return config_from_dict(config_cls, read_run_params(run_dir))


def build_evaluation(
    config: Any,
    make_algo: Callable[[Any, Any], Any],
    make_sample_processor: Callable[[Any], Any],
    n_tasks: int,
    seed: int,
    rollouts_per_task: int | None = None,
    executor: str | None = None,
    policy_config: Any | None = None,
) -> EvaluationSetup:
    """Build env, policy, sampler, sample processor and algorithm as the run script does.

    Uses the builders of :mod:`meta_policy_search.experiment.runner` on ``config`` with
    ``meta_batch_size = n_tasks`` (the policy and algorithm carry one parameter set per task;
    nothing in a checkpoint depends on it). The policy is freshly initialised: restore it with
    :func:`restore_run` or :func:`restore_policy_params`, or keep it as the random-init baseline.

    Args:
        config: the run's config (see :func:`load_run_config`).
        make_algo: the script's ``make_algo(config, policy)``.
        make_sample_processor: the script's sample processor builder, e.g.
            ``build_sample_processor`` or ``build_dice_sample_processor``.
        n_tasks: number of evaluation tasks, positive.
        seed: evaluation seed; the policy and sampler seeds are derived from it.
        rollouts_per_task: episodes per task and step; ``None``: the run's
            ``rollouts_per_meta_task``.
        executor: the sampler's executor (``iterative``, ``parallel`` or ``ray``); ``None``: the
            run's.
        policy_config: a config whose policy fields (``hidden_sizes``, ``init_std``, ...) shape
            the policy, e.g. another run's for the ``pretrained`` baseline; ``None``: ``config``.

    Returns:
        An :class:`EvaluationSetup`.

    Raises:
        ValueError: if ``n_tasks`` or ``rollouts_per_task`` is not a positive integer.
    """
    from meta_policy_search.experiment.components import (
        build_env,
        build_policy,
        build_sampler,
        derive_seeds,
    )

    updates: dict[str, Any] = {"meta_batch_size": check_positive_int("n_tasks", n_tasks)}
    if rollouts_per_task is not None:
        updates["rollouts_per_meta_task"] = check_positive_int("rollouts_per_task", rollouts_per_task)
        if config.envs_per_task is not None and config.envs_per_task > rollouts_per_task:
            updates["envs_per_task"] = None
    if executor is not None:
        updates["executor"] = executor
    config = dataclasses.replace(config, **updates)
    seeds = derive_seeds(seed)
    env = build_env(config)
    policy_config = config if policy_config is None else dataclasses.replace(
        policy_config, meta_batch_size=config.meta_batch_size
    )
    policy = build_policy(policy_config, env, seeds["policy"])
    sampler = build_sampler(config, env, policy, seeds["sampler"])
    return EvaluationSetup(config, env, policy, sampler, make_sample_processor(config),
                           make_algo(config, policy))


CHECKPOINT_CHOICES = ("latest", "best")
"""Which checkpoint of a run to evaluate: the newest, or the one ``--keep_best`` kept."""


def find_checkpoint_dir(run_dir: str, which: str = "latest") -> str:
    """A checkpoint directory of ``run_dir``, checked to hold a complete checkpoint (found by
    scanning its ``itr_*`` directories, :func:`~meta_policy_search.utils.checkpoint_lookup.find_checkpoint`).

    Args:
        run_dir: a run directory.
        which: ``'latest'`` (``run_dir/checkpoints``, written after every iteration) or
            ``'best'`` (``run_dir/checkpoints_best``, written by ``--keep_best``).

    Returns:
        The checkpoint directory.

    Raises:
        ValueError: if ``which`` is not one of :data:`CHECKPOINT_CHOICES`.
        FileNotFoundError: if it holds no checkpoint.
        CheckpointError: (a ``ValueError``) if it holds checkpoints but none reads back, naming
            the newest one's damaged file.
    """
    from meta_policy_search.best_checkpoint import BEST_DIR_NAME
    from meta_policy_search.utils.checkpoint_lookup import CheckpointError, find_checkpoint

    if which not in CHECKPOINT_CHOICES:
        raise ValueError(f"checkpoint must be one of {CHECKPOINT_CHOICES}, got {which!r}")
    if which == "best":
        checkpoint_dir = os.path.join(run_dir, BEST_DIR_NAME)
        hint = "train it with --keep_best Step_1-AverageReturn (it keeps the best iteration)"
    else:
        checkpoint_dir = os.path.join(run_dir, "checkpoints")
        hint = "train the run first (the Trainer saves one after every iteration)"
    lookup = find_checkpoint(checkpoint_dir)
    if lookup.path is None and lookup.damaged:
        raise CheckpointError(f"no checkpoint in {checkpoint_dir!r} reads back: "
                              f"{lookup.damaged[0]}")
    if lookup.path is None:
        raise FileNotFoundError(f"no complete checkpoint in {checkpoint_dir!r}: {hint}")
    return checkpoint_dir


def restore_run(run_dir: str, algo: Any, policy: Any, which: str = "latest") -> int:
    """Restore a checkpoint of ``run_dir`` into ``algo`` and ``policy``.

    Restores what the Trainer saved from ``algo.checkpoint_state()`` (policy parameters, inner
    step sizes, optimizer and algorithm state) and the policy parameters.

    Args:
        run_dir: the run directory.
        algo: built with the run's config (see :func:`build_evaluation`).
        policy: ``algo``'s policy.
        which: ``'latest'`` or ``'best'`` (see :func:`find_checkpoint_dir`).

    Returns:
        The iteration of the restored checkpoint.

    Raises:
        FileNotFoundError: if the run has no complete checkpoint.
    """
    from meta_policy_search.meta_trainer import checkpoint_trackables
    from meta_policy_search.utils.checkpoint import restore_checkpoint

    state = restore_checkpoint(find_checkpoint_dir(run_dir, which),
                               checkpoint_trackables(algo, policy))
    return int(state["itr"])


def restore_policy_params(run_dir: str, policy: Any) -> int:
    """Restore only the policy parameters of ``run_dir``'s newest checkpoint into ``policy``.

    For the ``pretrained`` baseline: a policy trained by another run (any algorithm, or without
    meta-learning) adapted with the evaluated run's algorithm.

    Args:
        run_dir: a run directory whose checkpoint holds ``policy_params`` of the same shapes.
        policy: a policy with the other run's architecture.

    Returns:
        The iteration of the restored checkpoint.

    Raises:
        FileNotFoundError: if the run has no complete checkpoint.
    """
    from meta_policy_search.utils.checkpoint import restore_checkpoint

    state = restore_checkpoint(find_checkpoint_dir(run_dir),
                               {"policy_params": dict(policy.get_params())})
    return int(state["itr"])
