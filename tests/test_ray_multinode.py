"""The Ray executor on a local two-node cluster (``ray.cluster_utils.Cluster``, issue 9.8).

Two raylets with one CPU each, so the two sampler actors (one CPU each) must run on different
nodes. Checked: sampling across nodes gives the iterative executor's arrays, and losing a node
in the middle of a phase stops the phase at once with an error naming the actor and its tasks
(no hang; the run can then be resumed from its last checkpoint).
"""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

from meta_policy_search.envs import normalize  # noqa: E402
from meta_policy_search.envs.point_envs.point_env_rand_goal import PointEnvRandGoal  # noqa: E402
from meta_policy_search.samplers import MetaIterativeEnvExecutor, MetaRayEnvExecutor  # noqa: E402
from meta_policy_search.samplers.quota import EpisodeQuota  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from test_sampler import assert_paths_equal, make_policy  # noqa: E402


@pytest.fixture(scope="module")
def two_node_cluster():
    if ray.is_initialized():
        pytest.skip("Ray is already initialised in this process")
    # Fast node-failure detection (the default takes tens of seconds).
    system_config = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
                     "health_check_failure_threshold": 3}
    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "_system_config": system_config}
    )
    worker_node = cluster.add_node(num_cpus=1)
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        yield cluster, worker_node
    finally:
        ray.shutdown()
        cluster.shutdown()


def point_env():
    env = normalize(PointEnvRandGoal(), 1.0)
    env.seed_tasks(0)
    return env


def node_ids(executor) -> set[str]:
    return set(ray.get([
        actor.__ray_call__.remote(lambda _self: ray.get_runtime_context().get_node_id())
        for actor in executor.actors
    ]))


def test_sampling_across_nodes_matches_iterative_and_node_loss_fails_fast(two_node_cluster):
    cluster, worker_node = two_node_cluster
    env = point_env()
    tasks = env.sample_tasks(2)
    policy = make_policy(2, 2, 2, hidden=(8,))
    with MetaRayEnvExecutor(env, 2, 2, 5, num_actors=2, quota=EpisodeQuota(2)) as executor:
        executor.set_tasks(tasks)
        assert len(node_ids(executor)) == 2  # one actor per node
        paths = executor.collect(policy, phase=0)
    with MetaIterativeEnvExecutor(env, 2, 2, 5, quota=EpisodeQuota(2)) as iterative:
        iterative.set_tasks(tasks)
        assert_paths_equal(paths, iterative.collect(policy, phase=0))

    # A long phase (each actor steps 20 envs x 20000 steps), during which a node dies.
    executor = MetaRayEnvExecutor(env, 2, 20, 20000, num_actors=2, quota=EpisodeQuota(20))
    executor.set_tasks(tasks)
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = executor.collect(policy, phase=0)
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    time.sleep(1.0)
    start = time.monotonic()
    cluster.remove_node(worker_node)
    thread.join(timeout=60.0)
    assert not thread.is_alive(), "collect hung after a node died"
    assert time.monotonic() - start < 20.0
    assert isinstance(outcome.get("error"), RuntimeError), outcome
    assert "died during collect" in str(outcome["error"])
    assert "(tasks " in str(outcome["error"])
    assert not executor.actors  # closed
