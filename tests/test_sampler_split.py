"""Tests of the split of a sampling phase into shares of tasks' episodes
(:mod:`meta_policy_search.samplers.split`): the balance over workers, and arrays identical to the
iterative executor's for any number of workers, in both sampling modes, with early termination,
with one wave and with several.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from meta_policy_search.samplers import MetaIterativeEnvExecutor, MetaParallelEnvExecutor
from meta_policy_search.samplers.iterative_executor import InProcessTransport
from meta_policy_search.samplers.quota import EpisodeQuota, StepBudget, make_quota
from meta_policy_search.samplers.rollout import collect_paths
from meta_policy_search.samplers.split import (
    Share,
    assign_continuations,
    complete_prefix,
    split_episodes,
)
from meta_policy_search.samplers.worker_pool import WorkerPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))
from test_budget_sampling import RandomLengthEnv
from test_sampler import TinyEnv, assert_paths_equal, make_policy

H = 6
BUDGET_TASKS = [1, 3, 6, 0, 2, 4, 5]  # episode lengths uniform in 1..k (k = 0: always H)
TINY_TASKS = [2, 5, 6, 8, 3, 1, 7]  # episodes end after min(k, H) steps


def episodes_per_worker(blocks):
    return [sum(stop - first for _, first, stop in block) for block in blocks]


# ----------------------------------------------------------------------------------- balance
@pytest.mark.parametrize("num_workers", [4, 8, 16])
def test_every_worker_gets_a_share_within_ten_percent_of_the_mean(num_workers):
    """40 tasks x 20 episodes (the paper's sampling phase) over 4, 8 and 16 workers."""
    blocks = split_episodes(40, 20, num_workers)
    shares = episodes_per_worker(blocks)
    mean = 40 * 20 / num_workers
    assert len(shares) == num_workers
    assert max(abs(share - mean) for share in shares) <= 0.1 * mean, shares
    # Every episode exactly once, each worker's ranges contiguous and in task order.
    covered = [(task, k) for block in blocks for task, first, stop in block
               for k in range(first, stop)]
    assert covered == [(task, k) for task in range(40) for k in range(20)]
    # Whole tasks alone could not do it at 16 workers: some would get 3 tasks, others 2.
    whole_task_shares = [20 * len(block) for block in np.array_split(np.arange(40), num_workers)]
    assert (max(whole_task_shares) - mean > 0.1 * mean) == (num_workers == 16)


def test_executor_deals_the_split_to_its_workers():
    with WorkerPoolExecutor(InProcessTransport(TinyEnv()), TinyEnv(), 40, 20, H, seed=0,
                            quota=EpisodeQuota(20), num_workers=16) as ex:
        counts = episodes_per_worker(ex.shares)
        assert counts == [50] * 16
        assert ex.task_blocks[:3] == [(0, 3), (2, 5), (5, 8)]
        assert [len(worker.shares) for worker in ex._transport.workers[:2]] == [3, 3]


def test_split_helpers():
    assert split_episodes(5, 3, 2) == [[(0, 0, 3), (1, 0, 3), (2, 0, 1)],
                                       [(2, 1, 3), (3, 0, 3), (4, 0, 3)]]
    assert split_episodes(4, 3, 2) == [[(0, 0, 3), (1, 0, 3)], [(2, 0, 3), (3, 0, 3)]]
    assert split_episodes(1, 4, 4) == [[(0, k, k + 1)] for k in range(4)]
    with pytest.raises(ValueError, match="at least one episode"):
        split_episodes(2, 1, 3)
    assert complete_prefix(StepBudget(2), [6, 6], H) == 2
    assert complete_prefix(StepBudget(2), [6, 5], H) is None
    assert assign_continuations({1: [0, 1], 4: [1, 2], 7: [2, 3]}, {1: 5, 4: 9, 7: 2}) == {
        0: [1], 1: [4], 2: [7]
    }


def test_more_workers_than_episodes_are_refused():
    with pytest.raises(ValueError, match="n_parallel=7 exceeds meta_batch_size=3 x 2"):
        MetaParallelEnvExecutor(TinyEnv(), 3, 2, H, n_parallel=7, quota=EpisodeQuota(2))


# ----------------------------------------------------------------------- identical results
def collect_with(executor, tasks, phase):
    with executor as ex:
        ex.set_tasks(tasks)
        paths = ex.collect(make_policy(len(tasks)), phase)
        return paths, ex


def reference(env, tasks, envs_per_task, quota, phase):
    return collect_with(MetaIterativeEnvExecutor(env, len(tasks), envs_per_task, H, seed=4,
                                                 quota=quota), tasks, phase)[0]


CASES = [  # (env, tasks, R, E, mode)
    (TinyEnv, TINY_TASKS, 4, 4, "rollouts"),
    (TinyEnv, TINY_TASKS, 5, 2, "rollouts"),  # waves, the last one narrower
    (RandomLengthEnv, BUDGET_TASKS, 4, 4, "budget"),
    (RandomLengthEnv, BUDGET_TASKS, 4, 3, "budget"),
    (RandomLengthEnv, [0] * 7, 3, 3, "budget"),  # no early termination: no second round
]


@pytest.mark.parametrize("make_env,tasks,num_rollouts,envs_per_task,mode", CASES)
def test_any_number_of_workers_gives_the_iterative_executors_arrays(
    make_env, tasks, num_rollouts, envs_per_task, mode, monkeypatch
):
    quota = make_quota(mode, num_rollouts)
    continued = []
    original = WorkerPoolExecutor._continue

    def counting_continue(self, tasks_by_worker, timeout):
        continued.append(sum(len(t) for t in tasks_by_worker.values()))
        return original(self, tasks_by_worker, timeout)

    monkeypatch.setattr(WorkerPoolExecutor, "_continue", counting_continue)
    for phase in (0, 3):
        expected = reference(make_env(), tasks, envs_per_task, quota, phase)
        total = len(tasks) * quota.leading_episodes(envs_per_task)
        for num_workers in sorted({1, 2, 3, 4, 5, 9, 16, total} & set(range(1, total + 1))):
            ex = WorkerPoolExecutor(InProcessTransport(make_env()), make_env(), len(tasks),
                                    envs_per_task, H, seed=4, quota=quota,
                                    num_workers=num_workers)
            paths, _ = collect_with(ex, tasks, phase)
            assert_paths_equal(paths, expected)
            assert paths.observations.flags.writeable
    if mode == "budget" and any(tasks):
        assert sum(continued) > 0  # split tasks were continued in a second round
    else:
        assert not continued


def test_parallel_executor_with_1_2_3_and_16_processes():
    """The same arrays over pipes, under a step budget with early termination (second round)."""
    tasks, quota = BUDGET_TASKS[:4], StepBudget(4)
    for phase in (0, 1):
        expected = reference(RandomLengthEnv(), tasks, 4, quota, phase)
        for n_parallel in (1, 2, 3, 16):
            with MetaParallelEnvExecutor(RandomLengthEnv(), 4, 4, H, seed=4,
                                         n_parallel=n_parallel, quota=quota) as ex:
                ex.set_tasks(tasks)
                assert_paths_equal(ex.collect(make_policy(4), phase), expected)
                if n_parallel == 16:
                    assert len({w["pid"] for w in ex.worker_info()}) == 16


@pytest.mark.parametrize("envs_per_task", [3, 5])
def test_a_continued_task_gets_the_whole_tasks_later_episodes(envs_per_task, monkeypatch):
    """collect_paths with the leading episodes' lengths replays them and runs every later
    episode on the copy and from the tick of the whole-task collection: the copy is the row of
    the policy's matmul, which may round differently at another row."""
    from meta_policy_search.samplers import rollout
    from meta_policy_search.samplers.executor_base import RolloutWorker, WorkerSpec
    from meta_policy_search.samplers.iterative_executor import copy_env

    env, quota, policy = RandomLengthEnv(), StepBudget(5), make_policy(1)
    schedule = []
    original = rollout._TaskEpisodes.start

    def recording_start(self, episode, env_index, tick):
        schedule.append((episode, env_index, tick))
        original(self, episode, env_index, tick)

    monkeypatch.setattr(rollout._TaskEpisodes, "start", recording_start)
    worker = RolloutWorker(env, WorkerSpec(5, 6, envs_per_task, H, 4, quota),
                           lambda: copy_env(env))
    continued = 0
    for task in range(1, 7):
        worker.set_tasks([task])
        for phase in range(4):
            schedule.clear()
            whole = worker.collect(policy, phase)[0].padded()
            whole_schedule = list(schedule)
            schedule.clear()
            lengths = tuple(int(n) for n in whole.mask[0, :envs_per_task].sum(axis=-1))
            rest = collect_paths(worker.envs, envs_per_task, policy,
                                 [Share(5, quota, known_lengths=lengths)], H, 4, phase).padded()
            assert schedule == whole_schedule
            count = int(whole.episodes_per_task[0]) - envs_per_task
            assert int(rest.episodes_per_task[0]) == count
            continued += count
            for name in ("observations", "actions", "rewards", "mask"):
                np.testing.assert_array_equal(getattr(rest, name)[0, :count],
                                              getattr(whole, name)[0, envs_per_task:][:count])
    assert continued > 0
