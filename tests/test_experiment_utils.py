"""Run-script machinery: config parsing and precedence, params.json, seeds, the scripts' configs."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import sys
import types

import numpy as np
import pytest

from meta_policy_search.experiment.components import derive_seeds
from meta_policy_search.experiment.config_parsing import (
    field_docs,
    make_parser,
    parse_config,
    resolve_config,
    write_params,
)
from meta_policy_search.experiment.config_values import ConfigError, config_from_dict, load_json
from meta_policy_search.experiment.configs import (
    DEFAULT_MAX_PATH_LENGTH,
    ENV_SETTINGS,
    MetaRLConfig,
    ProMPConfig,
)

EXPERIMENTS_DIR = os.path.join(os.path.dirname(__file__), os.pardir, "experiments")
SCRIPTS = [
    "promp_run_mujoco",
    "promp_run_point_mass",
    "trpo_maml_run_mujoco",
    "e_maml_trpo_run_mujoco",
    "vpg_maml_run_mujoco",
    "e_maml_vpg_run_mujoco",
    "dice_maml_run_mujoco",
    "vpg_dice_run_mujoco",
    "ppo_maml_run_mujoco",
]


def write_json(path, values) -> str:
    with open(path, "w") as f:
        json.dump(values, f)
    return str(path)


def test_defaults_are_the_paper_settings():
    config = ProMPConfig()
    assert (config.meta_batch_size, config.rollouts_per_meta_task) == (40, 20)
    assert (config.discount, config.gae_lambda, config.normalize_adv) == (0.99, 1.0, True)
    assert (config.hidden_sizes, config.init_std, config.inner_lr) == ((64, 64), 1.0, 0.1)
    assert (config.learning_rate, config.num_ppo_steps, config.clip_eps) == (1e-3, 5, 0.3)
    assert (config.init_inner_kl_penalty, config.target_inner_step) == (5e-4, 0.01)
    assert (config.n_itr, config.normalization_scale, config.executor) == (1001, 10.0, "parallel")


def test_precedence_defaults_then_config_file_then_cli(tmp_path):
    config_file = write_json(tmp_path / "c.json", {"n_itr": 5, "inner_lr": 0.5, "seed": 3})
    config, resume = parse_config(
        ProMPConfig, ["--config_file", config_file, "--seed", "9", "--hidden_sizes", "32,16"]
    )
    assert not resume
    assert config.n_itr == 5  # config file over default
    assert config.inner_lr == 0.5
    assert config.seed == 9  # CLI over config file
    assert config.hidden_sizes == (32, 16)
    assert config.clip_eps == ProMPConfig.clip_eps  # untouched default


@pytest.mark.parametrize(
    ("flag", "text", "expected"),
    [
        ("hidden_sizes", "[8, 8, 8]", (8, 8, 8)),
        ("hidden_sizes", "8", (8,)),
        ("normalize_adv", "false", False),
        ("learn_std", "0", False),
        ("n_parallel", "none", None),
        ("n_parallel", "3", 3),
        ("max_path_length", "50", 50),
        ("init_std", "2", 2.0),
        ("env", "AntRandGoalEnv", "AntRandGoalEnv"),
        ("env_kwargs", '{"reward_type": "dense"}', {"reward_type": "dense"}),
        ("log_formats", "csv,log", ("csv", "log")),
    ],
)
def test_cli_values_are_typed(flag, text, expected):
    config, _ = parse_config(ProMPConfig, [f"--{flag}", text])
    value = getattr(config, flag)
    assert value == expected and type(value) is type(expected)


def test_unknown_config_file_key_raises_naming_it(tmp_path):
    config_file = write_json(tmp_path / "c.json", {"n_itr": 5, "inner_learning_rate": 0.5})
    with pytest.raises(ValueError, match="inner_learning_rate"):
        parse_config(ProMPConfig, ["--config_file", config_file])


def test_unknown_cli_flag_raises_naming_it():
    with pytest.raises(ValueError, match="--step_size"):
        parse_config(ProMPConfig, ["--step_size", "0.1"])  # a TRPO field, not ProMP's


@pytest.mark.parametrize(
    ("values", "match"),
    [({"n_itr": "ten"}, "n_itr"), ({"n_itr": 2.5}, "n_itr"), ({"hidden_sizes": 64}, "hidden")],
)
def test_wrongly_typed_config_values_raise(values, match):
    with pytest.raises(ValueError, match=match):
        config_from_dict(ProMPConfig, values)


def test_unparsable_cli_value_raises():
    with pytest.raises(ValueError, match="--n_itr"):
        parse_config(ProMPConfig, ["--n_itr", "many"])


def test_resume_reads_params_json_then_applies_overrides(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    original = dataclasses.replace(ProMPConfig(), n_itr=3, seed=4, hidden_sizes=(8,))
    write_params(original, str(run_dir), "promp")
    stored = load_json(run_dir / "params.json")
    assert stored["algo"] == "promp" and stored["hidden_sizes"] == [8]

    config, resume = parse_config(ProMPConfig, ["--resume", "--dump_path", str(run_dir),
                                                "--n_itr", "6"])
    assert resume
    assert config.seed == 4 and config.hidden_sizes == (8,)
    assert config.n_itr == 6 and config.dump_path == str(run_dir)

    with pytest.raises(ValueError, match="--dump_path"):
        parse_config(ProMPConfig, ["--resume"])


def test_params_json_round_trips(tmp_path):
    config = resolve_config(ProMPConfig(env="AntRandGoalEnv", env_kwargs={"a": 1}), "promp")
    write_params(config, str(tmp_path), "promp")
    assert config_from_dict(ProMPConfig, load_json(tmp_path / "params.json")) == config


def test_resolve_config_fills_horizon_and_dump_path():
    config = resolve_config(MetaRLConfig(env="AntRandGoalEnv"), "promp")
    assert config.max_path_length == ENV_SETTINGS["AntRandGoalEnv"]["max_path_length"] == 200
    assert config.dump_path.startswith(os.path.join("data", "promp", "AntRandGoalEnv", "run_"))
    explicit = resolve_config(MetaRLConfig(max_path_length=7, dump_path="x"), "promp")
    assert (explicit.max_path_length, explicit.dump_path) == (7, "x")
    unknown_env = resolve_config(MetaRLConfig(env="SomeNewEnv"), "promp")
    assert unknown_env.max_path_length == DEFAULT_MAX_PATH_LENGTH


def test_derive_seeds_is_deterministic_and_independent():
    seeds = derive_seeds(1)
    assert seeds == derive_seeds(1)
    assert set(seeds) == {"sampler", "policy", "tf"}  # the env's tasks take the sampler's seed
    assert len(set(seeds.values())) == 3
    # The same seeds as when a (dead) env seed was drawn first: old runs keep their numbers.
    words = np.random.SeedSequence(1).generate_state(4, dtype=np.uint32)
    assert list(seeds.values()) == [int(w) % (2**31 - 1) for w in words[1:]]
    assert seeds != derive_seeds(2)
    assert all(0 <= s < 2**31 - 1 for s in seeds.values())
    with pytest.raises(ValueError, match="seed"):
        derive_seeds(-1)


def test_field_docs_cover_every_field():
    docs = field_docs(ProMPConfig)
    assert docs["clip_eps"] == "Clip range of the outer surrogate."
    assert docs["meta_batch_size"] == "Number of tasks per meta-iteration."
    assert set(docs) == {f.name for f in dataclasses.fields(ProMPConfig)}


@pytest.fixture(scope="module")
def scripts():
    """Per run script: its ``main``, and the ``Config`` and ``make_algo`` it runs."""
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        yield {name: script_parts(name) for name in SCRIPTS}
    finally:
        sys.path.remove(EXPERIMENTS_DIR)


def script_parts(name: str) -> types.SimpleNamespace:
    from meta_policy_search.experiment.algorithms import ProMPPointMassConfig
    from meta_policy_search.experiment.registry import ALGORITHMS

    script = "promp_run_mujoco" if name == "promp_run_point_mass" else name
    entry = next(a for a in ALGORITHMS.values() if a.script == script and not a.overrides)
    config_cls = ProMPPointMassConfig if name == "promp_run_point_mass" else entry.config_cls
    return types.SimpleNamespace(main=importlib.import_module(name).main, Config=config_cls,
                                 make_algo=entry.make_algo, algorithm_class=entry.algorithm_class)


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_configs_are_documented_frozen_dataclasses(scripts, name):
    config_cls = scripts[name].Config
    assert dataclasses.is_dataclass(config_cls)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config_cls().seed = 3
    assert set(field_docs(config_cls)) == {f.name for f in dataclasses.fields(config_cls)}
    assert callable(scripts[name].make_algo)
    help_text = make_parser(config_cls).format_help()
    assert "--config_file" in help_text and "--resume" in help_text and "--n_itr" in help_text


def test_script_specific_defaults(scripts):
    assert scripts["e_maml_trpo_run_mujoco"].Config().exploration is True
    assert scripts["e_maml_vpg_run_mujoco"].Config().exploration is True
    assert scripts["trpo_maml_run_mujoco"].Config().exploration is False
    point = scripts["promp_run_point_mass"].Config()
    assert point.env == "PointEnvRandGoal" and point.max_path_length == 100
    lvc, _ = parse_config(scripts["vpg_maml_run_mujoco"].Config,
                          ["--inner_type", "likelihood_ratio"])
    assert lvc.inner_type == "likelihood_ratio"
    ppo = scripts["ppo_maml_run_mujoco"].Config()
    assert (ppo.inner_type, ppo.clip_eps, ppo.num_ppo_steps, ppo.learning_rate) == (
        "log_likelihood", 0.3, 5, 1e-3)


def test_env_settings_cover_every_env():
    from meta_policy_search.envs.registry import ENV_CLASS_NAMES

    assert set(ENV_SETTINGS) == set(ENV_CLASS_NAMES)


# ---------------------------------------------------------------------------- end to end
TINY = [
    "--env", "PointEnvRandGoal", "--meta_batch_size", "2", "--rollouts_per_meta_task", "3",
    "--max_path_length", "6", "--executor", "iterative", "--hidden_sizes", "8",
    "--log_formats", "csv", "--seed", "5", "--paper_config", "false",
]
"""A tiny run with the config defaults (the paper's PointEnvRandGoal entry has 3 inner steps)."""


def read_rows(run_dir) -> list[dict]:
    import csv

    with open(os.path.join(run_dir, "progress.csv"), newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def reset_logger():
    from meta_policy_search.utils import logger

    yield
    logger.reset()


# One smoke run per distinct make_algo (the ProMP scripts run in the resume test below; the
# E-MAML-TRPO script only changes TRPO-MAML's config): keeps this file fast.
@pytest.mark.parametrize(
    "name", ["trpo_maml_run_mujoco", "e_maml_vpg_run_mujoco", "dice_maml_run_mujoco",
             "vpg_dice_run_mujoco", "ppo_maml_run_mujoco"]
)
def test_scripts_run_an_iteration(scripts, name, tmp_path, reset_logger):
    run_dir = scripts[name].main(TINY + ["--n_itr", "1", "--dump_path", str(tmp_path / "run")])
    rows = read_rows(run_dir)
    assert len(rows) == 1 and rows[0]["Itr"] == "0"
    assert float(rows[0]["n_timesteps"]) == 2 * (2 * 3 * 6)  # pre + post, no early ends
    for key in ("Step_0-AverageReturn", "Step_1-AverageReturn", "Time-OuterStep"):
        assert np.isfinite(float(rows[0][key])), key
    params = load_json(os.path.join(run_dir, "params.json"))
    assert params["max_path_length"] == 6 and params["seed"] == 5
    assert params["algo"] == name.replace("_run_mujoco", "") and params["paper_config_entry"] is None
    assert os.path.isdir(os.path.join(run_dir, "checkpoints"))


@pytest.mark.parametrize("values, executor", [
    ({"parallel": False, "executor": None}, "iterative"),
    ({"parallel": True, "executor": None}, "parallel"),
    ({"parallel": False}, "iterative"),
    ({"parallel": True, "executor": "ray"}, "ray"),  # executor overrode parallel
    ({"executor": None}, "parallel"),  # the class default
])
def test_old_parallel_key_maps_to_executor(values, executor):
    assert config_from_dict(ProMPConfig, values).executor == executor


def test_run_of_an_older_version_with_parallel_resumes(scripts, tmp_path, reset_logger):
    main = scripts["promp_run_point_mass"].main
    run_dir = main(TINY + ["--n_itr", "1", "--dump_path", str(tmp_path / "old")])
    params_path = os.path.join(run_dir, "params.json")
    params = load_json(params_path)
    params.update(parallel=False, executor=None)  # as older versions wrote it
    write_json(params_path, params)
    main(["--resume", "--dump_path", run_dir, "--n_itr", "2"])
    assert [row["Itr"] for row in read_rows(run_dir)] == ["0", "1"]
    resumed = load_json(params_path)
    assert resumed["executor"] == "iterative" and "parallel" not in resumed


def test_resumed_run_reproduces_uninterrupted_run(scripts, tmp_path, reset_logger, capsys):
    main = scripts["promp_run_point_mass"].main
    straight = main(TINY + ["--n_itr", "3", "--dump_path", str(tmp_path / "straight")])
    interrupted = str(tmp_path / "interrupted")
    main(TINY + ["--n_itr", "2", "--dump_path", interrupted])
    with pytest.raises(SystemExit, match="--resume"):
        main(TINY + ["--n_itr", "3", "--dump_path", interrupted])  # refuses to overwrite
    params_path = os.path.join(interrupted, "params.json")
    with open(params_path, "rb") as f:
        params_before = f.read()
    # A resume that would change the run is refused before anything is touched (issue 9.1).
    for flags, field, stored in [
        (["--meta_batch_size", "8"], "meta_batch_size", "2"),
        (["--hidden_sizes", "32"], "hidden_sizes", "8"),
        (["--seed", "7"], "seed", "5"),
    ]:
        with pytest.raises(SystemExit, match=f"--{field} .* stored value {stored} ") as error:
            main(["--resume", "--dump_path", interrupted, "--n_itr", "3"] + flags)
        assert error.value.code == 2
        with open(params_path, "rb") as f:
            assert f.read() == params_before, flags
    main(["--resume", "--dump_path", interrupted, "--n_itr", "3"])
    assert load_json(params_path)["n_itr"] == 3  # the allowed change is recorded
    capsys.readouterr()
    main(["--resume", "--dump_path", interrupted])  # finished: says so, touches nothing
    assert "nothing to do: " in capsys.readouterr().err
    rows_a, rows_b = read_rows(straight), read_rows(interrupted)
    assert [r["Itr"] for r in rows_b] == ["0", "1", "2"]
    for row_a, row_b in zip(rows_a, rows_b):
        for key, value in row_a.items():
            if "Time" not in key:
                assert float(row_b[key]) == pytest.approx(float(value), rel=1e-5, abs=1e-7), key


@pytest.mark.parametrize("name", [s for s in SCRIPTS if s != "promp_run_point_mass"])
def test_first_order_flag_reaches_the_algorithm(scripts, name):
    import tensorflow as tf

    from meta_policy_search.policies import MetaGaussianMLPPolicy

    flags = ["--meta_batch_size", "2", "--hidden_sizes", "4", "--max_path_length", "3"]
    algos = {}
    for first_order in (False, True):
        config, _ = parse_config(scripts[name].Config, flags + ["--first_order", str(first_order).lower()])
        assert config.first_order is first_order
        policy = MetaGaussianMLPPolicy(2, 2, 2, hidden_sizes=(4,), seed=0, dtype=tf.float64)
        algos[first_order] = scripts[name].make_algo(config, policy)
        assert type(algos[first_order]) is scripts[name].algorithm_class
        assert algos[first_order].first_order is first_order
    if name != "promp_run_mujoco":
        return
    # ProMP: the first-order meta-gradient drops the term through the inner step.
    from meta_policy_search.types import SampleBatch

    rng = np.random.default_rng(0)
    shape = (2, 2, 3)

    def batch(policy):
        obs = rng.normal(size=(*shape, 2))
        dist = policy.forward(policy.stacked_params(), tf.constant(obs.reshape(2, 6, 2)))
        mean = dist["mean"].numpy().reshape(*shape, 2) + 0.2 * rng.normal(size=(*shape, 2))
        log_std = dist["log_std"].numpy().reshape(*shape, 2)
        return SampleBatch(
            observations=obs, actions=mean + np.exp(log_std) * rng.normal(size=(*shape, 2)),
            rewards=rng.normal(size=shape), mask=np.ones(shape),
            agent_infos={"mean": mean, "log_std": log_std}, env_infos={},
            returns=np.zeros(shape), baselines=np.zeros(shape), advantages=rng.normal(size=shape),
        )

    samples = [batch(algos[False].policy) for _ in range(2)]
    gradients = {}
    for first_order, algo in algos.items():
        batches = tuple(algo.to_tensors(s) for s in samples)
        with tf.GradientTape() as tape:
            loss, _ = algo.meta_loss(batches)
        gradients[first_order] = np.concatenate(
            [tf.reshape(g, [-1]).numpy() for g in tape.gradient(loss, algo.meta_variables)]
        )
    difference = np.linalg.norm(gradients[True] - gradients[False]) / np.linalg.norm(gradients[False])
    assert difference > 1e-3


@pytest.mark.parametrize("name", ["e_maml_trpo_run_mujoco", "e_maml_vpg_run_mujoco"])
def test_exploration_type_flag_reaches_the_algorithm(scripts, name):
    import tensorflow as tf

    from meta_policy_search.policies import MetaGaussianMLPPolicy

    flags = ["--meta_batch_size", "2", "--hidden_sizes", "4", "--max_path_length", "3"]
    for exploration_type in ("original", "emaml_paper"):
        config, _ = parse_config(scripts[name].Config, flags + ["--exploration_type", exploration_type])
        policy = MetaGaussianMLPPolicy(2, 2, 2, hidden_sizes=(4,), seed=0, dtype=tf.float64)
        algo = scripts[name].make_algo(config, policy)
        assert algo.exploration and algo.exploration_type == exploration_type
    with pytest.raises(ConfigError, match="--exploration_type bogus: must be one of"):
        parse_config(scripts[name].Config, flags + ["--exploration_type", "bogus"])
    # A config built without parsing still meets the algorithm's own check.
    config = dataclasses.replace(config, exploration_type="bogus")
    policy = MetaGaussianMLPPolicy(2, 2, 2, hidden_sizes=(4,), seed=0, dtype=tf.float64)
    with pytest.raises(ValueError, match="exploration_type must be one of"):
        scripts[name].make_algo(config, policy)


def test_hvp_approach_flag_reaches_the_optimizer(scripts):
    import tensorflow as tf

    from meta_policy_search.policies import MetaGaussianMLPPolicy

    flags = ["--meta_batch_size", "2", "--hidden_sizes", "4", "--max_path_length", "3"]
    config, _ = parse_config(scripts["trpo_maml_run_mujoco"].Config,
                             flags + ["--hvp_approach", "finite_difference_original"])
    policy = MetaGaussianMLPPolicy(2, 2, 2, hidden_sizes=(4,), seed=0, dtype=tf.float64)
    algo = scripts["trpo_maml_run_mujoco"].make_algo(config, policy)
    assert algo.optimizer.hvp_approach == "finite_difference_original"
    with pytest.raises(ConfigError, match="--hvp_approach bogus: must be one of"):
        parse_config(scripts["trpo_maml_run_mujoco"].Config, flags + ["--hvp_approach", "bogus"])


@pytest.mark.parametrize("name", ["promp", "ppo_maml", "trpo_maml", "vpg_maml", "dice_maml",
                                  "vpg_dice"])
def test_every_config_field_named_like_a_constructor_argument_reaches_the_algorithm(
        name, monkeypatch):
    """The builders call each algorithm explicitly: none may forget a config field that the
    constructor takes (``max_path_length`` of DiCE is the resolved horizon)."""
    import inspect

    from meta_policy_search import meta_algos
    from meta_policy_search.experiment.registry import ALGORITHMS

    algorithm = ALGORITHMS[name]
    real_class = algorithm.algorithm_class
    calls = []
    monkeypatch.setattr(meta_algos, algorithm.algorithm_name,
                        lambda policy, **kwargs: calls.append((policy, kwargs)))
    fields = {field.name: field for field in dataclasses.fields(algorithm.config_cls)}
    # a non-default value for every field, so that a default passed by mistake shows
    values = {}
    for field_name in set(inspect.signature(real_class).parameters) & set(fields):
        default = getattr(algorithm.config_cls(), field_name)
        if isinstance(default, bool):
            values[field_name] = not default
        elif isinstance(default, (int, float)) and field_name != "max_path_length":
            values[field_name] = default + 1
    config = dataclasses.replace(algorithm.config_cls(), max_path_length=7, **values)
    algorithm.make_algo(config, "the policy")
    [(policy, kwargs)] = calls
    assert policy == "the policy"
    expected = {
        name: getattr(config, name)
        for name in inspect.signature(real_class).parameters if name in fields and name != "policy"
    }
    assert kwargs == expected


def test_no_run_script_prints_the_stdout_table_by_default():
    """The console gets one progress line per iteration, not a table of every key (45 rows on
    MuJoCo); --log_formats stdout,... brings it back."""
    from meta_policy_search.experiment.registry import ALGORITHMS

    for name, algorithm in ALGORITHMS.items():
        config_cls, _, _ = algorithm.load()
        assert "stdout" not in config_cls().log_formats, name


def test_help_shows_plain_text_not_restructuredtext():
    from meta_policy_search.experiment.config_parsing import make_parser, plain_text
    from meta_policy_search.experiment.registry import ALGORITHMS

    assert plain_text(":class:`~a.b.MetaSampler` and :mod:`a.b` run ``x * y`` *fast*") \
        == "MetaSampler and a.b run x * y fast"
    for name, algorithm in ALGORITHMS.items():
        text = make_parser(algorithm.config_cls).format_help()
        for markup in ("``", ":class:", ":mod:", ":func:", ":data:", ":meth:"):
            assert markup not in text, (name, markup)
