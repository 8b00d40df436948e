"""Plot learning curves (mean +- std over seeds) of meta-RL runs as a PNG.

Usage::

    python experiments/plot.py data/promp data/trpo_maml --output curves.png
    python experiments/plot.py RUN_DIR --keys Step_0-AverageReturn Step_1-AverageReturn
    python experiments/plot.py data/reproduce --reference

Every ``progress.csv`` below the given directories is a run. Runs whose ``params.json`` agree on
everything except the seed, the output directory and the settings that leave results alone
(read in today's spelling, :func:`~meta_policy_search.experiment.curves.normalized_params`) are
seeds of one configuration: they are averaged row by row (iteration by iteration, truncated to
the shortest run) and drawn as a mean line with a +-1 std band (population std over seeds; no
band for one seed). Runs without
``params.json`` form a group of their own. A single configuration is drawn on one axis, its
``Step_0`` (pre-update) and ``Step_k`` (post-update) curves side by side; several
configurations get one panel per key (``--one_axis`` and ``--panel_per_key`` choose). The x axis
is ``--x`` (default ``n_timesteps``) averaged over the seeds. ``n_timesteps`` counts
environment steps as the paper did (the nominal ``meta_batch_size x rollouts_per_meta_task x H``
per sampling phase); ``n_timesteps_real`` counts the steps actually taken.

``--reference`` overlays the paper's values (``paper_reference.csv``) for each curve's env and
algorithm (the paper's legend name of its ``params.json``, see
:mod:`meta_policy_search.experiment.registry`) as points with error bars of their reading
precision, in the curve's colour. A curve that gets no points (an algorithm or env the paper
did not run, or a batch other than the paper figure's) is named on the console with the reason.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence

from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.experiment.curves import (
    LoggedRun,
    aggregate,
    default_keys,
    draw_reference,
    find_runs,
    group_runs,
    missing_reference_reason,
    reference_points,
)
from meta_policy_search.experiment.run_checks import check_writable_dir


def step_label(key: str) -> str:
    """``Step_0-AverageReturn`` -> ``'Step_0-AverageReturn (pre-update)'``, ``Step_k`` -> ``'...
    (after k inner steps)'``; other keys unchanged."""
    match = re.fullmatch(r"Step_(\d+)-.*", key)
    if match is None:
        return key
    k = int(match.group(1))
    return f"{key} ({'pre-update' if k == 0 else f'after {k} inner step' + ('s' if k > 1 else '')})"


def layout(
    groups: dict[str, list[LoggedRun]], keys: Sequence[str], one_axis: bool | None = None,
) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """Which curves go on which panel.

    Args:
        groups: label -> runs (seeds), see :func:`group_runs`.
        keys: ``progress.csv`` columns.
        one_axis: draw every key on one axis (pre- and post-update returns side by side, the
            gain from adaptation visible at a glance); ``False``: one panel per key; ``None``:
            one axis when there is a single group.

    Returns:
        ``[(panel title, [(group label, key, line label), ...]), ...]``.
    """
    if one_axis is None:
        one_axis = len(groups) == 1
    if one_axis:
        single = len(groups) == 1
        title = next(iter(groups)) if single else "returns"
        return [(title, [(group, key, step_label(key) if single else f"{group}: {step_label(key)}")
                         for group in groups for key in keys])]
    return [(key, [(group, key, group) for group in groups]) for key in keys]


def y_label(groups: dict[str, list[LoggedRun]], keys: Sequence[str] = ()) -> str:
    """The y-axis label: "return" when every key is a return (else "value", e.g. a success
    rate, whose panel title names it); mean +- std over seeds only when some configuration has
    several."""
    quantity = "return" if all("Return" in key for key in keys) else "value"
    seeds = max((len(runs) for runs in groups.values()), default=1)
    return f"{quantity} (mean \u00b1 std over seeds)" if seeds > 1 else f"{quantity} (one seed)"


def plot(
    groups: dict[str, list[LoggedRun]], keys: Sequence[str], x_key: str, output: str,
    reference: bool = False, notes: list[str] | None = None, one_axis: bool | None = None,
) -> str:
    """Draw the curves of :func:`layout` with a mean line and std band per group; save ``output``.

    Args:
        groups: label -> runs (seeds), see :func:`group_runs`.
        keys: ``progress.csv`` columns.
        x_key: the x column.
        output: PNG path.
        reference: also draw the paper's values of each group's env and algorithm.
        notes: if given, one line is appended per curve that ``reference`` leaves without
            paper points, saying why (:func:`missing_reference_reason`).
        one_axis: see :func:`layout`.

    Returns:
        ``output``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    panels = layout(groups, keys, one_axis)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for ax, (title, curves_of_panel) in zip(axes[0], panels):
        for group, key, label in curves_of_panel:
            runs_with_key = [run for run in groups[group] if key in run.columns]
            if not runs_with_key:
                continue
            x, mean, std = aggregate(runs_with_key, key, x_key)
            seeds = f" (n={len(runs_with_key)})" if len(groups[group]) > 1 else ""
            line = ax.plot(x, mean, label=label + seeds)[0]
            if len(runs_with_key) > 1:
                ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.25)
            if reference:
                params = runs_with_key[0].params
                draw_reference(ax, reference_points(params, key), line.get_color(),
                               f"{label}: paper")
                reason = missing_reference_reason(params, key)
                if reason is not None and notes is not None:
                    notes.append(f"no paper points for {group}, {key}: {reason}")
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel(x_key)
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 100k, not 100000
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(y_label(groups, keys))
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


def check_output(parser: argparse.ArgumentParser, output: str) -> None:
    """Exit with status 2 and one ``error:`` line unless ``output`` can be written as a file
    (checked before any run is read, so nothing is drawn in vain)."""
    if os.path.isdir(output):
        parser.error(f"--output {output}: is a directory; give a file name, e.g. "
                     f"{os.path.join(output, 'learning_curves.png')}")
    try:
        check_writable_dir(os.path.dirname(os.path.abspath(output)), "--output")
    except ConfigError as error:
        parser.error(str(error))


def main(argv: Sequence[str] | None = None) -> str:
    """Command-line entry point; returns the PNG path (also printed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="searched recursively")
    parser.add_argument("--output", default="learning_curves.png", help="PNG to write")
    parser.add_argument("--keys", nargs="+", help="progress.csv columns to draw "
                        "(default: every Step_k-AverageReturn)")
    parser.add_argument("--x", default="n_timesteps",
                        help="x-axis column (n_timesteps: steps as the paper counted them)")
    parser.add_argument("--reference", action="store_true",
                        help="overlay the paper's values (paper_reference.csv) of each curve's "
                        "env and algorithm")
    panels = parser.add_mutually_exclusive_group()
    panels.add_argument("--one_axis", dest="one_axis", action="store_const", const=True,
                        default=None, help="every key on one axis (default with one "
                        "configuration)")
    panels.add_argument("--panel_per_key", dest="one_axis", action="store_const", const=False,
                        help="one panel per key (default with several configurations)")
    args = parser.parse_args(argv)
    check_output(parser, args.output)
    runs = find_runs(args.run_dirs)
    keys = args.keys or default_keys(runs)
    missing = [k for k in keys if not any(k in run.columns for run in runs)]
    if missing:
        raise ValueError(f"no run has the column(s) {missing}")
    notes: list[str] = []
    output = plot(group_runs(runs), keys, args.x, args.output, reference=args.reference,
                  notes=notes, one_axis=args.one_axis)
    for note in notes:
        print(f"note: {note}")
    print(f"Wrote {os.path.abspath(output)}")
    return output


if __name__ == "__main__":
    try:
        main()
    except ValueError as error:  # bad input: exit status 2 (docs/experiments.rst, Exit status)
        print(f"plot.py: error: {error}", file=sys.stderr)
        sys.exit(2)
