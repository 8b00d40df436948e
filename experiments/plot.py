"""Plot learning curves (mean +- std over seeds) of meta-RL runs as a PNG.

Usage::

    python experiments/plot.py data/promp data/trpo_maml --output curves.png
    python experiments/plot.py RUN_DIR --keys Step_0-AverageReturn Step_1-AverageReturn
    python experiments/plot.py data/reproduce --reference

Every ``progress.csv`` below the given directories is a run. Runs whose ``params.json`` agree on
everything except the seed and the output directory are seeds of one configuration: they are
averaged row by row (iteration by iteration, truncated to the shortest run) and drawn as a mean
line with a +-1 std band (population std over seeds). Runs without ``params.json`` form a group
of their own. One panel per key; the x axis is ``--x`` (default ``n_timesteps``) averaged over
the seeds. ``n_timesteps`` counts environment steps as the paper did (the nominal
``meta_batch_size x rollouts_per_meta_task x H`` per sampling phase); ``n_timesteps_real`` counts
the steps actually taken.

``--reference`` overlays the paper's values (``paper_reference.csv``) for each curve's env and
algorithm (the paper's legend name of its ``params.json``, see ``algorithms.py``) as points with
error bars of their reading precision, in the curve's colour.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from algorithms import algorithm_for_params

from meta_policy_search.utils.paper import (
    ReferencePoint,
    load_paper_reference,
)

IGNORED_PARAMS = ("seed", "dump_path")
"""``params.json`` keys that do not distinguish configurations."""



@dataclass
class Run:
    """One run: its directory, its progress columns and its parameters."""

    path: str
    columns: dict[str, np.ndarray]
    params: dict = field(default_factory=dict)


def read_progress(csv_path: str) -> dict[str, np.ndarray]:
    """Read ``progress.csv`` into float columns (empty cells and text become NaN).

    If the run was resumed and an iteration appears twice, the last row of it is kept.

    Args:
        csv_path: path of a ``progress.csv``.

    Returns:
        Column name -> ``[num_rows]`` float64 array.
    """
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if rows and "Itr" in rows[0]:
        last = {}
        for row in rows:
            last[row["Itr"]] = row  # a later row of the same iteration wins
        rows = sorted(last.values(), key=lambda r: _to_float(r["Itr"]))
    keys = list(rows[0].keys()) if rows else []
    return {k: np.array([_to_float(r.get(k)) for r in rows], dtype=np.float64) for k in keys}


def _to_float(value: str | None) -> float:
    try:
        return float(value) if value not in (None, "") else math.nan
    except ValueError:
        return math.nan


def find_runs(directories: Sequence[str]) -> list[Run]:
    """All runs (directories with a ``progress.csv``) below ``directories``, sorted by path.

    Raises:
        ValueError: if a directory does not exist or no run is found.
    """
    runs = []
    for directory in directories:
        if not os.path.isdir(directory):
            raise ValueError(f"run directory {directory!r} does not exist")
        for root, _, files in os.walk(directory):
            if "progress.csv" in files:
                params_path = os.path.join(root, "params.json")
                params = {}
                if os.path.isfile(params_path):
                    with open(params_path, encoding="utf-8") as f:
                        params = json.load(f)
                columns = read_progress(os.path.join(root, "progress.csv"))
                if columns:
                    runs.append(Run(root, columns, params))
    if not runs:
        raise ValueError(f"no non-empty progress.csv found below {list(directories)}")
    return sorted(runs, key=lambda run: run.path)


def reference_points(params: dict, key: str) -> list[ReferencePoint]:
    """The paper's values of ``key`` for the env and algorithm of a run's ``params.json``.

    Returns:
        The matching rows of ``paper_reference.csv`` (empty if the algorithm is not in the
        registry or the paper has no such curve).
    """
    algorithm = algorithm_for_params(params)
    if algorithm is None:
        return []
    return [p for p in load_paper_reference()
            if p.env == params.get("env") and p.algorithm == algorithm.legend and p.metric == key]


def draw_reference(ax: Any, points: Sequence[ReferencePoint], color: Any,
                   label: str | None = None) -> None:
    """Draw reference points with error bars of their reading precision (hollow markers)."""
    if points:
        ax.errorbar([p.timesteps for p in points], [p.value for p in points],
                    yerr=[p.precision for p in points], fmt="o", mfc="none", color=color,
                    capsize=3, label=label)


def config_key(run: Run) -> str:
    """The grouping key: ``params.json`` without seed and output path (or the run's path)."""
    if not run.params:
        return "path:" + run.path
    params = {k: v for k, v in run.params.items() if k not in IGNORED_PARAMS}
    return json.dumps(params, sort_keys=True)


def group_runs(runs: Sequence[Run]) -> dict[str, list[Run]]:
    """Group runs by :func:`config_key` and name each group.

    A group's label is its ``algo`` and ``env`` plus ``key=value`` for every parameter that
    differs between groups of the same algorithm (parameters only some algorithms have, such as
    ProMP's ``clip_eps``, say nothing new next to the algorithm's name); groups without
    ``params.json`` are labelled by their path.

    Returns:
        Label -> runs (seeds) of that configuration, in first-seen order.
    """
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(config_key(run), []).append(run)
    param_sets = [g[0].params for g in groups.values() if g[0].params]
    all_keys = sorted({k for p in param_sets for k in p} - set(IGNORED_PARAMS) - {"algo", "env"})
    varying = []
    for key in all_keys:
        for algo in {p.get("algo") for p in param_sets}:
            same_algo = [p for p in param_sets if p.get("algo") == algo]
            if len({json.dumps(p.get(key)) for p in same_algo}) > 1:
                varying.append(key)
                break
    labelled = {}
    for runs_of_group in groups.values():
        params = runs_of_group[0].params
        if not params:
            label = runs_of_group[0].path
        else:
            parts = [str(params.get("algo", "run")), str(params.get("env", ""))]
            parts += [f"{k}={params.get(k)}" for k in varying]
            label = " ".join(p for p in parts if p)
        while label in labelled:
            label += "'"
        labelled[label] = runs_of_group
    return labelled


def aggregate(runs: Sequence[Run], key: str, x_key: str) -> tuple[np.ndarray, ...]:
    """Mean and std over seeds of ``key``, aligned by row and cut to the shortest run.

    Args:
        runs: seeds of one configuration.
        key: the y column.
        x_key: the x column (averaged over seeds); ``'Itr'`` or ``'n_timesteps'`` typically.

    Returns:
        ``(x, mean, std)``, each ``[min_rows]``; ``std`` is the population std (0 for one seed).

    Raises:
        ValueError: if a run lacks ``key`` or ``x_key``.
    """
    for run in runs:
        for column in (key, x_key):
            if column not in run.columns:
                raise ValueError(f"{run.path}/progress.csv has no column {column!r}")
    length = min(len(run.columns[key]) for run in runs)
    ys = np.stack([run.columns[key][:length] for run in runs])
    xs = np.stack([run.columns[x_key][:length] for run in runs])
    return xs.mean(axis=0), ys.mean(axis=0), ys.std(axis=0)


def default_keys(runs: Sequence[Run]) -> list[str]:
    """``Step_k-AverageReturn`` for every inner step ``k`` present (else ``AverageReturn``)."""
    keys = {k for run in runs for k in run.columns if re.fullmatch(r"Step_\d+-AverageReturn", k)}
    if not keys:
        return ["AverageReturn"]
    return sorted(keys, key=lambda k: int(k.split("_")[1].split("-")[0]))


def plot(
    groups: dict[str, list[Run]], keys: Sequence[str], x_key: str, output: str,
    reference: bool = False,
) -> str:
    """Draw one panel per key with a mean line and std band per group; save to ``output``.

    Args:
        groups: label -> runs (seeds), see :func:`group_runs`.
        keys: ``progress.csv`` columns, one panel each.
        x_key: the x column.
        output: PNG path.
        reference: also draw the paper's values of each group's env and algorithm.

    Returns:
        ``output``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    fig, axes = plt.subplots(1, len(keys), figsize=(5.5 * len(keys), 4.2), squeeze=False)
    for ax, key in zip(axes[0], keys):
        for label, runs in groups.items():
            runs_with_key = [run for run in runs if key in run.columns]
            if not runs_with_key:
                continue
            x, mean, std = aggregate(runs_with_key, key, x_key)
            line = ax.plot(x, mean, label=f"{label} (n={len(runs_with_key)})")[0]
            ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.25)
            if reference:
                draw_reference(ax, reference_points(runs_with_key[0].params, key),
                               line.get_color(), f"{label}: paper")
        ax.set_title(key)
        ax.set_xlabel(x_key)
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 100k, not 100000
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("return (mean \u00b1 std over seeds)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:  # a group may lack the first key: collect every labelled line once
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.tight_layout()
    # Below the panels, so long labels never cover the curves.
    legend = fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                        fontsize="small", ncol=1 if len(labels) > 3 else max(len(labels), 1))
    directory = os.path.dirname(os.path.abspath(output))
    os.makedirs(directory, exist_ok=True)
    fig.savefig(output, dpi=120, bbox_extra_artists=[legend], bbox_inches="tight")
    plt.close(fig)
    return output


def main(argv: Sequence[str] | None = None) -> str:
    """Command-line entry point; returns the PNG path (also printed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="searched recursively")
    parser.add_argument("--output", default="learning_curves.png", help="PNG to write")
    parser.add_argument("--keys", nargs="+", help="progress.csv columns, one panel each "
                        "(default: every Step_k-AverageReturn)")
    parser.add_argument("--x", default="n_timesteps",
                        help="x-axis column (n_timesteps: steps as the paper counted them)")
    parser.add_argument("--reference", action="store_true",
                        help="overlay the paper's values (paper_reference.csv) of each curve's "
                        "env and algorithm")
    args = parser.parse_args(argv)
    runs = find_runs(args.run_dirs)
    keys = args.keys or default_keys(runs)
    missing = [k for k in keys if not any(k in run.columns for run in runs)]
    if missing:
        raise ValueError(f"no run has the column(s) {missing}")
    output = plot(group_runs(runs), keys, args.x, args.output, reference=args.reference)
    print(f"Wrote {os.path.abspath(output)}")
    return output


if __name__ == "__main__":
    try:
        main()
    except ValueError as error:
        sys.exit(f"plot.py: error: {error}")
