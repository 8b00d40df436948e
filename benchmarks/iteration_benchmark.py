"""Whole meta-iterations: seconds per iteration split into sampling, processing, inner, outer.

Runs :class:`~meta_policy_search.meta_trainer.Trainer` iterations (``Trainer._run_iteration``,
exactly what ``train()`` runs, without checkpoints) built by the run scripts' own builders and
configs (``experiments/promp_run_mujoco.py``, ``experiments/trpo_maml_run_mujoco.py``):

* ``W0``: 2-D navigation ``PointEnvRandGoal``, 20 tasks x 20 rollouts x H = 100, (64, 64),
  1 inner step, sampled in the main process (the quick-start script's settings);
* ``W1``: the paper's ``HalfCheetahRandDirecEnv`` config (``paper_configs.json``: 40 tasks x
  20 rollouts x H = 100, (64, 64), 1 inner step), with the scripts' default executor;

each for ProMP and TRPO-MAML. The time split is the Trainer's own (``Time-Sampling``,
``Time-SampleProc``, ``Time-InnerStep``, ``Time-OuterStep``). The first iteration (tracing,
XLA compilation, worker start-up) is reported apart; the table gives medians of the following
ones.

The physics floor, measured in the same run: the all-core raw ``mj_step`` rate, i.e. one
process per usable core running ``mujoco.mj_step(model, data, nstep=frame_skip)`` on the env's
model at the same time, in env steps per second; an iteration's real env steps divided by that
rate is what its sampling would cost if nothing but the physics ran. W0 has no physics.

Also reports how often every ``tf.function`` of the algorithm and its optimizer traced, and a
short ``sampling_mode='budget'`` run on an early-terminating env (``Walker2DRandDirecEnv``,
small batch) where the episode axis varies between iterations: retraces there should stop
after the first bucket change (``reduce_retracing``).

Writes ``benchmarks/results/iteration.json`` and ``iteration.md`` (``--quick``: a smoke run on
small batches, ``iteration_quick.*``). Timings are only meaningful on a quiet machine: check
the load averages recorded with the results. Usage::

    python benchmarks/iteration_benchmark.py [--quick] [--iterations 3] [--only W0-promp,W1-trpo_maml]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.algo_benchmark import tracing_counts  # noqa: E402
from benchmarks.machine_info import describe_machine, load_average, machine_info, write_results  # noqa: E402

ALGOS = ("promp", "trpo_maml")
"""Registry names (:mod:`meta_policy_search.experiment.registry`) of the benchmarked algorithms."""
WORKLOADS = {
    "W0": ["--env", "PointEnvRandGoal", "--meta_batch_size", "20", "--rollouts_per_meta_task",
           "20", "--max_path_length", "100", "--num_inner_grad_steps", "1", "--hidden_sizes",
           "64,64", "--paper_config", "false", "--executor", "iterative"],
    "W1": ["--env", "HalfCheetahRandDirecEnv", "--meta_batch_size", "40",
           "--rollouts_per_meta_task", "20", "--paper_config", "true"],
}
QUICK_OVERRIDES = ["--meta_batch_size", "4", "--rollouts_per_meta_task", "2",
                   "--max_path_length", "20"]
RETRACE_FLAGS = ["--env", "Walker2DRandDirecEnv", "--meta_batch_size", "4",
                 "--rollouts_per_meta_task", "2", "--max_path_length", "100",
                 "--sampling_mode", "budget", "--paper_config", "false", "--executor", "iterative"]
TIME_KEYS = {"sampling": "Time-Sampling", "processing": "Time-SampleProc",
             "inner": "Time-InnerStep", "outer": "Time-OuterStep"}


# ------------------------------------------------------------------------------ building
def build_trainer(algo_key: str, flags: list[str], seed: int = 1) -> Any:
    """A Trainer built as ``run_experiment`` builds it (no logger outputs, no checkpoints)."""
    import tensorflow as tf

    from meta_policy_search.experiment import components
    from meta_policy_search.experiment import runner as experiment
    from meta_policy_search.experiment.registry import get_algorithm
    from meta_policy_search.meta_trainer import Trainer

    algorithm = get_algorithm(algo_key)
    config, _ = experiment.parse_config(
        algorithm.config_cls, flags + ["--seed", str(seed)], algorithm.run_name)
    config = experiment.resolve_config(config, algorithm.run_name)
    seeds = components.derive_seeds(config.seed)
    tf.random.set_seed(seeds["tf"])
    env = components.build_env(config)
    policy = components.build_policy(config, env, seeds["policy"])
    sampler = components.build_sampler(config, env, policy, seeds["sampler"])
    trainer = Trainer(
        algo=algorithm.make_algo(config, policy), env=env, sampler=sampler,
        sample_processor=algorithm.make_sample_processor(config), policy=policy, n_itr=1 << 30,
        checkpoint_dir=None,
    )
    return trainer, config


def run_iterations(trainer: Any, num_iterations: int) -> list[dict[str, float]]:
    """Run iterations; return per iteration the Trainer's time split, wall time and env steps."""
    from meta_policy_search.utils import logger

    rows = []
    for itr in range(num_iterations):
        steps_before = trainer.n_timesteps_real
        start = time.perf_counter()
        trainer._run_iteration(itr)
        wall = time.perf_counter() - start
        kvs = logger.dumpkvs()
        row = {name: float(kvs[key]) for name, key in TIME_KEYS.items()}
        row.update(total=wall, env_steps=float(trainer.n_timesteps_real - steps_before))
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------- physics floor
def _raw_mj_step_worker(env_name: str, start_at: float, seconds: float, seed: int) -> float:
    """Env steps per second of a raw ``mj_step(nstep=frame_skip)`` loop, from ``start_at``."""
    import mujoco

    from meta_policy_search.envs import make_env

    inner = make_env(env_name).unwrapped
    model, frame_skip = inner.model, inner.frame_skip
    data = mujoco.MjData(model)
    controls = np.random.default_rng(seed).uniform(-1, 1, size=(1000, model.nu))
    while time.time() < start_at:
        time.sleep(0.001)
    steps, start = 0, time.perf_counter()
    while True:
        for i in range(1000):
            data.ctrl[:] = controls[i]
            mujoco.mj_step(model, data, nstep=frame_skip)
        mujoco.mj_resetData(model, data)
        steps += 1000
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed


def all_core_mj_step_rate(env_name: str, seconds: float) -> dict[str, Any]:
    """Raw ``mj_step`` env steps per second, one process per usable core, all at once."""
    num_procs = len(os.sched_getaffinity(0))
    context = multiprocessing.get_context("spawn")
    start_at = time.time() + 10.0  # every worker has imported mujoco and built its model by then
    with context.Pool(num_procs) as pool:
        rates = pool.starmap(
            _raw_mj_step_worker, [(env_name, start_at, seconds, i) for i in range(num_procs)]
        )
    return {"env": env_name, "processes": num_procs, "seconds": seconds,
            "per_process_env_steps_per_s": rates, "env_steps_per_s": float(sum(rates))}


# ---------------------------------------------------------------------------------- output
def summarize(rows: list[dict[str, float]]) -> dict[str, float]:
    """Medians over the timed iterations (the first one excluded when there are others)."""
    timed = rows[1:] if len(rows) > 1 else rows
    return {key: statistics.median(r[key] for r in timed) for key in rows[0]}


def write_markdown(path: Path, result: dict) -> None:
    m = result["machine"]
    lines = [
        "# Whole-iteration benchmark",
        "",
        "Trainer iterations (`Trainer._run_iteration`) with the run scripts' builders and "
        f"configs; median of {result['iterations'] - 1 if result['iterations'] > 1 else 1} "
        "iterations after the first (first: tracing, compilation, worker start-up). Physics "
        "floor: the iteration's real env steps / the all-core raw `mj_step` rate measured in "
        "the same run.",
        "",
        "| run | env steps | sampling (s) | processing (s) | inner (s) | outer (s) | "
        "iteration (s) | physics floor (s) | first iteration (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in result["runs"]:
        s = run["median"]
        floor = run.get("physics_floor_seconds")
        lines.append(
            f"| {run['name']} | {s['env_steps']:.0f} | {s['sampling']:.3f} | "
            f"{s['processing']:.3f} | {s['inner']:.3f} | {s['outer']:.3f} | {s['total']:.3f} | "
            f"{'n/a' if floor is None else f'{floor:.3f}'} | {run['iterations'][0]['total']:.1f} |"
        )
    if result.get("mj_step") is not None:
        raw = result["mj_step"]
        lines += ["", f"All-core raw `mj_step` ({raw['env']}, {raw['processes']} processes): "
                      f"{raw['env_steps_per_s']:,.0f} env steps/s."]
    lines += ["", "Traces per `tf.function` (algorithm and optimizer) over each run:", ""]
    for run in result["runs"] + ([result["retrace"]] if result.get("retrace") else []):
        used = {k: n for k, n in run["tracing_counts"].items() if n}
        lines.append(f"- {run['name']}: " + ", ".join(f"`{k}` {n}" for k, n in sorted(used.items())))
    if result.get("retrace"):
        r = result["retrace"]
        lines += ["", f"Budget-mode run ({r['name']}): episode-axis sizes per iteration "
                      f"{r['episode_axis_sizes']}."]
    lines += [
        "",
        describe_machine(m),
        "",
    ]
    path.write_text("\n".join(lines))


# ------------------------------------------------------------------------------------ main
def retrace_run(algo_key: str, flags: list[str], num_iterations: int) -> dict[str, Any]:
    """Budget-mode iterations on an early-terminating env; trace counts and episode-axis sizes."""
    trainer, _ = build_trainer(algo_key, flags)
    sizes = []
    original = trainer.algo.optimize_policy

    def recording_optimize(all_samples_data):
        sizes.append([int(s.mask.shape[1]) for s in all_samples_data])
        return original(all_samples_data)

    trainer.algo.optimize_policy = recording_optimize
    try:
        run_iterations(trainer, num_iterations)
    finally:
        if hasattr(trainer.sampler, "close"):
            trainer.sampler.close()
    return {"name": f"{algo_key}, {' '.join(flags)}", "episode_axis_sizes": sizes,
            "tracing_counts": tracing_counts(trainer.algo)}


def main() -> None:
    import mujoco
    import tensorflow as tf

    from meta_policy_search.utils import logger

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run on small batches")
    parser.add_argument("--iterations", type=int, default=None,
                        help="iterations per run, the first one untimed (default 4; quick 2)")
    parser.add_argument("--only", default="", help="comma-separated subset of W0-promp, "
                        "W0-trpo_maml, W1-promp, W1-trpo_maml")
    parser.add_argument("--retrace_iterations", type=int, default=None,
                        help="iterations of the budget-mode retrace run (0 skips it)")
    parser.add_argument("--mj_step_seconds", type=float, default=None)
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()
    iterations = args.iterations or (2 if args.quick else 4)
    retrace_iterations = (
        args.retrace_iterations if args.retrace_iterations is not None else (3 if args.quick else 8)
    )
    machine = machine_info(tensorflow=tf.__version__, numpy=np.__version__,
                           mujoco=mujoco.__version__)
    machine["load_average_start"] = load_average()
    logger.configure(dir=tempfile.mkdtemp(prefix="iteration_benchmark_"), format_strs=["log"])

    names = [f"{w}-{a}" for w in WORKLOADS for a in ALGOS]
    selected = [n for n in args.only.split(",") if n] or names
    raw = None
    if any(n.startswith("W1") for n in selected):
        raw = all_core_mj_step_rate("HalfCheetahRandDirecEnv",
                                    args.mj_step_seconds or (1.0 if args.quick else 5.0))
        print(f"all-core raw mj_step: {raw['env_steps_per_s']:,.0f} env steps/s", flush=True)
    runs = []
    for name in selected:
        workload, algo_key = name.split("-", 1)
        flags = WORKLOADS[workload] + (QUICK_OVERRIDES if args.quick else [])
        trainer, config = build_trainer(algo_key, flags)
        try:
            rows = run_iterations(trainer, iterations)
        finally:
            if hasattr(trainer.sampler, "close"):
                trainer.sampler.close()
        run = {"name": name, "flags": flags, "config": {k: str(v) for k, v in vars(config).items()},
               "iterations": rows, "median": summarize(rows),
               "tracing_counts": tracing_counts(trainer.algo)}
        if workload == "W1" and raw is not None:
            run["physics_floor_seconds"] = run["median"]["env_steps"] / raw["env_steps_per_s"]
        s = run["median"]
        print(f"{name}: {s['total']:.3f} s/itr (sampling {s['sampling']:.3f}, processing "
              f"{s['processing']:.3f}, inner {s['inner']:.3f}, outer {s['outer']:.3f}); first "
              f"{rows[0]['total']:.1f} s", flush=True)
        runs.append(run)
    retrace = None
    if retrace_iterations > 0:
        retrace = retrace_run("trpo_maml", RETRACE_FLAGS, retrace_iterations)
        print(f"budget-mode retrace run: sizes {retrace['episode_axis_sizes']}, traces "
              f"{ {k: n for k, n in retrace['tracing_counts'].items() if n} }", flush=True)
    machine["load_average_end"] = load_average()
    result = {"quick": args.quick, "iterations": iterations, "machine": machine,
              "mj_step": raw, "runs": runs, "retrace": retrace}
    write_results(args.output_dir, "iteration_quick" if args.quick else "iteration", result, write_markdown)


if __name__ == "__main__":
    main()
