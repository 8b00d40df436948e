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
algorithm (the paper's legend name of its ``params.json``, see
:mod:`meta_policy_search.experiment.registry`) as points with error bars of their reading
precision, in the curve's colour.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from meta_policy_search.experiment.config_parsing import ConfigError
from meta_policy_search.experiment.curves import (
    LoggedRun,
    aggregate,
    default_keys,
    draw_reference,
    find_runs,
    group_runs,
    reference_points,
)
from meta_policy_search.experiment.run_checks import check_writable_dir


def plot(
    groups: dict[str, list[LoggedRun]], keys: Sequence[str], x_key: str, output: str,
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
    parser.add_argument("--keys", nargs="+", help="progress.csv columns, one panel each "
                        "(default: every Step_k-AverageReturn)")
    parser.add_argument("--x", default="n_timesteps",
                        help="x-axis column (n_timesteps: steps as the paper counted them)")
    parser.add_argument("--reference", action="store_true",
                        help="overlay the paper's values (paper_reference.csv) of each curve's "
                        "env and algorithm")
    args = parser.parse_args(argv)
    check_output(parser, args.output)
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
