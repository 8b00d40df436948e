"""Same-seed check: tiny runs in both sampling modes and every executor, compared by ``progress.csv``.

Runs ``experiments/promp_run_point_mass.py`` (a terminating point env) and
``experiments/promp_run_mujoco.py`` (HopperRandParamsEnv, early termination) with a fixed seed for
each sampling mode and executor, and either records their ``progress.csv`` files (``record``) or
compares them with recorded ones (``compare``), ignoring the columns that measure time.

Usage::

    python tools/same_seed_progress.py record  OUT_DIR [--code DIR]
    python tools/same_seed_progress.py compare OUT_DIR REFERENCE_DIR [--code DIR]

``--code`` is the source tree to run (default: this checkout), so a reference can be recorded from
an exported older commit.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
from pathlib import Path

RUNS = {
    "point": ["experiments/promp_run_point_mass.py", "--env", "PointEnvRandGoal",
              "--env_kwargs", '{"goal_tolerance": 0.05}', "--max_path_length", "30"],
    "hopper": ["experiments/promp_run_mujoco.py", "--env", "HopperRandParamsEnv",
               "--max_path_length", "25"],
}
COMMON = ["--seed", "3", "--n_itr", "2", "--meta_batch_size", "4", "--rollouts_per_meta_task", "3",
          "--envs_per_task", "2", "--paper_config", "false", "--hidden_sizes", "[16]"]
MODES = ("rollouts", "budget")
EXECUTORS = ("iterative", "parallel", "ray")


def is_time_column(name: str) -> bool:
    """Whether a ``progress.csv`` column measures wall or CPU time (differs run to run)."""
    lowered = name.lower()
    return "time" in lowered or "seconds" in lowered


def read_progress(path: Path) -> list[dict[str, str]]:
    """The rows of ``progress.csv`` without the time columns."""
    with path.open() as handle:
        return [{k: v for k, v in row.items() if not is_time_column(k)} for row in csv.DictReader(handle)]


def run_all(out_dir: Path, code: Path) -> None:
    """Run every (env, mode, executor) combination into ``out_dir/<env>-<mode>-<executor>``."""
    env = dict(os.environ, PYTHONPATH=str(code))
    for name, script in RUNS.items():
        for mode in MODES:
            for executor in EXECUTORS:
                label = f"{name}-{mode}-{executor}"
                dump = out_dir / label
                command = [sys.executable, str(code / script[0]), *script[1:], *COMMON,
                           "--sampling_mode", mode, "--executor", executor,
                           "--dump_path", str(dump)]
                if executor != "iterative":
                    command += ["--n_parallel", "2"]
                result = subprocess.run(command, cwd=code, env=env, capture_output=True, text=True)
                status = "ok" if result.returncode == 0 else f"FAILED ({result.returncode})"
                print(label, status, flush=True)
                if result.returncode:
                    print(result.stderr[-3000:])


def compare(out_dir: Path, reference: Path) -> int:
    """Compare every run's progress with the reference's and across executors; count mismatches."""
    failures = 0
    for run in sorted(p for p in reference.iterdir() if p.is_dir()):
        expected = read_progress(run / "progress.csv")
        actual_path = out_dir / run.name / "progress.csv"
        actual = read_progress(actual_path) if actual_path.exists() else None
        same = actual == expected
        failures += not same
        print(f"{run.name}: {'identical' if same else 'DIFFERENT'} ({len(expected)} rows, "
              f"{len(expected[0]) if expected else 0} non-time columns)")
    return failures


def main() -> None:
    """Parse the command line and record or compare."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("reference", type=Path, nargs="?")
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    run_all(args.out_dir, args.code.resolve())
    if args.action == "compare":
        sys.exit(1 if compare(args.out_dir, args.reference) else 0)


if __name__ == "__main__":
    main()
