"""Where the meta-step's time goes, in units of one policy forward/backward pass (issue 7).

Issue 7 asks for a W0 TRPO-MAML meta-step <= 0.4 s, a W1 ProMP outer step <= 0.5 s and a W1
TRPO-MAML step <= 1.5 s. This script measures, in one run on the W0 and W1 workload sizes
(:data:`benchmarks.algo_benchmark.WORKLOADS`, synthetic samples, float32, compiled):

* ``F``: the policy's log-likelihood of one batch (all tasks, ``tasks x rollouts x H``
  samples): one forward pass;
* ``G``: its gradient w.r.t. the shared parameters: one forward plus one backward pass;
* the matmuls and ``tanh`` of that forward pass alone, and their throughput;
* ProMP's cost per Adam step (``num_ppo_steps`` 6 minus 1, over 5) and the rest of
  ``optimize_policy``;
* TRPO-MAML's cost per Hessian-vector product inside its step (``cg_iters`` 20 minus 10, over
  10) and the rest of the step (gradient, recording, step size, line search).

and compares each with a floor counted in passes of ``G``:

* one meta-gradient (a ProMP Adam step) differentiates a function that contains the inner
  gradient: the inner batch's forward and backward (``G``), the outer batch's (``G``) and a
  backward pass through the inner backward pass (at least ``G``): at least ``3 G``;
* one Gauss-Newton product ``J^T H J v`` goes through the inner gradient twice (forward for
  ``J v``, backward for ``J^T u``), each at least a pass over the inner batch (``G``): at
  least ``2 G``; TRPO-MAML's step needs ``cg_iters + 1`` of them plus one meta-gradient.

If a goal is below its floor, no restructuring of the same arithmetic reaches it on this
machine; only less arithmetic (fewer CG iterations, products on a subsample) or faster kernels
can.

The pass counts undercount a Gauss-Newton product: it propagates a tangent through the inner
step's forward and backward passes and an adjoint back through them, and its compiled graph does
about 5 G of matmul FLOPs (``benchmarks/results/trpo_step_counts.md``, where every part of the
step is at the matmul work this structure needs). So the TRPO step also gets a *matmul floor*:
the matmul FLOPs of its compiled graph (start, 10 CG iterations, the line-search steps taken),
counted as ``trpo_step_counts.py`` counts them, over the throughput of the per-task batched
matmuls that dominate them (``[T, n, 64] @ [T, 64, 64]`` and ``[T, 64, n] @ [T, n, 64]``),
measured in the same run. Usage::

    python benchmarks/metastep_profile.py [--repeats 5] [--only W0,W1]

Writes ``benchmarks/results/metastep_profile.{json,md}``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.algo_benchmark import WORKLOADS, make_policy, make_samples  # noqa: E402
from benchmarks.machine_info import describe_machine, load_average, machine_info, write_results  # noqa: E402
from benchmarks.trpo_step_counts import hlo_counts, loop_bodies  # noqa: E402
from meta_policy_search.meta_algos import TRPOMAML, ProMP  # noqa: E402
from meta_policy_search.meta_algos.forward import log_likelihood  # noqa: E402
from meta_policy_search.optimizers.utils import to_tensor_nest  # noqa: E402

GOALS = {"W0": {"trpo_step": 0.4}, "W1": {"promp_outer": 0.5, "trpo_step": 1.5}}
"""Issue 7's goals in seconds."""


def median_seconds(fn: Callable[[], object], repeats: int, reset: Callable[[], None] = lambda: None) -> float:
    """Median wall-clock seconds of ``fn()`` over ``repeats`` calls after one warm-up call."""
    reset()
    fn()
    times = []
    for _ in range(repeats):
        reset()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def forward_costs(algo, batch, repeats: int) -> dict[str, float]:
    """Seconds of ``F`` and ``G`` on one batch, and of the forward pass's matmuls and tanh."""
    variables = algo.meta_variables
    num_tasks = int(batch.observations.shape[0])

    @tf.function(jit_compile=True)
    def forward():
        dist_info = algo.policy.forward(algo.tiled_params(num_tasks), batch.observations)
        return tf.reduce_sum(log_likelihood(dist_info, batch))

    @tf.function(jit_compile=True)
    def gradient():
        with tf.GradientTape() as tape:
            value = forward.python_function()
        return tape.gradient(value, variables)

    obs = tf.reshape(batch.observations, [-1, batch.observations.shape[-1]])
    weights = [v for v in variables if len(v.shape) == 2]
    n = int(obs.shape[0])

    @tf.function(jit_compile=True)
    def matmuls():
        x, total = obs, 0.0
        for w in weights:
            x = x @ w
            total += tf.reduce_sum(x[:1])  # keep every product alive, without the activations
        return total

    @tf.function(jit_compile=True)
    def activations(x):
        for _ in weights[:-1]:
            x = tf.tanh(x)
        return tf.reduce_sum(x)

    hidden = tf.random.normal([n, int(weights[0].shape[1])])
    flops = sum(2 * n * int(w.shape[0]) * int(w.shape[1]) for w in weights)
    out = {
        "F_seconds": median_seconds(lambda: forward().numpy(), repeats),
        "G_seconds": median_seconds(lambda: [g.numpy() for g in gradient()], repeats),
        "matmul_seconds": median_seconds(lambda: matmuls().numpy(), repeats),
        "tanh_seconds": median_seconds(lambda: activations(hidden).numpy(), repeats),
        "samples": n,
        "forward_matmul_gflop": flops / 1e9,
    }
    out["matmul_gflops_per_second"] = out["forward_matmul_gflop"] / out["matmul_seconds"]
    return out


def batched_matmul_rate(num_tasks: int, samples_per_task: int, hidden: int, repeats: int) -> float:
    """GFLOP/s of the per-task batched matmuls of a Gauss-Newton product at this batch size."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((num_tasks, samples_per_task, hidden)), tf.float32)
    w = tf.constant(rng.standard_normal((num_tasks, hidden, hidden)), tf.float32)

    @tf.function(jit_compile=True)
    def products():
        y = tf.tanh(x @ w)  # a layer's forward product, then a weight gradient
        return tf.reduce_sum(tf.linalg.matmul(x, y, transpose_a=True))

    flops = 2 * 2 * num_tasks * samples_per_task * hidden * hidden
    return flops / 1e9 / median_seconds(lambda: products().numpy(), repeats)


def trpo_step_matmul_flops(algo: TRPOMAML, samples, backtracks: int) -> float:
    """Matmul FLOPs of one compiled TRPO step: start, ``cg_iters`` CG iterations and
    ``backtracks + 1`` line-search steps (counted in the XLA-optimized HLO)."""
    inputs = to_tensor_nest(tuple(algo.to_tensors(s) for s in samples))
    counts = hlo_counts(algo.optimizer._step_tf.experimental_get_compiler_ir(inputs)(
        stage="optimized_hlo"))
    cg_body, search_body = loop_bodies(counts)
    return (counts["ENTRY"]["matmul_flops"]
            + algo.optimizer.cg_iters * counts[cg_body]["matmul_flops"]
            + (backtracks + 1) * counts[search_body]["matmul_flops"])


def step_marginal(make_algo: Callable[[int], object], samples, counts: tuple[int, int],
                  repeats: int) -> tuple[float, float]:
    """Per-unit and fixed seconds of ``optimize_policy`` from two unit counts (linear fit)."""
    seconds = []
    for count in counts:
        algo = make_algo(count)
        initial = algo.policy.get_param_values()

        def reset(algo=algo, initial=initial):
            algo.policy.set_param_values(initial)
            algo.policy.switch_to_pre_update()

        seconds.append(median_seconds(lambda a=algo: a.optimize_policy(samples), repeats, reset))
    per_unit = (seconds[1] - seconds[0]) / (counts[1] - counts[0])
    return per_unit, seconds[0] - counts[0] * per_unit


def profile_workload(name: str, repeats: int) -> dict:
    """All measurements and floors of one workload."""
    n, rollouts, horizon, obs_dim, act_dim = WORKLOADS[name]
    samples = make_samples(n, rollouts, horizon, 1, obs_dim=obs_dim, act_dim=act_dim)

    def promp(steps: int) -> ProMP:
        policy = make_policy(n, obs_dim=obs_dim, act_dim=act_dim)
        return ProMP(policy, inner_lr=0.1, num_inner_grad_steps=1, num_ppo_steps=steps, clip_eps=0.3,
                     adaptive_inner_kl_penalty=False, init_inner_kl_penalty=5e-4)

    def trpo(cg_iters: int) -> TRPOMAML:
        policy = make_policy(n, obs_dim=obs_dim, act_dim=act_dim)
        return TRPOMAML(policy, inner_lr=0.1, num_inner_grad_steps=1, inner_type="log_likelihood",
                        cg_iters=cg_iters,
                        jit_compile=True)

    probe = promp(1)
    row = {"workload": name, "shape": [n, rollouts, horizon, obs_dim, act_dim]}
    row.update(forward_costs(probe, probe.to_tensors(samples[0]), repeats))
    promp_step, promp_rest = step_marginal(promp, samples, (1, 6), repeats)
    hvp, trpo_rest = step_marginal(trpo, samples, (10, 20), repeats)
    counted = trpo(10)
    backtracks = int(counted.optimize_policy(samples)["NumBacktracks"])
    matmul_rate = batched_matmul_rate(n, rollouts * horizon, 64, repeats)
    row.update(
        trpo_step_matmul_gflop=trpo_step_matmul_flops(counted, samples, backtracks) / 1e9,
        batched_matmul_gflops_per_second=matmul_rate,
    )
    row["trpo_step_matmul_floor_seconds"] = row["trpo_step_matmul_gflop"] / matmul_rate
    g = row["G_seconds"]
    row.update(
        promp_adam_step_seconds=promp_step, promp_rest_seconds=promp_rest,
        promp_outer_seconds=promp_rest + 5 * promp_step,
        trpo_hvp_seconds=hvp, trpo_rest_seconds=trpo_rest, trpo_step_seconds=trpo_rest + 10 * hvp,
        promp_outer_floor_seconds=5 * 3 * g, trpo_step_floor_seconds=11 * 2 * g + 3 * g,
        goals=GOALS[name],
    )
    print(f"{name}: F {row['F_seconds'] * 1e3:.1f} ms, G {g * 1e3:.1f} ms, Adam step "
          f"{promp_step * 1e3:.0f} ms ({promp_step / g:.1f} G), HVP {hvp * 1e3:.0f} ms "
          f"({hvp / g:.1f} G), TRPO step {row['trpo_step_seconds']:.2f} s "
          f"(pass floor {row['trpo_step_floor_seconds']:.2f} s, matmul floor "
          f"{row['trpo_step_matmul_floor_seconds']:.2f} s)", flush=True)
    return row


def write_markdown(path: Path, result: dict) -> None:
    m = result["machine"]
    lines = [
        "# Meta-step profile: time in passes of the policy (issue 7)",
        "",
        "`python benchmarks/metastep_profile.py`. Synthetic samples, (64, 64) tanh policy, "
        "float32, compiled with XLA; median of "
        f"{result['config']['repeats']} calls after a warm-up. `F`: one forward pass (the "
        "log-likelihood of one batch of tasks x rollouts x H samples); `G`: forward plus "
        "backward. The floors count passes of `G` that the arithmetic cannot avoid: 3 G per "
        "meta-gradient (inner forward/backward, outer forward/backward, a backward pass through "
        "the inner backward pass), 2 G per Gauss-Newton product (through the inner gradient "
        "forward and back); ProMP's outer step is 5 meta-gradients, TRPO-MAML's is 11 products "
        "(10 CG iterations and the step size) plus a meta-gradient.",
        "",
        "| workload | samples / batch | F (ms) | G (ms) | forward matmuls (ms, GFLOP/s) | "
        "tanh x 2 (ms) | ProMP Adam step (ms, in G) | ProMP outer (s) | floor (s) | goal (s) | "
        "TRPO HVP (ms, in G) | TRPO step (s) | floor (s) | goal (s) | TRPO step matmuls "
        "(GFLOP) | batched matmul (GFLOP/s) | TRPO matmul floor (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        g = r["G_seconds"]
        goals = r["goals"]
        lines.append(
            f"| {r['workload']} ({' x '.join(map(str, r['shape'][:3]))}, obs {r['shape'][3]}) | "
            f"{r['samples']:,} | {r['F_seconds'] * 1e3:.1f} | {g * 1e3:.1f} | "
            f"{r['matmul_seconds'] * 1e3:.1f}, {r['matmul_gflops_per_second']:.0f} | "
            f"{r['tanh_seconds'] * 1e3:.1f} | {r['promp_adam_step_seconds'] * 1e3:.0f}, "
            f"{r['promp_adam_step_seconds'] / g:.1f} | {r['promp_outer_seconds']:.2f} | "
            f"{r['promp_outer_floor_seconds']:.2f} | {goals.get('promp_outer', '-')} | "
            f"{r['trpo_hvp_seconds'] * 1e3:.0f}, {r['trpo_hvp_seconds'] / g:.1f} | "
            f"{r['trpo_step_seconds']:.2f} | {r['trpo_step_floor_seconds']:.2f} | "
            f"{goals.get('trpo_step', '-')} | {r['trpo_step_matmul_gflop']:.1f} | "
            f"{r['batched_matmul_gflops_per_second']:.0f} | "
            f"{r['trpo_step_matmul_floor_seconds']:.2f} |"
        )
    lines += [
        "",
        "ProMP's outer step and TRPO-MAML's step are the fixed part plus 5 Adam steps or 10 "
        "products of the linear fits (`num_ppo_steps` 1 and 6, `cg_iters` 10 and 20). A goal "
        "below its floor cannot be met by restructuring the same arithmetic on this machine. "
        "TRPO matmul floor: the matmul FLOPs of the compiled step (counted in its optimized "
        "HLO, as `trpo_step_counts.py` does) over the batched-matmul throughput measured here.",
        "",
        describe_machine(m),
        "",
    ]
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per measurement")
    parser.add_argument("--only", default="", help="comma-separated subset of W0,W1")
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()
    machine = machine_info(tensorflow=tf.__version__, numpy=np.__version__)
    machine["load_average_start"] = load_average()
    rows = [profile_workload(w, args.repeats) for w in ([c for c in args.only.split(",") if c] or WORKLOADS)]
    machine["load_average_end"] = load_average()
    result = {"config": {"repeats": args.repeats}, "machine": machine, "rows": rows}
    write_results(args.output_dir, "metastep_profile", result, write_markdown)


if __name__ == "__main__":
    main()
