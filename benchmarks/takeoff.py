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

With ``--compare_with`` a third section compares the take-off iterations of two grids (e.g. the
original code's seeds against ours) with an exact two-sample rank test (Mann-Whitney U over all
splits of the pooled values; the seed counts here are small enough to enumerate).

Usage::

    python benchmarks/takeoff.py benchmarks/results/reproduction \\
        --output benchmarks/results/reproduction/takeoff.md
    python benchmarks/takeoff.py benchmarks/results/original_code_halfcheetah \\
        --compare_with benchmarks/results/reproduction \\
        --output benchmarks/results/original_code_halfcheetah/takeoff.md
"""

from __future__ import annotations

import argparse
import itertools
import math
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


def seed_returns(grid: str, algo: str) -> list[tuple[str, np.ndarray]]:
    """``(seed, METRIC per iteration)`` of each seed of ``grid/<algo>/HalfCheetahRandDirecEnv``,
    in seed order (an empty array where the metric is not logged)."""
    env_dir = os.path.join(grid, algo, ENV)
    return [(d[5:], read_progress(os.path.join(env_dir, d, "progress.csv")).get(METRIC, np.array([])))
            for d in seed_dirs(env_dir)]


def seed_takeoffs(grid: str, algo: str) -> list[int | None]:
    """Each seed's take-off iteration on ``grid/<algo>/HalfCheetahRandDirecEnv``, in seed order."""
    return [takeoff_iteration(returns) for _, returns in seed_returns(grid, algo)]


def mann_whitney_u(first: list[float], second: list[float]) -> float:
    """U of ``first`` against ``second``: pairs with the ``first`` value smaller, ties counting 1/2."""
    return sum(float(a < b) + 0.5 * float(a == b) for a in first for b in second)


def exact_rank_test(first: list[float], second: list[float]) -> tuple[float, float, float]:
    """Exact Mann-Whitney test by enumerating every split of the pooled values.

    Returns:
        ``(u, p_first_smaller, p_two_sided)``: ``u`` from :func:`mann_whitney_u`; the share of
        splits whose U is at least ``u`` (one-sided: ``first`` tends smaller), and whose U lies
        at least as far from its null mean ``len(first) * len(second) / 2`` (two-sided).
    """
    pooled = list(first) + list(second)
    u = mann_whitney_u(first, second)
    centre = len(first) * len(second) / 2
    n_splits = at_least = as_far = 0
    for chosen in itertools.combinations(range(len(pooled)), len(first)):
        chosen_set = set(chosen)
        split_u = mann_whitney_u([pooled[i] for i in chosen],
                                 [pooled[i] for i in range(len(pooled)) if i not in chosen_set])
        n_splits += 1
        at_least += split_u >= u - 1e-9
        as_far += abs(split_u - centre) >= abs(u - centre) - 1e-9
    return u, at_least / n_splits, as_far / n_splits


def comparison_lines(grid: str, other: str, algo: str = "promp") -> list[str]:
    """Markdown lines: the take-offs of ``grid`` against those of ``other``, with the exact test."""
    ours, theirs = seed_takeoffs(grid, algo), seed_takeoffs(other, algo)
    if None in ours or None in theirs:
        return ["", f"## {algo}: comparison with `{other}`", "",
                "Not computed: a seed never reaches the threshold in the iterations logged."]
    u, p_one, p_two = exact_rank_test(ours, theirs)
    return [
        "", f"## {algo}: take-off against `{other}`", "",
        "| grid | seeds | take-off iterations | median |", "|---|---|---|---|",
        f"| this one | {len(ours)} | {', '.join(map(str, ours))} | {np.median(ours):g} |",
        f"| `{other}` | {len(theirs)} | {', '.join(map(str, theirs))} | {np.median(theirs):g} |", "",
        f"Exact Mann-Whitney test over all {math.comb(len(ours) + len(theirs), len(ours)):,} "
        f"splits of the pooled values: U = {u:g} of {len(ours) * len(theirs)} (pairs where this "
        f"grid's seed takes off earlier, ties 1/2); one-sided p = {p_one:.2f} (this grid "
        f"earlier), two-sided p = {p_two:.2f}.",
    ]


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
        if not os.path.isdir(os.path.join(grid, algo, ENV)):
            continue
        for seed, returns in seed_returns(grid, algo):
            itr = takeoff_iteration(returns)
            paper = PAPER_TAKEOFF.get(algo)
            lines.append(f"| {algo} | {seed} | {'not reached' if itr is None else itr} "
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
    parser.add_argument("--compare_with", default=None,
                        help="another grid whose ProMP take-offs to test against this one's")
    args = parser.parse_args(argv)
    text = takeoff_table(args.grid)
    if args.compare_with:
        text += "\n".join(comparison_lines(args.grid, args.compare_with)) + "\n"
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
