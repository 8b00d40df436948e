"""When each HalfCheetah seed takes off, against the paper's mean curve.

Take-off: the first iteration at which the mean of ``Step_1-AverageReturn`` over that iteration
and the two before it reaches :data:`THRESHOLD`. The paper's ProMP curve on
HalfCheetahFwdBack (figure 2) reads about 0, 6, 12 and 35 at iterations 0, 4, 8 and 12 (160k
timesteps per iteration; read off the raster, about +-2 iterations); these readings are not in
``paper_reference.csv``, whose values start at 1e7.

A second table asks whether the way the curve was drawn could move the take-off: the original's
plotting helper (``experiment_utils/plot_utils.py`` of its ``full_code`` branch,
``prepare_data_for_plot(x_key='n_timesteps', round_x=...)``) pools the seeds' points whose
``n_timesteps`` fall in one bin of width ``round_x``, averages them and draws the mean at the
bin's *start*. For our seeds' curves it gives, per bin width, the first drawn point that reaches
the threshold, as an iteration (drawn ``n_timesteps`` / timesteps per iteration), next to the
paper's readings at iterations 0, 4, 8 and 12.

Usage::

    python benchmarks/takeoff.py benchmarks/results/reproduction \\
        --output benchmarks/results/reproduction/takeoff.md
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from meta_policy_search.experiment.curves import read_progress

ENV = "HalfCheetahRandDirecEnv"
METRIC = "Step_1-AverageReturn"
THRESHOLD = 35.0
WINDOW = 3
PAPER_TAKEOFF = {"promp": 12}
"""Algorithm -> the iteration at which the paper's mean curve reaches :data:`THRESHOLD`."""
PAPER_EARLY_READINGS = {0: 0.0, 4: 6.0, 8: 12.0, 12: 35.0}
"""The paper's ProMP mean curve read off figure 2: iteration -> ``Step_1-AverageReturn``."""
BIN_WIDTHS = (None, 5e5, 1e6, 1.5e6, 2e6)
"""``round_x`` values of the plotting helper to try (``None``: every point drawn as logged)."""


def takeoff_iteration(returns: np.ndarray, threshold: float = THRESHOLD,
                      window: int = WINDOW) -> int | None:
    """First iteration whose trailing ``window``-iteration mean reaches ``threshold``.

    Args:
        returns: ``[n_itr]`` the metric per iteration.

    Returns:
        The iteration (0-based, the last of the window), or ``None`` if it never does.
    """
    for itr in range(window - 1, len(returns)):
        if np.mean(returns[itr - window + 1: itr + 1]) >= threshold:
            return itr
    return None


def binned_mean_curve(curves: list[tuple[np.ndarray, np.ndarray]],
                      round_x: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The seeds' points pooled as the original's ``prepare_data_for_plot`` pools them.

    Args:
        curves: per seed, ``(n_timesteps [n_itr], returns [n_itr])``.
        round_x: bin width in timesteps; every point goes to ``(x // round_x) * round_x``, the
            bin's start. ``None``: no binning (points at equal ``x`` are averaged).

    Returns:
        ``(x [n_bins], mean [n_bins])``, sorted by ``x``.
    """
    pooled: dict[float, list[float]] = {}
    for timesteps, returns in curves:
        for x, y in zip(timesteps, returns):
            key = float(x) if round_x is None else float((x // round_x) * round_x)
            pooled.setdefault(key, []).append(float(y))
    xs = np.array(sorted(pooled))
    return xs, np.array([np.mean(pooled[x]) for x in xs])


def seed_dirs(env_dir: str) -> list[str]:
    """The ``seed_<n>`` folders of a grid's ``<algo>/<env>`` folder, in seed order."""
    return sorted((d for d in os.listdir(env_dir) if d.startswith("seed_")), key=lambda d: int(d[5:]))


def drawn_takeoff_table(grid: str, algo: str) -> list[str]:
    """Markdown lines: the first drawn point reaching :data:`THRESHOLD`, per bin width."""
    env_dir = os.path.join(grid, algo, ENV)
    curves = []
    for seed_dir in seed_dirs(env_dir):
        columns = read_progress(os.path.join(env_dir, seed_dir, "progress.csv"))
        if METRIC in columns and "n_timesteps" in columns:
            curves.append((columns["n_timesteps"], columns[METRIC]))
    if not curves:
        return []
    per_iteration = float(np.median(np.diff(curves[0][0])))
    lines = [
        "", f"## {algo}: the mean over {len(curves)} seeds as the original's plotting helper draws it", "",
        f"Timesteps per iteration: {per_iteration:,.0f}. Drawn iteration: the drawn point's "
        "`n_timesteps` over that (the helper draws a bin at its start). Paper: about "
        + ", ".join(f"{y:g} at iteration {i}" for i, y in PAPER_EARLY_READINGS.items()) + ".", "",
        "| round_x (timesteps) | first drawn iteration reaching 35 | drawn at iterations "
        + ", ".join(str(i) for i in PAPER_EARLY_READINGS) + " |",
        "|---|---|---|",
    ]
    for round_x in BIN_WIDTHS:
        xs, means = binned_mean_curve(curves, round_x)
        drawn_itr = xs / per_iteration
        reached = np.nonzero(means >= THRESHOLD)[0]
        first = f"{drawn_itr[reached[0]]:.1f}" if reached.size else "not reached"
        at = ", ".join(f"{np.interp(i, drawn_itr, means):.1f}" for i in PAPER_EARLY_READINGS)
        lines.append(f"| {'none' if round_x is None else f'{round_x:,.0f}'} | {first} | {at} |")
    return lines


def takeoff_table(grid: str) -> str:
    """Markdown: per algorithm and seed of ``grid/<algo>/HalfCheetahRandDirecEnv``, the take-off."""
    lines = [
        f"# Take-off on {ENV}", "",
        f"Take-off: the first iteration at which the mean of `{METRIC}` over it and the "
        f"{WINDOW - 1} iterations before it reaches {THRESHOLD:g} (`benchmarks/takeoff.py`). The "
        "paper's ProMP mean curve reaches it at about iteration 12 (figure 2, read off the "
        "raster, about +-2 iterations).", "",
        "| algorithm | seed | take-off iteration | paper (mean curve) | iterations logged |",
        "|---|---|---|---|---|",
    ]
    for algo in sorted(os.listdir(grid)):
        env_dir = os.path.join(grid, algo, ENV)
        if not os.path.isdir(env_dir):
            continue
        for seed_dir in seed_dirs(env_dir):
            columns = read_progress(os.path.join(env_dir, seed_dir, "progress.csv"))
            returns = columns.get(METRIC, np.array([]))
            itr = takeoff_iteration(returns)
            paper = PAPER_TAKEOFF.get(algo)
            lines.append(f"| {algo} | {seed_dir[5:]} | {'not reached' if itr is None else itr} "
                         f"| {'' if paper is None else f'about {paper}'} | {len(returns)} |")
    for algo in ("promp", "trpo_maml"):
        if os.path.isdir(os.path.join(grid, algo, ENV)):
            lines += drawn_takeoff_table(grid, algo)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the take-off table of a reproduction grid."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("grid", help="a reproduce.py --out directory")
    parser.add_argument("--output", required=True, help="markdown file to write")
    args = parser.parse_args(argv)
    text = takeoff_table(args.grid)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
