"""Reproduce the ProMP paper's experiments with one command and compare the results with the paper.

Usage::

    python experiments/reproduce.py --algos promp trpo_maml \\
        --envs HalfCheetahRandDirecEnv AntRandDirec2DEnv --seeds 1 2 3 --timesteps 1e7 \\
        --out data/reproduce
    # a tiny grid: the arguments after -- go to every run
    python experiments/reproduce.py --algos promp --envs PointEnvRandGoal --seeds 1 2 \\
        --timesteps 1000 --out /tmp/tiny -- --meta_batch_size 2 --rollouts_per_meta_task 2

1. **Plan.** Every (algorithm, env, seed) is one run of the algorithm's script (the registry in
   ``meta_policy_search.experiment.registry``; e.g. ``lvc_vpg`` is ``vpg_maml_run_mujoco.py --inner_type
   likelihood_ratio``) with the paper config of (algorithm, env), ``--env``, ``--seed`` and the
   arguments after ``--``, into ``OUT/<algo>/<env>/seed_<s>``. ``--envs`` also takes your own
   env classes as ``package.module:ClassName`` (imported from ``sys.path`` or the working
   directory; run directory ``OUT/<algo>/package.module.ClassName``): they run with the config
   defaults (no paper config) and have no paper values in the comparison. Its ``--n_itr`` is the fewest
   iterations that reach ``--timesteps`` as the paper counts them: ``meta_batch_size x
   rollouts_per_meta_task x H x (num_inner_grad_steps + 1)`` per iteration, of the run's
   resolved config.
2. **Skip, resume or start.** A run whose ``done.json`` (written atomically once it has all its
   iterations) covers ``n_itr`` is skipped; a run with a checkpoint that verifies is resumed
   (``--resume``, also to train a finished run longer after raising ``--timesteps``); a run
   directory without a checkpoint or logged iteration (it stopped during its first iteration)
   starts afresh. The grid never deletes a run: a directory holding iterations in
   ``progress.csv`` or a checkpoint that does not read back, but nothing to resume from, is an
   error naming it (move it away), as is one whose ``params.json`` disagrees with the planned
   config (choose another ``--out``); nothing is launched then.
3. **Run.** ``--n_concurrent`` runs at a time as local subprocesses, or every run as a Ray task
   (``--ray_address``; ``pip install meta_policy_search[ray]``; the scripts and ``--out`` must
   be at the same path on every node). Each run is a fresh Python process writing its output to
   ``RUN_DIR/output.txt``. Every ``--status_every`` seconds one line shows the runs done,
   running and left and an ETA from the iteration times in the runs' ``progress.csv``.
4. **Compare** (:mod:`meta_policy_search.experiment.comparison`). ``OUT/reproduction.png``: one
   panel per env, the mean +- std over seeds of the paper's metric (``Step_K-AverageReturn``,
   ``K`` inner steps) per algorithm against timesteps as the paper counts them, with the paper's
   values (``paper_reference.csv``) as points with error bars of their reading precision; each
   panel's x-axis ends where its runs end. ``OUT/reproduction_full.png``: the same over every
   paper point (to 1e8). ``OUT/reproduction.md``: every figure-2 cell at 1e7 with the 95%
   interval over seeds, the paper's later points up to ``--timesteps``, ours against the paper
   at each reference timestep that the runs reach, and the points not reached yet.

This process never imports TensorFlow: rerunning the command on a finished grid only redraws the
comparison; ``--compare_only`` redraws it from whatever the runs have logged so far, running
nothing. Ctrl-C stops the runs; rerunning the command resumes them.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from meta_policy_search.envs.env_spec import (
    EnvSpecError,
    is_env_spec,
    load_env_class,
    search_working_directory,
)
from meta_policy_search.envs.registry import ENV_CLASS_NAMES
from meta_policy_search.experiment.comparison import (
    SUMMARY_TIMESTEPS,
    Curve,
    comparison_markdown,
    draw_comparison,
)
from meta_policy_search.experiment.config_parsing import env_dir_name
from meta_policy_search.experiment.config_values import ConfigError, load_json
from meta_policy_search.experiment.configs import RESUME_CHANGEABLE
from meta_policy_search.experiment.curves import find_runs, read_progress
from meta_policy_search.experiment.exit_codes import (
    EPILOG,
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    run_script,
)
from meta_policy_search.experiment.launch import LocalLauncher, RayLauncher, split_passthrough_args
from meta_policy_search.experiment.paper import load_paper_reference, paper_envs
from meta_policy_search.experiment.planning import Run, has_checkpoint, plan_run
from meta_policy_search.experiment.registry import ALGORITHMS, get_algorithm
from meta_policy_search.experiment.run_checks import check_writable_dir, existing_run
from meta_policy_search.experiment.run_lock import check_run_owner
from meta_policy_search.experiment.script_help import env_names_text
from meta_policy_search.utils.serialization import atomic_write_bytes, atomic_write_json

OUTPUT_NAME = "output.txt"
"""A run's stdout and stderr, in its run directory."""

DONE_FILE = "done.json"
"""Written atomically into a run directory once the run has all its iterations."""

RESERVED_FLAGS = ("--env", "--seed", "--n_itr", "--dump_path", "--resume", "--overwrite")
"""Flags that the grid sets per run: not allowed after ``--``."""

EXECUTION_FIELDS = tuple(sorted(RESUME_CHANGEABLE))
"""Config fields that may differ between a run's ``params.json`` and the plan (they do not
change the results, or are set per invocation)."""


# ---------------------------------------------------------------------------- the command
def main(argv: Sequence[str] | None = None) -> int:
    """Plan the grid, run what is left, compare with the paper.

    Args:
        argv: arguments without the program name (default ``sys.argv[1:]``).

    Returns:
        0 if every run finished, 1 if some failed (the comparison is written either way), 2 on
        bad input: a bad grid, a run directory of another config, one another process owns, one
        the grid cannot resume or start without losing data, or ``--compare_only`` without runs
        (nothing is launched or written).
    """
    args, extra_args = parse_args(argv)
    try:
        cells = grid_cells(args)
        runs = plan_runs(cells, args.timesteps, args.out, extra_args)
        states = {run.key: run_state(run) for run in runs}
    except ValueError as error:
        print(f"reproduce.py: error: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_BAD_INPUT
    todo = {key: state for key, state in states.items() if state != "done"}
    if args.compare_only and not any(has_params(run.run_dir) for run in runs):
        print(f"reproduce.py: error: --compare_only --out {args.out}: no run there to compare "
              "(no OUT/<algo>/<env>/seed_<s> with a params.json); nothing written",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if todo and not args.compare_only:
        problems = owned_runs([run for run in runs if run.key in todo])
        problems += blocked_runs([run for run in runs if todo.get(run.key) == "start"])
        if problems:
            for message in problems:
                print(f"error: {message}", file=sys.stderr)
            return EXIT_BAD_INPUT
    print(f"reproduce: {len(runs)} runs in {os.path.abspath(args.out)}: "
          f"{len(runs) - len(todo)} finished, "
          f"{sum(s == 'resume' for s in todo.values())} to resume, "
          f"{sum(s == 'start' for s in todo.values())} to start", flush=True)
    failed: list[Run] = []
    if todo and not args.compare_only:
        launcher = (RayLauncher(args.ray_address, args.cpus_per_run, OUTPUT_NAME)
                    if args.ray_address else LocalLauncher(args.n_concurrent, OUTPUT_NAME))
        slots = None if args.ray_address else args.n_concurrent  # Ray: as many as it runs
        failed = run_grid(runs, todo, launcher, args.status_every, slots)
    for path in write_comparison(runs, args.out, grid_command(cells, args, extra_args),
                                 args.timesteps):
        print(f"Wrote {path}")
    if failed:
        print("failed runs (see their output.txt; rerun the command to retry):\n  " +
              "\n  ".join(run.run_dir for run in failed), file=sys.stderr)
    return 1 if failed else 0


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """The grid's options and the arguments after ``--`` (passed to every run)."""
    argv, extra_args = split_passthrough_args(None if argv is None else list(argv))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=EPILOG)
    parser.add_argument("--algos", nargs="+", default=[], metavar="ALGO",
                        help="algorithms (and their legend in plots): " + ", ".join(
                            f"{name} ({algorithm.legend})" for name, algorithm in ALGORITHMS.items()))
    parser.add_argument("--envs", nargs="+", default=[], metavar="ENV",
                        help=f"environments: {env_names_text()}")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3],
                        help="one run per seed, for every algorithm and env of --algos x --envs")
    parser.add_argument("--cells", nargs="+", default=[], metavar="ALGO:ENV:SEEDS",
                        help="more runs, one cell at a time: e.g. promp:HalfCheetahRandDirecEnv:1-10 "
                        "or trpo_maml:HopperRandParamsEnv:1,2,3 (a mixed-seed grid)")
    parser.add_argument("--timesteps", type=float, required=True,
                        help="train each run to this many env steps, counted as in the paper")
    parser.add_argument("--out", required=True, help="grid directory")
    parser.add_argument("--n_concurrent", type=int, default=1, help="local runs at a time")
    parser.add_argument("--ray_address", help="run each run as a Ray task on this cluster "
                        "('auto', 'HOST:6379', or 'local' for a local Ray)")
    parser.add_argument("--cpus_per_run", type=float, default=1.0, help="CPUs Ray reserves per run")
    parser.add_argument("--status_every", type=float, default=60.0,
                        help="seconds between progress lines")
    parser.add_argument("--compare_only", action="store_true",
                        help="start or resume nothing: redraw the comparison from what the runs "
                        "have logged so far (also while they run); without --algos, --envs and "
                        "--cells, from every run found in --out")
    args = parser.parse_args(argv)
    if bool(args.algos) != bool(args.envs):
        parser.error("--algos and --envs go together (or use --cells)")
    if not (args.algos or args.cells or args.compare_only):
        parser.error("give --algos and --envs, or --cells (or --compare_only on a grid directory)")
    try:
        args.cells = [parse_cell(text) for text in args.cells]
    except ValueError as error:
        parser.error(str(error))
    if args.n_concurrent < 1:
        parser.error(f"--n_concurrent must be at least 1, got {args.n_concurrent}")
    for name in ("timesteps", "cpus_per_run", "status_every"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            parser.error(f"--{name} {value}: must be a finite number > 0")
    if any(seed < 0 for seed in args.seeds):
        parser.error(f"--seeds must be integers >= 0, got {args.seeds}")
    if args.compare_only and not os.path.isdir(args.out):
        parser.error(f"--compare_only --out {args.out}: no such directory, so no runs to compare")
    try:
        check_writable_dir(args.out, "--out")
    except ConfigError as error:
        parser.error(str(error))
    if len(set(args.seeds)) != len(args.seeds):
        parser.error(f"--seeds must be distinct, got {args.seeds}")
    for arg in extra_args:
        if arg.split("=")[0] in RESERVED_FLAGS:
            parser.error(f"{arg!r} is set by the grid per run; remove it after '--'")
    return args, extra_args


# ---------------------------------------------------------------------------- 1. plan
Cell = tuple[str, str, tuple[int, ...]]
"""``(algorithm, env, seeds)``: one (algorithm, env) pair of the grid and the seeds it runs."""


def parse_cell(text: str) -> Cell:
    """``'promp:HalfCheetahRandDirecEnv:1-3,7'`` -> ``('promp', 'HalfCheetahRandDirecEnv', (1, 2, 3, 7))``.

    The env may itself be a ``package.module:ClassName`` spec: the seeds are after the last colon.

    Raises:
        ValueError: naming ``text`` if it is not ``ALGO:ENV:SEEDS`` with distinct seeds >= 0.
    """
    algo, _, rest = text.partition(":")
    env, _, seed_text = rest.rpartition(":")
    try:
        seeds: list[int] = []
        for part in seed_text.split(","):
            first, _, last = part.partition("-")
            seeds += range(int(first), int(last or first) + 1)
    except ValueError:
        seeds = []
    if not (algo and env and seeds) or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise ValueError(f"--cells {text!r}: expected ALGO:ENV:SEEDS with distinct seeds >= 0, "
                         "e.g. promp:HalfCheetahRandDirecEnv:1-10 or promp:AntRandDirec2DEnv:1,2,3")
    return algo, env, tuple(seeds)


def format_seeds(seeds: Sequence[int]) -> str:
    """``(1, 2, 3, 5)`` -> ``'1-3,5'`` (the SEEDS of :func:`parse_cell`)."""
    parts: list[str] = []
    for seed in sorted(seeds):
        if parts and parts[-1].split("-")[-1] == str(seed - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{seed}"
        else:
            parts.append(str(seed))
    return ",".join(parts)


def grid_cells(args: argparse.Namespace) -> list[Cell]:
    """The grid: ``--algos x --envs`` with ``--seeds``, then ``--cells``, seeds merged per pair.

    With ``--compare_only`` and none of them, every run found in ``--out``
    (``OUT/<algo>/<env>/seed_<s>`` with a ``params.json``).
    """
    merged: dict[tuple[str, str], list[int]] = {}
    cells = [(algo, env, tuple(args.seeds)) for algo in args.algos for env in args.envs]
    if not cells and not args.cells:
        cells = discover_cells(args.out)
    for algo, env, seeds in [*cells, *args.cells]:
        known = merged.setdefault((algo, env), [])
        known += [seed for seed in seeds if seed not in known]
    return [(algo, env, tuple(sorted(seeds))) for (algo, env), seeds in merged.items()]


def discover_cells(out: str) -> list[Cell]:
    """The (algorithm, env, seeds) of every run directory in ``out`` that has a ``params.json``."""
    found: dict[tuple[str, str], list[int]] = {}
    for algo in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        for env in sorted(os.listdir(os.path.join(out, algo))) if algo in ALGORITHMS else []:
            for entry in sorted(os.listdir(os.path.join(out, algo, env))):
                if (entry.startswith("seed_") and entry[5:].isdigit()
                        and os.path.isfile(os.path.join(out, algo, env, entry, "params.json"))):
                    found.setdefault((algo, env), []).append(int(entry[5:]))
    order = {name: i for i, name in enumerate(paper_envs())}
    keys = sorted(found, key=lambda key: (list(ALGORITHMS).index(key[0]),
                                          order.get(key[1], len(order)), key[1]))
    return [(algo, env, tuple(sorted(found[(algo, env)]))) for algo, env in keys]


def grid_command(cells: Sequence[Cell], args: argparse.Namespace,
                 extra_args: Sequence[str]) -> str:
    """A command line that plans exactly ``cells`` (written into ``reproduction.md``)."""
    words = ["experiments/reproduce.py", "--cells",
             *(f"{algo}:{env}:{format_seeds(seeds)}" for algo, env, seeds in cells),
             "--timesteps", f"{args.timesteps:g}", "--out", args.out]
    return " ".join([*words, *(["--", *extra_args] if extra_args else [])])


def plan_runs(cells: Sequence[Cell], timesteps: float, out: str,
              extra_args: Sequence[str]) -> list[Run]:
    """Every run of the grid, with its resolved config and iteration count.

    Raises:
        ValueError: on an unknown algorithm or env (listing the valid names), a bad extra
            argument (from the script's parser), or ``timesteps <= 0``.
    """
    if not timesteps > 0:
        raise ValueError(f"--timesteps must be positive, got {timesteps}")
    algorithms = {name: get_algorithm(name) for name, _, _ in cells}
    envs = list(dict.fromkeys(env for _, env, _ in cells))
    unknown = [env for env in envs if env not in ENV_CLASS_NAMES and not is_env_spec(env)]
    if unknown:
        raise ValueError(f"unknown env(s) {unknown}; valid names: {', '.join(ENV_CLASS_NAMES)}, "
                         "or a user env class as package.module:ClassName")
    if any(is_env_spec(env) for env in envs):
        search_working_directory()  # the runs (subprocesses) search the same directory
    for env in envs:
        if is_env_spec(env):
            try:
                load_env_class(env)  # checked here: a bad spec fails before any run starts
            except EnvSpecError as error:
                raise ValueError(f"--envs {env}: {error.reason}") from None
        if env not in paper_envs():
            print(f"note: the paper did not run {env}; its runs use the config defaults")
    runs = []
    for name, env, seeds in cells:
        for seed in seeds:
            run_dir = os.path.abspath(os.path.join(out, name, env_dir_name(env), f"seed_{seed}"))
            runs.append(plan_run(algorithms[name], env, seed, run_dir, timesteps, extra_args))
    return runs


# ---------------------------------------------------------------------------- 2. state
def run_state(run: Run) -> str:
    """``'done'``, ``'resume'`` (a checkpoint exists) or ``'start'`` (afresh, see :func:`run_grid`).

    Raises:
        ValueError: if the run directory holds a run of another config.
    """
    params_path = os.path.join(run.run_dir, "params.json")
    if os.path.isfile(params_path):
        check_same_config(run, load_json(params_path))
    done = read_done(run.run_dir)
    if done is not None and done.get("n_itr", 0) >= run.n_itr:
        return "done"
    return "resume" if has_checkpoint(run.run_dir) else "start"


def owned_runs(runs: Sequence[Run]) -> list[str]:
    """One message per run whose directory another process owns (a run script still running
    it, e.g. a ``--resume`` from a terminal or another ``reproduce.py``): the grid must neither
    clear nor relaunch it.

    Returns:
        The messages, naming each owner's pid (empty if no run is owned).
    """
    owned = []
    for run in runs:
        try:
            check_run_owner(run.run_dir)
        except ConfigError as error:
            owned.append(str(error))
    return owned


def blocked_runs(runs: Sequence[Run]) -> list[str]:
    """One message per run to start whose directory holds what a fresh start would destroy
    (logged iterations, a checkpoint that does not read back) but nothing to resume from: the
    grid deletes no run, so the user decides.

    Returns:
        The messages (empty if every run can start).
    """
    blocked = []
    for run in runs:
        existing = existing_run(run.run_dir)
        if existing:
            blocked.append(f"{run.run_dir} holds {existing} but no checkpoint to resume from; "
                           "the grid deletes no run: move that directory away and rerun the "
                           "command")
    return blocked


def has_params(run_dir: str) -> bool:
    """Whether ``run_dir`` holds a run (its ``params.json``)."""
    return os.path.isfile(os.path.join(run_dir, "params.json"))


def check_same_config(run: Run, stored: dict[str, Any]) -> None:
    """Raise ValueError naming the fields where a run directory's ``params.json`` differs.

    A field missing from ``params.json`` (the run predates it) counts as its default, which
    keeps the behaviour from before the field existed.
    """
    config_cls, _, _ = run.algo.load()
    defaults = json.loads(json.dumps({
        field.name: field.default for field in dataclasses.fields(config_cls)
        if field.default is not dataclasses.MISSING
    }))
    stored = {**defaults, **stored}
    differing = sorted(key for key, value in run.params.items()
                       if key not in EXECUTION_FIELDS and stored.get(key) != value)
    if differing:
        changes = ", ".join(f"{k}: {stored.get(k)!r} there, {run.params[k]!r} now"
                            for k in differing)
        raise ValueError(f"{run.run_dir} holds a run of another config ({changes}); "
                         "use another --out, or move that directory away")


def read_done(run_dir: str) -> dict[str, Any] | None:
    """The run's ``done.json``, or ``None`` if it has none."""
    path = os.path.join(run_dir, DONE_FILE)
    return load_json(path) if os.path.isfile(path) else None


# ---------------------------------------------------------------------------- 3. run
def run_grid(runs: Sequence[Run], todo: dict[tuple, str], launcher: Any, status_every: float,
             slots: int | None) -> list[Run]:
    """Launch the runs in ``todo`` (key -> ``'resume'``/``'start'``), report progress, mark done.

    ``slots``: runs at a time, for the ETA (``None``: as many as are running).

    Returns:
        The runs that failed.
    """
    by_key = {run.key: run for run in runs}
    for key, state in todo.items():
        # A run to start holds nothing to keep (blocked_runs checked it); its script refuses to
        # start on a directory that does.
        launcher.submit(key, by_key[key].command(resume=state == "resume"), by_key[key].run_dir)
    pending, failed = set(todo), []
    try:
        while pending:
            for key, result in launcher.wait(timeout=status_every):
                pending.discard(key)
                problem = finish_run(by_key[key], result)
                if problem:
                    failed.append(by_key[key])
                print(f"  {'/'.join(map(str, key))}: {problem or 'done'} "
                      f"({result['seconds']:.0f} s)", flush=True)
            print(status_line(runs, pending, set(launcher.running()), failed, slots), flush=True)
    except KeyboardInterrupt:
        launcher.close()
        print("interrupted: rerun the same command to resume", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
    return failed


def finish_run(run: Run, result: dict[str, Any]) -> str | None:
    """Write the run's ``done.json`` if it exited cleanly with all iterations; else say why not."""
    if result["returncode"] != 0:
        return f"FAILED (exit {result['returncode']}, see {result['output']})"
    rows = completed_iterations(run.run_dir)
    if rows < run.n_itr:
        return f"FAILED (exited after {rows} of {run.n_itr} iterations, see {result['output']})"
    atomic_write_json(os.path.join(run.run_dir, DONE_FILE), {
        "n_itr": run.n_itr, "seconds": result["seconds"], "host": result["host"],
        "finished": datetime.datetime.now().isoformat(timespec="seconds")})
    return None


def completed_iterations(run_dir: str) -> int:
    """Iterations logged in the run's ``progress.csv`` (0 if it has none yet)."""
    path = os.path.join(run_dir, "progress.csv")
    return len(read_progress(path).get("Itr", [])) if os.path.isfile(path) else 0


def status_line(runs: Sequence[Run], pending: set, running: set, failed: Sequence[Run],
                slots: int | None) -> str:
    """``grid: D/N done, R running, L left[, F failed] | ETA H:MM:SS`` (``?`` before any data)."""
    now = datetime.datetime.now().strftime("%H:%M:%S")
    done = len(runs) - len(pending) - len(failed)
    parallel = max(1, len(pending & running)) if slots is None else slots
    eta = eta_seconds(runs, pending, parallel)
    text = (f"[{now}] grid: {done}/{len(runs)} done, {len(pending & running)} running, "
            f"{len(pending - running)} left")
    if failed:
        text += f", {len(failed)} failed"
    eta_text = "?" if eta is None else str(datetime.timedelta(seconds=round(eta)))
    return f"{text} | ETA {eta_text}"


def eta_seconds(runs: Sequence[Run], pending: set, slots: int) -> float | None:
    """Time left: each pending run's iterations left times its seconds per iteration, spread
    over ``slots`` parallel runs.

    A run without iterations yet takes the mean seconds per iteration of the grid's runs of its
    algorithm and env, else of all the grid's runs.

    Returns:
        Seconds, or ``None`` while no run has logged an iteration.
    """
    progress = {run.key: iteration_times(run.run_dir) for run in runs}
    known = {key: seconds for key, (_, seconds) in progress.items() if seconds is not None}
    todo = [run for run in runs if run.key in pending]
    if not todo:
        return 0.0
    if not known:
        return None
    total = 0.0
    for run in todo:
        rows, seconds = progress[run.key]
        if seconds is None:
            similar = [s for key, s in known.items() if key[:2] == run.key[:2]]
            seconds = float(np.mean(similar or list(known.values())))
        total += max(run.n_itr - rows, 0) * seconds
    return total / max(1, min(slots, len(todo)))


def iteration_times(run_dir: str) -> tuple[int, float | None]:
    """``(iterations done, mean ItrTime of the last 10)`` from ``progress.csv`` (``None``: no rows)."""
    path = os.path.join(run_dir, "progress.csv")
    columns = read_progress(path) if os.path.isfile(path) else {}
    times = columns.get("ItrTime", np.array([]))
    times = times[np.isfinite(times)][-10:]
    return len(columns.get("Itr", [])), (float(times.mean()) if len(times) else None)


# ---------------------------------------------------------------------------- 4. compare
COMPARISON_FILES = ("reproduction.png", "reproduction_full.png", "reproduction.md")
"""What the comparison writes into ``OUT``: the figure with each panel's x-axis limited to what
its runs reach, the figure over every paper point (to 1e8), and the tables."""


def write_comparison(runs: Sequence[Run], out: str, command: str,
                     horizon: float = SUMMARY_TIMESTEPS) -> list[str]:
    """Write :data:`COMPARISON_FILES` into ``out``; return their paths.

    ``horizon`` (the grid's ``--timesteps``): the paper's points after 1e7 up to it get a table
    of their own in ``reproduction.md``.
    """
    curves = load_curves(runs)
    reference = load_paper_reference()
    envs = [run.env for run in runs]
    png, full_png, table = (os.path.join(out, name) for name in COMPARISON_FILES)
    draw_comparison(curves, reference, envs, png, view="reached")
    draw_comparison(curves, reference, envs, full_png, view="full")
    text = comparison_markdown(curves, reference, command, horizon)
    atomic_write_bytes(table, text.encode("utf-8"))
    return [png, full_png, table]


def load_curves(runs: Sequence[Run]) -> list[Curve]:
    """Group the runs with a ``progress.csv`` by (algorithm, env), in grid order."""
    by_key: dict[tuple[str, str], Curve] = {}
    for run in runs:
        curve = by_key.setdefault(run.key[:2], Curve(run.algo, run.env, run.metric, []))
        if completed_iterations(run.run_dir) > 0:
            curve.runs.extend(find_runs([run.run_dir]))
    return [curve for curve in by_key.values() if curve.runs]


if __name__ == "__main__":
    run_script(main)
