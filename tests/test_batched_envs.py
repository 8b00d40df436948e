"""Each batched env against its single (gymnasium-based) twin: same tasks, reset seeds and actions
must give bit-identical observations, rewards, termination flags and infos."""

from __future__ import annotations

import os
import pickle
import sys

import numpy as np
import pytest

from meta_policy_search.envs import make_env, normalize
from meta_policy_search.envs.batched import EnvList, make_batched_env
from meta_policy_search.envs.point_envs.corner_envs import MetaPointEnvCorner, MetaPointEnvMomentum
from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal
from meta_policy_search.envs.point_envs.walls_env import MetaPointEnvWalls
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

sys.path.insert(0, os.path.dirname(__file__))


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
    pytest.importorskip("mujoco")
    env = normalize(make_env(name))
    steps = 120 if name.startswith("Humanoid") else 250
    num_done = assert_twins_agree(env, num_envs=6, num_steps=steps)
    if name.startswith(("Hopper", "Walker", "Ant", "Humanoid")) and name != "AntRandGoalEnv":
        assert num_done > 0, "random actions should end some episodes"


@pytest.mark.parametrize("name", ["HalfCheetahRandDirecEnv", "AntRandDirecEnv"])
def test_batched_mujoco_env_takes_copies_in_any_order(name):
    """The executor may list a step's copies out of order (its env slots follow the tasks it
    continues): each copy still gets its own action and returns its own row."""
    pytest.importorskip("mujoco")
    env = normalize(make_env(name))
    env.seed_tasks(1)
    tasks = env.sample_tasks(5)
    batched = env.make_batched(5)
    singles = EnvList([pickle.loads(pickle.dumps(env)) for _ in range(5)])
    for venv in (batched, singles):
        venv.set_tasks(tasks)
    rng = np.random.default_rng(2)
    order = np.array([3, 0, 4, 1, 2])
    seeds = rng.integers(2**31 - 1, size=5)
    np.testing.assert_array_equal(batched.reset(order, seeds), singles.reset(order, seeds))
    high = np.asarray(env.action_space.high, dtype=np.float32)
    for step in range(20):
        active = order[::-1] if step % 2 else order[1:]
        actions = rng.uniform(-high, high, size=(len(active), len(high))).astype(np.float32)
        got, want = batched.step(active, actions), singles.step(active, actions)
        np.testing.assert_array_equal(got.observations, want.observations, err_msg=f"obs {step}")
        np.testing.assert_array_equal(got.rewards, want.rewards, err_msg=f"reward {step}")


@pytest.mark.parametrize("name", ["AntRandDirec2DEnv", "HumanoidRandDirec2DEnv"])
def test_contact_env_rows_equal_the_single_envs_data(name):
    """The rows a contact env's copies hand to the maths (``qpos``, ``qvel``, the unclipped
    contact forces ``cfrc_ext`` and the other fields the observation reads) are the single env's
    after the same steps, bit for bit, over a few hundred steps with copies stepped in shuffled
    subsets and episodes restarted when they end. (Ant's observation and reward clip the contact
    forces to [-1, 1], so the observations alone would not show a wrong force beyond that.)"""
    pytest.importorskip("mujoco")
    env = make_env(name)
    env.seed_tasks(3)
    num_envs = 4
    tasks = env.sample_tasks(num_envs)
    batched = env.make_batched(num_envs)
    singles = [pickle.loads(pickle.dumps(env)) for _ in range(num_envs)]
    batched.set_tasks(tasks)
    for single, task in zip(singles, tasks):
        single.set_task(task)
    rng = np.random.default_rng(4)
    indices = np.arange(num_envs)

    def reset(copies):
        seeds = rng.integers(2**31 - 1, size=len(copies))
        batched.reset(copies, seeds)
        for i, seed in zip(copies, seeds):
            singles[i].reset(seed=int(seed))

    reset(indices)
    high = np.asarray(env.action_space.high)
    forces_seen = 0
    for step in range(300):
        active = rng.permutation(indices)[: 2 + step % 3]
        actions = rng.uniform(-high, high, size=(len(active), len(high)))
        dones = batched.step(active, actions).dones
        for i, action in zip(active, actions):
            singles[i].step(action)
        got = batched._physics.rows(active)
        want = np.concatenate([singles[i]._rows().values for i in active])
        np.testing.assert_array_equal(got, want, err_msg=f"rows after step {step}")
        forces_seen += int(np.count_nonzero(batched._rows(got)["cfrc_ext"]))
        if dones.any():
            reset(active[dones])
    assert forces_seen > 0, "the copies should touch the floor"


@pytest.mark.parametrize("name", ["HalfCheetahRandDirecEnv", "HopperRandParamsEnv"])
def test_batched_mujoco_env_without_mujoco_batch_equals_single_env(name, monkeypatch):
    """On MuJoCo < 4 (no ``mujoco.batch``) every copy steps its own ``MjData``."""
    pytest.importorskip("mujoco")
    from meta_policy_search.envs.batched import mujoco as batched_mujoco

    monkeypatch.setattr(batched_mujoco, "Batch", None)
    env = normalize(make_env(name))
    assert isinstance(env.make_batched(2).env._physics, batched_mujoco._DataPerCopy)
    assert_twins_agree(env, num_envs=4, num_steps=60)


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


# ------------------------------------------------------------ a user's subclass is never bypassed
class Penalized(PointEnvRandGoal):
    """A user's env: every step costs 100 more than the parent's."""

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward - 100.0, terminated, truncated, info


class FarStart(PointEnvRandGoal):
    """A user's env: episodes start at (0.3, -0.2) instead of the origin."""

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed, options=options)
        self._state = np.array([0.3, -0.2])
        return self._state.astype(np.float32), {}


class MoreTasks(PointEnvRandGoal):
    """Changes only how tasks are drawn: the parent's batched form still reproduces it."""

    def sample_tasks(self, n_tasks):
        return [np.array([0.1, 0.1])] * n_tasks


class PenalizedWithOwnForm(Penalized):
    """Declares its own batched form (here: the parent's, so stepping uses it on purpose)."""

    def make_batched(self, num_envs):
        from meta_policy_search.envs.point_envs.base import BatchedPointEnv

        return BatchedPointEnv(self, num_envs)


def sample_with_executor(env, use_batched_env=True):
    from test_sampler import make_policy

    from meta_policy_search.samplers import MetaIterativeEnvExecutor
    from meta_policy_search.samplers.quota import EpisodeQuota

    with MetaIterativeEnvExecutor(env, 2, 2, 5, seed=1, use_batched_env=use_batched_env,
                                  quota=EpisodeQuota(2)) as executor:
        executor.set_tasks([np.array([0.2, 0.2]), np.array([-0.3, 0.1])])
        return executor.collect(make_policy(2, 2, 2), 0)


@pytest.mark.parametrize("normalized", [False, True])
def test_overridden_step_runs_on_the_per_env_path(normalized):
    wrap = normalize if normalized else (lambda env: env)
    assert isinstance(make_batched_env(wrap(Penalized()), 2, lambda: wrap(Penalized())), EnvList)
    penalized = sample_with_executor(wrap(Penalized()))
    parent = sample_with_executor(wrap(PointEnvRandGoal()))
    np.testing.assert_array_equal(penalized.mask, parent.mask)
    np.testing.assert_allclose(penalized.rewards, (parent.rewards - 100.0) * parent.mask)
    np.testing.assert_array_equal(penalized.observations, parent.observations)


def test_overridden_step_is_run_by_parallel_workers_too():
    from test_sampler import assert_paths_equal, make_policy

    from meta_policy_search.samplers import MetaParallelEnvExecutor
    from meta_policy_search.samplers.quota import EpisodeQuota

    tasks = [np.array([0.2, 0.2]), np.array([-0.3, 0.1])]
    with MetaParallelEnvExecutor(Penalized(), 2, 2, 5, seed=1, n_parallel=2,
                                 quota=EpisodeQuota(2)) as executor:
        executor.set_tasks(tasks)
        assert_paths_equal(executor.collect(make_policy(2, 2, 2), 0),
                           sample_with_executor(Penalized()))


def test_overridden_reset_runs_on_the_per_env_path():
    paths = sample_with_executor(FarStart())
    np.testing.assert_array_equal(paths.observations[:, :, 0],
                                  np.broadcast_to(np.float32([0.3, -0.2]), (2, 2, 2)))
    per_env = sample_with_executor(FarStart(), use_batched_env=False)
    np.testing.assert_array_equal(paths.observations, per_env.observations)
    np.testing.assert_array_equal(paths.rewards, per_env.rewards)


def test_the_per_env_path_is_logged_once_per_class(caplog):
    from meta_policy_search.envs import base

    base._reported.discard(Penalized)
    with caplog.at_level("WARNING", logger="meta_policy_search.envs.base"):
        for _ in range(3):
            make_batched_env(Penalized(), 2, Penalized)
    messages = [r.getMessage() for r in caplog.records if "Penalized" in r.getMessage()]
    assert len(messages) == 1 and "overrides step" in messages[0]


def test_subclasses_that_keep_the_batched_form():
    assert base_unreproduced(MoreTasks) == [] and base_unreproduced(PenalizedWithOwnForm) == []
    assert base_unreproduced(Penalized) == ["step"] and base_unreproduced(FarStart) == ["reset"]
    assert not isinstance(make_batched_env(MoreTasks(), 2, MoreTasks), EnvList)
    assert not isinstance(make_batched_env(PenalizedWithOwnForm(), 2, PenalizedWithOwnForm),
                          EnvList)
    for name in [*MUJOCO_ENV_NAMES, *POINT_ENVS]:
        assert base_unreproduced(type(_built_in(name))) == [], name
    pytest.importorskip("mujoco")
    from meta_policy_search.envs.mujoco_envs.half_cheetah_rand_direc import HalfCheetahRandDirecEnv

    class CheaperCheetah(HalfCheetahRandDirecEnv):
        def _cost_terms(self, action):
            return {}

    class CheaperCheetahBatched(CheaperCheetah):
        def batched_cost_terms(self, rows, action):
            return {}

    assert base_unreproduced(CheaperCheetah) == ["_cost_terms"]
    assert base_unreproduced(CheaperCheetahBatched) == ["_cost_terms"]  # still per-env


def base_unreproduced(cls):
    from meta_policy_search.envs.base import unreproduced_overrides

    return unreproduced_overrides(cls)


def _built_in(name):
    if name in POINT_ENVS:
        return POINT_ENVS[name]()
    pytest.importorskip("mujoco")
    return make_env(name)


def test_envs_without_a_batched_form_are_not_reported(caplog):
    from user_envs import PointLineGoalEnv

    with caplog.at_level("WARNING", logger="meta_policy_search.envs.base"):
        assert isinstance(make_batched_env(PointLineGoalEnv(), 2, PointLineGoalEnv), EnvList)
    assert not caplog.records
