"""CPU microseconds per env step: a sampler worker's step loop against raw physics, two trees.

What one sampler worker does in a paper run, in one process: the iterative executor (the loop a
parallel worker runs, :func:`~meta_policy_search.samplers.rollout.collect_paths`) with the env's
batched implementation and a (64, 64) tanh numpy policy collects one worker's half of the paper
meta-batch. Its CPU seconds per real env step (``time.process_time`` around ``collect``) are
compared with those of the raw physics of the very same episodes: ``mj_step(nstep=frame_skip)``
on one ``MjData``, each episode from its own start state with its recorded controls
(``sampling_benchmark.raw_physics``), in the same process right after the phase; then the
same controls replayed with every episode from ``mj_resetData`` alone (the physics floor's
start before it used the sampler's start states), to show what that choice changes.

* ``HalfCheetahRandDirecEnv``: 20 tasks x 20 episodes x H = 100, ``'rollouts'`` quota (one of
  the two workers of the paper run's 40 tasks);
* ``Walker2DRandDirecEnv``: ``--walker_tasks`` tasks x 20 episodes' step budget x H = 200,
  ``'budget'`` quota (the paper's sampling mode; fewer tasks than a worker's 20 to keep the
  benchmark short: the cost per step does not depend on the number of tasks beyond the
  per-tick work, which is shared by fewer envs here, so this is if anything pessimistic);
* ``AntRandDirec2DEnv`` (H = 100) and ``HumanoidRandDirec2DEnv`` (H = 200), the contact envs
  (one ``MjData`` per copy and ``mj_rnePostConstraint`` after each step in the worker, which
  the raw replay, ``mj_step`` alone, leaves out): ``--contact_tasks`` tasks x 20 episodes,
  ``'rollouts'`` quota. Not in the default ``--envs``; run them with ``--envs ...
  --output_name sampling_step_cpu_contact`` so the default results stay.

Each ``--trees`` entry is a checkout of the project (``before``: e.g. a worktree of main;
``after``: this one); each measurement runs in a child process that imports that tree's
``meta_policy_search`` and this file's replay, and the trees' children alternate, ``--rounds``
times, so both see the same machine load. The children's phases after a warm-up phase count;
the tables give medians over phases and rounds.

The worker/raw ratio is a CPU-time ratio measured on a shared machine: it is what the design
targets (``raw / worker >= 0.85``), not a wall-time speed-up; wall times need a quiet machine
(``benchmarks/iteration_benchmark.py``). Writes ``benchmarks/results/sampling_step_cpu.{json,md}``
(or ``--output_name``).
Usage::

    python benchmarks/sampling_step_cpu.py --trees before=/path/to/main_checkout after=.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

CONFIGS = {
    "HalfCheetahRandDirecEnv": {"horizon": 100, "mode": "rollouts"},
    "Walker2DRandDirecEnv": {"horizon": 200, "mode": "budget"},
    "AntRandDirec2DEnv": {"horizon": 100, "mode": "rollouts"},
    "HumanoidRandDirec2DEnv": {"horizon": 200, "mode": "rollouts"},
}
DEFAULT_ENVS = ["HalfCheetahRandDirecEnv", "Walker2DRandDirecEnv"]
CONTACT_ENVS = ("AntRandDirec2DEnv", "HumanoidRandDirec2DEnv")
ROLLOUTS = 20


def child(tree: Path, env_name: str, num_tasks: int, phases: int) -> dict[str, Any]:
    """In this process: ``phases`` timed sampling phases (after a warm-up one) of the tree's
    iterative executor and, after each, the raw replay of its episodes; CPU seconds each."""
    # The tree's package first; this repository's benchmarks then reuse the imported package.
    sys.path.insert(0, str(tree))
    import numpy as np

    import meta_policy_search
    from meta_policy_search.samplers import MetaIterativeEnvExecutor
    from meta_policy_search.samplers.quota import EpisodeQuota, StepBudget

    sys.path.insert(0, str(REPO))
    from benchmarks.sampling_benchmark import (
        make_normalized_env_for_benchmark,
        make_policy,
        raw_physics,
        save_replay,
    )

    config = CONFIGS[env_name]
    env = make_normalized_env_for_benchmark(env_name)
    env.seed_tasks(0)
    tasks = env.sample_tasks(num_tasks)
    policy = make_policy(num_tasks, env.observation_space.shape[0], env.action_space.shape[0],
                         (64, 64), 0)
    quota = EpisodeQuota(ROLLOUTS) if config["mode"] == "rollouts" else StepBudget(ROLLOUTS)
    seed = 0
    rows = []
    executor = MetaIterativeEnvExecutor(env, num_tasks, ROLLOUTS, config["horizon"], seed=seed,
                                        quota=quota)
    with executor, tempfile.TemporaryDirectory() as folder:
        executor.set_tasks(tasks)
        executor.collect(policy, 0)
        replay = Path(folder) / "replay.npz"
        for phase in range(1, phases + 1):
            start = time.process_time()
            paths = executor.collect(policy, phase)
            worker = time.process_time() - start
            steps = int(paths.num_env_steps)
            save_replay(replay, env, paths, tasks, seed, phase)
            raw = raw_physics(env_name, str(replay), steps, 0)
            with np.load(replay) as saved:
                controls, qpos, qvel = saved["controls"], saved["qpos"], saved["qvel"]
            inner = env.unwrapped
            np.savez(replay, controls=controls, qpos=np.broadcast_to(inner.init_qpos, qpos.shape),
                     qvel=np.broadcast_to(inner.init_qvel, qvel.shape))
            reset_only = raw_physics(env_name, str(replay), steps, 0)
            rows.append({"env_steps": steps, "worker_cpu_seconds": worker,
                         "raw_cpu_seconds": raw["cpu_seconds"],
                         "raw_reset_only_cpu_seconds": reset_only["cpu_seconds"]})
    return {"package": str(Path(meta_policy_search.__file__).parent), "phases": rows}


def tree_commit(tree: Path) -> str:
    """``git describe``-like label of a tree: its commit and ``+dirty`` if it has changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True,
                              check=False).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("+dirty" if git("status", "--porcelain") else "")


def write_markdown(path: Path, result: dict) -> None:
    from benchmarks.machine_info import describe_machine

    lines = [
        "# CPU per env step: a sampler worker's loop against raw physics (CPU time under load)",
        "",
        f"`python benchmarks/sampling_step_cpu.py {result['arguments']}`: per tree and env, the "
        "iterative executor's CPU microseconds per real env step (`time.process_time` around "
        "`collect`, one process: what one parallel worker runs) and the raw `mj_step` replay of "
        "the same episodes (same start states and controls, one `MjData`) in the same process; "
        "medians over "
        f"{result['phases']} phases x {result['rounds']} rounds, the trees' child processes "
        "alternating; raw / worker is the median (and range) of each phase's ratio to the raw "
        "replay right after it. The last column replays the same controls with every episode "
        "from `mj_resetData` alone (the floor's old start). **CPU time, measured on a machine "
        "loaded by other jobs**: not a wall-time ratio.",
        "",
        "| env | tree | commit | env steps per phase | worker CPU per step (us) | raw physics CPU "
        "per step (us) | raw / worker (range) | worker CPU per step, each phase (us) | raw from "
        "`mj_resetData` alone, CPU per step (us) |",
        "|---|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for row in result["rows"]:
        ratios = row["ratio_all"]
        lines.append(
            f"| {row['env']} | {row['tree']} | {row['commit']} | {row['env_steps']} | "
            f"{row['worker_us']:.1f} | {row['raw_us']:.1f} | {statistics.median(ratios):.3f} "
            f"({min(ratios):.3f}-{max(ratios):.3f}) | "
            f"{', '.join(f'{x:.1f}' for x in row['worker_us_all'])} | "
            f"{row['raw_reset_only_us']:.1f} |"
        )
    lines += ["", describe_machine(result["machine"]), ""]
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", nargs="+", default=[f"after={REPO}"],
                        help="label=path of each checkout to measure, e.g. before=../main after=.")
    parser.add_argument("--envs", nargs="+", default=DEFAULT_ENVS, choices=list(CONFIGS))
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the trees")
    parser.add_argument("--phases", type=int, default=2, help="timed phases per child")
    parser.add_argument("--cheetah_tasks", type=int, default=20)
    parser.add_argument("--walker_tasks", type=int, default=10)
    parser.add_argument("--contact_tasks", type=int, default=10,
                        help="tasks of AntRandDirec2DEnv and HumanoidRandDirec2DEnv")
    parser.add_argument("--output_name", default="sampling_step_cpu",
                        help="results file name (.json and .md) in --output_dir")
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument("--child", nargs=2, metavar=("TREE", "ENV"), help=argparse.SUPPRESS)
    parser.add_argument("--num_tasks", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child[0]), args.child[1], args.num_tasks, args.phases)))
        return

    import mujoco
    import numpy as np

    sys.path.insert(0, str(REPO))
    from benchmarks.machine_info import load_average, machine_info, write_results

    trees = {}
    for entry in args.trees:
        label, sep, path = entry.partition("=")
        if not sep or not Path(path, "meta_policy_search").is_dir():
            raise SystemExit(f"--trees entry {entry!r}: expected label=path of a project checkout")
        trees[label] = Path(path).resolve()
    machine = machine_info(numpy=np.__version__, mujoco=mujoco.__version__)
    machine["load_average_start"] = load_average()
    phases: dict[tuple[str, str], list[dict[str, Any]]] = {}
    packages: dict[str, str] = {}
    env_vars = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    for _ in range(args.rounds):
        for env_name in args.envs:
            tasks = (args.cheetah_tasks if env_name.startswith("HalfCheetah")
                     else args.contact_tasks if env_name in CONTACT_ENVS else args.walker_tasks)
            for label, tree in trees.items():
                out = subprocess.run(
                    [sys.executable, __file__, "--child", str(tree), env_name, "--num_tasks",
                     str(tasks), "--phases", str(args.phases)],
                    capture_output=True, text=True, check=True, env=env_vars, cwd=tree,
                )
                measured = json.loads(out.stdout.strip().splitlines()[-1])
                packages[label] = measured["package"]
                phases.setdefault((env_name, label), []).extend(measured["phases"])
                print(env_name, label, measured["phases"], flush=True)
    machine["load_average_end"] = load_average()
    rows = []
    for (env_name, label), measured in phases.items():
        worker = [p["worker_cpu_seconds"] / p["env_steps"] * 1e6 for p in measured]
        raw = [p["raw_cpu_seconds"] / p["env_steps"] * 1e6 for p in measured]
        reset_only = [p["raw_reset_only_cpu_seconds"] / p["env_steps"] * 1e6 for p in measured]
        rows.append({"env": env_name, "tree": label, "commit": tree_commit(trees[label]),
                     "package": packages[label], "env_steps": measured[0]["env_steps"],
                     "worker_us": statistics.median(worker), "raw_us": statistics.median(raw),
                     "raw_reset_only_us": statistics.median(reset_only),
                     "worker_us_all": worker, "raw_us_all": raw,
                     "ratio_all": [r / w for r, w in zip(raw, worker)]})
    result = {"arguments": " ".join(sys.argv[1:]), "rounds": args.rounds, "phases": args.phases,
              "rows": rows, "raw_phases": {f"{e}/{t}": p for (e, t), p in phases.items()},
              "machine": machine}
    write_results(args.output_dir, args.output_name, result, write_markdown)


if __name__ == "__main__":
    main()
