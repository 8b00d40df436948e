"""Sampling throughput of every env of the suite, next to raw MuJoCo physics on all cores.

Issue 7's goal: the default executor's env steps/s >= 0.85 x the raw physics steps/s of the same
model on all cores, measured in the same run. For each MuJoCo env this script measures, in order:

1. ``raw``: ``mujoco.mj_step(model, data, nstep=frame_skip)`` in a Python loop on one
   ``MjData``, replaying the episodes (start states, controls and lengths) of a sampling phase
   recorded first (:func:`raw_physics`),
   run in ``--n_parallel`` processes at once: the physics ceiling of all cores, in env steps/s
   (the sum of the processes' rates);
2. ``batched``: one sampling phase of :class:`MetaParallelEnvExecutor` with ``--n_parallel``
   workers (the default executor) and the env's batched implementation, best of ``--repeats``;
3. ``per_env``: the same with ``use_batched_env=False`` (the single gymnasium-based envs, the path
   before issue 7), unless ``--skip_per_env``;
4. ``raw`` again. The ratios use the mean of the two raw measurements, which bracket the
   executors' (on a machine shared with other jobs, compare the two: they show the noise).

Single-core efficiency, which depends less on the machine's other load: the CPU time per env
step of the raw replay over that of the batched env stepped in this process
(:class:`MetaIterativeEnvExecutor`), interleaved in the same process (``cpu_ratio_1core``).

The point envs have no physics: their row gives the time of one sampling phase (``20 x 20 x
100`` steps; the goal is <= 0.1 s) with the iterative executor, batched and per-env.

The configuration is the paper's meta-batch: 40 tasks x 20 rollouts x H = 100 (80,000 env steps
per phase) with a (64, 64) tanh policy on ``normalize(env)``. ``--quick`` runs a small smoke
configuration on every env. Writes ``benchmarks/results/sampling.json`` and ``sampling.md``
(``--quick``: ``sampling_quick.*``). Usage::

    python benchmarks/sampling_benchmark.py [--quick] [--envs HalfCheetahRandDirecEnv ...]
        [--n_parallel N] [--repeats 2] [--skip_per_env]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.machine_info import machine_info, write_results  # noqa: E402
from meta_policy_search.envs import make_env, normalize  # noqa: E402
from meta_policy_search.envs.registry import (  # noqa: E402
    MUJOCO_ENV_CLASS_NAMES,
    POINT_ENV_CLASS_NAMES,
)
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP  # noqa: E402
from meta_policy_search.samplers import (  # noqa: E402
    MetaIterativeEnvExecutor,
    MetaParallelEnvExecutor,
)
from meta_policy_search.samplers.parallel_executor import default_num_workers  # noqa: E402
from meta_policy_search.samplers.quota import EpisodeQuota  # noqa: E402


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


def make_normalized_env_for_benchmark(name: str):
    """``normalize(make_env(name))`` with the env's default arguments."""
    return normalize(make_env(name))


# ---------------------------------------------------------------------- raw physics
def record_replay(env, sizes: dict, tasks, policy, path: Path) -> None:
    """Save the episodes one batched sampling phase simulates (:func:`save_replay`).

    The raw loop replays them, so that it simulates the same kind of motion (contacts, falls) as
    the sampler: uniformly random controls make e.g. the half-cheetah ~10 % cheaper to simulate.
    """
    seed, phase = 0, 0
    executor = MetaIterativeEnvExecutor(
        env, sizes["meta_batch_size"], sizes["rollouts"], sizes["horizon"], seed=seed,
        quota=EpisodeQuota(sizes["rollouts"]),
    )
    with executor:
        executor.set_tasks(tasks)
        paths = executor.collect(policy, phase)
    save_replay(path, env, paths, tasks, seed, phase)


def controls_of(env, paths) -> np.ndarray:
    """The controls the env applied in ``paths``' real episodes, ``[episodes, H, nu]`` float64,
    NaN after an episode's end (what :func:`raw_physics` replays).

    Args:
        env: the env that sampled ``paths``; a ``normalize`` wrapper's action mapping is applied.
        paths: a :class:`~meta_policy_search.types.PathBatch`.
    """
    horizon = paths.actions.shape[2]
    real = paths.episode_mask.reshape(-1)
    actions = paths.actions.reshape(-1, horizon, paths.actions.shape[-1])[real]
    controls = np.asarray(env.action(actions) if hasattr(env, "action") else actions,
                          dtype=np.float64)
    controls[paths.mask.reshape(-1, horizon)[real] == 0] = np.nan
    return controls


def start_states_of(env, paths, tasks, seed: int, phase: int) -> tuple[np.ndarray, np.ndarray]:
    """The start ``qpos`` and ``qvel`` of ``paths``' real episodes, in :func:`controls_of`'s order.

    Each is drawn as the sampler drew it: episode ``k`` of task ``t`` (its ``k``-th slot: a
    phase returns every task's episodes from episode 0 on) resets a copy of the env, set to the
    task, with the seed of :func:`~meta_policy_search.samplers.rollout.episode_randomness`.

    Args:
        env: the env that sampled ``paths`` (a MuJoCo meta-env, possibly wrapped).
        paths: a :class:`~meta_policy_search.types.PathBatch` of one sampling phase.
        tasks: the phase's tasks, one per row of ``paths``.
        seed: the sampler's (executor's) root seed.
        phase: the phase's index.

    Returns:
        ``(qpos [episodes, nq], qvel [episodes, nv])``.
    """
    import pickle

    from meta_policy_search.samplers.rollout import episode_randomness

    inner = pickle.loads(pickle.dumps(env.unwrapped))
    qpos, qvel = [], []
    num_tasks, num_slots = paths.episode_mask.shape
    for t in range(num_tasks):
        inner.set_task(tasks[t])
        for k in range(num_slots):
            if not paths.episode_mask[t, k]:
                continue
            reset_seed, _ = episode_randomness(seed, phase, t, k, 1, 1)
            inner.reset(seed=reset_seed)
            qpos.append(inner.data.qpos.copy())
            qvel.append(inner.data.qvel.copy())
    return np.array(qpos), np.array(qvel)


def save_replay(path: Path, env, paths, tasks, seed: int, phase: int) -> None:
    """Save what :func:`raw_physics` replays of one sampling phase to ``path`` (``.npz``): the
    controls (:func:`controls_of`) and the start states (:func:`start_states_of`)."""
    qpos, qvel = start_states_of(env, paths, tasks, seed, phase)
    np.savez(path, controls=controls_of(env, paths), qpos=qpos, qvel=qvel)


def raw_physics(name: str, replay_path: str, num_env_steps: int, first_episode: int) -> dict:
    """Replay a sampling phase's episodes with ``mj_step(nstep=frame_skip)`` on one ``MjData``.

    Each episode starts as the sampler started it: ``mj_resetData``, then the episode's
    recorded start ``qpos`` and ``qvel``; it runs for its recorded length with its recorded
    controls (:func:`save_replay`), so the replay simulates the phase's states and contacts.
    Episodes are replayed from ``first_episode`` on (cyclically) until ``num_env_steps`` env
    steps. One model for all episodes: the tasks of the rand-params envs (which change the
    model) are not replayed.
    """
    import mujoco

    inner = make_normalized_env_for_benchmark(name).unwrapped
    model, frame_skip = inner.model, int(inner.frame_skip)
    data = mujoco.MjData(model)
    with np.load(replay_path) as replay:
        controls, start_qpos, start_qvel = replay["controls"], replay["qpos"], replay["qvel"]
    lengths = np.sum(~np.isnan(controls[..., 0]), axis=1)
    step, reset, ctrl = mujoco.mj_step, mujoco.mj_resetData, data.ctrl
    done, episode = 0, first_episode
    start, cpu_start = time.perf_counter(), time.process_time()
    while done < num_env_steps:
        e = episode % len(controls)
        episode_controls = controls[e]
        reset(model, data)
        data.qpos[:] = start_qpos[e]
        data.qvel[:] = start_qvel[e]
        for h in range(min(lengths[e], num_env_steps - done)):
            ctrl[:] = episode_controls[h]
            step(model, data, frame_skip)
            done += 1
        episode += 1
    return {
        "env_steps": done,
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu_start,
        "frame_skip": frame_skip,
    }


def _raw_worker(args: tuple[str, str, int, int]) -> dict:
    return raw_physics(*args)


def raw_all_cores(name: str, replay_path: Path, num_processes: int, num_env_steps: int) -> dict:
    """:func:`raw_physics` in ``num_processes`` processes at once; rates summed over them."""
    context = mp.get_context("spawn")
    jobs = [(name, str(replay_path), num_env_steps, 97 * k) for k in range(num_processes)]
    with context.Pool(num_processes) as pool:
        pool.map(_raw_worker, [(n, c, 200, e) for n, c, _, e in jobs])  # warm up
        results = pool.map(_raw_worker, jobs)
    return {
        "processes": num_processes,
        "env_steps_per_s": sum(r["env_steps"] / r["seconds"] for r in results),
        "per_process": results,
    }


# ---------------------------------------------------------------------- executors
def time_executor(executor, tasks, policy, repeats: int) -> dict:
    """Wall and CPU time (this process) of ``repeats`` sampling phases; the best phase counts."""
    executor.set_tasks(tasks)
    times, cpu_times, steps = [], [], 0
    for phase in range(repeats):
        cpu_start, start = time.process_time(), time.perf_counter()
        paths = executor.collect(policy, phase)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
        steps = paths.num_env_steps
    return {
        "env_steps_per_phase": steps,
        "phase_seconds": times,
        "best_phase_seconds": min(times),
        "env_steps_per_s": steps / min(times),
        "env_steps_per_cpu_s_this_process": steps / max(min(cpu_times), 1e-9),
    }


def run_executor(kind: str, env, sizes: dict, tasks, policy, repeats: int, batched: bool,
                 n_parallel: int) -> dict:
    """Build an executor (``'parallel'`` or ``'iterative'``), time it, close it."""
    start = time.perf_counter()
    args = (env, sizes["meta_batch_size"], sizes["rollouts"], sizes["horizon"])
    quota = EpisodeQuota(sizes["rollouts"])
    if kind == "parallel":
        executor: Any = MetaParallelEnvExecutor(*args, n_parallel=n_parallel,
                                                use_batched_env=batched, quota=quota)
    else:
        executor = MetaIterativeEnvExecutor(*args, use_batched_env=batched, quota=quota)
    startup = time.perf_counter() - start
    with executor:
        result = time_executor(executor, tasks, policy, repeats)
    result.update(executor=kind, batched=batched, startup_seconds=startup)
    return result


def single_core_cpu_ratio(name: str, env, sizes: dict, tasks, policy, replay_path: Path,
                          rounds: int) -> dict:
    """CPU seconds per env step, raw replay vs batched iterative executor, interleaved here."""
    executor = MetaIterativeEnvExecutor(
        env, sizes["meta_batch_size"], sizes["rollouts"], sizes["horizon"],
        quota=EpisodeQuota(sizes["rollouts"]),
    )
    executor.set_tasks(tasks)
    raw_rates, batched_rates = [], []
    with executor:
        for phase in range(rounds):
            raw = raw_physics(name, str(replay_path), sizes["raw_steps"], 0)
            raw_rates.append(raw["env_steps"] / raw["cpu_seconds"])
            cpu_start = time.process_time()
            paths = executor.collect(policy, phase)
            batched_rates.append(paths.num_env_steps / (time.process_time() - cpu_start))
    return {
        "raw_env_steps_per_cpu_s": max(raw_rates),
        "batched_env_steps_per_cpu_s": max(batched_rates),
        "cpu_ratio_1core": max(batched_rates) / max(raw_rates),
    }


def benchmark_mujoco_env(name: str, args: argparse.Namespace, sizes: dict) -> dict:
    env = make_normalized_env_for_benchmark(name)
    env.seed_tasks(0)
    tasks = env.sample_tasks(sizes["meta_batch_size"])
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    policy = make_policy(sizes["meta_batch_size"], obs_dim, act_dim, (64, 64), seed=0)
    raw_steps = sizes["raw_steps"]
    result: dict = {"env": name}
    with tempfile.TemporaryDirectory() as tmp:
        replay = Path(tmp) / "replay.npz"
        record_replay(env, sizes, tasks, policy, replay)
        result["raw_before"] = raw_all_cores(name, replay, args.n_parallel, raw_steps)
        result["batched"] = run_executor("parallel", env, sizes, tasks, policy, args.repeats,
                                         True, args.n_parallel)
        if not args.skip_per_env:
            result["per_env"] = run_executor("parallel", env, sizes, tasks, policy, 1, False,
                                             args.n_parallel)
        result["raw_after"] = raw_all_cores(name, replay, args.n_parallel, raw_steps)
        result.update(single_core_cpu_ratio(name, env, sizes, tasks, policy, replay, rounds=2))
    raw = 0.5 * (result["raw_before"]["env_steps_per_s"] + result["raw_after"]["env_steps_per_s"])
    result["raw_env_steps_per_s"] = raw
    result["ratio_batched"] = result["batched"]["env_steps_per_s"] / raw
    if "per_env" in result:
        result["ratio_per_env"] = result["per_env"]["env_steps_per_s"] / raw
    env.close()
    return result


def benchmark_point_env(name: str, args: argparse.Namespace, sizes: dict) -> dict:
    env = make_normalized_env_for_benchmark(name)
    env.seed_tasks(0)
    tasks = env.sample_tasks(sizes["meta_batch_size"])
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    policy = make_policy(sizes["meta_batch_size"], obs_dim, act_dim, (64, 64), seed=0)
    result: dict = {"env": name}
    for batched in (True, False):
        key = "batched" if batched else "per_env"
        result[key] = run_executor("iterative", env, sizes, tasks, policy, args.repeats, batched,
                                   1)
    return result


# ---------------------------------------------------------------------- report
def write_markdown(path: Path, result: dict) -> None:
    cfg, m = result["config"], result["machine"]
    mj, pt = cfg["mujoco_sizes"], cfg["point_sizes"]
    lines = [
        "# Sampling benchmark",
        "",
        f"MuJoCo envs: one sampling phase of `normalize(env)`, {mj['meta_batch_size']} tasks x "
        f"{mj['rollouts']} rollouts x H={mj['horizon']}, policy (64, 64) tanh, default executor "
        f"(parallel, {cfg['n_parallel']} workers), best of {cfg['repeats']} phases. `raw`: "
        f"`mj_step(nstep=frame_skip)` loop in {cfg['n_parallel']} processes at once, measured "
        "before and after the executors (their mean is the denominator of the ratios). "
        "`1-core CPU ratio`: CPU time per env step of the raw loop over the batched iterative "
        "executor's, interleaved in one process.",
        "",
        "| env | raw env steps/s (before / after) | batched env steps/s | ratio | per-env env "
        "steps/s | ratio | 1-core CPU ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for run in result["mujoco"]:
        per_env = run.get("per_env")
        lines.append(
            f"| {run['env']} | {run['raw_before']['env_steps_per_s']:,.0f} / "
            f"{run['raw_after']['env_steps_per_s']:,.0f} | "
            f"{run['batched']['env_steps_per_s']:,.0f} | {run['ratio_batched']:.2f} | "
            + (f"{per_env['env_steps_per_s']:,.0f} | {run['ratio_per_env']:.2f} | "
               if per_env else "- | - | ")
            + f"{run['cpu_ratio_1core']:.2f} |"
        )
    lines += [
        "",
        f"Point envs: one sampling phase of {pt['meta_batch_size']} tasks x {pt['rollouts']} "
        f"rollouts x H={pt['horizon']}, iterative executor (goal: <= 0.1 s).",
        "",
        "| env | batched phase (s) | per-env phase (s) |",
        "|---|---:|---:|",
    ]
    for run in result["point"]:
        lines.append(
            f"| {run['env']} | {run['batched']['best_phase_seconds']:.3f} | "
            f"{run['per_env']['best_phase_seconds']:.3f} |"
        )
    lines += [
        "",
        f"Machine: {m['cpu_model']}, {m['usable_cores']} usable cores (load average before the "
        f"run {m['load_average_1_5_15'][0]:.2f}, after {result['load_average_after'][0]:.2f}); "
        f"Python {m['python']}, numpy {m['numpy']}, mujoco {m['mujoco']}, gymnasium "
        f"{m['gymnasium']}; {m['date']}.",
        "",
    ]
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small smoke configuration")
    parser.add_argument("--envs", nargs="*", default=None, help="env class names (default: all)")
    parser.add_argument("--n_parallel", type=int, default=None,
                        help="workers and raw processes (default: usable cores)")
    parser.add_argument("--repeats", type=int, default=2, help="sampling phases per executor")
    parser.add_argument("--skip_per_env", action="store_true",
                        help="do not time the per-env (pre-issue-7) path")
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()

    if args.quick:
        mujoco_sizes = {"meta_batch_size": 4, "rollouts": 5, "horizon": 50, "raw_steps": 2000}
        point_sizes = {"meta_batch_size": 4, "rollouts": 5, "horizon": 50}
    else:
        mujoco_sizes = {"meta_batch_size": 40, "rollouts": 20, "horizon": 100,
                        "raw_steps": 20_000}
        point_sizes = {"meta_batch_size": 20, "rollouts": 20, "horizon": 100}
    if args.n_parallel is None:
        args.n_parallel = default_num_workers(mujoco_sizes["meta_batch_size"])
    names = args.envs or list(POINT_ENV_CLASS_NAMES + MUJOCO_ENV_CLASS_NAMES)
    unknown = sorted(set(names) - set(POINT_ENV_CLASS_NAMES + MUJOCO_ENV_CLASS_NAMES))
    if unknown:
        parser.error(f"unknown env names {unknown}")

    machine = machine_info(numpy=np.__version__, mujoco=metadata.version("mujoco"),
                           gymnasium=metadata.version("gymnasium"))
    machine["load_average_1_5_15"] = list(os.getloadavg())
    result: dict = {
        "config": {
            "mujoco_sizes": mujoco_sizes, "point_sizes": point_sizes, "hidden_sizes": [64, 64],
            "n_parallel": args.n_parallel, "repeats": args.repeats, "quick": args.quick,
            "envs": names,
        },
        "machine": machine,
        "mujoco": [],
        "point": [],
    }
    for name in names:
        if name in POINT_ENV_CLASS_NAMES:
            run = benchmark_point_env(name, args, point_sizes)
            result["point"].append(run)
            print(f"{name}: batched {run['batched']['best_phase_seconds']:.3f} s per phase, "
                  f"per-env {run['per_env']['best_phase_seconds']:.3f} s", flush=True)
        else:
            run = benchmark_mujoco_env(name, args, mujoco_sizes)
            result["mujoco"].append(run)
            print(f"{name}: raw {run['raw_env_steps_per_s']:,.0f} env steps/s on "
                  f"{args.n_parallel} cores; batched {run['batched']['env_steps_per_s']:,.0f} "
                  f"({run['ratio_batched']:.2f} of raw)"
                  + (f", per-env {run['per_env']['env_steps_per_s']:,.0f} "
                     f"({run['ratio_per_env']:.2f})" if "per_env" in run else "")
                  + f"; 1-core CPU ratio {run['cpu_ratio_1core']:.2f}", flush=True)
    result["load_average_after"] = list(os.getloadavg())
    write_results(args.output_dir, "sampling_quick" if args.quick else "sampling", result, write_markdown)


if __name__ == "__main__":
    main()
