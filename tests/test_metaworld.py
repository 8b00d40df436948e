"""Meta-World envs: names, the missing-install error, the adapters, the ML10 config, Meta-World's
meta-test protocol, a tiny ProMP run on ML1 reach and a tiny TRPO-MAML run on ML10.

The tests marked ``needs_metaworld`` run in the metaworld venv (``make test-metaworld``; CI runs
it): metaworld 3.1.1 pins mujoco 3.3.0, the main venv has mujoco 4 and no metaworld.
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import importlib.util
import json
import math
import os
import pickle
import sys

import numpy as np
import pytest

from meta_policy_search.envs import make_env, metaworld_envs
from meta_policy_search.envs.metaworld_envs import MetaWorldBenchmarkEnv
from meta_policy_search.experiment.configs import ProMPConfig, env_settings, validate_config
from meta_policy_search.types import PathBatch

needs_metaworld = pytest.mark.skipif(
    importlib.util.find_spec("metaworld") is None,
    reason="metaworld is not installed (it pins mujoco 3.3): `make test-metaworld` runs these "
    "tests in .venv-metaworld",
)

EXPERIMENTS_DIR = os.path.join(os.path.dirname(__file__), os.pardir, "experiments")


# ---------------------------------------------------------------------------- without metaworld
@pytest.mark.parametrize("name", ["ML1-reach-v3", "ML10"])
def test_names_are_valid_config_envs_with_metaworld_horizon(name):
    assert metaworld_envs.is_metaworld_env_name(name)
    assert validate_config(ProMPConfig(env=name)) == []
    assert env_settings(name) == {"max_path_length": 500}


@pytest.mark.parametrize("name", ["ML1-", "ML2", "ml10", "ML10-reach-v3"])
def test_other_names_are_rejected(name):
    assert not metaworld_envs.is_metaworld_env_name(name)
    assert validate_config(ProMPConfig(env=name))[0].startswith(f"--env {name}: must be")


def test_without_metaworld_the_error_gives_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "metaworld", None)  # makes `import metaworld` fail
    with pytest.raises(ImportError, match="make venv-metaworld.*requirements-metaworld.txt"):
        make_env("ML1-reach-v3")
    with pytest.raises(ValueError, match="not a Meta-World env name"):
        make_env("ML10-reach-v3")


def test_success_rate_counts_episodes_with_a_success_at_a_real_step():
    # 1 task, 4 episodes of H = 3: success at step 1; never; only on a padded step; padded episode.
    mask = np.array([[[1, 1, 1], [1, 1, 1], [1, 1, 0], [0, 0, 0]]], dtype=np.float32)
    success = np.array([[[0, 1, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0]]], dtype=np.float32)
    distance = np.array([[[3, 2, 1.0], [3, 3, 3.0], [2, 4, 9.0], [0, 0, 0]]], dtype=np.float32)
    zeros = np.zeros((1, 4, 3), dtype=np.float32)
    paths = PathBatch(observations=zeros[..., None], actions=zeros[..., None], rewards=zeros,
                      mask=mask, env_infos={"success": success, "obj_to_target": distance})
    env = object.__new__(MetaWorldBenchmarkEnv)  # log_diagnostics reads only the paths
    stats = env.log_diagnostics(paths, prefix="Step_0-")
    assert stats == {"Step_0-SuccessRate": pytest.approx(1 / 3),
                     "Step_0-AverageFinalObjToTarget": pytest.approx((1 + 3 + 4) / 3)}


def test_meta_test_success_rate_is_the_per_task_fraction_of_successful_episodes():
    from meta_policy_search import evaluation

    # 2 tasks, 3 episode slots of H = 2. Task 0: success, none, success on a padded step only;
    # task 1: one real episode (succeeds), two padded episodes that "succeed" on padding.
    mask = np.array([[[1, 1], [1, 1], [1, 0]], [[1, 1], [0, 0], [0, 0]]], dtype=np.float32)
    success = np.array([[[0, 1], [0, 0], [0, 1]], [[1, 0], [1, 1], [0, 1]]], dtype=np.float32)
    zeros = np.zeros_like(mask)
    paths = PathBatch(observations=zeros[..., None], actions=zeros[..., None], rewards=zeros,
                      mask=mask, env_infos={"success": success})
    np.testing.assert_allclose(paths.task_success_rates(), [1 / 3, 1.0])
    assert dataclasses.replace(paths, env_infos={}).task_success_rates() is None

    steps = [{"success_rate": 0.25}, {"success_rate": 0.75}]
    lines = evaluation.success_rate_lines({"n_tasks": 4, "policies": {"promp": steps}})
    assert lines[0].startswith("Success rate after 0..1 inner steps (mean over 4 tasks")
    assert lines[1:] == ["promp: 0.25, 0.75"]
    assert evaluation.success_rate_lines({"n_tasks": 4, "policies": {"promp": [{}]}}) == []


def test_draw_tasks_takes_the_envs_test_tasks_through_the_wrappers():
    from meta_policy_search import evaluation
    from meta_policy_search.envs import normalize
    from meta_policy_search.envs.oracle_env import OracleEnv
    from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal

    class SplitPointEnv(PointEnvRandGoal):
        def sample_test_tasks(self, n_tasks):
            return [np.full(2, 0.25 + i) for i in range(n_tasks)]

    for env in (SplitPointEnv(), normalize(SplitPointEnv()), OracleEnv(SplitPointEnv())):
        tasks = evaluation.draw_tasks(env, 2, seed=0)
        np.testing.assert_array_equal(tasks, [[0.25, 0.25], [1.25, 1.25]])
    plain = PointEnvRandGoal()  # default: fresh draws of the training distribution
    plain.seed_tasks(3)
    expected = plain.sample_tasks(2)
    np.testing.assert_array_equal(evaluation.draw_tasks(plain, 2, seed=3), expected)


def test_ml10_config_is_meta_world_plus_maml_trpo():
    # metaworld-algorithms 30c9991: examples/meta_learning/maml_trpo_ml10.py and the configs it uses
    from meta_policy_search.experiment.config_parsing import parse_command_line
    from meta_policy_search.experiment.configs import TRPOMAMLConfig

    for config_cls, algo in ((ProMPConfig, "promp"), (TRPOMAMLConfig, "trpo_maml")):
        parsed = parse_command_line(config_cls, ["--env", "ML10"], algo)
        config = parsed.config
        assert (config.meta_batch_size, config.rollouts_per_meta_task, config.max_path_length,
                config.num_inner_grad_steps, config.inner_lr) == (20, 10, 500, 1, 0.1)
        assert (config.hidden_sizes, config.hidden_nonlinearity, config.init_std) == (
            (512, 512), "tanh", 1.0)
        assert (config.discount, config.gae_lambda, config.sampling_mode) == (0.99, 1.0, "rollouts")
        assert config.normalization_scale is None  # acts in the env's [-1, 1] box, as theirs
        # 20M env steps in all = 100 iterations of 20 x 10 x 500 x 2 steps
        assert config.n_itr * 20 * 10 * 500 * 2 == 20_000_000
        assert config.env_kwargs == {"benchmark_seed": 0, "reward_function_version": "v2"}
        assert parsed.paper_entry["env"] == "ML10"  # recorded in params.json
    assert config.step_size == 0.01 and config.inner_type == "log_likelihood"


# ---------------------------------------------------------------------------- the protocol
def test_protocol_defaults_are_meta_world_plus_settings():
    from meta_policy_search.evaluation.metaworld_protocol import MetaWorldProtocol

    protocol = MetaWorldProtocol()
    assert (protocol.meta_batch_size, protocol.adaptation_steps, protocol.adaptation_episodes,
            protocol.evaluation_episodes, protocol.max_path_length) == (20, 1, 10, 3, 500)
    assert (protocol.rounds("test", 5), protocol.rounds("train", 10)) == (10, 25)  # ML10
    assert protocol.rounds("test", 1) == 2  # ML1: 40 goals, 20 at a time
    assert protocol.is_benchmark_protocol()
    changed = MetaWorldProtocol.from_json('{"num_evals": 1}')
    assert changed.rounds("test", 5) == 1 and not changed.is_benchmark_protocol()
    for bad, message in (('{"num_eval": 1}', "keys among"), ("[1]", "keys among"),
                         ("{", "not JSON"), ('{"evaluation_episodes": 0}', "positive integer")):
        with pytest.raises(ValueError, match=message):
            MetaWorldProtocol.from_json(bad)


def test_protocol_deals_each_class_first_goals_to_its_slots_and_cycles_them():
    from meta_policy_search.evaluation.metaworld_protocol import GoalCycle, protocol_slots

    by_class = {name: list(range(start, start + 50)) for name, start in (("a", 0), ("b", 50))}
    slots = protocol_slots(by_class, goals_per_class=40, meta_batch_size=4)
    assert [name for name, _ in slots] == ["a", "a", "b", "b"]
    assert slots[0][1] == list(range(0, 40, 2)) and slots[3][1] == list(range(51, 90, 2))
    with pytest.raises(ValueError, match="multiple of the number of env classes"):
        protocol_slots(by_class, goals_per_class=40, meta_batch_size=3)
    with pytest.raises(ValueError, match="cannot be dealt evenly"):
        protocol_slots(by_class, goals_per_class=39, meta_batch_size=4)
    cycle = GoalCycle(slots, np.random.default_rng(0))
    rounds = np.array([cycle.next_tasks() for _ in range(40)])  # two cycles of 20 goals
    for slot, (_, goals) in enumerate(slots):
        assert sorted(rounds[:20, slot]) == goals == sorted(rounds[20:, slot])  # each goal once
    assert not np.array_equal(rounds[:20], rounds[20:])  # reshuffled when it starts over


class ScriptedSuccessEnv:
    """An env that reports success from step ``success_step`` of each episode (never: None)."""

    def __init__(self, success_step):
        self.success_step, self.t = success_step, 0

    def reset(self):
        self.t = 0
        return np.zeros(2), {}

    def step(self, action):
        self.t += 1
        success = self.success_step is not None and self.t >= self.success_step
        return np.full(2, self.t), 1.0, False, False, {"success": float(success)}


@pytest.mark.parametrize(("success_steps", "expected_a"), [
    # H = 4. Slot 0 succeeds at step 2 (episodes end at t = 2, 4, ...), slot 1 never (ends at
    # t = 4): class a's first two episodes are slot 0's (at t = 4 the lower slot comes first).
    ((2, None, 5), 1.0),
    # Slots swapped: t = 2 slot 1 succeeds; t = 4 slot 0 fails (lower slot), slot 1 not counted.
    ((None, 2, 5), 0.5),
])
def test_evaluation_counts_the_first_episodes_to_end_per_class(success_steps, expected_a):
    from meta_policy_search.evaluation.metaworld_protocol import evaluation_episodes

    envs = [ScriptedSuccessEnv(step) for step in success_steps]
    rates, returns, steps = evaluation_episodes(envs, ["a", "a", "b"], lambda obs: obs,
                                                num_episodes=2, max_path_length=4)
    # class b: success at step 5 is past H = 4, so both episodes (t = 4, 8) fail
    assert rates == {"a": expected_a, "b": 0.0}
    assert returns["b"] == [4.0, 4.0] and len(returns["a"]) == 2
    assert steps == 3 * 8  # the loop runs until class b has two episodes


def test_success_tables_list_every_class_and_the_mean():
    from meta_policy_search.evaluation import metaworld_protocol as mp

    result = {"task_success_rates": {"door-close-v3": 0.5, "lever-pull-v3": 0.25},
              "success_rate": 0.375, "num_evals": 10, "follows_benchmark_protocol": True,
              "protocol": dataclasses.asdict(mp.MetaWorldProtocol())}
    tables = {"trpo_maml": {"test": result}, "random-init": {"test": {
        **result, "task_success_rates": {"door-close-v3": 0.0, "lever-pull-v3": 0.0},
        "success_rate": 0.0}}}
    rows = list(csv.DictReader(mp.success_table_csv(tables).splitlines()))
    assert [(r["policy"], r["task"], float(r["success_rate"])) for r in rows[:3]] == [
        ("trpo_maml", "door-close-v3", 0.5), ("trpo_maml", "lever-pull-v3", 0.25),
        ("trpo_maml", "mean", 0.375)]
    markdown = mp.success_table_markdown(tables)
    assert "| task | trpo_maml | random-init |" in markdown and "Meta-World+'s protocol" in markdown
    assert "| lever-pull-v3 | 0.250 | 0.000 |" in markdown
    assert "| **mean** | **0.375** | **0.000** |" in markdown


# ---------------------------------------------------------------------------- the adapters
@pytest.fixture(scope="module")
def ml1():
    env = make_env("ML1-reach-v3")
    yield env
    env.close()


def rollout_rewards(env, task, num_steps=15):
    env.set_task(task)
    env.reset(seed=0)
    actions = np.tile([0.6, 0.4, -0.3, 0.0], (num_steps, 1))
    return np.array([env.step(action)[1] for action in actions])


@needs_metaworld
def test_ml1_tasks_come_from_the_benchmark_split(ml1):
    assert (ml1.num_train_tasks, ml1.num_test_tasks) == (50, 50)
    ml1.seed_tasks(5)
    train = ml1.sample_tasks(50)
    assert sorted(train) == list(range(50))  # without replacement while there are enough
    test = ml1.sample_test_tasks(7)
    assert all(50 <= task < 100 for task in test) and len(set(test)) == 7
    ml1.seed_tasks(5)
    assert ml1.sample_tasks(50) == train  # seeded: reproducible
    train_goals = {tuple(ml1.task_parameters(t)[1]) for t in range(50)}
    test_goals = {tuple(ml1.task_parameters(t)[1]) for t in range(50, 100)}
    assert not train_goals & test_goals
    with pytest.raises(ValueError, match="integer index in"):
        ml1.set_task(100)


@needs_metaworld
def test_ml1_set_task_changes_goal_and_reward(ml1):
    name_a, goal_a = ml1.task_parameters(0)
    name_b, goal_b = ml1.task_parameters(1)
    assert name_a == name_b == "reach-v3" and not np.allclose(goal_a, goal_b)
    rewards_a, rewards_b = rollout_rewards(ml1, 0), rollout_rewards(ml1, 1)
    assert np.isfinite(rewards_a).all() and not np.allclose(rewards_a, rewards_b)
    np.testing.assert_array_equal(rollout_rewards(ml1, 0), rewards_a)  # deterministic per task
    observation, _ = ml1.reset(seed=1)
    assert observation.shape == ml1.observation_space.shape == (39,)
    _, _, terminated, truncated, info = ml1.step(ml1.action_space.sample())
    assert (terminated, truncated) == (False, False)
    assert set(info) == set(metaworld_envs.INFO_KEYS) and info["success"] in (0.0, 1.0)


@needs_metaworld
def test_ml1_success_info_reaches_one_with_metaworlds_scripted_reach_policy(ml1):
    from metaworld.policies import SawyerReachV3Policy

    task = ml1.sample_test_tasks(1)[0]
    goal = ml1.task_parameters(task)[1][-3:]  # reach-v3: the task vector ends with the goal
    ml1.set_task(task)
    observation, _ = ml1.reset(seed=0)
    assert not observation[-3:].any()  # ML1 hides the goal from the observation
    policy, successes = SawyerReachV3Policy(), []
    for _ in range(150):
        action = policy.get_action(np.concatenate([observation[:-3], goal]))
        observation, _, _, _, info = ml1.step(action)
        successes.append(info["success"])
    assert successes[0] == 0.0 and successes[-1] == 1.0


@needs_metaworld
def test_ml1_pickled_copy_is_small_and_steps_alike(ml1):
    ml1.set_task(3)
    blob = pickle.dumps(ml1)
    assert len(blob) < 1_000_000  # the MuJoCo envs are rebuilt, not pickled
    copy = pickle.loads(blob)
    assert copy.get_task() == 3
    np.testing.assert_array_equal(rollout_rewards(copy, 3), rollout_rewards(ml1, 3))
    copy.close()


@needs_metaworld
def test_ml1_unknown_env_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match="not a Meta-World v3 env.*reach-v3"):
        make_env("ML1-reach-v9")


ML10_TRAIN = {"reach-v3", "push-v3", "pick-place-v3", "door-open-v3", "drawer-close-v3",
              "button-press-topdown-v3", "peg-insert-side-v3", "window-open-v3", "sweep-v3",
              "basketball-v3"}
ML10_TEST = {"drawer-open-v3", "door-close-v3", "shelf-place-v3", "sweep-into-v3", "lever-pull-v3"}


@pytest.fixture(scope="module")
def ml10():
    env = make_env("ML10")  # tens of seconds: Meta-World samples the goals of 15 envs
    yield env
    env.close()


@needs_metaworld
def test_ml10_all_15_envs_construct_and_step_in_one_space(ml10):
    assert (ml10.num_train_tasks, ml10.num_test_tasks) == (500, 250)
    by_split = {split: ml10.tasks_by_class(split) for split in ("train", "test")}
    assert set(by_split["train"]) == ML10_TRAIN and set(by_split["test"]) == ML10_TEST
    assert all(len(tasks) == 50 for split in by_split.values() for tasks in split.values())
    assert max(max(t) for t in by_split["train"].values()) < 500 <= min(
        min(t) for t in by_split["test"].values())
    for split in by_split.values():
        for name, tasks in split.items():
            assert ml10.task_parameters(tasks[0])[0] == name
            ml10.set_task(tasks[0])
            observation, _ = ml10.reset(seed=0)
            assert observation.shape == ml10.observation_space.shape == (39,)
            _, reward, _, _, info = ml10.step(np.full(4, 0.5))
            assert np.isfinite(reward) and info["success"] in (0.0, 1.0)


@needs_metaworld
def test_ml10_sampling_is_balanced_and_meta_training_never_draws_a_test_task(ml10):
    ml10.seed_tasks(3)
    for n_tasks in (1, 7, 20, 40, 600):
        tasks = ml10.sample_tasks(n_tasks)
        assert len(tasks) == n_tasks and all(0 <= task < 500 for task in tasks)
        counts = collections.Counter(ml10.task_parameters(task)[0] for task in tasks)
        assert set(counts) <= ML10_TRAIN and max(counts.values()) - min(
            counts.get(name, 0) for name in ML10_TRAIN) <= 1
    test = ml10.sample_test_tasks(20)
    assert collections.Counter(ml10.task_parameters(t)[0] for t in test) == dict.fromkeys(
        ML10_TEST, 4)


@needs_metaworld
def test_reward_function_version_is_passed_to_the_envs():
    with pytest.raises(ValueError, match="reward_function_version must be one of"):
        make_env("ML10", reward_function_version="v3")
    v1, v2 = make_env("ML1-reach-v3", reward_function_version="v1"), make_env("ML1-reach-v3")
    assert (v1.reward_function_version, v2.reward_function_version) == ("v1", "v2")
    rewards_v1, rewards_v2 = rollout_rewards(v1, 0), rollout_rewards(v2, 0)
    assert not np.allclose(rewards_v1, rewards_v2)  # another reward on the same states
    assert pickle.loads(pickle.dumps(v1)).reward_function_version == "v1"
    v1.close()
    v2.close()


# ---------------------------------------------------------------------------- a tiny run
@needs_metaworld
def test_tiny_promp_run_on_ml1_reach_logs_success_and_meta_tests_on_test_tasks(tmp_path):
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        import meta_testing
        from promp_run_mujoco import main as train_promp
    finally:
        sys.path.remove(EXPERIMENTS_DIR)
    from meta_policy_search.utils import logger

    run_dir = str(tmp_path / "run")
    try:
        train_promp([
            "--env", "ML1-reach-v3", "--n_itr", "2", "--meta_batch_size", "2",
            "--rollouts_per_meta_task", "2", "--max_path_length", "25", "--hidden_sizes", "16",
            "--num_ppo_steps", "2", "--executor", "iterative", "--log_formats", "csv",
            "--seed", "1", "--dump_path", run_dir,
        ])
    finally:
        logger.reset()
    with open(os.path.join(run_dir, "progress.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2
    for row in rows:
        for step in (0, 1):
            assert math.isfinite(float(row[f"Step_{step}-AverageReturn"]))
            assert 0.0 <= float(row[f"Step_{step}-SuccessRate"]) <= 1.0
            assert float(row[f"Step_{step}-AverageFinalObjToTarget"]) >= 0.0

    output_dir = str(tmp_path / "meta_test")
    meta_testing.main([run_dir, "--n_tasks", "2", "--num_adapt_steps", "1",
                    "--rollouts_per_task", "2", "--no_random_init", "--output_dir", output_dir])
    with open(os.path.join(output_dir, "meta_test.json")) as f:
        results = json.load(f)
    assert all(50 <= task < 100 for task in results["tasks"])  # ML1's test tasks
    for step in results["policies"]["promp"]:
        assert np.isfinite(step["task_returns"]).all() and len(step["task_returns"]) == 2
        assert len(step["task_success_rates"]) == 2
        assert step["success_rate"] == pytest.approx(np.mean(step["task_success_rates"]))
        assert all(0.0 <= rate <= 1.0 for rate in step["task_success_rates"])
    with open(os.path.join(output_dir, "meta_test.csv"), newline="") as f:
        assert all(0.0 <= float(row["success_rate"]) <= 1.0 for row in csv.DictReader(f))
    with open(os.path.join(output_dir, "meta_test.md")) as f:
        assert "Success rate after 0..1 inner steps" in f.read()


@needs_metaworld
def test_tiny_trpo_run_on_ml10_trains_on_train_tasks_and_meta_tests_by_the_protocol(
        tmp_path, monkeypatch):
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        import meta_testing
        from trpo_maml_run_mujoco import main as train_trpo
    finally:
        sys.path.remove(EXPERIMENTS_DIR)
    from meta_policy_search.utils import logger

    tasks_set = []
    set_task = MetaWorldBenchmarkEnv.set_task

    def recording_set_task(self, task):
        tasks_set.append(int(task))
        set_task(self, task)

    monkeypatch.setattr(MetaWorldBenchmarkEnv, "set_task", recording_set_task)
    run_dir = str(tmp_path / "run")
    try:
        train_trpo([
            "--env", "ML10", "--n_itr", "2", "--meta_batch_size", "10",
            "--rollouts_per_meta_task", "1", "--max_path_length", "10", "--hidden_sizes", "8",
            "--executor", "iterative", "--log_formats", "csv", "--seed", "1",
            "--dump_path", run_dir,
        ])
    finally:
        logger.reset()
    assert tasks_set and all(task < 500 for task in tasks_set)  # held-out tasks never sampled
    with open(os.path.join(run_dir, "params.json")) as f:
        params = json.load(f)
    assert params["env_kwargs"]["reward_function_version"] == "v2"
    assert params["paper_config_entry"]["env"] == "ML10"

    with pytest.raises(SystemExit) as exit_info:  # one line naming the flag, before any work
        meta_testing.main([run_dir, "--protocol", "metaworld", "--protocol_settings",
                           '{"num_eval": 1}'])
    assert exit_info.value.code == 2
    tasks_set.clear()
    output_dir = str(tmp_path / "meta_test")
    settings = {"meta_batch_size": 5, "adaptation_episodes": 1, "max_path_length": 10,
                "num_evals": 2}
    meta_testing.main([run_dir, "--protocol", "metaworld", "--no_random_init",
                       "--protocol_settings", json.dumps(settings), "--output_dir", output_dir])
    assert tasks_set and all(500 <= task < 750 for task in tasks_set)  # the test split only
    with open(os.path.join(output_dir, "metaworld_protocol.json")) as f:
        result = json.load(f)["policies"]["trpo_maml"]["test"]
    assert result["num_evals"] == 2 and not result["follows_benchmark_protocol"]
    assert set(result["task_success_rates"]) == ML10_TEST
    for one_round in result["rounds"]:  # one goal of every test class per round
        assert [task // 50 for task in one_round["tasks"]] == [10, 11, 12, 13, 14]
    with open(os.path.join(output_dir, "metaworld_success.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert {row["task"] for row in rows} == ML10_TEST | {"mean"}
    with open(os.path.join(output_dir, "metaworld_success.md")) as f:
        assert "NOT Meta-World+'s protocol" in f.read()


# ---------------------------------------------------------------------------- the results table
@pytest.fixture
def metaworld_results():
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        import metaworld_results
    finally:
        sys.path.remove(EXPERIMENTS_DIR)
    return metaworld_results


def write_fake_run(run_dir, algo, seed, success_by_split, follows=True, env="ML10"):
    os.makedirs(os.path.join(run_dir, "meta_test"))
    with open(os.path.join(run_dir, "params.json"), "w") as f:
        json.dump({"algo": algo, "env": env, "seed": seed,
                   "env_kwargs": {"benchmark_seed": 0, "reward_function_version": "v2"}}, f)
    with open(os.path.join(run_dir, "progress.csv"), "w") as f:
        f.write("Itr,n_timesteps,ItrTime,Step_1-SuccessRate\n")
        f.writelines(f"{i},{(i + 1) * 200000},36,{0.01 * i}\n" for i in range(12))
    policies = {algo: {split: {"success_rate": rate, "follows_benchmark_protocol": follows}
                       for split, rate in success_by_split.items()}}
    with open(os.path.join(run_dir, "meta_test", "metaworld_protocol.json"), "w") as f:
        json.dump({"checkpoint": "latest", "checkpoint_itr": 11, "policies": policies}, f)


def test_results_table_puts_our_seeds_beside_the_published_points(tmp_path, metaworld_results):
    committed = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks", "results",
                             "metaworld_ml10")
    results_dir = tmp_path / "ml10"
    results_dir.mkdir()
    with open(os.path.join(committed, "published.csv")) as f:
        (results_dir / "published.csv").write_text(f.read())
    rows = metaworld_results.comparison_rows(str(results_dir))
    assert [row[3:5] for row in rows[-2:]] == [["not run", "not run"]] * 2
    assert ["21.0%", "13.2%"] in [row[3:5] for row in rows]  # arXiv:2511.12383's abstract

    for seed, (train, test) in zip((1, 2, 3), ((0.2, 0.1), (0.3, 0.2), (0.4, 0.3))):
        write_fake_run(str(results_dir / "promp" / f"seed_{seed}"), "promp", seed,
                       {"train": train, "test": test})
    write_fake_run(str(results_dir / "trpo_maml" / "seed_1"), "trpo_maml", 1, {"test": 0.15})
    write_fake_run(str(results_dir / "trpo_maml" / "seed_2"), "trpo_maml", 2, {"test": 0.9},
                   follows=False)  # quick-check settings: left out
    metaworld_results.main([str(results_dir)])
    rows = metaworld_results.comparison_rows(str(results_dir))
    # 3 seeds: mean 0.3, std 0.1, half-width t(0.975, 2) x 0.1 / sqrt(3) = 4.303 x 0.0577 = 0.248
    assert rows[-2][3] == "30.0% ± 24.8 (95% CI, 3 seeds)"
    assert rows[-2][4] == "20.0% ± 24.8 (95% CI, 3 seeds)"
    assert rows[-1][3:5] == ["not evaluated", "15.0% (seed 1)"]
    per_seed = metaworld_results.seed_rows(str(results_dir))
    assert per_seed[1] == ["ProMP", "1", "V2", "12", "2.4e+06", "0.12", "6.5%", "20.0%", "10.0%",
                           "latest (itr 11)"]
    assert (results_dir / "results.md").read_text().count("| MAML-TRPO |") == 5  # 2 published, ours, 2 seeds
    assert ".. list-table::" in (results_dir / "results_table.rst").read_text()
    write_fake_run(str(results_dir / "promp" / "seed_4"), "promp", 4, {}, env="ML1-reach-v3")
    with pytest.raises(ValueError, match="not ML10"):
        metaworld_results.comparison_rows(str(results_dir))


def test_committed_results_table_is_the_scripts_output(metaworld_results):
    results_dir = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks", "results",
                               "metaworld_ml10")
    markdown, rst = metaworld_results.build(results_dir)
    with open(os.path.join(results_dir, "results_table.rst")) as f:
        assert f.read() == rst, "rerun experiments/metaworld_results.py"
    with open(os.path.join(results_dir, "results.md")) as f:
        assert f.read() == markdown, "rerun experiments/metaworld_results.py"
