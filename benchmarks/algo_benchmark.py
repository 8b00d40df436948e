"""Algorithm steps: seconds per inner step and per outer step, with XLA off and on.

Measures, in one run on one machine, on synthetic data of the paper's size (40 tasks x 20
rollouts x H = 100, HalfCheetah dimensions obs 17 / act 6, a (64, 64) tanh
:class:`MetaGaussianMLPPolicy` in float32):

* ``adapt_policy``: :meth:`MAMLAlgo.adapt_policy` (one inner step for all tasks, sets the policy);
* ``ProMP.optimize_policy`` (5 PPO steps), with 1 and 2 inner steps;
* ``TRPOMAML.optimize_policy`` (10 CG iterations) and one Hessian-vector product. The HVP row
  times ``ConjugateGradientOptimizer.hvp``, a standalone product that recomputes the forward
  pass and the inner-step chain; inside ``optimize_policy`` (one compiled step) each product
  reuses them and costs only the second backward pass;
* ``VPGMAML.optimize_policy`` and ``DICEMAML.optimize_policy``;

each built with ``jit_compile=False`` and ``jit_compile=True``. The two variants get the same
data and the same initial parameters (reset before every timed call, so every call does the
same work); their calls are interleaved, so load from other processes hits both alike. The
first call (tracing, and XLA compilation when on) is reported separately; the step time is the
median of the following calls. The off/on results of the first call are compared (statistics
and parameters), each variant's meta-gradient is compared with the same algorithm in float64,
and every ``tf.function`` must have traced exactly once.

The data: observations are standard normal; actions are drawn from the policy that "sampled"
them (the shared parameters for the pre-update batch, the adapted per-task parameters for the
post-update batches), and ``agent_infos`` hold that policy's mean and log-std; advantages,
rewards and DiCE's adjusted rewards are standard normal. About 5% of the rollouts end early
(padded steps, ``mask = 0``).

Writes ``benchmarks/results/algo_steps.json`` and ``algo_steps.md`` (``--quick`` writes
``algo_steps_quick.*``). ``metastep_benchmark.py`` and ``metastep_profile.py`` reuse its data and
timing helpers. Usage::

    python benchmarks/algo_benchmark.py [--quick] [--repeats 3] [--only promp,trpo]
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

from benchmarks.machine_info import describe_machine, load_average, machine_info, write_results  # noqa: E402
from meta_policy_search.meta_algos import DICEMAML, TRPOMAML, VPGMAML, MAMLAlgo, ProMP  # noqa: E402
from meta_policy_search.policies import MetaGaussianMLPPolicy  # noqa: E402
from meta_policy_search.types import SampleBatch  # noqa: E402

OBS_DIM, ACT_DIM, HIDDEN = 17, 6, (64, 64)


# --------------------------------------------------------------------------------------- data
WORKLOADS = {
    # name: (meta_batch_size, rollouts, horizon, obs_dim, act_dim), see iteration_benchmark.py
    "W0": (20, 20, 100, 2, 2),  # 2-D navigation (PointEnvRandGoal)
    "W1": (40, 20, 100, OBS_DIM, ACT_DIM),  # the paper's HalfCheetahRandDirecEnv
}


def make_policy(
    meta_batch_size: int, seed: int = 0, obs_dim: int = OBS_DIM, act_dim: int = ACT_DIM
) -> MetaGaussianMLPPolicy:
    """The paper's policy: (64, 64) tanh, float32 (HalfCheetah dimensions by default)."""
    return MetaGaussianMLPPolicy(meta_batch_size, obs_dim, act_dim, hidden_sizes=HIDDEN, seed=seed)


def sample_batch(
    rng: np.random.Generator, task_params: dict[str, np.ndarray], policy: MetaGaussianMLPPolicy,
    rollouts: int, horizon: int,
) -> SampleBatch:
    """A processed batch whose actions and ``agent_infos`` come from ``task_params``."""
    num_tasks = policy.meta_batch_size
    mask = np.ones((num_tasks, rollouts, horizon), np.float32)
    ends_early = rng.random((num_tasks, rollouts)) < 0.05
    for t, r in zip(*np.nonzero(ends_early), strict=True):
        mask[t, r, rng.integers(1, horizon):] = 0.0
    obs = rng.standard_normal((num_tasks, rollouts * horizon, policy.obs_dim)).astype(np.float32)
    sampler = policy.numpy_policy(task_params)
    noise = rng.standard_normal((num_tasks, rollouts * horizon, policy.action_dim)).astype(np.float32)
    actions, infos = sampler.sample(obs, noise)

    def steps(x: np.ndarray) -> np.ndarray:
        return (x.reshape(num_tasks, rollouts, horizon, -1) * mask[..., None]).astype(np.float32)

    def scalars() -> np.ndarray:
        return (rng.standard_normal(mask.shape) * mask).astype(np.float32)

    return SampleBatch(
        observations=steps(obs), actions=steps(actions), rewards=scalars(), mask=mask,
        agent_infos={"mean": steps(infos["mean"]), "log_std": steps(infos["log_std"])},
        env_infos={}, returns=scalars(), baselines=np.zeros_like(mask), advantages=scalars(),
        adjusted_rewards=scalars(),
    )


def make_samples(
    meta_batch_size: int, rollouts: int, horizon: int, num_inner_grad_steps: int, seed: int = 0,
    obs_dim: int = OBS_DIM, act_dim: int = ACT_DIM,
) -> list[SampleBatch]:
    """``num_inner_grad_steps + 1`` batches, each sampled by the policy adapted on the previous."""
    rng = np.random.default_rng(seed)
    policy = make_policy(meta_batch_size, obs_dim=obs_dim, act_dim=act_dim)
    helper = VPGMAML(policy, inner_lr=0.1, num_inner_grad_steps=num_inner_grad_steps,
                     inner_type="likelihood_ratio")
    batches = []
    for _ in range(num_inner_grad_steps + 1):
        batches.append(sample_batch(rng, policy.get_task_param_values(), policy, rollouts, horizon))
        helper.adapt_policy(batches[-1])
    return batches


# ------------------------------------------------------------------------------------- timing
class Variant:
    """One algorithm instance (e.g. jit off or on) with its own policy and a reset to the start.

    ``key`` is what ``make_algo`` receives besides the policy (``jit_compile``, or the
    ``hvp_approach`` in ``metastep_benchmark.py``); ``name`` labels the variant's results.
    """

    def __init__(self, make_algo: Callable[[MetaGaussianMLPPolicy, object], MAMLAlgo],
                 meta_batch_size: int, key: object, name: str, dims: tuple[int, int]) -> None:
        self.policy = make_policy(meta_batch_size, obs_dim=dims[0], act_dim=dims[1])
        self.algo = make_algo(self.policy, key)
        self.initial = self.policy.get_param_values()
        self.name = name

    def reset(self) -> None:
        self.policy.set_param_values(self.initial)
        self.policy.switch_to_pre_update()


def time_call(fn: Callable[..., object], *args: object) -> tuple[float, object]:
    """Wall-clock seconds of ``fn(*args)`` and its result."""
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def tracing_counts(algo: MAMLAlgo) -> dict[str, int]:
    """Number of traces of every ``tf.function`` of the algorithm and its optimizer."""
    counts = {}
    for owner_name, owner in (("algo", algo), ("optimizer", getattr(algo, "optimizer", None))):
        for key, value in vars(owner).items() if owner is not None else ():
            if hasattr(value, "experimental_get_tracing_count"):
                counts[f"{owner_name}.{key}"] = int(value.experimental_get_tracing_count())
    return counts


def step_relative_difference(
    a: dict[str, np.ndarray], b: dict[str, np.ndarray], start: dict[str, np.ndarray]
) -> float:
    """``max |a - b| / max |a - start|`` over all parameters: the off/on gap relative to the step.

    Parameters that start at 0 (biases) make a plain relative difference meaningless.
    """
    gap = max(float(np.max(np.abs(a[k] - b[k]))) for k in a)
    step = max(float(np.max(np.abs(a[k] - start[k]))) for k in a)
    return gap / max(step, 1e-30)


JIT_PAIR = ((False, "off"), (True, "on"))
"""The default comparison: ``make_algo(policy, jit_compile)``, result keys ``off_*``, ``on_*``."""


def bench_pair(
    label: str, make_algo, call: Callable[[MAMLAlgo, Variant], dict | None], meta_batch_size: int,
    repeats: int, extra: Callable[[Variant], dict] | None = None, pair=JIT_PAIR,
    dims: tuple[int, int] = (OBS_DIM, ACT_DIM),
) -> dict:
    """Time ``call`` on the two variants of ``pair``, interleaved; compare their results."""
    variants = [Variant(make_algo, meta_batch_size, key, name, dims) for key, name in pair]
    (a, b) = names = [v.name for v in variants]
    first, outputs, params = {}, {}, {}
    for v in variants:
        v.reset()
        seconds, out = time_call(call, v.algo, v)
        first[v.name] = seconds
        outputs[v.name] = out
        params[v.name] = {**v.policy.get_param_values(),
                          **{f"task_{k}": x for k, x in v.policy.get_task_param_values().items()}}
    start = {**variants[0].initial,
             **{f"task_{k}": np.repeat(x[None], meta_batch_size, 0) for k, x in variants[0].initial.items()}}
    times: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(repeats):
        order = variants if rep % 2 == 0 else variants[::-1]
        for v in order:
            v.reset()
            times[v.name].append(time_call(call, v.algo, v)[0])
    median_a, median_b = statistics.median(times[a]), statistics.median(times[b])
    pair_ratios = [x / y for x, y in zip(times[a], times[b], strict=True)]
    result = {
        "step": label,
        f"{a}_seconds": median_a,
        f"{b}_seconds": median_b,
        f"speedup_{a}_over_{b}": median_a / median_b,
        "median_pair_speedup": statistics.median(pair_ratios),
        **{f"{n}_all_seconds": times[n] for n in names},
        **{f"{n}_first_call_seconds": first[n] for n in names},
        "param_difference_over_step": step_relative_difference(params[a], params[b], start),
        "max_abs_param_difference": max(
            float(np.max(np.abs(params[a][k] - params[b][k]))) for k in params[a]
        ),
        **{f"stats_{n}": outputs[n] or {} for n in names},
        **{f"tracing_counts_{v.name}": tracing_counts(v.algo) for v in variants},
    }
    print(f"{label}: {a} {median_a:.3f} s, {b} {median_b:.3f} s, {a}/{b} {median_a / median_b:.2f} "
          f"(first call {first[a]:.1f} / {first[b]:.1f} s), "
          f"param diff / step {result['param_difference_over_step']:.2e}", flush=True)
    if extra is not None:
        result.update(extra(variants))
    return result


def hvp_timing(samples: list[SampleBatch], repeats: int):
    """Time one standalone Hessian-vector product of TRPO-MAML's constraint in both variants."""

    def extra(variants: list[Variant]) -> dict:
        out = {}
        results, times = {}, {v.name: [] for v in variants}
        for v in variants:
            v.reset()
            batches = v.algo._check_all_samples(samples)
            size = sum(int(np.prod(x.shape)) for x in v.algo.meta_variables)
            rng = np.random.default_rng(1)  # the same vector for both variants
            vector = tf.constant(rng.standard_normal(size).astype(np.float32))
            first, results[v.name] = time_call(v.algo.optimizer.hvp, batches, vector)
            out[f"hvp_first_call_seconds_{v.name}"] = first
            v._bench = (batches, vector)
        for rep in range(repeats + 2):
            for v in variants if rep % 2 == 0 else variants[::-1]:
                batches, vector = v._bench
                seconds, _ = time_call(lambda b, x, o=v.algo.optimizer: o.hvp(b, x).numpy(), batches, vector)
                times[v.name].append(seconds)
        a, b = (results[v.name].numpy() for v in variants)
        out.update({f"hvp_{name}_seconds": statistics.median(t) for name, t in times.items()})
        out["hvp_max_relative_difference"] = float(np.max(np.abs(a - b)) / np.max(np.abs(a)))
        print("  HVP: " + ", ".join(f"{n} {out[f'hvp_{n}_seconds']:.3f} s" for n in times), flush=True)
        return out

    return extra


def gradient_accuracy(samples: list[SampleBatch], make_algo, extra=None):
    """Meta-gradient of float32 off and on against a float64 reference at the start parameters.

    Both variants' gradients come from a ``tf.function`` (XLA for the jit variant) over
    ``meta_loss``; the reference runs the same algorithm in float64 from the same (float32)
    parameter values. ``max |g - g64| / max |g64|`` shows whether XLA adds error beyond
    float32's own.
    """

    def gradient(algo: MAMLAlgo, jit_compile: bool) -> np.ndarray:
        batches = algo._check_all_samples(samples[: algo.num_inner_grad_steps + 1])

        @tf.function(jit_compile=jit_compile)
        def graph(batches):
            with tf.GradientTape() as tape:
                loss, _ = algo.meta_loss(batches)
            return tape.gradient(loss, algo.meta_variables)

        return np.concatenate([g.numpy().ravel().astype(np.float64) for g in graph(batches)])

    def run(variants: list[Variant]) -> dict:
        out = extra(variants) if extra is not None else {}
        reference_policy = MetaGaussianMLPPolicy(
            variants[0].policy.meta_batch_size, OBS_DIM, ACT_DIM, hidden_sizes=HIDDEN, seed=0,
            dtype=tf.float64,
        )
        reference_policy.set_param_values({k: v.astype(np.float64) for k, v in variants[0].initial.items()})
        reference = gradient(make_algo(reference_policy, False), False)
        scale = np.max(np.abs(reference))
        for v in variants:
            v.reset()
            error = np.max(np.abs(gradient(v.algo, v.name == "on") - reference)) / scale
            out[f"gradient_error_vs_float64_{v.name}"] = float(error)
        print(f"  meta-gradient error vs float64: off {out['gradient_error_vs_float64_off']:.1e}, "
              f"on {out['gradient_error_vs_float64_on']:.1e}", flush=True)
        return out

    return run


def to_tensor_timing(samples: list[SampleBatch], algo: MAMLAlgo, calls: int = 5) -> float:
    """Median seconds of converting one batch to tensors (``MAMLAlgo.to_tensors``)."""
    times = [time_call(algo.to_tensors, samples[0])[0] for _ in range(calls)]
    return statistics.median(times)


# -------------------------------------------------------------------------------------- output
def _optional(row: dict, key: str) -> str:
    return f"{row[key]:.1e}" if key in row else ""


def write_markdown(path: Path, result: dict) -> None:
    cfg, m = result["config"], result["machine"]
    lines = [
        "# Algorithm step benchmark",
        "",
        f"Synthetic data of the paper's size: {cfg['meta_batch_size']} tasks x "
        f"{cfg['rollouts_per_meta_task']} rollouts x H={cfg['max_path_length']}, obs "
        f"{OBS_DIM} / act {ACT_DIM}, {tuple(HIDDEN)} tanh policy, float32. Median of "
        f"{cfg['repeats']} calls after a first (tracing / compiling) call; jit off and on "
        "interleaved in one run. `off/on` > 1 means XLA is faster.",
        "",
        "| step | off (s) | on (s) | off/on | median pair off/on | first call off (s) | "
        "first call on (s) | param diff off-on / step | grad error off | grad error on |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['step']} | {row['off_seconds']:.3f} | {row['on_seconds']:.3f} | "
            f"{row['speedup_off_over_on']:.2f} | {row['median_pair_speedup']:.2f} | "
            f"{row['off_first_call_seconds']:.2f} | {row['on_first_call_seconds']:.2f} | "
            f"{row['param_difference_over_step']:.1e} | "
            f"{_optional(row, 'gradient_error_vs_float64_off')} | "
            f"{_optional(row, 'gradient_error_vs_float64_on')} |"
        )
        if "hvp_off_seconds" in row:
            lines.append(
                f"| ... one HVP | {row['hvp_off_seconds']:.3f} | {row['hvp_on_seconds']:.3f} | "
                f"{row['hvp_off_seconds'] / row['hvp_on_seconds']:.2f} | | | | "
                f"{row['hvp_max_relative_difference']:.1e} (HVP) | | |"
            )
    retraced = [
        f"{row['step']} ({key}: {n})" for row in result["rows"]
        for key, n in {**row["tracing_counts_off"], **row["tracing_counts_on"]}.items() if n > 1
    ]
    lines += [
        "",
        "`param diff off-on / step`: ``max |theta_off - theta_on| / max |theta_off - theta_0|`` "
        "after the first call. Adam normalises each gradient entry (``m / sqrt(v)``), so an "
        "entry whose gradient is near 0 can step by up to the learning rate in either direction "
        "on a rounding difference: large values in this column for the Adam-based algorithms "
        "are rounding, not an XLA error. `grad error off / on`: ``max |g - g64| / max |g64|`` of "
        "the float32 meta-gradient (plain graph / XLA) against the same algorithm in float64 at "
        "the start parameters; XLA is as accurate as the plain graph when the two are alike.",
        "",
        f"Tracing: every `tf.function` traced once over all calls: "
        f"{'yes' if not retraced else 'no: ' + ', '.join(retraced)}.",
        f"`to_tensors` of one batch: {1e3 * result['to_tensors_seconds']:.1f} ms.",
        "",
        describe_machine(m),
        "",
    ]
    path.write_text("\n".join(lines))


# ---------------------------------------------------------------------------------------- main
def optimize(algo: MAMLAlgo, samples: list[SampleBatch]) -> dict:
    return algo.optimize_policy(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small smoke configuration")
    parser.add_argument("--repeats", type=int, default=None, help="timed calls per variant")
    parser.add_argument("--only", default="", help="comma-separated subset: adapt,promp,promp2,"
                        "trpo,trpo_fwd,vpg,dice")
    parser.add_argument("--output_dir", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()
    if args.quick:
        meta_batch_size, rollouts, horizon, repeats = 4, 3, 20, args.repeats or 2
    else:
        meta_batch_size, rollouts, horizon, repeats = 40, 20, 100, args.repeats or 3
    machine = machine_info(tensorflow=tf.__version__, numpy=np.__version__)
    machine["load_average_start"] = load_average()
    samples1 = make_samples(meta_batch_size, rollouts, horizon, 1)
    samples2 = make_samples(meta_batch_size, rollouts, horizon, 2)
    n = meta_batch_size

    def adapt_call(algo, variant):
        algo.adapt_policy(samples1[0])
        return None

    cases = {
        "adapt": ("`adapt_policy` (ProMP, LVC inner step)",
                  lambda p, j: ProMP(p, inner_lr=0.1, num_inner_grad_steps=1,
                                     jit_compile=j), adapt_call, None),
        "promp": ("ProMP `optimize_policy` (5 PPO steps, K=1)",
                  lambda p, j: ProMP(p, inner_lr=0.1, num_inner_grad_steps=1, num_ppo_steps=5, jit_compile=j),
                  lambda a, v: optimize(a, samples1), samples1),
        "promp2": ("ProMP `optimize_policy` (5 PPO steps, K=2)",
                   lambda p, j: ProMP(p, inner_lr=0.1, num_inner_grad_steps=2, num_ppo_steps=5,
                                      jit_compile=j),
                   lambda a, v: optimize(a, samples2), samples2),
        "trpo": ("TRPO-MAML `optimize_policy` (10 CG iterations, K=1)",
                 lambda p, j: TRPOMAML(p, inner_lr=0.1, num_inner_grad_steps=1, inner_type="log_likelihood",
                                       cg_iters=10,
                                       jit_compile=j),
                 lambda a, v: optimize(a, samples1), samples1, hvp_timing(samples1, repeats)),
        "trpo_fwd": ("TRPO-MAML, `hvp_approach='forward_over_reverse'`",
                     lambda p, j: TRPOMAML(p, inner_lr=0.1, num_inner_grad_steps=1,
                                           inner_type="log_likelihood", cg_iters=10,
                                           hvp_approach="forward_over_reverse", jit_compile=j),
                     lambda a, v: optimize(a, samples1), None, hvp_timing(samples1, repeats)),
        "vpg": ("VPG-MAML `optimize_policy` (K=1)",
                lambda p, j: VPGMAML(p, inner_lr=0.1, num_inner_grad_steps=1, inner_type="log_likelihood",
                                     jit_compile=j),
                lambda a, v: optimize(a, samples1), samples1),
        "dice": ("DiCE-MAML `optimize_policy` (K=1)",
                 lambda p, j: DICEMAML(p, inner_lr=0.1, max_path_length=horizon, jit_compile=j),
                 lambda a, v: optimize(a, samples1), samples1),
    }
    selected = [c for c in args.only.split(",") if c] or list(cases)
    rows = []
    for key in selected:
        label, make_algo, call, gradient_samples, *extra = cases[key]
        extra = extra[0] if extra else None
        if gradient_samples is not None:
            extra = gradient_accuracy(gradient_samples, make_algo, extra)
        rows.append(bench_pair(label, make_algo, call, n, repeats, extra))
    conversion = to_tensor_timing(samples1, ProMP(make_policy(n), inner_lr=0.1, num_inner_grad_steps=1))
    machine["load_average_end"] = load_average()
    result = {
        "config": {"meta_batch_size": n, "rollouts_per_meta_task": rollouts,
                   "max_path_length": horizon, "hidden_sizes": list(HIDDEN), "obs_dim": OBS_DIM,
                   "act_dim": ACT_DIM, "repeats": repeats, "quick": args.quick},
        "machine": machine,
        "rows": rows,
        "to_tensors_seconds": conversion,
    }
    write_results(args.output_dir, "algo_steps_quick" if args.quick else "algo_steps", result, write_markdown)


if __name__ == "__main__":
    main()
