"""The rollout loops on batched envs: the same arrays as the per-env path, for every executor and
both sampling modes (issue 7)."""

from __future__ import annotations

import numpy as np
import pytest

from meta_policy_search.envs import make_env, normalize
from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal
from meta_policy_search.envs.point_envs.walls_env import MetaPointEnvWalls
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers import MetaIterativeEnvExecutor, MetaParallelEnvExecutor
from meta_policy_search.samplers.quota import make_quota
from meta_policy_search.types import PathBatch


def make_policy(num_tasks: int, obs_dim: int, act_dim: int, seed: int = 0) -> NumpyGaussianMLP:
    rng = np.random.default_rng(seed)
    sizes = (obs_dim, 16, act_dim)
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        params[f"W{i}"] = (rng.normal(size=(num_tasks, n_in, n_out)) / np.sqrt(n_in)).astype(
            np.float32
        )
        params[f"b{i}"] = rng.normal(size=(num_tasks, n_out)).astype(np.float32)
    params["log_std"] = np.full((num_tasks, act_dim), 0.5, np.float32)
    return NumpyGaussianMLP(params)


def assert_paths_identical(a: PathBatch, b: PathBatch) -> None:
    for name in ("observations", "actions", "rewards", "mask"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert list(a.agent_infos) == list(b.agent_infos)
    assert list(a.env_infos) == list(b.env_infos)
    for key in a.agent_infos:
        np.testing.assert_array_equal(a.agent_infos[key], b.agent_infos[key], err_msg=key)
    for key in a.env_infos:
        np.testing.assert_array_equal(a.env_infos[key], b.env_infos[key], err_msg=key)


def collect_all(env, meta_batch_size: int, num_rollouts: int, horizon: int, mode: str,
                phases: int = 2) -> dict[str, list[PathBatch]]:
    """Paths of the per-env and batched iterative executors and the batched parallel executor
    (2 workers), with ``E = 2`` env copies per task (waves) and ``E = R``, ``phases`` each.

    Results are compared at equal ``E`` only: the policy's matmuls run on ``[T, E, obs_dim]``
    batches, and numpy may round a batch of one row (the last wave) differently from a larger
    one (``gemv`` vs ``gemm``), whatever the env path.
    """
    env.seed_tasks(1)
    tasks = env.sample_tasks(meta_batch_size)
    policy = make_policy(meta_batch_size, env.observation_space.shape[0],
                         env.action_space.shape[0])
    size = (meta_batch_size, num_rollouts, horizon)
    quota = make_quota(mode, num_rollouts)
    executors = {
        "per_env": MetaIterativeEnvExecutor(env, *size, seed=3, use_batched_env=False,
                                            quota=quota),
        "batched": MetaIterativeEnvExecutor(env, *size, seed=3, quota=quota),
        "per_env_waves": MetaIterativeEnvExecutor(env, meta_batch_size, 2, horizon, seed=3,
                                                  use_batched_env=False, quota=quota),
        "batched_waves": MetaIterativeEnvExecutor(env, meta_batch_size, 2, horizon, seed=3,
                                                  quota=quota),
        "parallel_waves": MetaParallelEnvExecutor(env, meta_batch_size, 2, horizon, seed=3,
                                                  n_parallel=2, quota=quota),
    }
    paths = {}
    for name, executor in executors.items():
        with executor:
            executor.set_tasks(tasks)
            paths[name] = [executor.collect(policy, p) for p in range(phases)]
    return paths


@pytest.mark.parametrize("mode", ["rollouts", "budget"])
@pytest.mark.parametrize("make_env", [PointEnvRandGoal, MetaPointEnvWalls],
                         ids=["PointEnvRandGoal", "MetaPointEnvWalls"])
def test_point_env_batched_paths_equal_per_env_paths(make_env, mode):
    paths = collect_all(normalize(make_env()), 4, 3, 30, mode)
    assert_same_as_per_env(paths)


def assert_same_as_per_env(paths: dict[str, list[PathBatch]]) -> None:
    for name, reference in [("batched", "per_env"), ("batched_waves", "per_env_waves"),
                            ("parallel_waves", "per_env_waves")]:
        for got, want in zip(paths[name], paths[reference]):
            assert_paths_identical(got, want)


@pytest.mark.parametrize("mode", ["rollouts", "budget"])
@pytest.mark.parametrize(
    "name", ["HalfCheetahRandVelEnv", "HopperRandParamsEnv", "AntRandDirecEnv"]
)
def test_mujoco_batched_paths_equal_per_env_paths(name, mode):
    """Hopper and Ant episodes terminate early: exercises masks and the budget's restarts."""
    pytest.importorskip("mujoco")
    env = normalize(make_env(name), normalization_scale=1.0)
    horizon = 40 if name.startswith("Hopper") else 25
    paths = collect_all(env, 3, 3, horizon, mode, phases=1)
    assert_same_as_per_env(paths)
    if name.startswith("Hopper"):
        assert paths["per_env"][0].mask.min() == 0, "some Hopper episodes should end early"
