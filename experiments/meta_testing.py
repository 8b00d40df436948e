"""Meta-test evaluation of a trained run: return after 0..K inner steps on held-out tasks.

Usage::

    python experiments/meta_testing.py data/promp/HalfCheetahRandDirecEnv/run_x --n_tasks 20
    python experiments/meta_testing.py RUN_DIR --num_adapt_steps 5 --pretrained_run OTHER_RUN_DIR
    python experiments/meta_testing.py RUN_DIR --pretrained_run PRETRAINED_DIR --oracle_run ORACLE_DIR

Rebuilds the run's env, policy, sampler and algorithm from its ``params.json`` (with the builders
of its script, found from the ``algo`` key; a user env ``"env": "mypkg.tasks:MyEnv"`` is imported
again, from ``sys.path`` or the working directory), restores the newest checkpoint, draws ``--n_tasks``
tasks with the evaluation seed (default: the run's seed + 10000) and adapts for
``0..--num_adapt_steps`` inner steps with fresh samples each step
(:func:`meta_policy_search.evaluation.adaptation.evaluate_adaptation`). The same tasks and episode seeds are
used for the baselines: ``random-init`` (a fresh policy of the same config) and, with
``--pretrained_run``, another run's policy, both adapted with the evaluated run's algorithm;
with ``--oracle_run``, the policy of an ``--oracle true`` run (the task parameters appended to its
observations), evaluated and adapted on the oracle env. These are the MAML paper's baselines
(:mod:`meta_policy_search.evaluation.comparison`). Train them with the evaluated run's script and
settings plus:

* pretrained: ``--num_inner_grad_steps 0 --n_itr (K+1)*N`` for a run of ``N`` iterations with
  ``K`` inner steps (one batch per iteration instead of ``K + 1``: the same sample budget);
* oracle: ``--oracle true`` (any ``--num_inner_grad_steps``; ``0`` gives the paper's oracle, a
  policy trained on the task mixture with the task in its input).

Every inner step uses the evaluated run's own step sizes, as in training: its ``params.json``
``inner_lr`` (a ``trainable_inner_step_size`` run adapts with its learned ones, its baselines
with its ``inner_lr``). Give
``--first_step_size 0.1 --later_step_size 0.05`` for the MAML paper's evaluation schedule (one
of the two alone: the other takes the paper's value).

The console table, ``meta_test.md`` and the plot's error bars give the average return as
mean +- std over tasks (``--error_bars stderr``: standard errors in the plot); ``meta_test.csv``
and ``meta_test.json`` also hold the standard error.

Writes ``meta_test.json``, ``meta_test.csv``, ``meta_test.md`` and ``meta_test.png`` into
``--output_dir`` (default ``RUN_DIR/meta_test``) and prints a table.

Meta-World runs (``ML10``, ``ML1-<env>``) can instead be meta-tested by the benchmark's own
protocol, as Meta-World+ runs it (:mod:`meta_policy_search.evaluation.metaworld_protocol`)::

    python experiments/meta_testing.py RUN_DIR --protocol metaworld --splits test train

It adapts on ``meta_batch_size`` 20 goals at a time (10 episodes, one inner step) and counts
success over 3 deterministic evaluation episodes per env class, every test goal once; it writes
``metaworld_protocol.json``, ``metaworld_success.csv`` and ``metaworld_success.md`` (the success
rate per env class and split, for the run's policy and the random-init baseline).
``--protocol_settings '{"num_evals": 1, "max_path_length": 50}'`` changes the protocol's settings
(for quick checks; the tables then say that they do not follow the protocol).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from meta_policy_search import evaluation
from meta_policy_search.envs.env_spec import search_working_directory
from meta_policy_search.evaluation import comparison, metaworld_protocol
from meta_policy_search.experiment.config_values import ConfigError, config_from_dict
from meta_policy_search.experiment.configs import EXECUTORS, MetaRLConfig
from meta_policy_search.experiment.exit_codes import EPILOG, run_script
from meta_policy_search.experiment.registry import algorithm_for_run_name
from meta_policy_search.experiment.run_checks import check_writable_dir
from meta_policy_search.experiment.script_help import DefaultsOnceHelpFormatter
from meta_policy_search.utils.serialization import atomic_write_bytes, atomic_write_json

CSV_FIELDS = ("policy", "num_grad_steps", "mean_return", "std_return", "stderr_return",
              "n_tasks", "num_env_steps", "success_rate")


def script_builders(algo_name: str) -> tuple[type, Any, Any]:
    """The config class, ``make_algo`` and sample processor builder of a run's algorithm.

    Args:
        algo_name: the ``algo`` key of ``params.json`` (a run script's name, see
            :mod:`algorithms`).

    Returns:
        ``(config_cls, make_algo, make_sample_processor)``.

    Raises:
        ValueError: if no run script has that name.
    """
    return algorithm_for_run_name(algo_name).load()


def _jsonable_task(task: Any) -> Any:
    if isinstance(task, dict):
        return {str(k): _jsonable_task(v) for k, v in task.items()}
    try:
        return np.asarray(task, dtype=np.float64).tolist()
    except (TypeError, ValueError):
        return repr(task)


def evaluate_run(
    run_dir: str,
    n_tasks: int = 20,
    num_adapt_steps: int = 3,
    seed: int | None = None,
    rollouts_per_task: int | None = None,
    executor: str | None = None,
    random_init: bool = True,
    pretrained_run: str | None = None,
    oracle_run: str | None = None,
    first_step_size: float | None = None,
    later_step_size: float | None = None,
    checkpoint: str = "latest",
) -> dict[str, Any]:
    """Evaluate a run and its baselines on the same held-out tasks.

    Args:
        run_dir: directory with ``params.json`` and ``checkpoints/``.
        n_tasks: number of held-out tasks, positive.
        num_adapt_steps: ``K >= 0``.
        seed: evaluation seed; ``None``: :func:`meta_policy_search.evaluation.adaptation.default_eval_seed`.
        rollouts_per_task: episodes per task and step; ``None``: the run's.
        executor: the sampler's executor (``iterative``, ``parallel`` or ``ray``); ``None``: the
            run's.
        random_init: also evaluate a freshly initialised policy.
        pretrained_run: also evaluate this run's policy (restored policy parameters only).
        oracle_run: also evaluate this ``--oracle true`` run's policy on the oracle env.
        first_step_size: step size of the first inner step; ``None`` (and ``later_step_size``
            ``None``): the run's own step sizes for every step.
        later_step_size: step size of the later inner steps; ``None`` with a
            ``first_step_size``: :data:`~meta_policy_search.evaluation.comparison.DEFAULT_LATER_STEP_SIZE`.
        checkpoint: which checkpoint of ``run_dir`` to evaluate: ``'latest'``, ``'best'`` (the
            iteration with the best ``--keep_best`` return, as the MAML paper evaluated) or an
            iteration kept by ``--keep_every``.

    Returns:
        The content of ``meta_test.json``: settings, ``tasks`` and ``policies`` (label -> the
        list returned by ``evaluate_adaptation``).

    Raises:
        ValueError: on ``n_tasks <= 0``, ``num_adapt_steps < 0``, a step size that is not > 0,
            an unknown algorithm, or a baseline run of another env (or without ``oracle`` for
            ``oracle_run``).
        FileNotFoundError: if a run directory lacks ``params.json`` or a checkpoint.
    """
    from meta_policy_search.utils.quiet_tf import import_tensorflow

    if isinstance(n_tasks, bool) or not isinstance(n_tasks, int) or n_tasks <= 0:
        raise ValueError(f"n_tasks must be a positive integer, got {n_tasks!r}")
    if isinstance(num_adapt_steps, bool) or not isinstance(num_adapt_steps, int) \
            or num_adapt_steps < 0:
        raise ValueError(f"num_adapt_steps must be a non-negative integer, got {num_adapt_steps!r}")
    params, config = check_runs(run_dir, pretrained_run, oracle_run, checkpoint)
    _, make_algo, make_sample_processor = script_builders(str(params.get("algo")))
    tf = import_tensorflow()  # after every check: a bad run directory fails at once
    schedule = None
    if first_step_size is not None or later_step_size is not None:
        schedule = (
            comparison.check_step_size(
                "first_step_size", comparison.DEFAULT_FIRST_STEP_SIZE
                if first_step_size is None else first_step_size),
            comparison.check_step_size(
                "later_step_size", comparison.DEFAULT_LATER_STEP_SIZE
                if later_step_size is None else later_step_size),
        )
    notes = []
    # (label, env config, policy config, run to restore the policy parameters from)
    runs: list[tuple[str, Any, Any, str | None]] = [(str(params.get("algo")), config, None, None)]
    if random_init:
        runs.append(("random-init", config, None, None))
    for label, other_run, oracle in (("pretrained", pretrained_run, False),
                                     ("oracle", oracle_run, True)):
        if other_run is None:
            continue
        other = evaluation.read_run_params(other_run)
        if label == "pretrained":
            note = comparison.pretrained_budget_note(other, params)
            notes += [f"pretrained: {note}"] if note else []
        env_config = dataclasses.replace(config, oracle=True) if oracle else config
        runs.append((label, env_config, _metarl_config(other), other_run))
    seed = evaluation.default_eval_seed(config.seed) if seed is None else int(seed)
    # Script-level seeding, as in training (nothing here draws from it, but TF ops may).
    tf.random.set_seed(seed)

    results: dict[str, Any] = {
        "run_dir": os.path.abspath(run_dir),
        "algo": params.get("algo"),
        "env": config.env,
        "seed": seed,
        "n_tasks": n_tasks,
        "num_adapt_steps": num_adapt_steps,
        "rollouts_per_task": rollouts_per_task or config.rollouts_per_meta_task,
        "max_path_length": config.max_path_length,
        "inner_lr": config.inner_lr,
        "trainable_inner_step_size": config.trainable_inner_step_size,
        "pretrained_run": None if pretrained_run is None else os.path.abspath(pretrained_run),
        "oracle_run": None if oracle_run is None else os.path.abspath(oracle_run),
        "first_step_size": None if schedule is None else schedule[0],
        "later_step_size": None if schedule is None else schedule[1],
        "checkpoint": checkpoint,
        "notes": notes,
        "policies": {},
    }
    tasks = None
    for index, (label, env_config, policy_config, source) in enumerate(runs):
        setup = evaluation.build_evaluation(env_config, make_algo, make_sample_processor, n_tasks,
                                            seed, rollouts_per_task, executor, policy_config)
        try:
            if tasks is None:
                tasks = evaluation.draw_tasks(setup.env, n_tasks, seed)
                results["tasks"] = [_jsonable_task(task) for task in tasks]
            if index == 0:
                results["checkpoint_itr"] = evaluation.restore_run(run_dir, setup.algo,
                                                                   setup.policy, checkpoint)
            elif source is not None:
                results[f"{label}_itr"] = evaluation.restore_policy_params(source, setup.policy)
            results["policies"][label] = _adapt_and_evaluate(setup, tasks, num_adapt_steps,
                                                             schedule)
        finally:
            setup.sampler.close()
    return results


def check_runs(
    run_dir: str,
    pretrained_run: str | None = None,
    oracle_run: str | None = None,
    checkpoint: str = "latest",
) -> tuple[dict[str, Any], Any]:
    """Check the evaluated run and the baseline runs without TensorFlow, before building anything.

    Each run needs a readable ``params.json`` of a known algorithm and a checkpoint; a user env
    (``"env": "mypkg.tasks:MyEnv"``) must still import; a baseline run must be of the evaluated
    run's env, the ``oracle_run`` an ``--oracle true`` run, the ``pretrained_run`` not.

    Args:
        run_dir: the evaluated run directory.
        pretrained_run: the pretrained baseline's run directory, or ``None``.
        oracle_run: the oracle baseline's run directory, or ``None``.
        checkpoint: ``'latest'``, ``'best'`` or a kept iteration number (of ``run_dir``).

    Returns:
        ``(params, config)``: the evaluated run's ``params.json`` and its config.

    Raises:
        ValueError: naming the run and the problem.
        FileNotFoundError: if a run directory lacks ``params.json`` or a checkpoint.
    """
    from meta_policy_search.envs.env_spec import EnvSpecError, is_env_spec, load_env_class

    params = evaluation.read_run_params(run_dir)
    config_cls, _, _ = script_builders(str(params.get("algo")))
    config = config_from_dict(config_cls, params,
                              source=os.path.join(run_dir, "params.json"))
    evaluation.find_checkpoint_dir(run_dir, checkpoint)
    if is_env_spec(config.env):
        try:
            load_env_class(config.env)
        except EnvSpecError as error:
            raise ValueError(f"{run_dir}: its env {config.env}: {error.reason}") from None
    for label, other_run, oracle in (("pretrained", pretrained_run, False),
                                     ("oracle", oracle_run, True)):
        if other_run is not None:
            other = evaluation.read_run_params(other_run)
            comparison.check_baseline_params(f"--{label}_run {other_run}", other,
                                                      config.env, oracle)
            _metarl_config(other)
            evaluation.find_checkpoint_dir(other_run)
    return params, config


def _metarl_config(params: dict[str, Any]) -> MetaRLConfig:
    """A baseline run's common config fields (its policy architecture), whatever its script."""
    fields = {f.name for f in dataclasses.fields(MetaRLConfig)}
    return config_from_dict(MetaRLConfig, {k: v for k, v in params.items() if k in fields})


def _adapt_and_evaluate(setup: evaluation.EvaluationSetup, tasks: list[Any],
                        num_adapt_steps: int, schedule: tuple[float, float] | None) -> Any:
    if schedule is None:
        return evaluation.evaluate_adaptation(setup.algo, setup.policy, setup.sampler,
                                              setup.sample_processor, tasks, num_adapt_steps)
    with comparison.ScheduledStepSizes(setup.algo, *schedule) as algo:
        return evaluation.evaluate_adaptation(algo, setup.policy, setup.sampler,
                                              setup.sample_processor, tasks, num_adapt_steps)


def to_csv(results: dict[str, Any]) -> str:
    """One CSV row per (policy, number of inner steps) with the columns :data:`CSV_FIELDS`
    (``success_rate`` empty for an env that reports no success)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(CSV_FIELDS), lineterminator="\n")
    writer.writeheader()
    for label, steps in results["policies"].items():
        for step in steps:
            writer.writerow({"policy": label, **{k: step.get(k, "") for k in CSV_FIELDS[1:]}})
    return buffer.getvalue()


def format_table(results: dict[str, Any]) -> str:
    """A text table: one row per policy, ``mean +- std`` over tasks per number of inner steps
    (the statistics of ``meta_test.md``), then a line saying so and which step sizes were used,
    then the success rates of an env that reports success (Meta-World)."""
    num_steps = results["num_adapt_steps"] + 1
    header = ["policy"] + [f"{k} step{'s' if k != 1 else ''}" for k in range(num_steps)]
    rows = [header] + [
        [label] + [f"{s['mean_return']:.2f} +- {s['std_return']:.2f}" for s in steps]
        for label, steps in results["policies"].items()
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [" | ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    lines.append(f"Average return, mean +- std over {results['n_tasks']} held-out tasks; "
                 f"{comparison.step_size_description(results)}.")
    return "\n".join(lines + evaluation.success_rate_lines(results))


def plot_results(results: dict[str, Any], path: str, error_bars: str = "std") -> str:
    """Return vs number of inner steps, one line per policy, with error bars; save a PNG.

    Args:
        results: the output of :func:`evaluate_run`.
        path: PNG file to write.
        error_bars: ``'stderr'`` (standard error over tasks) or ``'std'`` (std over tasks).

    Returns:
        ``path``.

    Raises:
        ValueError: on another ``error_bars``.
    """
    if error_bars not in ("stderr", "std"):
        raise ValueError(f"error_bars must be 'stderr' or 'std', got {error_bars!r}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    num_policies = len(results["policies"])
    for i, (label, steps) in enumerate(results["policies"].items()):
        offset = 0.05 * (i - (num_policies - 1) / 2)  # dodge: keep error bars apart
        x = [s["num_grad_steps"] + offset for s in steps]
        ax.errorbar(x, [s["mean_return"] for s in steps],
                    yerr=[s[f"{error_bars}_return"] for s in steps],
                    marker="o", capsize=4, label=label)
    ax.set_xticks(range(results["num_adapt_steps"] + 1))
    ax.set_xlabel("number of gradient steps")
    spread = "std. error" if error_bars == "stderr" else "std"
    ax.set_ylabel(f"average return (mean \u00b1 {spread} over tasks)")
    ax.set_title(f"{results['algo']} on {results['env']}: {results['n_tasks']} held-out tasks",
                 fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


PROTOCOLS = ("adaptation", "metaworld")
"""``--protocol``: the return after 0..K inner steps (every env), or Meta-World's benchmark
protocol (Meta-World runs only)."""

METAWORLD_FILES = ("metaworld_protocol.json", "metaworld_success.csv", "metaworld_success.md")
"""What ``--protocol metaworld`` writes into the output directory."""


def add_metaworld_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``--protocol metaworld``."""
    parser.add_argument("--protocol", choices=PROTOCOLS, default="adaptation",
                        help="adaptation: return after 0..K inner steps on --n_tasks tasks; "
                        "metaworld: Meta-World's benchmark protocol (Meta-World runs only)")
    parser.add_argument("--splits", nargs="+", choices=("test", "train"), default=["test"],
                        help="--protocol metaworld: the task splits to meta-test on")
    parser.add_argument("--protocol_settings", default=None,
                        help="--protocol metaworld: JSON object changing MetaWorldProtocol "
                        "fields (results then no longer follow the benchmark's protocol; "
                        "default: Meta-World+'s settings)")


def write_metaworld_results(results: dict[str, Any], output_dir: str) -> None:
    """Write :data:`METAWORLD_FILES` (the JSON result, the per-task success tables) into
    ``output_dir``."""
    os.makedirs(output_dir, exist_ok=True)
    json_path, csv_path, md_path = (os.path.join(output_dir, name) for name in METAWORLD_FILES)
    atomic_write_json(json_path, results)
    atomic_write_bytes(csv_path, metaworld_protocol.success_table_csv(results["policies"]).encode())
    atomic_write_bytes(md_path, metaworld_protocol.results_markdown(results).encode())


def run_metaworld_protocol(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """``main`` for ``--protocol metaworld``: check (exit 2 with one line on bad settings or a
    run of another env), evaluate, write, print; returns the output directory."""
    from meta_policy_search.envs.metaworld_envs import is_metaworld_env_name

    try:
        protocol = metaworld_protocol.MetaWorldProtocol.from_json(args.protocol_settings)
    except ValueError as error:
        parser.error(f"--protocol_settings {args.protocol_settings}: {error}")
    params = evaluation.read_run_params(args.run_dir)
    if not is_metaworld_env_name(params.get("env")):
        parser.error(f"--protocol metaworld: {args.run_dir} is a run of {params.get('env')}, not "
                     "of a Meta-World env (ML10 or ML1-<env>)")
    _, config = check_runs(args.run_dir, checkpoint=args.checkpoint)
    _, make_algo, make_sample_processor = script_builders(str(params.get("algo")))
    results = metaworld_protocol.evaluate_run(
        args.run_dir, config, str(params.get("algo")), make_algo, make_sample_processor,
        splits=args.splits, protocol=protocol, seed=args.seed, executor=args.executor,
        random_init=not args.no_random_init, checkpoint=args.checkpoint)
    output_dir = args.output_dir or os.path.join(args.run_dir, "meta_test")
    write_metaworld_results(results, output_dir)
    print(metaworld_protocol.success_table_markdown(results["policies"]))
    print(f"Wrote {', '.join(METAWORLD_FILES)} to {os.path.abspath(output_dir)}")
    return output_dir


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit with status 2 and one line naming the flag on an invalid argument (before TF loads).

    The checkpoints are found as a resume finds them: the newest ``itr_*`` directory that
    verifies (:func:`~meta_policy_search.utils.checkpoint_lookup.find_checkpoint`); what the lookup
    skipped, or a ``latest`` pointer that disagrees, is printed as a note.
    """
    from meta_policy_search.best_checkpoint import best_checkpoint_dir

    minimums = {"n_tasks": 1, "num_adapt_steps": 0, "seed": 0, "rollouts_per_task": 1}
    for name, minimum in minimums.items():
        value = getattr(args, name)
        if value is not None and value < minimum:
            parser.error(f"--{name} {value}: must be an integer >= {minimum}")
    for name in ("first_step_size", "later_step_size"):
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value > 0):
            parser.error(f"--{name} {value}: must be a finite number > 0")
    for flag, run_dir in (("run_dir", args.run_dir), ("--pretrained_run", args.pretrained_run),
                          ("--oracle_run", args.oracle_run)):
        if run_dir is None:
            continue
        if not os.path.isfile(os.path.join(run_dir, "params.json")):
            parser.error(f"{flag} {run_dir}: no params.json there (not a training run directory)")
        check_checkpoint(parser, flag, run_dir, os.path.join(run_dir, "checkpoints"),
                         "the run has no checkpoint yet")
        if flag == "run_dir" and args.checkpoint == "best":
            check_checkpoint(parser, "--checkpoint best", run_dir, best_checkpoint_dir(run_dir),
                             "kept no best checkpoint (train it with --keep_best "
                             "Step_1-AverageReturn)")
        elif flag == "run_dir" and args.checkpoint != "latest":
            check_kept_checkpoint(parser, run_dir, int(args.checkpoint))
    output_dir = args.output_dir or os.path.join(args.run_dir, "meta_test")
    try:
        check_writable_dir(output_dir, "--output_dir")
    except ConfigError as error:
        parser.error(str(error))


def check_checkpoint(parser: argparse.ArgumentParser, flag: str, run_dir: str,
                     checkpoint_dir: str, missing: str) -> str:
    """The newest checkpoint of ``checkpoint_dir`` that verifies (without TensorFlow); exit with
    status 2 naming ``flag`` and the damaged file or ``missing`` if there is none."""
    from meta_policy_search.utils.checkpoint_lookup import find_checkpoint

    lookup = find_checkpoint(checkpoint_dir)
    if lookup.path is None and lookup.damaged:
        parser.error(f"{flag} {run_dir}: no checkpoint reads back ({lookup.damaged[0]})")
    if lookup.path is None:
        parser.error(f"{flag} {run_dir}: {missing}")
    for note in lookup.notes():
        print(f"note: {note}", file=sys.stderr)
    return lookup.path


def check_kept_checkpoint(parser: argparse.ArgumentParser, run_dir: str, itr: int) -> str:
    """The ``--keep_every`` checkpoint of iteration ``itr`` (without TensorFlow); exit with status
    2 naming the iterations the run kept if it has none of ``itr``."""
    from meta_policy_search.periodic_checkpoint import kept_checkpoint_dir, kept_iterations

    kept = kept_iterations(run_dir)
    missing = (f"kept no checkpoint of iteration {itr}; it kept "
               f"{', '.join(map(str, kept))} (--keep_every)" if kept else
               f"kept no checkpoint of iteration {itr} (train it with --keep_every N)")
    return check_checkpoint(parser, f"--checkpoint {itr}", run_dir,
                            kept_checkpoint_dir(run_dir, itr), missing)


def check_checkpoint_tensors(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Read the tensors of every checkpoint the evaluation restores (this loads TensorFlow); exit
    with status 2 naming an unreadable file."""
    from meta_policy_search.utils.checkpoint_lookup import (
        CheckpointError,
        latest_checkpoint,
        verify_tf_checkpoint,
    )

    checkpoints = [evaluation.find_checkpoint_dir(args.run_dir, args.checkpoint)]
    checkpoints += [evaluation.find_checkpoint_dir(run) for run in (args.pretrained_run,
                                                                    args.oracle_run) if run]
    for checkpoint_dir in checkpoints:
        path = latest_checkpoint(checkpoint_dir)
        try:
            verify_tf_checkpoint(str(path))
        except CheckpointError as error:
            parser.error(str(error))


def main(argv: Sequence[str] | None = None) -> str:
    """Command-line entry point; returns the output directory.

    Every check of the arguments and of the runs (``params.json``, checkpoints) exits with
    status 2 and one line, before TensorFlow loads except for reading the checkpoints' tensors.

    Raises:
        Exception: whatever fails during the evaluation itself (status 1 from the command line,
            :func:`~meta_policy_search.experiment.exit_codes.run_script`).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=EPILOG,
                                     formatter_class=DefaultsOnceHelpFormatter)
    parser.add_argument("run_dir", help="run directory with params.json and checkpoints/")
    parser.add_argument("--n_tasks", type=int, default=20, help="number of held-out tasks")
    parser.add_argument("--num_adapt_steps", type=int, default=3,
                        help="K: evaluate after 0..K inner steps")
    parser.add_argument("--seed", type=int, default=None,
                        help="evaluation seed (default: the run's seed + 10000)")
    parser.add_argument("--rollouts_per_task", type=int, default=None,
                        help="episodes per task and step (default: the run's)")
    parser.add_argument("--executor", choices=EXECUTORS, default=None,
                        help="sampler executor (default: the run's)")
    parser.add_argument("--pretrained_run", default=None,
                        help="also evaluate this run's policy, adapted the same way (train it "
                        "with --num_inner_grad_steps 0 and (K+1) x n_itr for the same budget)")
    parser.add_argument("--oracle_run", default=None,
                        help="also evaluate this --oracle true run's policy on the oracle env")
    parser.add_argument("--first_step_size", type=float, default=None,
                        help="step size of the first inner step (default: the run's own step "
                        "sizes for every step, its inner_lr; the MAML paper evaluated with 0.1)")
    parser.add_argument("--later_step_size", type=float, default=None,
                        help="step size of every later inner step (default: the run's own; the "
                        "MAML paper's 0.05, taken when only --first_step_size is given)")
    parser.add_argument("--checkpoint", type=evaluation.checkpoint_choice, default="latest",
                        metavar="{latest,best,ITR}",
                        help="evaluate RUN_DIR's newest checkpoint, the best iteration's (kept by "
                        "training with --keep_best) or iteration ITR's (kept by --keep_every)")
    parser.add_argument("--no_random_init", action="store_true",
                        help="skip the random-init baseline")
    parser.add_argument("--error_bars", choices=("stderr", "std"), default="std",
                        help="error bars of the plot: std over tasks (as the tables) or the "
                        "standard error")
    parser.add_argument("--output_dir", default=None, help="default: RUN_DIR/meta_test")
    add_metaworld_arguments(parser)
    args = parser.parse_args(argv)
    check_args(parser, args)
    # A run of a user env (params.json "env": "mypkg.tasks:MyEnv") rebuilds it from its module,
    # found as in training: on sys.path or in the working directory.
    search_working_directory()
    try:
        check_runs(args.run_dir, args.pretrained_run, args.oracle_run, args.checkpoint)
    except (ValueError, FileNotFoundError) as error:
        parser.error(" ".join(str(error).split()))
    check_checkpoint_tensors(parser, args)
    if args.protocol == "metaworld":
        return run_metaworld_protocol(parser, args)
    results = evaluate_run(
        args.run_dir, n_tasks=args.n_tasks, num_adapt_steps=args.num_adapt_steps,
        seed=args.seed, rollouts_per_task=args.rollouts_per_task, executor=args.executor,
        random_init=not args.no_random_init, pretrained_run=args.pretrained_run,
        oracle_run=args.oracle_run, first_step_size=args.first_step_size,
        later_step_size=args.later_step_size, checkpoint=args.checkpoint,
    )
    output_dir = args.output_dir or os.path.join(args.run_dir, "meta_test")
    os.makedirs(output_dir, exist_ok=True)
    atomic_write_json(os.path.join(output_dir, "meta_test.json"), results)
    atomic_write_bytes(os.path.join(output_dir, "meta_test.csv"), to_csv(results).encode())
    atomic_write_bytes(os.path.join(output_dir, "meta_test.md"),
                       comparison.to_markdown(results).encode())
    plot_results(results, os.path.join(output_dir, "meta_test.png"), args.error_bars)
    print(format_table(results))
    for note in results["notes"]:
        print(f"note: {note}")
    print(f"Wrote meta_test.json, meta_test.csv, meta_test.md and meta_test.png to "
          f"{os.path.abspath(output_dir)}")
    return output_dir


if __name__ == "__main__":
    run_script(main)
