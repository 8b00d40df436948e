"""Our learning curves against the paper's values: the figures and ``reproduction.md``.

The comparison step of ``experiments/reproduce.py``, kept apart from the grid's planning and
launching. Everything here reads what runs have logged (:class:`Curve`) and the paper's values
(:func:`~meta_policy_search.experiment.paper.load_paper_reference`):

* :func:`draw_comparison`: one panel per env, mean +- std over seeds per algorithm, the paper's
  values as points with error bars. ``view='reached'`` limits each panel's x-axis to the
  timesteps its runs reach (the paper's later points are named in the panel); ``view='full'``
  spans every paper point, to 1e8, where runs to 1e7 fill the left tenth.
* :func:`comparison_markdown`: every figure-2 cell at 1e7 with the 95% interval of the mean
  (:func:`summary_markdown`), the cells at the paper's later points up to the grid's horizon
  (:func:`later_points_markdown`), every paper value the runs reach, the paper's points not
  reached yet as a compact table, and each run's wall time and code commit.

Each seed's curve is read at a paper timestep linearly between the two iterations around it,
as the paper's figures are read (:func:`seed_values_at`). Nothing here imports TensorFlow.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from meta_policy_search.experiment.curves import LoggedRun, aggregate, draw_reference
from meta_policy_search.experiment.paper import (
    ReferencePoint,
    points_for_run,
    reference_provenance,
    timesteps_per_iteration,
)
from meta_policy_search.experiment.provenance import read_provenance
from meta_policy_search.experiment.registry import Algorithm

VIEWS = ("reached", "full")
"""x-axes of :func:`draw_comparison`: to what the runs reach, or over every paper point."""

REACH_MARGIN = 1.05
"""The reached view's x-axis ends this factor beyond the furthest logged timestep."""

T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086)
"""Student's t 0.975 quantiles for 1..20 degrees of freedom (two-sided 95% intervals)."""

SUMMARY_TIMESTEPS = 1e7
"""``reproduction.md``'s summary lists every learning-curve cell at these timesteps."""

SUMMARY_FIGURE = "fig2"
"""The paper's figure of the summary's cells: the learning curves."""

LEAD_ALGORITHM = "ProMP"
"""The paper's method: at its later points, :func:`later_points_markdown` compares it with each
other algorithm of the same env (the paper's central claim is that its lead grows)."""


@dataclasses.dataclass
class Curve:
    """The seeds of one (algorithm, env) that have logged iterations."""

    algo: Algorithm
    env: str
    metric: str
    runs: list[LoggedRun]


# ---------------------------------------------------------------------------- reading curves
def matching_reference(reference: Sequence[ReferencePoint], curve: Curve) -> list[ReferencePoint]:
    """The paper's values of the curve's env, algorithm (legend name), metric and batch.

    A figure made with another batch (the variance study's 20 x 40,
    :data:`~meta_policy_search.experiment.paper.FIGURE_BATCHES`) is
    not compared with runs of the learning curves' 40 x 20, though both have LVC-VPG returns.
    """
    params = curve.runs[0].params if curve.runs else {}
    return points_for_run(reference, curve.env, curve.algo.legend, curve.metric, params)


def seed_values_at(curve: Curve, timesteps: float) -> list[float]:
    """Each seed's metric at ``timesteps``, for the seeds that have reached it.

    Each seed's curve is interpolated linearly between the two iterations around ``timesteps``
    (x: timesteps as counted in the paper); seeds that have not reached it are left out.
    """
    values = []
    for run in curve.runs:
        x, y = run.columns["n_timesteps"], run.columns.get(curve.metric)
        if y is not None and len(x) and np.nanmax(x) >= timesteps:
            values.append(float(np.interp(timesteps, x, y)))
    return values


def ours_at(curve: Curve, timesteps: float) -> tuple[float, float, int] | None:
    """Mean, population std (over seeds) and seed count of :func:`seed_values_at`.

    Returns:
        ``(mean, std, n_seeds)``, or ``None`` if no seed has reached ``timesteps``.
    """
    values = seed_values_at(curve, timesteps)
    if not values:
        return None
    return float(np.mean(values)), float(np.std(values)), len(values)


def furthest_timesteps(curves: Sequence[Curve], env: str | None = None) -> float:
    """The most timesteps any seed of ``curves`` (of ``env``, if given) has logged; 0 if none."""
    reached = [float(np.nanmax(run.columns["n_timesteps"])) for curve in curves
               if env is None or curve.env == env
               for run in curve.runs if len(run.columns.get("n_timesteps", []))]
    return max(reached, default=0.0)


def confidence_interval(values: Sequence[float]) -> tuple[float, float, float] | None:
    """Mean, sample std (ddof 1) and the half-width of the 95% t interval of the mean.

    Returns:
        ``None`` for fewer than two values (no interval from one seed).

    Raises:
        ValueError: for more than 21 values (extend :data:`T_975`).
    """
    n = len(values)
    if n < 2:
        return None
    if n - 1 > len(T_975):
        raise ValueError(f"{n} seeds: T_975 has quantiles up to {len(T_975) + 1} seeds")
    std = float(np.std(values, ddof=1))
    return float(np.mean(values)), std, T_975[n - 2] * std / math.sqrt(n)


def format_steps(timesteps: float) -> str:
    """``1e7``, ``4.5e7``, ``60``: timesteps as the paper's axis labels write them."""
    return f"{timesteps:.3g}".replace("e+0", "e").replace("e+", "e")


# ---------------------------------------------------------------------------- figures
def draw_comparison(curves: Sequence[Curve], reference: Sequence[ReferencePoint],
                    envs: Sequence[str], output: str, view: str = "reached") -> str:
    """Save :func:`comparison_figure` as the PNG ``output``; return ``output``."""
    # matplotlib loads only when a figure is drawn
    import matplotlib.pyplot as plt

    fig = comparison_figure(curves, reference, envs, view)
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    fig.savefig(output, dpi=110)
    plt.close(fig)
    return output


def comparison_figure(curves: Sequence[Curve], reference: Sequence[ReferencePoint],
                      envs: Sequence[str], view: str = "reached") -> Any:
    """One panel per env: mean +- std over seeds per algorithm, the paper's values as error bars.

    Args:
        curves: the logged curves.
        reference: the paper's values (each curve gets :func:`matching_reference`).
        envs: the panels, in order (an env without curves gets an empty panel).
        view: ``'reached'``: each panel's x-axis ends :data:`REACH_MARGIN` beyond the furthest
            timestep its runs logged, shows the paper's points up to there and names the later
            ones it leaves out (so that runs to 1e7 are not squeezed into a tenth of an axis to
            1e8); ``'full'``: the axis spans every paper point as well.

    Returns:
        The matplotlib figure (Agg backend); its axes are the panels, in ``envs`` order.

    Raises:
        ValueError: naming ``view`` if it is not one of :data:`VIEWS`.
    """
    if view not in VIEWS:
        raise ValueError(f"view {view!r}: expected one of {', '.join(VIEWS)}")
    # matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # pyplot only after the backend is chosen
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    envs = list(dict.fromkeys(envs))
    cols = min(3, len(envs))
    rows = math.ceil(len(envs) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, 4.2 * rows), squeeze=False)
    for ax, env in zip(axes.flat, envs):
        limit = furthest_timesteps(curves, env) * REACH_MARGIN if view == "reached" else math.inf
        metrics: set[str] = set()
        left_out: set[float] = set()
        for curve in (c for c in curves if c.env == env):
            runs = [run for run in curve.runs if curve.metric in run.columns]
            if not runs:
                continue
            x, mean, std = aggregate(runs, curve.metric, "n_timesteps")
            line = ax.plot(x, mean, label=f"{curve.algo.legend} (n={len(runs)})")[0]
            ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.25)
            points = matching_reference(reference, curve)
            draw_reference(ax, [p for p in points if p.timesteps <= limit], line.get_color())
            left_out.update(p.timesteps for p in points if p.timesteps > limit)
            metrics.add(curve.metric)
        ax.set_title(env)
        ax.set_xlabel("timesteps (as counted in the paper)")
        if not metrics:
            ax.text(0.5, 0.5, "no iterations logged yet", ha="center", transform=ax.transAxes)
            continue
        if math.isfinite(limit):
            ax.set_xlim(0, limit)
        if left_out:
            ax.text(0.99, 0.01, "paper also at " + ", ".join(map(format_steps, sorted(left_out)))
                    + " (full view)", ha="right", va="bottom", fontsize="x-small",
                    transform=ax.transAxes, color="0.35")
        ax.set_ylabel(" / ".join(sorted(metrics)))
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small", title="lines: ours; o: paper", title_fontsize="small")
    for ax in axes.flat[len(envs):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------- reproduction.md
def interval_cells(values: Sequence[float], paper: float) -> str:
    """``'n | mean +- std | [low, high] | yes'``: the seed count, ours, the interval, paper in it."""
    interval = confidence_interval(values)
    if interval is None:
        return f"{len(values)} | {values[0]:.1f} | one seed | |"
    mean, std, half = interval
    inside = "yes" if abs(paper - mean) <= half else "no"
    return (f"{len(values)} | {mean:.1f} +- {std:.1f} | [{mean - half:.1f}, {mean + half:.1f}] "
            f"| {inside} |")


def summary_markdown(curves: Sequence[Curve], reference: Sequence[ReferencePoint]) -> list[str]:
    """Every paper value at :data:`SUMMARY_TIMESTEPS`: ours with its 95% interval, or "not run"."""
    lines = [
        f"## Every learning-curve cell of the paper ({SUMMARY_FIGURE}) at "
        f"{format_steps(SUMMARY_TIMESTEPS)} timesteps", "",
        "Ours: mean and sample std (ddof 1) over seeds; 95% CI: mean +- t(0.975, n-1) x std / "
        "sqrt(n), the interval of the mean over seeds (none from one seed). `paper in CI`: "
        "whether the paper's value lies inside it (its reading precision not added). "
        "\"not run\": no run of this cell in this grid; \"not reached\": runs that have "
        "not logged this many timesteps yet.", "",
        "| figure | env | algorithm | paper | seeds | ours: mean +- std | 95% CI | paper in CI |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for point in reference:
        if point.timesteps != SUMMARY_TIMESTEPS or point.figure != SUMMARY_FIGURE:
            continue
        curve = next((c for c in curves if c.env == point.env and c.algo.legend == point.algorithm
                      and point in matching_reference(reference, c)), None)
        head = (f"| {point.figure} | {point.env} | {point.algorithm} | "
                f"{point.value:g} +- {point.precision:g} |")
        values = [] if curve is None else seed_values_at(curve, point.timesteps)
        if curve is None or not values:
            state = "not run" if curve is None else f"not reached ({len(curve.runs)} running)"
            lines.append(f"{head} 0 | {state} | | |")
        else:
            lines.append(f"{head} {interval_cells(values, point.value)}")
    return [*lines, ""]


def later_points_markdown(curves: Sequence[Curve], reference: Sequence[ReferencePoint],
                          horizon: float) -> list[str]:
    """The grid's cells at the paper's points after 1e7 up to ``horizon`` (the grid's
    ``--timesteps``): ours with the 95% interval, or "not reached", and ProMP's lead.

    For each env and timestep where ProMP and another algorithm both have an interval, one
    line gives ProMP's lead over it (ours and the paper's) and whether the two intervals
    separate (do not overlap).

    Returns:
        Markdown lines; empty if no curve has a paper point in ``(1e7, horizon]``.
    """
    rows: list[tuple[Curve, ReferencePoint]] = [
        (curve, point) for curve in _by_env(curves) for point in matching_reference(reference, curve)
        if SUMMARY_TIMESTEPS < point.timesteps <= horizon]
    if not rows:
        return []
    steps = sorted({point.timesteps for _, point in rows})
    lines = [
        f"## The paper's later points, to {format_steps(horizon)} timesteps", "",
        "Ours: mean and sample std (ddof 1) over seeds and the 95% t interval of the mean, at "
        "each point of the paper after 1e7 up to this grid's `--timesteps`; `paper in CI`: "
        "whether the paper's value lies inside it. \"not reached\": no seed has logged this "
        "many timesteps yet.", "",
        "| env | algorithm | timesteps | paper | seeds | ours: mean +- std | 95% CI | paper in CI |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for step in steps:
        for curve, point in ((c, p) for c, p in rows if p.timesteps == step):
            head = (f"| {curve.env} | {curve.algo.legend} | {format_steps(step)} | "
                    f"{point.value:g} +- {point.precision:g} |")
            values = seed_values_at(curve, step)
            if values:
                lines.append(f"{head} {interval_cells(values, point.value)}")
            else:
                furthest = format_steps(float(f"{furthest_timesteps([curve]):.3g}"))
                lines.append(f"{head} 0 | not reached ({len(curve.runs)} seeds, the furthest at "
                             f"{furthest}) | | |")
    lines.append("")
    leads = lead_lines(rows)
    return [*lines, *(leads + [""] if leads else [])]


def lead_lines(rows: Sequence[tuple[Curve, ReferencePoint]]) -> list[str]:
    """ProMP's lead over each other algorithm of its env, per timestep of ``rows``."""
    lines = []
    for lead, lead_point in rows:
        if lead.algo.legend != LEAD_ALGORITHM:
            continue
        lead_interval = confidence_interval(seed_values_at(lead, lead_point.timesteps))
        for other, point in rows:
            if (other.env != lead.env or point.timesteps != lead_point.timesteps
                    or other.algo.legend == LEAD_ALGORITHM):
                continue
            other_interval = confidence_interval(seed_values_at(other, point.timesteps))
            if lead_interval is None or other_interval is None:
                continue
            (a, _, ha), (b, _, hb) = lead_interval, other_interval
            separate = "yes" if a - ha > b + hb or b - hb > a + ha else "no"
            lines.append(f"- {lead.env} at {format_steps(point.timesteps)}: {LEAD_ALGORITHM}'s "
                         f"lead over {other.algo.legend} {a - b:+.1f} (paper "
                         f"{lead_point.value - point.value:+g}); 95% CIs [{a - ha:.1f}, "
                         f"{a + ha:.1f}] and [{b - hb:.1f}, {b + hb:.1f}]: separate: {separate}")
    return lines


def reached_markdown(curves: Sequence[Curve],
                     reference: Sequence[ReferencePoint]) -> tuple[list[str], dict[str, list[str]]]:
    """The table of every paper value the runs reach, and the points not reached per cell.

    The table has a figure or metric column only when its rows differ in them (otherwise the
    lead paragraph names them), so that it fits a page's width.

    Returns:
        ``(lines, not_reached)``: markdown lines, and ``'env | algorithm'`` -> the paper's
        timesteps (formatted) that no seed of the cell has reached.
    """
    reached: list[tuple[Curve, ReferencePoint, tuple[float, float, int]]] = []
    not_reached: dict[str, list[str]] = {}
    for curve in _by_env(curves):
        for point in matching_reference(reference, curve):
            ours = ours_at(curve, point.timesteps)
            if ours is None:
                not_reached.setdefault(f"{curve.env} | {curve.algo.legend}", []).append(
                    format_steps(point.timesteps))
            else:
                reached.append((curve, point, ours))
    figures = sorted({point.figure for _, point, _ in reached})
    metrics = sorted({point.metric for _, point, _ in reached})
    extra = (["figure"] if len(figures) > 1 else []) + (["metric"] if len(metrics) > 1 else [])
    lines = [
        "Ours: mean +- std over the seeds (population std) of each seed's curve interpolated "
        "linearly between the two iterations around the reference timestep, and the seed count; "
        "x is timesteps as the paper counts them (iterations x meta_batch_size x rollouts x H x "
        "(inner steps + 1)). Paper: the value read off its figure +- the reading precision. "
        "`within`: whether |ours - paper| <= precision + our std."
        + (f" Every row: {', '.join(figures + metrics)}." if reached and not extra else ""), "",
        "| " + " | ".join(["env", "algorithm", *extra, "timesteps", "paper", "ours (seeds)",
                           "ours - paper", "within"]) + " |",
        "|" + "---|" * (7 + len(extra)),
    ]
    for curve, point, (mean, std, n) in reached:
        diff = mean - point.value
        within = "yes" if abs(diff) <= point.precision + std else "no"
        spread = f" +- {std:.1f}" if n > 1 else ""  # no spread from a single seed
        cells = [curve.env, curve.algo.legend,
                 *([point.figure] if "figure" in extra else []),
                 *([point.metric] if "metric" in extra else []),
                 format_steps(point.timesteps), f"{point.value:g} +- {point.precision:g}",
                 f"{mean:.1f}{spread} ({n})", f"{diff:+.1f}", within]
        lines.append("| " + " | ".join(cells) + " |")
    return lines, not_reached


def comparison_markdown(curves: Sequence[Curve], reference: Sequence[ReferencePoint],
                        command: str, horizon: float = SUMMARY_TIMESTEPS) -> str:
    """``reproduction.md``: per (env, algorithm) the paper's values next to ours.

    Args:
        curves: the grid's logged curves, in grid order.
        reference: the paper's values.
        command: the command line that plans the grid (written at the top).
        horizon: the grid's ``--timesteps``: the paper's later points up to it get a table of
            their own (:func:`later_points_markdown`).
    """
    reached, not_reached = reached_markdown(curves, reference)
    lines = [
        "# Reproduction of the ProMP paper's learning curves", "",
        f"Command: `{command}`", "",
        *summary_markdown(curves, reference),
        *later_points_markdown(curves, reference, horizon),
        "## Every paper value the runs reach", "",
        *reached, "",
    ]
    without = sorted({f"{c.env} {c.algo.legend}" for c in curves
                      if not any(p.env == c.env for p in reference)})
    if without:
        lines += [f"No paper values (the paper did not run these envs): {'; '.join(without)}.", ""]
    if not_reached:
        lines += ["Reference points not reached yet:", "",
                  "| env | algorithm | the paper's timesteps not reached |", "|---|---|---|",
                  *(f"| {cell} | {', '.join(steps)} |" for cell, steps in not_reached.items()),
                  ""]
    lines += ["Runs:", ""]
    for curve in curves:
        params = curve.runs[0].params
        steps = timesteps_per_iteration(params["meta_batch_size"],
                                        params["rollouts_per_meta_task"],
                                        params["max_path_length"], params["num_inner_grad_steps"])
        lines.append(f"- {curve.algo.legend} (`{curve.algo.name}`) on {curve.env}: "
                     f"{seed_list(curve.runs)}, {curve.metric}, {steps} timesteps per "
                     f"iteration, n_itr {params['n_itr']}, sampling_mode "
                     f"{params.get('sampling_mode')}")
    lines += ["", *wall_time_table(curves)]
    lines += ["", f"Paper values: {reference_provenance()}", ""]
    return "\n".join(lines)


def _by_env(curves: Sequence[Curve]) -> list[Curve]:
    """Curves env by env (envs in first-seen order, algorithms kept in grid order)."""
    env_order = list(dict.fromkeys(curve.env for curve in curves))
    return sorted(curves, key=lambda curve: env_order.index(curve.env))


def wall_time_table(curves: Sequence[Curve]) -> list[str]:
    """Markdown lines: each run's iterations and wall time (the sum of its ``ItrTime``)."""
    lines = [
        "Wall time: the sum of each run's `ItrTime` (a resumed run counts the iterations it "
        "logged, not the time lost to the interruption); the machine was often shared, so "
        "compare per-iteration times with care. Code: the git commit of each launch and the "
        "iteration it started at.", "",
        "| env | algorithm | seed | iterations | wall time | per iteration: mean (min - max) "
        "| code |",
        "|---|---|---|---|---|---|---|",
    ]
    for curve in curves:
        for run in sorted(curve.runs, key=_seed_order):
            times = run.columns.get("ItrTime", np.array([]))
            times = times[np.isfinite(times)]
            if not len(times):
                continue
            lines.append(f"| {curve.env} | {curve.algo.legend} | {run.params.get('seed', '?')} "
                         f"| {len(times)} | {times.sum():.0f} s | {times.mean():.1f} s "
                         f"({times.min():.1f} - {times.max():.1f}) | {describe_code(run.path)} |")
    return lines


def describe_code(run_dir: str) -> str:
    """The commits a run's launches ran (``provenance.json``), e.g. ``6761ce7: 0, 9c1d2e0: 12``."""
    records = read_provenance(run_dir)
    if not records:
        return "not recorded"
    return ", ".join(f"{(record.get('git_commit') or 'unknown')[:7]}"
                     f"{'+changes' if record.get('git_dirty') else ''}: {record.get('start_itr')}"
                     for record in records)


def _seed_order(run: LoggedRun) -> tuple[int, int, str]:
    """Sort key: integer seeds in numeric order (2 before 10), then anything else by text."""
    seed = str(run.params.get("seed", "?"))
    return (0, int(seed), "") if seed.isdigit() else (1, 0, seed)


def seed_list(runs: Sequence[LoggedRun]) -> str:
    """``seeds 1, 2, 3`` (or ``seed 1``): the seeds of a curve, from each run's ``params.json``."""
    seeds = [str(run.params.get("seed", "?")) for run in sorted(runs, key=_seed_order)]
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)}"

