"""Sampling in a training run against a bare sampling phase, in CPU seconds and counts.

Wall-clock ratios need a quiet machine; CPU seconds per phase and counts much less so. For one
environment this script measures, with the parallel executor (``--n_parallel`` workers):

* **run**: the sampling phases of a training run built as the run scripts build it (the paper
  config of ``--env`` with ``--meta_batch_size`` tasks, ProMP, iterations after the first): per
  phase the CPU seconds of every worker process and of the parent (``obtain_samples``: the
  policy export, the transfer, assembling the batch, the non-finite check), the real env steps,
  the bytes of the padded batch and of the real steps alone (what the workers send back);
* **bare**: phases of ``executor.collect`` with ``benchmarks/sampling_benchmark.py``'s random
  policy and the ``'rollouts'`` quota, as that benchmark times them;
* **physics**: MuJoCo contacts and constraint-solver iterations per ``mj_step`` (counted in
  one pass), and CPU microseconds per env step (other passes, not counting), in this process,
  of (a) the run's last phase's episodes replayed, each from the start state the sampler drew
  for it with its controls (what ``iteration_benchmark.py``'s physics floor replays), (b) the
  bare phase's episodes, likewise, and (c) uniformly random controls from ``mj_resetData`` with
  a reset every 1000 steps (the physics floor ``iteration_benchmark.py`` used before it replayed
  the run's controls), the timing passes interleaved, medians of ``--repeats``.

Writes ``benchmarks/results/sampling_cpu_counts_<env>.{json,md}``. Usage::

    python benchmarks/sampling_cpu_counts.py [--env HalfCheetahRandDirecEnv] [--meta_batch_size 40]
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

from benchmarks.machine_info import describe_machine, load_average, machine_info, write_results  # noqa: E402
from benchmarks.sampling_benchmark import controls_of, make_policy, start_states_of  # noqa: E402


def batch_bytes(paths: Any) -> tuple[int, int]:
    """``(padded, real)`` bytes of a batch: all its arrays, and only their real steps plus the
    episode lengths (what the workers send back)."""
    arrays = [paths.observations, paths.actions, paths.rewards,
              *paths.agent_infos.values(), *paths.env_infos.values()]
    slots = paths.mask.size  # T x N x H
    steps = int(paths.num_env_steps)
    padded = sum(a.nbytes for a in arrays) + paths.mask.nbytes
    real = sum(a.nbytes // slots * steps for a in arrays) + 8 * paths.episode_mask.size
    return padded, real


def timed_phase(executor: Any, collect: Any) -> dict[str, Any]:
    """CPU seconds of the workers and of this process around ``collect()``, and its batch."""
    workers_before = [w["cpu_seconds"] for w in executor.worker_info()]
    cpu, wall = time.process_time(), time.perf_counter()
    paths = collect()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    workers = [w["cpu_seconds"] - before for w, before in
               zip(executor.worker_info(), workers_before)]
    padded, real = batch_bytes(paths)
    return {"wall_seconds": wall, "parent_cpu_seconds": cpu, "worker_cpu_seconds": workers,
            "env_steps": int(paths.num_env_steps), "padded_megabytes": padded / 1e6,
            "real_step_megabytes": real / 1e6, "paths": paths}


def run_phases(env_name: str, meta_batch_size: int, n_parallel: int, iterations: int
               ) -> tuple[list[dict[str, Any]], Any, Any]:
    """The sampling phases of ``iterations`` training iterations after a first one."""
    from benchmarks.iteration_benchmark import build_trainer
    from meta_policy_search.utils import logger

    logger.configure(dir=tempfile.mkdtemp(prefix="sampling_cpu_counts_"), format_strs=["log"])
    flags = ["--env", env_name, "--meta_batch_size", str(meta_batch_size),
             "--rollouts_per_meta_task", "20", "--paper_config", "true",
             "--executor", "parallel", "--n_parallel", str(n_parallel)]
    trainer, config = build_trainer("promp", flags)
    phases: list[dict[str, Any]] = []
    obtain = trainer.sampler.obtain_samples
    try:
        trainer._run_iteration(0)
        logger.dumpkvs()

        def measured(*args: Any, **kwargs: Any) -> Any:
            sampler = trainer.sampler
            drawn = (list(sampler.tasks), sampler.seed, sampler.phase)
            phase = timed_phase(sampler.executor, lambda: obtain(*args, **kwargs))
            phase["drawn"] = drawn
            phases.append(phase)
            return phase["paths"]

        trainer.sampler.obtain_samples = measured
        for itr in range(1, iterations + 1):
            trainer._run_iteration(itr)
            logger.dumpkvs()
    finally:
        trainer.sampler.close()
    return phases, trainer.env, config


def bare_phases(env: Any, meta_batch_size: int, horizon: int, n_parallel: int, repeats: int
                ) -> list[dict[str, Any]]:
    """``repeats`` phases of ``executor.collect`` after a first one (sampling_benchmark.py's)."""
    from meta_policy_search.samplers import MetaParallelEnvExecutor
    from meta_policy_search.samplers.quota import EpisodeQuota

    policy = make_policy(meta_batch_size, env.observation_space.shape[0],
                         env.action_space.shape[0], (64, 64), 0)
    seed = 0
    tasks = env.sample_tasks(meta_batch_size)
    with MetaParallelEnvExecutor(env, meta_batch_size, 20, horizon, seed=seed,
                                 n_parallel=n_parallel, quota=EpisodeQuota(20)) as executor:
        executor.set_tasks(tasks)
        executor.collect(policy, 0)
        phases = []
        for p in range(1, repeats + 1):
            phases.append(timed_phase(executor, lambda p=p: executor.collect(policy, p)))
            phases[-1]["drawn"] = (tasks, seed, p)
        return phases


def physics_counts(env: Any, loops: dict[str, Any], repeats: int) -> dict[str, dict[str, float]]:
    """Contacts and solver iterations per ``mj_step`` (one counting pass) and CPU microseconds
    per env step (``repeats`` timing passes without counting, interleaved over the loops;
    median) of each loop: ``(controls, qpos, qvel)``, the controls ``[episodes, steps, nu]``
    (NaN after an episode's end) and each episode's start ``qpos`` and ``qvel``, set after
    ``mj_resetData``."""
    import mujoco

    inner = env.unwrapped
    model, frame_skip = inner.model, int(inner.frame_skip)
    data = mujoco.MjData(model)
    step, reset = mujoco.mj_step, mujoco.mj_resetData
    episodes = {name: [(episode[~np.isnan(episode[:, 0])], q, v)
                       for episode, q, v in zip(controls, qpos, qvel)]
                for name, (controls, qpos, qvel) in loops.items()}
    results: dict[str, dict[str, Any]] = {}
    for name, loop in episodes.items():
        contacts = iterations = steps = 0
        for episode, qpos, qvel in loop:
            reset(model, data)
            data.qpos[:], data.qvel[:] = qpos, qvel
            for ctrl in episode:
                data.ctrl[:] = ctrl
                step(model, data, frame_skip)
                contacts += data.ncon
                iterations += int(np.sum(data.solver_niter))
                steps += 1
        results[name] = {"contacts": contacts / steps, "solver_iterations": iterations / steps,
                         "steps": steps, "cpu": []}
    for _ in range(repeats):
        for name, loop in episodes.items():
            ctrl = data.ctrl
            start = time.process_time()
            for episode, qpos, qvel in loop:
                reset(model, data)
                data.qpos[:], data.qvel[:] = qpos, qvel
                for row in episode:
                    ctrl[:] = row
                    step(model, data, frame_skip)
            results[name]["cpu"].append(time.process_time() - start)
    return {name: {"contacts": r["contacts"], "solver_iterations": r["solver_iterations"],
                   "cpu_microseconds": statistics.median(r["cpu"]) / r["steps"] * 1e6}
            for name, r in results.items()}


def summary(phases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-phase values without the batches."""
    return [{key: value for key, value in phase.items() if key not in ("paths", "drawn")}
            for phase in phases]


def write_markdown(path: Path, result: dict) -> None:
    lines = [
        f"# Sampling in a run against a bare phase: {result['env']} (CPU seconds and counts)",
        "",
        f"`python benchmarks/sampling_cpu_counts.py --env {result['env']} --meta_batch_size "
        f"{result['meta_batch_size']}`: the parallel executor with {result['n_parallel']} "
        "workers. CPU seconds are per process (`time.process_time`), which other jobs on the "
        "machine affect much less than wall time; the wall times are listed only to show the "
        "machine's load.",
        "",
        "| phase | env steps | wall (s) | worker CPU (s) | worker CPU per 1k steps (s) | parent "
        "CPU (s) | padded batch (MB) | real steps (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in ("run", "bare"):
        for k, phase in enumerate(result[kind]):
            cpu = phase["worker_cpu_seconds"]
            lines.append(
                f"| {kind} {k + 1} | {phase['env_steps']} | {phase['wall_seconds']:.1f} | "
                f"{' + '.join(f'{c:.2f}' for c in cpu)} | {sum(cpu) / phase['env_steps'] * 1e3:.4f} | "
                f"{phase['parent_cpu_seconds']:.3f} | {phase['padded_megabytes']:.1f} | "
                f"{phase['real_step_megabytes']:.1f} |"
            )
    lines += [
        "",
        "Physics of the controls (medians of interleaved repeats, in this process; the replays "
        "start every episode from the start state the sampler drew for it):",
        "",
        "| controls | contacts per step | solver iterations per step | CPU per env step (us) |",
        "|---|---:|---:|---:|",
    ]
    for name, row in result["physics"].items():
        lines.append(f"| {name} | {row['contacts']:.2f} | {row['solver_iterations']:.2f} | "
                     f"{row['cpu_microseconds']:.1f} |")
    lines += ["", describe_machine(result["machine"]), ""]
    path.write_text("\n".join(lines))


def main() -> None:
    import mujoco

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="HalfCheetahRandDirecEnv")
    parser.add_argument("--meta_batch_size", type=int, default=40)
    parser.add_argument("--n_parallel", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=2, help="timed run iterations")
    parser.add_argument("--repeats", type=int, default=3, help="bare phases and physics repeats")
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()
    machine = machine_info(numpy=np.__version__, mujoco=mujoco.__version__)
    machine["load_average_start"] = load_average()
    run, env, config = run_phases(args.env, args.meta_batch_size, args.n_parallel,
                                  args.iterations)
    bare = bare_phases(env, args.meta_batch_size, config.max_path_length, args.n_parallel,
                       args.repeats)
    inner = env.unwrapped
    uniform = np.random.default_rng(0).uniform(-1, 1, (20, 1000, inner.model.nu))

    def replayed(phase: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (controls_of(env, phase["paths"]),
                *start_states_of(env, phase["paths"], *phase["drawn"]))

    loops = {
        "the run's last phase, replayed": replayed(run[-1]),
        "the bare phase's, replayed": replayed(bare[-1]),
        "uniform in [-1, 1], reset every 1000 steps": (
            uniform, np.tile(inner.init_qpos, (20, 1)), np.tile(inner.init_qvel, (20, 1))),
    }
    physics = physics_counts(env, loops, args.repeats)
    machine["load_average_end"] = load_average()
    result = {"env": args.env, "meta_batch_size": args.meta_batch_size,
              "n_parallel": args.n_parallel, "run": summary(run), "bare": summary(bare),
              "physics": physics, "machine": machine}
    write_results(args.output_dir, f"sampling_cpu_counts_{args.env}", result, write_markdown)


if __name__ == "__main__":
    main()
