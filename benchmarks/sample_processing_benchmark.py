"""Sample processing (returns, linear feature baseline, GAE) of one inner step on Humanoid-shaped paths.

ProMP on HumanoidRandDirec2DEnv starts with about 32 steps per episode at ``H = 200``, so budget
sampling fills about 124 episodes of 200 slots per task: the padded ``[R, H]`` arrays hold about 7x
more slots than real steps. This times ``MetaSampleProcessor.process_samples`` (the paper's
``LinearFeatureBaseline``, 348 observation dims so 700 features, normalized advantages) on the
synthetic samples of ``packing_benchmark.py``. Each checkout given with ``--checkouts`` (default:
this one) is timed in its own subprocess on the same saved paths, interleaved, so an older commit
can be compared in one run::

    git worktree add /tmp/before <rev>
    python benchmarks/sample_processing_benchmark.py --checkouts /tmp/before .

Writes ``benchmarks/results/sample_processing.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.machine_info import describe_machine, load_average, machine_info, write_results  # noqa: E402
from benchmarks.packing_benchmark import describe_samples, sample_shape, short_episode_samples  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from meta_policy_search.baselines import LinearFeatureBaseline
from meta_policy_search.samplers.meta_sample_processor import MetaSampleProcessor
from meta_policy_search.types import PathBatch
data = np.load(sys.argv[2])
paths = PathBatch(observations=data["observations"], actions=data["actions"],
                  rewards=data["rewards"], mask=data["mask"],
                  agent_infos={"mean": data["mean"], "log_std": data["log_std"]})
processor = MetaSampleProcessor(LinearFeatureBaseline(), discount=0.99, gae_lambda=1.0,
                                normalize_adv=True)
times = []
for _ in range(int(sys.argv[3])):
    start = time.perf_counter()
    processor.process_samples(paths)
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def git_commit(checkout: Path) -> str:
    """The short commit of ``checkout`` (with ``+dirty`` for uncommitted changes)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True,
                              text=True, check=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + ("+dirty" if git("status", "--porcelain",
                                                                    "--untracked-files=no") else "")


def time_checkout(checkout: Path, data: Path, calls: int) -> list[float]:
    """Seconds of each of ``calls`` ``process_samples`` calls in a fresh process on ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(checkout), str(data), str(calls)],
                         capture_output=True, text=True, check=True, env=env,
                         cwd=checkout).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkouts", type=Path, nargs="+", default=[REPO])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2, help="subprocesses per checkout")
    parser.add_argument("--calls", type=int, default=2, help="timed calls per subprocess")
    parser.add_argument("--note", default="", help="added to the load average, e.g. '; shared'")
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()
    load_start = load_average()
    samples = short_episode_samples(np.random.default_rng(0), args.tasks)
    checkouts = [c.resolve() for c in args.checkouts]
    times: dict[str, list[float]] = {str(c): [] for c in checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "paths.npz"
        np.savez(data, observations=samples.observations, actions=samples.actions,
                 rewards=samples.rewards, mask=samples.mask, mean=samples.agent_infos["mean"],
                 log_std=samples.agent_infos["log_std"])
        for _ in range(args.repeats):
            for checkout in checkouts:
                times[str(checkout)] += time_checkout(checkout, data, args.calls)
                print(checkout, [round(t, 2) for t in times[str(checkout)]], flush=True)
    machine = machine_info(numpy=np.__version__)
    machine.update(load_average_start=load_start,
                   load_average_end=load_average())
    result = {
        "machine": machine, "note": args.note, "tasks": args.tasks, **sample_shape(samples),
        "checkouts": [{"commit": git_commit(c), "best_s": min(times[str(c)]),
                       "times_s": times[str(c)]} for c in checkouts],
    }
    write_results(args.output_dir, "sample_processing", result, write_markdown)


def write_markdown(path: Path, result: dict) -> None:
    """The result as a short table, one row per checkout."""
    lines = [
        "# Sample processing of one inner step on Humanoid-shaped paths", "",
        f"`MetaSampleProcessor.process_samples` with the `LinearFeatureBaseline` (700 features), "
        f"{describe_samples(result)}. Best call of each checkout, timed interleaved in one run, "
        "each in fresh processes.", "",
        "| commit | seconds per call (best) | all calls |", "|---|---:|---|",
    ]
    for row in result["checkouts"]:
        lines.append(f"| {row['commit']} | {row['best_s']:.2f} | "
                     + ", ".join(f"{t:.2f}" for t in row["times_s"]) + " |")
    if len(result["checkouts"]) > 1:
        first, last = result["checkouts"][0], result["checkouts"][-1]
        lines += ["", f"{first['commit']} / {last['commit']}: "
                      f"{first['best_s'] / last['best_s']:.1f}x."]
    lines += ["", describe_machine(result["machine"], note=result["note"])]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
