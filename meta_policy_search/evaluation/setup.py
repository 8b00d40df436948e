"""Building the components that evaluate one policy, as the run script builds them.

:func:`build_evaluation` rebuilds a run's env, policy, sampler, sample processor and
meta-algorithm from its config, sized for the evaluation tasks; the policy is fresh until a
checkpoint is restored into it (:mod:`~meta_policy_search.evaluation.run_loading`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from meta_policy_search.experiment.components import (
    build_env,
    build_policy,
    build_sampler,
    derive_seeds,
)
from meta_policy_search.utils.validation import check_positive_int


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
    :func:`~meta_policy_search.evaluation.run_loading.restore_run` or
    :func:`~meta_policy_search.evaluation.run_loading.restore_policy_params`, or keep it as the
    random-init baseline.

    Args:
        config: the run's config (see
            :func:`~meta_policy_search.evaluation.run_loading.load_run_config`).
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
