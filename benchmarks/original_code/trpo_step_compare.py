"""One MAML-TRPO outer step of the original ProMP code against ours, on identical inputs.

On HumanoidRandDirec2DEnv with the paper's MAML-TRPO settings (hidden (128, 128) tanh, inner
lr 0.1 log-likelihood inner objective, one second-order inner step, KL step size 0.01, 10
conjugate-gradient iterations, discount 0.99, GAE lambda 1, normalised advantages, linear
feature baseline, normalization scale 10) but a small batch, this script

1. (stage ``ours``, our package importable) builds our run's components from our committed
   params.json of that run (batch sizes and executor overridden), samples one pre-update and
   one post-update batch with OUR sampler from the seeded initial policy, processes them with
   our sample processor and computes, with our ``TRPOMAML``: the adapted parameters, the outer
   loss, its gradient, the mean KL, Hessian-vector products on a fixed random vector
   (``gauss_newton``, ours by default, and ``exact``), the conjugate-gradient direction, the
   initial step size, and the parameters after the full step with line search (both products);
2. (stage ``original``, a separate process: the original's package is also named
   ``meta_policy_search``, so :func:`original_shims.import_original` must run in a process
   where ours was never imported) puts the SAME parameters into the original's TF1
   ``MetaGaussianMLPPolicy`` / ``TRPOMAML`` graph (our first-layer kernel rows on the 348
   observation entries the two envs share; the original's 28 extra entries are always 0, so
   our observations are fed padded with zeros there and those kernel rows are set to 0),
   feeds it the SAME processed samples and computes the same quantities: its own
   finite-difference product (what it runs) and its exact double-backprop product, its
   conjugate gradient with either, and its full step (as it runs: finite differences, no
   damping; and with exact products and our damping 1e-5). It also runs the original's
   ``MetaSampleProcessor`` on our raw paths (advantages compared to ours);
3. (stage ``compare``, numpy only) compares the two and writes ``result.json`` and
   ``result.md``.

The arrays pass between the stages as ``.npz`` files in ``--out_dir``. ``--stage all`` (the
default) runs the three stages as child processes with the right ``PYTHONPATH`` (ours: this
repository; the original: stripped of it) and one thread each.

Usage (from the repository root)::

    nice -n 15 python benchmarks/original_code/trpo_step_compare.py --original_repo /tmp/ProMP \\
        --out_dir benchmarks/results/trpo_step_compare

Vectors are compared in our parameter layout (``W0, b0, W1, b1, W2, b2, log_std`` flattened);
the original's are mapped onto it by dropping the 28 extra rows of its first-layer kernel
(their entries are reported separately: they must be 0) and reshaping its ``[1, A]`` log-std.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import OrderedDict
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.realpath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUR_PARAMS_JSON = os.path.join(
    REPO,
    "benchmarks",
    "results",
    "reproduction",
    "trpo_maml",
    "HumanoidRandDirec2DEnv",
    "seed_1",
    "params.json",
)
"""Our committed MAML-TRPO humanoid run's configuration (seed 1, the 249-at-1e7 run)."""
PARAM_NAMES = ("W0", "b0", "W1", "b1", "W2", "b2", "log_std")
"""Our policy's parameters, in the order of our flat vectors (and of the original's)."""
SHARED_SETTINGS = {
    # our params.json key: (the original TRPO humanoid config's key, how to compare)
    "discount": "discount",
    "gae_lambda": "gae_lambda",
    "normalize_adv": "normalize_adv",
    "hidden_sizes": "hidden_sizes",
    "inner_lr": "inner_lr",
    "num_inner_grad_steps": "num_inner_grad_steps",
    "step_size": "step_size",
    "inner_type": "inner_type",
    "max_path_length": "max_path_length",
}
ORIGINAL_NORMALIZATION_SCALE = 10.0
"""The original's ``normalize`` default, which its run script keeps."""


def set_one_thread() -> None:
    """One thread for TensorFlow and BLAS (a long training run uses the machine)."""
    for key in (
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "TF_NUM_INTRAOP_THREADS",
        "TF_NUM_INTEROP_THREADS",
    ):
        os.environ[key] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def flat(values: dict[str, np.ndarray]) -> np.ndarray:
    """Our layout's flat vector of ``values`` (name -> array)."""
    return np.concatenate([np.asarray(values[name], np.float64).ravel() for name in PARAM_NAMES])


def unflat(vector: np.ndarray, shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """Inverse of :func:`flat`."""
    out, start = {}, 0
    for name in PARAM_NAMES:
        size = int(np.prod(shapes[name]))
        out[name] = vector[start : start + size].reshape(shapes[name])
        start += size
    return out


# ---------------------------------------------------------------------------------------------
# Stage 1: ours
# ---------------------------------------------------------------------------------------------
def our_config(args: argparse.Namespace) -> Any:
    """Our TRPO-MAML run config from the committed params.json, batch sizes overridden."""
    from meta_policy_search.experiment.algorithms import TRPOMAMLRunConfig
    from meta_policy_search.experiment.config_values import config_from_dict

    with open(OUR_PARAMS_JSON) as f:
        values = json.load(f)
    values.update(
        meta_batch_size=args.meta_batch_size,
        rollouts_per_meta_task=args.rollouts_per_meta_task,
        max_path_length=args.max_path_length,
        seed=args.seed,
        executor="iterative",
        n_parallel=None,
        dump_path=os.path.join(args.out_dir, "unused_dump"),
    )
    return config_from_dict(TRPOMAMLRunConfig, values, source=OUR_PARAMS_JSON)


def real_rows(samples: Any, key: str) -> list[np.ndarray]:
    """Per task, ``samples.<key>`` (``[T, N, H, ...]``) at the real steps, episode-major."""
    mask = np.asarray(samples.mask) > 0
    value = samples.agent_infos[key] if key in ("mean", "log_std") else getattr(samples, key)
    return [np.asarray(value)[t][mask[t]] for t in range(mask.shape[0])]


def run_ours(args: argparse.Namespace) -> None:
    """Sample, process and take our outer step; write ``ours.npz``."""
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    from meta_policy_search.experiment.components import (
        build_env,
        build_policy,
        build_sampler,
        derive_seeds,
    )
    from meta_policy_search.experiment.registry import get_algorithm
    from meta_policy_search.experiment.runner import make_trpo_maml_sample_processor
    from meta_policy_search.meta_algos.trpo_maml import post_update_kl
    from meta_policy_search.optimizers import ConjugateGradientOptimizer, Constraint
    from meta_policy_search.optimizers.conjugate_gradient_optimizer import conjugate_gradient, inner_product

    config = our_config(args)
    seeds = derive_seeds(config.seed)
    tf.random.set_seed(seeds["tf"])
    env = build_env(config)
    policy = build_policy(config, env, seeds["policy"])
    sampler = build_sampler(config, env, policy, seeds["sampler"])
    processor = make_trpo_maml_sample_processor(config)
    algo = get_algorithm("trpo_maml").make_algo(config, policy)
    assert algo.optimizer.hvp_approach == "gauss_newton" and algo.optimizer.cg_iters == 10
    t0 = time.time()

    # one meta-iteration's sampling, as Trainer._run_iteration
    sampler.update_tasks()
    policy.switch_to_pre_update()
    theta0 = policy.get_param_values()
    paths0 = sampler.obtain_samples()
    samples0 = processor.process_samples(paths0)
    algo.adapt_policy(samples0)
    adapted = {name: value for name, value in policy.get_task_param_values().items()}
    paths1 = sampler.obtain_samples()
    samples1 = processor.process_samples(paths1)
    sampling_seconds = time.time() - t0
    all_samples = [samples0, samples1]
    inputs = algo._check_all_samples(all_samples)

    rng = np.random.default_rng(args.vector_seed)
    vector = rng.standard_normal(sum(v.size for v in theta0.values())).astype(np.float32)

    exact_opt = ConjugateGradientOptimizer(cg_iters=10, hvp_approach="exact", jit_compile=False)
    exact_opt.build(
        algo.meta_variables,
        algo.loss_and_post_update_dist_info,
        Constraint(value=post_update_kl, max_value=algo.step_size),
    )

    def internals(opt: Any) -> dict[str, np.ndarray]:
        """What ``opt._step`` computes before its line search, plus ``H vector``."""

        @tf.function
        def run(inputs: Any, vector: tf.Tensor) -> dict[str, tf.Tensor]:
            loss, kl, grad, hvp = opt._start(inputs)

            def damped(v: tf.Tensor) -> tf.Tensor:
                return hvp(v) + opt.reg_coeff * v

            direction = conjugate_gradient(damped, grad, opt.cg_iters, opt.residual_tol)
            return dict(
                loss=loss,
                kl=kl,
                grad=grad,
                hvp=hvp(vector),
                direction=direction,
                curvature=inner_product(direction, damped(direction)),
            )

        out = {key: value.numpy() for key, value in run(inputs, tf.constant(vector)).items()}
        # as ours: sqrt(2 delta / (|x.Hx| + 1e-8)) on the optimizer's own x.Hx
        out["step_size"] = np.sqrt(
            2.0 * opt.max_constraint_value / (abs(np.float64(out["curvature"])) + 1e-8)
        )
        return out

    gn = internals(algo.optimizer)
    ex = internals(exact_opt)
    # Diagnostics of the conjugate gradient (our package unchanged): the same algorithm in numpy
    # (float32 and float64 arithmetic) on our products, and ours in TF with its inner products
    # tf.tensordot(a, b, 1) replaced by float64 ones; plus the float32 accuracy of p.Hp.
    for dtype, tag in ((np.float32, "numpy_cg32"), (np.float64, "numpy_cg64")):
        gn[f"{tag}_direction"], gn[f"{tag}_rdotr"] = conjugate_gradient_traced(
            lambda v: algo.optimizer.hvp(inputs, v).numpy() + np.float32(algo.optimizer.reg_coeff) * v,
            gn["grad"],
            algo.optimizer.cg_iters,
            dtype,
        )

    def dot64(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
        return tf.cast(tf.tensordot(tf.cast(a, tf.float64), tf.cast(b, tf.float64), 1), a.dtype)

    @tf.function
    def cg_diagnostics(inputs: Any) -> dict[str, tf.Tensor]:
        opt = algo.optimizer
        loss, kl, grad, hvp = opt._start(inputs)

        def damped(v: tf.Tensor) -> tf.Tensor:
            return hvp(v) + opt.reg_coeff * v

        x_tensordot, trace_tensordot = conjugate_gradient_unrolled(
            damped, grad, opt.cg_iters, lambda a, b: tf.tensordot(a, b, 1)
        )
        x_dot64, trace_dot64 = conjugate_gradient_unrolled(damped, grad, opt.cg_iters, dot64)
        return dict(
            tensordot_direction=x_tensordot,
            tensordot_rdotr=trace_tensordot,
            dot64_direction=x_dot64,
            dot64_rdotr=trace_dot64,
            grad_hvp=damped(grad),
        )

    for key, value in cg_diagnostics(inputs).items():
        gn[f"tf_cg_{key}"] = value.numpy()
    b, z = gn["grad"], gn["tf_cg_grad_hvp"]
    reference = b.astype(np.float64).dot(z.astype(np.float64))
    gn["bHb_rel_err"] = np.array(
        [
            abs(float(tf.tensordot(b, z, 1)) - reference) / reference,
            abs(float(tf.reduce_sum(b * z)) - reference) / reference,
            abs(float(b.dot(z)) - reference) / reference,
        ]
    )  # tensordot, reduce_sum, numpy

    def full_step(opt: Any) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        policy.set_param_values(theta0)
        stats = opt.optimize(inputs)
        after = policy.get_param_values()
        policy.set_param_values(theta0)
        return after, stats

    after_gn, stats_gn = full_step(algo.optimizer)  # what algo.optimize_policy runs
    after_ex, stats_ex = full_step(exact_opt)
    policy.set_param_values(theta0)
    assert np.array_equal(flat(policy.get_param_values()), flat(theta0))
    after_run = None
    stats_run = algo.optimize_policy(all_samples)  # the public entry point, for completeness
    after_run = policy.get_param_values()

    data: dict[str, Any] = {
        "vector": vector,
        "config": np.array(
            json.dumps(
                {
                    k: getattr(config, k)
                    for k in (
                        "env",
                        "seed",
                        "meta_batch_size",
                        "rollouts_per_meta_task",
                        "max_path_length",
                        "sampling_mode",
                        "normalization_scale",
                        "baseline",
                        "discount",
                        "gae_lambda",
                        "normalize_adv",
                        "positive_adv",
                        "hidden_sizes",
                        "hidden_nonlinearity",
                        "learn_std",
                        "init_std",
                        "inner_lr",
                        "num_inner_grad_steps",
                        "trainable_inner_step_size",
                        "first_order",
                        "step_size",
                        "inner_type",
                        "exploration",
                        "hvp_approach",
                        "jit_compile",
                    )
                },
                default=list,
            )
        ),
        "tasks": np.asarray(sampler.tasks, dtype=np.float64),
        "sampling_seconds": sampling_seconds,
        "stats_gn": np.array(json.dumps(stats_gn)),
        "stats_exact": np.array(json.dumps(stats_ex)),
        "stats_run": np.array(json.dumps(stats_run)),
    }
    for name in PARAM_NAMES:
        data[f"theta0/{name}"] = theta0[name]
        data[f"adapted/{name}"] = adapted[name]
        data[f"after_gn/{name}"] = after_gn[name]
        data[f"after_exact/{name}"] = after_ex[name]
        data[f"after_run/{name}"] = after_run[name]
    for tag, values in (("gn", gn), ("exact", ex)):
        for key, value in values.items():
            data[f"{tag}/{key}"] = value
    for step, samples in enumerate(all_samples):
        mask = np.asarray(samples.mask) > 0
        data[f"step{step}/counts"] = mask.sum(axis=(1, 2))
        data[f"step{step}/episode_lengths"] = mask.sum(axis=2)  # [T, N], 0 for a padded episode
        for key in (
            "observations",
            "actions",
            "rewards",
            "returns",
            "baselines",
            "advantages",
            "mean",
            "log_std",
        ):
            data[f"step{step}/{key}"] = np.concatenate(real_rows(samples, key))
    np.savez(os.path.join(args.out_dir, "ours.npz"), **data)
    print(
        json.dumps(
            {
                "stage": "ours",
                "steps": [int(data["step0/counts"].sum()), int(data["step1/counts"].sum())],
                "loss_before": float(gn["loss"]),
                "stats_gn": stats_gn,
                "seconds": time.time() - t0,
            }
        )
    )


def conjugate_gradient_traced(
    f_ax: Any, b: np.ndarray, cg_iters: int, dtype: Any, residual_tol: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """The conjugate gradient both codes run (the original's ``conjugate_gradients``: from 0,
    ``cg_iters`` products, stop once ``r.r < residual_tol``) with its arithmetic in ``dtype``
    (the products ``f_ax`` are computed in float32 and cast); also returns ``r.r`` after each
    iteration."""
    b = np.asarray(b, dtype)
    x, r, p = np.zeros_like(b), b.copy(), b.copy()
    rdotr, trace = r.dot(r), []
    for _ in range(cg_iters):
        z = np.asarray(f_ax(p.astype(np.float32)), dtype)
        v = rdotr / p.dot(z)
        x += v * p
        r -= v * z
        new_rdotr = r.dot(r)
        p = r + (new_rdotr / rdotr) * p
        rdotr = new_rdotr
        trace.append(float(rdotr))
        if rdotr < residual_tol:
            break
    return x, np.asarray(trace)


def conjugate_gradient_unrolled(hvp_fn: Any, b: Any, cg_iters: int, dot: Any) -> tuple[Any, Any]:
    """Our package's ``conjugate_gradient`` as it was before a1bf824 (the same updates, no early
    stop: the residual stays far above 1e-10 here), unrolled, with the inner product ``dot`` and
    scalars in ``dot``'s dtype; also ``r.r`` per iteration. With ``tf.tensordot`` on float32
    vectors it is the old solver; since a1bf824 ours sums in float64 (``inner_product``)."""
    import tensorflow as tf

    x, r, p = tf.zeros_like(b), b, b
    rdotr, trace = dot(b, b), []
    for _ in range(cg_iters):
        z = hvp_fn(p)
        alpha = rdotr / dot(p, z)
        x = x + alpha * p
        r = r - alpha * z
        new_rdotr = dot(r, r)
        p = r + (new_rdotr / rdotr) * p
        rdotr = new_rdotr
        trace.append(rdotr)
    return x, tf.stack(trace)


# ---------------------------------------------------------------------------------------------
# Stage 2: the original
# ---------------------------------------------------------------------------------------------
def run_original(args: argparse.Namespace) -> None:
    """Put our parameters and samples into the original's graph; write ``original.npz``."""
    import run_original_promp
    from humanoid_check import observation_layout
    from original_humanoid_env import OriginalHumanoidRandDirec2DEnv
    from original_shims import import_original

    ours = dict(np.load(os.path.join(args.out_dir, "ours.npz")))
    our_config_values = json.loads(str(ours["config"]))
    orig = import_original(args.original_repo)
    tf = sys.modules["tensorflow"]
    cg_module = sys.modules["meta_policy_search.optimizers.conjugate_gradient_optimizer"]

    config = dict(run_original_promp.PAPER_CONFIGS["trpo_maml", "HumanoidRandDirec2DEnv"])
    for ours_key, orig_key in SHARED_SETTINGS.items():
        a, b = our_config_values[ours_key], config[orig_key]
        a, b = (list(a), list(b)) if isinstance(b, (list, tuple)) else (a, b)
        assert a == b, (ours_key, a, b)
    assert our_config_values["normalization_scale"] == ORIGINAL_NORMALIZATION_SCALE
    num_tasks = int(our_config_values["meta_batch_size"])
    config.update(meta_batch_size=num_tasks)

    raw_env = OriginalHumanoidRandDirec2DEnv()
    env = orig["normalize"](raw_env)  # as the run script: only the spaces' shapes are read here
    kept, dropped = observation_layout(raw_env.model)
    dropped_idx = np.sort(np.concatenate(list(dropped.values())))
    obs_dim = int(np.prod(env.observation_space.shape))
    act_dim = int(np.prod(env.action_space.shape))
    assert obs_dim == kept.size + dropped_idx.size == 376 and kept.size == ours["step0/observations"].shape[1]

    session = tf.Session(
        config=tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    )
    with session.as_default():
        policy = orig["MetaGaussianMLPPolicy"](
            name="meta-policy",
            obs_dim=obs_dim,
            action_dim=act_dim,
            meta_batch_size=num_tasks,
            hidden_sizes=config["hidden_sizes"],
        )
        algo = run_original_promp.make_algo("trpo_maml", config, policy, orig)
        optimizer = algo.optimizer
        fd_hvp = optimizer._hvp_approach
        assert optimizer._cg_iters == 10 and optimizer._reg_coeff == 0 and fd_hvp.base_eps == np.float32(1e-5)
        # the exact product of the same graph (as trpo_hvp_diagnostic.py): d(g . v) / d theta
        params = list(policy.get_params().values())
        vector_ph = tf.placeholder(tf.float32, shape=fd_hvp._constraint_gradient.shape)
        grads = tf.gradients(tf.reduce_sum(fd_hvp._constraint_gradient * tf.stop_gradient(vector_ph)), params)
        exact_product = tf.concat(
            [tf.reshape(tf.zeros_like(p) if h is None else h, [-1]) for h, p in zip(grads, params)], 0
        )
        session.run(tf.global_variables_initializer())

        names = list(policy.get_params().keys())
        shapes = [tuple(p.shape.as_list()) for p in params]

        def to_original(values: dict[str, np.ndarray]) -> OrderedDict:
            """Our parameter values in the original's layout (extra kernel rows 0)."""
            out = OrderedDict()
            for key, name, shape in zip(names, PARAM_NAMES, shapes):
                value = np.asarray(values[name], np.float32)
                if name == "W0":
                    full = np.zeros(shape, np.float32)
                    full[kept] = value
                    value = full
                out[key] = value.reshape(shape)
            return out

        def from_original_flat(vector: np.ndarray) -> tuple[np.ndarray, float]:
            """An original-layout flat vector in our layout, and its largest entry on the extra rows."""
            parts, start, extra = {}, 0, 0.0
            for name, shape in zip(PARAM_NAMES, shapes):
                size = int(np.prod(shape))
                value = np.asarray(vector[start : start + size], np.float64).reshape(shape)
                start += size
                if name == "W0":
                    extra = float(np.max(np.abs(value[dropped_idx]))) if value[dropped_idx].size else 0.0
                    value = value[kept]
                parts[name] = value.reshape(-1)
            return np.concatenate([parts[n] for n in PARAM_NAMES]), extra

        def to_original_flat(vector: np.ndarray) -> np.ndarray:
            return np.concatenate(
                [
                    v.ravel()
                    for v in to_original(
                        unflat(vector, {n: ours[f"theta0/{n}"].shape for n in PARAM_NAMES})
                    ).values()
                ]
            ).astype(np.float32)

        theta0 = {name: ours[f"theta0/{name}"] for name in PARAM_NAMES}
        policy.set_params(to_original(theta0))

        def pad(obs: np.ndarray) -> np.ndarray:
            full = np.zeros((obs.shape[0], obs_dim), np.float32)
            full[:, kept] = obs
            return full

        def split(step: int, key: str) -> list[np.ndarray]:
            counts = ours[f"step{step}/counts"]
            return np.split(ours[f"step{step}/{key}"], np.cumsum(counts)[:-1])

        all_samples_data = []
        for step in (0, 1):
            per_task = []
            for obs, act, adv, mean, log_std in zip(
                *(split(step, k) for k in ("observations", "actions", "advantages", "mean", "log_std")),
                strict=True,
            ):
                per_task.append(
                    dict(
                        observations=pad(obs),
                        actions=act.astype(np.float32),
                        advantages=adv.astype(np.float32),
                        agent_infos=dict(mean=mean.astype(np.float32), log_std=log_std.astype(np.float32)),
                    )
                )
            all_samples_data.append(per_task)
        inputs = algo._extract_input_dict_meta_op(all_samples_data, algo._optimization_keys)

        # the inner step, as the original adapts its sampling policy
        policy.switch_to_pre_update()
        algo._adapt(all_samples_data[0])
        adapted = {
            name: np.stack([np.asarray(p[key]) for p in policy.policies_params_vals])
            for key, name in zip(names, PARAM_NAMES)
        }
        adapted_extra = float(np.max(np.abs(adapted["W0"][:, dropped_idx, :])))
        adapted["W0"] = adapted["W0"][:, kept, :]
        adapted["log_std"] = adapted["log_std"].reshape(num_tasks, -1)

        loss_before = optimizer.loss(inputs)
        kl_before = optimizer.constraint_val(inputs)
        gradient = optimizer.gradient(inputs)
        vector = to_original_flat(ours["vector"])

        def exact_hvp(x: np.ndarray) -> np.ndarray:
            feed = fd_hvp.create_feed_dict(inputs)
            feed[vector_ph] = x
            return session.run(exact_product, feed)

        hvp_fd = fd_hvp.Hx(inputs, vector)
        hvp_exact = exact_hvp(vector)
        fd_eval = fd_hvp.build_eval(inputs)  # + reg_coeff (0) x, what the original's CG calls
        results: dict[str, Any] = {}
        for tag, product in (
            ("fd", fd_eval),
            ("exact", exact_hvp),
            ("exact_damped", lambda x: exact_hvp(x) + np.float32(1e-5) * x),
        ):
            direction = cg_module.conjugate_gradients(product, gradient, cg_iters=optimizer._cg_iters)
            curvature = direction.dot(product(direction))
            with np.errstate(invalid="ignore"):
                step_size = np.sqrt(2.0 * optimizer._max_constraint_val * (1.0 / (curvature + 1e-8)))
            results[f"{tag}/direction"], results[f"{tag}/direction_extra"] = from_original_flat(direction)
            results[f"{tag}/curvature"] = float(curvature)
            results[f"{tag}/step_size"] = float(step_size)

        # sensitivity of the conjugate gradient: the original's exact product with OUR gradient,
        # and its arithmetic in float64 (products still float32)
        our_gradient = to_original_flat(ours["gn/grad"])
        for tag, b, dtype in (
            ("exact_our_grad", our_gradient, np.float32),
            ("exact_float64", gradient, np.float64),
            ("exact_our_grad_float64", our_gradient, np.float64),
        ):
            direction, trace = conjugate_gradient_traced(exact_hvp, b, optimizer._cg_iters, dtype)
            results[f"{tag}/direction"] = from_original_flat(direction)[0]
            results[f"{tag}/rdotr"] = trace
        results["exact/rdotr"] = conjugate_gradient_traced(
            exact_hvp, gradient, optimizer._cg_iters, np.float32
        )[1]

        # the full step with line search: as it runs (finite differences), then with exact products
        messages: list[str] = []

        class RecordingLogger:
            def __getattr__(self, name: str) -> Any:
                return getattr(orig["logger"], name)

            @staticmethod
            def log(message: str, *a: Any, **k: Any) -> None:
                messages.append(str(message))

        cg_module.logger = RecordingLogger()
        sys.modules["meta_policy_search.meta_algos.trpo_maml"].logger = RecordingLogger()
        steps = {}
        for tag, build_eval in (
            ("fd", None),
            ("exact_damped", lambda _inputs: lambda x: exact_hvp(x) + np.float32(1e-5) * x),
            ("exact", lambda _inputs: exact_hvp),
        ):
            policy.set_params(to_original(theta0))
            if build_eval is not None:
                fd_hvp.build_eval = build_eval
            messages.clear()
            optimizer.optimize(inputs)
            after_flat = np.concatenate([np.asarray(v).ravel() for v in policy.get_param_values().values()])
            steps[tag] = dict(
                after=from_original_flat(after_flat),
                loss_after=float(optimizer.loss(inputs)),
                kl_after=float(optimizer.constraint_val(inputs)),
                log=list(messages),
            )
        policy.set_params(to_original(theta0))

    # the original's sample processing of our raw paths
    processor = orig["MetaSampleProcessor"](
        baseline=orig["LinearFeatureBaseline"](),
        discount=config["discount"],
        gae_lambda=config["gae_lambda"],
        normalize_adv=config["normalize_adv"],
    )
    processed = {}
    for step in (0, 1):
        lengths = ours[f"step{step}/episode_lengths"]
        paths_meta_batch = OrderedDict()
        for t, (obs, act, rew, mean, log_std) in enumerate(
            zip(
                *(split(step, k) for k in ("observations", "actions", "rewards", "mean", "log_std")),
                strict=True,
            )
        ):
            bounds = np.cumsum([0] + [int(n) for n in lengths[t] if n > 0])
            paths_meta_batch[t] = [
                dict(
                    observations=pad(obs[a:b]).astype(np.float64),
                    actions=act[a:b],
                    rewards=rew[a:b].astype(np.float64),
                    env_infos={},
                    agent_infos=dict(mean=mean[a:b], log_std=log_std[a:b]),
                )
                for a, b in zip(bounds[:-1], bounds[1:])
            ]
        samples = processor.process_samples(paths_meta_batch)
        baselines = []  # the original's baseline fitted on each task's paths (as process_samples)
        for task_paths in paths_meta_batch.values():
            baseline = orig["LinearFeatureBaseline"]()
            baseline.fit(task_paths, target_key="returns")
            baselines.append(np.concatenate([baseline.predict(path) for path in task_paths]))
        processed[f"step{step}/baselines"] = np.concatenate(baselines)
        for key in ("returns", "advantages"):
            processed[f"step{step}/{key}"] = np.concatenate([s[key] for s in samples])
        processed[f"step{step}/observations_equal"] = all(
            np.array_equal(s["observations"], pad(o)) for s, o in zip(samples, split(step, "observations"))
        )

    out: dict[str, Any] = {
        "loss_before": loss_before,
        "kl_before": kl_before,
        "adapted_extra": adapted_extra,
        "hvp_fd": from_original_flat(hvp_fd)[0],
        "hvp_fd_extra": from_original_flat(hvp_fd)[1],
        "hvp_exact": from_original_flat(hvp_exact)[0],
        "hvp_exact_extra": from_original_flat(hvp_exact)[1],
        "grad": from_original_flat(gradient)[0],
        "grad_extra": from_original_flat(gradient)[1],
        "kept": kept,
        "dropped": dropped_idx,
        "tf_version": tf.__version__,
    }
    for name in PARAM_NAMES:
        out[f"adapted/{name}"] = adapted[name]
    for key, value in results.items():
        out[key] = value
    for tag, step in steps.items():
        out[f"step_{tag}/after"] = step["after"][0]
        out[f"step_{tag}/after_extra"] = step["after"][1]
        out[f"step_{tag}/loss_after"] = step["loss_after"]
        out[f"step_{tag}/kl_after"] = step["kl_after"]
        out[f"step_{tag}/log"] = np.array(json.dumps(step["log"]))
    for key, value in processed.items():
        out[f"processing/{key}"] = value
    np.savez(os.path.join(args.out_dir, "original.npz"), **out)
    print(
        json.dumps(
            {
                "stage": "original",
                "loss_before": float(loss_before),
                "kl_before": float(kl_before),
                "backtracks": {
                    t: [m for m in s["log"] if "backtrack" in m or "Reject" in m] for t, s in steps.items()
                },
            }
        )
    )


# ---------------------------------------------------------------------------------------------
# Stage 3: compare
# ---------------------------------------------------------------------------------------------
def rel_err(value: np.ndarray, reference: np.ndarray) -> float:
    """``||value - reference|| / ||reference||`` (float64)."""
    value, reference = np.asarray(value, np.float64).ravel(), np.asarray(reference, np.float64).ravel()
    return float(np.linalg.norm(value - reference) / np.linalg.norm(reference))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a.dot(b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def vector_comparison(value: np.ndarray, reference: np.ndarray, shapes: dict[str, tuple[int, ...]]) -> dict:
    """Relative error, cosine, norm ratio of two flat vectors, overall and per parameter."""
    per = {}
    for name, (a, b) in zip(
        PARAM_NAMES,
        zip(
            unflat(np.asarray(value, np.float64), shapes).values(),
            unflat(np.asarray(reference, np.float64), shapes).values(),
        ),
    ):
        per[name] = {"rel_err": rel_err(a, b), "cos": cosine(a, b), "norm_ref": float(np.linalg.norm(b))}
    return {
        "rel_err": rel_err(value, reference),
        "cos": cosine(value, reference),
        "norm_ratio": float(np.linalg.norm(value) / np.linalg.norm(reference)),
        "norm_ref": float(np.linalg.norm(reference)),
        "per_param": per,
    }


def compare(args: argparse.Namespace) -> dict[str, Any]:
    """Compare ``ours.npz`` with ``original.npz``; return the result (also written as JSON)."""
    ours = dict(np.load(os.path.join(args.out_dir, "ours.npz")))
    orig = dict(np.load(os.path.join(args.out_dir, "original.npz")))
    shapes = {name: ours[f"theta0/{name}"].shape for name in PARAM_NAMES}
    theta0 = flat({n: ours[f"theta0/{n}"] for n in PARAM_NAMES})
    stats = {k: json.loads(str(ours[k])) for k in ("stats_gn", "stats_exact", "stats_run")}
    r: dict[str, Any] = {
        "config": json.loads(str(ours["config"])),
        "steps_per_phase": [int(ours["step0/counts"].sum()), int(ours["step1/counts"].sum())],
        "episodes_per_phase": [
            int((ours["step0/episode_lengths"] > 0).sum()),
            int((ours["step1/episode_lengths"] > 0).sum()),
        ],
    }

    # 1. the inner step
    adapted_diff = {
        n: float(np.max(np.abs(orig[f"adapted/{n}"] - ours[f"adapted/{n}"]))) for n in PARAM_NAMES
    }
    update_ours = np.concatenate(
        [
            (ours[f"adapted/{n}"] - ours[f"theta0/{n}"][None]).reshape(len(ours["tasks"]), -1)
            for n in PARAM_NAMES
        ],
        axis=1,
    )
    update_orig = np.concatenate(
        [
            (orig[f"adapted/{n}"] - ours[f"theta0/{n}"][None]).reshape(len(ours["tasks"]), -1)
            for n in PARAM_NAMES
        ],
        axis=1,
    )
    r["inner_step"] = {
        "max_abs_diff_adapted": max(adapted_diff.values()),
        "max_abs_diff_per_param": adapted_diff,
        "update_rel_err": rel_err(update_orig, update_ours),
        "update_cos_per_task_min": min(cosine(a, b) for a, b in zip(update_orig, update_ours)),
        "update_norm_mean": float(np.mean(np.linalg.norm(update_ours, axis=1))),
        "log_std_update_ours_mean": float(np.mean(ours["adapted/log_std"] - ours["theta0/log_std"])),
        "original_extra_kernel_rows_max_abs": float(orig["adapted_extra"]),
    }
    # 2. loss and KL at the old parameters
    r["loss_before"] = {
        "ours": float(ours["gn/loss"]),
        "original": float(orig["loss_before"]),
        "abs_diff": float(abs(ours["gn/loss"] - orig["loss_before"])),
    }
    r["kl_before"] = {"ours": float(ours["gn/kl"]), "original": float(orig["kl_before"])}
    # 3. gradient
    r["gradient"] = vector_comparison(orig["grad"], ours["gn/grad"], shapes)
    r["gradient"]["original_extra_kernel_rows_max_abs"] = float(orig["grad_extra"])
    r["gradient"]["ours_exact_vs_ours_gn_rel_err"] = rel_err(ours["exact/grad"], ours["gn/grad"])
    # 4. Hessian-vector products on the fixed vector
    r["hvp"] = {
        "original_exact_vs_ours_exact": vector_comparison(orig["hvp_exact"], ours["exact/hvp"], shapes),
        "original_exact_vs_ours_gauss_newton": vector_comparison(orig["hvp_exact"], ours["gn/hvp"], shapes),
        "ours_exact_vs_ours_gauss_newton": vector_comparison(ours["exact/hvp"], ours["gn/hvp"], shapes),
        "original_fd_vs_original_exact": vector_comparison(orig["hvp_fd"], orig["hvp_exact"], shapes),
        "original_extra_kernel_rows_max_abs": {
            "fd": float(orig["hvp_fd_extra"]),
            "exact": float(orig["hvp_exact_extra"]),
        },
        "vHv": {
            "ours_gn": float(ours["vector"].astype(np.float64).dot(ours["gn/hvp"])),
            "ours_exact": float(ours["vector"].astype(np.float64).dot(ours["exact/hvp"])),
            "original_exact": float(ours["vector"].astype(np.float64).dot(orig["hvp_exact"])),
            "original_fd": float(ours["vector"].astype(np.float64).dot(orig["hvp_fd"])),
        },
    }
    # 5. conjugate gradient and the initial step size
    r["cg_direction"] = {
        "original_exact_damped_vs_ours_gn": vector_comparison(
            orig["exact_damped/direction"], ours["gn/direction"], shapes
        ),
        "original_exact_vs_ours_gn": vector_comparison(orig["exact/direction"], ours["gn/direction"], shapes),
        "original_fd_vs_ours_gn": vector_comparison(orig["fd/direction"], ours["gn/direction"], shapes),
        "ours_exact_vs_ours_gn": vector_comparison(ours["exact/direction"], ours["gn/direction"], shapes),
    }
    float64_cg = ours["gn/numpy_cg64_direction"]
    r["cg_diagnostics"] = {
        "ours_tf_vs_same_algorithm_numpy_float64_on_our_products": vector_comparison(
            ours["gn/direction"], float64_cg, shapes
        ),
        "ours_numpy_float32_vs_numpy_float64": vector_comparison(
            ours["gn/numpy_cg32_direction"], float64_cg, shapes
        ),
        "original_exact_vs_ours_numpy_float64": vector_comparison(
            orig["exact/direction"], float64_cg, shapes
        ),
        "original_exact_float64_vs_ours_numpy_float64": vector_comparison(
            orig["exact_float64/direction"], float64_cg, shapes
        ),
        "original_exact_with_our_gradient_vs_original_exact": vector_comparison(
            orig["exact_our_grad/direction"], orig["exact/direction"], shapes
        ),
        "ours_tf_unrolled_tensordot_vs_ours_tf": vector_comparison(
            ours["gn/tf_cg_tensordot_direction"], ours["gn/direction"], shapes
        ),
        "ours_tf_float64_dots_vs_ours_numpy_float64": vector_comparison(
            ours["gn/tf_cg_dot64_direction"], float64_cg, shapes
        ),
        "ours_tf_float64_dots_vs_original_exact": vector_comparison(
            ours["gn/tf_cg_dot64_direction"], orig["exact/direction"], shapes
        ),
        "rdotr_per_iteration": {
            "ours_tf_tensordot": ours["gn/tf_cg_tensordot_rdotr"].tolist(),
            "ours_tf_float64_dots": ours["gn/tf_cg_dot64_rdotr"].tolist(),
            "ours_numpy_float64": ours["gn/numpy_cg64_rdotr"].tolist(),
            "original_exact_float32": orig["exact/rdotr"].tolist(),
            "original_exact_float64": orig["exact_float64/rdotr"].tolist(),
        },
        "float32_rel_err_of_g_dot_Hg": dict(
            zip(("tf.tensordot", "tf.reduce_sum(a * b)", "numpy"), ours["gn/bHb_rel_err"].tolist())
        ),
    }
    r["curvature_xHx"] = {
        "ours_gn": float(ours["gn/curvature"]),
        "ours_exact": float(ours["exact/curvature"]),
        "original_fd": float(orig["fd/curvature"]),
        "original_exact": float(orig["exact/curvature"]),
        "original_exact_damped": float(orig["exact_damped/curvature"]),
    }
    r["initial_step_size"] = {
        "ours_gn": float(ours["gn/step_size"]),
        "ours_exact": float(ours["exact/step_size"]),
        "original_fd": float(orig["fd/step_size"]),
        "original_exact": float(orig["exact/step_size"]),
        "original_exact_damped": float(orig["exact_damped/step_size"]),
    }
    # 6. the full step with line search
    ours_after = {
        "gn": flat({n: ours[f"after_gn/{n}"] for n in PARAM_NAMES}),
        "exact": flat({n: ours[f"after_exact/{n}"] for n in PARAM_NAMES}),
        "run": flat({n: ours[f"after_run/{n}"] for n in PARAM_NAMES}),
    }

    def backtracks(log: list[str]) -> Any:
        for message in log:
            if message.startswith("backtrack iters:"):
                n = int(message.split(":")[1])
                return n if not any("Rejecting" in m for m in log) else f"rejected (after {n})"
        return "rejected (NaN step size)" if any("NaN" in m for m in log) else None

    full = {
        "ours_gn": {
            "loss_after": stats["stats_gn"]["LossAfter"],
            "kl_after": stats["stats_gn"]["MeanKL"],
            "backtracks": int(stats["stats_gn"]["NumBacktracks"]),
        },
        "ours_exact": {
            "loss_after": stats["stats_exact"]["LossAfter"],
            "kl_after": stats["stats_exact"]["MeanKL"],
            "backtracks": int(stats["stats_exact"]["NumBacktracks"]),
        },
        "ours_optimize_policy_equals_ours_gn": bool(np.array_equal(ours_after["run"], ours_after["gn"])),
    }
    for tag in ("fd", "exact", "exact_damped"):
        after = orig[f"step_{tag}/after"]
        full[f"original_{tag}"] = {
            "loss_after": float(orig[f"step_{tag}/loss_after"]),
            "kl_after": float(orig[f"step_{tag}/kl_after"]),
            "backtracks": backtracks(json.loads(str(orig[f"step_{tag}/log"]))),
            "params_rel_diff_vs_ours_gn": rel_err(after, ours_after["gn"]),
            "displacement_vs_ours_gn": vector_comparison(after - theta0, ours_after["gn"] - theta0, shapes),
            "extra_kernel_rows_max_abs": float(orig[f"step_{tag}/after_extra"]),
        }
    full["ours_exact_displacement_vs_ours_gn"] = vector_comparison(
        ours_after["exact"] - theta0, ours_after["gn"] - theta0, shapes
    )
    full["ours_gn_displacement_norm"] = float(np.linalg.norm(ours_after["gn"] - theta0))
    full["ours_gn_log_std_change"] = [
        float(np.min(ours["after_gn/log_std"] - ours["theta0/log_std"])),
        float(np.max(ours["after_gn/log_std"] - ours["theta0/log_std"])),
    ]
    r["full_step"] = full
    # 7. sample processing of the same raw paths
    proc = {}
    for step in (0, 1):
        for key in ("returns", "baselines", "advantages"):
            a, b = orig[f"processing/step{step}/{key}"], ours[f"step{step}/{key}"]
            proc[f"step{step}_{key}"] = {
                "max_abs_diff": float(np.max(np.abs(a - b))),
                "rel_err": rel_err(a, b),
            }
        returns = ours[f"step{step}/returns"].astype(np.float64)
        proc[f"step{step}_baseline_rms_residual"] = {
            "ours": float(np.sqrt(np.mean((returns - ours[f"step{step}/baselines"]) ** 2))),
            "original": float(np.sqrt(np.mean((returns - orig[f"processing/step{step}/baselines"]) ** 2))),
            "returns_std": float(np.std(returns)),
        }
        proc[f"step{step}_observations_equal"] = bool(orig[f"processing/step{step}/observations_equal"])
    r["sample_processing"] = proc
    return r


# ---------------------------------------------------------------------------------------------
def fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def markdown(r: dict[str, Any]) -> str:
    """The result as a markdown table."""
    g, h, c, s, f = r["gradient"], r["hvp"], r["cg_direction"], r["initial_step_size"], r["full_step"]
    d = r["cg_diagnostics"]

    def rel_cos(x: dict, digits: int = 7) -> str:
        return f"{fmt(x['rel_err'])}, {x['cos']:.{digits}f}"

    def cos_ratio(x: dict, digits: int = 7) -> str:
        return f"{x['cos']:.{digits}f}, {x['norm_ratio']:.{min(digits, 5)}f}"

    rows = [
        ("inner step: max abs diff of the adapted parameters", fmt(r["inner_step"]["max_abs_diff_adapted"])),
        ("inner step: rel. error of the update (adapted - theta)", fmt(r["inner_step"]["update_rel_err"])),
        (
            "outer loss before (ours / original)",
            f"{fmt(r['loss_before']['ours'])} / {fmt(r['loss_before']['original'])}",
        ),
        (
            "mean KL at the old parameters (ours / original)",
            f"{fmt(r['kl_before']['ours'])} / {fmt(r['kl_before']['original'])}",
        ),
        ("outer gradient: rel. error, cosine", rel_cos(g)),
        ("HVP: original exact vs ours exact: rel. error, cosine", rel_cos(h["original_exact_vs_ours_exact"])),
        (
            "HVP: original exact vs ours gauss_newton: rel. error, cosine",
            rel_cos(h["original_exact_vs_ours_gauss_newton"]),
        ),
        (
            "HVP: original finite difference vs original exact: rel. error, cosine",
            rel_cos(h["original_fd_vs_original_exact"], 4),
        ),
        (
            "CG direction: original exact + damping 1e-5 vs ours: cosine, norm ratio",
            cos_ratio(c["original_exact_damped_vs_ours_gn"]),
        ),
        (
            "CG direction: original exact, no damping vs ours: cosine, norm ratio",
            cos_ratio(c["original_exact_vs_ours_gn"]),
        ),
        (
            "CG direction: original as run (finite differences) vs ours: cosine, norm ratio",
            cos_ratio(c["original_fd_vs_ours_gn"], 4),
        ),
        (
            "CG diagnostics: ours (TF) vs the same CG in numpy float64 on our products: rel. error, cosine",
            rel_cos(d["ours_tf_vs_same_algorithm_numpy_float64_on_our_products"]),
        ),
        (
            "CG diagnostics: original exact vs the numpy float64 CG on our products: rel. error",
            fmt(d["original_exact_vs_ours_numpy_float64"]["rel_err"]),
        ),
        (
            "CG diagnostics: ours (TF) with float64 inner products vs the numpy float64 CG: rel. error",
            fmt(d["ours_tf_float64_dots_vs_ours_numpy_float64"]["rel_err"]),
        ),
        (
            "CG diagnostics: float32 rel. error of g.Hg: tf.tensordot / tf.reduce_sum / numpy",
            " / ".join(fmt(v) for v in d["float32_rel_err_of_g_dot_Hg"].values()),
        ),
        (
            "initial step size: ours / original exact + damping / original exact / original as run",
            " / ".join(
                fmt(s[k]) for k in ("ours_gn", "original_exact_damped", "original_exact", "original_fd")
            ),
        ),
    ]
    for tag, name in (("exact_damped", "exact + damping"), ("exact", "exact, no damping"), ("fd", "as run")):
        o = f[f"original_{tag}"]
        rows.append(
            (
                f"full step, original {name} vs ours: params rel. diff; displacement rel. diff, cosine",
                f"{fmt(o['params_rel_diff_vs_ours_gn'])}; {rel_cos(o['displacement_vs_ours_gn'], 6)}",
            )
        )
        rows.append(
            (
                f"full step, original {name}: loss after, KL after, backtracks",
                f"{fmt(o['loss_after'])}, {fmt(o['kl_after'])}, {o['backtracks']}",
            )
        )
    ours = f["ours_gn"]
    rows.append(
        (
            "full step, ours (gauss_newton): loss after, KL after, backtracks",
            f"{fmt(ours['loss_after'])}, {fmt(ours['kl_after'])}, {ours['backtracks']}",
        )
    )
    for key, value in r["sample_processing"].items():
        if key.endswith("rms_residual"):
            rows.append(
                (
                    f"processing, {key} (ours / original; std of the returns)",
                    f"{fmt(value['ours'])} / {fmt(value['original'])}; {fmt(value['returns_std'])}",
                )
            )
        elif isinstance(value, dict):
            rows.append(
                (
                    f"processing of the same paths, {key}: max abs diff, rel. error",
                    f"{fmt(value['max_abs_diff'])}, {fmt(value['rel_err'])}",
                )
            )
    lines = ["| quantity | value |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines) + "\n"


def provenance(args: argparse.Namespace) -> dict[str, Any]:
    """Where the comparison came from: commits, library versions, host, date, command line."""
    from check_common import code_and_machine

    return {
        "script": os.path.relpath(os.path.realpath(__file__), REPO),
        "original_repo": os.path.realpath(args.original_repo),
        "original_commit": "93ae339",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        **code_and_machine(REPO),
    }


def run_all(args: argparse.Namespace, argv: list[str]) -> None:
    """The three stages as child processes (ours with our package on the path, the original
    without it), one thread each."""
    env = dict(os.environ)
    set_one_thread()
    env.update(
        {
            k: os.environ[k]
            for k in (
                "OMP_NUM_THREADS",
                "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS",
                "TF_NUM_INTRAOP_THREADS",
                "TF_NUM_INTEROP_THREADS",
                "TF_CPP_MIN_LOG_LEVEL",
            )
        }
    )
    passthrough = [a for a in argv if not a.startswith("--stage")]
    timings = {}
    for stage, path in (("ours", REPO), ("original", None), ("compare", REPO)):
        child = dict(env)
        if path is None:
            child.pop("PYTHONPATH", None)
        else:
            child["PYTHONPATH"] = path
        t0 = time.time()
        subprocess.run(
            [sys.executable, os.path.realpath(__file__), "--stage", stage, *passthrough],
            env=child,
            check=True,
        )
        timings[stage] = round(time.time() - t0, 1)
    print(json.dumps({"stage_seconds": timings}))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stage", choices=("all", "ours", "original", "compare"), default="all")
    parser.add_argument(
        "--original_repo",
        default="/tmp/ProMP",
        help="checkout of jonasrothfuss/ProMP at 93ae339 (its meta_policy_search is imported)",
    )
    parser.add_argument(
        "--out_dir",
        default="/tmp/trpo_step_compare",
        help="where the stages exchange their arrays (ours.npz, original.npz: ~90 MB)",
    )
    parser.add_argument(
        "--result_dir", default=None, help="where result.json and result.md go (default --out_dir)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--meta_batch_size", type=int, default=8)
    parser.add_argument("--rollouts_per_meta_task", type=int, default=10)
    parser.add_argument("--max_path_length", type=int, default=200)
    parser.add_argument("--vector_seed", type=int, default=0, help="seed of the random HVP vector")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    set_one_thread()
    if args.stage == "all":
        run_all(args, argv)
    elif args.stage == "ours":
        run_ours(args)
    elif args.stage == "original":
        run_original(args)
    else:
        result = compare(args)
        result["provenance"] = provenance(args)
        result_dir = args.result_dir or args.out_dir
        os.makedirs(result_dir, exist_ok=True)
        with open(os.path.join(result_dir, "result.json"), "w") as f:
            json.dump(result, f, indent=2)
        with open(os.path.join(result_dir, "result.md"), "w") as f:
            f.write(markdown(result))
        print(markdown(result))


if __name__ == "__main__":
    main()
