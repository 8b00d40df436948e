"""User envs by import path (``--env package.module:ClassName``): resolution, protocol check,
error messages, and a run script training, resuming and meta-testing one from its params.json.

The envs live in ``tests/user_envs.py`` (on ``sys.path`` under pytest).
"""

from __future__ import annotations

import importlib
import json
import os
import sys

import numpy as np
import pytest

from meta_policy_search.envs import MetaEnv, make_env, normalize
from meta_policy_search.envs.env_spec import (
    EnvSpecError,
    load_env_class,
    parse_env_spec,
    search_working_directory,
)
from meta_policy_search.experiment.config_parsing import resolve_config
from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.experiment.configs import ProMPConfig
from meta_policy_search.experiment.runner import prepare_run

EXPERIMENTS_DIR = os.path.join(os.path.dirname(__file__), os.pardir, "experiments")
SPEC = "user_envs:PointLineGoalEnv"


# ---------------------------------------------------------------------------- resolution
def test_spec_builds_the_user_class_with_its_kwargs():
    import user_envs

    env = make_env(SPEC, max_step=0.3)
    assert type(env) is user_envs.PointLineGoalEnv and env.max_step == 0.3
    assert load_env_class(SPEC) is user_envs.PointLineGoalEnv
    assert parse_env_spec("mypkg.tasks:MyEnv") == ("mypkg.tasks", "MyEnv")


def test_built_in_names_are_unchanged():
    from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal

    assert type(make_env("PointEnvRandGoal")) is PointEnvRandGoal
    with pytest.raises(ValueError, match="unknown env name 'PointEnvRandGol'"):
        make_env("PointEnvRandGol")


def test_duck_typed_env_need_not_subclass_meta_env():
    env = make_env("user_envs:DuckTypedLineEnv")
    assert not isinstance(env, MetaEnv)
    env.seed_tasks(3)
    tasks = normalize(env).sample_tasks(4)  # the library's wrapper forwards the protocol
    env.seed_tasks(3)
    assert env.sample_tasks(4) == tasks


# ---------------------------------------------------------------------------- bad values
@pytest.mark.parametrize(("spec", "match"), [
    # bad module path
    ("no_such_pkg.tasks:MyEnv", r"env spec 'no_such_pkg.tasks:MyEnv': no module named "
                                r"'no_such_pkg'; install its package or put .* on PYTHONPATH"),
    ("user_envs.sub:PointLineGoalEnv", r"'user_envs.sub:PointLineGoalEnv': no module named "
                                       r"'user_envs.sub'"),
    # more than one colon, empty or invalid parts
    ("user_envs:Point:Env", r"'user_envs:Point:Env': expected exactly one ':' between module "
                            r"and class, as in 'package.module:ClassName'"),
    ("user_envs:", r"'user_envs:': '' is not a valid class name"),
    ("user-envs:X", r"'user-envs:X': 'user-envs' is not a valid module name"),
    # a class that does not exist (with a close match)
    ("user_envs:PointLineGoal", r"'user_envs:PointLineGoal': 'user_envs' has no attribute "
                                r"'PointLineGoal'; did you mean 'PointLineGoalEnv'"),
    # not a class
    ("user_envs:make_line_env", r"'user_envs:make_line_env': 'make_line_env' is a function, not "
                                r"a class"),
    ("user_envs:SPEC_NOTE", r"'user_envs:SPEC_NOTE': 'SPEC_NOTE' is a str, not a class"),
])
def test_bad_spec_names_the_bad_value(spec, match):
    with pytest.raises(EnvSpecError, match=match) as error:
        make_env(spec)
    assert error.value.spec == spec


@pytest.mark.parametrize(("spec", "missing"), [
    ("user_envs:NoTaskSetterEnv",
     ["set_task(task) is not implemented (the base class's placeholder raises "
      "NotImplementedError)", "get_task() -> task is not implemented"]),
    ("user_envs:NotAGymEnv",
     ["it is not a subclass of gymnasium.Env", "missing reset(*, seed=None, options=None)",
      "missing step(action)", "missing seed_tasks(seed)", "missing log_diagnostics(paths",
      "subclassing meta_policy_search.envs.MetaEnv supplies seed_tasks, log_diagnostics"]),
    ("user_envs:DuckWithoutSeedingEnv",
     ["missing seed_tasks(seed)", "missing log_diagnostics(paths, prefix='') -> dict"]),
])
def test_protocol_check_names_what_is_missing(spec, missing):
    with pytest.raises(EnvSpecError) as error:
        make_env(spec)
    message = str(error.value)
    assert message.startswith(f"env spec {spec!r}: class {spec.split(':')[1]} does not follow "
                              "the MetaEnv protocol: ")
    for part in missing:
        assert part in message, (part, message)
    for present in ("sample_tasks", "missing reset") if spec.endswith("NoTaskSetterEnv") else ():
        assert present not in message  # only what is really missing is named


def test_instance_checks_name_the_spec():
    with pytest.raises(EnvSpecError, match=r"'user_envs:ImageObservationEnv': observation_space "
                                           r"must be a 1-D gymnasium.spaces.Box"):
        make_env("user_envs:ImageObservationEnv")
    with pytest.raises(EnvSpecError, match=r"'user_envs:DuckWithoutTaskRngEnv': the env's "
                                           r"task_rng must be a numpy.random.Generator"):
        make_env("user_envs:DuckWithoutTaskRngEnv")


def test_class_that_workers_cannot_import_back_is_refused():
    with pytest.raises(EnvSpecError, match=r"'user_envs:AliasedLocalEnv': class "
                                           r"_local_class.<locals>.HiddenEnv cannot be imported "
                                           r"back .* worker processes"):
        make_env("user_envs:AliasedLocalEnv")


def test_module_that_raises_on_import_is_named_with_its_error(tmp_path, monkeypatch):
    (tmp_path / "broken_env_module.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(EnvSpecError, match=r"'broken_env_module:X': importing module "
                                           r"'broken_env_module' raised RuntimeError: boom"):
        make_env("broken_env_module:X")


def test_dotted_name_without_colon_gets_the_spec_form():
    with pytest.raises(ValueError, match=r"unknown env name 'mypkg.tasks.MyEnv'\. A user env "
                                         r"class is given as 'package.module:ClassName', with a "
                                         r"colon before the class: 'mypkg.tasks:MyEnv'"):
        make_env("mypkg.tasks.MyEnv")


# ---------------------------------------------------------------------------- the CLI layer
def test_cli_errors_name_the_flag_and_value(tmp_path):
    dump = ["--dump_path", str(tmp_path / "run")]
    with pytest.raises(ConfigError, match=r"--env mypkg.tasks.MyEnv: must be a built-in env "
                                          r"class name .* or a user env class as "
                                          r"package.module:ClassName"):
        prepare_run(ProMPConfig, "promp", ["--env", "mypkg.tasks.MyEnv", *dump])
    with pytest.raises(ConfigError, match=r"^--env user_envs:NoTaskSetterEnv: class "
                                          r"NoTaskSetterEnv does not follow the MetaEnv protocol"):
        prepare_run(ProMPConfig, "promp", ["--env", "user_envs:NoTaskSetterEnv", *dump])
    with pytest.raises(ConfigError, match=r"^--env no_such_pkg:X: no module named 'no_such_pkg'"):
        prepare_run(ProMPConfig, "promp", ["--env", "no_such_pkg:X", *dump])
    with pytest.raises(ConfigError, match=r"--env_kwargs \{\"max_step\": -1\}: PointLineGoalEnv "
                                          r"rejects them \(max_step must be > 0"):
        prepare_run(ProMPConfig, "promp", ["--env", SPEC, "--env_kwargs", '{"max_step": -1}',
                                           *dump])
    assert not os.path.exists(tmp_path / "run")  # nothing written


def test_script_exits_2_with_one_error_line_and_no_traceback(tmp_path):
    import subprocess

    script = os.path.join(EXPERIMENTS_DIR, "promp_run_mujoco.py")
    env = {**os.environ, "PYTHONPATH": os.path.abspath(os.path.join(EXPERIMENTS_DIR, os.pardir))}
    result = subprocess.run([sys.executable, script, "--env", "no_such_pkg.tasks:MyEnv"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: --env no_such_pkg.tasks:MyEnv: no module named "
                                     "'no_such_pkg'"), result.stderr
    assert "Traceback" not in result.stderr and not os.listdir(tmp_path)


def test_user_env_gets_default_horizon_no_paper_config_and_a_colon_free_dump_path():
    prepared = prepare_run(ProMPConfig, "promp", ["--env", SPEC, "--dump_path", "unused"])
    assert prepared.config.env == SPEC and prepared.parsed.paper_entry is None
    assert prepared.config.max_path_length == 100
    config = resolve_config(ProMPConfig(env=SPEC), "promp")
    assert config.dump_path.split(os.sep)[:3] == ["data", "promp", "user_envs.PointLineGoalEnv"]


def test_run_scripts_find_a_module_in_the_working_directory(tmp_path, monkeypatch):
    package = tmp_path / "cwd_tasks_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tasks.py").write_text("from user_envs import PointLineGoalEnv as LineEnv\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    with pytest.raises(EnvSpecError, match="no module named 'cwd_tasks_pkg'"):
        load_env_class("cwd_tasks_pkg.tasks:LineEnv")
    search_working_directory()
    assert sys.path[-1] == str(tmp_path)
    assert load_env_class("cwd_tasks_pkg.tasks:LineEnv").__name__ == "PointLineGoalEnv"


def test_the_documented_command_resolves_from_the_repository_root(monkeypatch):
    # docs/custom_env.rst: python experiments/promp_run_mujoco.py --env
    # docs.examples.custom_env:PointCircleGoalEnv ... (from the repository root)
    root = os.path.abspath(os.path.join(EXPERIMENTS_DIR, os.pardir))
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", root)])
    spec = "docs.examples.custom_env:PointCircleGoalEnv"
    prepared = prepare_run(ProMPConfig, "promp", [
        "--env", spec, "--meta_batch_size", "10", "--rollouts_per_meta_task", "10",
        "--max_path_length", "20", "--hidden_sizes", "32,32", "--init_std", "0.1",
        "--normalization_scale", "none", "--learning_rate", "0.01", "--n_itr", "30",
        "--dump_path", "unused"])
    assert prepared.config.env == spec and prepared.config.normalization_scale is None


# ---------------------------------------------------------------------------- executors
class LinePolicy:
    """The part of the meta-policy interface the sampler uses, for 1-D observations and actions."""

    def __init__(self, meta_batch_size: int) -> None:
        from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP

        self.meta_batch_size = meta_batch_size

        rng = np.random.default_rng(0)
        self.sampling_policy = NumpyGaussianMLP({
            "W0": rng.normal(size=(meta_batch_size, 1, 1)).astype(np.float32),
            "b0": np.zeros((meta_batch_size, 1), np.float32),
            "log_std": np.zeros((meta_batch_size, 1), np.float32),
        })

    def get_sampling_policy(self):
        return self.sampling_policy


@pytest.mark.parametrize("spec", ["user_envs:DuckTypedLineEnv", SPEC])
def test_parallel_workers_rebuild_the_user_env(spec):
    from meta_policy_search.samplers.meta_sampler import MetaSampler

    paths = {}
    for executor in ("iterative", "parallel"):
        sampler = MetaSampler(normalize(make_env(spec)), LinePolicy(2), rollouts_per_meta_task=2,
                              max_path_length=5, executor=executor,
                              n_parallel=2, seed=4)
        try:
            sampler.update_tasks()
            paths[executor] = sampler.obtain_samples()
        finally:
            sampler.close()
    np.testing.assert_array_equal(paths["iterative"].rewards, paths["parallel"].rewards)
    assert np.all(paths["parallel"].env_infos["distance"] > 0)


# ---------------------------------------------------------------------------- end to end
TINY = [
    "--env", SPEC, "--env_kwargs", '{"max_step": 0.2}', "--meta_batch_size", "2",
    "--rollouts_per_meta_task", "2", "--max_path_length", "5", "--executor", "iterative",
    "--hidden_sizes", "4", "--log_formats", "csv", "--seed", "2",
]


@pytest.fixture
def scripts():
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        yield {name: importlib.import_module(name)
               for name in ("promp_run_mujoco", "meta_testing")}
    finally:
        sys.path.remove(EXPERIMENTS_DIR)
        from meta_policy_search.utils import logger

        logger.reset()


def test_run_script_trains_resumes_and_meta_tests_a_user_env(scripts, tmp_path):
    run_dir = str(tmp_path / "run")
    scripts["promp_run_mujoco"].main([*TINY, "--n_itr", "1", "--dump_path", run_dir])
    with open(os.path.join(run_dir, "params.json")) as f:
        params = json.load(f)
    assert params["env"] == SPEC and params["env_kwargs"] == {"max_step": 0.2}
    assert params["paper_config_entry"] is None

    # --resume rebuilds the env from params.json alone, here in parallel worker processes
    scripts["promp_run_mujoco"].main(["--resume", "--dump_path", run_dir, "--n_itr", "2",
                                      "--executor", "parallel", "--n_parallel", "2"])
    with open(os.path.join(run_dir, "progress.csv")) as f:
        rows = f.read().splitlines()
    assert len(rows) == 3  # header + iterations 0 and 1

    output_dir = scripts["meta_testing"].main([run_dir, "--n_tasks", "2", "--num_adapt_steps", "1",
                                            "--no_random_init", "--executor", "iterative"])
    with open(os.path.join(output_dir, "meta_test.json")) as f:
        results = json.load(f)
    assert results["env"] == SPEC
    assert len(results["tasks"]) == 2 and all(-1.0 <= task <= 1.0 for task in results["tasks"])
    assert results["checkpoint_itr"] == 1


# ---------------------------------------------------------------------------- reproduce.py
@pytest.fixture
def reproduce():
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        yield importlib.import_module("reproduce")
    finally:
        sys.path.remove(EXPERIMENTS_DIR)


GRID_TINY = ["--meta_batch_size", "2", "--rollouts_per_meta_task", "2", "--max_path_length", "5",
             "--executor", "iterative", "--hidden_sizes", "4", "--num_ppo_steps", "1",
             "--log_formats", "csv"]
"""Per run: 2 x 2 x 5 x (1 + 1) = 40 timesteps per iteration."""


def test_reproduce_plans_a_user_env_with_the_defaults(reproduce, tmp_path, capsys):
    (run,) = reproduce.plan_runs([("promp", SPEC, (1,))], 100, str(tmp_path), GRID_TINY)
    assert run.run_dir == str(tmp_path / "promp" / "user_envs.PointLineGoalEnv" / "seed_1")
    assert run.params["env"] == SPEC and run.n_itr == 3  # ceil(100 / 40)
    assert run.params["num_inner_grad_steps"] == 1 and run.params["sampling_mode"] == "rollouts"
    assert reproduce.main(["--algos", "promp", "--envs", "user_envs:NoTaskSetterEnv",
                           "--timesteps", "100", "--out", str(tmp_path / "bad")]) == 2
    assert ("--envs user_envs:NoTaskSetterEnv: class NoTaskSetterEnv does not follow the "
            "MetaEnv protocol") in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "bad")


def test_reproduce_runs_a_user_env_found_in_the_working_directory(reproduce, tmp_path,
                                                                  monkeypatch, capsys):
    # The runs are subprocesses (python experiments/promp_run_mujoco.py ...): they find
    # user_envs only because it is in their working directory.
    monkeypatch.chdir(os.path.dirname(os.path.abspath(__file__)))
    out = str(tmp_path / "grid")
    assert reproduce.main(["--algos", "promp", "--envs", SPEC, "--seeds", "1", "--timesteps",
                           "40", "--out", out, "--", *GRID_TINY]) == 0, capsys.readouterr()
    run_dir = os.path.join(out, "promp", "user_envs.PointLineGoalEnv", "seed_1")
    with open(os.path.join(run_dir, "params.json")) as f:
        assert json.load(f)["env"] == SPEC
    with open(os.path.join(out, "reproduction.md")) as f:
        table = f.read()
    assert "No paper values (the paper did not run these envs): user_envs:PointLineGoalEnv " \
           "ProMP." in table
    with open(os.path.join(out, "reproduction.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
