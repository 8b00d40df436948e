"""Side-by-side table of two runs of the iteration and sampling benchmarks (e.g. two commits).

Reads ``iteration.json`` and ``sampling.json`` from a *before* and an *after* directory, each
written by ``benchmarks/iteration_benchmark.py --output_dir DIR`` and
``benchmarks/sampling_benchmark.py --output_dir DIR`` run back to back on the same machine, and
writes a Markdown table of both with the after/before ratio of every time and rate. Raw
``mj_step`` rates are listed too: they measure the machine, not the code, so a code change shows
as a ratio that differs from theirs. Usage::

    python benchmarks/compare_before_after.py BEFORE_DIR AFTER_DIR --label_before 0e6d729 \\
        --label_after fca90f8 --output benchmarks/results/refactor_before_after.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

ITERATION_PARTS = ("sampling", "processing", "inner", "outer", "total")


def _load(directory: Path, name: str) -> dict[str, Any]:
    path = directory / name
    if not path.is_file():
        raise SystemExit(f"error: {path} does not exist: run the benchmark with --output_dir {directory}")
    return json.loads(path.read_text())


def _machine_line(label: str, machine: dict[str, Any]) -> str:
    keys = ("cpu_model", "usable_cores", "python", "tensorflow", "numpy", "mujoco", "gymnasium", "date")
    described = ", ".join(f"{key} {machine[key]}" for key in keys if key in machine)
    loads = {key: machine[key] for key in machine if key.startswith("load_average")}
    return f"- {label}: {described}; {loads}"


def iteration_table(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Median seconds per iteration part, before / after / ratio, one row per benchmark run."""
    lines = [
        "| run | part | before (s) | after (s) | after / before |",
        "|---|---|---:|---:|---:|",
    ]
    after_runs = {run["name"]: run for run in after["runs"]}
    for run in before["runs"]:
        if run["name"] not in after_runs:
            continue
        for part in ITERATION_PARTS:
            old, new = run["median"][part], after_runs[run["name"]]["median"][part]
            lines.append(f"| {run['name']} | {part} | {old:.3f} | {new:.3f} | {new / old:.2f} |")
        # The raw rate is per run since the floor replays the run's controls; older results
        # have one rate for the whole file.
        old_mj, new_mj = (result.get("mj_step") or other.get("mj_step")
                          for result, other in ((run, before), (after_runs[run["name"]], after)))
        if old_mj and new_mj:
            old_raw, new_raw = old_mj["env_steps_per_s"], new_mj["env_steps_per_s"]
            lines.append(f"| {run['name']} | raw `mj_step`, all cores (env steps/s) | "
                         f"{old_raw:,.0f} | {new_raw:,.0f} | {new_raw / old_raw:.2f} |")
    return lines


def sampling_table(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Env steps per second of every executor path and the raw loop, before / after / ratio."""
    lines = [
        "| env | path | before (env steps/s) | after (env steps/s) | after / before |",
        "|---|---|---:|---:|---:|",
    ]
    after_envs = {entry["env"]: entry for entry in after["mujoco"] + after["point"]}
    for entry in before["mujoco"] + before["point"]:
        new_entry = after_envs.get(entry["env"])
        if new_entry is None:
            continue
        for path in ("raw_before", "batched", "per_env", "raw_after"):
            if path not in entry or path not in new_entry:
                continue
            old, new = entry[path]["env_steps_per_s"], new_entry[path]["env_steps_per_s"]
            lines.append(f"| {entry['env']} | {path} | {old:,.0f} | {new:,.0f} | {new / old:.2f} |")
    return lines


def _of_raw(entry: dict[str, Any], path: str) -> float:
    """A path's rate over the mean of the raw loop's rates measured in the same run."""
    raw = (entry["raw_before"]["env_steps_per_s"] + entry["raw_after"]["env_steps_per_s"]) / 2
    return float(entry[path]["env_steps_per_s"] / raw)


def sampling_of_raw_table(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The executors' rates as fractions of the raw loop's in their own run, which cancels most
    of the machine's drift between the two runs; the last row is the geometric mean."""
    lines = [
        "| env | batched / raw, before | after | per-env / raw, before | after |",
        "|---|---:|---:|---:|---:|",
    ]
    after_envs = {entry["env"]: entry for entry in after["mujoco"]}
    ratios: dict[str, list[float]] = {"batched": [], "per_env": []}
    for entry in before["mujoco"]:
        new_entry = after_envs.get(entry["env"])
        if new_entry is None:
            continue
        row = []
        for path in ("batched", "per_env"):
            old, new = _of_raw(entry, path), _of_raw(new_entry, path)
            ratios[path].append(new / old)
            row += [f"{old:.2f}", f"{new:.2f}"]
        lines.append(f"| {entry['env']} | " + " | ".join(row) + " |")
    for path, values in ratios.items():
        if values:
            lines.append(f"| geometric mean of after / before, {path} | "
                         f"{float(np.exp(np.mean(np.log(values)))):.2f} | | | |")
    return lines


def main() -> None:
    """Parse the command line and write the Markdown comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--label_before", default="before")
    parser.add_argument("--label_after", default="after")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    iteration = (_load(args.before, "iteration.json"), _load(args.after, "iteration.json"))
    # The sampling benchmark is optional (e.g. comparing one iteration workload alone).
    sampling = None
    if (args.before / "sampling.json").is_file() or (args.after / "sampling.json").is_file():
        sampling = (_load(args.before, "sampling.json"), _load(args.after, "sampling.json"))
    lines = [
        f"# Benchmarks before and after: {args.label_before} / {args.label_after}",
        "",
        "`benchmarks/iteration_benchmark.py` and `benchmarks/sampling_benchmark.py`, each run at "
        f"{args.label_before} then at {args.label_after}, back to back on one machine "
        "(`benchmarks/compare_before_after.py` writes this file). The raw `mj_step` rows measure "
        "the machine: where they move, so does everything else.",
        "",
        "## Whole iterations (median seconds per iteration)",
        "",
        *iteration_table(*iteration),
        "",
    ]
    if sampling is not None:
        lines += [
            "## Sampling (env steps per second, best of the phases)",
            "",
            *sampling_table(*sampling),
            "",
            "## Sampling relative to the raw loop of the same run",
            "",
            *sampling_of_raw_table(*sampling),
            "",
        ]
    lines += [
        "## Machines",
        "",
        _machine_line(f"iteration, {args.label_before}", iteration[0]["machine"]),
        _machine_line(f"iteration, {args.label_after}", iteration[1]["machine"]),
    ]
    if sampling is not None:
        lines += [_machine_line(f"sampling, {args.label_before}", sampling[0]["machine"]),
                  _machine_line(f"sampling, {args.label_after}", sampling[1]["machine"])]
    lines.append("")
    args.output.write_text("\n".join(lines))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
