"""Meta-World envs: names, the missing-install error, the adapters, a tiny ProMP run on ML1 reach.

The tests marked ``needs_metaworld`` run in the metaworld venv (``make test-metaworld``; CI runs
it): metaworld 3.1.1 pins mujoco 3.3.0, the main venv has mujoco 4 and no metaworld.
"""

from __future__ import annotations

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


@needs_metaworld
def test_ml10_one_space_for_train_and_test_envs():
    env = make_env("ML10")
    assert (env.num_train_tasks, env.num_test_tasks) == (500, 250)
    train_env = env.task_parameters(env.sample_tasks(1)[0])[0]
    test_task = env.sample_test_tasks(1)[0]
    test_env = env.task_parameters(test_task)[0]
    assert test_env in {"drawer-open-v3", "door-close-v3", "shelf-place-v3", "sweep-into-v3",
                        "lever-pull-v3"} and train_env != test_env
    env.set_task(test_task)
    observation, _ = env.reset(seed=0)
    assert observation.shape == env.observation_space.shape == (39,)
    assert np.isfinite(env.step(np.zeros(4))[1])
    env.close()


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
