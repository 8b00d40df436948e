"""The paper's settings as package data: coverage, key validity, precedence, the quick start."""

from __future__ import annotations

import dataclasses
import json

import pytest

from meta_policy_search.envs.registry import ENV_CLASS_NAMES
from meta_policy_search.experiment import paper
from meta_policy_search.experiment.algorithms import PPOMAMLRunConfig, ProMPPointMassConfig
from meta_policy_search.experiment.config_parsing import (
    parse_command_line,
    resolve_config,
    write_params,
)
from meta_policy_search.experiment.config_values import config_from_dict, load_json
from meta_policy_search.experiment.configs import (
    ENV_SETTINGS,
    MetaRLConfig,
    ProMPConfig,
    TRPOMAMLConfig,
)
from meta_policy_search.experiment.registry import ALGORITHMS

PAPER_ENVS = {
    "HalfCheetahRandDirecEnv", "AntRandDirecEnv", "AntRandDirec2DEnv", "AntRandGoalEnv",
    "HumanoidRandDirecEnv", "HumanoidRandDirec2DEnv", "Walker2DRandDirecEnv",
    "Walker2DRandVelEnv", "Walker2DRandParamsEnv", "HopperRandParamsEnv", "MetaPointEnvMomentum",
    "MetaPointEnvCorner", "PointEnvRandGoal",
}
"""The environments of the paper's table (``/work/shared/paper_configs.md``)."""


def config_classes_by_run_name() -> dict[str, list[type]]:
    classes: dict[str, list[type]] = {}
    for algorithm in ALGORITHMS.values():
        classes.setdefault(algorithm.run_name, []).append(algorithm.load()[0])
    return classes


def invalid_keys(data: dict) -> list[str]:
    """Every key of ``paper_configs.json`` data that no config class it applies to has."""
    classes = config_classes_by_run_name()
    base_fields = {f.name for f in dataclasses.fields(MetaRLConfig)}
    problems = [f"common.{k}" for k in data["common"] if k not in base_fields]
    for env, entry in data["paper"].items():
        for section, settings in entry.items():
            if section == "note":
                continue
            if section == paper.ALL_ALGOS:
                problems += [f"{env}.all.{k}" for k in settings if k not in base_fields]
            elif section not in classes:
                problems.append(f"{env}.{section} (no such algorithm)")
            else:
                for cls in classes[section]:
                    fields = {f.name for f in dataclasses.fields(cls)}
                    problems += [f"{env}.{section}.{k}" for k in settings if k not in fields]
    for env, entry in data["not_in_paper"].items():
        problems += [f"{env}.{k}" for k in entry if k not in ("max_path_length", "note")]
    return problems


def parse(config_cls, argv, algo="promp"):
    parsed = parse_command_line(config_cls, argv, algo)
    return resolve_config(parsed.config, algo or "run"), parsed.paper_entry


# ---------------------------------------------------------------------------- the data
def test_data_covers_the_papers_envs_and_every_env_has_a_horizon():
    assert set(paper.paper_envs()) == PAPER_ENVS
    assert set(paper.paper_envs()) <= set(ENV_CLASS_NAMES)
    assert set(paper.env_horizons()) == set(ENV_CLASS_NAMES) == set(ENV_SETTINGS)


def test_every_key_is_a_field_of_the_config_classes_it_applies_to():
    assert invalid_keys(paper.load_paper_configs()) == []


def test_a_typo_in_the_data_is_caught():
    data = paper.load_paper_configs()
    data["paper"]["HopperRandParamsEnv"]["promp"]["num_ppo_step"] = 3
    data["paper"]["AntRandGoalEnv"]["trpo"] = {"step_size": 0.02}
    assert sorted(invalid_keys(data)) == ["AntRandGoalEnv.trpo (no such algorithm)",
                                          "HopperRandParamsEnv.promp.num_ppo_step"]
    assert paper.load_paper_configs() != data  # a copy: the package's data is untouched


def test_every_paper_entry_samples_like_the_original():
    for env in paper.paper_envs():
        for algorithm in ALGORITHMS.values():
            assert paper.paper_entry(algorithm.run_name, env)["sampling_mode"] == "budget"


@pytest.mark.parametrize(("env", "horizon", "inner_lr", "steps", "hidden", "ppo"), [
    ("HalfCheetahRandDirecEnv", 100, 0.1, 1, (64, 64), (5, 5e-4, False)),
    ("AntRandDirecEnv", 100, 0.1, 1, (64, 64), (5, 5e-4, False)),
    ("AntRandDirec2DEnv", 100, 0.1, 1, (64, 64), (5, 5e-4, False)),
    ("AntRandGoalEnv", 200, 0.1, 2, (64, 64), (5, 5e-4, False)),
    ("HumanoidRandDirec2DEnv", 200, 0.1, 1, (128, 128), (5, 5e-4, False)),
    ("Walker2DRandVelEnv", 200, 0.1, 1, (64, 64), (5, 5e-4, False)),
    ("Walker2DRandParamsEnv", 200, 0.05, 1, (64, 64), (3, 1e-3, True)),
    ("HopperRandParamsEnv", 200, 0.05, 1, (64, 64), (3, 1e-3, True)),
    ("MetaPointEnvMomentum", 200, 0.1, 3, (128, 128), (5, 5e-4, False)),
    ("PointEnvRandGoal", 100, 0.1, 3, (64, 64), (5, 5e-4, False)),
])
def test_promp_resolves_to_the_paper_settings(env, horizon, inner_lr, steps, hidden, ppo):
    config, entry = parse(ProMPConfig, ["--env", env])
    assert (config.max_path_length, config.inner_lr, config.num_inner_grad_steps) == (
        horizon, inner_lr, steps)
    assert config.hidden_sizes == hidden and config.sampling_mode == "budget"
    assert (config.num_ppo_steps, config.init_inner_kl_penalty,
            config.adaptive_inner_kl_penalty) == ppo
    assert entry["algo"] == "promp" and entry["env"] == env


def test_hopper_promp_is_the_papers_adaptive_kl_experiment():
    config, entry = parse(ProMPConfig, ["--env", "HopperRandParamsEnv"])
    assert (config.inner_lr, config.num_ppo_steps, config.adaptive_inner_kl_penalty) == (
        0.05, 3, True)
    assert (config.init_inner_kl_penalty, config.target_inner_step) == (1e-3, 0.01)
    assert (config.max_path_length, config.sampling_mode) == (200, "budget")
    assert entry["applied"]["num_ppo_steps"] == 3 and entry["kept_script_defaults"] == []


def test_keys_of_other_algorithms_are_skipped():
    trpo, entry = parse(TRPOMAMLConfig, ["--env", "HopperRandParamsEnv"], "trpo_maml")
    assert trpo.inner_lr == 0.05 and "num_ppo_steps" not in entry["applied"]
    momentum, _ = parse(TRPOMAMLConfig, ["--env", "MetaPointEnvMomentum"], "trpo_maml")
    assert (momentum.hidden_sizes, momentum.num_inner_grad_steps) == ((64, 64), 3)


@pytest.mark.parametrize(("env", "ppo_steps", "hidden"), [
    ("HalfCheetahRandDirecEnv", 5, (64, 64)),
    ("HopperRandParamsEnv", 3, (64, 64)),
    ("MetaPointEnvMomentum", 5, (128, 128)),
])
def test_ppo_maml_takes_the_promp_section(env, ppo_steps, hidden):
    """PPO-MAML is not in the paper: it gets ProMP's settings, without the KL penalty's."""
    config_cls = PPOMAMLRunConfig
    config, entry = parse(config_cls, ["--env", env], "ppo_maml")
    promp, _ = parse(ProMPConfig, ["--env", env])
    assert (config.num_ppo_steps, config.hidden_sizes) == (ppo_steps, hidden)
    for field in ("max_path_length", "inner_lr", "num_inner_grad_steps", "sampling_mode",
                  "learning_rate", "clip_eps", "num_minibatches"):
        assert getattr(config, field) == getattr(promp, field), field
    assert config.inner_type == "log_likelihood"
    assert entry["algo"] == "ppo_maml" and entry["section"] == "promp"
    assert "init_inner_kl_penalty" not in entry["applied"]
    assert "the paper's promp settings" in paper.describe_paper_entry(entry)
    assert paper.paper_section("ppo_maml", env) == "promp"
    assert paper.paper_section("trpo_maml", env) == "all"  # no fallback: the all settings
    assert "section" not in parse(TRPOMAMLConfig, ["--env", env], "trpo_maml")[1]


def test_envs_outside_the_paper_keep_the_defaults():
    config, entry = parse(ProMPConfig, ["--env", "HalfCheetahRandVelEnv", "--dump_path", "x"])
    assert entry is None
    assert config == resolve_config(ProMPConfig(env="HalfCheetahRandVelEnv", dump_path="x"),
                                    "promp")
    assert (config.max_path_length, config.sampling_mode) == (100, "rollouts")
    assert ENV_SETTINGS["SwimmerRandVelEnv"]["max_path_length"] == 200


def test_no_algorithm_name_means_no_paper_config():
    config, entry = parse(ProMPConfig, ["--env", "HopperRandParamsEnv"], None)
    assert entry is None and config.inner_lr == 0.1 and config.sampling_mode == "rollouts"


# ---------------------------------------------------------------------------- precedence
def write_json(path, values) -> str:
    with open(path, "w") as f:
        json.dump(values, f)
    return str(path)


def test_config_file_and_flags_override_the_paper_config(tmp_path):
    config_file = write_json(tmp_path / "c.json", {"env": "HopperRandParamsEnv",
                                                   "inner_lr": 0.3, "num_ppo_steps": 4})
    config, entry = parse(ProMPConfig, ["--config_file", config_file, "--num_ppo_steps", "7"])
    assert entry["env"] == "HopperRandParamsEnv"  # the config file's env selects the entry
    assert config.adaptive_inner_kl_penalty is True  # from the paper entry
    assert config.inner_lr == 0.3  # config file over paper
    assert config.num_ppo_steps == 7  # flag over config file over paper
    other, entry = parse(ProMPConfig, ["--config_file", config_file, "--env", "AntRandGoalEnv"])
    assert entry["env"] == "AntRandGoalEnv" and other.num_inner_grad_steps == 2  # flag's env
    assert other.inner_lr == 0.3  # the config file still applies on top


@pytest.mark.parametrize("where", ["flag", "config_file"])
def test_paper_config_can_be_switched_off(tmp_path, where):
    argv = ["--env", "HopperRandParamsEnv"]
    if where == "flag":
        argv += ["--paper_config", "false"]
    else:
        argv += ["--config_file", write_json(tmp_path / "c.json", {"paper_config": False})]
    config, entry = parse(ProMPConfig, argv)
    assert entry is None
    assert (config.inner_lr, config.num_ppo_steps, config.sampling_mode) == (0.1, 5, "rollouts")
    assert config.max_path_length == 200  # the env's horizon still fills the None default


def test_params_json_records_the_entry_and_is_accepted_back(tmp_path):
    config, entry = parse(ProMPConfig, ["--env", "HopperRandParamsEnv"])
    write_params(config, str(tmp_path), "promp", entry)
    stored = load_json(tmp_path / "params.json")
    assert stored["algo"] == "promp" and stored["paper_config_entry"] == entry
    assert config_from_dict(ProMPConfig, stored) == config  # metadata keys are accepted


def test_resume_keeps_params_json_over_the_paper_config(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    stored_config = resolve_config(
        ProMPConfig(env="HopperRandParamsEnv", inner_lr=0.2, dump_path=str(run_dir)), "promp")
    write_params(stored_config, str(run_dir), "promp", None)
    parsed = parse_command_line(ProMPConfig, ["--resume", "--dump_path", str(run_dir),
                                              "--n_itr", "9"], "promp")
    assert parsed.resume and parsed.paper_entry is None
    assert parsed.config == dataclasses.replace(stored_config, n_itr=9)  # no paper values
    assert parsed.config.sampling_mode == "rollouts" and parsed.config.num_ppo_steps == 5


# ---------------------------------------------------------------------------- run scripts
@pytest.fixture(scope="module")
def quick_start() -> type:
    return ProMPPointMassConfig


def test_quick_start_keeps_its_settings(quick_start):
    config, entry = parse(quick_start, [])
    assert entry is None
    assert (config.env, config.meta_batch_size, config.rollouts_per_meta_task) == (
        "PointEnvRandGoal", 20, 20)
    assert (config.num_inner_grad_steps, config.max_path_length, config.n_itr) == (1, 100, 40)
    assert (config.sampling_mode, config.executor, config.inner_lr) == ("rollouts", "iterative", 0.1)


def test_paper_config_never_replaces_a_scripts_own_fields(quick_start):
    config, entry = parse(quick_start, ["--paper_config", "true"])
    assert (config.num_inner_grad_steps, config.sampling_mode) == (3, "budget")  # paper's
    assert (config.meta_batch_size, config.max_path_length) == (20, 100)  # the script's
    assert entry["kept_script_defaults"] == ["max_path_length"]

    @dataclasses.dataclass(frozen=True)
    class Narrow(ProMPConfig):
        hidden_sizes: tuple[int, ...] = (32,)
        """A script's own width."""

    narrow, entry = parse(Narrow, ["--env", "HumanoidRandDirecEnv"])
    assert narrow.hidden_sizes == (32,) and narrow.max_path_length == 200
    assert entry["kept_script_defaults"] == ["hidden_sizes"]
    assert paper.script_fields(ProMPConfig) == frozenset()


def test_docs_table_lists_every_env_with_its_settings():
    table = paper.paper_config_table_rst(ProMPConfig())
    assert table.startswith(".. list-table::")
    for env in ENV_CLASS_NAMES:
        assert f"``{env}``" in table
    assert "3 / adaptive, init 1e-3, target 0.01" in table
    assert "(128, 128) (promp); (64, 64) (others)" in table
