"""Build the ML10 results table: our runs beside the published MAML numbers.

Usage::

    python experiments/metaworld_results.py                      # benchmarks/results/metaworld_ml10
    python experiments/metaworld_results.py RESULTS_DIR

``RESULTS_DIR`` holds ``published.csv`` (the published points, with where each was read) and, once
trained, one run folder per algorithm and seed, ``RESULTS_DIR/<algo>/seed_<n>/`` (``promp``,
``trpo_maml``): the run's ``params.json`` and ``progress.csv`` and the
``meta_test/metaworld_protocol.json`` of ``experiments/meta_testing.py --protocol metaworld
--splits test train``. Writes ``results.md`` (both tables below) and ``results_table.rst`` (the
same, included by ``docs/metaworld.rst``):

* the comparison: per source and algorithm, meta-train and meta-test success; ours as a mean with
  a 95% t interval over seeds where there are at least 3, the seeds' values otherwise, ``not run``
  where no run folder exists and ``not evaluated`` where a split was not meta-tested;
* ours per seed: iterations, env steps, wall time, the training batches' post-update success
  (``Step_1-SuccessRate``, mean of the last 10 iterations) and the protocol's success per split.

Only meta-tests that follow the benchmark's protocol (``follows_benchmark_protocol``) are used. This
script reads files only; it imports neither TensorFlow nor Meta-World.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import glob
import json
import math
import os
import re
from collections.abc import Sequence

import numpy as np

from meta_policy_search.experiment.comparison import confidence_interval
from meta_policy_search.experiment.curves import read_progress
from meta_policy_search.experiment.exit_codes import EPILOG, run_script
from meta_policy_search.utils.serialization import atomic_write_bytes

DEFAULT_RESULTS_DIR = os.path.join("benchmarks", "results", "metaworld_ml10")
"""Where the ML10 runs and ``published.csv`` live."""

ALGORITHMS = (("promp", "ProMP"), ("trpo_maml", "MAML-TRPO"))
"""Run-folder name and display name of each algorithm of ours."""

PROTOCOL_FILE = os.path.join("meta_test", "metaworld_protocol.json")
"""A run's Meta-World protocol result, relative to the run folder."""

TRAIN_SUCCESS_KEY = "Step_1-SuccessRate"
"""``progress.csv`` column: the training batches' success after the inner step."""

LAST_ITERATIONS = 10
"""Iterations averaged for the training-batch success."""

PUBLISHED_COLUMNS = ("source", "url", "algorithm", "envs", "reward", "meta_train_success",
                     "meta_test_success", "settings")
"""Header of ``published.csv`` (success rates in percent, or ``not found``)."""


@dataclasses.dataclass(frozen=True)
class SeedResult:
    """What one run folder of ours holds."""

    seed: int
    """The run's seed."""
    reward: str
    """Meta-World's reward function version of the run."""
    iterations: int
    """Iterations in ``progress.csv``."""
    env_steps: float
    """``n_timesteps`` at the last iteration (NaN if missing)."""
    wall_time_h: float
    """Sum of ``ItrTime`` in hours (NaN if missing)."""
    train_batch_success: float
    """Mean ``Step_1-SuccessRate`` of the last :data:`LAST_ITERATIONS` iterations (NaN if none)."""
    protocol: dict[str, float]
    """Split -> the protocol's success rate (only splits meta-tested by the protocol)."""
    checkpoint: str
    """Which checkpoint was meta-tested (``-`` if none)."""


def read_published(path: str) -> list[dict[str, str]]:
    """Read ``published.csv`` (lines starting with ``#`` are comments).

    Raises:
        ValueError: if the header is not :data:`PUBLISHED_COLUMNS`.
    """
    with open(path, newline="", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#")]
    reader = csv.DictReader(lines)
    if tuple(reader.fieldnames or ()) != PUBLISHED_COLUMNS:
        raise ValueError(f"{path}: header must be {','.join(PUBLISHED_COLUMNS)}, "
                         f"got {reader.fieldnames}")
    return list(reader)


def read_seed(run_dir: str) -> SeedResult:
    """Read one run folder (``params.json``, ``progress.csv``, the protocol's meta-test).

    Raises:
        ValueError: if the run is not of ``ML10``.
    """
    with open(os.path.join(run_dir, "params.json"), encoding="utf-8") as f:
        params = json.load(f)
    if params.get("env") != "ML10":
        raise ValueError(f"{run_dir}: a run of {params.get('env')!r}, not ML10")
    progress_path = os.path.join(run_dir, "progress.csv")
    columns = read_progress(progress_path) if os.path.isfile(progress_path) else {}
    success = columns.get(TRAIN_SUCCESS_KEY, np.array([]))[-LAST_ITERATIONS:]
    protocol: dict[str, float] = {}
    checkpoint = "-"
    protocol_path = os.path.join(run_dir, PROTOCOL_FILE)
    if os.path.isfile(protocol_path):
        with open(protocol_path, encoding="utf-8") as f:
            meta_test = json.load(f)
        checkpoint = f"{meta_test['checkpoint']} (itr {meta_test.get('checkpoint_itr')})"
        for split, result in meta_test["policies"].get(params.get("algo"), {}).items():
            if result.get("follows_benchmark_protocol"):
                protocol[split] = float(result["success_rate"])
    return SeedResult(
        seed=int(params.get("seed", 0)),
        reward=str((params.get("env_kwargs") or {}).get("reward_function_version", "v2")),
        iterations=len(columns.get("Itr", [])),
        env_steps=float(columns["n_timesteps"][-1]) if len(columns.get("n_timesteps", [])) else math.nan,
        wall_time_h=float(np.nansum(columns["ItrTime"])) / 3600 if "ItrTime" in columns else math.nan,
        train_batch_success=float(np.nanmean(success)) if np.isfinite(success).any() else math.nan,
        protocol=protocol,
        checkpoint=checkpoint,
    )


def find_runs(results_dir: str, algo: str) -> list[str]:
    """``RESULTS_DIR/<algo>/seed_<n>`` folders holding a ``params.json``, by seed."""
    paths = glob.glob(os.path.join(results_dir, algo, "seed_*", "params.json"))
    runs = [os.path.dirname(path) for path in paths]

    def seed_of(run_dir: str) -> int:
        match = re.search(r"seed_(\d+)$", run_dir)
        return int(match.group(1)) if match else 0

    return sorted(runs, key=seed_of)


def summarize(values: Sequence[float], seeds: Sequence[int]) -> str:
    """Success rates of several seeds as one cell, in percent.

    Returns:
        ``not evaluated`` without values; the values and their seeds for 1-2 seeds; the mean and
        the half-width of the 95% t interval of the mean for 3 or more.
    """
    if not values:
        return "not evaluated"
    if len(values) < 3:
        shown = ", ".join(f"{100 * v:.1f}%" for v in values)
        return f"{shown} (seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})"
    interval = confidence_interval(values)
    assert interval is not None
    mean, _, half_width = interval
    return f"{100 * mean:.1f}% ± {100 * half_width:.1f} (95% CI, {len(values)} seeds)"


def comparison_rows(results_dir: str) -> list[list[str]]:
    """The comparison table's rows: header, the published points, then ours."""
    rows = [["source", "algorithm", "envs / reward", "meta-train success", "meta-test success",
             "settings"]]
    for point in read_published(os.path.join(results_dir, "published.csv")):
        rows.append([point["source"], point["algorithm"], f"{point['envs']} / {point['reward']}",
                     _percent(point["meta_train_success"]), _percent(point["meta_test_success"]),
                     point["settings"]])
    for algo, name in ALGORITHMS:
        seeds = [read_seed(run) for run in find_runs(results_dir, algo)]
        rewards = sorted({seed.reward for seed in seeds}) or ["V2"]
        cells = ["not run", "not run"] if not seeds else [
            summarize([s.protocol[split] for s in seeds if split in s.protocol],
                      [s.seed for s in seeds if split in s.protocol])
            for split in ("train", "test")
        ]
        rows.append([f"this repository ({algo}/)", name,
                     f"Meta-World 3.1.1 v3 / {', '.join(r.upper() for r in rewards)}", *cells,
                     "paper_configs.json's ML10 entry (Meta-World+'s MAML-TRPO settings); "
                     "meta-tested by Meta-World+'s protocol"])
    return rows


def seed_rows(results_dir: str) -> list[list[str]]:
    """Ours per seed: header, then one row per run folder."""
    rows = [["algorithm", "seed", "reward", "iterations", "env steps", "wall time (h)",
             f"train batches: {TRAIN_SUCCESS_KEY} (last {LAST_ITERATIONS} itr)",
             "meta-train success", "meta-test success", "checkpoint"]]
    for algo, name in ALGORITHMS:
        for run in find_runs(results_dir, algo):
            s = read_seed(run)
            rows.append([name, str(s.seed), s.reward.upper(), str(s.iterations),
                         _number(s.env_steps, "{:.3g}"), _number(s.wall_time_h, "{:.2f}"),
                         _number(100 * s.train_batch_success, "{:.1f}%"),
                         *(_number(100 * s.protocol.get(split, math.nan), "{:.1f}%")
                           for split in ("train", "test")), s.checkpoint])
    return rows


def _percent(text: str) -> str:
    try:
        float(text)
    except ValueError:
        return text
    return f"{text}%"


def _number(value: float, form: str) -> str:
    return form.format(value) if math.isfinite(value) else "-"


def to_markdown(rows: Sequence[Sequence[str]]) -> str:
    """A markdown table (the first row is the header)."""
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in rows[1:]]
    return "\n".join(lines) + "\n"


def to_rst(rows: Sequence[Sequence[str]]) -> str:
    """A reStructuredText list-table (the first row is the header)."""
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: auto", ""]
    for row in rows:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" if cell else "     -" for cell in row[1:])
    return "\n".join(lines) + "\n"


def build(results_dir: str) -> tuple[str, str]:
    """``(results.md, results_table.rst)`` contents for ``results_dir``."""
    comparison, per_seed = comparison_rows(results_dir), seed_rows(results_dir)
    markdown = ("# ML10: our runs beside the published MAML numbers\n\n"
                "Written by `experiments/metaworld_results.py` from this folder; see "
                "docs/metaworld.rst for the differences between the rows.\n\n"
                + to_markdown(comparison) + "\n## Ours per seed\n\n"
                + (to_markdown(per_seed) if len(per_seed) > 1 else "No run yet.\n"))
    rst = to_rst(comparison)
    if len(per_seed) > 1:
        rst += "\nOurs per seed:\n\n" + to_rst(per_seed)
    return markdown, rst


def main(argv: Sequence[str] | None = None) -> tuple[str, str]:
    """Command-line entry point; returns the paths written."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=EPILOG)
    parser.add_argument("results_dir", nargs="?", default=DEFAULT_RESULTS_DIR,
                        help="folder with published.csv and <algo>/seed_<n>/ run folders")
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(args.results_dir, "published.csv")):
        parser.error(f"{args.results_dir}: no published.csv there")
    markdown, rst = build(args.results_dir)
    paths = (os.path.join(args.results_dir, "results.md"),
             os.path.join(args.results_dir, "results_table.rst"))
    atomic_write_bytes(paths[0], markdown.encode())
    atomic_write_bytes(paths[1], rst.encode())
    print(markdown)
    return paths


if __name__ == "__main__":
    run_script(main)
