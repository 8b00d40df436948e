"""Same-seed check: tiny runs of every algorithm script, compared by ``progress.csv``.

Runs every run script of ``experiments/`` (ProMP, TRPO-MAML, E-MAML-TRPO, VPG-MAML, E-MAML-VPG,
PPO-MAML, DiCE-MAML, VPG-DiCE on a terminating point env and on HopperRandParamsEnv, which ends
episodes early; the quick-start ProMP script on the point env) with a fixed seed in each sampling
mode and with each executor, for 2 iterations on tiny batches, and either records their
``progress.csv`` files (``record``) or compares them with recorded ones (``compare``), ignoring the
columns that measure time. Both sides run the same command lines, so a reference can be recorded
from an older commit checked out elsewhere (``--code``).

Usage::

    python tools/same_seed_progress.py record  OUT_DIR [--code DIR]
    python tools/same_seed_progress.py compare OUT_DIR REFERENCE_DIR [--code DIR] [--report MD]

Runs whose ``progress.csv`` already holds every iteration are kept (an interrupted ``record`` or
``compare`` continues where it stopped); ``--only SUBSTRING`` restricts the runs by label.
``--report`` writes a markdown table of the comparison with both commits (from the runs'
``provenance.json``), the package versions and the machine.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ENVS = {
    "point": ["--env", "PointEnvRandGoal", "--env_kwargs", '{"goal_tolerance": 0.05}',
              "--max_path_length", "30"],
    "hopper": ["--env", "HopperRandParamsEnv", "--max_path_length", "25"],
}
"""A terminating point env and a MuJoCo env whose episodes end early."""

SCRIPTS = {
    "promp": "experiments/promp_run_mujoco.py",
    "trpo_maml": "experiments/trpo_maml_run_mujoco.py",
    "e_maml_trpo": "experiments/e_maml_trpo_run_mujoco.py",
    "vpg_maml": "experiments/vpg_maml_run_mujoco.py",
    "e_maml_vpg": "experiments/e_maml_vpg_run_mujoco.py",
    "ppo_maml": "experiments/ppo_maml_run_mujoco.py",
    "dice_maml": "experiments/dice_maml_run_mujoco.py",
    "vpg_dice": "experiments/vpg_dice_run_mujoco.py",
    "promp_point_mass": "experiments/promp_run_point_mass.py",
}
"""Every algorithm's run script (the quick-start script runs on the point env only)."""

N_ITR = 2
COMMON = ["--seed", "3", "--n_itr", str(N_ITR), "--meta_batch_size", "4",
          "--rollouts_per_meta_task", "3", "--envs_per_task", "2", "--paper_config", "false",
          "--hidden_sizes", "[16]"]
MODES = ("rollouts", "budget")
EXECUTORS = ("iterative", "parallel")
"""The executors compared by default (``--executors iterative,parallel,ray`` adds Ray)."""


def runs(executors: tuple[str, ...]) -> dict[str, list[str]]:
    """Label ``<script>-<env>-<mode>-<executor>`` -> script path and arguments."""
    commands = {}
    for name, script in SCRIPTS.items():
        for env, env_args in ENVS.items():
            if name == "promp_point_mass" and env != "point":
                continue
            for mode in MODES:
                for executor in executors:
                    arguments = [script, *env_args, *COMMON, "--sampling_mode", mode,
                                 "--executor", executor]
                    if executor != "iterative":
                        arguments += ["--n_parallel", "2"]
                    commands[f"{name}-{env}-{mode}-{executor}"] = arguments
    return commands


def is_time_column(name: str) -> bool:
    """Whether a ``progress.csv`` column measures wall or CPU time (differs run to run)."""
    lowered = name.lower()
    return "time" in lowered or "seconds" in lowered


def read_progress(path: Path) -> list[dict[str, str]]:
    """The rows of ``progress.csv`` without the time columns."""
    with path.open() as handle:
        return [{k: v for k, v in row.items() if not is_time_column(k)}
                for row in csv.DictReader(handle)]


def is_complete(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a ``progress.csv`` with every iteration."""
    path = run_dir / "progress.csv"
    return path.exists() and len(read_progress(path)) == N_ITR


def run_all(out_dir: Path, code: Path, executors: tuple[str, ...], only: str | None) -> None:
    """Run every selected combination into ``out_dir/<label>`` with the sources of ``code``."""
    env = dict(os.environ, PYTHONPATH=str(code))
    for label, (script, *arguments) in runs(executors).items():
        if only is not None and only not in label:
            continue
        dump = out_dir / label
        if is_complete(dump):
            print(label, "kept", flush=True)
            continue
        shutil.rmtree(dump, ignore_errors=True)
        command = [sys.executable, str(code / script), *arguments, "--dump_path", str(dump)]
        start = time.monotonic()
        result = subprocess.run(command, cwd=code, env=env, capture_output=True, text=True)
        status = "ok" if result.returncode == 0 else f"FAILED ({result.returncode})"
        print(f"{label} {status} {time.monotonic() - start:.0f} s", flush=True)
        if result.returncode:
            print(result.stderr[-3000:])


def compare(out_dir: Path, reference: Path) -> list[tuple[str, str, list[str]]]:
    """Compare every reference run's progress with ``out_dir``'s.

    Returns:
        One ``(label, verdict, differing columns)`` per run of ``reference``.
    """
    results = []
    for run in sorted(p for p in reference.iterdir() if p.is_dir()):
        expected = read_progress(run / "progress.csv") if is_complete(run) else None
        actual = read_progress(out_dir / run.name / "progress.csv") \
            if is_complete(out_dir / run.name) else None
        if expected is None or actual is None:
            results.append((run.name, "missing", []))
            continue
        columns = sorted({key for row in expected + actual for key in row})
        differing = [c for c in columns if [r.get(c) for r in expected] != [r.get(c) for r in actual]]
        verdict = "identical" if not differing else "DIFFERENT"
        results.append((run.name, f"{verdict} ({len(expected)} rows, {len(columns)} columns)",
                        differing))
    for label, verdict, differing in results:
        print(f"{label}: {verdict}" + (f" {differing}" if differing else ""))
    return results


def provenance(run_dir: Path) -> dict:
    """The first launch record of a run (its ``provenance.json``), or ``{}``."""
    path = run_dir / "provenance.json"
    return json.loads(path.read_text())[0] if path.exists() else {}


def write_report(path: Path, out_dir: Path, reference: Path,
                 results: list[tuple[str, str, list[str]]]) -> None:
    """The comparison as markdown: commits, packages, machine, one row per run."""
    label = results[0][0] if results else ""
    after = provenance(out_dir / label)

    def commits(root: Path) -> str:
        found = sorted({(provenance(root / name).get("git_commit"),
                         provenance(root / name).get("git_dirty")) for name, _, _ in results})
        return ", ".join(f"`{commit}` (dirty: {dirty})" for commit, dirty in found)

    same = sum(verdict.startswith("identical") for _, verdict, _ in results)
    machine = after.get("machine", {})
    lines = [
        "# Same-seed check: progress.csv before and after a refactor",
        "",
        f"Command: `python tools/same_seed_progress.py compare AFTER BEFORE --code .` after "
        f"`record BEFORE --code <checkout of the older commit>`; {N_ITR} iterations of every run "
        "script, `" + " ".join(COMMON) + "`, on the point env (`" + " ".join(ENVS["point"]) +
        "`) and HopperRandParamsEnv (`" + " ".join(ENVS["hopper"]) + "`), in both sampling modes "
        "and with each executor listed; every non-time column of `progress.csv` compared as text.",
        "",
        f"- before: {commits(reference)}",
        f"- after: {commits(out_dir)}",
        f"- packages: {after.get('packages')}",
        f"- machine: {machine.get('cpu_model')}, {machine.get('usable_cores')} usable cores, "
        f"{machine.get('platform')}, Python {machine.get('python')} (shared with a training "
        "grid; timing columns are not compared)",
        f"- written {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        "",
        f"**{same} of {len(results)} runs identical.**",
        "",
        "| run | result | differing columns |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {name} | {verdict} | {', '.join(differing)} |"
              for name, verdict, differing in results]
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")


def main() -> None:
    """Parse the command line and record or compare."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("reference", type=Path, nargs="?")
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--executors", default=",".join(EXECUTORS),
                        help="comma-separated executors (iterative, parallel, ray)")
    parser.add_argument("--only", help="run only the labels containing this string")
    parser.add_argument("--report", type=Path, help="write the comparison as markdown here")
    args = parser.parse_args()
    if args.action == "compare" and args.reference is None:
        parser.error("compare needs REFERENCE_DIR")
    executors = tuple(e for e in args.executors.split(",") if e)
    run_all(args.out_dir, args.code.resolve(), executors, args.only)
    if args.action == "compare":
        results = compare(args.out_dir, args.reference)
        if args.report is not None:
            write_report(args.report, args.out_dir, args.reference, results)
        sys.exit(0 if all(v.startswith("identical") for _, v, _ in results) else 1)


if __name__ == "__main__":
    main()
