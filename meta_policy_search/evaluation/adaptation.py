"""The meta-test protocol: adapt a policy on held-out tasks for ``0..K`` inner steps.

The protocol of the MAML paper's evaluation (Finn et al. 2017, section 5.3): for every held-out
task, sample with the current (per-task) parameters, record the average return, take one inner
policy-gradient step on those fresh samples, and repeat (:func:`evaluate_adaptation`); ``K`` may
exceed the number of inner steps used in meta-training. The held-out tasks have their own seed
(:func:`draw_tasks`, :func:`default_eval_seed`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from meta_policy_search.types import Task
from meta_policy_search.utils.validation import check_positive_int

EVAL_SEED_OFFSET = 10_000
"""Default evaluation seed = training seed + this offset, so held-out tasks and episode noise
differ from training's (training derives its seeds from ``seed`` itself)."""


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
