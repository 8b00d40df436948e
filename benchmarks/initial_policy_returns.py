"""The initial policy's return on a meta-env, per initialisation seed (the spread of ``Step_0``).

A run's iteration-0 ``Step_0-AverageReturn`` is the return of its freshly initialised policy,
so two codes seeding their networks differently start from different points even on the same
env. This script measures how far that start spreads over initialisation seeds: for each seed
it builds :class:`~meta_policy_search.policies.GaussianMLPPolicy` (Glorot-uniform kernels, zero
biases, std 1) and runs it, unadapted, on tasks drawn from the env until ``--steps`` env steps,
with the paper's action mapping (``NormalizedEnv``, scale 10).

``--pad N`` also builds each seed's policy for ``obs_dim + N`` inputs and feeds it the
observation followed by ``N`` zeros: the original code's Humanoid observation has 28 more
entries than ours (the world body's rows of ``cinert``, ``cvel`` and ``cfrc_ext``, always 0),
which changes nothing but the first layer's Glorot limit, ``sqrt(6 / (fan_in + fan_out))``.

Usage::

    python benchmarks/initial_policy_returns.py --env HumanoidRandDirec2DEnv --hidden_sizes 128 128 \\
        --seeds 20 --steps 6000 --pad 28 --output benchmarks/results/initial_policy_humanoid
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from meta_policy_search.envs.normalized_env import NormalizedEnv
from meta_policy_search.envs.registry import make_env
from meta_policy_search.experiment.provenance import git_state, package_versions
from meta_policy_search.policies.gaussian_mlp_policy import GaussianMLPPolicy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine_info import machine_info


def policy_returns(
    policy: GaussianMLPPolicy, env: NormalizedEnv, pad: int, steps: int, rng: np.random.Generator,
    max_path_length: int,
) -> tuple[float, float, int]:
    """Mean return and length of the episodes of ``policy`` until ``steps`` env steps.

    Each episode runs on a new task from ``env.sample_tasks`` and ends at termination or
    ``max_path_length`` steps; ``pad`` zeros are appended to every observation.

    Returns:
        ``(mean return, mean episode length, number of episodes)``.
    """
    sampling = policy.numpy_policy({k: v[None] for k, v in policy.get_param_values().items()})
    returns, lengths, total = [], [], 0
    while total < steps:
        env.set_task(env.sample_tasks(1)[0])
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        episode_return, length = 0.0, 0
        for _ in range(max_path_length):
            mean, log_std = sampling.distribution(np.concatenate([obs, np.zeros(pad)])[None, None])
            action = mean[0, 0] + np.exp(log_std[0, 0]) * rng.standard_normal(mean.shape[-1])
            obs, reward, terminated, _, _ = env.step(action)
            episode_return += float(reward)
            length += 1
            if terminated:
                break
        returns.append(episode_return)
        lengths.append(length)
        total += length
    return float(np.mean(returns)), float(np.mean(lengths)), len(returns)


def main(argv: list[str] | None = None) -> None:
    """Measure every seed (and padded variant), print a table, write ``results.json`` and ``.md``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", default="HumanoidRandDirec2DEnv")
    parser.add_argument("--hidden_sizes", type=int, nargs="+", default=[128, 128])
    parser.add_argument("--seeds", type=int, default=20, help="initialisation seeds 1..N")
    parser.add_argument("--steps", type=int, default=6000, help="env steps per seed and variant")
    parser.add_argument("--max_path_length", type=int, default=200)
    parser.add_argument("--pad", type=int, default=0, help="also measure with N zero inputs appended")
    parser.add_argument("--output", required=True, help="directory for results.json and results.md")
    args = parser.parse_args(argv)
    if args.seeds < 2 or args.steps < 1 or args.pad < 0:
        parser.error(f"need --seeds >= 2, --steps >= 1, --pad >= 0; "
                     f"got {args.seeds}, {args.steps}, {args.pad}")

    env = NormalizedEnv(make_env(args.env), normalization_scale=10.0)
    env.seed_tasks(0)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    pads = [0, args.pad] if args.pad else [0]
    rng = np.random.default_rng(0)
    start = time.time()
    rows = []
    for seed in range(1, args.seeds + 1):
        row = {"seed": seed}
        for pad in pads:
            policy = GaussianMLPPolicy(obs_dim + pad, act_dim, args.hidden_sizes, seed=seed)
            ret, length, episodes = policy_returns(policy, env, pad, args.steps, rng, args.max_path_length)
            row[f"inputs_{obs_dim + pad}"] = {"return": ret, "length": length, "episodes": episodes}
        rows.append(row)
        print(json.dumps(row), flush=True)

    summary = {}
    for pad in pads:
        key = f"inputs_{obs_dim + pad}"
        values = np.array([row[key]["return"] for row in rows])
        summary[key] = {"mean": float(values.mean()), "std": float(values.std(ddof=1)),
                        "min": float(values.min()), "max": float(values.max())}
    record = {"command": " ".join(sys.argv), "args": vars(args), "seconds": round(time.time() - start, 1),
              **git_state(), "versions": package_versions(), "machine": machine_info(),
              "summary": summary, "rows": rows}
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "results.json"), "w") as f:
        json.dump(record, f, indent=1)
    keys = [f"inputs_{obs_dim + pad}" for pad in pads]
    lines = [f"# Initial policy's return on {args.env}, per initialisation seed", "",
             f"`{record['command']}` (commit {record['git_commit']}, {record['seconds']} s; "
             "versions and machine in `results.json`).", "",
             "| seed | " + " | ".join(f"return ({k.split('_')[1]} inputs) | length" for k in keys) + " |",
             "|---|" + "---|---|" * len(keys)]
    for row in rows:
        lines.append(f"| {row['seed']} | " + " | ".join(
            f"{row[k]['return']:.1f} | {row[k]['length']:.1f}" for k in keys) + " |")
    summary_cells = ["mean +- std (min - max)"]
    for k in keys:
        stats = summary[k]
        summary_cells += [f"{stats['mean']:.1f} +- {stats['std']:.1f} "
                          f"({stats['min']:.1f} - {stats['max']:.1f})", ""]
    lines.append("| " + " | ".join(summary_cells) + " |")
    with open(os.path.join(args.output, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
