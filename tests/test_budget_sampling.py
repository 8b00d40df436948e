"""Tests of the ``'budget'`` sampling mode: complete episodes until a task holds ``R x H`` steps.

:class:`RandomLengthEnv` (defined here) ends an episode after a number of steps drawn at reset
from the env's ``np_random``, so an episode's length depends on the task and on the episode's
randomness (its reset seed), and is known without stepping the env.
"""

from __future__ import annotations

import os
import sys

import gymnasium as gym
import numpy as np
import pytest

from meta_policy_search.envs.base import MetaEnv
from meta_policy_search.samplers import (
    MetaIterativeEnvExecutor,
    MetaParallelEnvExecutor,
    MetaSampler,
)
from meta_policy_search.samplers.paths import concatenate_paths
from meta_policy_search.samplers.quota import episode_bucket, is_episode_bucket, make_quota
from meta_policy_search.samplers.rollout import episode_randomness
from meta_policy_search.types import PathBatch

sys.path.insert(0, os.path.dirname(__file__))
from test_sampler import DuckPolicy, assert_paths_equal, make_policy

H = 6


class RandomLengthEnv(MetaEnv):
    """obs ``[x, steps]``, action ``[1]``. Task ``k`` (int): ``k == 0`` never terminates, else
    each episode terminates after ``L ~ uniform{1..k}`` steps, drawn at reset from ``np_random``.
    """

    def __init__(self):
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self._task = 0
        self._x = 0.0
        self._steps = 0
        self._length = None

    def sample_tasks(self, n_tasks):
        return [int(k) for k in self.task_rng.integers(0, 9, n_tasks)]

    def set_task(self, task):
        self._task = int(task)

    def get_task(self):
        return self._task

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._x = float(self.np_random.uniform(-1.0, 1.0))
        self._length = int(self.np_random.integers(1, self._task + 1)) if self._task else None
        self._steps = 0
        return np.array([self._x, 0.0]), {}

    def step(self, action):
        self._x += float(np.asarray(action).reshape(-1)[0])
        self._steps += 1
        reward = -((self._x - 0.1 * self._task) ** 2) + 1.0
        terminated = self._length is not None and self._steps >= self._length
        return np.array([self._x, float(self._steps)]), reward, terminated, False, {"x": self._x}

    @staticmethod
    def episode_length(task, seed, phase, task_index, k):
        """The length of episode ``k`` of a task, from its reset seed alone."""
        env = RandomLengthEnv()
        env.set_task(task)
        env.reset(seed=episode_randomness(seed, phase, task_index, k, H, 1)[0])
        return min(env._length or H, H)


def collect(tasks, num_rollouts, envs_per_task, mode, seed=0, phase=0, n_parallel=None):
    quota = make_quota(mode, num_rollouts)
    if n_parallel is None:
        executor = MetaIterativeEnvExecutor(RandomLengthEnv(), len(tasks), envs_per_task, H, seed,
                                            quota=quota)
    else:
        executor = MetaParallelEnvExecutor(RandomLengthEnv(), len(tasks), envs_per_task, H, seed,
                                           n_parallel=n_parallel, quota=quota)
    with executor as ex:
        ex.set_tasks(tasks)
        return ex.collect(make_policy(len(tasks)), phase)


def assert_paths_close(a, b):
    """Equal masks; float data equal up to BLAS rounding.

    The policy's batched matmul may round a row differently depending on how many rows are
    evaluated together (the number of envs per task), as in the ``'rollouts'`` mode's waves.
    """
    np.testing.assert_array_equal(a.mask, b.mask)
    for name in ("observations", "actions", "rewards"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    for key in a.agent_infos:
        np.testing.assert_allclose(a.agent_infos[key], b.agent_infos[key], rtol=1e-5, atol=1e-6)
    assert a.env_infos.keys() == b.env_infos.keys()


# ------------------------------------------------------------------------------ the ladder
def test_episode_bucket_ladder():
    assert [episode_bucket(n, 4) for n in range(0, 22)] == (
        [4] * 5 + [5, 6, 7, 8, 10, 10, 12, 12, 14, 14, 16, 16, 20, 20, 20, 20, 24]
    )
    ladder_20 = sorted({episode_bucket(n, 20) for n in range(1, 401)})
    assert ladder_20 == [20, 25, 30, 35, 40, 50, 60, 70, 80, 100, 120, 140, 160, 200, 240, 280,
                         320, 400]
    for num_rollouts in (1, 3, 7, 20, 40):
        for n in range(1, 50 * num_rollouts):
            bucket = episode_bucket(n, num_rollouts)
            assert bucket >= max(n, num_rollouts) and is_episode_bucket(bucket, num_rollouts)
            if n >= 4 * num_rollouts:  # past rounding: at most 25 % padding
                assert bucket <= 1.25 * n
    assert not is_episode_bucket(9, 4) and not is_episode_bucket(3, 4)
    with pytest.raises(ValueError, match="num_rollouts >= 1"):
        episode_bucket(3, 0)


# ------------------------------------------------------------------ without early termination
@pytest.mark.parametrize("envs_per_task", [1, 2, 4])
def test_budget_equals_rollouts_bit_for_bit_without_termination(envs_per_task):
    tasks = [0, 0, 0]
    rollouts = collect(tasks, 4, envs_per_task, "rollouts", seed=3, phase=2)
    budget = collect(tasks, 4, envs_per_task, "budget", seed=3, phase=2)
    assert budget.mask.shape == (3, 4, H) and budget.mask.min() == 1
    assert_paths_equal(budget, rollouts)


def test_half_cheetah_budget_equals_rollouts():
    pytest.importorskip("mujoco")
    from meta_policy_search.envs import make_env, normalize

    env = normalize(make_env("HalfCheetahRandDirecEnv"))
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    paths = {}
    for mode in ("rollouts", "budget"):
        policy = DuckPolicy(2, obs_dim, act_dim, seed=4)
        with MetaSampler(env, policy, 3, 7, seed=2, sampling_mode=mode) as sampler:
            sampler.update_tasks()
            paths[mode] = [sampler.obtain_samples() for _ in range(2)]
    for budget, rollouts in zip(paths["budget"], paths["rollouts"]):
        assert_paths_equal(budget, rollouts)


# ---------------------------------------------------------------------- with early termination
TASKS = [1, 3, 6, 0, 2]  # episode lengths uniform in 1..k (k = 0: always H)


def test_budget_collects_the_shortest_prefix_holding_the_budget():
    seed, phase, num_rollouts = 5, 3, 3
    budget = num_rollouts * H
    paths = collect(TASKS, num_rollouts, num_rollouts, "budget", seed=seed, phase=phase)
    counts = paths.episodes_per_task
    steps_per_task = paths.mask.sum(axis=(1, 2))
    lengths = paths.mask.sum(axis=-1)  # [T, N]
    num_slots = paths.mask.shape[1]

    assert num_slots == episode_bucket(int(counts.max()), num_rollouts)
    assert is_episode_bucket(num_slots, num_rollouts) and num_slots > num_rollouts
    for t, task in enumerate(TASKS):
        n = counts[t]
        # Real episodes come first (a prefix), padded ones are all zero with mask 0.
        assert paths.episode_mask[t, :n].all() and not paths.episode_mask[t, n:].any()
        for array in (paths.observations, paths.actions, paths.rewards, paths.mask,
                      *paths.agent_infos.values(), *paths.env_infos.values()):
            assert not array[t, n:].any()
        # >= R x H real steps, and one episode fewer would not do.
        assert steps_per_task[t] >= budget > steps_per_task[t] - lengths[t, n - 1]
        # Episode k is the k-th episode of the task's randomness stream.
        expected = [RandomLengthEnv.episode_length(task, seed, phase, t, k) for k in range(n)]
        np.testing.assert_array_equal(lengths[t, :n], expected)
    assert counts[TASKS.index(0)] == num_rollouts and counts[TASKS.index(1)] == budget
    assert paths.num_env_steps == steps_per_task.sum()


def test_budget_episodes_are_the_rollouts_modes_episodes():
    """Episode k of a task is rollout k of the 'rollouts' mode with enough rollouts."""
    budget = collect(TASKS, 3, 3, "budget", seed=1, phase=7)
    num_slots = budget.mask.shape[1]
    rollouts = collect(TASKS, num_slots, num_slots, "rollouts", seed=1, phase=7)
    real = budget.episode_mask
    np.testing.assert_array_equal(budget.mask[real], rollouts.mask[real])
    for name in ("observations", "actions", "rewards"):
        np.testing.assert_allclose(getattr(budget, name)[real], getattr(rollouts, name)[real],
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(budget.env_infos["x"][real], rollouts.env_infos["x"][real],
                               rtol=1e-5, atol=1e-6)


def test_budget_is_independent_of_envs_per_task_and_executor():
    num_rollouts = 4
    reference = collect(TASKS, num_rollouts, num_rollouts, "budget", seed=2, phase=1)
    for envs_per_task in (1, 3):
        assert_paths_close(collect(TASKS, num_rollouts, envs_per_task, "budget", seed=2, phase=1),
                           reference)
    # Same envs per task: the executors and worker splits agree bit for bit.
    for envs_per_task in (1, 3):
        iterative = collect(TASKS, num_rollouts, envs_per_task, "budget", seed=2, phase=1)
        for n_parallel in (2, 3):
            parallel = collect(TASKS, num_rollouts, envs_per_task, "budget", seed=2, phase=1,
                               n_parallel=n_parallel)
            assert_paths_equal(parallel, iterative)


def test_meta_sampler_budget_mode_logs_and_validates(monkeypatch):
    from meta_policy_search.utils import logger

    logged = {}
    monkeypatch.setattr(logger, "logkv", lambda key, value: logged.__setitem__(key, value))
    with MetaSampler(RandomLengthEnv(), DuckPolicy(4), 3, H, seed=1,
                     sampling_mode="budget") as sampler:
        assert sampler.nominal_timesteps_per_phase == 4 * 3 * H
        sampler.set_tasks([1, 2, 0, 4])
        paths = sampler.obtain_samples(log=True, log_prefix="Step_1-")
        assert sampler.total_timesteps_sampled == paths.num_env_steps
    assert logged["Step_1-EpisodesPerTask"] == pytest.approx(paths.episodes_per_task.mean())
    assert logged["Step_1-EpisodesPerTask"] > 3
    with pytest.raises(ValueError, match=r"sampling_mode must be one of \('rollouts', 'budget'\), "
                                         r"got 'steps'"):
        MetaSampler(RandomLengthEnv(), DuckPolicy(2), 2, H, sampling_mode="steps")
    with pytest.raises(ValueError, match="sampling_mode must be one of"):
        make_quota("Budget", 1)
    with pytest.raises(ValueError, match="quota must be an EpisodeQuota or StepBudget"):
        MetaIterativeEnvExecutor(RandomLengthEnv(), 2, 1, H, quota="budget")


def test_concatenate_paths_pads_the_episode_axis():
    def batch(num_tasks, num_episodes, fill):
        shape = (num_tasks, num_episodes, H)
        return PathBatch(observations=np.full(shape + (2,), fill, np.float32),
                         actions=np.full(shape + (1,), fill, np.float32),
                         rewards=np.full(shape, fill, np.float32), mask=np.ones(shape, np.float32),
                         agent_infos={"mean": np.full(shape + (1,), fill, np.float32)},
                         env_infos={"x": np.full(shape, fill, np.float32)})

    joined = concatenate_paths([batch(2, 4, 1.0), batch(1, 5, 2.0), batch(1, 4, 3.0)])
    assert joined.mask.shape == (4, 5, H) and joined.observations.shape == (4, 5, H, 2)
    np.testing.assert_array_equal(joined.episodes_per_task, [4, 4, 5, 4])
    for array in (joined.rewards, joined.observations, joined.agent_infos["mean"],
                  joined.env_infos["x"]):
        assert array.dtype == np.float32
        assert np.all(array[[0, 1, 3], 4] == 0) and np.all(array[2] == 2.0)
        assert np.all(array[3, :4] == 3.0)


def test_path_batch_episode_helpers():
    mask = np.zeros((2, 3, 4), np.float32)
    mask[0, 0, :2] = mask[0, 1, :4] = mask[1, 0, :1] = 1.0  # task 1 has one real episode
    rewards = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * mask
    paths = PathBatch(observations=np.zeros((2, 3, 4, 1), np.float32),
                      actions=np.zeros((2, 3, 4, 1), np.float32), rewards=rewards, mask=mask)
    np.testing.assert_array_equal(paths.episode_mask, [[True, True, False], [True, False, False]])
    np.testing.assert_array_equal(paths.episodes_per_task, [2, 1])
    np.testing.assert_array_equal(paths.episode_returns, [[1, 4 + 5 + 6 + 7, 0], [12, 0, 0]])
    np.testing.assert_array_equal(paths.real_episode_returns(), [1, 22, 12])
    np.testing.assert_array_equal(paths.task_average_returns(), [11.5, 12.0])


# ------------------------------------------------- downstream code and whole padded episodes
def _with_extra_padded_episodes(paths, extra):
    """``paths`` with ``extra`` whole padded episodes (zeros, mask 0) appended to every task."""

    def pad(array):
        widths = [(0, 0)] * array.ndim
        widths[1] = (0, extra)
        return np.pad(array, widths)

    return PathBatch(
        observations=pad(paths.observations), actions=pad(paths.actions),
        rewards=pad(paths.rewards), mask=pad(paths.mask),
        agent_infos={k: pad(v) for k, v in paths.agent_infos.items()},
        env_infos={k: pad(v) for k, v in paths.env_infos.items()},
    )


def _budget_paths():
    paths = collect(TASKS, 3, 3, "budget", seed=4)
    rng = np.random.default_rng(0)
    infos = {key: (rng.normal(size=paths.mask.shape) * paths.mask).astype(np.float32)
             for key in ("forward_vel", "reward_ctrl", "reward_forward", "goal_distance",
                         "distance")}
    return PathBatch(observations=paths.observations, actions=paths.actions,
                     rewards=paths.rewards, mask=paths.mask, agent_infos=paths.agent_infos,
                     env_infos=infos)


@pytest.mark.parametrize("processor", ["meta", "dice"])
def test_sample_processors_ignore_whole_padded_episodes(processor):
    from meta_policy_search.baselines import LinearFeatureBaseline
    from meta_policy_search.samplers import DiceSampleProcessor, MetaSampleProcessor

    def make():
        if processor == "dice":
            return DiceSampleProcessor(LinearFeatureBaseline(), H, normalize_adv=True)
        return MetaSampleProcessor(LinearFeatureBaseline(), normalize_adv=True)

    paths = _budget_paths()
    padded = _with_extra_padded_episodes(paths, 5)
    proc, proc_padded = make(), make()
    samples = proc.process_samples(paths, log_prefix="Step_0-")
    samples_padded = proc_padded.process_samples(padded, log_prefix="Step_0-")
    num_slots = paths.mask.shape[1]
    fields = ["returns", "baselines", "advantages"] + (["adjusted_rewards"] * (processor == "dice"))
    for name in fields:
        np.testing.assert_allclose(getattr(samples_padded, name)[:, :num_slots],
                                   getattr(samples, name), rtol=1e-5, atol=1e-6, err_msg=name)
        assert not getattr(samples, name)[~paths.episode_mask].any()
    stats, stats_padded = proc.last_statistics, proc_padded.last_statistics
    assert stats.keys() == stats_padded.keys()
    for key in stats:
        assert stats_padded[key] == pytest.approx(stats[key], rel=1e-6), key
    real_returns = paths.real_episode_returns()
    assert stats["Step_0-NumTrajs"] == paths.episodes_per_task.sum() == real_returns.size
    assert stats["Step_0-AverageReturn"] == pytest.approx(real_returns.mean())
    assert stats["Step_0-MinReturn"] == pytest.approx(real_returns.min())
    assert stats["Step_0-StdReturn"] == pytest.approx(real_returns.std())


def test_env_diagnostics_ignore_whole_padded_episodes():
    from meta_policy_search.envs.mujoco_envs import diagnostics
    from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal

    paths = _budget_paths()
    padded = _with_extra_padded_episodes(paths, 4)
    for diagnose in (diagnostics.velocity_error_diagnostics, diagnostics.goal_diagnostics,
                     PointEnvRandGoal().log_diagnostics):
        expected, got = diagnose(paths, "p-"), diagnose(padded, "p-")
        assert expected.keys() == got.keys() and expected
        for key in expected:
            assert got[key] == pytest.approx(expected[key], rel=1e-9), key
    forward = diagnostics.forward_return_diagnostics(paths)
    sums = (paths.env_infos["reward_forward"].astype(np.float64) * paths.mask).sum(-1)
    assert forward["AverageForwardReturn"] == pytest.approx(sums[paths.episode_mask].mean())
    assert forward["MaxForwardReturn"] == pytest.approx(sums[paths.episode_mask].max())


# ------------------------------------------------------------------------- run scripts
def test_build_sampler_plumbs_and_validates_sampling_mode():
    import dataclasses

    from meta_policy_search.envs import normalize
    from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal
    from meta_policy_search.experiment.components import build_sampler
    from meta_policy_search.experiment.configs import MetaRLConfig, validate_config

    config = MetaRLConfig(env="PointEnvRandGoal", meta_batch_size=2, rollouts_per_meta_task=2,
                          max_path_length=5, executor="iterative", sampling_mode="budget")
    with build_sampler(config, normalize(PointEnvRandGoal()), DuckPolicy(2, 2, 2), 0) as sampler:
        assert sampler.sampling_mode == "budget"
    bad = dataclasses.replace(config, sampling_mode="episodes")
    # Checked when a command line is parsed; a config built otherwise meets MetaSampler's check.
    assert validate_config(bad) == ["--sampling_mode episodes: must be one of rollouts, budget"]
    with pytest.raises(ValueError, match=r"sampling_mode must be one of \('rollouts', 'budget'\), "
                                         r"got 'episodes'"):
        build_sampler(bad, normalize(PointEnvRandGoal()), DuckPolicy(2, 2, 2), 0)


@pytest.mark.parametrize("name", ["promp_run_mujoco", "dice_maml_run_mujoco"])
def test_script_trains_in_budget_mode_with_early_termination(name, tmp_path):
    """Walker2D episodes end early: more episodes, padded episode axes, nominal n_timesteps."""
    import csv
    import importlib

    pytest.importorskip("tensorflow")
    pytest.importorskip("meta_policy_search.envs.mujoco_envs")
    from meta_policy_search.utils import logger

    experiments = os.path.join(os.path.dirname(os.path.dirname(__file__)), "experiments")
    sys.path.insert(0, experiments)
    try:
        script = importlib.import_module(name)
        horizon, num_tasks, num_rollouts = 30, 2, 2
        run_dir = script.main([
            "--env", "Walker2DRandDirecEnv", "--sampling_mode", "budget",
            "--meta_batch_size", str(num_tasks), "--rollouts_per_meta_task", str(num_rollouts),
            "--max_path_length", str(horizon), "--executor", "iterative", "--hidden_sizes", "8",
            "--log_formats", "csv", "--seed", "2", "--n_itr", "2",
            "--dump_path", str(tmp_path / "run"),
        ])
    finally:
        sys.path.remove(experiments)
        logger.reset()
    with open(os.path.join(run_dir, "progress.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    nominal = 2 * num_tasks * num_rollouts * horizon  # K + 1 = 2 phases per iteration
    assert [int(row["n_timesteps"]) for row in rows] == [nominal, 2 * nominal]
    episodes_per_task = []
    for row in rows:
        assert int(row["n_timesteps_real"]) >= int(row["n_timesteps"])
        for step in (0, 1):
            episodes = float(row[f"Step_{step}-EpisodesPerTask"])
            episodes_per_task.append(episodes)
            assert int(row[f"Step_{step}-NumTrajs"]) == round(episodes * num_tasks)
            assert np.isfinite(float(row[f"Step_{step}-AverageReturn"]))
    # Early termination: more, shorter episodes than R.
    assert min(episodes_per_task) >= num_rollouts and max(episodes_per_task) > num_rollouts
