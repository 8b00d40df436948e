"""Tests of the MuJoCo meta-envs against hand-computed rewards, terminations and task rules."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from meta_policy_search.envs.base import MetaEnv
from meta_policy_search.envs.mujoco_envs.ant_rand_direc import AntRandDirecEnv
from meta_policy_search.envs.mujoco_envs.ant_rand_direc_2d import AntRandDirec2DEnv
from meta_policy_search.envs.mujoco_envs.ant_rand_goal import AntRandGoalEnv
from meta_policy_search.envs.mujoco_envs.diagnostics import (
    forward_return_diagnostics,
    velocity_diagnostics,
)
from meta_policy_search.envs.mujoco_envs.half_cheetah_rand_direc import HalfCheetahRandDirecEnv
from meta_policy_search.envs.mujoco_envs.half_cheetah_rand_vel import HalfCheetahRandVelEnv
from meta_policy_search.envs.mujoco_envs.hopper_rand_params import HopperRandParamsEnv
from meta_policy_search.envs.mujoco_envs.humanoid_rand_direc import HumanoidRandDirecEnv
from meta_policy_search.envs.mujoco_envs.humanoid_rand_direc_2d import HumanoidRandDirec2DEnv
from meta_policy_search.envs.mujoco_envs.paper_physics import use_gym_humanoid_hips
from meta_policy_search.envs.mujoco_envs.swimmer_rand_vel import SwimmerRandVelEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_direc import Walker2DRandDirecEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_params import Walker2DRandParamsEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_vel import Walker2DRandVelEnv
from meta_policy_search.types import PathBatch

# class -> (obs_dim, act_dim, frame_skip)
SPECS = {
    HalfCheetahRandDirecEnv: (17, 6, 5),
    HalfCheetahRandVelEnv: (17, 6, 5),
    AntRandDirecEnv: (105, 8, 5),
    AntRandDirec2DEnv: (105, 8, 5),
    AntRandGoalEnv: (107, 8, 5),
    HumanoidRandDirecEnv: (348, 17, 5),
    HumanoidRandDirec2DEnv: (348, 17, 5),
    Walker2DRandDirecEnv: (17, 6, 8),
    Walker2DRandVelEnv: (17, 6, 8),
    SwimmerRandVelEnv: (8, 2, 4),
    HopperRandParamsEnv: (11, 3, 4),
    Walker2DRandParamsEnv: (17, 6, 4),
}
ALL = list(SPECS)
DIREC_1D = [HalfCheetahRandDirecEnv, AntRandDirecEnv, HumanoidRandDirecEnv, Walker2DRandDirecEnv]
DIREC_2D = [AntRandDirec2DEnv, HumanoidRandDirec2DEnv]
VELOCITY = {HalfCheetahRandVelEnv: (0.0, 3.0), Walker2DRandVelEnv: (0.0, 10.0),
            SwimmerRandVelEnv: (0.1, 0.2)}
RAND_PARAMS = [HopperRandParamsEnv, Walker2DRandParamsEnv]
TERMINATING = [AntRandDirecEnv, AntRandDirec2DEnv, HumanoidRandDirecEnv, HumanoidRandDirec2DEnv,
               Walker2DRandDirecEnv, Walker2DRandVelEnv, HopperRandParamsEnv,
               Walker2DRandParamsEnv]
NEVER_TERMINATING = [c for c in ALL if c not in TERMINATING]


def _ids(classes):
    return [c.__name__ for c in classes]


def _actions(env, n, seed=0):
    rng = np.random.default_rng(seed)
    low, high = env.action_space.low, env.action_space.high
    return rng.uniform(low, high, size=(n, *env.action_space.shape))


def _tasks_equal(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    return np.array_equal(a, b)


def _com_xy(env):
    mass = env.model.body_mass
    return (mass @ env.data.xipos / mass.sum())[:2].copy()


def _snapshot(env):
    """Positions the reward references need, read straight from the simulator."""
    torso = env.model.body("torso").id
    return {"x": float(env.data.qpos[0]), "torso": env.data.xpos[torso, :2].copy(),
            "com": _com_xy(env)}


def reference_reward(env, before, after, action):
    """envs.md's reward written out independently of the env classes."""
    dt = env.model.opt.timestep * env.frame_skip
    sq = float(np.sum(action**2))
    v = (after["x"] - before["x"]) / dt
    cfrc = env.data.cfrc_ext
    ant_contact = 5e-4 * np.sum(np.clip(cfrc, -1, 1) ** 2)
    humanoid_contact = min(5e-7 * np.sum(cfrc**2), 10.0)
    task = env.get_task()
    if isinstance(env, HalfCheetahRandDirecEnv):
        return task * v - 0.05 * sq
    if isinstance(env, HalfCheetahRandVelEnv):
        return -abs(v - task) - 0.05 * sq
    if isinstance(env, AntRandDirecEnv):
        return task * (after["torso"][0] - before["torso"][0]) / dt - 0.5 * sq - ant_contact + 1
    if isinstance(env, AntRandDirec2DEnv):
        return task @ (after["torso"] - before["torso"]) / dt - 0.5 * sq - ant_contact + 1
    if isinstance(env, AntRandGoalEnv):
        return -np.sum(np.abs(after["torso"] - task)) - 0.1 * sq - ant_contact
    if isinstance(env, (HumanoidRandDirecEnv, HumanoidRandDirec2DEnv)):
        d = np.array([task, 0.0]) if np.ndim(task) == 0 else task
        lin = 0.25 * d @ (after["com"] - before["com"]) / env.model.opt.timestep
        return lin - 0.1 * sq - humanoid_contact + 5
    if isinstance(env, Walker2DRandDirecEnv):
        return task * v + 1 - 1e-3 * sq
    if isinstance(env, Walker2DRandVelEnv):
        return -abs(v - task) + 15 - 1e-3 * sq
    if isinstance(env, SwimmerRandVelEnv):
        return -abs(v - task) - 1e-4 * sq
    if isinstance(env, (HopperRandParamsEnv, Walker2DRandParamsEnv)):
        return v + 1 - 1e-3 * sq
    raise AssertionError(type(env))


@pytest.mark.parametrize("cls", ALL, ids=_ids(ALL))
def test_spaces_info_and_reward_match_reference(cls):
    env = cls()
    obs_dim, act_dim, frame_skip = SPECS[cls]
    assert isinstance(env, MetaEnv)
    assert env.observation_space.shape == (obs_dim,)
    assert env.action_space.shape == (act_dim,)
    assert env.frame_skip == frame_skip
    env.seed_tasks(1)
    env.set_task(env.sample_tasks(1)[0])
    obs, _ = env.reset(seed=0)
    assert obs.shape == (obs_dim,) and env.observation_space.contains(obs)
    keys = None
    for action in _actions(env, 3):
        before = _snapshot(env)
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs.shape == (obs_dim,)
        assert truncated is False and isinstance(terminated, bool)
        assert all(type(value) is float for value in info.values()), info
        keys = keys or list(info)
        assert list(info) == keys
        assert reward == pytest.approx(sum(v for k, v in info.items() if k.startswith("reward_")))
        expected = reference_reward(env, before, _snapshot(env), action)
        assert reward == pytest.approx(expected, rel=1e-9, abs=1e-9)


def _step_from(env, task, seed, action):
    env.set_task(task)
    env.reset(seed=seed)
    return env.step(action)


@pytest.mark.parametrize("cls", DIREC_1D + DIREC_2D, ids=_ids(DIREC_1D + DIREC_2D))
def test_opposite_direction_negates_forward_term_exactly(cls):
    env = cls()
    action = _actions(env, 1)[0]
    task = 1.0 if cls in DIREC_1D else np.array([0.6, -0.8])
    _, r_pos, _, _, info_pos = _step_from(env, task, 3, action)
    _, r_neg, _, _, info_neg = _step_from(env, -task, 3, action)
    assert info_pos["reward_forward"] != 0.0
    assert info_neg["reward_forward"] == -info_pos["reward_forward"]
    for key in info_pos:
        if key not in ("reward_forward", "forward_vel"):
            assert info_neg[key] == info_pos[key], key
    assert r_pos - r_neg == pytest.approx(2 * info_pos["reward_forward"])


@pytest.mark.parametrize("cls", list(VELOCITY), ids=_ids(VELOCITY))
def test_velocity_reward_and_swimmer_sign(cls):
    env = cls()
    action = _actions(env, 1)[0]
    env.reset(seed=4)
    x_before = float(env.data.qpos[0])
    _, _, _, _, info = env.step(action)
    v = (float(env.data.qpos[0]) - x_before) / env.dt
    assert info["forward_vel"] == pytest.approx(v, rel=1e-12)
    # A target equal to the achieved velocity must beat one far from it (the original swimmer
    # had the sign flipped and preferred the far target).
    _, _, _, _, near = _step_from(env, v, 4, action)
    _, _, _, _, far = _step_from(env, v + 1.0, 4, action)
    assert near["reward_forward"] == pytest.approx(0.0, abs=1e-12)
    assert far["reward_forward"] == pytest.approx(-1.0)


@pytest.mark.parametrize("cls", ALL, ids=_ids(ALL))
def test_sample_tasks_reproducible_and_in_range(cls):
    env = cls()
    env.seed_tasks(7)
    first = env.sample_tasks(20)
    np.random.seed(123)  # the global RNG must play no part
    env.seed_tasks(7)
    second = env.sample_tasks(20)
    assert len(first) == 20
    for a, b in zip(first, second):
        assert _tasks_equal(a, b)
        env.set_task(a)  # every sampled task is accepted
    if cls in DIREC_1D:
        assert set(first) == {-1.0, 1.0}
    elif cls in DIREC_2D:
        np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0)
    elif cls in VELOCITY:
        low, high = VELOCITY[cls]
        assert all(low <= v < high for v in first)
    elif cls is AntRandGoalEnv:
        assert np.max(np.linalg.norm(first, axis=1)) <= 3.0
    else:
        for task in first:
            for name, mult in task.items():
                base = 1.3 if name == "dof_damping" else 1.5
                assert mult.shape == getattr(env.model, name).shape
                assert np.all(mult >= base**-3) and np.all(mult <= base**3)
    with pytest.raises(ValueError, match="n_tasks"):
        env.sample_tasks(0)


def _bad_tasks(env):
    if isinstance(env, (HalfCheetahRandDirecEnv, AntRandDirecEnv, HumanoidRandDirecEnv,
                        Walker2DRandDirecEnv)):
        return [0.0, 2, -0.5, np.nan, "left", [1.0, 1.0], True]
    if isinstance(env, (AntRandDirec2DEnv, HumanoidRandDirec2DEnv)):
        return [np.array([1.0, 1.0]), [1.0], [np.nan, 0.0], 1.0]
    if isinstance(env, (HalfCheetahRandVelEnv, Walker2DRandVelEnv, SwimmerRandVelEnv)):
        return [np.nan, np.inf, [1.0, 2.0], "fast", None]
    if isinstance(env, AntRandGoalEnv):
        return [[1.0], [np.nan, 0.0], 2.0, [[1.0, 2.0]]]
    good = env.default_task()
    missing = dict(good)
    del missing["body_mass"]
    wrong_shape = {**good, "body_mass": np.ones(3)}
    negative = {**good, "dof_damping": -good["dof_damping"]}
    return [missing, wrong_shape, negative, {**good, "gravity": np.ones(3)}, 1.0]


@pytest.mark.parametrize("cls", ALL, ids=_ids(ALL))
def test_invalid_tasks_raise(cls):
    env = cls()
    before = env.get_task()
    for task in _bad_tasks(env):
        with pytest.raises(ValueError):
            env.set_task(task)
    assert _tasks_equal(before, env.get_task())


@pytest.mark.parametrize("cls", RAND_PARAMS, ids=_ids(RAND_PARAMS))
def test_rand_params_change_the_physics(cls):
    env = cls()
    originals = {name: getattr(env.model, name).copy() for name in env.default_task()}
    env.seed_tasks(0)
    task = env.sample_tasks(1)[0]
    env.set_task(task)
    for name, original in originals.items():
        np.testing.assert_allclose(getattr(env.model, name), original * task[name], rtol=1e-12)
    actions = _actions(env, 10)

    def rollout(task):
        env.set_task(task)
        env.reset(seed=0)
        return np.array([env.step(a)[0] for a in actions])

    changed, default = rollout(task), rollout(env.default_task())
    for name, original in originals.items():  # the default task restores the model exactly
        np.testing.assert_array_equal(getattr(env.model, name), original)
    assert not np.allclose(changed, default)
    np.testing.assert_array_equal(rollout(task), changed)
    returned = env.get_task()
    returned["body_mass"][:] = 100.0  # get_task returns a copy
    np.testing.assert_array_equal(env.get_task()["body_mass"], task["body_mass"])
    np.testing.assert_allclose(env.model.body_mass, originals["body_mass"] * task["body_mass"])


def _unhealthy(env):
    """Move the state well outside every healthy range this env may have."""
    qpos, qvel = env.data.qpos.copy(), env.data.qvel.copy()
    if isinstance(env, (HopperRandParamsEnv,)):
        qpos[2] = 1.0  # torso angle, healthy range (-0.2, 0.2)
    else:
        qpos[1 if env.model.nq < 10 else 2] = 5.0  # height, above every healthy range
    env.set_state(qpos, qvel)


@pytest.mark.parametrize("cls", ALL, ids=_ids(ALL))
def test_termination(cls):
    env = cls()
    env.reset(seed=0)
    actions = _actions(env, 5)
    assert not any(env.step(a)[2] for a in actions[:2])  # healthy start
    _unhealthy(env)
    terminated = [env.step(a)[2] for a in actions[2:]]
    assert all(terminated) if cls in TERMINATING else not any(terminated)


@pytest.mark.parametrize("cls", ALL, ids=_ids(ALL))
def test_pickle_round_trip_keeps_task_and_steps(cls):
    env = cls()
    env.seed_tasks(2)
    env.set_task(env.sample_tasks(1)[0])
    env.reset(seed=11)
    actions = _actions(env, 6, seed=1)
    env.step(actions[0])
    copy = pickle.loads(pickle.dumps(env))
    assert _tasks_equal(env.get_task(), copy.get_task())
    np.testing.assert_array_equal(copy.model.body_mass, env.model.body_mass)
    for a in actions[1:3]:  # mid-episode state is carried over
        np.testing.assert_array_equal(copy.step(a)[0], env.step(a)[0])
    for e in (env, copy):
        e.reset(seed=5)
    for a in actions[3:]:
        out, out_copy = env.step(a), copy.step(a)
        np.testing.assert_array_equal(out[0], out_copy[0])
        assert out[1:] == out_copy[1:]
    for task, copied_task in zip(env.sample_tasks(3), copy.sample_tasks(3)):  # task RNG state
        assert _tasks_equal(task, copied_task)


def _paths(env_infos, mask):
    t, r, h = mask.shape
    return PathBatch(
        observations=np.zeros((t, r, h, 1), np.float32), actions=np.zeros((t, r, h, 1), np.float32),
        rewards=np.zeros((t, r, h), np.float32), mask=mask, env_infos=env_infos)


def test_diagnostics_are_mask_weighted():
    mask = np.ones((2, 1, 3), np.float32)
    mask[1, 0, 2] = 0.0  # episode 2 ended after 2 steps; its third entry is padding
    vel = np.array([[[1.0, 2.0, 3.0]], [[4.0, 5.0, 999.0]]], np.float32)
    ctrl = -np.array([[[1.0, 1.0, 1.0]], [[3.0, 3.0, 999.0]]], np.float32)
    stats = velocity_diagnostics(_paths({"forward_vel": vel, "reward_ctrl": ctrl}, mask), "S-")
    assert stats["S-AvgForwardVel"] == pytest.approx((1 + 2 + 3 + 4 + 5) / 5)
    assert stats["S-AvgFinalForwardVel"] == pytest.approx((3 + 5) / 2)
    assert stats["S-AvgCtrlCost"] == pytest.approx((3 * 1 + 2 * 3) / 5)  # a mean, not a std
    stats = forward_return_diagnostics(_paths({"reward_forward": vel, "reward_ctrl": ctrl}, mask))
    assert stats["AverageForwardReturn"] == pytest.approx((6 + 9) / 2)
    assert stats["MaxForwardReturn"] == pytest.approx(9)
    assert stats["MinForwardReturn"] == pytest.approx(6)
    assert stats["StdForwardReturn"] == pytest.approx(1.5)
    with pytest.raises(ValueError, match="forward_vel"):
        velocity_diagnostics(_paths({"reward_ctrl": ctrl}, mask))


@pytest.mark.parametrize("cls", ALL, ids=_ids(ALL))
def test_log_diagnostics_on_real_rollouts(cls):
    env = cls()
    horizon = 4
    infos = []
    env.reset(seed=0)
    for a in _actions(env, horizon):
        infos.append(env.step(a)[4])
    env_infos = {k: np.array([[[i[k] for i in infos]]], np.float32) for k in infos[0]}
    stats = env.log_diagnostics(_paths(env_infos, np.ones((1, 1, horizon), np.float32)), "Step_0-")
    assert stats and all(k.startswith("Step_0-") for k in stats)
    assert all(np.isfinite(v) for v in stats.values())


# meta-env -> gymnasium env with the same model (after paper_physics' patches), frame skip and
# reset noise
GYMNASIUM_TWINS = {HalfCheetahRandDirecEnv: "HalfCheetah-v5", HumanoidRandDirec2DEnv: "Humanoid-v5"}


@pytest.mark.parametrize("cls", list(GYMNASIUM_TWINS), ids=_ids(GYMNASIUM_TWINS))
def test_physics_and_termination_are_gymnasiums(cls):
    """Same seed and actions: the same states and end of episode as gymnasium's own env.

    The Humanoid analysis of docs/reproduce.rst rests on this (our episode lengths are gymnasium's).
    """
    import gymnasium

    ours, twin = cls(), gymnasium.make(GYMNASIUM_TWINS[cls]).unwrapped
    if cls is HumanoidRandDirec2DEnv:
        use_gym_humanoid_hips(twin.model)  # gym 0.10.5's model, as ours (tests/test_paper_physics.py)
    for seed in (0, 1):
        ours.reset(seed=seed)
        twin.reset(seed=seed)
        for action in _actions(ours, 60, seed=seed):
            _, _, ours_done, _, _ = ours.step(action)
            _, _, twin_done, _, _ = twin.step(action)
            np.testing.assert_array_equal(ours.data.qpos, twin.data.qpos)
            np.testing.assert_array_equal(ours.data.qvel, twin.data.qvel)
            assert ours_done == twin_done
            if ours_done:
                break


def _gymnasium_robot(env):
    """The gymnasium v5 env class that ``env``'s class builds on (after our classes in the MRO)."""
    return next(k for k in type(env).__mro__ if k.__module__.startswith("gymnasium.envs.mujoco.")
                and k.__name__ != "MujocoEnv")


@pytest.mark.parametrize("cls", ALL, ids=_ids(ALL))
def test_observation_and_termination_are_gymnasiums(cls):
    """Our row maths (the only copy, also run batched) against gymnasium's own ``_get_obs`` and
    healthy test on the same simulator state, at reset and after steps that end the episode."""
    env = cls()
    robot = _gymnasium_robot(env)
    env.seed_tasks(0)
    env.set_task(env.sample_tasks(1)[0])
    obs, _ = env.reset(seed=3)
    np.testing.assert_array_equal(obs, robot._get_obs(env))
    ended = False
    for action in _actions(env, 40, seed=2) * 1.5:
        obs, _, terminated, _, _ = env.step(action)
        np.testing.assert_array_equal(obs, robot._get_obs(env))
        healthy = robot.is_healthy.fget(env) if hasattr(robot, "is_healthy") else True
        assert terminated == (not healthy and getattr(env, "_terminate_when_unhealthy", False))
        ended |= terminated
    if cls in TERMINATING and not ended:
        _unhealthy(env)
        _, _, terminated, _, _ = env.step(_actions(env, 1)[0])
        assert terminated and not robot.is_healthy.fget(env)
