"""Runs that cannot be bricked, poisoned or hung (issue 9): faults injected into tiny runs."""

from __future__ import annotations

import csv
import importlib
import importlib.util
import os
import pickle
import sys

import numpy as np
import pytest

from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal
from meta_policy_search.experiment.algorithms import ProMPPointMassConfig

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
EXPERIMENTS_DIR = os.path.join(REPO, "experiments")
TINY = [
    "--env", "PointEnvRandGoal", "--paper_config", "false", "--meta_batch_size", "2",
    "--rollouts_per_meta_task", "2", "--max_path_length", "5", "--hidden_sizes", "8",
    "--executor", "iterative", "--log_formats", "csv", "--seed", "3",
]
STEPS_PER_ITR = 2 * 2 * 2 * 5  # phases x tasks x rollouts x H (the point env never ends early)


@pytest.fixture(scope="module")
def point_mass():
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        yield importlib.import_module("promp_run_point_mass")
    finally:
        sys.path.remove(EXPERIMENTS_DIR)


@pytest.fixture
def reset_logger():
    from meta_policy_search.utils import logger

    yield
    logger.reset()


def read_rows(run_dir) -> list[dict]:
    with open(os.path.join(run_dir, "progress.csv"), newline="") as f:
        return list(csv.DictReader(f))


def nan_reward_at(monkeypatch, step_numbers: set[int], what: str = "reward") -> None:
    """Make the point env return a NaN reward (or, with ``what='observation'``, an observation
    whose first coordinate is NaN) at the given (1-based) env steps of the process.

    The samplers then step the env copies one at a time (no batched implementation), so the
    patched ``step`` is what they call.
    """
    original = PointEnvRandGoal.step
    counter = {"n": 0}

    def step(self, action):
        obs, reward, terminated, truncated, info = original(self, action)
        counter["n"] += 1
        if counter["n"] in step_numbers and what == "reward":
            reward = float("nan")
        elif counter["n"] in step_numbers:
            obs = np.array(obs, copy=True)
            obs[0] = np.nan
        return obs, reward, terminated, truncated, info

    monkeypatch.setattr(PointEnvRandGoal, "step", step)
    monkeypatch.setattr(PointEnvRandGoal, "make_batched", lambda self, num_envs: None)


# ---------------------------------------------------------------------------- 9.2 NaN / inf
def test_nan_reward_with_zero_baseline_stops_the_run_naming_the_episode(
    point_mass, tmp_path, monkeypatch, reset_logger
):
    from meta_policy_search.samplers.meta_sampler import NonFiniteSampleError
    from meta_policy_search.utils.checkpoint_lookup import checkpoint_iteration

    # Iteration 1's first phase; the envs of a task step together: task 1, rollout 1, step 1.
    nan_reward_at(monkeypatch, {STEPS_PER_ITR + 8})
    run_dir = str(tmp_path / "run")
    with pytest.raises(NonFiniteSampleError, match=r"non-finite reward nan in sampling phase 2, "
                       r"task 1 \(.*\), rollout 1, step 1 .*--nonfinite_samples drop"):
        point_mass.main(TINY + ["--baseline", "ZeroBaseline", "--n_itr", "3",
                                "--dump_path", run_dir])
    assert checkpoint_iteration(os.path.join(run_dir, "checkpoints")) == 0  # finite, kept


def test_dropped_non_finite_episodes_are_counted(point_mass, tmp_path, monkeypatch, reset_logger):
    nan_reward_at(monkeypatch, {3, STEPS_PER_ITR + 8})
    run_dir = point_mass.main(TINY + ["--baseline", "ZeroBaseline", "--n_itr", "2",
                                      "--nonfinite_samples", "drop",
                                      "--dump_path", str(tmp_path / "run")])
    rows = read_rows(run_dir)
    assert [row["NonFiniteEpisodesDropped"] for row in rows] == ["1", "2"]
    for row in rows:
        assert all(np.isfinite(float(v)) for k, v in row.items() if v and "Time" not in k)


def test_a_non_finite_observation_is_named_with_its_value(
    point_mass, tmp_path, monkeypatch, reset_logger
):
    from meta_policy_search.samplers.meta_sampler import NonFiniteSampleError

    # Returned by task 1's step 1 of rollout 1 in iteration 1's first phase: the observation
    # of step 2; the action and reward of step 2 follow from it and are not what is named.
    nan_reward_at(monkeypatch, {STEPS_PER_ITR + 8}, what="observation")
    with pytest.raises(NonFiniteSampleError, match=r"non-finite observation \[ *nan +-?[0-9.e+-]+\] "
                       r"in sampling phase 2, task 1 \(.*\), rollout 1, step 2 "):
        point_mass.main(TINY + ["--baseline", "ZeroBaseline", "--n_itr", "3",
                                "--dump_path", str(tmp_path / "run")])


def test_the_first_non_finite_value_of_a_step_is_named_cause_first():
    from meta_policy_search.samplers.meta_sampler import _first_nonfinite
    from meta_policy_search.types import PathBatch

    observations = np.zeros((1, 1, 4, 2), np.float32)
    actions = np.zeros((1, 1, 4, 2), np.float32)
    rewards = np.zeros((1, 1, 4), np.float32)
    actions[0, 0, 2:] = np.nan  # a NaN action at step 2, and the reward it earns
    rewards[0, 0, 2:] = np.nan
    paths = PathBatch(observations, actions, rewards, np.ones((1, 1, 4), np.float32))
    what, step, value = _first_nonfinite(paths, 0, 0)
    assert (what, step) == ("action", 2) and np.isnan(value).all()
    observations[0, 0, 3] = -np.inf  # later than the action: still the action
    assert _first_nonfinite(paths, 0, 0)[:2] == ("action", 2)
    rewards[0, 0, 1] = np.inf  # earlier: the reward
    assert _first_nonfinite(paths, 0, 0)[:2] == ("reward", 1)


def test_dropped_episodes_leave_no_nan_in_the_env_diagnostics(
    point_mass, tmp_path, monkeypatch, reset_logger
):
    # A NaN observation makes the policy's action and the point's position (its distance to
    # the goal, an env diagnostic) NaN for the rest of the episode.
    nan_reward_at(monkeypatch, {3, STEPS_PER_ITR + 8}, what="observation")
    run_dir = point_mass.main(TINY + ["--n_itr", "2", "--nonfinite_samples", "drop",
                                      "--dump_path", str(tmp_path / "run")])
    rows = read_rows(run_dir)
    assert [row["NonFiniteEpisodesDropped"] for row in rows] == ["1", "2"]
    assert "Step_0-AverageDistance" in rows[0]
    for row in rows:
        assert all(np.isfinite(float(v)) for k, v in row.items() if v), row
    assert [row["RejectedOuterSteps"] for row in rows] == ["0", "0"]


def test_rejected_outer_steps_in_a_row_are_counted_across_a_resume(
    point_mass, tmp_path, reset_logger
):
    from meta_policy_search.meta_trainer import NonFiniteError

    run_dir = str(tmp_path / "run")
    with pytest.raises(NonFiniteError, match=r"iteration 1: .*\(2 in a row\); stopping"):
        point_mass.main(TINY + ["--n_itr", "5", "--learning_rate", "1e30",
                                "--max_nonfinite_outer_steps", "2", "--dump_path", run_dir])
    assert [row["RejectedOuterSteps"] for row in read_rows(run_dir)] == ["1"]
    # The checkpoint of iteration 0 holds one rejection in a row: the resumed iteration 1 is the
    # second, and the run stops again instead of diverging for two more iterations.
    with pytest.raises(NonFiniteError, match=r"iteration 1: .*\(2 in a row\); stopping"):
        point_mass.main(["--resume", "--dump_path", run_dir])
    assert [row["RejectedOuterSteps"] for row in read_rows(run_dir)] == ["1"]


@pytest.mark.parametrize("value", ["Infinity", "-inf", "NaN"])
def test_every_float_setting_must_be_finite(point_mass, tmp_path, value):
    import dataclasses
    import typing

    from meta_policy_search.experiment.config_values import ConfigError
    from meta_policy_search.experiment.runner import prepare_run

    hints = typing.get_type_hints(ProMPPointMassConfig)
    float_fields = [f.name for f in dataclasses.fields(ProMPPointMassConfig)
                    if hints[f.name] in (float, float | None)]
    assert "learning_rate" in float_fields and "discount" in float_fields
    for name in float_fields:
        with pytest.raises(ConfigError, match=f"--{name} .*: must be a finite number"):
            prepare_run(ProMPPointMassConfig, "promp",
                        ["--dump_path", str(tmp_path / "run"), f"--{name}={value}"])
    assert not os.path.exists(tmp_path / "run")


# ---------------------------------------------------------------------------- 9.3 hung worker
class PointPolicy:
    """The part of the meta-policy interface the sampler uses, for the 2-D point env."""

    def __init__(self, meta_batch_size: int) -> None:
        from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP

        self.meta_batch_size = meta_batch_size

        rng = np.random.default_rng(0)
        self.sampling_policy = NumpyGaussianMLP({
            "W0": rng.normal(size=(meta_batch_size, 2, 2)).astype(np.float32),
            "b0": np.zeros((meta_batch_size, 2), np.float32),
            "log_std": np.zeros((meta_batch_size, 2), np.float32),
        })

    def get_sampling_policy(self):
        return self.sampling_policy


def test_stopped_worker_fails_after_the_automatic_timeout(monkeypatch):
    import signal
    import time

    from meta_policy_search.envs import make_env
    from meta_policy_search.samplers import worker_pool
    from meta_policy_search.samplers.meta_sampler import AUTO_TIMEOUT, MetaSampler

    monkeypatch.setattr(worker_pool, "AUTO_TIMEOUT_FLOOR", 2.0)
    sampler = MetaSampler(make_env("PointEnvRandGoal"), PointPolicy(2), rollouts_per_meta_task=2,
                          max_path_length=5, executor="parallel",
                          n_parallel=2, timeout=AUTO_TIMEOUT)
    try:
        sampler.update_tasks()
        sampler.obtain_samples()  # measured: sets the next phase's timeout
        pid = sampler.executor._processes[1].pid
        os.kill(pid, signal.SIGSTOP)
        timeout = max(2.0, 20.0 * sampler.slowest_phase_seconds)
        start = time.monotonic()
        with pytest.raises(RuntimeError, match=rf"worker 1 \(pid {pid}, tasks 1\.\.1\) sent no "
                           rf"reply after waiting {timeout:g} s .*--sampler_timeout"):
            sampler.obtain_samples()
        assert sampler.executor is not None and timeout <= time.monotonic() - start < timeout + 5
    finally:
        sampler.close()  # kills the stopped worker


@pytest.mark.parametrize(("flag", "expected"), [(None, "auto"), (0.0, None), (30.0, 30.0)])
def test_sampler_timeout_flag(flag, expected):
    from meta_policy_search.experiment.components import _sampler_timeout

    assert _sampler_timeout(flag) == expected


# ---------------------------------------------------------------------------- 9.4 duplicates
def tensorboard_steps(run_dir) -> list[int]:
    import tensorflow as tf
    from tensorflow.core.util import event_pb2

    steps = []
    for name in sorted(os.listdir(run_dir)):
        if name.startswith("events.out.tfevents"):
            for record in tf.data.TFRecordDataset(os.path.join(run_dir, name)):
                event = event_pb2.Event.FromString(record.numpy())
                steps += [event.step for value in event.summary.value if value.tag == "Itr"]
    return sorted(steps)


def test_kill_between_log_and_checkpoint_leaves_one_row_per_iteration(
    point_mass, tmp_path, monkeypatch, reset_logger
):
    from meta_policy_search.meta_trainer import Trainer

    original_save = Trainer.save

    def save_then_die_at_itr_1(self, itr):
        if itr == 1:  # the row of iteration 1 is written, its checkpoint is not: "SIGKILL"
            raise KeyboardInterrupt
        return original_save(self, itr)

    run_dir = str(tmp_path / "run")
    flags = TINY + ["--n_itr", "2", "--dump_path", run_dir, "--log_formats", "csv,tensorboard"]
    monkeypatch.setattr(Trainer, "save", save_then_die_at_itr_1)
    with pytest.raises(KeyboardInterrupt):
        point_mass.main(flags)
    assert [row["Itr"] for row in read_rows(run_dir)] == ["0", "1"]
    monkeypatch.setattr(Trainer, "save", original_save)
    point_mass.main(["--resume", "--dump_path", run_dir])
    assert [row["Itr"] for row in read_rows(run_dir)] == ["0", "1"]
    assert tensorboard_steps(run_dir) == [0, 1]


# ---------------------------------------------------------------------------- 9.5 early errors
NO_TENSORFLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "no_tensorflow")
"""A ``tensorflow`` package that raises on import: put first on ``PYTHONPATH``, it turns a
script that loads TensorFlow before refusing its input into a traceback."""


def run_script(args: list[str], cwd, script: str = "promp_run_mujoco.py",
               block_tensorflow: bool = False):
    import subprocess
    import time

    # No __pycache__ from a user env module imported from the working directory: the tests
    # check that a refused command leaves the directory exactly as it was.
    path = [NO_TENSORFLOW] if block_tensorflow else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, os.path.abspath(REPO)]),
           "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.monotonic()
    result = subprocess.run([sys.executable, os.path.join(EXPERIMENTS_DIR, script), *args],
                            cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return result, time.monotonic() - start


BAD_ENVS = """
from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal


class RaisesRuntime(PointEnvRandGoal):
    def __init__(self):
        raise RuntimeError("no licence\\nfor this simulator")


class RaisesKey(PointEnvRandGoal):
    def __init__(self):
        raise KeyError("asset_path")
"""

UNWRITABLE = "/sys/meta_policy_search_test_out"
"""A path nobody, root included, can create (the tests may run as root, which ignores modes)."""

NO_METAWORLD = pytest.mark.skipif(importlib.util.find_spec("metaworld") is not None,
                                  reason="metaworld is installed")


def make_bad_inputs(tmp_path) -> None:
    """The files the bad-input cases refer to, in the working directory ``tmp_path``."""
    (tmp_path / "afile").write_text("x")
    (tmp_path / "bad.json").write_text("{'n_itr': 3}")
    (tmp_path / "empty_run").mkdir()
    (tmp_path / "empty_run" / "params.json").write_text('{"algo": "promp"}')
    (tmp_path / "bad_envs.py").write_text(BAD_ENVS)
    for name, info, state in (("corrupt_json", b"{not json", b"x"),
                              ("corrupt_pkl", b'{"itr": 0, "time": 0}', b"\x80\x05garbage")):
        checkpoint = tmp_path / name / "checkpoints" / "itr_000000"
        checkpoint.mkdir(parents=True)
        (tmp_path / name / "params.json").write_text('{"algo": "promp", "n_itr": 2}')
        (tmp_path / name / "checkpoints" / "latest").write_text("itr_000000")
        (checkpoint / "state.json").write_bytes(info)
        (checkpoint / "state.pkl").write_bytes(state)
    for name, params in (("point_run", '{"algo": "promp", "env": "PointEnvRandGoal"}'),
                         ("bad_params_run", '{"algo": "promp", "env": '),
                         ("gone_env_run", '{"algo": "promp", "env": "gone_module:GoneEnv"}')):
        # A checkpoint that passes the checks made without TensorFlow (these runs are refused
        # for their params.json before its tensors would be read).
        checkpoint = tmp_path / name / "checkpoints" / "itr_000000"
        checkpoint.mkdir(parents=True)
        (checkpoint / "state.json").write_text('{"itr": 0, "time": 0}')
        (checkpoint / "state.pkl").write_bytes(pickle.dumps({"itr": 0}))
        (checkpoint / "tf_state.index").write_bytes(b"")
        (checkpoint / "tf_state.data-00000-of-00001").write_bytes(b"")
        (tmp_path / name / "checkpoints" / "latest").write_text("itr_000000")
        (tmp_path / name / "params.json").write_text(params)


def snapshot(directory) -> dict[str, bytes | None]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None
            for p in sorted(directory.rglob("*"))}


@pytest.mark.parametrize(("args", "expected"), [
    (["--meta_batch_size", "0"], ["--meta_batch_size 0: must be an integer >= 1"]),
    (["--learning_rate", "Infinity"], ["--learning_rate inf: must be a finite number"]),
    (["--inner_lr", "0", "--num_inner_grad_steps", "-1"],
     ["--inner_lr 0.0: must be a finite number > 0", "--num_inner_grad_steps -1: must be an integer >= 0"]),
    (["--num_ppo_steps", "0", "--discount", "2"],
     ["--discount 2.0: must be a number in [0, 1]", "--num_ppo_steps 0: must be an integer >= 1"]),
    (["--dump_path", "afile"], ["--dump_path afile: is a file, not a directory"]),
    (["--dump_path", UNWRITABLE], [f"--dump_path {UNWRITABLE}: cannot write in /sys"]),
    (["--config_file", "bad.json"], ["bad.json: not valid JSON"]),
    (["--resume", "--dump_path", "empty_run"], ["--resume: empty_run has no checkpoint yet"]),
    (["--env", "bad_envs:RaisesRuntime"],
     ["--env bad_envs:RaisesRuntime: building it with env_kwargs {} raised RuntimeError: no "
      "licence for this simulator"]),
    (["--env", "bad_envs:RaisesKey"],
     ["--env bad_envs:RaisesKey: building it with env_kwargs {} raised KeyError: 'asset_path'"]),
    pytest.param(["--env", "ML1-reach-v3"], ["--env ML1-reach-v3: the Meta-World envs need the "
                                             "optional package metaworld"], marks=NO_METAWORLD),
    (["--num_minibatches", "7", "--meta_batch_size", "2"],
     ["--num_minibatches 7: must be at most --meta_batch_size (2)"]),
    (["--resume", "--dump_path", "corrupt_json", "--n_itr", "5"],
     ["--resume: corrupt_json/checkpoints/itr_000000/state.json: corrupt, not valid JSON"]),
    (["--resume", "--dump_path", "corrupt_pkl", "--n_itr", "5"],
     ["--resume: corrupt_pkl/checkpoints/itr_000000/state.pkl: corrupt, cannot unpickle it"]),
    (["--dump_path", "corrupt_json"],
     ["--dump_path corrupt_json already holds a run (a checkpoint that does not read back "
      "(corrupt_json/checkpoints/itr_000000/state.json: corrupt, not valid JSON"]),
])
def test_invalid_settings_exit_2_at_once_writing_nothing(tmp_path, args, expected):
    make_bad_inputs(tmp_path)
    before = snapshot(tmp_path)
    result, seconds = run_script(args, tmp_path, block_tensorflow=True)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == len(expected), result.stderr
    for line, message in zip(lines, expected):
        assert line.startswith("error: " + message), line
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert snapshot(tmp_path) == before  # nothing written: params.json of a resume included
    assert seconds < 10.0  # refused before TensorFlow (blocked above); generous for a busy machine


GRID = ["--algos", "promp", "--envs", "PointEnvRandGoal", "--timesteps", "100"]


@pytest.mark.parametrize(("script", "args", "expected"), [
    ("meta_testing.py", ["point_run", "--oracle_run", "point_run"],
     "--oracle_run point_run: the run has oracle=False, expected oracle=True"),
    ("meta_testing.py", ["bad_params_run"], "bad_params_run/params.json: not valid JSON"),
    ("meta_testing.py", ["gone_env_run"], "gone_env_run: its env gone_module:GoneEnv: "),
    ("meta_testing.py", ["point_run", "--output_dir", UNWRITABLE],
     f"--output_dir {UNWRITABLE}: cannot write in /sys"),
    ("meta_testing.py", ["point_run", "--output_dir", "afile/out"],
     "--output_dir afile/out: "),
    ("plot.py", ["empty_run", "--output", f"{UNWRITABLE}/curves.png"],
     f"--output {UNWRITABLE}: cannot write in /sys"),
    ("plot.py", ["empty_run", "--output", "afile/curves.png"], "--output "),
    ("plot.py", ["point_run", "--output", "empty_run"],
     "--output empty_run: is a directory; give a file name"),
    ("reproduce.py", [*GRID, "--out", UNWRITABLE], f"--out {UNWRITABLE}: cannot write in /sys"),
    ("reproduce.py", [*GRID, "--out", "afile/grid"], "--out afile/grid: "),
])
def test_bad_inputs_of_the_other_scripts_exit_2_at_once_writing_nothing(
    tmp_path, script, args, expected
):
    make_bad_inputs(tmp_path)
    before = snapshot(tmp_path)
    result, seconds = run_script(args, tmp_path, script, block_tensorflow=True)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"error: {expected}" in errors[0], result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert snapshot(tmp_path) == before
    assert seconds < 10.0  # refused before TensorFlow (blocked above); generous for a busy machine


def test_help_does_not_load_tensorflow(tmp_path):
    import subprocess

    code = ("import runpy, sys\n"
            f"sys.argv = ['promp_run_mujoco.py', '--help']\n"
            f"sys.path.insert(0, {EXPERIMENTS_DIR!r})\n"
            "try:\n"
            f"    runpy.run_path({os.path.join(EXPERIMENTS_DIR, 'promp_run_mujoco.py')!r},"
            " run_name='__main__')\n"
            "except SystemExit as e:\n"
            "    assert e.code == 0, e.code\n"
            "print('tensorflow loaded:', 'tensorflow' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": os.path.abspath(REPO)})
    assert "--sampler_timeout" in result.stdout
    assert "tensorflow loaded: False" in result.stdout, result.stderr
    assert result.stderr == ""


# ---------------------------------------------------------------------------- 9.7 noise
def test_tensorflow_start_up_is_quiet_on_cpu(tmp_path):
    import subprocess

    code = ("import sys\n"
            "from meta_policy_search.utils.quiet_tf import import_tensorflow\n"
            "tf = import_tensorflow()\n"
            "print(float(tf.reduce_sum(tf.ones(3))))\n"
            "print('still here', file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": os.path.abspath(REPO), "TF_CPP_MIN_LOG_LEVEL": "2"}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env=env)
    assert result.stdout == "3.0\n"
    assert result.stderr == "still here\n"  # no cuda / absl / cpu_feature lines


def test_validation_choices_match_the_library():
    """The validator's copies of the choice lists (kept TensorFlow-free) are the library's."""
    from meta_policy_search import baselines
    from meta_policy_search.envs.registry import ENV_CLASS_NAMES
    from meta_policy_search.experiment import configs
    from meta_policy_search.policies.networks import TF_NONLINEARITIES
    from meta_policy_search.samplers.meta_sampler import EXECUTORS, NONFINITE_MODES
    from meta_policy_search.samplers.quota import SAMPLING_MODES
    from meta_policy_search.utils.logger import FORMAT_STRS

    assert set(configs.ENV_SETTINGS) == set(ENV_CLASS_NAMES)
    assert set(configs.BASELINES) == set(baselines.__all__) - {"Baseline"}
    assert set(configs.NONLINEARITIES) == set(TF_NONLINEARITIES)
    assert configs.EXECUTORS == EXECUTORS
    assert configs.NONFINITE_MODES == NONFINITE_MODES
    assert configs.SAMPLING_MODES == SAMPLING_MODES
    assert configs.LOG_FORMATS == FORMAT_STRS


def test_bad_env_kwargs_fail_before_anything_is_written(point_mass, tmp_path):
    from meta_policy_search.experiment.config_values import ConfigError
    from meta_policy_search.experiment.runner import prepare_run

    with pytest.raises(ConfigError, match=r"--env_kwargs \{\"reward_type\": \"foo\"\}: "
                       r"MetaPointEnvCorner rejects them \(reward_type must be one of"):
        prepare_run(ProMPPointMassConfig, "promp", [
            "--env", "MetaPointEnvCorner", "--env_kwargs", '{"reward_type": "foo"}',
            "--dump_path", str(tmp_path / "run")])
    assert not os.path.exists(tmp_path / "run")
