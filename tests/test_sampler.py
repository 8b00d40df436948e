"""Tests of the rollout loop, the executors and the meta-sampler.

A tiny deterministic MetaEnv (defined here) makes every stored number checkable: episodes are
replayed step by step from the stored actions and the seeds of ``episode_randomness``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import gymnasium as gym
import numpy as np
import pytest

from meta_policy_search.envs.base import MetaEnv
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.samplers import (
    MetaIterativeEnvExecutor,
    MetaParallelEnvExecutor,
    MetaSampler,
)
from meta_policy_search.samplers.quota import EpisodeQuota, make_quota
from meta_policy_search.samplers.rollout import episode_randomness
from meta_policy_search.samplers.worker_pool import RemoteTraceback

H = 6


class TinyEnv(MetaEnv):
    """obs ``[x, steps]``, action ``[1]``; task ``k`` (int): the episode ends after ``k`` steps.

    ``reset`` draws ``x`` from gymnasium's ``np_random`` so that reset seeding is observable.
    """

    def __init__(self, use_truncated=False, fail_on_task=None, step_delay=0.0):
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.use_truncated = use_truncated
        self.fail_on_task = fail_on_task
        self.step_delay = step_delay
        self._task = 100
        self._x = 0.0
        self._steps = 0

    def sample_tasks(self, n_tasks):
        return [int(k) for k in self.task_rng.integers(1, 9, n_tasks)]

    def set_task(self, task):
        self._task = int(task)

    def get_task(self):
        return self._task

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._x = float(self.np_random.uniform(-1.0, 1.0))
        self._steps = 0
        return np.array([self._x, 0.0]), {}

    def step(self, action):
        if self._task == self.fail_on_task:
            raise ValueError(f"boom: task {self._task} is cursed")
        if self.step_delay:
            time.sleep(self.step_delay)
        self._x += float(np.asarray(action).reshape(-1)[0])
        self._steps += 1
        reward = -((self._x - 0.1 * self._task) ** 2) + 0.01 * self._steps
        done = self._steps >= self._task
        info = {"x": self._x, "steps": self._steps, "vec": np.zeros(3), "name": "tiny"}
        obs = np.array([self._x, float(self._steps)])
        return obs, reward, done and not self.use_truncated, done and self.use_truncated, info


def make_policy(num_tasks, obs_dim=2, act_dim=1, hidden=(5,), seed=0):
    rng = np.random.default_rng(seed)
    sizes = (obs_dim, *hidden, act_dim)
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        params[f"W{i}"] = rng.normal(size=(num_tasks, n_in, n_out)).astype(np.float32)
        params[f"b{i}"] = rng.normal(size=(num_tasks, n_out)).astype(np.float32) * 0.1
    params["log_std"] = rng.normal(size=(num_tasks, act_dim)).astype(np.float32) * 0.3
    return NumpyGaussianMLP(params)


class DuckPolicy:
    """The part of the meta-policy interface the sampler uses."""

    def __init__(self, meta_batch_size, obs_dim=2, action_dim=1, seed=0):
        self.meta_batch_size, self.obs_dim, self.action_dim = meta_batch_size, obs_dim, action_dim
        self.sampling_policy = make_policy(meta_batch_size, obs_dim, action_dim, seed=seed)

    def get_sampling_policy(self):
        return self.sampling_policy


def assert_paths_equal(a, b):
    for name in ("observations", "actions", "rewards", "mask"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for infos in ("agent_infos", "env_infos"):
        assert getattr(a, infos).keys() == getattr(b, infos).keys()
        for key in getattr(a, infos):
            np.testing.assert_array_equal(getattr(a, infos)[key], getattr(b, infos)[key])


def collect_iterative(tasks, num_rollouts=3, envs_per_task=3, seed=0, phase=0, env=None):
    with MetaIterativeEnvExecutor(env or TinyEnv(), len(tasks), envs_per_task, H, seed,
                                  quota=EpisodeQuota(num_rollouts)) as ex:
        ex.set_tasks(tasks)
        return ex.collect(make_policy(len(tasks)), phase)


ONE_EPISODE = EpisodeQuota(1)
TASKS = [2, 5, 6, 8]  # episode lengths min(k, H) = 2, 5, 6, 6


@pytest.mark.parametrize("use_truncated", [False, True])
def test_shapes_masks_and_padding(use_truncated):
    paths = collect_iterative(TASKS, env=TinyEnv(use_truncated=use_truncated))
    assert paths.observations.shape == (4, 3, H, 2)
    assert paths.actions.shape == paths.agent_infos["mean"].shape == (4, 3, H, 1)
    assert paths.rewards.shape == paths.mask.shape == (4, 3, H)
    lengths = np.minimum(TASKS, H)
    expected_mask = (np.arange(H) < lengths[:, None, None]).astype(np.float32)
    np.testing.assert_array_equal(paths.mask, np.broadcast_to(expected_mask, (4, 3, H)))
    # Only scalar numeric infos are kept; the terminating step is real, everything after is 0.
    assert set(paths.env_infos) == {"x", "steps"}
    np.testing.assert_array_equal(paths.env_infos["steps"], paths.mask * (np.arange(H) + 1))
    pad = paths.mask == 0
    for array in (paths.observations, paths.actions, *paths.agent_infos.values()):
        assert np.all(array[pad] == 0)
    assert np.all(paths.rewards[pad] == 0) and np.all(paths.env_infos["x"][pad] == 0)
    assert np.all(paths.agent_infos["log_std"][~pad] != 0)
    assert paths.num_env_steps == 3 * lengths.sum()


def test_stored_data_replays_exactly():
    """Rewards/observations match the env, actions match the policy and the episode noise."""
    seed, phase = 7, 3
    policy = make_policy(4)
    with MetaIterativeEnvExecutor(TinyEnv(), 4, 2, H, seed, quota=EpisodeQuota(3)) as ex:
        ex.set_tasks(TASKS)
        paths = ex.collect(policy, phase)
    for t, task in enumerate(TASKS):
        flat_obs = paths.observations[t].reshape(1, 3 * H, 2)
        mean, log_std = policy.task_slice(t, t + 1).distribution(flat_obs)
        mean, log_std = mean.reshape(1, 3, H, 1), log_std.reshape(1, 3, H, 1)
        for r in range(3):
            reset_seed, noise = episode_randomness(seed, phase, t, r, H, 1)
            env = TinyEnv()
            env.set_task(task)
            obs, _ = env.reset(seed=reset_seed)
            for h in range(int(paths.mask[t, r].sum())):
                np.testing.assert_array_equal(paths.observations[t, r, h], np.float32(obs))
                expected_action = mean[0, r, h] + np.exp(log_std[0, r, h]) * noise[h]
                np.testing.assert_allclose(paths.actions[t, r, h], expected_action, rtol=1e-5)
                obs, reward, *_ , info = env.step(paths.actions[t, r, h])
                assert paths.rewards[t, r, h] == np.float32(reward)
                assert paths.env_infos["x"][t, r, h] == np.float32(info["x"])
        real = paths.mask[t] == 1
        np.testing.assert_allclose(paths.agent_infos["mean"][t][real], mean[0][real], rtol=1e-6)


def test_waves_give_the_same_arrays_as_one_wave():
    # Equal up to float32 rounding: BLAS may round a [E, in] @ [in, out] product differently
    # for different E (the number of envs evaluated together).
    one_wave = collect_iterative(TASKS, num_rollouts=3, envs_per_task=3)
    for envs_per_task in (1, 2):
        waves = collect_iterative(TASKS, 3, envs_per_task)
        np.testing.assert_array_equal(waves.mask, one_wave.mask)
        for name in ("observations", "actions", "rewards"):
            np.testing.assert_allclose(getattr(waves, name), getattr(one_wave, name), rtol=1e-5,
                                       atol=1e-6, err_msg=name)


def test_seed_and_phase_change_samples_and_same_seed_reproduces():
    base = collect_iterative([9] * 4, seed=0, phase=0)
    assert_paths_equal(collect_iterative([9] * 4, seed=0, phase=0), base)
    for other in (collect_iterative([9] * 4, seed=1), collect_iterative([9] * 4, phase=1)):
        assert not np.allclose(other.actions, base.actions)
        assert not np.allclose(other.observations[:, :, 0], base.observations[:, :, 0])


def test_parallel_matches_iterative_for_any_worker_count():
    tasks = [2, 5, 6, 8, 3]
    expected = collect_iterative(tasks, num_rollouts=3, envs_per_task=2, phase=4)
    for n_parallel in (2, 3):
        with MetaParallelEnvExecutor(TinyEnv(), 5, 2, H, seed=0, n_parallel=n_parallel,
                                     quota=EpisodeQuota(3)) as ex:
            ex.set_tasks(tasks)
            assert_paths_equal(ex.collect(make_policy(5), 4), expected)
            info = ex.worker_info()
            assert len(info) == n_parallel and not any(w["tensorflow_imported"] for w in info)
            assert len({w["pid"] for w in info} | {os.getpid()}) == n_parallel + 1


def test_hung_worker_raises_after_timeout_instead_of_hanging():
    ex = MetaParallelEnvExecutor(TinyEnv(step_delay=60.0), 4, 1, H, n_parallel=2, timeout=3.0,
                                 quota=ONE_EPISODE)
    ex.set_tasks(TASKS)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="presumed hung"):
        ex.collect(make_policy(4), 0)
    assert time.monotonic() - start < 10.0
    with pytest.raises(RuntimeError):
        ex.collect(make_policy(4), 0)  # closed


def test_worker_exception_is_reraised_with_worker_traceback():
    ex = MetaParallelEnvExecutor(TinyEnv(fail_on_task=5), 4, 1, H, n_parallel=2,
                                 quota=ONE_EPISODE)
    ex.set_tasks(TASKS)
    with pytest.raises(ValueError, match="boom: task 5") as info:
        ex.collect(make_policy(4), 0)
    assert isinstance(info.value.__cause__, RemoteTraceback)
    assert "in step" in str(info.value.__cause__)
    ex.set_tasks([2, 6, 6, 8])  # the other workers' replies were consumed: still in sync
    assert_paths_equal(ex.collect(make_policy(4), 0),
                       collect_iterative([2, 6, 6, 8], num_rollouts=1, envs_per_task=1))
    ex.close()
    with pytest.raises(RuntimeError, match="closed"):
        ex.collect(make_policy(4), 0)


def _collect_in_thread(ex, num_tasks):
    outcome = {}

    def run():
        try:
            outcome["result"] = ex.collect(make_policy(num_tasks), 0)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("when", ["before", "during"])
def test_killed_worker_raises_quickly(when):
    delay = 0.0 if when == "before" else 0.05  # "during": a collect lasts >= 100 * 0.05 s
    ex = MetaParallelEnvExecutor(TinyEnv(step_delay=delay), 2, 1, 100, n_parallel=2,
                                 quota=ONE_EPISODE)
    ex.set_tasks([1000, 1000])
    pid = ex.worker_info()[1]["pid"]
    if when == "before":
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
    thread, outcome = _collect_in_thread(ex, 2)
    if when == "during":
        time.sleep(0.5)
        os.kill(pid, signal.SIGKILL)
    start = time.perf_counter()
    thread.join(timeout=10.0)
    assert not thread.is_alive(), "collect hung after a worker was killed"
    assert time.perf_counter() - start < 5.0
    assert isinstance(outcome.get("error"), RuntimeError)
    assert "died" in str(outcome["error"]) and f"pid {pid}" in str(outcome["error"])
    # One format for every worker message: inclusive task ranges, one line.
    assert f"worker 1 (pid {pid}, tasks 1..1) died during collect" in str(outcome["error"])
    assert "\n" not in str(outcome["error"])
    assert not ex._processes  # closed: the surviving worker was shut down too


def test_meta_sampler_state_round_trip_and_counters():
    def make(parallel=False):
        return MetaSampler(TinyEnv(), DuckPolicy(3), 2, H, seed=11, parallel=parallel,
                           n_parallel=2 if parallel else None)

    with make() as sampler:
        first_tasks = sampler.update_tasks()
        first = sampler.obtain_samples()
        state = sampler.get_state()
        second = sampler.obtain_samples()
        next_tasks = sampler.update_tasks()
        assert sampler.phase == 2
        assert sampler.total_timesteps_sampled == first.num_env_steps + second.num_env_steps
    assert not np.allclose(first.actions, second.actions)  # a new phase, new noise
    with make(parallel=True) as resumed:  # resume into the other executor kind
        assert resumed.update_tasks() == first_tasks  # same seed, same task stream
        resumed.set_state(state)
        assert_paths_equal(resumed.obtain_samples(), second)
        assert resumed.update_tasks() == next_tasks
        assert resumed.total_timesteps_sampled == sampler.total_timesteps_sampled


def test_meta_sampler_logs_env_time(monkeypatch):
    from meta_policy_search.utils import logger

    logged = {}
    monkeypatch.setattr(logger, "logkv", lambda key, value: logged.__setitem__(key, value))
    sampler = MetaSampler(TinyEnv(), DuckPolicy(2), 2, H)
    with pytest.raises(RuntimeError, match="update_tasks"):
        sampler.obtain_samples()
    sampler.update_tasks()
    sampler.obtain_samples(log=True, log_prefix="Step_0-")
    assert list(logged) == [
        "Step_0-Time-EnvExec", "Step_0-PolicyExecTime", "Step_0-EnvExecTime",
        "Step_0-EpisodesPerTask",
    ]
    assert logged["Step_0-Time-EnvExec"] > 0 and logged["Step_0-EpisodesPerTask"] == 2.0
    # Policy and env time are parts of the phase (one process here).
    assert 0 < logged["Step_0-PolicyExecTime"] + logged["Step_0-EnvExecTime"] < logged[
        "Step_0-Time-EnvExec"]


class SlowPolicy(NumpyGaussianMLP):
    """A policy whose every batched forward pass takes at least ``POLICY_DELAY`` seconds."""

    def sample(self, observations, noise):
        time.sleep(POLICY_DELAY)
        return super().sample(observations, noise)


POLICY_DELAY, STEP_DELAY = 0.004, 0.004


def _timed_collect(executor_class, policy, step_delay, sampling_mode, *args):
    tasks = [2, 5, 6, 8]
    with executor_class(TinyEnv(step_delay=step_delay), len(tasks), 2, H, 0, *args,
                        quota=make_quota(sampling_mode, 3)) as ex:
        ex.set_tasks(tasks)
        start = time.perf_counter()
        paths = ex.collect(policy, 0)
        return ex.last_exec_times, time.perf_counter() - start, int(paths.mask.sum())


@pytest.mark.parametrize("sampling_mode", ["rollouts", "budget"])
def test_exec_times_split_policy_and_env_time(sampling_mode):
    """``last_exec_times`` holds the seconds in the policy and in the envs: a slow policy shows
    as policy time, slow env steps as env time, and neither leaks into the other."""
    policy = make_policy(4)
    # 3 episodes of up to H steps per task on 2 env copies: at least ceil(3 H / 2) = 9 ticks,
    # each one batched forward pass.
    min_policy_calls = 9
    times, wall, _ = _timed_collect(
        MetaIterativeEnvExecutor, SlowPolicy(policy.params), 0.0, sampling_mode
    )
    assert times.policy_seconds >= min_policy_calls * POLICY_DELAY
    assert times.env_seconds < min_policy_calls * POLICY_DELAY / 2
    assert times.policy_seconds + times.env_seconds <= wall

    times, wall, real_steps = _timed_collect(
        MetaIterativeEnvExecutor, policy, STEP_DELAY, sampling_mode
    )
    assert times.env_seconds >= real_steps * STEP_DELAY  # one env.step per real step
    assert 0 < times.policy_seconds < real_steps * STEP_DELAY / 2
    assert times.policy_seconds + times.env_seconds <= wall

    # The parallel executor adds up its workers' times.
    times, _, real_steps = _timed_collect(
        MetaParallelEnvExecutor, policy, STEP_DELAY, sampling_mode, 2
    )
    assert times.env_seconds >= real_steps * STEP_DELAY
    assert 0 < times.policy_seconds < real_steps * STEP_DELAY / 2


def _with_task_count(policy, meta_batch_size):
    """``policy`` claiming ``meta_batch_size`` tasks (the sampler reads its task count there)."""
    policy.meta_batch_size = meta_batch_size
    return policy


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(rollouts_per_meta_task=0), "rollouts_per_meta_task"),
        (dict(policy=_with_task_count(DuckPolicy(2), 0)), "policy.meta_batch_size must be a positive"),
        (dict(policy=_with_task_count(DuckPolicy(2), None)), "policy.meta_batch_size .* got None"),
        (dict(max_path_length=2.5), "max_path_length"),
        (dict(envs_per_task=3), "envs_per_task=3 exceeds"),
        (dict(envs_per_task=0), "envs_per_task"),
        (dict(seed=-2), "seed"),
        (dict(policy=DuckPolicy(2, obs_dim=3)), "obs_dim=3"),
    ],
)
def test_meta_sampler_validates_arguments(kwargs, match):
    args = dict(env=TinyEnv(), policy=DuckPolicy(2), rollouts_per_meta_task=2,
                max_path_length=H)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        MetaSampler(**args)


def test_executor_validates_policy_tasks_and_worker_count():
    ex = MetaIterativeEnvExecutor(TinyEnv(), 2, 1, H, quota=ONE_EPISODE)
    with pytest.raises(RuntimeError, match="set_tasks"):
        ex.collect(make_policy(2), 0)
    with pytest.raises(ValueError, match="expected meta_batch_size=2 tasks, got 3"):
        ex.set_tasks([1, 2, 3])
    ex.set_tasks([1, 2])
    with pytest.raises(ValueError, match="policy has 3 tasks"):
        ex.collect(make_policy(3), 0)
    with pytest.raises(ValueError, match="observation dim 4"):
        ex.collect(make_policy(2, obs_dim=4), 0)
    with pytest.raises(ValueError, match="action dim 2"):
        ex.collect(make_policy(2, act_dim=2), 0)
    with pytest.raises(ValueError, match="phase"):
        ex.collect(make_policy(2), -1)
    with pytest.raises(ValueError, match="n_parallel=3 exceeds meta_batch_size=2"):
        MetaParallelEnvExecutor(TinyEnv(), 2, 1, H, n_parallel=3, quota=ONE_EPISODE)


def test_point_env_parallel_matches_iterative():
    from meta_policy_search.envs import normalize
    from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal

    policy = DuckPolicy(4, 2, 2, seed=3)
    samplers = [
        MetaSampler(normalize(PointEnvRandGoal(), 1.0), policy, 3, 10, seed=5, parallel=p)
        for p in (False, True)
    ]
    paths = []
    for sampler in samplers:
        with sampler:
            sampler.update_tasks()
            paths.append(sampler.obtain_samples())
    assert_paths_equal(*paths)
    # Reward = -distance to the task's goal after the step (no reset noise, start at origin).
    goals = np.stack(samplers[0].tasks)[:, None, None]
    next_pos = np.concatenate([paths[0].observations[:, :, 1:], paths[0].observations[:, :, -1:]
                               + np.clip(paths[0].actions[:, :, -1:], -1, 1) * 0.1], axis=2)
    np.testing.assert_allclose(paths[0].rewards, -np.linalg.norm(next_pos - goals, axis=-1),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(paths[0].env_infos["distance"], -paths[0].rewards, rtol=1e-6)


def test_half_cheetah_rollouts():
    pytest.importorskip("mujoco")
    from meta_policy_search.envs import make_env, normalize

    env = normalize(make_env("HalfCheetahRandDirecEnv"))
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    with MetaIterativeEnvExecutor(env, 2, 2, 5, seed=0, quota=EpisodeQuota(2)) as ex:
        ex.set_tasks([-1.0, 1.0])
        paths = ex.collect(make_policy(2, obs_dim, act_dim, hidden=(8,)), 0)
    assert paths.observations.shape == (2, 2, 5, obs_dim) and paths.mask.min() == 1
    replay = normalize(make_env("HalfCheetahRandDirecEnv"))
    replay.set_task(1.0)
    obs, _ = replay.reset(seed=episode_randomness(0, 0, 1, 1, 5, act_dim)[0])
    for h in range(5):
        np.testing.assert_allclose(paths.observations[1, 1, h], obs, rtol=1e-5, atol=1e-6)
        obs, reward, *_ = replay.step(paths.actions[1, 1, h])
        np.testing.assert_allclose(paths.rewards[1, 1, h], reward, rtol=1e-5, atol=1e-6)


def test_spawned_workers_do_not_rerun_the_main_script(tmp_path):
    """A training script imports TensorFlow at top level; workers must not re-run it.

    Spawned children normally re-import ``__main__``; the executor hides it from them. Instead of
    paying for a TensorFlow import, the script records every execution of its top level.
    """
    script, runs = tmp_path / "train_like.py", tmp_path / "runs.txt"
    script.write_text(textwrap.dedent(f"""
        import os
        import sys
        with open({str(runs)!r}, "a") as f:  # stands in for "import tensorflow"
            f.write(str(os.getpid()) + "\\n")
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_sampler import TinyEnv
        from meta_policy_search.samplers import MetaParallelEnvExecutor
        from meta_policy_search.samplers.quota import EpisodeQuota

        if __name__ == "__main__":
            with MetaParallelEnvExecutor(TinyEnv(), 2, 1, 3, n_parallel=2,
                                         quota=EpisodeQuota(1)) as ex:
                print([w["tensorflow_imported"] for w in ex.worker_info()])
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[False, False]"
    assert len(runs.read_text().split()) == 1


def test_with_the_tensorflow_meta_policy():
    """The real policy's sampling export drives the sampler; stored means match its forward."""
    pytest.importorskip("tensorflow")
    from meta_policy_search.policies import MetaGaussianMLPPolicy

    policy = MetaGaussianMLPPolicy(3, 2, 1, hidden_sizes=(8,), seed=0)
    with MetaSampler(TinyEnv(), policy, 2, H, seed=1) as sampler:
        sampler.update_tasks()
        paths = sampler.obtain_samples()
    _, info = policy.get_actions(paths.observations.reshape(3, 2 * H, 2))
    real = paths.mask.reshape(3, 2 * H) == 1
    np.testing.assert_allclose(paths.agent_infos["mean"].reshape(3, 2 * H, 1)[real],
                               info["mean"][real], rtol=1e-5, atol=1e-6)


def test_workers_start_with_one_blas_thread_unless_the_user_chose(monkeypatch):
    from meta_policy_search.samplers.parallel_executor import BLAS_THREAD_VARIABLES, single_threaded_blas

    for name in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "4")  # the user's choice is kept
    with single_threaded_blas():
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
        assert os.environ["OMP_NUM_THREADS"] == "1"
        assert os.environ["MKL_NUM_THREADS"] == "4"
        child = subprocess.run([sys.executable, "-c", "import os; print(os.environ['OPENBLAS_NUM_THREADS'])"],
                               capture_output=True, text=True, check=True)
        assert child.stdout.strip() == "1"
    assert "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ
    assert os.environ["MKL_NUM_THREADS"] == "4"


def test_sampler_timeout_is_owned_by_the_executor():
    from meta_policy_search.samplers import worker_pool
    from meta_policy_search.samplers.worker_pool import AUTO_TIMEOUT, SamplerTimeout

    assert SamplerTimeout(None).seconds is None and SamplerTimeout(3).seconds == 3.0
    auto = SamplerTimeout(AUTO_TIMEOUT)
    assert auto.seconds == worker_pool.AUTO_TIMEOUT_FLOOR
    auto.record(100.0)
    auto.record(1.0)
    assert auto.seconds == max(worker_pool.AUTO_TIMEOUT_FLOOR,
                               worker_pool.AUTO_TIMEOUT_FACTOR * 100.0)
    for bad in (0, -1.0, "soon", True):
        with pytest.raises(ValueError, match="timeout must be > 0 seconds, None or 'auto'"):
            SamplerTimeout(bad)
    with MetaParallelEnvExecutor(TinyEnv(), 2, 1, H, n_parallel=2, timeout=AUTO_TIMEOUT,
                                 quota=ONE_EPISODE) as ex:
        ex.set_tasks([1, 2])
        ex.collect(make_policy(2), 0)
        assert ex.slowest_phase_seconds > 0
        assert ex.timeout.seconds == worker_pool.AUTO_TIMEOUT_FLOOR


def test_quota_rules():
    from meta_policy_search.samplers.quota import (
        SAMPLING_MODES,
        EpisodeQuota,
        StepBudget,
        make_quota,
    )

    assert SAMPLING_MODES == ("rollouts", "budget")
    assert make_quota("rollouts", 3) == EpisodeQuota(3) and make_quota("budget", 3) == StepBudget(3)
    with pytest.raises(ValueError, match="num_rollouts must be an integer >= 1"):
        make_quota("rollouts", 0)
    quota = EpisodeQuota(5)  # E = 2: copy 0 runs episodes 0, 2, 4; copy 1 runs 1, 3
    assert [quota.next_episode(None, 0, w, 2, H) for w in range(4)] == [0, 2, 4, None]
    assert [quota.next_episode(None, 1, w, 2, H) for w in range(3)] == [1, 3, None]
    assert quota.max_ticks(2, H) == 3 * H and quota.num_slots(9) == 5
    assert EpisodeQuota.waves and not StepBudget.waves
    assert StepBudget(3).max_ticks(2, H) == -(-3 * H // 2) + H
