"""Run one experiment script once per seed, each seed an independent Ray task.

Usage (arguments after ``--`` go to every run)::

    python experiments/sweep.py experiments/promp_run_mujoco.py --seeds 1 2 3 \\
        --dump_path data/sweep_promp -- --env AntRandGoalEnv --n_itr 500
    python experiments/plot.py data/sweep_promp     # mean +- std over the seeds

Each task asks Ray for ``--cpus_per_run`` CPUs and runs the script in a fresh Python process
(``python SCRIPT --seed S --dump_path BASE/seed_S ...``), so runs share nothing; its stdout and
stderr go to ``BASE/seed_S/sweep_output.txt``. Without ``--ray_address`` a local Ray instance
runs as many seeds at once as the machine has cores (divided by ``--cpus_per_run``). On a
cluster (``--ray_address auto``) the script and ``--dump_path`` must be on a file system that
every node sees, at the same path.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from collections.abc import Sequence

from meta_policy_search.experiment.exit_codes import EPILOG, run_script
from meta_policy_search.experiment.launch import RayLauncher, split_passthrough_args

RESERVED_FLAGS = ("--seed", "--dump_path", "--resume", "--overwrite")
"""Flags the sweep sets per run (or that make no sense in a sweep)."""

OUTPUT_NAME = "sweep_output.txt"
"""File (in each seed's directory) of the run's stdout and stderr."""


def make_commands(script: str, seeds: Sequence[int], base: str,
                  extra_args: Sequence[str]) -> dict[int, tuple[list[str], str]]:
    """The command line and run directory of every seed.

    Args:
        script: path of the experiment script.
        seeds: root seeds, one run each.
        base: the sweep's directory; seed ``s`` writes to ``base/seed_s``.
        extra_args: flags passed to every run.

    Returns:
        ``{seed: (command, run_dir)}`` with absolute paths.

    Raises:
        ValueError: on repeated seeds or an extra flag the sweep sets itself.
    """
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds must be distinct, got {list(seeds)}")
    for arg in extra_args:
        if arg.split("=")[0] in RESERVED_FLAGS:
            raise ValueError(f"{arg!r} is set by the sweep per seed; remove it after '--'")
    script, base = os.path.abspath(script), os.path.abspath(base)
    commands = {}
    for seed in seeds:
        run_dir = os.path.join(base, f"seed_{seed}")
        command = ["python", script, *extra_args, "--seed", str(seed), "--dump_path", run_dir]
        commands[seed] = (command, run_dir)
    return commands


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run the seeds as Ray tasks, print where the results are.

    Args:
        argv: arguments without the program name (default ``sys.argv[1:]``).

    Returns:
        0 if every run exited with 0, else 1.
    """
    argv, extra_args = split_passthrough_args(None if argv is None else list(argv))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=EPILOG)
    parser.add_argument("script", help="experiment script, e.g. experiments/promp_run_mujoco.py")
    parser.add_argument("--seeds", type=int, nargs="+", required=True, help="one run per seed")
    parser.add_argument("--dump_path", help="sweep directory (default data/sweep/<script>_<time>)")
    parser.add_argument("--ray_address", help="Ray cluster address (default: a local Ray)")
    parser.add_argument("--cpus_per_run", type=float, default=1.0, help="CPUs Ray reserves per run")
    args = parser.parse_args(argv)
    if not os.path.isfile(args.script):
        parser.error(f"script {args.script!r} does not exist")
    base = args.dump_path
    if base is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
        name = os.path.splitext(os.path.basename(args.script))[0]
        base = os.path.join("data", "sweep", f"{name}_{stamp}")
    try:
        commands = make_commands(args.script, args.seeds, base, extra_args)
    except ValueError as error:
        parser.error(str(error))

    launcher = RayLauncher(args.ray_address, args.cpus_per_run, OUTPUT_NAME)
    for seed in args.seeds:
        launcher.submit(seed, *commands[seed])
    print(f"sweep: {len(commands)} runs of {args.script} into {os.path.abspath(base)}", flush=True)
    failed, finished = [], 0
    while finished < len(commands):
        for seed, result in launcher.wait(timeout=None):
            finished += 1
            status = "ok" if result["returncode"] == 0 else f"FAILED ({result['returncode']})"
            if status != "ok":
                failed.append(seed)
            print(f"  seed {seed}: {status} in {result['seconds']:.0f} s on {result['host']} -> "
                  f"{commands[seed][1]} (log: {result['output']})", flush=True)
    print(f"results: {os.path.abspath(base)}; plot: python experiments/plot.py "
          f"{os.path.abspath(base)}")
    if failed:
        print(f"failed seeds: {failed}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    run_script(main)
