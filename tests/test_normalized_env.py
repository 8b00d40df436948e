"""normalize(): linear map of [-s, s] onto the env's action bounds, clipping, task pass-through."""

import pickle

import gymnasium as gym
import numpy as np
import pytest

from meta_policy_search.envs import MetaEnv, NormalizedEnv, normalize
from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal
from meta_policy_search.types import PathBatch


class RecordingEnv(MetaEnv):
    """An env with asymmetric action bounds that records the action it receives."""

    def __init__(self):
        super().__init__()
        self.action_space = gym.spaces.Box(
            np.array([-1.0, 0.0], np.float32), np.array([3.0, 0.5], np.float32), dtype=np.float32
        )
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)
        self.received = None
        self.task = 0.0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.received = np.asarray(action, dtype=np.float64)
        return np.zeros(1, np.float32), 0.0, False, False, {}

    def sample_tasks(self, n_tasks):
        return list(self.task_rng.uniform(size=n_tasks))

    def set_task(self, task):
        self.task = task

    def get_task(self):
        return self.task

    def log_diagnostics(self, paths, prefix=""):
        return {prefix + "Seen": float(paths.mask.sum())}


@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_maps_box_linearly_onto_bounds_and_clips(scale):
    env = normalize(RecordingEnv(), normalization_scale=scale)
    np.testing.assert_allclose(env.action_space.low, [-scale, -scale])
    np.testing.assert_allclose(env.action_space.high, [scale, scale])
    env.reset(seed=0)
    low, high = np.array([-1.0, 0.0]), np.array([3.0, 0.5])
    for u in [-1.0, -0.5, 0.0, 0.25, 1.0]:  # fractions of the policy box
        env.step(np.full(2, u * scale))
        expected = low + (u + 1.0) / 2.0 * (high - low)
        np.testing.assert_allclose(env.unwrapped.received, expected, rtol=1e-6, atol=1e-7)
    env.step(np.array([3.0 * scale, -2.0 * scale]))  # outside the box: clipped to the bounds
    np.testing.assert_allclose(env.unwrapped.received, [3.0, 0.0])
    env.step(np.array([-1.5 * scale, 1.5 * scale]))
    np.testing.assert_allclose(env.unwrapped.received, [-1.0, 0.5])


def test_point_env_moves_by_mapped_action():
    env = normalize(PointEnvRandGoal())  # scale 10 onto [-0.1, 0.1]
    env.set_task(np.array([0.0, 0.0]))
    env.reset(seed=0)
    obs, *_ = env.step(np.array([5.0, -10.0]))
    np.testing.assert_allclose(obs, [0.05, -0.1], rtol=1e-5)
    obs, *_ = env.step(np.array([100.0, 0.0]))
    np.testing.assert_allclose(obs, [0.15, -0.1], rtol=1e-5)


def test_task_interface_passes_through():
    inner = RecordingEnv()
    env = normalize(inner)
    env.seed_tasks(3)
    reference = RecordingEnv()
    reference.seed_tasks(3)
    np.testing.assert_array_equal(env.sample_tasks(4), reference.sample_tasks(4))
    env.set_task(0.25)
    assert inner.get_task() == 0.25 and env.get_task() == 0.25
    paths = PathBatch(
        observations=np.zeros((1, 1, 2, 1)),
        actions=np.zeros((1, 1, 2, 2)),
        rewards=np.zeros((1, 1, 2)),
        mask=np.ones((1, 1, 2)),
    )
    assert env.log_diagnostics(paths, "Step_0-") == {"Step_0-Seen": 2.0}


def test_task_rng_is_the_wrapped_envs():
    inner = PointEnvRandGoal()
    env = normalize(inner)
    env.seed_tasks(0)
    assert env.task_rng is inner.task_rng


def test_pickles():
    env = normalize(PointEnvRandGoal(), normalization_scale=5.0)
    env.set_task(np.array([0.1, 0.2]))
    copy = pickle.loads(pickle.dumps(env))
    assert isinstance(copy, NormalizedEnv) and copy.normalization_scale == 5.0
    np.testing.assert_array_equal(copy.get_task(), [0.1, 0.2])


def test_rejects_bad_arguments():
    with pytest.raises(ValueError, match="normalization_scale"):
        normalize(PointEnvRandGoal(), normalization_scale=0.0)

    class DiscreteEnv(RecordingEnv):
        def __init__(self):
            super().__init__()
            self.action_space = gym.spaces.Discrete(3)

    with pytest.raises(ValueError, match="Box"):
        normalize(DiscreteEnv())
