"""The MAML paper's meta-test comparison: its baselines, step-size schedule and result tables.

Finn et al. (2017, section 5.3) compare a meta-learned policy, adapted for ``0..N`` gradient
steps on held-out tasks, with three baselines adapted the same way on the same tasks:

* ``random-init``: a freshly initialised policy of the same architecture;
* ``pretrained``: a policy trained on all tasks without adaptation (a run with
  ``--num_inner_grad_steps 0``: plain TRPO / PPO on the task mixture);
* ``oracle``: a policy that sees the task parameters in its observation (a run with
  ``--oracle true``, :class:`~meta_policy_search.envs.oracle_env.OracleEnv`), evaluated on the
  oracle env.

Their evaluation took the first gradient step with step size 0.1 and later ones with 0.05
(:class:`ScheduledStepSizes`); ``meta_testing.py`` uses that schedule only when asked and
otherwise adapts with the evaluated run's own step sizes. ``experiments/meta_testing.py`` runs the
comparison; this module holds the parts that do not depend on a run script. (These baselines are
policies to compare with, unrelated to the value baselines of :mod:`meta_policy_search.baselines`.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from meta_policy_search.evaluation.adaptation import success_rate_lines

DEFAULT_FIRST_STEP_SIZE = 0.1
"""Step size of the first adaptation step in the MAML paper's evaluation."""
DEFAULT_LATER_STEP_SIZE = 0.05
"""Step size of every later adaptation step in the MAML paper's evaluation."""


def check_step_size(name: str, value: Any) -> float:
    """Return ``value`` as a float after checking it is a finite number > 0.

    Raises:
        ValueError: naming ``name`` and the bad value.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


class ScheduledStepSizes:
    """An algorithm whose ``k``-th inner step uses ``first_step_size`` (``k = 0``) or
    ``later_step_size`` (``k >= 1``) for every parameter.

    Wraps a meta-algorithm for :func:`~meta_policy_search.evaluation.adaptation.evaluate_adaptation`, which
    calls ``adapt_policy`` once per adaptation step. Use it as a context manager: on exit the
    algorithm's own step sizes (e.g. a Meta-SGD run's learned ones) are put back::

        with ScheduledStepSizes(setup.algo, 0.1, 0.05) as algo:
            evaluate_adaptation(algo, setup.policy, ...)

    Args:
        algo: a :class:`~meta_policy_search.meta_algos.base.MAMLAlgo` (its ``step_sizes``
            variables are overwritten before each step).
        first_step_size: step size of the first inner step, > 0.
        later_step_size: step size of every later inner step, > 0.

    Raises:
        ValueError: on a step size that is not a finite number > 0.
    """

    def __init__(self, algo: Any, first_step_size: float, later_step_size: float) -> None:
        self.algo = algo
        self.first_step_size = check_step_size("first_step_size", first_step_size)
        self.later_step_size = check_step_size("later_step_size", later_step_size)
        self.num_steps_taken = 0
        """Inner steps taken so far through ``adapt_policy``."""
        self._saved: dict[str, np.ndarray] | None = None

    def step_size(self, step: int) -> float:
        """The step size of inner step ``step`` (0-based)."""
        return self.first_step_size if step == 0 else self.later_step_size

    def __enter__(self) -> ScheduledStepSizes:
        self._saved = {name: var.numpy() for name, var in self.algo.step_sizes.items()}
        self.num_steps_taken = 0
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._saved is not None:
            for name, value in self._saved.items():
                self.algo.step_sizes[name].assign(value)
            self._saved = None

    def adapt_policy(self, samples: Any) -> None:
        """The wrapped algorithm's inner step with this step's size (see the class docstring).

        Raises:
            RuntimeError: if called outside the ``with`` block (the step sizes would not be
                restored).
        """
        if self._saved is None:
            raise RuntimeError("use ScheduledStepSizes as a context manager: `with ... as algo:`")
        alpha = self.step_size(self.num_steps_taken)
        for variable in self.algo.step_sizes.values():
            variable.assign(np.full(variable.shape, alpha, variable.dtype.as_numpy_dtype))
        self.algo.adapt_policy(samples)
        self.num_steps_taken += 1


def check_baseline_params(
    flag: str, params: Mapping[str, Any], env: str, oracle: bool | None = None
) -> None:
    """Check that a baseline run fits the evaluated run: same env, the oracle setting expected.

    Args:
        flag: the command-line flag that named the run (for the message), e.g.
            ``'--oracle_run runs/x'``.
        params: the baseline run's ``params.json``.
        env: the evaluated run's env.
        oracle: the ``oracle`` value the run must have; ``None``: any.

    Raises:
        ValueError: naming the flag, the run's value and the one expected.
    """
    if params.get("env") != env:
        raise ValueError(f"{flag}: the run's env is {params.get('env')!r}, expected {env!r} "
                         "(the evaluated run's env)")
    if oracle is not None and bool(params.get("oracle", False)) != oracle:
        hint = "train it with --oracle true" if oracle else "it must not be an --oracle true run"
        raise ValueError(f"{flag}: the run has oracle={bool(params.get('oracle', False))}, "
                         f"expected oracle={oracle}; {hint}")


def pretrained_budget_note(params: Mapping[str, Any], evaluated: Mapping[str, Any]) -> str | None:
    """A warning if a ``pretrained`` run sampled fewer environment steps than the evaluated run.

    A run with ``K`` inner steps samples ``K + 1`` batches per iteration, a
    ``--num_inner_grad_steps 0`` run one: the same budget needs ``(K + 1) x n_itr`` iterations.

    Args:
        params: the pretrained run's ``params.json``.
        evaluated: the evaluated run's ``params.json``.

    Returns:
        The warning, or ``None`` if the nominal budgets (``n_itr x (K + 1) x meta_batch_size x
        rollouts_per_meta_task``) agree within 1 %.
    """
    def budget(p: Mapping[str, Any]) -> float:
        return float(p["n_itr"]) * (int(p["num_inner_grad_steps"]) + 1) * \
            int(p["meta_batch_size"]) * int(p["rollouts_per_meta_task"]) * \
            int(p.get("max_path_length") or 1)

    ours, theirs = budget(evaluated), budget(params)
    if abs(theirs - ours) <= 0.01 * ours:
        return None
    return (f"the pretrained run's nominal sample budget ({theirs:.3g} steps) differs from the "
            f"evaluated run's ({ours:.3g}); a --num_inner_grad_steps 0 run needs "
            f"{int(evaluated['num_inner_grad_steps']) + 1} x n_itr iterations to match")


def to_markdown(results: Mapping[str, Any]) -> str:
    """A markdown table: one row per policy, ``mean +- std`` over tasks per number of steps.

    Args:
        results: ``meta_test.json``'s content (``policies``: label -> the list of
            :func:`~meta_policy_search.evaluation.adaptation.evaluate_adaptation`).

    Returns:
        The table, followed by a line with the settings (tasks, step sizes, seed) and, for an
        env that reports success (Meta-World), the success rates.
    """
    policies = results["policies"]
    num_steps = max(len(steps) for steps in policies.values())
    header = ["policy"] + [f"{k} step{'' if k == 1 else 's'}" for k in range(num_steps)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, steps in policies.items():
        cells = [f"{s['mean_return']:.2f} +- {s['std_return']:.2f}" for s in steps]
        lines.append("| " + " | ".join([label] + cells) + " |")
    settings = [f"{results.get('n_tasks')} held-out tasks", f"seed {results.get('seed')}",
                step_size_description(results)]
    lines += ["", "Average return, mean +- std over tasks; " + ", ".join(settings) + "."]
    success = success_rate_lines(dict(results))
    if success:
        lines += ["", success[0], ""] + [f"* {line}" for line in success[1:]]
    return "\n".join(lines) + "\n"


def step_size_description(results: Mapping[str, Any]) -> str:
    """The inner step sizes of a meta-test, in words, from ``meta_test.json``'s content.

    Returns:
        ``'step size 0.1 for the first step, 0.05 for later ones'`` for a schedule given on the
        command line, else ``"the run's own step sizes (inner_lr 0.05)"`` (``"the run's learned
        step sizes ..."`` for a ``trainable_inner_step_size`` run).
    """
    if results.get("first_step_size") is not None:
        return (f"step size {results['first_step_size']} for the first step, "
                f"{results['later_step_size']} for later ones")
    if results.get("trainable_inner_step_size"):
        return f"the run's learned step sizes (initial inner_lr {results.get('inner_lr')})"
    return f"the run's own step sizes (inner_lr {results.get('inner_lr')})"
