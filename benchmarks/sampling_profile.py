"""Where one batched sampling phase spends its time, in one process (issue 7).

Runs one sampling phase of ``normalize(ENV)`` (40 tasks x 20 rollouts x H = 100, the
iterative executor with the env's batched implementation, a (64, 64) tanh numpy policy) under
``cProfile`` after a warm-up phase and prints the functions by own time: the share of
``mj_step`` is the share of the physics; the rest is the per-env Python loop of the batched
step, the policy, resets and the array maths. Usage::

    python benchmarks/sampling_profile.py HalfCheetahRandDirecEnv [--top 14]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.sampling_benchmark import make_normalized_env_for_benchmark, make_policy  # noqa: E402
from meta_policy_search.samplers import MetaIterativeEnvExecutor  # noqa: E402
from meta_policy_search.samplers.quota import EpisodeQuota  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("env", help="env class name, e.g. HalfCheetahRandDirecEnv")
    parser.add_argument("--top", type=int, default=14, help="functions to print")
    args = parser.parse_args()
    num_tasks, rollouts, horizon = 40, 20, 100
    env = make_normalized_env_for_benchmark(args.env)
    policy = make_policy(num_tasks, env.observation_space.shape[0], env.action_space.shape[0],
                         (64, 64), 0)
    executor = MetaIterativeEnvExecutor(env, num_tasks, rollouts, horizon,
                                        quota=EpisodeQuota(rollouts))
    executor.set_tasks(env.sample_tasks(num_tasks))
    with executor:
        executor.collect(policy, 0)
        profile = cProfile.Profile()
        profile.enable()
        executor.collect(policy, 1)
        profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
