"""One owner per run directory: a second process on a running run's directory exits 2 at once.

Each test launches tiny point-mass runs as subprocesses (the lock is per process) and stops the
long ones itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.experiment.run_lock import LOCK_FILE, acquire_run_lock, check_run_owner
from meta_policy_search.utils.checkpoint_lookup import checkpoint_iteration

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
SCRIPT = os.path.join(REPO, "experiments", "promp_run_point_mass.py")
TINY = [
    "--env", "PointEnvRandGoal", "--paper_config", "false", "--meta_batch_size", "2",
    "--rollouts_per_meta_task", "2", "--max_path_length", "5", "--hidden_sizes", "8",
    "--executor", "iterative", "--log_formats", "csv", "--seed", "3",
]
LONG = ["--n_itr", "100000"]
"""Iterations enough to outlast every test: the tests stop such runs themselves."""


def launch(args: list[str], cwd) -> subprocess.Popen:
    """Start the point-mass script in its own session (so that it can be killed as a group)."""
    return subprocess.Popen([sys.executable, SCRIPT, *args], cwd=cwd,
                            env={**os.environ, "PYTHONPATH": REPO}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def run(args: list[str], cwd, script: str = SCRIPT) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    result = subprocess.run([sys.executable, script, *args], cwd=cwd, capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": REPO})
    return result, time.monotonic() - start


def wait_until(condition, process: subprocess.Popen | None = None, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the run exited early ({process.returncode}): "
                                 f"{process.stderr.read() if process.stderr else ''}")
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.1)


def lock_owner(run_dir) -> str | None:
    try:
        with open(os.path.join(run_dir, LOCK_FILE), encoding="utf-8") as f:
            words = f.read().split()
    except OSError:
        return None
    return words[0] if words else None


def has_checkpoint(run_dir) -> bool:
    return checkpoint_iteration(os.path.join(run_dir, "checkpoints")) is not None


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    if process.stderr:
        process.stderr.close()


def assert_refused(result: subprocess.CompletedProcess, seconds: float, run_dir, pid: int) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: --dump_path {run_dir}: in use by another run (pid {pid} on host "), result.stderr
    assert result.stdout == ""
    assert seconds < 10.0  # at once: no TensorFlow (generous for a loaded machine)


@pytest.fixture
def owner_processes():
    processes: list[subprocess.Popen] = []
    yield processes
    for process in processes:
        stop(process)


def test_a_second_fresh_start_on_a_running_directory_exits_2(tmp_path, owner_processes):
    run_dir = str(tmp_path / "run")
    first = launch(TINY + LONG + ["--dump_path", run_dir], tmp_path)
    owner_processes.append(first)
    wait_until(lambda: lock_owner(run_dir) == str(first.pid), first)
    result, seconds = run(TINY + ["--n_itr", "2", "--dump_path", run_dir], tmp_path)
    assert_refused(result, seconds, run_dir, first.pid)
    wait_until(lambda: has_checkpoint(run_dir), first)  # the owner carries on unharmed
    assert first.poll() is None


def test_a_resume_while_the_run_is_going_exits_2_and_leaves_params_alone(
    tmp_path, owner_processes
):
    run_dir = str(tmp_path / "run")
    first = launch(TINY + LONG + ["--dump_path", run_dir], tmp_path)
    owner_processes.append(first)
    wait_until(lambda: has_checkpoint(run_dir), first)
    params = (tmp_path / "run" / "params.json").read_bytes()
    result, seconds = run(["--resume", "--dump_path", run_dir, "--n_itr", "200000"], tmp_path)
    assert_refused(result, seconds, run_dir, first.pid)
    assert (tmp_path / "run" / "params.json").read_bytes() == params
    assert first.poll() is None


def test_two_resumes_after_a_kill_the_second_exits_2(tmp_path, owner_processes):
    run_dir = str(tmp_path / "run")
    killed = launch(TINY + LONG + ["--dump_path", run_dir], tmp_path)
    owner_processes.append(killed)
    wait_until(lambda: has_checkpoint(run_dir), killed)
    stop(killed)  # SIGKILL: its lock goes with it, the file stays
    assert lock_owner(run_dir) == str(killed.pid)
    resumed = launch(["--resume", "--dump_path", run_dir], tmp_path)
    owner_processes.append(resumed)
    wait_until(lambda: lock_owner(run_dir) == str(resumed.pid), resumed)
    result, seconds = run(["--resume", "--dump_path", run_dir], tmp_path)
    assert_refused(result, seconds, run_dir, resumed.pid)
    assert resumed.poll() is None


def test_reproduce_does_not_clear_or_relaunch_a_run_that_is_going(tmp_path, owner_processes):
    out = str(tmp_path / "grid")
    grid = ["--algos", "promp", "--envs", "PointEnvRandGoal", "--seeds", "1", "--timesteps",
            "1e9", "--out", out, "--status_every", "600", "--", "--meta_batch_size", "2",
            "--rollouts_per_meta_task", "2", "--max_path_length", "5", "--executor",
            "iterative", "--hidden_sizes", "8", "--log_formats", "csv"]
    reproduce = os.path.join(REPO, "experiments", "reproduce.py")
    first = subprocess.Popen([sys.executable, reproduce, *grid], cwd=tmp_path,
                             env={**os.environ, "PYTHONPATH": REPO}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    owner_processes.append(first)  # killed as a group: the grid and its run
    run_dir = os.path.join(out, "promp", "PointEnvRandGoal", "seed_1")
    wait_until(lambda: has_checkpoint(run_dir), first)
    owner = lock_owner(run_dir)
    output = os.path.join(run_dir, "output.txt")
    size = os.path.getsize(output)
    result, seconds = run(grid, tmp_path, script=reproduce)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: --dump_path {run_dir}: in use by another run (pid {owner} on host "), lines
    assert has_checkpoint(run_dir) and os.path.getsize(output) >= size  # neither cleared
    assert first.poll() is None


def test_the_lock_is_free_again_once_released(tmp_path):
    run_dir = str(tmp_path / "run")
    lock = acquire_run_lock(run_dir)
    with pytest.raises(ConfigError, match=f"in use by another run \\(pid {os.getpid()} on host"):
        check_run_owner(run_dir)  # flock: a second open file conflicts even in one process
    lock.release()
    check_run_owner(run_dir)
    with acquire_run_lock(run_dir) as again:
        assert again.held
    assert not again.held


def test_a_checkpoint_written_between_the_checks_and_the_lock_is_refused(tmp_path):
    from meta_policy_search.experiment.algorithms import ProMPPointMassConfig
    from meta_policy_search.experiment.run_checks import check_unchanged
    from meta_policy_search.experiment.runner import prepare_run

    run_dir = tmp_path / "run"
    prepared = prepare_run(ProMPPointMassConfig, "promp", ["--dump_path", str(run_dir)])
    checkpoint = run_dir / "checkpoints" / "itr_000000"  # another run's, finished meanwhile
    checkpoint.mkdir(parents=True)
    (checkpoint / "state.json").write_text('{"itr": 0, "time": 0}')
    (run_dir / "checkpoints" / "latest").write_text("itr_000000")
    with pytest.raises(ConfigError, match=r"another run wrote a checkpoint there \(iteration 0\) "
                       "while this one was starting"):
        check_unchanged(prepared.run_dir)
