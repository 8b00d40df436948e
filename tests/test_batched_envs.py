"""Each batched env against its single (gymnasium-based) twin: same tasks, reset seeds and actions
must give bit-identical observations, rewards, termination flags and infos."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from meta_policy_search.envs import normalize
from meta_policy_search.envs.batched import EnvList, make_batched_env
from meta_policy_search.envs.point_envs import (
    MetaPointEnvCorner,
    MetaPointEnvMomentum,
    MetaPointEnvWalls,
    PointEnvRandGoal,
)
from meta_policy_search.envs.registry import MUJOCO_ENV_CLASS_NAMES

POINT_ENVS = {
    "PointEnvRandGoal": PointEnvRandGoal,
    "MetaPointEnvCorner-sparse": lambda: MetaPointEnvCorner(reward_type="sparse"),
    "MetaPointEnvCorner-dense": lambda: MetaPointEnvCorner(reward_type="dense"),
    "MetaPointEnvCorner-dense_squared": lambda: MetaPointEnvCorner(reward_type="dense_squared"),
    "MetaPointEnvMomentum-sparse": MetaPointEnvMomentum,
    "MetaPointEnvMomentum-dense": lambda: MetaPointEnvMomentum(reward_type="dense"),
    "MetaPointEnvWalls-dense": MetaPointEnvWalls,
    "MetaPointEnvWalls-sparse": lambda: MetaPointEnvWalls(reward_type="sparse"),
    "MetaPointEnvWalls-dense_squared": lambda: MetaPointEnvWalls(reward_type="dense_squared"),
}

MUJOCO_ENV_NAMES = MUJOCO_ENV_CLASS_NAMES


def assert_twins_agree(env, num_envs: int, num_steps: int, seed: int = 0, action_scale=1.3):
    """Step ``env.make_batched(num_envs)`` and ``num_envs`` pickled copies of ``env`` side by side.

    Envs whose episode ends are reset with a fresh seed (in both), so terminations and resets in
    the middle of a run are covered. Actions exceed the action box by ``action_scale`` so that
    clipping is exercised.
    """
    rng = np.random.default_rng(seed)
    env.seed_tasks(seed)
    tasks = env.sample_tasks(num_envs)
    batched = env.make_batched(num_envs)
    assert batched is not None
    singles = EnvList([pickle.loads(pickle.dumps(env)) for _ in range(num_envs)])
    for venv in (batched, singles):
        venv.set_tasks(tasks)
    indices = np.arange(num_envs)
    seeds = rng.integers(2**31 - 1, size=num_envs)
    np.testing.assert_array_equal(batched.reset(indices, seeds), singles.reset(indices, seeds))
    high = np.asarray(env.action_space.high, dtype=np.float32) * action_scale
    num_done = 0
    for step in range(num_steps):
        # Half the envs step at a time, in turn, so that index subsets are covered.
        active = indices if step % 3 else indices[step % 2 :: 2]
        actions = rng.uniform(-high, high, size=(len(active), len(high))).astype(np.float32)
        got, want = batched.step(active, actions), singles.step(active, actions)
        assert list(got.infos) == singles.info_keys, (list(got.infos), singles.info_keys)
        np.testing.assert_array_equal(got.observations, want.observations, err_msg=f"obs {step}")
        np.testing.assert_array_equal(got.rewards, want.rewards, err_msg=f"reward {step}")
        np.testing.assert_array_equal(got.dones, want.dones, err_msg=f"done {step}")
        for key in want.infos:
            np.testing.assert_array_equal(got.infos[key], want.infos[key], err_msg=f"{key} {step}")
        done = active[want.dones]
        if len(done):
            num_done += len(done)
            seeds = rng.integers(2**31 - 1, size=len(done))
            np.testing.assert_array_equal(batched.reset(done, seeds), singles.reset(done, seeds))
    return num_done


@pytest.mark.parametrize("name", sorted(POINT_ENVS))
@pytest.mark.parametrize("normalized", [False, True])
def test_batched_point_env_equals_single_env(name, normalized):
    env = POINT_ENVS[name]()
    assert_twins_agree(normalize(env) if normalized else env, num_envs=16, num_steps=300)


@pytest.mark.parametrize("name", MUJOCO_ENV_NAMES)
def test_batched_mujoco_env_equals_single_env(name):
    mujoco_envs = pytest.importorskip("meta_policy_search.envs.mujoco_envs")
    env = normalize(getattr(mujoco_envs, name)())
    steps = 120 if name.startswith("Humanoid") else 250
    num_done = assert_twins_agree(env, num_envs=6, num_steps=steps)
    if name.startswith(("Hopper", "Walker", "Ant", "Humanoid")) and name != "AntRandGoalEnv":
        assert num_done > 0, "random actions should end some episodes"


def test_make_batched_env_falls_back_to_env_list():
    env = PointEnvRandGoal()
    assert isinstance(make_batched_env(env, 3, lambda: pickle.loads(pickle.dumps(env)), False),
                      EnvList)
    assert not isinstance(make_batched_env(env, 3, lambda: env), EnvList)


def test_batched_env_validates_tasks_and_actions():
    batched = MetaPointEnvCorner().make_batched(2)
    with pytest.raises(ValueError, match="one task per env"):
        batched.set_tasks([np.array([2.0, 2.0])])
    with pytest.raises(ValueError, match="corners"):
        batched.set_tasks([np.array([2.0, 2.0]), np.array([1.0, 2.0])])
    batched.reset(np.arange(2), [0, 1])
    with pytest.raises(ValueError, match="shape"):
        batched.step(np.arange(2), np.zeros((2, 3)))
