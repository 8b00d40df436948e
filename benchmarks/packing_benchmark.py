"""ProMP's meta-step on packed (real steps only) vs padded ``[R, H]`` samples.

Where episodes end early, the sampler's padded layout holds far more rows than real steps:
ProMP on HumanoidRandDirec2DEnv starts with about 32 steps per episode at ``H = 200``, so a
task's 4,000 steps fill about 124 episodes of 200 slots. This times ``ProMP.optimize_policy``
(5 PPO steps, one inner step, no XLA) on synthetic samples of that shape (Humanoid's 348 / 17
dims, (128, 128) policy, episode lengths uniform in 16..48), with the TensorBatch packed (the
default) and padded (``to_tensor_batch(pack=False)``), interleaved in one process. Usage::

    python benchmarks/packing_benchmark.py [--tasks 20] [--repeats 2]

Writes ``benchmarks/results/packing.{json,md}``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.machine_info import describe_machine, load_average, machine_info, write_results  # noqa: E402
from meta_policy_search.meta_algos import ProMP  # noqa: E402
from meta_policy_search.meta_algos.batch import to_tensor_batch  # noqa: E402
from meta_policy_search.policies import MetaGaussianMLPPolicy  # noqa: E402
from meta_policy_search.samplers.quota import episode_bucket  # noqa: E402
from meta_policy_search.types import SampleBatch  # noqa: E402

R, H, OBS, ACT, HIDDEN = 20, 200, 348, 17, (128, 128)


def short_episode_samples(rng: np.random.Generator, tasks: int) -> SampleBatch:
    """Budget-mode-shaped samples: episodes of 16..48 steps until a task holds ``R x H`` steps."""
    lengths = []
    for _ in range(tasks):
        task = []
        while sum(task) < R * H:
            task.append(int(rng.integers(16, 49)))
        lengths.append(task)
    episodes = episode_bucket(max(len(task) for task in lengths), R)
    mask = np.zeros((tasks, episodes, H), np.float32)
    for t, task in enumerate(lengths):
        for e, length in enumerate(task):
            mask[t, e, :length] = 1.0

    def per_step(*shape: int) -> np.ndarray:
        values = rng.normal(size=(tasks, episodes, H, *shape)).astype(np.float32)
        return values * mask.reshape(*mask.shape, *[1] * len(shape))

    mean = 0.1 * per_step(ACT)
    return SampleBatch(
        observations=per_step(OBS), actions=mean + per_step(ACT), rewards=per_step(), mask=mask,
        agent_infos={"mean": mean, "log_std": np.zeros_like(mean)}, env_infos={},
        returns=per_step(), baselines=np.zeros_like(mask), advantages=per_step(),
    )


def sample_shape(samples: SampleBatch) -> dict:
    """Horizon, episode slots per task, real steps and padded slots of ``samples``."""
    return {"horizon": samples.mask.shape[2], "padded_episodes": samples.mask.shape[1],
            "real_steps": int(samples.mask.sum()), "padded_slots": int(samples.mask.size)}


def describe_samples(result: dict) -> str:
    """'20 tasks, Humanoid-shaped synthetic samples: ... real steps in ... padded slots (...)'."""
    return (f"{result['tasks']} tasks, Humanoid-shaped synthetic samples: "
            f"{result['real_steps']:,} real steps in {result['padded_slots']:,} padded slots "
            f"({result['padded_episodes']} episode slots of H = {result['horizon']} per task)")


def time_step(tasks: int, pack: bool, samples: list[SampleBatch]) -> float:
    """Seconds of one ``optimize_policy`` after a warm-up call (tracing) on fresh samples."""
    policy = MetaGaussianMLPPolicy(tasks, OBS, ACT, hidden_sizes=HIDDEN, seed=0)
    algo = ProMP(policy, inner_lr=0.1, num_inner_grad_steps=1)
    if not pack:
        algo.to_tensors = lambda s: to_tensor_batch(s, policy.dtype, pack=False)  # type: ignore[method-assign]
    algo.optimize_policy(samples)
    start = time.perf_counter()
    algo.optimize_policy(samples)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()
    load_start = load_average()
    rng = np.random.default_rng(0)
    samples = [short_episode_samples(rng, args.tasks) for _ in range(2)]
    times: dict[str, list[float]] = {"packed": [], "padded": []}
    for _ in range(args.repeats):
        for name in times:
            times[name].append(time_step(args.tasks, name == "packed", samples))
            print(name, round(times[name][-1], 2), flush=True)
    machine = machine_info(tensorflow=tf.__version__, numpy=np.__version__)
    machine.update(load_average_start=load_start, load_average_end=load_average())
    result = {
        "machine": machine,
        "tasks": args.tasks, "rollouts": R, **sample_shape(samples[0]),
        "packed_s": min(times["packed"]), "padded_s": min(times["padded"]),
        "speedup": min(times["padded"]) / min(times["packed"]),
    }
    write_results(args.output_dir, "packing", result, write_markdown)


def write_markdown(path: Path, result: dict) -> None:
    """The result as a short table."""
    lines = [
        "# Packed vs padded samples in ProMP's meta-step", "",
        f"`ProMP.optimize_policy` (5 PPO steps, 1 inner step, no XLA), {describe_samples(result)}. "
        "Best of the interleaved repeats, after a warm-up call.",
        "",
        "| layout | seconds per meta-step |", "|---|---:|",
        f"| padded `[R, H]` (before) | {result['padded_s']:.2f} |",
        f"| packed real steps (now) | {result['packed_s']:.2f} |",
        "", f"Speed-up: {result['speedup']:.1f}x.", "",
        describe_machine(result["machine"], note="; shared with a CI run"),
    ]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
