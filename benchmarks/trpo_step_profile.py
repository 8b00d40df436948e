"""Where the W0 TRPO-MAML step's time goes, in ratios measured side by side in one process.

Builds the W0 run of ``iteration_benchmark.py`` (2-D navigation TRPO-MAML, 20 tasks x 20
episodes x H 100, (64, 64), 1 inner step, the run script's builders and config), runs a few
iterations to get the run's own last outer-step batches, then times, round-robin (one call of
each piece per round, so load changes hit every piece alike), the pieces of the outer step on
those batches, each under the run's own compile setting unless its name says otherwise:

* ``step``: the run's ``ConjugateGradientOptimizer._step_tf`` (the parameters reset before each
  call); ``step_cg1`` / ``step_cg20``: the same step with 1 / 20 conjugate-gradient iterations,
  so ``(step_cg20 - step) / 10`` is one CG iteration (one Gauss-Newton product and its vector
  work) inside the loop and ``step - 9 x that`` the step's fixed part;
* ``start``: the step's start (forward pass, loss gradient, the recorded products) followed by
  one Gauss-Newton product, outside any loop; ``start_hvp5``: the same with 5 products in a
  Python-unrolled chain, so ``(start_hvp5 - start) / 4`` is one product outside ``tf.while_loop``;
* ``eval``: one line-search evaluation (loss and mean KL at the current parameters: the inner
  step's forward and backward pass and the outer forward pass);
* ``G_xla`` / ``G_graph``: ``metastep_profile.py``'s unit, the forward and backward pass of the
  log-likelihood of the post-update batch, compiled with XLA / as a plain graph;
* ``step_graph``: the run's step built without XLA.

Reports the median wall and process-CPU seconds of each piece and the ratios to ``G`` and to the
step. Absolute times mean nothing on a loaded machine; the ratios of pieces timed in the same
rounds do. Usage::

    python benchmarks/trpo_step_profile.py [--repeats 7] [--intra 0 --inter 0] [--json PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PAIRS = (("step_graph", "step"), ("G_graph", "G_xla"), ("step", "G_xla"), ("eval", "G_xla"),
         ("start", "G_xla"), ("start_hvp5", "start"), ("step_cg20", "step"), ("step_graph", "G_graph"))
"""Pieces compared round by round (the ratio of the two calls of one round)."""


def w0_step_inputs(iterations: int) -> tuple[Any, Any, Callable[[], None]]:
    """The W0 TRPO-MAML run after ``iterations`` iterations: its algorithm, its last outer-step
    batches as the step's inputs, and a reset of the parameters to their values before that step
    (those that sampled the batches).
    """
    from benchmarks.iteration_benchmark import WORKLOADS, Recorder, build_trainer, run_iterations
    from meta_policy_search.optimizers.utils import to_tensor_nest
    from meta_policy_search.utils import logger

    logger.configure(dir=tempfile.mkdtemp(prefix="trpo_step_profile_"), format_strs=["log"])
    trainer, _ = build_trainer("trpo_maml", WORKLOADS["W0"])
    recorder = Recorder(trainer)
    algo = trainer.algo
    # The parameters the last batch was sampled with: after the run's own outer step the KL
    # from the sampling policy is no longer 0 and the line search backtracks further.
    initial: list[Any] = []
    optimize = algo.optimize_policy

    def optimize_policy(all_samples: Any) -> dict[str, float]:
        initial[:] = [v.numpy() for v in algo.meta_variables]
        return optimize(all_samples)

    algo.optimize_policy = optimize_policy
    run_iterations(trainer, iterations)
    inputs = to_tensor_nest(tuple(algo.to_tensors(s) for s in recorder.all_samples))

    def reset() -> None:
        for var, value in zip(algo.meta_variables, initial, strict=True):
            var.assign(value)

    return algo, inputs, reset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="rounds of timed calls")
    parser.add_argument("--iterations", type=int, default=2, help="run iterations before timing")
    parser.add_argument("--intra", type=int, default=0, help="TF intra-op threads (0: TF's own)")
    parser.add_argument("--inter", type=int, default=0, help="TF inter-op threads (0: TF's own)")
    parser.add_argument("--only", default="", help="comma-separated subset of the pieces")
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    args = parser.parse_args()

    import numpy as np
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.intra)
    tf.config.threading.set_inter_op_parallelism_threads(args.inter)

    from benchmarks.machine_info import load_average, machine_info
    from meta_policy_search.meta_algos.forward import log_likelihood
    from meta_policy_search.optimizers import ConjugateGradientOptimizer

    algo, inputs, reset = w0_step_inputs(args.iterations)
    run_optimizer = algo.optimizer
    jit = run_optimizer.jit_compile

    def optimizer(**changes: object) -> ConjugateGradientOptimizer:
        settings = dict(cg_iters=run_optimizer.cg_iters, hvp_approach=run_optimizer.hvp_approach,
                        jit_compile=jit)
        settings.update(changes)
        opt = ConjugateGradientOptimizer(**settings)
        opt.build(algo.meta_variables, run_optimizer._objective, run_optimizer._constraint)
        return opt

    def start_products(count: int) -> Callable[[], object]:
        @tf.function(jit_compile=jit)
        def start(inputs):
            loss, kl, grad, hvp = run_optimizer._start(inputs)
            v = grad
            for _ in range(count):  # a Python-unrolled chain: each product needs the last
                v = hvp(v)
            return loss, kl, v
        return lambda: [t.numpy() for t in start(inputs)]

    batch = inputs[-1]
    variables = algo.meta_variables
    num_tasks = int(batch.observations.shape[0])

    def gradient(compile_xla: bool) -> Callable[[], object]:
        @tf.function(jit_compile=compile_xla)
        def grad():
            with tf.GradientTape() as tape:
                dist_info = algo.policy.forward(algo.tiled_params(num_tasks), batch.observations)
                value = tf.reduce_sum(log_likelihood(dist_info, batch))
            return tape.gradient(value, variables)
        return lambda: [g.numpy() for g in grad()]

    steps = {"step": run_optimizer, "step_cg1": optimizer(cg_iters=1),
             "step_cg20": optimizer(cg_iters=run_optimizer.cg_iters + 10),
             "step_graph": optimizer(jit_compile=False)}
    backtracks: dict[str, int] = {}
    digests: dict[str, str] = {}

    def step_call(name: str) -> Callable[[], object]:
        def call() -> object:
            stats = steps[name]._step_tf(inputs)
            backtracks[name] = int(stats["NumBacktracks"])
            # the parameters after the step, to compare thread settings bit for bit
            digests[name] = hashlib.sha256(b"".join(
                v.numpy().tobytes() for v in algo.meta_variables)).hexdigest()[:16]
            return {k: v.numpy() for k, v in stats.items()}
        return call

    pieces: dict[str, Callable[[], object]] = {name: step_call(name) for name in steps}
    pieces.update(start=start_products(1), start_hvp5=start_products(5),
                  eval=lambda: [t.numpy() for t in run_optimizer._loss_and_constraint_tf(inputs)],
                  G_xla=gradient(True), G_graph=gradient(False))
    if args.only:
        pieces = {k: v for k, v in pieces.items() if k in args.only.split(",")}
    wall: dict[str, list[float]] = {k: [] for k in pieces}
    cpu: dict[str, list[float]] = {k: [] for k in pieces}
    load_start = load_average()
    for fn in pieces.values():  # warm-up: tracing and compilation
        reset()
        fn()
    for _ in range(args.repeats):
        for name, fn in pieces.items():
            reset()
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[name].append(time.perf_counter() - w0)
            cpu[name].append(time.process_time() - c0)
    reset()
    stats = {k: float(v) for k, v in run_optimizer._step_tf(inputs).items()}
    reset()
    med_wall = {k: statistics.median(v) for k, v in wall.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    paired = {}
    for num, den in PAIRS:
        if num in wall and den in wall:
            for kind, times in (("wall", wall), ("cpu", cpu)):
                ratios = sorted(a / b for a, b in zip(times[num], times[den], strict=True))
                paired[f"{num}/{den} ({kind})"] = {
                    "median": statistics.median(ratios), "min": ratios[0], "max": ratios[-1]}
    result = {
        "jit_compile_of_run": jit, "hvp_approach": run_optimizer.hvp_approach,
        "cg_iters": run_optimizer.cg_iters, "threads": {"intra": args.intra, "inter": args.inter},
        "num_backtracks": backtracks, "run_step_stats": stats, "parameter_digests": digests,
        "paired_ratios": paired,
        "repeats": args.repeats,
        "median_wall_s": med_wall, "median_cpu_s": med_cpu, "wall_s": wall, "cpu_s": cpu,
        "machine": machine_info(tensorflow=tf.__version__, numpy=np.__version__),
        "load_average_start": load_start, "load_average_end": load_average(),
    }
    print(f"run step compiled with XLA: {jit}; NumBacktracks {backtracks}; the run's step: {stats}")
    g = med_cpu.get("G_xla")
    for name in pieces:
        ratio = f", {med_cpu[name] / g:.2f} G_xla (cpu)" if g else ""
        print(f"{name:12s} wall {med_wall[name] * 1e3:8.1f} ms  cpu {med_cpu[name] * 1e3:8.1f} ms"
              f"{ratio}")
    for key, r in paired.items():
        print(f"{key:32s} median {r['median']:.3f} (range {r['min']:.3f}-{r['max']:.3f})")
    print(f"parameter digests after the step: {digests}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
