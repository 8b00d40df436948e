"""What a figure-2 cell's runs rest on: their settings, start and episode lengths, per seed.

For a cell whose paper value lies outside our confidence interval, issue 21 asks to look at the
start value, the config in ``params.json``, the episode lengths and the reward terms before
writing it up. This script gathers the first three from a reproduction grid's committed files
(the reward terms are code, compared in ``tests/test_mujoco_envs.py`` and the cell's write-up):

* **settings**: every value of the paper's entry for the cell (``paper_configs.json``) against
  what each seed's ``params.json`` recorded;
* **start**: ``Step_0`` and ``Step_1-AverageReturn`` at iteration 0 (identical across
  algorithms at a seed when the tasks and the inner step are), beside the paper's curve start
  read off figure 2 (:data:`PAPER_START`);
* **at the comparison point**: ``Step_1-AverageReturn`` interpolated at ``--timesteps`` (as
  ``reproduce.py`` does), and at the logged iteration nearest to it the env steps per finished
  episode (the iteration's new ``n_timesteps_real`` over both steps' ``NumTrajs``) and
  ``Step_1-AvgForwardVel``. For the envs rewarding ``v + 1 - c ||a||^2`` per step, a return is
  about ``length x (1 + velocity)``: the two columns split it into staying up and moving.

Usage::

    python benchmarks/cell_diagnostics.py benchmarks/results/reproduction \\
        --cells promp:HopperRandParamsEnv trpo_maml:HopperRandParamsEnv \\
        --output benchmarks/results/reproduction/hopper_diagnostics.md
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

import numpy as np
from takeoff import seed_dirs

from meta_policy_search.experiment.curves import read_progress
from meta_policy_search.experiment.paper import load_paper_reference, paper_entry, points_for_run
from meta_policy_search.experiment.registry import get_algorithm

METRIC = "Step_1-AverageReturn"
PAPER_START = {
    "HalfCheetahRandDirecEnv": "about 0",
    "AntRandDirecEnv": "about 95",
    "HopperRandParamsEnv": "about 20",
    "Walker2DRandParamsEnv": "about 15",
    "Walker2DRandDirecEnv": "about 25-30",
    "HumanoidRandDirec2DEnv": "about 250-260",
}
"""The paper's figure-2 curves at iteration 0, read off the raster (+-5 to 10;
``shared/envs.md``)."""


ORIGINAL_SCRIPT_KEYS = {"num_promp_steps": "num_ppo_steps"}
"""The original ProMP run script's ``params.json`` keys (``benchmarks/original_code``) that our
runs record under another name."""
ORIGINAL_SAMPLING_MODE = "budget"
"""How the original's ``MetaSampler`` sampled, its only mode (``shared/paper_configs.md``); its
``params.json`` has no key for it."""


def as_our_settings(params: dict) -> dict:
    """``params`` in our runs' key names: a run of the original ProMP code (recognised by its
    run script's ``num_promp_steps``) is translated, ours is returned as it is."""
    if "num_promp_steps" not in params:
        return params
    ours = {ORIGINAL_SCRIPT_KEYS.get(key, key): value for key, value in params.items()}
    return {"sampling_mode": ORIGINAL_SAMPLING_MODE, **ours}


def settings_mismatches(entry: dict, params: dict) -> list[str]:
    """Keys of the paper's ``entry`` whose value ``params`` records differently (or not at all)."""
    wrong = []
    for key, value in sorted(entry.items()):
        if key == "note":
            continue
        recorded = as_our_settings(params).get(key, "<missing>")
        if recorded != value and not (isinstance(value, list) and list(recorded or []) == value):
            wrong.append(f"{key}: paper {value!r}, run {recorded!r}")
    return wrong


def seed_row(columns: dict[str, np.ndarray], timesteps: float) -> dict[str, float]:
    """One seed's start and its values at ``timesteps`` (see the module docstring)."""
    x, y = columns["n_timesteps"], columns[METRIC]
    new_steps = np.diff(columns["n_timesteps_real"], prepend=0.0)
    episodes = columns["Step_0-NumTrajs"] + columns["Step_1-NumTrajs"]
    nearest = int(np.argmin(np.abs(x - timesteps)))
    return {
        "start_step0": float(columns["Step_0-AverageReturn"][0]),
        "start_step1": float(y[0]),
        "start_length": float(new_steps[0] / episodes[0]),
        "at": float(np.interp(timesteps, x, y)) if x[-1] >= timesteps else float("nan"),
        "nearest_itr": float(columns["Itr"][nearest]),
        "length": float(new_steps[nearest] / episodes[nearest]),
        "velocity": float(columns.get("Step_1-AvgForwardVel", np.full_like(x, np.nan))[nearest]),
    }


def _velocity_text(velocity: float) -> str:
    return f"{velocity:.2f}" if np.isfinite(velocity) else "not logged"


def cell_markdown(grid: str, algo: str, env: str, timesteps: float) -> list[str]:
    """Markdown lines for one cell of ``grid``."""
    env_dir = os.path.join(grid, algo, env)
    runs = []
    for seed_dir in seed_dirs(env_dir):
        with open(os.path.join(env_dir, seed_dir, "params.json"), encoding="utf-8") as f:
            runs.append((seed_dir, json.load(f)))
    paper = [p for p in points_for_run(load_paper_reference(), env, get_algorithm(algo).legend,
                                       METRIC, runs[0][1])
             if p.figure == "fig2" and p.timesteps == timesteps]
    paper_text = f"{paper[0].value:g} +- {paper[0].precision:g}" if paper else "no reading"
    lines = [f"## {algo} on {env}", "",
             f"Paper at {timesteps:.0e}: {paper_text}; paper's curve start: "
             f"{PAPER_START.get(env, 'not read')}.", "",
             f"| seed | settings differing from the paper's | Step_0 / Step_1 at itr 0 "
             f"| steps per episode at itr 0 | Step_1 at {timesteps:.0e} | itr | steps per episode "
             "| Step_1 forward velocity |",
             "|---|---|---|---|---|---|---|---|"]
    values = []
    for seed_dir, params in runs:
        row = seed_row(read_progress(os.path.join(env_dir, seed_dir, "progress.csv")), timesteps)
        wrong = settings_mismatches(paper_entry(algo, env), params) or ["none"]
        values.append(row["at"])
        lines.append(
            f"| {seed_dir[5:]} | {'; '.join(wrong)} | {row['start_step0']:.1f} / "
            f"{row['start_step1']:.1f} | {row['start_length']:.1f} | {row['at']:.1f} "
            f"| {row['nearest_itr']:.0f} | {row['length']:.1f} | {_velocity_text(row['velocity'])} |")
    finite = [v for v in values if np.isfinite(v)]
    if len(finite) == 1:
        lines += ["", f"One seed at {timesteps:.0e}: {finite[0]:.1f}."]
    elif finite:
        lines += ["", f"Mean over {len(finite)} seeds at {timesteps:.0e}: {np.mean(finite):.1f} "
                  f"(sample std {np.std(finite, ddof=1):.1f})."]
    return lines + [""]


def main(argv: Sequence[str] | None = None) -> int:
    """Write the diagnostics of the given cells."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("grid", help="a reproduce.py --out directory")
    parser.add_argument("--cells", nargs="+", required=True, help="algo:Env, e.g. promp:HopperRandParamsEnv")
    parser.add_argument("--timesteps", type=float, default=1e7)
    parser.add_argument("--output", required=True, help="markdown file to write")
    args = parser.parse_args(argv)
    lines = ["# What the cells' runs rest on", "",
             "Written by `benchmarks/cell_diagnostics.py` from the runs' `params.json` and "
             "`progress.csv`. Steps per episode: the iteration's new `n_timesteps_real` over both "
             "steps' `NumTrajs`.", ""]
    for cell in args.cells:
        algo, sep, env = cell.partition(":")
        if not sep or not os.path.isdir(os.path.join(args.grid, algo, env)):
            parser.error(f"--cells {cell!r}: expected algo:Env with runs in {args.grid}/algo/Env")
        lines += cell_markdown(args.grid, algo, env, args.timesteps)
    text = "\n".join(lines)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
