"""TRPO-MAML's meta-step with exact vs Gauss-Newton Hessian-vector products (issue 7).

Times ``TRPOMAML.optimize_policy`` (10 CG iterations, one inner step, XLA on) with
``hvp_approach='exact'`` (old: double backprop) and ``'gauss_newton'`` (new, the default)
interleaved in one process, on the W0 and W1 workload sizes of
:data:`benchmarks.algo_benchmark.WORKLOADS` (synthetic samples), plus one standalone product of
each, and checks both steps against the ``'exact'`` step in float64. Usage::

    python benchmarks/metastep_benchmark.py [--quick] [--repeats 5] [--only W0,W1]

Writes ``benchmarks/results/algo_steps_metastep.{json,md}`` (``--quick``:
``algo_steps_metastep_quick.*``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.algo_benchmark import (  # noqa: E402
    HIDDEN,
    WORKLOADS,
    Variant,
    bench_pair,
    hvp_timing,
    make_samples,
    optimize,
)
from benchmarks.machine_info import describe_machine, load_average, machine_info, write_results  # noqa: E402
from meta_policy_search.meta_algos import TRPOMAML, MAMLAlgo  # noqa: E402
from meta_policy_search.policies import MetaGaussianMLPPolicy  # noqa: E402
from meta_policy_search.types import SampleBatch  # noqa: E402

METASTEP_PAIR = (("exact", "old"), ("gauss_newton", "new"))
"""TRPO-MAML's ``hvp_approach`` for the two variants, result keys ``old_*``, ``new_*``."""


def step_accuracy(samples: list[SampleBatch], make_algo, dims: tuple[int, int], extra=None):
    """Each variant's float32 step against the ``'exact'`` step in float64 from the same start.

    ``max |step - step64| / max |step64|`` over the meta-parameters: shows whether the new path
    adds error beyond float32's own (10 CG iterations amplify rounding).
    """

    def flat(algo: MAMLAlgo) -> np.ndarray:
        return np.concatenate([v.numpy().ravel().astype(np.float64) for v in algo.meta_variables])

    def run(variants: list[Variant]) -> dict:
        out = extra(variants) if extra is not None else {}
        reference_policy = MetaGaussianMLPPolicy(
            variants[0].policy.meta_batch_size, *dims, hidden_sizes=HIDDEN, dtype=tf.float64
        )
        reference_policy.set_param_values({k: v.astype(np.float64) for k, v in variants[0].initial.items()})
        reference = make_algo(reference_policy, "exact")
        start = flat(reference)
        reference.optimize_policy(samples)
        reference_step = flat(reference) - start
        for v in variants:
            v.reset()
            v.algo.optimize_policy(samples)
            error = np.max(np.abs(flat(v.algo) - start - reference_step)) / np.max(np.abs(reference_step))
            out[f"step_error_vs_float64_{v.name}"] = float(error)
        print("  step error vs float64 'exact': " + ", ".join(
            f"{v.name} {out[f'step_error_vs_float64_{v.name}']:.1e}" for v in variants), flush=True)
        return out

    return run


def run(args: argparse.Namespace) -> None:
    """TRPO-MAML steps with ``hvp_approach`` 'exact' (old) vs
    'gauss_newton' (new), XLA on (TRPO-MAML's default), on the W0 and W1 workloads."""
    repeats = args.repeats or (2 if args.quick else 5)
    machine = machine_info(tensorflow=tf.__version__, numpy=np.__version__)
    machine["load_average_start"] = load_average()
    selected = [c for c in args.only.split(",") if c] or list(WORKLOADS)
    rows = []
    for workload in selected:
        n, rollouts, horizon, obs_dim, act_dim = WORKLOADS[workload]
        if args.quick:
            n, rollouts, horizon = 4, 3, 20
        samples = make_samples(n, rollouts, horizon, 1, obs_dim=obs_dim, act_dim=act_dim)

        def make_algo(policy, approach, n=n):
            return TRPOMAML(policy, inner_lr=0.1, num_inner_grad_steps=1, inner_type="log_likelihood",
                            cg_iters=10,
                            hvp_approach=approach)

        row = bench_pair(
            f"{workload} TRPO-MAML `optimize_policy` (10 CG iterations, K=1)", make_algo,
            lambda a, v, samples=samples: optimize(a, samples), n, repeats,
            step_accuracy(samples, make_algo, (obs_dim, act_dim), hvp_timing(samples, repeats)),
            pair=METASTEP_PAIR, dims=(obs_dim, act_dim),
        )
        row.update(workload=workload, shape=[n, rollouts, horizon, obs_dim, act_dim])
        rows.append(row)
    machine["load_average_end"] = load_average()
    result = {"config": {"repeats": repeats, "quick": args.quick, "hidden_sizes": list(HIDDEN)},
              "machine": machine, "rows": rows}
    stem = "algo_steps_metastep_quick" if args.quick else "algo_steps_metastep"
    write_results(args.output_dir, stem, result, write_metastep_markdown)


def write_metastep_markdown(path: Path, result: dict) -> None:
    m = result["machine"]
    lines = [
        "# TRPO-MAML meta-step: exact vs Gauss-Newton Hessian-vector products (issue 7)",
        "",
        "`python benchmarks/metastep_benchmark.py`. Synthetic data (tasks x "
        f"rollouts x H, obs / act dims), {tuple(HIDDEN)} tanh policy, float32, XLA on. Old: "
        "`hvp_approach='exact'` (double backprop); new: `'gauss_newton'` (the default). Median "
        f"of {result['config']['repeats']} calls after a first (tracing / compiling) call, "
        "old and new interleaved in one process; `old/new` > 1 means the new path is faster.",
        "",
        "| step | shape | old (s) | new (s) | old/new | median pair old/new | first call old / new (s) "
        "| param diff / step | step error old / new | one HVP old (s) | one HVP new (s) "
        "| HVP rel. diff |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['step']} | {' x '.join(map(str, row['shape'][:3]))}, {row['shape'][3]} / "
            f"{row['shape'][4]} | {row['old_seconds']:.3f} | {row['new_seconds']:.3f} | "
            f"{row['speedup_old_over_new']:.2f} | {row['median_pair_speedup']:.2f} | "
            f"{row['old_first_call_seconds']:.1f} / {row['new_first_call_seconds']:.1f} | "
            f"{row['param_difference_over_step']:.1e} | {row['step_error_vs_float64_old']:.1e} / "
            f"{row['step_error_vs_float64_new']:.1e} | {row['hvp_old_seconds']:.3f} | "
            f"{row['hvp_new_seconds']:.3f} | {row['hvp_max_relative_difference']:.1e} |"
        )
    lines += [
        "",
        "`param diff / step`: ``max |theta_old - theta_new| / max |theta_old - theta_0|`` after "
        "the first call (float32 rounding through 10 CG iterations). `step error`: "
        "``max |step - step64| / max |step64|`` against the `'exact'` step in float64 from the "
        "same start. `one HVP`: a standalone "
        "`optimizer.hvp` call, which records the forward pass and inner step afresh; inside "
        "`optimize_policy` every product reuses one recording.",
        "",
        describe_machine(m, "; the machine was shared"),
        "",
    ]
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small smoke configuration")
    parser.add_argument("--repeats", type=int, default=None, help="timed calls per variant")
    parser.add_argument("--only", default="", help="comma-separated subset of W0,W1")
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
