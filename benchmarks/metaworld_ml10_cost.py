"""Where an ML10 TRPO-MAML (or ProMP) iteration's time goes, in CPU seconds per phase, at reduced sizes.

The ``ML10`` paper config (Meta-World+'s MAML-TRPO: meta-batch 20, 10 episodes of H = 500 per
task and phase, (512, 512) tanh policy, 100 iterations) samples 200,000 env steps per iteration
(pre- and post-update) and takes one TRPO step over 100,000 samples per phase. This script runs a
few iterations of the same config with fewer tasks and episodes (``--meta_batch_size``,
``--rollouts_per_meta_task``; H, network, inner step and TRPO settings are the config's), in one
process (iterative executor), and measures with ``time.process_time`` (CPU seconds of the whole
process, TensorFlow's threads included; much less sensitive to other jobs than wall time):

* the floor: a standalone Meta-World env of every ML10 training class, its raw ``step`` (one
  ``mj_step`` of ``frame_skip`` substeps plus Meta-World's reward and observation code), the
  ``mj_step`` alone, ``reset``, ``set_task`` and the env's construction;
* per iteration after the first (which builds the graphs): sampling and, inside it, the envs'
  ``step``, ``reset`` and ``set_task`` and the policy's forward pass; sample processing and,
  inside it, the baseline fit; the inner step; the outer (TRPO) step, its number of line-search
  steps, and, on the same inputs after the step, one loss evaluation (what a line-search step
  costs) and one Hessian-vector product (what a conjugate-gradient iteration costs); the
  checkpoint; the process's peak resident memory.

Costs per env step and per sample are then scaled to the full config
(``benchmarks/results/metaworld_ml10/cost.md`` says how). A meta-batch that is a multiple of the
10 training classes keeps every env copy on one class, as the full config does. Usage::

    .venv-metaworld/bin/python benchmarks/metaworld_ml10_cost.py --meta_batch_size 10 \
        --rollouts_per_meta_task 2 --output benchmarks/results/metaworld_ml10/cost_mb10_r2.json
    .venv-metaworld/bin/python benchmarks/metaworld_ml10_cost.py --algo promp --floor_steps 0 \
        --output benchmarks/results/metaworld_ml10/cost_promp_mb10_r2.json
    python benchmarks/metaworld_ml10_cost.py --summarize benchmarks/results/metaworld_ml10/cost_*.json
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import importlib
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from typing import Any

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = os.path.join(REPO, "experiments")


class CpuClock:
    """CPU seconds and call counts per named part, for the iteration in progress."""

    def __init__(self) -> None:
        self.iteration: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
        self.finished: list[dict[str, Any]] = []
        self._depth: dict[str, int] = collections.defaultdict(int)

    def wrap(self, owner: Any, name: str, label: str) -> None:
        """Replace ``owner.name`` by a version that adds its CPU seconds to ``label``."""
        original = getattr(owner, name)
        clock = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            if clock._depth[label]:  # a nested call of the same part is counted once
                return original(*args, **kwargs)
            clock._depth[label] += 1
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                entry = clock.iteration[label]
                entry[0] += time.process_time() - start
                entry[1] += 1
                clock._depth[label] -= 1

        setattr(owner, name, timed)

    def close_iteration(self, extra: dict[str, Any]) -> None:
        """Store the iteration's parts (seconds, calls) and ``extra``; start a new one."""
        parts = {label: {"cpu_s": value[0], "calls": value[1]}
                 for label, value in self.iteration.items()}
        self.finished.append({"parts": parts, **extra})
        self.iteration.clear()


def raw_floor(benchmark_seed: int, steps: int) -> dict[str, dict[str, float]]:
    """CPU costs of a standalone Meta-World env of every ML10 training class."""
    import metaworld
    import mujoco

    benchmark = metaworld.ML10(seed=benchmark_seed)
    rng = np.random.default_rng(0)
    rows = {}
    kept = []  # alive until the end, so that each build's memory stays counted
    for name, env_class in benchmark.train_classes.items():
        rss_before = resident_mb()
        start = time.process_time()
        env = env_class()
        build = time.process_time() - start
        kept.append(env)
        env.max_path_length = sys.maxsize
        tasks = [task for task in benchmark.train_tasks if task.env_name == name][:5]
        start = time.process_time()
        for task in tasks:
            env.set_task(task)
        set_task = (time.process_time() - start) / len(tasks)
        start = time.process_time()
        for _ in range(5):
            env.reset()
        reset = (time.process_time() - start) / 5
        actions = rng.uniform(-1.0, 1.0, (steps, 4))
        start = time.process_time()
        for action in actions:
            env.step(action)
        step = (time.process_time() - start) / steps
        start = time.process_time()
        for _ in range(steps):
            mujoco.mj_step(env.model, env.data, nstep=env.frame_skip)
        physics = (time.process_time() - start) / steps
        rows[name] = {"build_s": build, "build_rss_mb": resident_mb() - rss_before,
                      "set_task_s": set_task, "reset_s": reset,
                      "step_s": step, "mj_step_s": physics,
                      "profile_shares": step_profile(env, actions)}
    for env in kept:
        env.close()
    return rows


def resident_mb() -> float:
    """This process's resident memory now (Linux ``/proc``), in MB."""
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/<pid>/status")


PROFILE_GROUPS = {
    "mj_step": ("mj_step", "mj_forward", "mj_rnePostConstraint"),
    "touching_object": ("touching_object",),
    "scipy_rotation": ("from_matrix", "as_quat"),
}
"""Functions whose cumulative time :func:`step_profile` reports (by function name)."""


def step_profile(env: Any, actions: np.ndarray) -> dict[str, float]:
    """Shares of ``env.step``'s time in :data:`PROFILE_GROUPS`, under cProfile (which inflates
    Python-heavy code, so the shares of Python parts are upper bounds)."""
    import cProfile
    import pstats

    profile = cProfile.Profile(time.process_time)
    profile.enable()
    for action in actions:
        env.step(action)
    profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = sum(tottime for _, _, tottime, _, _ in stats.values())
    def matches(function: str, names: tuple[str, ...]) -> bool:
        # built-ins appear as "<built-in method mujoco._functions.mj_step>"
        return any(function == name or function.endswith(f".{name}>") for name in names)

    shares = {}
    for group, names in PROFILE_GROUPS.items():
        # cumulative time of the outermost calls only: a function inside another of the
        # group is not counted twice
        shares[group] = sum(cumtime for (_, _, function), (_, _, _, cumtime, callers)
                            in stats.items() if matches(function, names)
                            and not any(matches(caller[2], names) for caller in callers)) / total
    return shares


def instrument(clock: CpuClock, extra: dict[str, Any]) -> None:
    """Wrap the parts of an iteration (classes, before the run builds its objects)."""
    from meta_policy_search.baselines.linear_baseline import LinearModelBaseline
    from meta_policy_search.envs.metaworld_envs import MetaWorldBenchmarkEnv
    from meta_policy_search.meta_algos.base import MAMLAlgo
    from meta_policy_search.meta_algos.pro_mp import ProMP
    from meta_policy_search.meta_trainer import Trainer
    from meta_policy_search.optimizers.conjugate_gradient_optimizer import (
        ConjugateGradientOptimizer,
    )
    from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
    from meta_policy_search.samplers.meta_sample_processor import MetaSampleProcessor
    from meta_policy_search.samplers.meta_sampler import MetaSampler

    clock.wrap(MetaWorldBenchmarkEnv, "step", "sampling/env.step")
    clock.wrap(MetaWorldBenchmarkEnv, "reset", "sampling/env.reset")
    clock.wrap(MetaWorldBenchmarkEnv, "set_task", "sampling/env.set_task")
    clock.wrap(NumpyGaussianMLP, "sample", "sampling/policy.sample")
    clock.wrap(MetaSampler, "obtain_samples", "sampling")
    clock.wrap(MetaSampleProcessor, "process_samples", "sample_processing")
    clock.wrap(LinearModelBaseline, "fit", "sample_processing/baseline.fit")
    clock.wrap(MAMLAlgo, "adapt_policy", "inner_step")
    clock.wrap(MAMLAlgo, "optimize_policy", "outer_step")
    clock.wrap(ProMP, "optimize_policy", "outer_step")  # its own, not MAMLAlgo's
    clock.wrap(Trainer, "save", "checkpoint")

    optimize = ConjugateGradientOptimizer.optimize

    def optimize_and_probe(self: Any, inputs: Any) -> dict[str, float]:
        stats = optimize(self, inputs)
        extra["num_backtracks"] = stats.get("NumBacktracks")
        # Probes on the same inputs, outside the step's clock: loss (a line-search step) and
        # one product (a CG iteration); each twice, the second timed (the first traces).
        probes_start = time.process_time()
        vector = np.random.default_rng(0).standard_normal(
            int(self._flat_params().shape[0])).astype(np.float32)
        for label, call in (("probe/loss", lambda: self.loss(inputs)),
                            ("probe/hvp", lambda: self.hvp(inputs, vector))):
            call()
            start = time.process_time()
            call()
            extra[label + "_cpu_s"] = time.process_time() - start
        # subtracted from the outer step's clock, which runs around this call
        extra["probes_total_cpu_s"] = time.process_time() - probes_start
        return stats

    ConjugateGradientOptimizer.optimize = optimize_and_probe  # type: ignore[method-assign]


ALGORITHMS = ("trpo_maml", "promp")
"""The meta-algorithms whose run scripts this measures."""

FULL = {"meta_batch_size": 20, "rollouts_per_meta_task": 10, "max_path_length": 500,
        "phases": 2, "n_itr": 100}
"""The ``ML10`` paper config's sizes (``meta_policy_search/data/paper_configs.json``)."""

FULL_STEPS = (FULL["meta_batch_size"] * FULL["rollouts_per_meta_task"]
              * FULL["max_path_length"] * FULL["phases"])
"""Env steps (and samples) per full iteration: 200,000."""


def summarize(path: str) -> list[str]:
    """Markdown rows of a result file: mean CPU seconds per part over the iterations after the
    first, per env step, and scaled linearly to :data:`FULL_STEPS`."""
    with open(path) as f:
        result = json.load(f)
    args = result["args"]
    steps = (args["meta_batch_size"] * args["rollouts_per_meta_task"]
             * FULL["max_path_length"] * FULL["phases"])
    measured = result["iterations"][1:]
    labels = sorted({label for it in measured for label in it["parts"]})
    lines = [f"`{os.path.basename(path)}`: meta-batch {args['meta_batch_size']}, "
             f"{args['rollouts_per_meta_task']} episodes, {steps} env steps (samples) per "
             f"iteration, iterations {[it['itr'] for it in measured]}, peak RSS "
             f"{result['peak_rss_mb']:.0f} MB, load average {result['loadavg_start'][0]:.1f} to "
             f"{result['loadavg_end'][0]:.1f}", "",
             "| part | CPU s / iteration | CPU us / env step | scaled to 200,000 steps (CPU s) |",
             "|---|---:|---:|---:|"]
    rows = [(label, [it["parts"].get(label, {"cpu_s": 0.0})["cpu_s"] for it in measured])
            for label in labels]
    probes = [it.get("probes_total_cpu_s", 0.0) for it in measured]
    rows.append(("whole iteration (less the probes)",
                 [it["iteration_cpu_s"] - p for it, p in zip(measured, probes)]))
    for label, values in rows:
        mean = sum(values) / len(values)
        lines.append(f"| {label} | {mean:.2f} | {1e6 * mean / steps:.0f} | "
                     f"{mean * FULL_STEPS / steps:.0f} |")
    for key in ("num_backtracks", "probe/loss_cpu_s", "probe/hvp_cpu_s"):
        values = [it.get(key) for it in measured]
        lines.append(f"| {key} (each iteration) | "
                     f"{', '.join('-' if v is None else f'{v:.2f}' for v in values)} | | |")
    return lines


def main(argv: list[str] | None = None) -> None:
    """Measure the floor and a few reduced iterations; write the JSON."""
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "--summarize":
        for path in argv[1:]:
            print("\n".join(summarize(path)) + "\n")
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--meta_batch_size", type=int, default=10)
    parser.add_argument("--rollouts_per_meta_task", type=int, default=2)
    parser.add_argument("--envs_per_task", type=int, default=2)
    parser.add_argument("--n_itr", type=int, default=3)
    parser.add_argument("--algo", choices=ALGORITHMS, default="trpo_maml",
                        help="the run script: experiments/<algo>_run_mujoco.py (the probes are "
                             "TRPO's; ProMP's outer step is timed whole)")
    parser.add_argument("--floor_steps", type=int, default=1000)
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)

    result: dict[str, Any] = {"args": vars(args), "loadavg_start": os.getloadavg()}
    if args.floor_steps:
        # in a process of its own, so that its envs do not count in the run's peak memory
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
            result["floor"] = pool.submit(raw_floor, 0, args.floor_steps).result()

    clock, extra = CpuClock(), {}
    instrument(clock, extra)
    from meta_policy_search.meta_trainer import Trainer

    run_iteration = Trainer._run_iteration

    def timed_iteration(self: Any, itr: int) -> Any:
        start, wall = time.process_time(), time.perf_counter()
        stats = run_iteration(self, itr)
        info = {"itr": itr, "iteration_cpu_s": time.process_time() - start,
                "iteration_wall_s": time.perf_counter() - wall,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                **extra}
        extra.clear()
        clock.close_iteration(info)
        outer = clock.finished[-1]["parts"].get("outer_step")
        if outer is not None:
            outer["cpu_s"] -= info.get("probes_total_cpu_s", 0.0)
        return stats

    Trainer._run_iteration = timed_iteration  # type: ignore[method-assign]
    sys.path.insert(0, EXPERIMENTS)
    train = importlib.import_module(f"{args.algo}_run_mujoco").main

    with tempfile.TemporaryDirectory() as run_dir:
        train(["--env", "ML10", "--seed", "1", "--executor", "iterative",
               "--meta_batch_size", str(args.meta_batch_size),
               "--rollouts_per_meta_task", str(args.rollouts_per_meta_task),
               "--envs_per_task", str(args.envs_per_task), "--n_itr", str(args.n_itr),
               "--log_formats", "csv", "--dump_path", os.path.join(run_dir, "run")])
    result["iterations"] = clock.finished
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["loadavg_end"] = os.getloadavg()
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
