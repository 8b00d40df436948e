"""Faults a user meets, tried as a user would (issue 37's campaign): a damaged ``latest``
pointer, a damaged checkpoint or ``progress.csv`` on ``--resume``, a full disk, and the exit
status and single error line of every script.

The scripts run in this process through their ``__main__`` block (:func:`run_cli`, as the
interpreter would run them), so TensorFlow is loaded once; what must happen before TensorFlow
loads runs in a subprocess with TensorFlow blocked.
"""

from __future__ import annotations

import builtins
import csv
import errno
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import traceback

import pytest

from meta_policy_search.utils import logger

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS_DIR = os.path.join(REPO, "experiments")
NO_TENSORFLOW = os.path.join(REPO, "tests", "data", "no_tensorflow")
POINT = "promp_run_point_mass.py"
TINY = ["--env", "PointEnvRandGoal", "--paper_config", "false", "--meta_batch_size", "2",
        "--rollouts_per_meta_task", "2", "--max_path_length", "5", "--hidden_sizes", "8",
        "--executor", "iterative", "--log_formats", "csv,log,tensorboard", "--seed", "3"]


# ---------------------------------------------------------------------------- helpers
def run_cli(monkeypatch, capsys, script: str, args: list[str]) -> tuple[int, str]:
    """Run ``experiments/<script> ARGS`` in this process as the interpreter runs a script.

    Returns:
        ``(exit status, stderr)``: an uncaught exception is status 1 with its traceback on
        stderr, a ``SystemExit`` with a message is status 1 with the message, as ``python``
        does.
    """
    path = os.path.join(EXPERIMENTS_DIR, script)
    monkeypatch.setattr(sys, "argv", [path, *args])
    code: object = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exit_:
        code = 0 if exit_.code is None else exit_.code
        if not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
    except Exception:
        traceback.print_exc()
        code = 1
    finally:
        logger.reset()
    return int(code), capsys.readouterr().err  # type: ignore[call-overload]


def error_lines(stderr: str) -> list[str]:
    """The lines of ``stderr`` that report an error (argparse's usage lines do not)."""
    return [line for line in stderr.splitlines() if "error:" in line]


def assert_one_error_line(stderr: str) -> str:
    """The single error line of ``stderr``, which holds no traceback."""
    assert "Traceback" not in stderr, stderr
    lines = error_lines(stderr)
    assert len(lines) == 1, stderr
    return lines[0]


def snapshot(directory) -> dict[str, tuple[bytes, int] | None]:
    """Every file under ``directory``: its bytes and modification time (``None``: a folder)."""
    found: dict[str, tuple[bytes, int] | None] = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            found[os.path.relpath(os.path.join(root, name), directory)] = None
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, directory)] = (f.read(), os.stat(path).st_mtime_ns)
    return found


def progress_itrs(run_dir) -> list[str]:
    with open(os.path.join(run_dir, "progress.csv"), newline="", encoding="utf-8") as f:
        return [row["Itr"] for row in csv.DictReader(f)]


def checkpoint_path(run_dir) -> str:
    checkpoints = os.path.join(run_dir, "checkpoints")
    (name,) = [n for n in os.listdir(checkpoints) if n.startswith("itr_")]
    return os.path.join(checkpoints, name)


def data_file(run_dir) -> str:
    path = checkpoint_path(run_dir)
    (name,) = [n for n in os.listdir(path) if n.startswith("tf_state.data-")]
    return os.path.join(path, name)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished run of 2 iterations (checkpoint of iteration 1), copied by :func:`run_copy`."""
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        from promp_run_point_mass import main
    finally:
        sys.path.remove(EXPERIMENTS_DIR)
    run_dir = str(tmp_path_factory.mktemp("trained") / "run")
    try:
        main([*TINY, "--n_itr", "2", "--dump_path", run_dir])
    finally:
        logger.reset()
    return run_dir


@pytest.fixture
def run_copy(trained, tmp_path):
    """A fresh copy of the trained run."""
    destination = str(tmp_path / "run")
    shutil.copytree(trained, destination)
    return destination


# ---------------------------------------------------------------------------- 1. the pointer
DAMAGED_POINTERS = {
    "garbage": lambda checkpoints: open(os.path.join(checkpoints, "latest"), "wb").write(
        b"\x00\xffnot a name"),
    "missing folder": lambda checkpoints: open(os.path.join(checkpoints, "latest"), "w").write(
        "itr_000099"),
    "no pointer": lambda checkpoints: os.remove(os.path.join(checkpoints, "latest")),
}


@pytest.mark.parametrize("damage", sorted(DAMAGED_POINTERS))
def test_1_a_resume_past_a_damaged_pointer_continues_from_the_scanned_checkpoint(
    run_copy, monkeypatch, capsys, damage
):
    checkpoints = os.path.join(run_copy, "checkpoints")
    DAMAGED_POINTERS[damage](checkpoints)
    code, stderr = run_cli(monkeypatch, capsys, POINT,
                           ["--resume", "--dump_path", run_copy, "--n_itr", "3"])
    assert code == 0, stderr
    (note,) = [line for line in stderr.splitlines() if line.startswith("note:")]
    assert f"{os.path.join(checkpoints, 'latest')} " in note
    assert note.endswith("found itr_000001 by scanning instead"), note
    assert progress_itrs(run_copy) == ["0", "1", "2"]
    with open(os.path.join(checkpoints, "latest")) as f:
        assert f.read() == "itr_000002"


@pytest.mark.parametrize("damage", sorted(DAMAGED_POINTERS))
def test_1_a_fresh_start_on_a_run_with_a_damaged_pointer_refuses_and_changes_nothing(
    run_copy, monkeypatch, capsys, damage
):
    DAMAGED_POINTERS[damage](os.path.join(run_copy, "checkpoints"))
    before = snapshot(run_copy)
    # What the old message advised: start again without --resume (here even with other flags).
    code, stderr = run_cli(monkeypatch, capsys, POINT,
                           [*TINY, "--n_itr", "3", "--seed", "7", "--dump_path", run_copy])
    assert code == 2
    line = assert_one_error_line(stderr)
    assert line == (f"error: --dump_path {run_copy} already holds a run (a checkpoint of "
                    "iteration 1 and 2 iteration(s) in progress.csv): pass --resume to continue "
                    "it, choose another --dump_path, or add --overwrite to delete that run and "
                    "start afresh")
    assert snapshot(run_copy) == before


def test_1_progress_rows_without_a_checkpoint_are_kept_until_overwrite_is_given(
    run_copy, monkeypatch, capsys
):
    shutil.rmtree(os.path.join(run_copy, "checkpoints"))  # stopped before its first checkpoint
    before = snapshot(run_copy)
    code, stderr = run_cli(monkeypatch, capsys, POINT, ["--resume", "--dump_path", run_copy])
    assert code == 2 and "add --overwrite (without --resume)" in assert_one_error_line(stderr)
    code, stderr = run_cli(monkeypatch, capsys, POINT, [*TINY, "--dump_path", run_copy])
    assert code == 2 and "already holds a run (2 iteration(s) in progress.csv)" in stderr
    assert "--resume" not in assert_one_error_line(stderr)  # nothing to resume: not advised
    assert snapshot(run_copy) == before
    # Replacing it takes the explicit flag, and then nothing of the old run is left.
    code, stderr = run_cli(monkeypatch, capsys, POINT,
                           [*TINY, "--n_itr", "1", "--seed", "7", "--overwrite",
                            "--dump_path", run_copy])
    assert code == 0, stderr
    assert progress_itrs(run_copy) == ["0"]
    with open(os.path.join(run_copy, "params.json")) as f:
        assert json.load(f)["seed"] == 7
    events = [n for n in os.listdir(run_copy) if n.startswith("events.out")]
    assert len(events) == 1  # the old run's event file was deleted, not mixed in


def test_1_overwrite_and_resume_exclude_each_other(run_copy, monkeypatch, capsys):
    before = snapshot(run_copy)
    code, stderr = run_cli(monkeypatch, capsys, POINT,
                           ["--resume", "--overwrite", "--dump_path", run_copy])
    assert code == 2 and "--overwrite and --resume exclude each other" in stderr
    assert snapshot(run_copy) == before


def test_1_meta_testing_finds_the_checkpoint_past_a_damaged_pointer(
    run_copy, monkeypatch, capsys, tmp_path
):
    with open(os.path.join(run_copy, "checkpoints", "latest"), "w") as f:
        f.write("garbage")
    code, stderr = run_cli(monkeypatch, capsys, "meta_testing.py",
                           [run_copy, "--n_tasks", "2", "--num_adapt_steps", "1",
                            "--no_random_init", "--output_dir", str(tmp_path / "meta_test")])
    assert code == 0, stderr
    assert "found itr_000001 by scanning instead" in stderr
    with open(tmp_path / "meta_test" / "meta_test.json") as f:
        assert json.load(f)["checkpoint_itr"] == 1


def test_1_the_grid_resumes_past_a_damaged_pointer_and_deletes_no_run(
    run_copy, monkeypatch, capsys, tmp_path
):
    from meta_policy_search.experiment.planning import has_checkpoint

    with open(os.path.join(run_copy, "checkpoints", "latest"), "w") as f:
        f.write("garbage")
    assert has_checkpoint(run_copy)  # so reproduce.py resumes it

    # A grid run that logged iterations but has no checkpoint: neither resumed nor cleared.
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        import reproduce
    finally:
        sys.path.remove(EXPERIMENTS_DIR)
    grid = ["--meta_batch_size", "2", "--rollouts_per_meta_task", "2", "--max_path_length", "5",
            "--executor", "iterative", "--hidden_sizes", "8", "--log_formats", "csv"]
    out = str(tmp_path / "grid")
    (run,) = reproduce.plan_runs([("promp", "PointEnvRandGoal", (1,))], 80, out, grid)
    os.makedirs(run.run_dir)
    with open(os.path.join(run.run_dir, "params.json"), "w") as f:
        json.dump(run.params, f)
    with open(os.path.join(run.run_dir, "progress.csv"), "w") as f:
        f.write("Itr,n_timesteps\n0,40\n")
    before = snapshot(out)
    code, stderr = run_cli(monkeypatch, capsys, "reproduce.py",
                           ["--algos", "promp", "--envs", "PointEnvRandGoal", "--seeds", "1",
                            "--timesteps", "80", "--out", out, "--", *grid])
    assert code == 2
    line = assert_one_error_line(stderr)
    assert line.startswith(f"error: {run.run_dir} holds 1 iteration(s) in progress.csv but no "
                           "checkpoint to resume from; the grid deletes no run"), line
    assert snapshot(out) == before


# ---------------------------------------------------------------------------- 2. resume checks
def _truncate(path: str) -> None:
    with open(path, "r+b") as f:
        f.truncate(max(os.path.getsize(path) // 2, 1))


def _drop_checksums(run_dir: str) -> None:
    """Make the checkpoint look as one written before ``state.json`` recorded its files."""
    info_path = os.path.join(checkpoint_path(run_dir), "state.json")
    with open(info_path) as f:
        info = json.load(f)
    info.pop("files", None)
    with open(info_path, "w") as f:
        json.dump(info, f)


DAMAGED_FILES = {
    "truncated data": (lambda run: _truncate(data_file(run)), data_file),
    "missing index": (lambda run: os.remove(os.path.join(checkpoint_path(run), "tf_state.index")),
                      lambda run: os.path.join(checkpoint_path(run), "tf_state.index")),
    "garbage progress.csv": (
        lambda run: open(os.path.join(run, "progress.csv"), "ab").write(b"\xff\xfe\x00\x81garbage"),
        lambda run: os.path.join(run, "progress.csv")),
    "garbage state.pkl": (
        lambda run: open(os.path.join(checkpoint_path(run), "state.pkl"), "wb").write(b"\x80\x05x"),
        lambda run: os.path.join(checkpoint_path(run), "state.pkl")),
    # Without the recorded sizes and checksums only TensorFlow can tell: read before writing.
    "truncated data, old checkpoint": (
        lambda run: (_drop_checksums(run), _truncate(data_file(run))), data_file),
    "missing index, old checkpoint": (
        lambda run: (_drop_checksums(run),
                     os.remove(os.path.join(checkpoint_path(run), "tf_state.index"))),
        lambda run: os.path.join(checkpoint_path(run), "tf_state.index")),
}


@pytest.mark.parametrize("damage", sorted(DAMAGED_FILES))
def test_2_a_resume_names_a_damaged_file_and_changes_nothing(
    run_copy, monkeypatch, capsys, damage
):
    make_damage, damaged_path = DAMAGED_FILES[damage]
    named = damaged_path(run_copy)
    make_damage(run_copy)
    before = snapshot(run_copy)
    assert {"params.json", "log.txt", "run.lock", "progress.csv"} <= set(before)
    assert any(name.startswith("events.out") for name in before)
    code, stderr = run_cli(monkeypatch, capsys, POINT,
                           ["--resume", "--dump_path", run_copy, "--n_itr", "4"])
    assert code == 2
    line = assert_one_error_line(stderr)
    assert line.startswith(f"error: --resume: {named}: "), line
    assert line.endswith("nothing in the run was changed; restore the run directory from a "
                         "backup, or start a new run with another --dump_path"), line
    assert snapshot(run_copy) == before  # bytes and modification times, run.lock included


# ---------------------------------------------------------------------------- 3. a full disk
def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


class _FullFile:
    """A file object whose writes fail as on a full disk once ``full_disk`` is armed."""

    def __init__(self, file, full_disk):
        self._file, self._full_disk = file, full_disk

    def write(self, data):
        if self._full_disk.armed:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self._file.write(data)

    def __getattr__(self, name):
        return getattr(self._file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._file.close()

    def __iter__(self):
        return iter(self._file)


class FullDisk:
    """Writes to the file ``name`` (or under the folder ``name``) fail with ``ENOSPC`` once
    :attr:`armed`: through ``os.write``, ``open`` and TensorFlow's checkpoint writer."""

    def __init__(self, monkeypatch, name: str, armed: bool) -> None:
        import tensorflow as tf

        self.name, self.armed = name, armed
        real_write, real_open = os.write, builtins.open

        def write(fd, data):
            if self._hits(_fd_path(fd)):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_write(fd, data)

        def open_(file, mode="r", *args, **kwargs):
            handle = real_open(file, mode, *args, **kwargs)
            if isinstance(file, (str, os.PathLike)) and any(m in mode for m in "wax+") \
                    and self._matches(os.fspath(file)):
                return _FullFile(handle, self)  # a file opened before the disk fills up
            return handle

        real_checkpoint_write = tf.train.Checkpoint.write

        def checkpoint_write(checkpoint, file_prefix, *args, **kwargs):
            if self._hits(str(file_prefix)):
                raise tf.errors.ResourceExhaustedError(
                    None, None, f"{file_prefix}_temp/part-00000-of-00001.data-00000-of-00001; "
                    "No space left on device")
            return real_checkpoint_write(checkpoint, file_prefix, *args, **kwargs)

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(builtins, "open", open_)
        monkeypatch.setattr(tf.train.Checkpoint, "write", checkpoint_write)

    def _matches(self, path: str) -> bool:
        return self.name in os.path.abspath(path).split(os.sep)

    def _hits(self, path: str) -> bool:
        return self.armed and self._matches(path)


def arm_after_first_checkpoint(monkeypatch, full_disk: FullDisk) -> None:
    from meta_policy_search.meta_trainer import Trainer

    original = Trainer.save

    def save(self, *args, **kwargs):
        path = original(self, *args, **kwargs)
        full_disk.armed = True
        return path

    monkeypatch.setattr(Trainer, "save", save)


FULL_LINE = re.compile(r"^promp_run_point_mass\.py: error: no space left on device: writing (\S+) "
                       r"needs about [0-9.]+ (B|KiB|MiB) \([0-9.]+ (B|KiB|MiB|GiB) free there\); "
                       r"the run stays resumable: free some space, then continue it with "
                       r"--resume$")


@pytest.mark.parametrize("where", ["log.txt", "progress.csv", "checkpoints"])
def test_3_a_full_disk_during_training_is_one_line_and_the_run_resumes(
    tmp_path, monkeypatch, capsys, where
):
    run_dir = str(tmp_path / "run")
    with monkeypatch.context() as patch:
        full = FullDisk(patch, where, armed=False)
        arm_after_first_checkpoint(patch, full)
        code, stderr = run_cli(patch, capsys, POINT, [*TINY, "--n_itr", "3", "--dump_path", run_dir])
    assert code == 1
    match = FULL_LINE.match(assert_one_error_line(stderr))
    assert match, stderr
    assert match.group(1) == os.path.join(run_dir, where)
    with open(os.path.join(run_dir, "progress.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert all(len(row) == len(rows[0]) for row in rows)  # no half row
    code, stderr = run_cli(monkeypatch, capsys, POINT, ["--resume", "--dump_path", run_dir])
    assert code == 0, stderr
    assert progress_itrs(run_dir) == ["0", "1", "2"]


def test_3_a_full_disk_before_the_first_checkpoint_advises_a_command_that_works(
    tmp_path, monkeypatch, capsys
):
    run_dir = str(tmp_path / "run")
    args = [*TINY, "--n_itr", "2", "--dump_path", run_dir]
    with monkeypatch.context() as patch:
        FullDisk(patch, "checkpoints", armed=True)
        code, stderr = run_cli(patch, capsys, POINT, args)
    assert code == 1
    line = assert_one_error_line(stderr)
    assert line.endswith("; it has no checkpoint yet: free some space, then start it again "
                         "with --overwrite"), line
    assert progress_itrs(run_dir) == ["0"]  # logged before its checkpoint failed
    code, stderr = run_cli(monkeypatch, capsys, POINT, [*args, "--overwrite"])
    assert code == 0, stderr
    assert progress_itrs(run_dir) == ["0", "1"]


def test_3_a_full_disk_when_taking_the_run_lock_is_one_line_and_changes_no_data(
    run_copy, monkeypatch, capsys
):
    data = {name: value for name, value in snapshot(run_copy).items() if name != "run.lock"}
    with monkeypatch.context() as patch:
        FullDisk(patch, "run.lock", armed=True)
        code, stderr = run_cli(patch, capsys, POINT,
                               ["--resume", "--dump_path", run_copy, "--n_itr", "3"])
    assert code == 1
    match = FULL_LINE.match(assert_one_error_line(stderr))
    assert match and match.group(1) == os.path.join(run_copy, "run.lock"), stderr
    assert {name: value for name, value in snapshot(run_copy).items()
            if name != "run.lock"} == data
    code, stderr = run_cli(monkeypatch, capsys, POINT,
                           ["--resume", "--dump_path", run_copy, "--n_itr", "3"])
    assert code == 0, stderr
    assert progress_itrs(run_copy) == ["0", "1", "2"]


# ---------------------------------------------------------------------------- 4. exit statuses
def test_4_a_non_finite_reward_in_raise_mode_is_one_line_exit_1_traceback_in_log_txt(
    tmp_path, monkeypatch, capsys
):
    from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal

    original = PointEnvRandGoal.step

    def step(self, action):
        obs, reward, terminated, truncated, info = original(self, action)
        return obs, float("nan"), terminated, truncated, info

    monkeypatch.setattr(PointEnvRandGoal, "step", step)
    monkeypatch.setattr(PointEnvRandGoal, "make_batched", lambda self, num_envs: None)
    run_dir = str(tmp_path / "run")
    code, stderr = run_cli(monkeypatch, capsys, POINT, [*TINY, "--n_itr", "2", "--dump_path",
                                                        run_dir, "--log_formats", "csv"])
    assert code == 1
    line = assert_one_error_line(stderr)
    log_txt = os.path.join(run_dir, "log.txt")
    assert line.startswith("promp_run_point_mass.py: error: NonFiniteSampleError: non-finite "
                           "reward nan in sampling phase 0, task 0"), line
    assert line.endswith(f"(traceback in {log_txt})"), line
    with open(log_txt) as f:
        assert "Traceback (most recent call last)" in f.read()


DYING_ENVS = """
import multiprocessing
import os
import signal
import time

from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal


class _InWorker(PointEnvRandGoal):
    steps = 0

    def make_batched(self, num_envs):
        return None  # stepped one at a time, through step() below

    def step(self, action):
        if multiprocessing.current_process().name.endswith("worker-1"):
            type(self).steps += 1
            if type(self).steps == 25:  # in the second iteration
                self.fail()
        return super().step(action)


class DyingEnv(_InWorker):
    def fail(self):
        os.kill(os.getpid(), signal.SIGKILL)


class HangingEnv(_InWorker):
    def fail(self):
        time.sleep(600)
"""


@pytest.mark.parametrize(("env", "expected"), [
    ("DyingEnv", r"worker 1 .*(died|exit code -9)"),
    ("HangingEnv", r"worker 1 \(pid \d+, tasks 1\.\.1\) sent no reply after waiting 3 s"),
])
def test_4_a_dead_or_hung_worker_is_one_line_exit_1_traceback_in_log_txt(tmp_path, env, expected):
    (tmp_path / "dying_envs.py").write_text(DYING_ENVS)
    run_dir = str(tmp_path / "run")
    args = [*TINY, "--env", f"dying_envs:{env}", "--executor", "parallel", "--n_parallel", "2",
            "--sampler_timeout", "3", "--n_itr", "3", "--dump_path", run_dir]
    result = subprocess.run([sys.executable, os.path.join(EXPERIMENTS_DIR, POINT), *args],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": REPO})
    assert result.returncode == 1, result.stderr
    line = assert_one_error_line(result.stderr)
    assert re.search(expected, line), line
    assert line.endswith(f"(traceback in {os.path.join(run_dir, 'log.txt')})"), line
    with open(os.path.join(run_dir, "log.txt")) as f:
        assert "Traceback (most recent call last)" in f.read()
    assert progress_itrs(run_dir) == ["0"]


def run_blocked(script: str, args: list[str], cwd) -> subprocess.CompletedProcess:
    """``python experiments/<script> ARGS`` with TensorFlow unimportable."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([NO_TENSORFLOW, REPO]),
           "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, os.path.join(EXPERIMENTS_DIR, script), *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_4_meta_testing_checks_the_checkpoint_before_tensorflow_loads(run_copy, tmp_path):
    with open(os.path.join(checkpoint_path(run_copy), "state.pkl"), "wb") as f:
        f.write(b"\x80\x05garbage")
    before = snapshot(run_copy)
    result = run_blocked("meta_testing.py", [run_copy], tmp_path)
    assert result.returncode == 2, result.stderr
    line = assert_one_error_line(result.stderr)
    assert f"no checkpoint reads back ({checkpoint_path(run_copy)}/state.pkl: damaged" in line
    assert snapshot(run_copy) == before


@pytest.mark.parametrize(("script", "args", "expected"), [
    ("plot.py", ["empty"], "plot.py: error: no non-empty progress.csv found below ['empty']"),
    ("plot.py", ["missing"], "plot.py: error: run directory 'missing' does not exist"),
    ("reproduce.py", ["--algos", "nope", "--envs", "PointEnvRandGoal", "--timesteps", "10",
                      "--out", "grid"], "reproduce.py: error: unknown algorithm 'nope'"),
    ("gradient_variance.py", ["plot", "empty"], "error: no gradient_variance.csv with a known "
                                                "algorithm below empty"),
])
def test_4_bad_input_of_the_tools_exits_2_with_one_line(tmp_path, script, args, expected):
    (tmp_path / "empty").mkdir()
    result = run_blocked(script, args, tmp_path)
    assert result.returncode == 2, result.stderr
    assert expected in assert_one_error_line(result.stderr)
    assert sorted(os.listdir(tmp_path)) == ["empty"]


@pytest.mark.parametrize("script", sorted(
    name for name in os.listdir(EXPERIMENTS_DIR)
    if name.endswith(".py") and name != "plot.py"))  # plot.py's --help: another change's
def test_4_every_script_states_the_exit_status_contract_in_its_help(tmp_path, script):
    result = run_blocked(script, ["--help"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "exit status: 0 done; 1 the run failed after it started" in " ".join(
        result.stdout.split()), script


# ---------------------------------------------------------------------------- 5. compare_only
@pytest.mark.parametrize("out", ["missing", "empty"])
def test_5_compare_only_without_runs_refuses_and_writes_nothing(tmp_path, monkeypatch, capsys, out):
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    code, stderr = run_cli(monkeypatch, capsys, "reproduce.py", ["--compare_only", "--out", out,
                                                                 "--timesteps", "10"])
    assert code == 2
    assert f"--compare_only --out {out}: " in assert_one_error_line(stderr)
    assert sorted(os.listdir(tmp_path)) == ["empty"] and not os.listdir(tmp_path / "empty")


# ---------------------------------------------------------------------------- 6. absurd values
def test_6_a_reward_scale_of_1e30_is_accepted_and_changes_no_step(tmp_path, monkeypatch, capsys):
    """Why huge finite rewards are not refused: standardized advantages make the steps
    independent of a constant reward scale, so the run is the unscaled one, scaled."""
    from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal

    def returns(run_dir):
        with open(os.path.join(run_dir, "progress.csv"), newline="") as f:
            return [float(row[f"Step_{k}-AverageReturn"]) for row in csv.DictReader(f)
                    for k in (0, 1)]

    # One env at a time in both runs (the scaled env has no batched form): the same samples.
    monkeypatch.setattr(PointEnvRandGoal, "make_batched", lambda self, num_envs: None)
    plain = str(tmp_path / "plain")
    assert run_cli(monkeypatch, capsys, POINT, [*TINY, "--n_itr", "3", "--dump_path", plain])[0] == 0
    original = PointEnvRandGoal.step

    def step(self, action):
        obs, reward, terminated, truncated, info = original(self, action)
        return obs, reward * 1e30, terminated, truncated, info

    monkeypatch.setattr(PointEnvRandGoal, "step", step)
    scaled = str(tmp_path / "scaled")
    assert run_cli(monkeypatch, capsys, POINT, [*TINY, "--n_itr", "3", "--dump_path", scaled])[0] == 0
    assert returns(scaled) == pytest.approx([1e30 * r for r in returns(plain)], rel=1e-6)


def test_6_a_trust_region_above_one_nat_is_refused(tmp_path):
    from meta_policy_search.experiment.config_values import ConfigError
    from meta_policy_search.experiment.configs import TRPOMAMLConfig
    from meta_policy_search.experiment.runner import prepare_run

    for value in ("1e30", "1.5"):
        with pytest.raises(ConfigError, match=r"--step_size .*: must be a finite number in "
                                              r"\(0, 1\], the mean KL bound of one TRPO step"):
            prepare_run(TRPOMAMLConfig, "trpo_maml",
                        ["--dump_path", str(tmp_path / "run"), "--step_size", value])
    prepare_run(TRPOMAMLConfig, "trpo_maml", ["--dump_path", str(tmp_path / "run"),
                                              "--step_size", "1"])
    assert not os.path.exists(tmp_path / "run")
