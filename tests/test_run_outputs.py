"""What a user sees of a finished run from outside it: the run directory and its follow-up
commands on the console, and its TensorBoard event files read by TensorBoard itself.

One tiny run of ``experiments/promp_run_point_mass.py`` as a subprocess, with the default
timestamped ``--dump_path`` (the case where the console is the only place that names it).
"""

from __future__ import annotations

import csv
import glob
import os
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest
from tiny_runs import TINY_RUN

EXPERIMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "experiments")
ANNOUNCEMENT = re.compile(r"^Run directory \((?P<state>[^)]*)\): (?P<dir>.+)$")
COMMAND = re.compile(r"^  (?P<name>resume|plot|meta-test): +(?P<command>.+)$")


def run(command: list[str], cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """``(working directory, stdout)`` of a tiny run without ``--dump_path``."""
    cwd = tmp_path_factory.mktemp("run_outputs")
    flags = list(TINY_RUN)
    flags[flags.index("--log_formats") + 1] = "csv,tensorboard"
    result = run([sys.executable, os.path.join(EXPERIMENTS, "promp_run_point_mass.py"), *flags],
                 cwd)
    assert result.returncode == 0, result.stderr[-3000:]
    return cwd, result.stdout


def announcements(stdout: str) -> list[tuple[str, str, dict[str, str]]]:
    """``[(state, run directory, {command name: command}), ...]`` in the order printed."""
    found: list[tuple[str, str, dict[str, str]]] = []
    for line in stdout.splitlines():
        head, command = ANNOUNCEMENT.match(line), COMMAND.match(line)
        if head:
            found.append((head["state"], head["dir"], {}))
        elif command and found:
            found[-1][2][command["name"]] = command["command"]
    return found


def test_the_console_names_the_run_directory_at_start_and_end(tiny_run):
    cwd, stdout = tiny_run
    (start, start_dir, start_commands), (end, end_dir, end_commands) = announcements(stdout)
    assert (start, end) == ("started", "finished")
    assert start_dir == end_dir and start_commands == end_commands
    assert re.fullmatch(r"data/promp/PointEnvRandGoal/run_[0-9_]+", start_dir)  # the default
    assert os.path.isfile(os.path.join(cwd, start_dir, "progress.csv"))
    assert set(start_commands) == {"resume", "plot", "meta-test"}
    assert stdout.index("Run directory (started)") < stdout.index("itr 0/1")
    assert stdout.index("itr 1/1") < stdout.index("Run directory (finished)")


def test_the_printed_commands_resume_plot_and_meta_test_the_run(tiny_run):
    cwd, stdout = tiny_run
    _, run_dir, commands = announcements(stdout)[-1]
    assert "promp_run_point_mass.py" in commands["resume"]  # the script that made the run
    resumed = run(shlex.split(commands["resume"]), cwd)
    assert resumed.returncode == 0 and "already completed all n_itr=2" in resumed.stderr
    plotted = run(shlex.split(commands["plot"]), cwd)
    assert plotted.returncode == 0, plotted.stderr[-2000:]
    assert os.path.isfile(os.path.join(cwd, run_dir, "learning_curves.png"))
    tested = run(shlex.split(commands["meta-test"]) + [
        "--n_tasks", "2", "--num_adapt_steps", "1", "--no_random_init"], cwd)
    assert tested.returncode == 0, tested.stderr[-2000:]
    assert os.path.isfile(os.path.join(cwd, run_dir, "meta_test", "meta_test.json"))


def test_tensorboard_reads_the_returns_the_run_logged(tiny_run):
    """TensorBoard's own reader (the plugin event accumulator behind ``tensorboard --logdir``)
    finds the return tags in the scalars dashboard, with progress.csv's values per iteration."""
    from tensorboard.backend.event_processing.plugin_event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    cwd, _ = tiny_run
    (run_dir,) = glob.glob(os.path.join(cwd, "data", "promp", "PointEnvRandGoal", "run_*"))
    accumulator = EventAccumulator(run_dir, size_guidance={"tensors": 0})
    accumulator.Reload()
    scalar_tags = set(accumulator.PluginTagToContent("scalars"))
    with open(os.path.join(run_dir, "progress.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for tag in ("Step_0-AverageReturn", "Step_1-AverageReturn"):
        assert tag in scalar_tags
        events = accumulator.Tensors(tag)
        assert [event.step for event in events] == [int(row["Itr"]) for row in rows]
        logged = [tensor_util.make_ndarray(event.tensor_proto).item() for event in events]
        np.testing.assert_allclose(logged, [float(row[tag]) for row in rows], rtol=1e-6)
