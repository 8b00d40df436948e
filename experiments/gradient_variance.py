"""The ProMP paper's gradient-variance study (section 7.2): LVC vs DiCE meta-gradient noise.

Usage::

    # train with measurements (resumable: rerun the same command)
    python experiments/gradient_variance.py run --algo lvc_vpg --seed 22 --timesteps 1e7 \\
        --out data/gradient_variance
    python experiments/gradient_variance.py run --algo dice_maml --seed 22 --timesteps 1e7 \\
        --out data/gradient_variance
    # compare with the paper's figure
    python experiments/gradient_variance.py plot data/gradient_variance

``run`` trains one algorithm of the registry (``meta_policy_search.experiment.registry``) on
``--env`` (default ``HalfCheetahRandDirecEnv``) with its paper config and the study's batch
(``meta_batch_size`` 20, ``rollouts_per_meta_task`` 40, as in ``paper_configs.md``), into
``OUT/<algo>/<env>/seed_<s>``. Every ``--every`` iterations (and after the last) it re-samples
the inner-step chain ``--rounds`` times on that iteration's tasks and appends
``Meta-GradientRStd`` (:mod:`meta_policy_search.gradient_variance`) to the run's
``gradient_variance.csv``; ``progress.csv`` holds the usual learning curves. Arguments after
``--`` go to the run script. The paper measured every iteration with 10 rounds; measuring every
few iterations gives the same curve at a fraction of the sampling.

``plot`` reads every ``gradient_variance.csv`` below the given directories and writes
``gradient_variance.png`` (RStd against timesteps as the paper counts them, per algorithm,
mean over seeds, with the paper's values from ``paper_reference.csv`` as points) and
``gradient_variance.md`` (ours against the paper at its timesteps) into the first directory,
or ``--output``.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import sys
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from meta_policy_search.experiment.config_parsing import env_dir_name
from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.experiment.exit_codes import EPILOG, run_script
from meta_policy_search.experiment.launch import split_passthrough_args
from meta_policy_search.experiment.paper import ReferencePoint, load_paper_reference
from meta_policy_search.experiment.planning import has_checkpoint, plan_run
from meta_policy_search.experiment.registry import algorithm_for_params, get_algorithm
from meta_policy_search.experiment.script_help import env_names_text
from meta_policy_search.gradient_variance import CSV_NAME

RETURN_KEY = "Step_1-AverageReturn"
"""The post-update return, which figure 3 also shows for the study's runs."""

TABLE_HEADER = ("| algorithm | env | timesteps | ours (mean over seeds) | seeds | paper |",
                "|---|---|---:|---:|---:|---:|")
"""Header of the return table in ``gradient_variance.md``."""

STUDY_FLAGS = ("--meta_batch_size", "20", "--rollouts_per_meta_task", "40")
"""The study's batch (paper section 7.2), before the user's arguments (which win)."""


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> str:
    """Train one run with measurements; return its directory."""
    from meta_policy_search.experiment.runner import run_experiment
    from meta_policy_search.gradient_variance import GradientVarianceCallback

    algo = get_algorithm(args.algo)
    run_dir = os.path.abspath(os.path.join(args.out, algo.name, env_dir_name(args.env),
                                           f"seed_{args.seed}"))
    planned = plan_run(algo, args.env, args.seed, run_dir, args.timesteps,
                       [*STUDY_FLAGS, *passthrough])
    config_cls, make_algo, make_processor = algo.load()
    argv = [*planned.args, "--dump_path", run_dir,
            *(["--resume"] if has_checkpoint(run_dir) else [])]
    return run_experiment(
        config_cls, algo.run_name, make_algo, make_processor, argv=argv,
        script_path=algo.script_path, make_callbacks=lambda config: [GradientVarianceCallback(
            config.dump_path, args.every, args.rounds, config.n_itr)],
    )


def collect(directories: Sequence[str]) -> dict[tuple[str, str], list[dict[str, np.ndarray]]]:
    """``(legend, env)`` -> one ``{'n_timesteps', 'rstd'}`` array pair per run below ``directories``."""
    curves: dict[tuple[str, str], list[dict[str, np.ndarray]]] = defaultdict(list)
    for directory in directories:
        pattern = os.path.join(directory, "**", CSV_NAME)
        for path in sorted(glob.glob(pattern, recursive=True)):
            with open(os.path.join(os.path.dirname(path), "params.json"), encoding="utf-8") as f:
                params = json.load(f)
            algorithm = algorithm_for_params(params)
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            if algorithm is None or not rows:
                continue
            curve = {
                "n_timesteps": np.array([float(r["n_timesteps"]) for r in rows]),
                "rstd": np.array([float(r["Meta-GradientRStd"]) for r in rows]),
            }
            curve.update(return_curve(os.path.dirname(path)))
            curves[algorithm.legend, params["env"]].append(curve)
    return curves


def return_curve(run_dir: str) -> dict[str, np.ndarray]:
    """``{'return_timesteps', 'return'}``: the run's post-update return from its ``progress.csv``.

    Empty if the run has no ``progress.csv`` or no ``Step_1-AverageReturn`` column.
    """
    path = os.path.join(run_dir, "progress.csv")
    if not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get(RETURN_KEY)]
    if not rows:
        return {}
    return {"return_timesteps": np.array([float(r["n_timesteps"]) for r in rows]),
            "return": np.array([float(r[RETURN_KEY]) for r in rows])}


def return_rows(legend: str, env: str, runs: Sequence[dict[str, np.ndarray]],
                points: Sequence[ReferencePoint]) -> list[str]:
    """Table rows: our post-update return (interpolated, mean over seeds) at the paper's points."""
    lines = []
    for point in points:
        values = [float(np.interp(point.timesteps, c["return_timesteps"], c["return"]))
                  for c in runs if "return" in c and c["return_timesteps"].max() >= point.timesteps]
        if values:
            lines.append(f"| {legend} | {env} | {point.timesteps:.0e} | {np.mean(values):.1f} | "
                         f"{len(values)} | {point.value:g} +- {point.precision:g} |")
    return lines


RSTD_HEADER = ("| algorithm | env | timesteps | ours, interpolated (mean over seeds) "
               "| nearest measurement: timesteps, value | seeds | paper |",
               "|---|---|---:|---:|---:|---:|---:|")
"""Header of the RStd table: the paper reads its figure at exact timesteps, our measurements
are every few iterations, so both the value between measurements and the nearest one are given."""


def nearest(curve: dict[str, np.ndarray], timesteps: float) -> tuple[float, float]:
    """``(timesteps, value)`` of the curve's measurement nearest to ``timesteps``."""
    index = int(np.argmin(np.abs(curve["n_timesteps"] - timesteps)))
    return float(curve["n_timesteps"][index]), float(curve["rstd"][index])


def rstd_row(legend: str, env: str, runs: Sequence[dict[str, np.ndarray]],
             point: ReferencePoint) -> str:
    """One row of the RStd table at a paper point (see :data:`RSTD_HEADER`).

    ``ours, interpolated``: each seed's RStd linear between its two measurements around the
    point (as the learning curves are read at the paper's timesteps), averaged over the seeds
    whose measurements reach the point; ``-`` if none does.
    """
    reached = [c for c in runs if c["n_timesteps"].max() >= point.timesteps]
    between = (f"{np.mean([np.interp(point.timesteps, c['n_timesteps'], c['rstd']) for c in reached]):.1f}"
               if reached else "-")
    near = [nearest(c, point.timesteps) for c in runs]
    steps = sorted({f"{t:.4g}" for t, _ in near})
    return (f"| {legend} | {env} | {point.timesteps:.0e} | {between} | {', '.join(steps)}: "
            f"{np.mean([v for _, v in near]):.1f} | {len(runs)} | "
            f"{point.value:g} +- {point.precision:g} |")


def plot(directories: Sequence[str], output: str | None) -> tuple[str, str]:
    """Write the figure and the comparison table; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = collect(directories)
    if not curves:
        raise ConfigError(f"no {CSV_NAME} with a known algorithm below {', '.join(directories)}")
    # fig3 holds the study's RStd values and the returns of the same runs: two tables
    reference = [p for p in load_paper_reference() if p.figure == "fig3"]
    returns = [p for p in reference if p.metric == RETURN_KEY]
    reference = [p for p in reference if p.metric == "Meta-GradientRStd"]
    return_lines = list(TABLE_HEADER)
    out_dir = output or directories[0]
    fig, ax = plt.subplots(figsize=(6, 4))
    lines = list(RSTD_HEADER)
    for index, ((legend, env), runs) in enumerate(sorted(curves.items())):
        color = f"C{index}"
        for k, curve in enumerate(runs):
            ax.plot(curve["n_timesteps"], curve["rstd"], color=color, alpha=0.8,
                    label=f"{legend} (ours)" if k == 0 else None)
        points = [p for p in reference if p.algorithm == legend and p.env == env]
        if points:
            ax.errorbar([p.timesteps for p in points], [p.value for p in points],
                        yerr=[p.precision for p in points], fmt="o", color=color,
                        label=f"{legend} (paper)")
        rows = [rstd_row(legend, env, runs, point) for point in points
                if any(c["n_timesteps"].max() >= 0.9 * point.timesteps for c in runs)]
        if not rows:  # no paper value to compare with: the last measurements
            last = [(float(c["n_timesteps"][-1]), float(c["rstd"][-1])) for c in runs]
            rows = [f"| {legend} | {env} | last | - | "
                    f"{', '.join(sorted({f'{t:.4g}' for t, _ in last}))}: "
                    f"{np.mean([v for _, v in last]):.1f} | {len(runs)} | |"]
        lines += rows
        return_lines += return_rows(legend, env, runs,
                                    [p for p in returns if p.algorithm == legend and p.env == env])
    ax.set_xlabel("timesteps")
    ax.set_ylabel("Meta-GradientRStd")
    ax.set_yscale("log")  # a mean of ratios: single spikes span an order of magnitude
    ax.set_title("Meta-gradient relative std over sampling rounds")
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    png = os.path.join(out_dir, "gradient_variance.png")
    fig.savefig(png, dpi=120)
    table = os.path.join(out_dir, "gradient_variance.md")
    with open(table, "w", encoding="utf-8") as f:
        f.write("# Meta-gradient relative std: ours vs the paper (fig. 3)\n\n"
                "Ours: `Meta-GradientRStd` of the runs' measurements (`gradient_variance.csv`), "
                "interpolated linearly between the two measurements around the paper's "
                "timesteps (as the paper's figures are read), and the measurement nearest to "
                "them.\n\n" + "\n".join(lines)
                + f"\n\n## Post-update return ({RETURN_KEY}) of the same runs\n\n"
                + "\n".join(return_lines) + "\n")
    return png, table


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and run or plot."""
    own, passthrough = split_passthrough_args(list(sys.argv[1:] if argv is None else argv))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=EPILOG)
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="train one run with measurements")
    run_parser.add_argument("--algo", required=True, help="registry name, e.g. lvc_vpg, dice_maml")
    run_parser.add_argument("--env", default="HalfCheetahRandDirecEnv",
                            help=f"environment: {env_names_text()}")
    run_parser.add_argument("--seed", type=int, default=22)
    run_parser.add_argument("--timesteps", type=float, default=1e7,
                            help="train to this many env steps, counted as in the paper")
    run_parser.add_argument("--every", type=int, default=12, help="iterations between measurements")
    run_parser.add_argument("--rounds", type=int, default=10, help="sampling rounds per measurement")
    run_parser.add_argument("--out", required=True, help="grid directory")
    plot_parser = commands.add_parser("plot", help="figure and table from finished runs")
    plot_parser.add_argument("directories", nargs="+")
    plot_parser.add_argument("--output", help="directory for the figure and table")
    args = parser.parse_args(own)
    if args.command == "run":
        if args.every < 1 or args.rounds < 2:
            parser.error(f"--every must be >= 1 and --rounds >= 2, got {args.every}, {args.rounds}")
        print(run(args, passthrough))
    else:
        for path in plot(args.directories, args.output):
            print(f"wrote {path}")


if __name__ == "__main__":
    run_script(main)
