"""Whole meta-iterations: seconds per iteration split into sampling, processing, inner, outer.

Runs :class:`~meta_policy_search.meta_trainer.Trainer` iterations (``Trainer._run_iteration``,
exactly what ``train()`` runs, without checkpoints) built by the run scripts' own builders and
configs (``experiments/promp_run_mujoco.py``, ``experiments/trpo_maml_run_mujoco.py``):

* ``W0``: 2-D navigation ``PointEnvRandGoal``, 20 tasks x 20 rollouts x H = 100, (64, 64),
  1 inner step, sampled in the main process (the quick-start script's settings);
* ``W1``: the paper's ``HalfCheetahRandDirecEnv`` config (``paper_configs.json``: 40 tasks x
  20 rollouts x H = 100, (64, 64), 1 inner step), with the scripts' default executor;
* ``W2``: the paper's ``Walker2DRandDirecEnv`` config (40 tasks x 20 rollouts x H = 200, the
  step budget, episodes that end early), with the scripts' default executor;

each for ProMP and TRPO-MAML. The time split is the Trainer's own (``Time-Sampling``,
``Time-SampleProc``, ``Time-InnerStep``, ``Time-OuterStep``). The first iteration (tracing,
XLA compilation, worker start-up) is reported apart; the table gives medians of the following
ones.

The physics floor, measured in the same run, after the run's iterations: the all-core raw
``mj_step`` rate, i.e. one process per usable core replaying with
``mujoco.mj_step(model, data, nstep=frame_skip)`` the episodes of the run's last sampling phase
(``sampling_benchmark.raw_all_cores``), in env steps per second: each episode from the start
state the sampler drew for it (``mj_resetData``, then the ``qpos`` and ``qvel`` that the env's
``reset`` draws with the episode's seed, ``sampling_benchmark.start_states_of``) with its
recorded controls for its recorded length, so the replay simulates the run's own states and
contacts; an iteration's real env steps divided by that rate is what its sampling would cost if
nothing but the physics ran. Replaying
the run's own controls matters: the half-cheetah under uniformly random controls has about a
third of the contacts per step of a sampling phase and costs about 1/1.2 of the CPU per step
(``benchmarks/results/sampling_cpu_counts.md``). W0 has no physics.

The outer step's floors, measured in the same run on the run's own last batch
(``metastep_profile.py``'s measures): ``G``, one forward and backward pass of the policy's
log-likelihood on the post-update batch, and the pass-count floor (TRPO-MAML: ``(cg_iters + 1)
x 2 G + 3 G``; ProMP: ``Adam steps x 3 G``); for TRPO-MAML also the matmul floor (the compiled
step's matmul FLOPs over the batched-matmul throughput measured here).

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
    "W2": ["--env", "Walker2DRandDirecEnv", "--meta_batch_size", "40",
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
    from meta_policy_search.experiment.config_parsing import parse_config, resolve_config
    from meta_policy_search.experiment.registry import get_algorithm
    from meta_policy_search.meta_trainer import Trainer

    algorithm = get_algorithm(algo_key)
    config, _ = parse_config(
        algorithm.config_cls, flags + ["--seed", str(seed)], algorithm.run_name)
    config = resolve_config(config, algorithm.run_name)
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


# ---------------------------------------------------------------------------- the floors
class Recorder:
    """Keeps a trainer's last sampled paths and last outer-step batches and statistics."""

    def __init__(self, trainer: Any) -> None:
        self.paths: Any = None
        self.phase: tuple[list[Any], int, int] | None = None
        """The last sampled phase's ``(tasks, seed, phase index)``: what draws its start states."""
        self.all_samples: Any = None
        self.stats: dict[str, float] = {}
        obtain, optimize = trainer.sampler.obtain_samples, trainer.algo.optimize_policy

        def obtain_samples(*args: Any, **kwargs: Any) -> Any:
            sampler = trainer.sampler
            self.phase = (list(sampler.tasks), sampler.seed, sampler.phase)
            self.paths = obtain(*args, **kwargs)
            return self.paths

        def optimize_policy(all_samples: Any) -> dict[str, float]:
            self.all_samples = all_samples
            self.stats = optimize(all_samples)
            return self.stats

        trainer.sampler.obtain_samples = obtain_samples
        trainer.algo.optimize_policy = optimize_policy


def physics_floor(env_name: str, env: Any, recorder: Recorder, steps_per_process: int
                  ) -> dict[str, Any]:
    """The all-core raw ``mj_step`` rate replaying the episodes of the recorded last phase (its
    start states and controls)."""
    from benchmarks.sampling_benchmark import raw_all_cores, save_replay

    assert recorder.phase is not None, "no sampling phase was recorded"
    tasks, seed, phase = recorder.phase
    with tempfile.TemporaryDirectory() as folder:
        replay = Path(folder) / "replay.npz"
        save_replay(replay, env, recorder.paths, tasks, seed, phase)
        raw = raw_all_cores(env_name, replay, len(os.sched_getaffinity(0)), steps_per_process)
    return {"env": env_name, "controls": "the run's last sampling phase, from its start states",
            **raw}


def outer_floors(algo: Any, recorder: Recorder, repeats: int) -> dict[str, float]:
    """``G`` on the run's post-update batch and the outer step's pass-count (and, for
    TRPO-MAML, matmul) floors in seconds."""
    from benchmarks.metastep_profile import (
        batched_matmul_rate,
        forward_costs,
        trpo_step_matmul_flops,
    )

    batch = algo.to_tensors(recorder.all_samples[-1])
    g = forward_costs(algo, batch, repeats)["G_seconds"]
    optimizer = algo.optimizer
    out = {"G_seconds": g}
    if hasattr(optimizer, "cg_iters"):
        out["outer_pass_floor_seconds"] = (optimizer.cg_iters + 1) * 2 * g + 3 * g
        backtracks = min(int(recorder.stats.get("NumBacktracks", 0)), optimizer.max_backtracks - 1)
        flops = trpo_step_matmul_flops(algo, recorder.all_samples, backtracks)
        tasks, samples_per_task = int(batch.observations.shape[0]), int(batch.observations.shape[1])
        rate = batched_matmul_rate(tasks, samples_per_task, 64, repeats)
        out.update(outer_matmul_gflop=flops / 1e9, batched_matmul_gflops_per_second=rate,
                   outer_matmul_floor_seconds=flops / 1e9 / rate)
    elif hasattr(optimizer, "max_epochs"):
        out["outer_pass_floor_seconds"] = optimizer.max_epochs * optimizer.num_minibatches * 3 * g
    return out


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
        "floor: the iteration's real env steps / the all-core raw `mj_step` rate replaying the "
        "run's own episodes (start states and controls), measured in the same run (sampling / "
        "floor is the fraction of raw physics the sampling keeps). Outer floors: `G` (forward "
        "and backward pass of the log-likelihood of the run's post-update batch) times the "
        "passes the step needs, and for TRPO-MAML the compiled step's matmul FLOPs over the "
        "batched-matmul throughput, both measured in the same run.",
        "",
        "| run | env steps | sampling (s) | processing (s) | inner (s) | outer (s) | "
        "iteration (s) | physics floor (s) | raw physics kept by sampling | outer pass floor (s) | "
        "outer matmul floor (s) | first iteration (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def number(value: float | None, digits: int = 3) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"

    for run in result["runs"]:
        s = run["median"]
        floor = run.get("physics_floor_seconds")
        lines.append(
            f"| {run['name']} | {s['env_steps']:.0f} | {s['sampling']:.3f} | "
            f"{s['processing']:.3f} | {s['inner']:.3f} | {s['outer']:.3f} | {s['total']:.3f} | "
            f"{number(floor)} | {number(floor and floor / s['sampling'], 2)} | "
            f"{number(run.get('outer_pass_floor_seconds'))} | "
            f"{number(run.get('outer_matmul_floor_seconds'))} | {run['iterations'][0]['total']:.1f} |"
        )
    for run in result["runs"]:
        raw = run.get("mj_step")
        if raw is not None:
            lines += ["", f"{run['name']}: all-core raw `mj_step` ({raw['env']}, "
                          f"{raw['processes']} processes, replaying {raw['controls']}): "
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
                        "W0-trpo_maml, W1-promp, W1-trpo_maml, W2-promp, W2-trpo_maml")
    parser.add_argument("--retrace_iterations", type=int, default=None,
                        help="iterations of the budget-mode retrace run (0 skips it)")
    parser.add_argument("--mj_step_steps", type=int, default=None,
                        help="env steps each raw mj_step process replays (default 20000; quick "
                        "2000)")
    parser.add_argument("--floor_repeats", type=int, default=3,
                        help="timed calls per outer-floor measurement (0 skips the outer floors)")
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
    raw_steps = args.mj_step_steps or (2000 if args.quick else 20000)
    runs = []
    for name in selected:
        workload, algo_key = name.split("-", 1)
        flags = WORKLOADS[workload] + (QUICK_OVERRIDES if args.quick else [])
        trainer, config = build_trainer(algo_key, flags)
        recorder = Recorder(trainer)
        try:
            rows = run_iterations(trainer, iterations)
        finally:
            if hasattr(trainer.sampler, "close"):
                trainer.sampler.close()
        run = {"name": name, "flags": flags, "config": {k: str(v) for k, v in vars(config).items()},
               "iterations": rows, "median": summarize(rows),
               "tracing_counts": tracing_counts(trainer.algo)}
        if workload != "W0":
            raw = physics_floor(config.env, trainer.env, recorder, raw_steps)
            run["mj_step"] = raw
            run["physics_floor_seconds"] = run["median"]["env_steps"] / raw["env_steps_per_s"]
        if args.floor_repeats > 0:
            run.update(outer_floors(trainer.algo, recorder, args.floor_repeats))
        s = run["median"]
        print(f"{name}: {s['total']:.3f} s/itr (sampling {s['sampling']:.3f}, processing "
              f"{s['processing']:.3f}, inner {s['inner']:.3f}, outer {s['outer']:.3f}); first "
              f"{rows[0]['total']:.1f} s; physics floor {run.get('physics_floor_seconds')}, outer "
              f"pass floor {run.get('outer_pass_floor_seconds')}, matmul floor "
              f"{run.get('outer_matmul_floor_seconds')}", flush=True)
        runs.append(run)
    retrace = None
    if retrace_iterations > 0:
        retrace = retrace_run("trpo_maml", RETRACE_FLAGS, retrace_iterations)
        print(f"budget-mode retrace run: sizes {retrace['episode_axis_sizes']}, traces "
              f"{ {k: n for k, n in retrace['tracing_counts'].items() if n} }", flush=True)
    machine["load_average_end"] = load_average()
    result = {"quick": args.quick, "iterations": iterations, "machine": machine,
              "runs": runs, "retrace": retrace}
    write_results(args.output_dir, "iteration_quick" if args.quick else "iteration", result, write_markdown)


if __name__ == "__main__":
    main()
