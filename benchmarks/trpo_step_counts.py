"""What one TRPO-MAML outer step does, counted rather than timed: graph calls, traces, Python
calls, and the matmul arithmetic of its compiled graph.

Timings need a quiet machine; counts do not. For a checkout of the project (this one, and
optionally an older one with ``--before PATH``, e.g. the commit before the refactor of the seams)
this script builds :class:`~meta_policy_search.meta_algos.TRPOMAML` on the synthetic batches of
``benchmarks/algo_benchmark.py`` at the W0 size (2-D navigation: 20 tasks x 20 rollouts x
H = 100, obs 2, act 2, (64, 64) tanh, ``inner_type='log_likelihood'``, 10 CG iterations, XLA) and
the W1 size (the paper's half-cheetah batch), runs ``optimize_policy`` three times and reports:

* how often the step's ``tf.function`` traced, how many graph executions and Python function
  calls one step makes (cProfile);
* from the XLA-optimized HLO of the compiled step: the matmul FLOPs of the start (forward pass,
  gradient, recorded products), of one conjugate-gradient iteration (one Gauss-Newton product)
  and of one line-search step, and how many fused kernels and float64 instructions one CG
  iteration runs;
* the same matmul FLOPs for ``G``, the gradient of the log-likelihood of one batch (the unit of
  ``benchmarks/metastep_profile.py``'s pass-count floor: 2 G per Gauss-Newton product, 3 G per
  meta-gradient).

A Gauss-Newton product through an inner step propagates a tangent through the inner forward and
backward passes and an adjoint back through them, so its matmul FLOPs are a multiple of ``G``'s;
``metastep_profile.py`` turns these counts into a matmul floor in seconds with its measured matmul
throughput. Writes ``benchmarks/results/trpo_step_counts.{json,md}``. Usage::

    python benchmarks/trpo_step_counts.py [--before /path/to/old/checkout] [--only W0]
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import json
import os
import pstats
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

REPO = Path(__file__).resolve().parents[1]

SIZES = {"W0": (20, 20, 100, 2, 2), "W1": (40, 20, 100, 17, 6)}
"""Workload sizes ``(tasks, rollouts, H, obs_dim, act_dim)``, as ``algo_benchmark.WORKLOADS``."""
_SHAPE = re.compile(r"^(\w+)\[([\d,]*)\]")


def hlo_counts(hlo: str) -> dict[str, dict[str, float]]:
    """Per computation of an HLO module: matmul FLOPs, fusions, dots, float64 instructions.

    A dot's FLOPs are ``2 x (output elements) x (contracted elements)``; operand shapes are
    looked up by name (optimized HLO does not repeat them).
    """
    shapes: dict[str, list[int]] = {}
    counts: dict[str, collections.Counter] = {}
    dots: list[tuple[str, str, str]] = []
    computation = ""
    for line in hlo.splitlines():
        if line and not line[0].isspace() and line.rstrip().endswith("{"):
            computation = "ENTRY" if line.startswith("ENTRY") else line.split(" ")[0]
            counts[computation] = collections.Counter()
            continue
        if " = " not in line or not computation:
            continue
        lhs, rhs = line.strip().split(" = ", 1)
        name = lhs.replace("ROOT ", "").strip()
        shape = _SHAPE.match(rhs)
        if shape:
            shapes[name] = [int(x) for x in shape.group(2).split(",") if x]
        opcode = re.search(r"([a-z][a-z0-9\-]*)\(", rhs)
        if opcode:
            counts[computation][opcode.group(1)] += 1
        if rhs.startswith("f64"):
            counts[computation]["f64"] += 1
        if " dot(" in rhs:
            dots.append((computation, name, rhs))
    flops: dict[str, float] = collections.defaultdict(float)
    for computation, name, rhs in dots:
        operands = re.search(r"dot\(([^)]*)\)", rhs).group(1)  # type: ignore[union-attr]
        inline = _SHAPE.match(operands.strip())
        lhs_shape = ([int(x) for x in inline.group(2).split(",") if x] if inline
                     else shapes[operands.split(",")[0].strip().split(" ")[-1]])
        contracted = 1
        dims = re.search(r"lhs_contracting_dims=\{([\d,]*)\}", rhs).group(1)  # type: ignore[union-attr]
        for dim in dims.split(","):
            if dim:
                contracted *= lhs_shape[int(dim)]
        elements = 1
        for size in shapes[name]:
            elements *= size
        flops[computation] += 2.0 * elements * contracted
    return {
        computation: {"matmul_flops": flops.get(computation, 0.0), "fusions": ops["fusion"],
                      "dots": ops["dot"], "f64_instructions": ops["f64"],
                      "instructions": sum(v for k, v in ops.items() if k != "f64")}
        for computation, ops in counts.items()
    }


def loop_bodies(counts: dict[str, dict[str, float]]) -> tuple[str, str]:
    """Names of the CG loop's and the line search's bodies (the first and second while loops)."""
    bodies = sorted((name for name in counts if "while" in name and "body" in name
                     and "fused" not in name),
                    key=lambda name: ("while_1_" in name, name))
    return bodies[0], bodies[1]


def measure(workload: str) -> dict[str, Any]:
    """All counts of one workload for the checkout first on ``sys.path``."""
    import tensorflow as tf

    from benchmarks.algo_benchmark import make_policy, make_samples
    from meta_policy_search.meta_algos import TRPOMAML
    from meta_policy_search.optimizers.utils import to_tensor_nest

    n, rollouts, horizon, obs_dim, act_dim = SIZES[workload]
    samples = make_samples(n, rollouts, horizon, 1, obs_dim=obs_dim, act_dim=act_dim)
    algo = TRPOMAML(make_policy(n, obs_dim=obs_dim, act_dim=act_dim), 0.1, n, 1,
                    inner_type="log_likelihood", cg_iters=10, jit_compile=True)
    algo.optimize_policy(samples)  # trace and compile
    profile = cProfile.Profile()
    steps = 2
    profile.enable()
    for _ in range(steps):
        algo.optimize_policy(samples)
    profile.disable()
    stats = pstats.Stats(profile)
    executions = sum(entry[1] for key, entry in stats.stats.items()  # type: ignore[attr-defined]
                     if key[2] in ("TFE_Py_Execute", "<built-in method tensorflow.python."
                                   "_pywrap_tfe.TFE_Py_Execute>"))
    step_tf = algo.optimizer._step_tf
    inputs = to_tensor_nest(tuple(algo.to_tensors(s) for s in samples))
    counts = hlo_counts(step_tf.experimental_get_compiler_ir(inputs)(stage="optimized_hlo"))
    cg_body, search_body = loop_bodies(counts)

    batch = algo.to_tensors(samples[0])
    variables = algo.meta_variables

    def batch_log_likelihood() -> tf.Tensor:
        try:
            from meta_policy_search.meta_algos.forward import log_likelihood
        except ImportError:  # before the refactor of the seams: a method of the algorithm
            return tf.reduce_sum(algo.log_likelihood(algo.tiled_params(n), batch)[0])
        dist_info = algo.policy.forward(algo.tiled_params(n), batch.observations)
        return tf.reduce_sum(log_likelihood(dist_info, batch))

    @tf.function(jit_compile=True)
    def gradient():
        with tf.GradientTape() as tape:
            value = batch_log_likelihood()
        return tape.gradient(value, variables)

    g_counts = hlo_counts(gradient.experimental_get_compiler_ir()(stage="optimized_hlo"))
    g_flops = sum(c["matmul_flops"] for c in g_counts.values())
    return {
        "workload": workload, "shape": SIZES[workload],
        "step_traces": int(step_tf.experimental_get_tracing_count()),
        "graph_executions_per_step": executions / steps,
        "python_calls_per_step": stats.total_calls / steps,  # type: ignore[attr-defined]
        "G_matmul_flops": g_flops,
        "start_matmul_flops": counts["ENTRY"]["matmul_flops"],
        "cg_iteration": counts[cg_body],
        "line_search_step": counts[search_body],
    }


def run_checkout(code: Path, workloads: list[str]) -> list[dict[str, Any]]:
    """:func:`measure` in a fresh interpreter with ``code`` first on ``sys.path``."""
    script = (f"import json, sys; sys.path.insert(0, {str(code)!r}); "
              f"sys.path.insert(1, {str(REPO / 'benchmarks')!r}); "
              "import trpo_step_counts as t; "
              f"print('RESULT' + json.dumps([t.measure(w) for w in {workloads!r}]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=code)
    if done.returncode != 0:
        raise RuntimeError(f"counting in {code} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.split("RESULT", 1)[1])


def write_markdown(path: Path, result: dict) -> None:
    """The table of counts, one row per checkout and workload."""
    lines = [
        "# TRPO-MAML step: counted work (`benchmarks/trpo_step_counts.py`)",
        "",
        "Synthetic batches of `algo_benchmark.py`, 10 CG iterations, XLA. `G`: the matmul FLOPs "
        "of one forward and backward pass of the log-likelihood of one batch (the unit of "
        "`metastep_profile.py`'s floor: 2 G per Gauss-Newton product, 3 G per meta-gradient). "
        "Matmul FLOPs are counted from the XLA-optimized HLO of the compiled step (dots only: "
        "2 x output elements x contracted elements).",
        "",
        "| checkout | workload | traces | graph calls / step | Python calls / step | G (GFLOP) | "
        "start (G) | one CG iteration (G) | fusions / CG iteration | float64 instructions / "
        "CG iteration | one line-search step (G) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, rows in result["checkouts"].items():
        for r in rows:
            g = r["G_matmul_flops"]
            lines.append(
                f"| {label} | {r['workload']} | {r['step_traces']} | "
                f"{r['graph_executions_per_step']:g} | {r['python_calls_per_step']:g} | "
                f"{g / 1e9:.3f} | {r['start_matmul_flops'] / g:.2f} | "
                f"{r['cg_iteration']['matmul_flops'] / g:.2f} | {r['cg_iteration']['fusions']} | "
                f"{r['cg_iteration']['f64_instructions']} | "
                f"{r['line_search_step']['matmul_flops'] / g:.2f} |"
            )
    lines += ["", f"Commits: {result['commits']}. TensorFlow {result['tensorflow']}.", ""]
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, default=None,
                        help="an older checkout to count as well (e.g. the commit before a change)")
    parser.add_argument("--only", default="W0,W1", help="comma-separated subset of W0,W1")
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()
    import tensorflow as tf

    workloads = [w for w in args.only.split(",") if w]
    checkouts = {}
    commits = {}
    for label, code in (("before", args.before), ("this checkout", REPO)):
        if code is None:
            continue
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=code,
                                capture_output=True, text=True).stdout.strip()
        commits[label] = commit
        checkouts[f"{label} ({commit})"] = run_checkout(code.resolve(), workloads)
        print(label, commit, "done", flush=True)
    from benchmarks.machine_info import write_results

    write_results(args.output_dir, "trpo_step_counts",
                  {"checkouts": checkouts, "commits": commits, "tensorflow": tf.__version__},
                  write_markdown)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
