"""The physics floor's replay (benchmarks/sampling_benchmark.py) simulates the sampled episodes."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
sys.path.insert(0, REPO)

mujoco = pytest.importorskip("mujoco")

from benchmarks.sampling_benchmark import (  # noqa: E402
    controls_of,
    make_normalized_env_for_benchmark,
    make_policy,
    start_states_of,
)
from meta_policy_search.samplers import MetaIterativeEnvExecutor  # noqa: E402
from meta_policy_search.samplers.quota import EpisodeQuota, StepBudget  # noqa: E402


@pytest.mark.parametrize("name, quota", [("HalfCheetahRandDirecEnv", EpisodeQuota(2)),
                                         ("Walker2DRandDirecEnv", StepBudget(2))])
def test_replay_from_the_start_states_retraces_the_sampled_episodes(name, quota):
    env = make_normalized_env_for_benchmark(name)
    env.seed_tasks(4)
    tasks = env.sample_tasks(3)
    policy = make_policy(3, env.observation_space.shape[0], env.action_space.shape[0], (8,), 1)
    seed, phase, horizon = 7, 1, 30
    with MetaIterativeEnvExecutor(env, 3, 2, horizon, seed=seed, quota=quota) as executor:
        executor.set_tasks(tasks)
        executor.collect(policy, 0)
        paths = executor.collect(policy, phase)
    qpos, qvel = start_states_of(env, paths, tasks, seed, phase)
    controls = controls_of(env, paths)
    real = paths.episode_mask.reshape(-1)
    observations = paths.observations.reshape(-1, horizon, paths.observations.shape[-1])[real]
    assert len(qpos) == len(controls) == len(observations) == int(real.sum()) >= 6
    inner = env.unwrapped
    model, data = inner.model, mujoco.MjData(inner.model)
    for start_qpos, start_qvel, episode, obs in zip(qpos, qvel, controls, observations):
        mujoco.mj_resetData(model, data)
        data.qpos[:], data.qvel[:] = start_qpos, start_qvel
        for h, control in enumerate(episode[~np.isnan(episode[:, 0])]):
            # The sampled observation before step h is the replayed state's (float32) one.
            state_obs = np.concatenate([data.qpos[1:], data.qvel])
            if name.startswith("Walker"):
                state_obs[len(data.qpos) - 1:] = np.clip(data.qvel, -10, 10)
            np.testing.assert_array_equal(obs[h], state_obs.astype(np.float32), err_msg=f"{h}")
            data.ctrl[:] = control
            mujoco.mj_step(model, data, int(inner.frame_skip))
