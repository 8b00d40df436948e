"""Point envs: dynamics and rewards vs hand computations, tasks, seeding, pickling, registry."""

import importlib.util
import math
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from meta_policy_search.envs import ENV_CLASS_NAMES, make_env
from meta_policy_search.envs.point_envs.corner_envs import MetaPointEnvCorner, MetaPointEnvMomentum
from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal
from meta_policy_search.envs.point_envs.walls_env import MetaPointEnvWalls
from meta_policy_search.types import PathBatch

POINT_CLASSES = [PointEnvRandGoal, MetaPointEnvCorner, MetaPointEnvMomentum, MetaPointEnvWalls]
ACTION_BOUNDS = {
    PointEnvRandGoal: 0.1,
    MetaPointEnvCorner: 0.2,
    MetaPointEnvMomentum: 0.1,
    MetaPointEnvWalls: 0.2,
}


def walls_task(goal, gap_1, gap_2):
    return np.array([goal, gap_1, gap_2], dtype=np.float64)


# ----------------------------------------------------------------------------- PointEnvRandGoal


def test_rand_goal_step_hand_computed():
    env = PointEnvRandGoal()
    env.set_task(np.array([0.3, -0.4]))
    obs, info = env.reset(seed=0)
    np.testing.assert_array_equal(obs, [0.0, 0.0])
    assert obs.dtype == np.float32 and info == {}
    # (0.25, -0.05) clips to (0.1, -0.05).
    obs, reward, terminated, truncated, info = env.step(np.array([0.25, -0.05]))
    np.testing.assert_allclose(obs, [0.1, -0.05], rtol=1e-6)
    expected = -math.sqrt(0.2**2 + 0.35**2)
    assert reward == pytest.approx(expected, rel=1e-12)
    assert info == {"distance": pytest.approx(-expected, rel=1e-12)}
    assert not terminated and not truncated
    obs, reward, *_ = env.step(np.array([-1.0, -1.0]))
    np.testing.assert_allclose(obs, [0.0, -0.15], rtol=1e-6, atol=1e-7)
    assert reward == pytest.approx(-math.sqrt(0.3**2 + 0.25**2), rel=1e-12)


@pytest.mark.parametrize(
    "action, tolerance, expected",
    [
        ([0.05, 0.0], 0.01, True),  # at the goal
        ([0.041, 0.009], 0.01, True),  # within 0.01 on both axes
        ([0.041, 0.011], 0.01, False),  # one axis outside: the released env's square, not a disc
        ([0.03, 0.0], 0.01, False),
        ([0.05, 0.0], None, False),  # goal_tolerance=None never terminates
        ([0.03, 0.0], 0.05, True),
    ],
)
def test_rand_goal_terminates_within_tolerance_of_the_goal(action, tolerance, expected):
    env = PointEnvRandGoal(goal_tolerance=tolerance)
    env.set_task(np.array([0.05, 0.0]))
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(np.array(action))
    assert terminated is expected and not truncated
    assert reward == pytest.approx(-info["distance"]) and info["distance"] == pytest.approx(
        math.hypot(action[0] - 0.05, action[1]))
    # The batched twin ends the same episodes.
    batched = env.make_batched(2)
    batched.set_tasks([np.array([0.05, 0.0]), np.array([-0.5, 0.5])])
    batched.reset(np.arange(2), [0, 1])
    step = batched.step(np.arange(2), np.array([action, action]))
    assert step.dones.tolist() == [expected, False]
    assert step.rewards[0] == reward


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "0.01", True])
def test_rand_goal_rejects_a_bad_goal_tolerance(bad):
    with pytest.raises(ValueError, match=r"goal_tolerance must be None or a finite number >= 0, got"):
        PointEnvRandGoal(goal_tolerance=bad)


@pytest.mark.parametrize("cls", POINT_CLASSES)
def test_actions_are_clipped_to_the_action_box(cls):
    bound = ACTION_BOUNDS[cls]
    env = cls()
    np.testing.assert_allclose(env.action_space.low, [-bound, -bound], rtol=1e-6)
    np.testing.assert_allclose(env.action_space.high, [bound, bound], rtol=1e-6)
    assert env.observation_space.dtype == np.float32
    obs0, _ = env.reset(seed=1)
    obs1, *_ = env.step(np.array([5.0, -0.5 * bound]))
    # Momentum envs integrate the velocity: position moves by v0 + clipped action.
    delta = obs1[:2] - obs0[:2]
    if cls is MetaPointEnvMomentum:
        delta = obs1[2:] - obs0[2:]
    np.testing.assert_allclose(delta, [bound, -0.5 * bound], atol=1e-6)


@pytest.mark.parametrize("cls", POINT_CLASSES)
def test_step_errors(cls):
    env = cls()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        env.step(np.zeros(3))


# ---------------------------------------------------------------------------- MetaPointEnvCorner


def test_corner_sparse_reward_cases():
    env = MetaPointEnvCorner()  # sparse, radius 0.5
    env.set_task(np.array([2.0, 2.0]))
    s, s_next = np.array([0.5, 0.5]), np.array([0.6, 0.7])
    progress = math.hypot(1.5, 1.5) - math.hypot(1.4, 1.3)
    assert env.reward(s, s_next) == pytest.approx(progress, rel=1e-12)
    # Inside the L1 ball of radius 0.5 around the start: no reward.
    assert env.reward(np.array([0.1, 0.1]), np.array([0.2, 0.1])) == 0.0
    # Another corner is nearer to s': no reward even though we move towards the goal.
    assert env.reward(np.array([-0.5, 0.5]), np.array([-0.4, 0.7])) == 0.0
    env.set_task(np.array([-2.0, 2.0]))
    assert env.reward(s, s_next) == 0.0
    # Moving away from the goal in its own quadrant is penalised by the (negative) progress.
    env.set_task(np.array([2.0, 2.0]))
    assert env.reward(s_next, s) == pytest.approx(-progress, rel=1e-12)


@pytest.mark.parametrize("reward_type", ["dense", "dense_squared"])
def test_corner_dense_rewards(reward_type):
    env = MetaPointEnvCorner(reward_type=reward_type)
    env.set_task(np.array([-2.0, 2.0]))
    d = math.hypot(2.3, 1.0)  # s' = (0.3, 1.0)
    expected = -d if reward_type == "dense" else -(d**2)
    assert env.reward(np.zeros(2), np.array([0.3, 1.0])) == pytest.approx(expected, rel=1e-12)


def test_corner_sparse_rollout_telescopes():
    """Moving diagonally to (2, 2): each sparse reward is the hand-computed progress."""
    env = MetaPointEnvCorner(sparse_reward_radius=0.5)
    env.set_task(np.array([2.0, 2.0]))
    start, _ = env.reset(seed=3)
    positions = [start.astype(np.float64)]
    rewards = []
    for _ in range(8):
        obs, reward, *_ = env.step(np.array([1.0, 1.0]))
        positions.append(positions[-1] + 0.2)
        rewards.append(reward)
        np.testing.assert_allclose(obs, positions[-1], rtol=1e-6)
    goal = np.array([2.0, 2.0])
    expected = []
    for s, s_next in zip(positions[:-1], positions[1:]):
        inside = np.abs(s_next).sum() < 0.5
        expected.append(0.0 if inside else np.linalg.norm(s - goal) - np.linalg.norm(s_next - goal))
    np.testing.assert_allclose(rewards, expected, rtol=1e-9, atol=1e-12)
    assert sum(rewards) > 0


def test_corner_reset_noise_range_and_seeding():
    env = MetaPointEnvCorner()
    starts = np.array([env.reset(seed=seed)[0] for seed in range(200)])
    assert np.all(np.abs(starts) <= 0.2) and starts.std() > 0.05
    np.testing.assert_array_equal(env.reset(seed=7)[0], env.reset(seed=7)[0])
    assert not np.array_equal(env.reset(seed=7)[0], env.reset(seed=8)[0])


# -------------------------------------------------------------------------- MetaPointEnvMomentum


def test_momentum_dynamics_and_sparse_reward():
    env = MetaPointEnvMomentum()  # sparse, radius 2
    env.set_task(np.array([2.0, -2.0]))
    obs, _ = env.reset(seed=4)
    assert obs.shape == (4,) and obs.dtype == np.float32
    s, v = obs[:2].astype(np.float64), obs[2:].astype(np.float64)
    assert np.all(np.abs(s) <= 0.2) and np.all(np.abs(v) <= 0.1)
    goal = np.array([2.0, -2.0])
    for action, clipped in [((0.5, 0.0), (0.1, 0.0)), ((-0.05, 0.02), (-0.05, 0.02))] * 3:
        v = v + np.array(clipped)
        s = s + v
        obs, reward, *_, info = env.step(np.array(action))
        np.testing.assert_allclose(obs, np.concatenate([s, v]), rtol=1e-5, atol=1e-6)
        dist = np.linalg.norm(s - goal)
        assert info["distance"] == pytest.approx(dist, rel=1e-5)
        assert reward == pytest.approx(max(2.0 - dist, 0.0), rel=1e-5, abs=1e-6)


def test_momentum_reward_values():
    env = MetaPointEnvMomentum(sparse_reward_radius=2.0)
    env.set_task(np.array([2.0, 2.0]))
    assert env.reward(np.array([1.0, 2.0])) == pytest.approx(1.0)
    assert env.reward(np.array([-1.0, 2.0])) == 0.0  # outside the radius: clipped at 0
    env = MetaPointEnvMomentum(reward_type="dense_squared")
    env.set_task(np.array([2.0, 2.0]))
    assert env.reward(np.array([-1.0, 2.0])) == pytest.approx(-9.0)


# ----------------------------------------------------------------------------- MetaPointEnvWalls


def test_walls_projection_geometry():
    env = MetaPointEnvWalls()
    env.set_task(walls_task([2, 2], [1.0, 0.0], [2.0, 0.0]))
    # Crossing the inner wall far from its gap (1, 0): projected back onto radius 1.
    pos, blocked = env.apply_walls(np.array([0.0, 0.95]), np.array([0.0, 1.15]))
    assert blocked
    np.testing.assert_allclose(pos, [0.0, 1.0], atol=1e-5)
    assert np.linalg.norm(pos) < 1.0
    # Through the gap: unchanged.
    pos, blocked = env.apply_walls(np.array([0.95, 0.0]), np.array([1.15, 0.1]))
    assert not blocked
    np.testing.assert_array_equal(pos, [1.15, 0.1])
    # Outer wall, away from its gap (2, 0): projected onto radius 2, keeping the direction.
    pos, blocked = env.apply_walls(np.array([-1.2, 1.5]), np.array([-1.3, 1.7]))
    assert blocked
    np.testing.assert_allclose(pos, np.array([-1.3, 1.7]) * 2 / math.hypot(1.3, 1.7), atol=1e-5)
    # Outer wall through its gap, and crossing inward: unchanged.
    assert not env.apply_walls(np.array([1.9, 0.2]), np.array([2.1, 0.3]))[1]
    assert not env.apply_walls(np.array([0.0, 1.1]), np.array([0.0, 0.9]))[1]
    # Moving without crossing: unchanged.
    assert not env.apply_walls(np.array([0.0, 1.2]), np.array([0.0, 1.4]))[1]


def test_walls_rollout_blocked_and_through_gaps():
    env = MetaPointEnvWalls()  # dense
    goal = np.array([2.0, 2.0])
    env.set_task(walls_task(goal, [0.0, -1.0], [0.0, -2.0]))  # gaps on the far side
    env.reset(seed=0)
    radii, hits = [], []
    for _ in range(15):
        obs, reward, _, _, info = env.step(np.array([0.0, 0.2]))
        radii.append(np.linalg.norm(obs))
        hits.append(info["wall_hit"])
        # Reward is computed on the projected position the agent actually reached.
        assert reward == pytest.approx(-np.linalg.norm(obs.astype(np.float64) - goal), rel=1e-5)
        assert info["distance"] == pytest.approx(-reward)
    assert max(radii) < 1.0 and sum(hits) >= 5

    env.set_task(walls_task(goal, [0.0, 1.0], [0.0, 2.0]))  # gaps straight ahead
    start, _ = env.reset(seed=0)
    for _ in range(15):
        obs, _, _, _, info = env.step(np.array([0.0, 0.2]))
        assert info["wall_hit"] == 0.0
    np.testing.assert_allclose(obs, start + np.array([0.0, 3.0]), rtol=1e-5)


def test_walls_sparse_reward_is_zero_not_none_outside_radius():
    env = MetaPointEnvWalls(reward_type="sparse", sparse_reward_radius=2.0)
    env.set_task(walls_task([2, 2], [1.0, 0.0], [2.0, 0.0]))
    assert env.reward(np.zeros(2), np.array([0.1, 0.1])) == 0.0
    s, s_next = np.array([1.0, 1.0]), np.array([1.1, 1.2])
    expected = math.hypot(1.0, 1.0) - math.hypot(0.9, 0.8)
    assert env.reward(s, s_next) == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------------------------------- tasks and seeds


@pytest.mark.parametrize("cls", POINT_CLASSES)
def test_task_sampling_reproducible_and_in_range(cls):
    env_a, env_b = cls(), cls()
    env_a.seed_tasks(123)
    env_b.seed_tasks(123)
    tasks_a, tasks_b = env_a.sample_tasks(50), env_b.sample_tasks(50)
    assert len(tasks_a) == 50
    for task_a, task_b in zip(tasks_a, tasks_b):
        np.testing.assert_array_equal(task_a, task_b)
    env_b.seed_tasks(124)
    assert not all(np.array_equal(a, b) for a, b in zip(tasks_a, env_b.sample_tasks(50)))
    stacked = np.stack(tasks_a)
    if cls is PointEnvRandGoal:
        assert stacked.shape == (50, 2) and np.all(np.abs(stacked) <= 0.5)
        assert stacked.min() < -0.3 and stacked.max() > 0.3
    else:
        goals = stacked[:, 0] if cls is MetaPointEnvWalls else stacked
        assert np.all(np.abs(goals) == 2.0)
        assert len({tuple(g) for g in goals}) == 4  # 50 draws hit every corner (p > 0.9999)
    if cls is MetaPointEnvWalls:
        np.testing.assert_allclose(np.linalg.norm(stacked[:, 1], axis=1), 1.0)
        np.testing.assert_allclose(np.linalg.norm(stacked[:, 2], axis=1), 2.0)
    for task in tasks_a[:5]:
        env_a.set_task(task)
        np.testing.assert_array_equal(env_a.get_task(), task)
    with pytest.raises(ValueError, match="n_tasks"):
        env_a.sample_tasks(0)


def test_sample_tasks_does_not_touch_global_numpy_rng():
    np.random.seed(0)
    state = np.random.get_state()[1].copy()
    env = MetaPointEnvWalls()
    env.seed_tasks(0)
    env.sample_tasks(10)
    env.reset(seed=0)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


@pytest.mark.parametrize(
    "cls, bad, pattern",
    [
        (PointEnvRandGoal, np.zeros(3), r"shape \(2,\)"),
        (PointEnvRandGoal, np.array([0.6, 0.0]), r"\[-0.5, 0.5\]"),
        (PointEnvRandGoal, np.array([np.nan, 0.0]), "finite"),
        (MetaPointEnvCorner, np.array([1.0, 2.0]), "corners"),
        (MetaPointEnvMomentum, "north", r"shape \(2,\)"),
        (MetaPointEnvWalls, np.array([2.0, 2.0]), r"shape \(3, 2\)"),
        (MetaPointEnvWalls, walls_task([2, 2], [1.0, 0.0], [1.0, 0.0]), "radius"),
        (MetaPointEnvWalls, walls_task([0, 2], [1.0, 0.0], [2.0, 0.0]), "corners"),
    ],
)
def test_set_task_rejects_bad_tasks(cls, bad, pattern):
    with pytest.raises(ValueError, match=pattern):
        cls().set_task(bad)


def test_constructor_validation():
    with pytest.raises(ValueError, match="reward_type"):
        MetaPointEnvCorner(reward_type="shaped")
    with pytest.raises(ValueError, match="sparse_reward_radius"):
        MetaPointEnvMomentum(sparse_reward_radius=-1.0)


@pytest.mark.parametrize("cls", POINT_CLASSES)
def test_pickle_round_trip_continues_identically(cls):
    env = cls()
    env.seed_tasks(5)
    env.set_task(env.sample_tasks(1)[0])
    env.reset(seed=11)
    env.step(np.array([0.05, 0.1]))
    copy = pickle.loads(pickle.dumps(env))
    np.testing.assert_array_equal(copy.get_task(), env.get_task())
    for action in ([0.1, -0.3], [0.0, 0.2]):
        out, out_copy = env.step(np.array(action)), copy.step(np.array(action))
        np.testing.assert_array_equal(out[0], out_copy[0])
        assert out[1:] == out_copy[1:]
    # Reset noise and task streams continue identically too.
    np.testing.assert_array_equal(env.reset()[0], copy.reset()[0])
    np.testing.assert_array_equal(env.sample_tasks(3), copy.sample_tasks(3))


@pytest.mark.parametrize("cls", POINT_CLASSES)
def test_gymnasium_env_checker(cls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infinite observation bounds are intended
        check_env(cls(), skip_render_check=True)


# -------------------------------------------------------------------------------- diagnostics


def test_log_diagnostics_mask_weighted():
    dist = np.array([[[3.0, 2.0, 1.0], [4.0, 5.0, 9.0]], [[1.0, 1.0, 0.5], [2.0, 0.0, 0.0]]])
    mask = np.array([[[1, 1, 1], [1, 1, 0]], [[1, 1, 1], [1, 0, 0]]], dtype=np.float32)
    paths = PathBatch(
        observations=np.zeros((2, 2, 3, 2), np.float32),
        actions=np.zeros((2, 2, 3, 2), np.float32),
        rewards=-dist.astype(np.float32),
        mask=mask,
        env_infos={"distance": dist.astype(np.float32)},
    )
    stats = PointEnvRandGoal().log_diagnostics(paths, prefix="Step_1-")
    finals = [1.0, 5.0, 0.5, 2.0]  # last real step of each episode
    real = [3, 2, 1, 4, 5, 1, 1, 0.5, 2]
    assert stats["Step_1-AverageFinalDistance"] == pytest.approx(np.mean(finals))
    assert stats["Step_1-MinFinalDistance"] == pytest.approx(0.5)
    assert stats["Step_1-MaxFinalDistance"] == pytest.approx(5.0)
    assert stats["Step_1-AverageDistance"] == pytest.approx(np.mean(real))
    empty = PathBatch(paths.observations, paths.actions, paths.rewards, paths.mask)
    assert PointEnvRandGoal().log_diagnostics(empty) == {}


# ------------------------------------------------------------------------------------ registry


@pytest.mark.parametrize("cls", POINT_CLASSES)
def test_make_env_builds_point_envs(cls):
    env = make_env(cls.__name__)
    assert type(env) is cls
    assert cls.__name__ in ENV_CLASS_NAMES


def test_make_env_forwards_kwargs_and_rejects_unknown_names():
    env = make_env("MetaPointEnvCorner", reward_type="dense", sparse_reward_radius=1.0)
    assert env.reward_type == "dense" and env.sparse_reward_radius == 1.0
    with pytest.raises(ValueError, match="Did you mean 'PointEnvRandGoal'") as err:
        make_env("PointEnvRandGol")
    assert "HalfCheetahRandDirecEnv" in str(err.value)
    with pytest.raises(ValueError, match="unknown env name"):
        make_env("CartPole")
    assert len(ENV_CLASS_NAMES) == len(set(ENV_CLASS_NAMES)) == 16


def test_the_registry_is_the_one_list_of_built_in_envs():
    """Each entry names its class and the module that defines it; the families partition it."""
    from meta_policy_search.envs.registry import (
        BUILT_IN_ENVS,
        MUJOCO_ENV_CLASS_NAMES,
        POINT_ENV_CLASS_NAMES,
        env_class,
    )

    assert POINT_ENV_CLASS_NAMES + MUJOCO_ENV_CLASS_NAMES == ENV_CLASS_NAMES == tuple(BUILT_IN_ENVS)
    assert set(POINT_ENV_CLASS_NAMES) == {cls.__name__ for cls in POINT_CLASSES}
    names = ENV_CLASS_NAMES if importlib.util.find_spec("mujoco") else POINT_ENV_CLASS_NAMES
    for name in names:
        cls = env_class(name)
        assert (cls.__name__, cls.__module__) == (name, BUILT_IN_ENVS[name])
    with pytest.raises(ValueError, match="'CartPole' is not a built-in env; valid names: "):
        env_class("CartPole")


def test_each_family_package_exports_its_registry_entries():
    """The original ProMP code's public names (``meta_policy_search.envs.mujoco_envs.
    HalfCheetahRandDirecEnv``, ...) stay importable, and name exactly the registry's envs."""
    from meta_policy_search.envs import point_envs
    from meta_policy_search.envs.registry import MUJOCO_ENV_CLASS_NAMES, POINT_ENV_CLASS_NAMES

    families = [(point_envs, POINT_ENV_CLASS_NAMES)]
    if importlib.util.find_spec("mujoco"):
        families.append((importlib.import_module("meta_policy_search.envs.mujoco_envs"),
                         MUJOCO_ENV_CLASS_NAMES))
    for package, names in families:
        assert sorted(package.__all__) == sorted(names), package.__name__
        for name in names:
            assert getattr(package, name).__name__ == name


def test_importing_envs_does_not_import_mujoco():
    code = (
        "import sys, meta_policy_search.envs as e; e.make_env('PointEnvRandGoal'); "
        "print(any(m.startswith('meta_policy_search.envs.mujoco_envs') or m == 'mujoco' "
        "for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
