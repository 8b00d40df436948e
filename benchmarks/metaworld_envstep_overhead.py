"""Why an ML10 ``env.step`` costs more inside the sampler than a standalone Meta-World env's.

``benchmarks/results/metaworld_ml10/cost.md`` measured ``MetaWorldBenchmarkEnv.step`` at
737-789 CPU us per step inside the sampler and a standalone Meta-World env at 491 us with uniform
random actions. This script splits the difference. In one process (a sampler worker's: no
TensorFlow; the initial policy is built in a spawned child), one task of every ML10 training class
(meta-batch 10), ``E`` env copies per task and ``R = E`` episodes of ``H`` steps per task, it runs
every *arm* below once per round and adds up the CPU time (``time.process_time``, the whole
process, and ``time.thread_time``, this thread) of the env steps alone (resets and everything else
excluded). The two whole-phase arms and the block of single-env arms take turns, their order
rotated every round; within the block the single-env arms are paired episode by episode (each
episode run by every arm in turn, the order rotated every episode), so that the load's drift
falls on them alike:

* ``sampler``: a sampler worker (:class:`~meta_policy_search.samplers.executor_base.RolloutWorker`,
  what every executor runs) collecting one phase with the initial ``(512, 512)`` tanh policy (std
  1): one batched policy evaluation per tick, then every running copy's
  :meth:`MetaWorldBenchmarkEnv.step`. Its actions and rewards are recorded in the warm-up round.
* ``round_robin``: the same env copies, stepped tick by tick through the same batched env with the
  recorded actions, without the policy and the sampler's bookkeeping;
* ``wrapper``: one of our env copies per task, the recorded episodes one after the other;
* ``raw``: the Meta-World env inside that copy, stepped directly with the recorded actions (clipped
  to ``[-1, 1]`` and float64, exactly what our wrapper hands it);
* ``raw_after_policy``: as ``raw``, plus one policy evaluation of the sampler's batch every
  ``T x E`` steps (the sampler's dose, in a single-env order);
* ``raw_gaussian``: the raw env with independent ``clip(N(0, 1))`` actions (the initial policy's
  std, not its mean);
* ``raw_uniform``: the raw env with uniform ``[-1, 1]`` actions (cost.md's floor).

The first five replay the same episodes from the same reset seeds, so they do the same physics;
the script checks that every one of them reproduces the recorded rewards bit for bit. Round 0 is
a warm-up and is not counted. Two more measurements have flags of their own: ``--interleaving``
(:func:`interleaving`: raw envs stepped env after env or tick after tick, with one env of every
class or with copies of one class) and ``--wrapper_cost`` (:func:`wrapper_cost`: our wrapper's own
work per step). ``benchmarks/results/metaworld_ml10/envstep_overhead.md`` gives the commands of
its files and reads them. Usage::

    .venv-metaworld/bin/python benchmarks/metaworld_envstep_overhead.py --seed 1 --rounds 6 \
        --output benchmarks/results/metaworld_ml10/envstep/arms_seed1.json
    python benchmarks/metaworld_envstep_overhead.py --summarize \
        benchmarks/results/metaworld_ml10/envstep/arms_seed*.json
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

ARMS = ("sampler", "round_robin", "wrapper", "raw", "raw_after_policy", "raw_gaussian",
        "raw_uniform")
"""The arms, in the order of round 1 (later rounds rotate it)."""

REPLAY_ARMS = ARMS[:5]
"""The arms that replay the recorded episodes (the same physics): their rewards are checked."""


class StepClock:
    """CPU seconds (process and thread) and count of the env steps of the arm in progress."""

    def __init__(self) -> None:
        self.process_s = self.thread_s = 0.0
        self.steps = 0

    def call(self, step: Callable[..., Any], *args: Any) -> Any:
        """Run ``step(*args)`` and add its CPU time."""
        process, thread = time.process_time(), time.thread_time()
        result = step(*args)
        self.thread_s += time.thread_time() - thread
        self.process_s += time.process_time() - process
        self.steps += 1
        return result

    def totals(self) -> dict[str, float]:
        """The totals since the last call (seconds and steps); start new ones."""
        totals = {"process_s": self.process_s, "thread_s": self.thread_s, "steps": self.steps}
        self.process_s = self.thread_s = 0.0
        self.steps = 0
        return totals


def per_step(totals: dict[str, float]) -> dict[str, float]:
    """:meth:`StepClock.totals` as a row: steps, and process and thread CPU us per step."""
    steps = max(int(totals["steps"]), 1)
    return {"steps": int(totals["steps"]), "process_us": 1e6 * totals["process_s"] / steps,
            "thread_us": 1e6 * totals["thread_s"] / steps}


def initial_policy(meta_batch_size: int, obs_dim: int, action_dim: int,
                   seed: int) -> dict[str, Any]:
    """The ``ML10`` config's initial policy as a sampler gets it (built with TensorFlow, so in a
    child process: the measuring process stays TensorFlow-free like a sampler worker)."""
    from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy

    policy = MetaGaussianMLPPolicy(meta_batch_size=meta_batch_size, obs_dim=obs_dim,
                                   action_dim=action_dim, hidden_sizes=(512, 512),
                                   learn_std=True, init_std=1.0, hidden_nonlinearity="tanh",
                                   seed=seed)
    numpy_policy = policy.get_sampling_policy()
    return {"params": numpy_policy.params, "hidden_nonlinearity": numpy_policy.hidden_nonlinearity,
            "min_log_std": numpy_policy.min_log_std}


def measure(seed: int, envs_per_task: int, horizon: int, rounds: int) -> dict[str, Any]:
    """Run the arms for ``rounds`` counted rounds (plus the warm-up); return the per-round rows."""
    from meta_policy_search.envs.metaworld_envs import MetaWorldBenchmarkEnv, MetaWorldML10Env
    from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
    from meta_policy_search.samplers.executor_base import RolloutWorker, WorkerSpec
    from meta_policy_search.samplers.iterative_executor import copy_env
    from meta_policy_search.samplers.quota import make_quota
    from meta_policy_search.samplers.rollout import episode_randomness

    clock = StepClock()
    original_step = MetaWorldBenchmarkEnv.step

    def timed_step(self: Any, action: np.ndarray) -> Any:
        return clock.call(original_step, self, action)

    MetaWorldBenchmarkEnv.step = timed_step  # type: ignore[method-assign]

    env = MetaWorldML10Env(benchmark_seed=0)
    env.seed_tasks(seed)
    num_tasks = len(env.tasks_by_class("train"))
    tasks = env.sample_tasks(num_tasks)  # one task of every training class
    obs_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        policy = NumpyGaussianMLP(**pool.submit(initial_policy, num_tasks, obs_dim, action_dim,
                                                seed).result())
    spec = WorkerSpec(task_start=0, task_stop=num_tasks, envs_per_task=envs_per_task,
                      max_path_length=horizon, seed=seed,
                      quota=make_quota("rollouts", envs_per_task), use_batched_env=True)
    worker = RolloutWorker(env, spec, lambda: copy_env(env))
    worker.set_tasks(tasks)
    batched = worker.envs
    copies = batched.envs  # type: ignore[attr-defined]
    num_envs = num_tasks * envs_per_task
    # One wave of E episodes per task: copy j of task t runs episode j (rollout.py).
    reset_seeds = [episode_randomness(seed, 0, t, j, horizon, action_dim)[0]
                   for t in range(num_tasks) for j in range(envs_per_task)]
    rng = np.random.default_rng(seed)
    recorded: dict[str, np.ndarray] = {}

    def sampler() -> np.ndarray:
        paths, _ = worker.collect(policy, 0)
        if not recorded:
            recorded["actions"] = paths.actions.reshape(num_envs, horizon, action_dim)
            recorded["rewards"] = paths.rewards.reshape(num_envs, horizon)
        return paths.rewards.reshape(num_envs, horizon)

    def round_robin() -> np.ndarray:
        indices = np.arange(num_envs)
        batched.reset(indices, reset_seeds)
        rewards = np.empty((num_envs, horizon), np.float32)
        for tick in range(horizon):
            rewards[:, tick] = batched.step(indices, recorded["actions"][:, tick]).rewards
        return rewards

    def copy_of(i: int) -> Any:
        # episode i (task i // E) runs on the task's copy 0 in the single-env arms
        return copies[(i // envs_per_task) * envs_per_task]

    def wrapper_step(i: int, tick: int) -> float:
        return float(copy_of(i).step(recorded["actions"][i, tick])[1])

    def raw_step(action: Callable[[int, int], np.ndarray]) -> Callable[[int, int], float]:
        def step(i: int, tick: int) -> float:
            return float(clock.call(copy_of(i)._active_env.step, action(i, tick))[1])
        return step

    def recorded_raw_action(i: int, tick: int) -> np.ndarray:
        # what our wrapper hands Meta-World: the stored float32 action, as float64, clipped
        return np.clip(np.asarray(recorded["actions"][i, tick], dtype=np.float64), -1.0, 1.0)

    observations = np.zeros((num_tasks, envs_per_task, obs_dim))
    noise = np.zeros((num_tasks, envs_per_task, action_dim))

    raw_recorded = raw_step(recorded_raw_action)

    def policy_then_raw(i: int, tick: int) -> float:
        if tick % num_envs == 0:  # one evaluation of the sampler's batch per T x E steps
            policy.sample(observations, noise)
        return raw_recorded(i, tick)

    singles: dict[str, Callable[[int, int], float]] = {
        "wrapper": wrapper_step,
        "raw": raw_recorded,
        "raw_after_policy": policy_then_raw,
        "raw_gaussian": raw_step(
            lambda i, tick: np.clip(rng.standard_normal(action_dim), -1.0, 1.0)),
        "raw_uniform": raw_step(lambda i, tick: rng.uniform(-1.0, 1.0, action_dim)),
    }
    single_names = [arm for arm in ARMS if arm in singles]

    def single_arms(round_index: int) -> dict[str, tuple[dict[str, float], np.ndarray]]:
        # Paired episode by episode (the arms' order rotated every episode), so that the load's
        # drift within a round falls on all of them alike.
        totals = {arm: {"process_s": 0.0, "thread_s": 0.0, "steps": 0} for arm in singles}
        rewards = {arm: np.empty((num_envs, horizon), np.float32) for arm in singles}
        for i in range(num_envs):
            shift = (round_index + i) % len(single_names)
            for arm in single_names[shift:] + single_names[:shift]:
                copy_of(i).reset(seed=reset_seeds[i])  # what every arm's episode starts from
                clock.totals()
                for tick in range(horizon):
                    rewards[arm][i, tick] = singles[arm](i, tick)
                for key, value in clock.totals().items():
                    totals[arm][key] += value
        return {arm: (totals[arm], rewards[arm]) for arm in singles}

    whole = {"sampler": sampler, "round_robin": round_robin}
    rows = []
    for round_index in range(rounds + 1):
        blocks = ["sampler", "round_robin", "singles"]
        shift = round_index % len(blocks)
        results: dict[str, tuple[dict[str, float], np.ndarray]] = {}
        for block in blocks[shift:] + blocks[:shift]:
            if block == "singles":
                results.update(single_arms(round_index))
            else:
                clock.totals()
                rewards = whole[block]()
                results[block] = (clock.totals(), rewards)
        for arm in ARMS:
            totals, rewards = results[arm]
            row = {"round": round_index, "arm": arm, **per_step(totals)}
            if arm in REPLAY_ARMS:
                row["rewards_identical"] = bool(np.array_equal(rewards, recorded["rewards"]))
                if not row["rewards_identical"]:
                    raise RuntimeError(f"arm {arm} did not replay the recorded episodes")
            rows.append(row)
            print(json.dumps(row), flush=True)
    clipped = np.abs(recorded["actions"]) >= 1.0
    worker.close()
    return {"rows": rows, "tasks": [int(t) for t in tasks],
            "task_classes": [env.task_parameters(t)[0] for t in tasks],
            "recorded_actions_clipped_fraction": float(clipped.mean())}


INTERLEAVING_CLASSES = ("reach-v3", "push-v3", "sweep-v3")
"""The classes whose ten copies make the single-class groups of :func:`interleaving`."""


INTERLEAVING_CHUNK = 50
"""Ticks per chunk of :func:`interleaving`: the two orders take turns every this many ticks."""


def interleaving(seed: int, num_envs: int, horizon: int, rounds: int) -> dict[str, Any]:
    """Raw Meta-World envs stepped env after env or tick after tick.

    Groups of ``num_envs`` envs: one of every ML10 training class (``mixed``, as a sampler
    worker's envs) and ``num_envs`` copies of one class (``single:<class>``, every class of
    :data:`INTERLEAVING_CLASSES`). Every group is built twice (two identical sets) and runs the
    same episodes (uniform ``[-1, 1]`` actions, drawn once per env) on both sets, in chunks of
    :data:`INTERLEAVING_CHUNK` ticks: one set ``sequential`` (env 0's steps of the chunk, then
    env 1's, ...), the other ``interleaved`` (every env's step ``h`` before any env's step
    ``h + 1``, the sampler's order), the two taking turns every chunk (which goes first rotates)
    and swapping sets every round. Returns the rows (process and thread CPU us per step).
    """
    import metaworld

    benchmark = metaworld.ML10(seed=0)
    task_of = {}
    for task in benchmark.train_tasks:
        task_of.setdefault(task.env_name, task)
    clock = StepClock()
    groups = {"mixed": list(benchmark.train_classes)}
    groups |= {f"single:{name}": [name] * num_envs for name in INTERLEAVING_CLASSES}
    rng = np.random.default_rng(seed)
    orders = ("sequential", "interleaved")
    rows = []
    for group, names in groups.items():
        sets = []
        for _ in orders:
            envs = []
            for name in names:
                env = benchmark.train_classes[name]()
                env.max_path_length = sys.maxsize
                env.set_task(task_of[name])
                envs.append(env)
            sets.append(envs)
        actions = rng.uniform(-1.0, 1.0, (len(names), horizon, 4))
        first_rewards = None
        for round_index in range(rounds + 1):
            env_set = {order: sets[(k + round_index) % 2] for k, order in enumerate(orders)}
            rewards = {order: np.empty((len(names), horizon)) for order in orders}
            totals = {order: {"process_s": 0.0, "thread_s": 0.0, "steps": 0} for order in orders}
            for envs in sets:
                for env in envs:
                    env.reset()
            for chunk, start in enumerate(range(0, horizon, INTERLEAVING_CHUNK)):
                ticks = range(start, min(start + INTERLEAVING_CHUNK, horizon))
                for order in orders[chunk % 2:] + orders[:chunk % 2]:
                    envs, result = env_set[order], rewards[order]
                    clock.totals()
                    if order == "sequential":
                        for i, env in enumerate(envs):
                            for h in ticks:
                                result[i, h] = clock.call(env.step, actions[i, h])[1]
                    else:
                        for h in ticks:
                            for i, env in enumerate(envs):
                                result[i, h] = clock.call(env.step, actions[i, h])[1]
                    for key, value in clock.totals().items():
                        totals[order][key] += value
            if first_rewards is None:
                first_rewards = rewards["sequential"]
            for order in orders:
                row = {"group": group, "round": round_index, "order": order,
                       **per_step(totals[order]),
                       "rewards_identical": bool(np.array_equal(rewards[order], first_rewards))}
                rows.append(row)
                print(json.dumps(row), flush=True)
        for envs in sets:
            for env in envs:
                env.close()
    return {"interleaving_rows": rows, "interleaving_classes": list(INTERLEAVING_CLASSES),
            "interleaving_chunk": INTERLEAVING_CHUNK}


def wrapper_cost(seed: int, calls: int, rounds: int) -> dict[str, Any]:
    """CPU us per call of our wrapper's own work in :meth:`MetaWorldBenchmarkEnv.step`.

    Meta-World's ``step`` of the wrapped env is replaced by a function that returns a step
    result recorded before (every class of ML10, ``calls`` calls each), so what is timed is the
    wrapper's conversions, clipping, info floats and the call; ``stub`` times the replacement
    called directly, the part that the real Meta-World step would also have.
    """
    from meta_policy_search.envs.metaworld_envs import MetaWorldML10Env

    env = MetaWorldML10Env(benchmark_seed=0)
    env.seed_tasks(seed)
    tasks = env.sample_tasks(len(env.tasks_by_class("train")))
    rng = np.random.default_rng(seed)
    actions = rng.standard_normal((calls, 4)).astype(np.float32)
    rows = []
    for round_index in range(rounds + 1):
        totals = {"wrapper": 0.0, "stub": 0.0}
        for task in tasks:
            env.set_task(task)
            env.reset(seed=seed)
            raw = env._active_env
            recorded = raw.step(np.zeros(4))

            def stub(action: np.ndarray, recorded: Any = recorded) -> Any:
                return recorded

            raw.step = stub  # an instance attribute: the class's step is left alone
            for arm in ("wrapper", "stub") if round_index % 2 == 0 else ("stub", "wrapper"):
                call = env.step if arm == "wrapper" else stub
                start = time.process_time()
                for action in actions:
                    call(action)
                totals[arm] += time.process_time() - start
            del raw.step
        row = {"round": round_index,
               **{f"{arm}_us": 1e6 * total / (calls * len(tasks)) for arm, total in totals.items()}}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return {"wrapper_cost_rows": rows}


def versions() -> dict[str, str]:
    """The versions the numbers depend on."""
    from importlib.metadata import version

    return {package: version(package) for package in ("metaworld", "mujoco", "numpy", "scipy",
                                                      "gymnasium")} | {
        "python": platform.python_version()}


def load(paths: list[str]) -> list[dict[str, Any]]:
    """The result files, in the given order."""
    results = []
    for path in paths:
        with open(path) as f:
            results.append(json.load(f))
    return results


def arm_ratios(result: dict[str, Any]) -> dict[str, dict[str, list[float]]]:
    """Per arm, over the counted rounds of one file: ``us`` (process CPU us per step),
    ``thread_us`` and ``ratio`` (its ``us`` over ``raw``'s of the same round)."""
    counted = [row for row in result["rows"] if row["round"] > 0]
    raw = {row["round"]: row["process_us"] for row in counted if row["arm"] == "raw"}
    table: dict[str, dict[str, list[float]]] = {}
    for row in counted:
        entry = table.setdefault(row["arm"], {"us": [], "thread_us": [], "ratio": []})
        entry["us"].append(row["process_us"])
        entry["thread_us"].append(row["thread_us"])
        entry["ratio"].append(row["process_us"] / raw[row["round"]])
    return table


def order_ratios(result: dict[str, Any]) -> dict[str, dict[str, list[float]]]:
    """Per group of :func:`interleaving`, over the counted rounds of one file: ``sequential`` and
    ``interleaved`` us per step and ``ratio`` (interleaved over sequential, same round)."""
    rows = [row for row in result["interleaving_rows"] if row["round"] > 0]
    by_round = {(row["group"], row["round"], row["order"]): row["process_us"] for row in rows}
    table: dict[str, dict[str, list[float]]] = {}
    for (group, round_index, order), us in by_round.items():
        entry = table.setdefault(group, {"sequential": [], "interleaved": [], "ratio": []})
        entry[order].append(us)
        if order == "interleaved":
            entry["ratio"].append(us / by_round[(group, round_index, "sequential")])
    return table


def seed_interval(per_seed: list[float]) -> tuple[float, float]:
    """``(low, high)`` of the 95% t interval of the mean of the per-seed values."""
    from meta_policy_search.experiment.comparison import confidence_interval

    interval = confidence_interval(per_seed)
    if interval is None:
        return per_seed[0], per_seed[0]
    mean, _, half_width = interval
    return mean - half_width, mean + half_width


def _ratio_table(tables: list[dict[str, dict[str, list[float]]]], first: str,
                 columns: dict[str, str], keys: tuple[str, ...] | None = None) -> list[str]:
    lines = [f"| {first} | " + " | ".join(f"{c} us / step (min-max)" for c in columns.values())
             + " | ratio per seed (mean of its rounds) | 95% CI of the mean over seeds |",
             "|---|" + "---:|" * (len(columns) + 2)]
    for key in keys or tuple(tables[0]):
        cells = []
        for column in columns:
            values = [v for table in tables for v in table[key][column]]
            cells.append(f"{min(values):.0f}-{max(values):.0f}")
        per_seed = [float(np.mean(table[key]["ratio"])) for table in tables]
        low, high = seed_interval(per_seed)
        lines.append(f"| `{key}` | " + " | ".join(cells) + " | "
                     + ", ".join(f"{v:.2f}" for v in per_seed) + f" | {low:.2f}-{high:.2f} |")
    return lines


def summarize(paths: list[str]) -> list[str]:
    """Markdown table of :func:`measure`'s files (one per seed): per arm, CPU us per step and
    the ratio to ``raw`` of the same round."""
    return _ratio_table([arm_ratios(r) for r in load(paths)], "arm",
                        {"us": "process CPU", "thread_us": "thread CPU"}, ARMS)


def summarize_interleaving(paths: list[str]) -> list[str]:
    """Markdown table of :func:`interleaving`'s files (one per seed): per group, CPU us per step
    of each order and the ratio interleaved / sequential of the same round."""
    return _ratio_table([order_ratios(r) for r in load(paths)], "group",
                        {"sequential": "sequential", "interleaved": "interleaved"})


def summarize_wrapper_cost(paths: list[str]) -> list[str]:
    """One line: our wrapper's own CPU us per step and the stub's, over the counted rounds of
    :func:`wrapper_cost`'s files."""
    rows = [row for r in load(paths) for row in r["wrapper_cost_rows"] if row["round"] > 0]
    wrapper, stub = [row["wrapper_us"] for row in rows], [row["stub_us"] for row in rows]
    return [f"wrapper {min(wrapper):.1f}-{max(wrapper):.1f} us per step, stub "
            f"{min(stub):.2f}-{max(stub):.2f} us ({len(rows)} rounds)"]


def main(argv: list[str] | None = None) -> None:
    """Measure the arms (or, with ``--summarize``, print the table of result files)."""
    if argv is None:
        argv = sys.argv[1:]
    summaries = {"--summarize": summarize, "--summarize_interleaving": summarize_interleaving,
                 "--summarize_wrapper_cost": summarize_wrapper_cost}
    if argv and argv[0] in summaries:
        print("\n".join(summaries[argv[0]](argv[1:])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1, help="tasks, policy and episode seeds")
    parser.add_argument("--envs_per_task", type=int, default=2)
    parser.add_argument("--max_path_length", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3, help="counted rounds (after a warm-up)")
    parser.add_argument("--interleaving", action="store_true",
                        help="measure the step orders of raw envs (interleaving()) instead")
    parser.add_argument("--wrapper_cost", action="store_true",
                        help="measure our wrapper's own work per step (wrapper_cost()) instead")
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"args": vars(args), "command": " ".join([sys.executable] + sys.argv),
                              "versions": versions(), "machine": platform.processor() or
                              platform.machine(), "cpus": os.cpu_count(),
                              "loadavg_start": os.getloadavg()}
    if args.wrapper_cost:
        result.update(wrapper_cost(args.seed, 10000, args.rounds))
    elif args.interleaving:
        result.update(interleaving(args.seed, 10, args.max_path_length, args.rounds))
    else:
        result.update(measure(args.seed, args.envs_per_task, args.max_path_length, args.rounds))
    result["loadavg_end"] = os.getloadavg()
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
