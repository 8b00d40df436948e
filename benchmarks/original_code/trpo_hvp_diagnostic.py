"""The original TRPO-MAML's finite-difference Hessian-vector products against exact ones.

The original's ``TRPOMAML`` builds ``ConjugateGradientOptimizer()`` with its default
``FiniteDifferenceHvp``: ``H p = (g(theta + eps p) - g(theta - eps p)) / (2 eps)``, ``g`` the
gradient of the mean KL through the inner step, ``eps = 1e-5``, all in float32. This script
runs the original code as ``run_original_promp.py --algo trpo_maml`` does (any ``--env`` of its
TRPO configurations; smoke-sized by default) and, at every outer step, also computes exact
products of the same TF1 graph (double backprop: the gradient of ``g . p``, which our package's
``'exact'`` HVP computes) without changing what the original computes: for every product the
conjugate gradient asks for, the relative error of the finite-difference one; for its solution
``x``, ``x . H x`` both ways (the original takes ``sqrt(2 delta / (x . H x + 1e-8))`` and rejects
the step when that is NaN); and the cosine between ``x`` and the solution conjugate gradient
finds with exact products. One JSON line per outer step goes to stdout and to
``<dump_path>/hvp_diagnostic.jsonl``; the original logger writes ``progress.csv`` beside it.

Usage (our package must not be on ``PYTHONPATH``, as for a run)::

    nice python benchmarks/original_code/trpo_hvp_diagnostic.py --original_repo /tmp/ProMP \\
        --n_itr 4 --seed 2 --dump_path /tmp/orig_trpo_hvp
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import numpy as np
import run_original_promp
from original_shims import import_original


class ExactHvpProbe:
    """Patches the original's TRPO optimizer classes to compare their products with exact ones.

    Args:
        cg_module: the original's ``meta_policy_search.optimizers.conjugate_gradient_optimizer``.
        tf: the ``tensorflow`` module the original uses (the shim).
        log_path: where each outer step's record is appended as a JSON line.
    """

    def __init__(self, cg_module: Any, tf: Any, log_path: str) -> None:
        self.cg_module, self.tf, self.log_path = cg_module, tf, log_path
        self.hvp_graph: dict[str, Any] = {}
        self.inputs: dict | None = None
        self.n_steps = 0

    def install(self) -> None:
        """Wrap ``FiniteDifferenceHvp.build_graph``, ``ConjugateGradientOptimizer.optimize`` and
        ``conjugate_gradients`` (each calls the original's and only records)."""
        probe, cg_module = self, self.cg_module
        build_graph = cg_module.FiniteDifferenceHvp.build_graph
        optimize = cg_module.ConjugateGradientOptimizer.optimize
        conjugate_gradients = cg_module.conjugate_gradients

        def build_graph_and_exact_hvp(hvp_self: Any, constraint_obj: Any, target: Any, *args: Any) -> None:
            build_graph(hvp_self, constraint_obj, target, *args)
            probe.build_exact_hvp(hvp_self, target)

        def optimize_remembering_inputs(opt_self: Any, input_val_dict: dict) -> None:
            probe.inputs = input_val_dict
            return optimize(opt_self, input_val_dict)

        def probed_conjugate_gradients(f_ax: Any, b: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
            return probe.compare(conjugate_gradients, f_ax, b, *args, **kwargs)

        cg_module.FiniteDifferenceHvp.build_graph = build_graph_and_exact_hvp
        cg_module.ConjugateGradientOptimizer.optimize = optimize_remembering_inputs
        cg_module.conjugate_gradients = probed_conjugate_gradients

    def build_exact_hvp(self, fd_hvp: Any, target: Any) -> None:
        """Add ``v -> d(g . v) / d theta`` to the graph, ``g`` the finite-difference HVP's
        flat constraint gradient."""
        tf = self.tf
        params = list(target.get_params().values())
        vector = tf.placeholder(tf.float32, shape=fd_hvp._constraint_gradient.shape)
        g_dot_v = tf.reduce_sum(fd_hvp._constraint_gradient * tf.stop_gradient(vector))
        grads = tf.gradients(g_dot_v, params)
        products = [tf.zeros_like(p) if h is None else h for h, p in zip(grads, params)]
        flat = tf.concat([tf.reshape(h, [-1]) for h in products], 0)
        self.hvp_graph = dict(hvp=fd_hvp, vector=vector, product=flat)

    def exact_hvp(self, vector: np.ndarray) -> np.ndarray:
        """The exact product with ``vector`` at the current parameters and inputs."""
        graph = self.hvp_graph
        feed = graph["hvp"].create_feed_dict(self.inputs)
        feed[graph["vector"]] = vector
        return self.tf.get_default_session().run(graph["product"], feed)

    def compare(self, conjugate_gradients: Any, f_ax: Any, b: np.ndarray, *args: Any,
                **kwargs: Any) -> np.ndarray:
        """Run the original's conjugate gradient, recording each product's relative error, then
        the solution's curvature both ways and the exact-product solution; returns the
        original's solution unchanged."""
        errors = []

        def recorded_f_ax(p: np.ndarray) -> np.ndarray:
            product = f_ax(p)
            exact = self.exact_hvp(p)
            errors.append(float(np.linalg.norm(product - exact) / np.linalg.norm(exact)))
            return product

        x = conjugate_gradients(recorded_f_ax, b, *args, **kwargs)
        x_exact = conjugate_gradients(self.exact_hvp, b, *args, **kwargs)
        with np.errstate(all="ignore"):
            record = {
                "outer_step": self.n_steps,
                "grad_norm": float(np.linalg.norm(b)),
                "fd_rel_error_min": min(errors),
                "fd_rel_error_median": float(np.median(errors)),
                "fd_rel_error_max": max(errors),
                "xHx_fd": float(x.dot(f_ax(x))),
                "xHx_exact": float(x.dot(self.exact_hvp(x))),
                "cos_x_fd_x_exact": float(x.dot(x_exact) / (np.linalg.norm(x) * np.linalg.norm(x_exact))),
                "xHx_exact_solution": float(x_exact.dot(self.exact_hvp(x_exact))),
            }
        self.n_steps += 1
        print(json.dumps(record), flush=True)
        with open(self.log_path, "a") as f:
            f.write(json.dumps(record) + "\n")
        return x


def main(argv: list[str] | None = None) -> None:
    """Run the original TRPO-MAML with :class:`ExactHvpProbe` installed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--original_repo", required=True)
    trpo_envs = [env for algo, env in run_original_promp.PAPER_CONFIGS if algo == "trpo_maml"]
    parser.add_argument("--env", default="HumanoidRandDirec2DEnv", choices=trpo_envs)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--n_itr", type=int, default=4)
    parser.add_argument("--meta_batch_size", type=int, default=4)
    parser.add_argument("--rollouts_per_meta_task", type=int, default=2)
    parser.add_argument("--dump_path", default="/tmp/orig_trpo_hvp")
    args = parser.parse_args(argv)

    orig = import_original(args.original_repo)
    config = dict(run_original_promp.PAPER_CONFIGS["trpo_maml", args.env])
    config.update(seed=args.seed, n_itr=args.n_itr, meta_batch_size=args.meta_batch_size,
                  rollouts_per_meta_task=args.rollouts_per_meta_task, parallel=False)
    os.makedirs(args.dump_path, exist_ok=True)
    probe = ExactHvpProbe(sys.modules["meta_policy_search.optimizers.conjugate_gradient_optimizer"],
                          sys.modules["tensorflow"], os.path.join(args.dump_path, "hvp_diagnostic.jsonl"))
    probe.install()
    orig["logger"].configure(dir=args.dump_path, format_strs=["log", "csv"], snapshot_mode="none")
    run_original_promp.run("trpo_maml", config, orig)


if __name__ == "__main__":
    main()
