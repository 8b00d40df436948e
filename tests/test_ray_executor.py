"""Tests of the Ray executor, ``MetaSampler(executor='ray')`` and ``experiments/sweep.py``.

One local Ray instance (2 CPUs) serves the whole module: starting Ray costs a few seconds.
The reference for every Ray result is the iterative executor with the same seed: the arrays must
be bit-identical, whatever the number of actors.
"""

from __future__ import annotations

import csv
import os
import sys
import threading
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from meta_policy_search.envs import make_env, normalize  # noqa: E402
from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal  # noqa: E402
from meta_policy_search.samplers import (  # noqa: E402
    MetaIterativeEnvExecutor,
    MetaRayEnvExecutor,
    MetaSampler,
)
from meta_policy_search.samplers.meta_sampler import resolve_executor  # noqa: E402
from meta_policy_search.samplers.quota import EpisodeQuota, StepBudget  # noqa: E402
from meta_policy_search.samplers.ray_executor import import_ray  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from test_sampler import assert_paths_equal, make_policy  # noqa: E402

EXPERIMENTS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "experiments")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """A local Ray instance for the module, shut down afterwards."""
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


def point_env():
    env = normalize(PointEnvRandGoal(), 1.0)
    env.seed_tasks(0)
    return env


def half_cheetah_env():
    pytest.importorskip("mujoco")
    return normalize(make_env("HalfCheetahRandDirecEnv"))


def collect(executor, tasks, policy, phase):
    with executor as ex:
        ex.set_tasks(tasks)
        return ex.collect(policy, phase)


def test_point_env_ray_matches_iterative_for_any_actor_count():
    env = point_env()
    tasks = env.sample_tasks(5)
    policy = make_policy(5, 2, 2, seed=1)
    expected = collect(MetaIterativeEnvExecutor(env, 5, 2, 12, seed=3, quota=EpisodeQuota(3)),
                       tasks, policy, 4)
    assert expected.num_env_steps > 0
    for num_actors in (1, 2):
        with MetaRayEnvExecutor(env, 5, 2, 12, seed=3, num_actors=num_actors,
                                quota=EpisodeQuota(3)) as ex:
            assert ex.task_blocks == ([(0, 5)] if num_actors == 1 else [(0, 3), (2, 5)])
            ex.set_tasks(tasks)
            paths = ex.collect(policy, 4)
            assert_paths_equal(paths, expected)
            assert paths.observations.flags.writeable and paths.mask.flags.writeable
            info = ex.worker_info()
            assert len(info) == num_actors and not any(w["tensorflow_imported"] for w in info)
            assert os.getpid() not in {w["pid"] for w in info}
            # Another phase: new noise, still identical to the iterative executor.
            other = ex.collect(policy, 5)
        assert not np.allclose(other.actions, paths.actions)
        assert_paths_equal(
            other, collect(MetaIterativeEnvExecutor(env, 5, 2, 12, seed=3, quota=EpisodeQuota(3)),
                           tasks, policy, 5)
        )
        assert not ex.actors  # closed by the context manager


def test_half_cheetah_ray_matches_iterative():
    env = half_cheetah_env()
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    policy = make_policy(3, obs_dim, act_dim, hidden=(16, 16), seed=2)
    tasks = [-1.0, 1.0, 1.0]
    quota = EpisodeQuota(2)
    expected = collect(MetaIterativeEnvExecutor(env, 3, 2, 8, seed=5, quota=quota), tasks, policy, 1)
    paths = collect(MetaRayEnvExecutor(env, 3, 2, 8, seed=5, num_actors=2, quota=quota), tasks,
                    policy, 1)
    assert paths.observations.shape == (3, 2, 8, obs_dim) and paths.mask.min() == 1
    assert_paths_equal(paths, expected)
    assert set(paths.env_infos) == set(expected.env_infos) and paths.env_infos


def test_validation_and_closed_executor():
    env = point_env()
    with pytest.raises(ValueError, match="num_actors=3 exceeds meta_batch_size=2"):
        MetaRayEnvExecutor(env, 2, 1, 5, num_actors=3, quota=EpisodeQuota(1))
    with pytest.raises(ValueError, match="timeout"):
        MetaRayEnvExecutor(env, 2, 1, 5, timeout=0, quota=EpisodeQuota(1))
    ex = MetaRayEnvExecutor(env, 2, 1, 5, num_actors=1, quota=EpisodeQuota(1))
    with pytest.raises(RuntimeError, match="set_tasks"):
        ex.collect(make_policy(2, 2, 2), 0)
    with pytest.raises(ValueError, match="expected meta_batch_size=2 tasks, got 1"):
        ex.set_tasks(env.sample_tasks(1))
    with pytest.raises(ValueError, match="policy has 3 tasks"):
        ex.collect(make_policy(3, 2, 2), 0)
    ex.close()
    ex.close()
    with pytest.raises(RuntimeError, match="closed"):
        ex.set_tasks(env.sample_tasks(2))


def test_missing_ray_raises_import_error_with_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # "import ray" now raises ImportError
    with pytest.raises(ImportError, match=r"pip install meta_policy_search\[ray\]"):
        import_ray()


@pytest.mark.parametrize("when", ["before", "during"])
def test_killed_actor_raises_runtime_error_quickly(when):
    env = half_cheetah_env()
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    # "during": each actor steps 20 envs x 1000 steps, i.e. >= 2 s at 10k steps/s.
    ex = MetaRayEnvExecutor(env, 2, 20, 1000, num_actors=2, quota=EpisodeQuota(20))
    ex.set_tasks([-1.0, 1.0])
    victim = ex.actors[1]
    if when == "before":
        ray.kill(victim)
        time.sleep(0.2)
    outcome = {}

    def run():
        try:
            outcome["result"] = ex.collect(make_policy(2, obs_dim, act_dim, hidden=(8,)), 0)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    if when == "during":
        time.sleep(0.3)
        ray.kill(victim)
    start = time.perf_counter()
    thread.join(timeout=20.0)
    assert not thread.is_alive(), "collect hung after an actor was killed"
    assert time.perf_counter() - start < 5.0
    assert isinstance(outcome.get("error"), RuntimeError), outcome
    assert "actor 1 (tasks 1..1) died during collect" in str(outcome["error"])
    assert not ex.actors  # closed: the surviving actor was killed too
    with pytest.raises(RuntimeError, match="closed"):
        ex.set_tasks([-1.0, 1.0])


def test_resolve_executor():
    assert resolve_executor(None, None) == "iterative"
    assert resolve_executor(None, True) == "parallel"
    assert resolve_executor("ray", None) == "ray"
    assert resolve_executor("ray", True) == "ray"
    assert resolve_executor("iterative", False) == "iterative"
    for executor, parallel in (("iterative", True), ("ray", False), ("parallel", False)):
        with pytest.raises(ValueError, match="contradicts"):
            resolve_executor(executor, parallel)
    with pytest.raises(ValueError, match="executor must be one of"):
        resolve_executor("dask", None)


def test_meta_sampler_ray_end_to_end_with_the_tensorflow_policy():
    """Config with ``--executor ray`` -> build_sampler -> same samples as the iterative one."""
    pytest.importorskip("tensorflow")
    from meta_policy_search.experiment.components import build_sampler
    from meta_policy_search.experiment.config_parsing import parse_config
    from meta_policy_search.experiment.configs import MetaRLConfig
    from meta_policy_search.policies import MetaGaussianMLPPolicy

    policy = MetaGaussianMLPPolicy(3, 2, 2, hidden_sizes=(8,), seed=0)
    config, _ = parse_config(MetaRLConfig, [
        "--env", "PointEnvRandGoal", "--meta_batch_size", "3", "--rollouts_per_meta_task", "2",
        "--max_path_length", "10", "--executor", "ray", "--n_parallel", "2",
    ])
    assert config.executor == "ray"
    paths = {}
    for name, sampler in (
        ("ray", build_sampler(config, normalize(PointEnvRandGoal()), policy, 7)),
        ("iterative", MetaSampler(normalize(PointEnvRandGoal()), policy, 2, 10, seed=7,
                                  executor="iterative")),
    ):
        with sampler:
            assert sampler.executor_name == name
            sampler.update_tasks()
            paths[name] = [sampler.obtain_samples() for _ in range(2)]
            if name == "ray":
                info = sampler.executor.worker_info()
                assert len(info) == 2 and not any(w["tensorflow_imported"] for w in info)
    assert isinstance(sampler.executor, MetaIterativeEnvExecutor)
    for ray_paths, iterative_paths in zip(paths["ray"], paths["iterative"]):
        assert_paths_equal(ray_paths, iterative_paths)
    _, info = policy.get_actions(paths["ray"][0].observations.reshape(3, 2 * 10, 2))
    real = paths["ray"][0].mask.reshape(3, 20) == 1
    np.testing.assert_allclose(paths["ray"][0].agent_infos["mean"].reshape(3, 20, 2)[real],
                               info["mean"][real], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="contradicts"):
        MetaSampler(point_env(), policy, 2, 10, parallel=True, executor="iterative")


def test_sweep_runs_each_seed_into_its_own_directory(tmp_path, capsys):
    sys.path.insert(0, EXPERIMENTS)
    try:
        import sweep
    finally:
        sys.path.remove(EXPERIMENTS)
    base = tmp_path / "sweep"
    tiny = ["--n_itr", "1", "--meta_batch_size", "2", "--rollouts_per_meta_task", "2",
            "--max_path_length", "10", "--hidden_sizes", "8"]
    with pytest.raises(SystemExit):  # the sweep sets --seed itself
        sweep.main([os.path.join(EXPERIMENTS, "promp_run_point_mass.py"), "--seeds", "1",
                    "--", "--seed", "3"])
    code = sweep.main([os.path.join(EXPERIMENTS, "promp_run_point_mass.py"), "--seeds", "1",
                       "2", "--dump_path", str(base), "--", *tiny])
    out = capsys.readouterr().out
    logs = {s: (base / f"seed_{s}" / "sweep_output.txt") for s in (1, 2)}
    assert code == 0, out + "".join(p.read_text() for p in logs.values() if p.exists())
    assert f"results: {base}" in out and "seed 1: ok" in out and "seed 2: ok" in out
    first_rows = {}
    for seed in (1, 2):
        with open(base / f"seed_{seed}" / "progress.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 1
        first_rows[seed] = rows[0]["Step_0-AverageReturn"]
        assert f'"seed": {seed}' in (base / f"seed_{seed}" / "params.json").read_text()
    assert first_rows[1] != first_rows[2]  # different seeds, different runs


def test_actor_exception_is_reraised_and_executor_stays_usable():
    import test_sampler
    from ray import cloudpickle
    from test_sampler import TinyEnv

    # Ray workers cannot import this test directory: ship the test env class by value.
    cloudpickle.register_pickle_by_value(test_sampler)
    try:
        with MetaRayEnvExecutor(TinyEnv(fail_on_task=5), 4, 1, 6, num_actors=2,
                                quota=EpisodeQuota(1)) as ex:
            ex.set_tasks([2, 5, 6, 8])
            with pytest.raises(ValueError, match="boom: task 5"):
                ex.collect(make_policy(4), 0)
            ex.set_tasks([2, 6, 6, 8])
            expected = collect(MetaIterativeEnvExecutor(TinyEnv(), 4, 1, 6, quota=EpisodeQuota(1)),
                               [2, 6, 6, 8], make_policy(4), 0)
            assert_paths_equal(ex.collect(make_policy(4), 0), expected)
    finally:
        cloudpickle.unregister_pickle_by_value(test_sampler)


def test_budget_mode_ray_matches_iterative():
    """'budget' mode with early termination: actors pad to their own bucket, the driver to all."""
    import test_budget_sampling
    import test_sampler
    from ray import cloudpickle
    from test_budget_sampling import TASKS, RandomLengthEnv

    for module in (test_sampler, test_budget_sampling):  # ship the test env by value
        cloudpickle.register_pickle_by_value(module)
    try:
        policy = make_policy(len(TASKS))
        expected = collect(MetaIterativeEnvExecutor(RandomLengthEnv(), 5, 2, 6, seed=3,
                                                    quota=StepBudget(3)), TASKS, policy, 1)
        counts = expected.episodes_per_task
        assert counts.min() < expected.mask.shape[1] and counts.max() > 3
        for num_actors in (1, 2):
            paths = collect(MetaRayEnvExecutor(RandomLengthEnv(), 5, 2, 6, seed=3,
                                               num_actors=num_actors, quota=StepBudget(3)),
                            TASKS, policy, 1)
            assert_paths_equal(paths, expected)
            assert paths.observations.flags.writeable and paths.mask.flags.writeable
    finally:
        for module in (test_sampler, test_budget_sampling):
            cloudpickle.unregister_pickle_by_value(module)
