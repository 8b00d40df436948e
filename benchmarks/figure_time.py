"""Time to the whole figure 2: the compute budget of the paper's learning-curve grid.

Figure 2 of the ProMP paper has 25 cells (algorithm x environment, the ``fig2`` rows of
``meta_policy_search/data/paper_reference.csv``); a reproduction runs 3 seeds of each. This
script prices that grid from what the committed runs measured: for every cell with runs in
``benchmarks/results/reproduction/<algo>/<env>/seed_*/progress.csv``, the median ``ItrTime`` of
each seed (its first iteration, which traces and compiles, is left out), averaged over the seeds;
a cell without runs gets the cost of the same environment's cell of the closest algorithm that has
runs (E-MAML-TRPO: MAML-TRPO; E-MAML-VPG and LVC-VPG: ProMP) times the ratio of the two
algorithms on the half-cheetah, where all of them ran. A run's iterations are the fewest that
reach the horizon as the paper counts timesteps (what ``experiments/reproduce.py`` plans).

Scenarios (every run is sequential in its iterations, so no machine count finishes the grid
before its longest run):

* one 2-core machine, the runs one after the other;
* one 16-core machine running 8 runs at a time with 2 workers each
  (``reproduce.py --n_concurrent 8 ... -- --n_parallel 2``), each run as fast as on the 2-core
  machine; the runs go longest first to the slot that frees first;
* a Ray cluster of N such machines (``reproduce.py --ray_address``, 8 runs per machine).

``docs/compute_budget.rst`` holds this script's output between two marker lines, and a test
checks that it is up to date; rewrite it with::

    python benchmarks/figure_time.py --write
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from meta_policy_search.experiment.curves import read_progress  # noqa: E402
from meta_policy_search.experiment.paper import (  # noqa: E402
    load_paper_reference,
    timesteps_per_iteration,
)
from meta_policy_search.experiment.registry import ALGORITHMS  # noqa: E402

RUNS = REPO / "benchmarks" / "results" / "reproduction"
PAGE = REPO / "docs" / "compute_budget.rst"
BEGIN = ".. figure_time.py output begins"
END = ".. figure_time.py output ends"
SEEDS = 3
HORIZONS = (1e7, 1e8)
SLOTS_PER_MACHINE = 8
"""Runs at a time on a 16-core machine, 2 cores (workers) each."""
CLUSTER_SIZES = (2, 4, 10)
PROXY = {"e_maml_trpo": "trpo_maml", "e_maml_vpg": "promp", "lvc_vpg": "promp"}
"""A cell without runs is priced from this algorithm's cell on the same env."""
RATIO_ENV = "HalfCheetahRandDirecEnv"
"""The env where every figure-2 algorithm has runs: the proxies' cost ratios come from it."""


@dataclass(frozen=True)
class Cell:
    """One cell of figure 2 and its cost per iteration."""

    algo: str
    env: str
    seconds_per_iteration: float
    timesteps_per_iteration: int
    seeds: int
    """Runs measured (0: priced from :data:`PROXY`)."""

    def iterations(self, horizon: float) -> int:
        """The fewest iterations that reach ``horizon`` timesteps."""
        return math.ceil(horizon / self.timesteps_per_iteration)

    def run_seconds(self, horizon: float) -> float:
        """One run of the cell to ``horizon`` timesteps."""
        return self.iterations(horizon) * self.seconds_per_iteration


def figure_cells() -> list[tuple[str, str]]:
    """``(registry name, env)`` of the 25 figure-2 cells, in the reference file's order."""
    by_legend = {algorithm.legend: name for name, algorithm in ALGORITHMS.items()}
    cells: dict[tuple[str, str], None] = {}
    for point in load_paper_reference():
        if point.figure == "fig2":
            cells[(by_legend[point.algorithm], point.env)] = None
    return list(cells)


def measured_cell(algo: str, env: str) -> tuple[float, int, int] | None:
    """``(mean over seeds of the median ItrTime, timesteps per iteration, seeds)`` of a cell's
    committed runs, or ``None`` if it has none."""
    folder = RUNS / algo / env
    medians, steps = [], set()
    for seed in sorted(os.listdir(folder)) if folder.is_dir() else []:
        progress = folder / seed / "progress.csv"
        if not (seed.startswith("seed_") and progress.is_file()):
            continue
        columns = read_progress(str(progress))
        times = [t for itr, t in zip(columns["Itr"], columns["ItrTime"]) if itr > 0]
        params = json.loads((folder / seed / "params.json").read_text())
        steps.add(timesteps_per_iteration(params["meta_batch_size"],
                                          params["rollouts_per_meta_task"],
                                          params["max_path_length"],
                                          params["num_inner_grad_steps"]))
        medians.append(statistics.median(times))
    if not medians:
        return None
    if len(steps) != 1:
        raise ValueError(f"{algo} on {env}: seeds with different batch sizes {sorted(steps)}")
    return statistics.fmean(medians), steps.pop(), len(medians)


def priced_cells() -> list[Cell]:
    """Every figure-2 cell with its cost per iteration, measured or priced from a proxy."""
    cells = []
    for algo, env in figure_cells():
        measured = measured_cell(algo, env)
        if measured is not None:
            cells.append(Cell(algo, env, measured[0], measured[1], measured[2]))
            continue
        proxy = PROXY[algo]
        base, own, on_env = (measured_cell(*key) for key in
                             ((proxy, RATIO_ENV), (algo, RATIO_ENV), (proxy, env)))
        if base is None or own is None or on_env is None:
            raise ValueError(f"cannot price {algo} on {env}: {proxy} or {algo} has no runs")
        cells.append(Cell(algo, env, on_env[0] * own[0] / base[0], on_env[1], 0))
    return cells


def makespan(durations: list[float], slots: int) -> float:
    """Wall time of running ``durations`` on ``slots`` slots, longest first, each to the slot
    that frees first."""
    loads = [0.0] * slots
    for duration in sorted(durations, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + duration)
    return max(loads)


def hours(seconds: float) -> str:
    """Hours, or days above 48 hours."""
    if seconds >= 48 * 3600:
        return f"{seconds / 86400:.1f} days"
    return f"{seconds / 3600:.1f} h"


def list_table(header: list[str], rows: list[list[str]], widths: str) -> list[str]:
    """An RST list-table."""
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {cell}" for cell in row[1:]]
    return lines + [""]


def page_text() -> str:
    """The generated part of ``docs/compute_budget.rst``."""
    cells = priced_cells()
    legend = {name: algorithm.legend for name, algorithm in ALGORITHMS.items()}
    cell_rows = []
    for cell in cells:
        source = (f"{cell.seeds} seed{'s' if cell.seeds > 1 else ''}" if cell.seeds
                  else f"from {legend[PROXY[cell.algo]]}")
        cell_rows.append([
            legend[cell.algo], f"``{cell.env}``", source, f"{cell.seconds_per_iteration:.1f}",
            str(cell.iterations(1e7)), hours(cell.run_seconds(1e7)), hours(cell.run_seconds(1e8)),
        ])
    lines = list_table(
        ["algorithm", "environment", "cost from", "s / iteration", "iterations to 1e7",
         "one run to 1e7", "one run to 1e8"], cell_rows, "14 30 14 10 10 11 11")
    scenario_rows = []
    for horizon in HORIZONS:
        runs = [cell.run_seconds(horizon) for cell in cells for _ in range(SEEDS)]
        row = [f"{horizon:.0e}".replace("e+0", "e"), hours(sum(runs)),
               hours(makespan(runs, SLOTS_PER_MACHINE))]
        row += [hours(makespan(runs, SLOTS_PER_MACHINE * n)) for n in CLUSTER_SIZES]
        row.append(hours(max(runs)))
        scenario_rows.append(row)
    lines += list_table(
        ["timesteps", "one 2-core machine", "one 16-core machine (8 runs at a time)",
         *(f"{n} such machines (Ray)" for n in CLUSTER_SIZES), "longest run (no faster)"],
        scenario_rows, "10 15 15 15 15 15 15")
    lines.append(f"{len(cells)} cells x {SEEDS} seeds = {len(cells) * SEEDS} runs.")
    return "\n".join(lines) + "\n"


def replace_generated(page: str, generated: str) -> str:
    """``page`` with the text between the marker lines replaced by ``generated``."""
    head, rest = page.split(BEGIN + "\n", 1)
    _, tail = rest.split(END + "\n", 1)
    return f"{head}{BEGIN}\n\n{generated}\n{END}\n{tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {PAGE.name}'s table")
    args = parser.parse_args()
    generated = page_text()
    if args.write:
        PAGE.write_text(replace_generated(PAGE.read_text(), generated))
        print(f"wrote {PAGE}")
    else:
        print(generated)


if __name__ == "__main__":
    main()
