"""Sampling throughput: env steps per second of one sampling phase, next to raw MuJoCo.

Measures, in one run on one machine:

* ``iterative``: :class:`MetaIterativeEnvExecutor`, all envs in this process;
* ``parallel``: :class:`MetaParallelEnvExecutor` with ``--n_parallel`` workers;
* ``raw_mj_step``: ``mujoco.mj_step(model, data, nstep=frame_skip)`` in a Python loop on the same
  model, i.e. the physics of one env step with no gymnasium, reward or policy work: the ceiling
  for a single core.

The default configuration is the paper's half-cheetah meta-batch: ``HalfCheetahRandDirecEnv``
wrapped in ``normalize``, 40 tasks x 20 rollouts x H = 100 (80,000 env steps per phase) with a
(64, 64) tanh policy. ``--quick`` runs a small smoke configuration.

Writes ``benchmarks/results/sampling.json`` and ``sampling.md`` (``--quick`` writes
``sampling_quick.*``). Usage::

    python benchmarks/sampling_benchmark.py [--quick] [--n_parallel 2] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.machine_info import machine_info  # noqa: E402
from meta_policy_search.envs import normalize  # noqa: E402
from meta_policy_search.envs.mujoco_envs import HalfCheetahRandDirecEnv  # noqa: E402
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP  # noqa: E402
from meta_policy_search.samplers import (  # noqa: E402
    MetaIterativeEnvExecutor,
    MetaParallelEnvExecutor,
)


def make_policy(num_tasks: int, obs_dim: int, act_dim: int, hidden: tuple[int, ...], seed: int):
    """A random float32 Gaussian MLP per task (the TF policy exports float32 parameters)."""
    rng = np.random.default_rng(seed)
    sizes = (obs_dim, *hidden, act_dim)
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        scale = 1.0 / np.sqrt(n_in)
        params[f"W{i}"] = (rng.normal(size=(num_tasks, n_in, n_out)) * scale).astype(np.float32)
        params[f"b{i}"] = np.zeros((num_tasks, n_out), np.float32)
    params["log_std"] = np.zeros((num_tasks, act_dim), np.float32)
    return NumpyGaussianMLP(params)


def cpu_seconds(executor) -> float:
    """CPU time of this process plus, for the parallel executor, of its workers."""
    total = time.process_time()
    if isinstance(executor, MetaParallelEnvExecutor):
        total += sum(worker["cpu_seconds"] for worker in executor.worker_info())
    return total


def time_executor(executor, tasks, policy, num_rollouts: int, repeats: int) -> dict:
    """Wall and CPU time of ``repeats`` sampling phases (after setting the tasks once).

    CPU time (all processes) per env step does not depend on how busy the machine is, unlike
    the wall time; on a shared machine it is the more stable number.
    """
    executor.set_tasks(tasks)
    times, cpu_times, steps = [], [], 0
    for phase in range(repeats):
        cpu_start, start = cpu_seconds(executor), time.perf_counter()
        paths = executor.collect(policy, num_rollouts, phase)
        times.append(time.perf_counter() - start)
        cpu_times.append(cpu_seconds(executor) - cpu_start)
        steps = paths.num_env_steps
    best = min(times)
    return {
        "env_steps_per_phase": steps,
        "phase_seconds": times,
        "phase_cpu_seconds": cpu_times,
        "best_phase_seconds": best,
        "env_steps_per_s": steps / best,
        "env_steps_per_cpu_s": steps / min(cpu_times),
    }


def time_raw_mujoco(env, num_env_steps: int, seed: int) -> dict:
    """``mj_step`` throughput on the env's own model, in env-step equivalents."""
    import mujoco

    inner = env.unwrapped
    model, frame_skip = inner.model, inner.frame_skip
    data = mujoco.MjData(model)
    rng = np.random.default_rng(seed)
    controls = rng.uniform(-1, 1, size=(1000, model.nu))
    start, cpu_start = time.perf_counter(), time.process_time()
    for i in range(num_env_steps):
        if i % 1000 == 0:
            mujoco.mj_resetData(model, data)
        data.ctrl[:] = controls[i % 1000]
        mujoco.mj_step(model, data, nstep=frame_skip)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return {
        "env_steps_per_cpu_s": num_env_steps / cpu,
        "frame_skip": int(frame_skip),
        "env_steps": num_env_steps,
        "seconds": elapsed,
        "env_steps_per_s": num_env_steps / elapsed,
        "mj_steps_per_s": num_env_steps * frame_skip / elapsed,
    }


def time_policy(policy, num_envs_per_task: int, obs_dim: int, act_dim: int, calls: int) -> dict:
    """Cost of the one batched policy evaluation per time step."""
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(policy.num_tasks, num_envs_per_task, obs_dim))
    noise = rng.normal(size=(policy.num_tasks, num_envs_per_task, act_dim))
    policy.sample(obs, noise)
    start = time.perf_counter()
    for _ in range(calls):
        policy.sample(obs, noise)
    return {"ms_per_call": 1e3 * (time.perf_counter() - start) / calls,
            "batch": [policy.num_tasks, num_envs_per_task, obs_dim]}


def write_markdown(path: Path, result: dict) -> None:
    cfg, m, raw = result["config"], result["machine"], result["raw_mj_step"]
    runs = result["runs"]
    lines = [
        "# Sampling benchmark",
        "",
        f"One sampling phase of `normalize(HalfCheetahRandDirecEnv())`: {cfg['meta_batch_size']} "
        f"tasks x {cfg['rollouts_per_meta_task']} rollouts x H={cfg['max_path_length']} "
        f"({runs[0]['env_steps_per_phase']} env steps), policy {tuple(cfg['hidden_sizes'])} "
        f"tanh, best of {cfg['repeats']} phases. `E` = env copies per task (`envs_per_task`; "
        f"`E` = R is the default, one wave; `E` = 1 runs R waves of {cfg['meta_batch_size']} "
        "envs).",
        "",
        "| executor | E | env steps/s (wall) | phase time (s) | env steps per CPU-second "
        "(all processes) | CPU efficiency vs. raw mj_step | start-up (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        lines.append(
            f"| {run['executor']} | {run['envs_per_task']} | {run['env_steps_per_s']:,.0f} | "
            f"{run['best_phase_seconds']:.2f} | {run['env_steps_per_cpu_s']:,.0f} | "
            f"{run['env_steps_per_cpu_s'] / raw['env_steps_per_cpu_s']:.2f} | "
            f"{run['startup_seconds']:.2f} |"
        )
    lines += [
        f"| raw `mj_step(nstep={raw['frame_skip']})` loop, 1 MjData | | "
        f"{raw['env_steps_per_s']:,.0f} | | {raw['env_steps_per_cpu_s']:,.0f} | 1.00 | |",
        "",
        "Wall-clock rates depend on how many cores are free (see the load average below); "
        "CPU-second rates much less so. Start-up: building the env copies (and, for the "
        "parallel executor, spawning the workers).",
        "",
        f"Policy evaluation: {result['policy']['ms_per_call']:.3f} ms per time step for "
        f"{result['policy']['batch']} observations.",
        "",
        f"Machine: {m['cpu_model']}, {m['usable_cores']} usable cores (load average before the "
        f"run {m['load_average_1_5_15'][0]:.2f}); Python {m['python']}, numpy {m['numpy']}, "
        f"mujoco {m['mujoco']}, gymnasium {m['gymnasium']}; {m['date']}.",
        "",
    ]
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small smoke configuration")
    parser.add_argument("--n_parallel", type=int, default=2, help="parallel executor workers")
    parser.add_argument("--repeats", type=int, default=2, help="sampling phases per executor")
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()

    if args.quick:
        meta_batch_size, rollouts, horizon = 4, 5, 50
    else:
        meta_batch_size, rollouts, horizon = 40, 20, 100
    hidden = (64, 64)
    config = {
        "env": "normalize(HalfCheetahRandDirecEnv())",
        "meta_batch_size": meta_batch_size,
        "rollouts_per_meta_task": rollouts,
        "max_path_length": horizon,
        "hidden_sizes": list(hidden),
        "n_parallel": args.n_parallel,
        "repeats": args.repeats,
        "quick": args.quick,
    }
    machine = machine_info(numpy=np.__version__, mujoco=metadata.version("mujoco"),
                           gymnasium=metadata.version("gymnasium"))
    machine["load_average_1_5_15"] = list(os.getloadavg())
    env = normalize(HalfCheetahRandDirecEnv())
    env.seed_tasks(0)
    tasks = env.sample_tasks(meta_batch_size)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    policy = make_policy(meta_batch_size, obs_dim, act_dim, hidden, seed=0)

    raw = time_raw_mujoco(env, 20_000 if not args.quick else 5_000, seed=0)
    print(f"raw mj_step: {raw['env_steps_per_s']:,.0f} env steps/s", flush=True)
    policy_time = time_policy(policy, rollouts, obs_dim, act_dim, calls=200)

    runs = []
    for name in ("iterative", f"parallel ({args.n_parallel} workers)"):
        for envs_per_task in (rollouts, 1):
            start = time.perf_counter()
            if name == "iterative":
                executor = MetaIterativeEnvExecutor(env, meta_batch_size, envs_per_task, horizon)
            else:
                executor = MetaParallelEnvExecutor(
                    env, meta_batch_size, envs_per_task, horizon, n_parallel=args.n_parallel
                )
            startup = time.perf_counter() - start
            with executor:
                run = time_executor(executor, tasks, policy, rollouts, args.repeats)
            run.update(executor=name, envs_per_task=envs_per_task, startup_seconds=startup)
            runs.append(run)
            print(f"{name}, E={envs_per_task}: {run['env_steps_per_s']:,.0f} env steps/s "
                  f"({run['env_steps_per_cpu_s']:,.0f} per CPU-s)", flush=True)

    result = {
        "config": config,
        "machine": machine,
        "raw_mj_step": raw,
        "policy": policy_time,
        "runs": runs,
    }
    args.output_dir.mkdir(parents=True, exist_ok=True)
    stem = "sampling_quick" if args.quick else "sampling"
    (args.output_dir / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    write_markdown(args.output_dir / f"{stem}.md", result)
    print(f"wrote {args.output_dir / stem}.json and .md")


if __name__ == "__main__":
    main()
