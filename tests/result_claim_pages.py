"""The numbers of the hand-written results pages, each with the committed files it comes from.

Read by ``tests/test_result_claims.py`` (the engine, :class:`Claim`, :class:`Table` and
:class:`Unchecked`, is in ``tests/result_claims.py``). A quote is copied from its page (line
breaks free); ``values`` recomputes its decimal numbers in order. Editing a number on a page
means editing its quote here, and the recomputation decides whether the new number stands.
"""

from __future__ import annotations

import datetime
import importlib
import json
import os
import re
import sys

import numpy as np
from result_claims import (
    RESULTS,
    ROOT,
    Claim,
    Runs,
    Table,
    Unchecked,
    interval,
    itr_of,
    mean,
    span,
    summary,
)

from meta_policy_search.experiment.paper import load_paper_reference

T = 1e7
"""Where figure 2 is read, and where our grid and the original-code runs are compared."""


def benchmark_module(name: str):
    """``benchmarks/<name>.py`` as a module (the folder is not a package)."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def paper(env: str, algorithm: str, timesteps: float = T, figure: str = "fig2") -> float:
    """The paper's value of a cell (``paper_reference.csv``)."""
    (point,) = [p for p in load_paper_reference() if p.env == env and p.algorithm == algorithm
                and p.timesteps == timesteps and p.figure == figure
                and p.metric == "Step_1-AverageReturn"]
    return point.value


def launch_seconds(log: str, start: str, done: str) -> float:
    """Seconds from the ``launches.log`` line containing ``start`` to the one containing ``done``."""
    with open(os.path.join(RESULTS, log), encoding="utf-8") as f:
        lines = f.read().splitlines()

    def stamp(text: str) -> datetime.datetime:
        (line,) = [line for line in lines if text in line]
        clock = re.search(r"(\d\d:\d\d:\d\d)\]", line)
        assert clock is not None, line
        return datetime.datetime.strptime(clock.group(1), "%H:%M:%S")

    return (stamp(done) - stamp(start)).total_seconds()


def episode_lengths(runs: Runs, timesteps: float = T) -> list[float]:
    """Each seed's steps per episode at the logged iteration nearest ``timesteps``
    (``cell_diagnostics.py``'s ``length``)."""
    diagnostics = benchmark_module("cell_diagnostics")
    return [diagnostics.seed_row(seed, timesteps)["length"] for seed in runs.seeds]


def start_lengths(runs: Runs) -> list[float]:
    """Each seed's steps per episode at iteration 0."""
    diagnostics = benchmark_module("cell_diagnostics")
    return [diagnostics.seed_row(seed, T)["start_length"] for seed in runs.seeds]


def times(runs: Runs) -> list[np.ndarray]:
    """Each seed's ``ItrTime`` column."""
    return [seed["ItrTime"] for seed in runs.seeds]


def timesteps_at(runs: Runs, iteration: int) -> float:
    """``n_timesteps`` of the first seed at ``Itr == iteration``."""
    seed = runs.seeds[0]
    return float(seed["n_timesteps"][seed["Itr"] == iteration][0])


def takeoffs(grid: str) -> list[float]:
    """Each ProMP seed's take-off iteration on HalfCheetah (``benchmarks/takeoff.py``)."""
    return [float(t) for t in benchmark_module("takeoff").seed_takeoffs(
        os.path.join(RESULTS, grid), "promp")]


def drawn_mean(runs: Runs, round_x: float | None, iterations=(0, 4, 8, 12)) -> list[float]:
    """The seeds' mean curve as the original's plotting helper draws it, at ``iterations``
    (``takeoff.md``'s second table)."""
    takeoff = benchmark_module("takeoff")
    curves = [(seed["n_timesteps"], seed["Step_1-AverageReturn"]) for seed in runs.seeds]
    per_iteration = float(np.median(np.diff(curves[0][0])))
    xs, means = takeoff.binned_mean_curve(curves, round_x)
    return [float(np.interp(i, xs / per_iteration, means)) for i in iterations]


def last_equal(values: list[float]) -> float:
    """The common value of ``values`` (NaN, which no written number equals, if they differ)."""
    return values[0] if np.allclose(values, values[0]) else float("nan")


def walker_kl_settle(runs: Runs) -> list[float]:
    """``[first iteration at 0.001, then constant?]`` of the original's ``KLCoeffInner``."""
    seed = runs.seeds[0]
    coefficient = seed["KLCoeffInner"]
    first = int(np.argmax(np.isclose(coefficient, 0.001)))
    return [float(seed["Itr"][first]) if np.allclose(coefficient[first:], 0.001) else np.nan]


def argmax_itr(runs: Runs, column: str) -> list[float]:
    """Each seed's iteration where ``column`` is largest."""
    return [float(seed["Itr"][np.argmax(seed[column])]) for seed in runs.seeds]


def step_compare(path: str, *keys: str) -> float:
    """A number of a ``trpo_step_compare`` ``result.json`` (``benchmarks/results/...``)."""
    with open(os.path.join(RESULTS, path), encoding="utf-8") as f:
        value = json.load(f)
    for key in keys:
        value = value[key]
    return float(value)


CG_COSINE = ("trpo_step_compare/result.json", "cg_direction", "original_exact_damped_vs_ours_gn", "cos")
"""The CG direction's cosine to the original's with exact products, before the fix."""


def largest_difference(first: Runs, second: Runs, column: str, iterations: int) -> float:
    """The largest ``|first - second|`` of ``column`` over the first ``iterations`` (seed 1 each)."""
    a, b = first.over(column, last=iterations - 1)[0], second.over(column, last=iterations - 1)[0]
    return float(np.abs(a - b).max())


# ---------------------------------------------------------------------------- sources
HOPPER_ORIGINAL = Runs("original_code_hopper/promp/HopperRandParamsEnv/seed_*")
HOPPER_OURS = Runs("reproduction/promp/HopperRandParamsEnv/seed_*")
WALKER_ORIGINAL = Runs("original_code_walker/promp/Walker2DRandParamsEnv/seed_*")
WALKER_OURS = Runs("reproduction/promp/Walker2DRandParamsEnv/seed_*")
WALKER_TRPO = Runs("reproduction/trpo_maml/Walker2DRandParamsEnv/seed_*")
HUMANOID_ORIGINAL = Runs("original_code_humanoid/trpo_maml/HumanoidRandDirec2DEnv/seed_*")
HUMANOID_ORIGINAL_ITR8 = Runs("original_code_humanoid/itr8/trpo_maml/HumanoidRandDirec2DEnv/seed_*")
HUMANOID_OURS = Runs("reproduction/trpo_maml/HumanoidRandDirec2DEnv/seed_*")
HUMANOID_OURS_1 = Runs("reproduction/trpo_maml/HumanoidRandDirec2DEnv/seed_1")
HUMANOID_PROMP = Runs("reproduction/promp/HumanoidRandDirec2DEnv/seed_*")
HVP = Runs("trpo_hvp_humanoid")
CHEETAH_ORIGINAL = Runs("original_code_halfcheetah/promp/HalfCheetahRandDirecEnv/seed_*")
CHEETAH_OURS = Runs("reproduction/promp/HalfCheetahRandDirecEnv/seed_*")
GRADIENT_VARIANCE = "reproduction/gradient_variance"
STEP0, STEP1 = "Step_0-AverageReturn", "Step_1-AverageReturn"

HOPPER = "benchmarks/results/original_code_hopper/README.md"
WALKER = "benchmarks/results/original_code_walker/README.md"
HUMANOID = "benchmarks/results/original_code_humanoid/README.md"
HVP_PAGE = "benchmarks/results/trpo_hvp_humanoid/README.md"
CHEETAH = "benchmarks/results/original_code_halfcheetah/README.md"
VARIANCE = "benchmarks/results/reproduction/gradient_variance/gradient_variance.md"

SETTINGS = "a setting of the runs (params.json; benchmarks/original_code/README.md lists them)"
ENV_CHECK = "the --check_env comparison of benchmarks/original_code/README.md"
VERSIONS = "software versions (docs/differences.rst)"


def hopper_table_row(runs: Runs, mean_only: bool):
    """A row of the hopper and walker tables: the mean over seeds or each seed at an iteration."""
    return lambda column: [mean(runs.itr(itr_of(column)))] if mean_only \
        else runs.itr(itr_of(column))


def header_timesteps(runs: Runs):
    """Table headers such as ``12 (4.2e6)``: the iteration's ``n_timesteps``."""
    return lambda column: [timesteps_at(runs, itr_of(column))]


# ---------------------------------------------------------------------------- the hopper
HOPPER_CLAIMS = [
    Claim(HOPPER, "ends at 221.1 +- 4.5 over seeds 1-3 at 1e7 timesteps (222.0, 216.1, 225.0; CI "
          "[209.8, 232.3];",
          lambda: [*summary(HOPPER_OURS.at(T))[:2], *HOPPER_OURS.at(T),
                   *interval(HOPPER_OURS.at(T))]),
    Claim(HOPPER, "the paper's value lies 4.8 below our interval",
          lambda: [interval(HOPPER_OURS.at(T))[0] - paper("HopperRandParamsEnv", "ProMP")]),
    Claim(HOPPER, "32 iterations (to 1.02e7 timesteps", lambda: [timesteps_at(HOPPER_ORIGINAL, 31)]),
    Claim(HOPPER, "seed 1 1,782 s (1,713 s logged as `ItrTime`, 53.5 s per iteration, 44.1-65.9), "
          "seed 2 1,600 s (1,534 s, 47.9 s, 40.4-60.5)", integers=True, values=lambda: [
              1, launch_seconds("original_code_hopper/launches.log", "start original promp "
                                "HopperRandParamsEnv seed 1", "done original promp "
                                "HopperRandParamsEnv seed 1"),
              *(f(times(HOPPER_ORIGINAL)[0]) for f in (np.sum, np.mean, np.min, np.max)),
              2, launch_seconds("original_code_hopper/launches.log", "start original promp "
                                "HopperRandParamsEnv seed 2", "done original promp "
                                "HopperRandParamsEnv seed 2"),
              *(f(times(HOPPER_ORIGINAL)[1]) for f in (np.sum, np.mean, np.min, np.max))]),
    Claim(HOPPER, "**original code 216.1 and 211.7** (seeds 1, 2; 213.9 +- 3.1, 95% t interval "
          "[186.0, 241.8] from two seeds), ours 221.1 +- 4.5 (CI [209.8, 232.3])",
          lambda: [*HOPPER_ORIGINAL.at(T), *summary(HOPPER_ORIGINAL.at(T)),
                   *summary(HOPPER_OURS.at(T))]),
    Claim(HOPPER, "its episodes last 139.2 and 145.3 steps (ours 150.1-168.7)",
          lambda: [*episode_lengths(HOPPER_ORIGINAL), *span([episode_lengths(HOPPER_OURS)])]),
    Claim(HOPPER, "It starts at `Step_0` / `Step_1` 40.3 / 51.6 and 29.7 / 43.2 at iteration 0 "
          "(ours 14.6-29.7 / 19.0-39.8",
          lambda: [HOPPER_ORIGINAL.itr(0, STEP0)[0], HOPPER_ORIGINAL.itr(0)[0],
                   HOPPER_ORIGINAL.itr(0, STEP0)[1], HOPPER_ORIGINAL.itr(0)[1],
                   *span([HOPPER_OURS.itr(0, STEP0)]), *span([HOPPER_OURS.itr(0)])]),
    Claim(HOPPER, "reaches 0.032 and 0.128 and ends at 0.016 in both seeds; ours reaches 0.256, "
          "0.128 and 0.256 (seeds 1-3) and ends at 0.032, 0.002 and 0.0005",
          lambda: [*(s.max() for s in HOPPER_ORIGINAL.over("KLCoeffInner")),
                   last_equal([s[-1] for s in HOPPER_ORIGINAL.over("KLCoeffInner")]),
                   *(s.max() for s in HOPPER_OURS.over("KLCoeffInner")),
                   *(s[-1] for s in HOPPER_OURS.over("KLCoeffInner"))]),
    Claim(HOPPER, "216.1 and 211.7 at 1e7, both inside our interval [209.8, 232.3]; their mean "
          "213.9 is 7.2 below ours (221.1) and 8.9 above the paper's 205. Its 95% interval from "
          "two seeds, [186.0, 241.8], contains both the paper's 205 and our 221.1.",
          lambda: [*HOPPER_ORIGINAL.at(T), *interval(HOPPER_OURS.at(T)),
                   mean(HOPPER_ORIGINAL.at(T)),
                   mean(HOPPER_OURS.at(T)) - mean(HOPPER_ORIGINAL.at(T)), mean(HOPPER_OURS.at(T)),
                   mean(HOPPER_ORIGINAL.at(T)) - paper("HopperRandParamsEnv", "ProMP"),
                   *interval(HOPPER_ORIGINAL.at(T)), mean(HOPPER_OURS.at(T))]),
    Claim(HOPPER, "(it starts 19.2 higher) and seed 2's below it from iteration 4 to 28; at "
          "iteration 31 they are 6.2 below and 3.6 above it",
          lambda: [HOPPER_ORIGINAL.itr(0)[0] - mean(HOPPER_OURS.itr(0)),
                   mean(HOPPER_OURS.itr(31)) - HOPPER_ORIGINAL.itr(31)[0],
                   HOPPER_ORIGINAL.itr(31)[1] - mean(HOPPER_OURS.itr(31))]),
    Unchecked(HOPPER, "`rand_param_envs`' time step 0.004 s", SETTINGS),
    Unchecked(HOPPER, "rewards within 8.9e-16", ENV_CHECK),
    Unchecked(HOPPER, "(H 200, inner step 0.05, 3 outer Adam steps of 1e-3, clip 0.3, adaptive "
              "inner KL penalty from 1e-3 with target 0.01)", SETTINGS),
    Unchecked(HOPPER, "MuJoCo 1.31 through `rand_param_envs`' mujoco-py 0.5.7", VERSIONS),
    Table(HOPPER, "iteration (timesteps)", columns=header_timesteps(HOPPER_ORIGINAL), rows={
        "original code, mean of seeds 1-2": hopper_table_row(HOPPER_ORIGINAL, mean_only=True),
        "original code, seeds 1 / 2": hopper_table_row(HOPPER_ORIGINAL, mean_only=False),
        "our ProMP, mean of seeds 1-3": hopper_table_row(HOPPER_OURS, mean_only=True),
        "our ProMP, seeds 1 / 2 / 3": hopper_table_row(HOPPER_OURS, mean_only=False),
    }),
]

# ---------------------------------------------------------------------------- the walker
WALKER_CLAIMS = [
    Claim(WALKER, "ends at 170.1 +- 6.8 over seeds 1-3 at 1e7 timesteps (177.7, 168.1, 164.6;",
          lambda: [*summary(WALKER_OURS.at(T))[:2], *WALKER_OURS.at(T)]),
    Claim(WALKER, "(165.6 against 166)", lambda: [mean(WALKER_TRPO.at(T))]),
    Claim(WALKER, "(to 1.02e7 timesteps, as our grid)", lambda: [timesteps_at(WALKER_ORIGINAL, 31)]),
    Claim(WALKER, "Wall time: 3,302 s from launch to exit (`launches.log`; 3,239 s of it logged as "
          "training time)", integers=True, values=lambda: [
              launch_seconds("original_code_walker/launches.log", "start original", "done original"),
              float(np.sum(times(WALKER_ORIGINAL)[0]))]),
    Claim(WALKER, "**original code 168.9**, ours 170.1 +- 6.8 (CI [153.3, 186.9])",
          lambda: [*WALKER_ORIGINAL.at(T), *summary(WALKER_OURS.at(T))]),
    Claim(WALKER, "its episodes last 112.7 steps (ours 113.1-122.8)",
          lambda: [*episode_lengths(WALKER_ORIGINAL), *span([episode_lengths(WALKER_OURS)])]),
    Claim(WALKER, "up to 0.256 at iteration 7, then halves back to 0.001 by iteration 23 and stays "
          "there; ours (seeds 1-3) peak at 0.128, 0.256 and 0.128 and end at 7.8e-6, 0.00025 and "
          "0.00025", integers=True, values=lambda: [
              WALKER_ORIGINAL.over("KLCoeffInner")[0].max(),
              *argmax_itr(WALKER_ORIGINAL, "KLCoeffInner"), 0.001,
              *walker_kl_settle(WALKER_ORIGINAL),
              1, 3, *(s.max() for s in WALKER_OURS.over("KLCoeffInner")),
              *(s[-1] for s in WALKER_OURS.over("KLCoeffInner"))]),
    Claim(WALKER, "168.9 at 1e7, inside our interval [153.3, 186.9] and 1.2 below our mean (170.1), "
          "31.1 below the paper's 200.",
          lambda: [*WALKER_ORIGINAL.at(T), *interval(WALKER_OURS.at(T)),
                   mean(WALKER_OURS.at(T)) - WALKER_ORIGINAL.at(T)[0], mean(WALKER_OURS.at(T)),
                   paper("Walker2DRandParamsEnv", "ProMP") - WALKER_ORIGINAL.at(T)[0]]),
    Claim(WALKER, "(49.0 against 84.1 at iteration 4)",
          lambda: [WALKER_ORIGINAL.itr(4)[0], mean(WALKER_OURS.itr(4))]),
    Claim(WALKER, "(our seeds range from 67.7 to 95.1 there)", lambda: span([WALKER_OURS.itr(4)])),
    Unchecked(WALKER, "rewards within 1.8e-15", ENV_CHECK),
    Unchecked(WALKER, "(H 200, inner step 0.05, 3 outer Adam steps of 1e-3, clip 0.3, adaptive "
              "inner KL penalty from 1e-3 with target 0.01;", SETTINGS),
    Unchecked(WALKER, "while the inner KL is above 0.015", "1.5 x the target 0.01 (" + SETTINGS + ")"),
    Unchecked(WALKER, "MuJoCo 1.31 through mujoco-py 0.5.7", VERSIONS),
    Table(WALKER, "iteration (timesteps)", columns=header_timesteps(WALKER_ORIGINAL), rows={
        "original code, seed 1": hopper_table_row(WALKER_ORIGINAL, mean_only=False),
        "our ProMP, mean of seeds 1-3": hopper_table_row(WALKER_OURS, mean_only=True),
        "our ProMP, seeds 1 / 2 / 3": hopper_table_row(WALKER_OURS, mean_only=False),
    }),
]

# ---------------------------------------------------------------------------- the humanoid
def original_kl() -> np.ndarray:
    """The original humanoid run's ``MeanKL`` per iteration."""
    return HUMANOID_ORIGINAL.over("MeanKL")[0]


HUMANOID_CLAIMS = [
    Claim(HUMANOID, "ends at 250.4 +- 15.9 over seeds 1-3 at 1e7 timesteps (249.2, 266.9, 235.1; "
          "CI [210.8, 289.96];",
          lambda: [*summary(HUMANOID_OURS.at(T))[:2], *HUMANOID_OURS.at(T),
                   *interval(HUMANOID_OURS.at(T))]),
    Claim(HUMANOID, "our ProMP on the same env learns (471.1 +- 23.6)",
          lambda: summary(HUMANOID_PROMP.at(T))[:2]),
    Claim(HUMANOID, "(`../trpo_step_compare/`: cosine 0.9987 with the float32 inner products",
          lambda: [step_compare(*CG_COSINE)]),
    Claim(HUMANOID, "**32 iterations** (to 1.02e7 timesteps", integers=True,
          values=lambda: [len(HUMANOID_ORIGINAL.over("Itr")[0]), timesteps_at(HUMANOID_ORIGINAL, 31)]),
    Claim(HUMANOID, "(2.56e6 timesteps)", lambda: [timesteps_at(HUMANOID_ORIGINAL_ITR8, 7)]),
    Claim(HUMANOID, "32-iteration run: 4,798 s from launch to exit (`launches.log`; 4,755 s logged as "
          "`ItrTime`, 148.6 s per iteration, 132.9-183.2)", integers=True, values=lambda: [
              32, launch_seconds("original_code_humanoid/launches.log", "seed 1, 32 iterations, "
                                 "parallel", "seed 1, 32 iterations rc=0"),
              *(f(times(HUMANOID_ORIGINAL)[0]) for f in (np.sum, np.mean, np.min, np.max))]),
    Claim(HUMANOID, "The 8-iteration run: 1,913 s, 211-250 s per iteration.", integers=True,
          values=lambda: [8, launch_seconds("original_code_humanoid/launches.log", "8 itr, parallel",
                                            "8 itr rc=0"),
                          *span(times(HUMANOID_ORIGINAL_ITR8))]),
    Claim(HUMANOID, "(Our MAML-TRPO seeds took 89.4-151.3 s per iteration",
          lambda: span([[np.mean(t) for t in times(HUMANOID_OURS)]])),
    Claim(HUMANOID, "**original code 260.2**; ours 250.4 +- 15.9 (seeds 249.2, 266.9, 235.1; CI "
          "[210.8, 289.96])",
          lambda: [*HUMANOID_ORIGINAL.at(T), *summary(HUMANOID_OURS.at(T))[:2],
                   *HUMANOID_OURS.at(T), *interval(HUMANOID_OURS.at(T))]),
    Claim(HUMANOID, "stays at 162.6-166.8 over all 32 iterations while its post-update return rises "
          "from 215.4 to 257.5 (highest 262.4)",
          lambda: [*span(HUMANOID_ORIGINAL.over(STEP0)), HUMANOID_ORIGINAL.over(STEP1)[0][0],
                   HUMANOID_ORIGINAL.over(STEP1)[0][-1], HUMANOID_ORIGINAL.over(STEP1)[0].max()]),
    Claim(HUMANOID, "Its episodes last 38.3 steps at iteration 0 and 41.0 at the iteration nearest "
          "1e7 (iteration 30; ours 36-40 and 38-41", integers=True, values=lambda: [
              *start_lengths(HUMANOID_ORIGINAL), 0, *episode_lengths(HUMANOID_ORIGINAL), T,
              benchmark_module("cell_diagnostics").seed_row(HUMANOID_ORIGINAL.seeds[0], T)[
                  "nearest_itr"],
              *span([start_lengths(HUMANOID_OURS)]), *span([episode_lengths(HUMANOID_OURS)])]),
    Claim(HUMANOID, "ProMP's 58-70", integers=True,
          values=lambda: span([episode_lengths(HUMANOID_PROMP)])),
    Claim(HUMANOID, "reach a mean KL of 0.0068-0.0100 (ours 0.0056-0.0086, seed 1), except the last "
          "iteration's, 1.6e-9", lambda: [
              *span([original_kl()[:-1]]), *span(HUMANOID_OURS_1.over("MeanKL")),
              original_kl()[-1]]),
    Claim(HUMANOID, "moves from 0.99969 to 0.99986 over 32 iterations (ours, seed 1: 0.99974 at the "
          "end)", lambda: [HUMANOID_ORIGINAL.over("Step_1-AveragePolicyStd")[0][0],
                           HUMANOID_ORIGINAL.over("Step_1-AveragePolicyStd")[0][-1],
                           HUMANOID_OURS_1.over("Step_1-AveragePolicyStd")[0][-1]]),
    Claim(HUMANOID, "starts at 164.6 / 219.1 (Step_0 / Step_1) where the 32-iteration run starts at "
          "165.1 / 215.4",
          lambda: [HUMANOID_ORIGINAL_ITR8.itr(0, STEP0)[0], HUMANOID_ORIGINAL_ITR8.itr(0)[0],
                   HUMANOID_ORIGINAL.itr(0, STEP0)[0], HUMANOID_ORIGINAL.itr(0)[0]]),
    Claim(HUMANOID, "they differ by at most 0.6 before the update (163.9-166.8 against 164.4-166.4) "
          "and 6.0 after it (215.4-230.9 against 219.0-231.0)", lambda: [
              largest_difference(HUMANOID_ORIGINAL, HUMANOID_ORIGINAL_ITR8, STEP0, 8),
              *span(HUMANOID_ORIGINAL.over(STEP0, last=7)),
              *span(HUMANOID_ORIGINAL_ITR8.over(STEP0)),
              largest_difference(HUMANOID_ORIGINAL, HUMANOID_ORIGINAL_ITR8, STEP1, 8),
              *span(HUMANOID_ORIGINAL.over(STEP1, last=7)),
              *span(HUMANOID_ORIGINAL_ITR8.over(STEP1))]),
    Claim(HUMANOID, "stays flat for 32 iterations (162.6-166.8), its episodes stay about 40 steps "
          "long, and it ends at 260.2 at 1e7, between our three seeds (235.1-266.9), inside our CI "
          "[210.8, 289.96] and 29.8 below the paper's 290", lambda: [
              *span(HUMANOID_ORIGINAL.over(STEP0)), *HUMANOID_ORIGINAL.at(T),
              *span([HUMANOID_OURS.at(T)]), *interval(HUMANOID_OURS.at(T)),
              paper("HumanoidRandDirec2DEnv", "MAML-TRPO") - HUMANOID_ORIGINAL.at(T)[0]]),
    Claim(HUMANOID, "cosine 0.9987 to the original's with exact products",
          lambda: [step_compare(*CG_COSINE)]),
    Unchecked(HUMANOID, "log-likelihood inner step of 0.1, KL step size 0.01", SETTINGS),
    Unchecked(HUMANOID, "MuJoCo 1.50 through mujoco-py 1.50", VERSIONS),
    Table(HUMANOID, "iteration (timesteps)", columns=header_timesteps(HUMANOID_ORIGINAL), rows={
        "original TRPO-MAML, Step_0": lambda c: HUMANOID_ORIGINAL.itr(itr_of(c), STEP0),
        "original TRPO-MAML, Step_1": lambda c: HUMANOID_ORIGINAL.itr(itr_of(c)),
        "our MAML-TRPO, Step_0, seeds 1 / 2 / 3": lambda c: HUMANOID_OURS.itr(itr_of(c), STEP0),
        "our MAML-TRPO, Step_1, seeds 1 / 2 / 3": lambda c: HUMANOID_OURS.itr(itr_of(c)),
    }),
]

# ---------------------------------------------------------------------------- the HVP run
HVP_CLAIMS = [
    Claim(HVP_PAGE, "ends at 249.2 at 1e7 timesteps", lambda: HUMANOID_OURS_1.at(T)),
    Claim(HVP_PAGE, "**245.7** with the original's product, 249.2 with ours",
          lambda: [*HVP.at(T), *HUMANOID_OURS_1.at(T)]),
    Claim(HVP_PAGE, "0.0081 (0 to 0.0100) against 0.0075 (0.0056 to 0.0086); 4.8 backtracks per "
          "step on average", lambda: [
              np.mean(HVP.over("MeanKL")[0]), span(HVP.over("MeanKL"))[1],
              np.mean(HUMANOID_OURS_1.over("MeanKL")[0]), *span(HUMANOID_OURS_1.over("MeanKL")),
              np.mean(HVP.over("NumBacktracks")[0])]),
    Claim(HVP_PAGE, "Outer step 42.2 s against 22.0 s on average; wall time 5,039 s against "
          "4,134 s", integers=True, values=lambda: [
              np.mean(HVP.over("Time-OuterStep")[0]),
              np.mean(HUMANOID_OURS_1.over("Time-OuterStep")[0]),
              np.sum(times(HVP)[0]), np.sum(times(HUMANOID_OURS_1)[0])]),
    Claim(HVP_PAGE, "its pre-update return stays as flat (156.3 to 160.1) and its post-update "
          "return is within 3.9 of ours at every iteration (0.0 to 3.9; both `progress.csv`), "
          "ending at 245.7 against 249.2 at 1e7", lambda: [
              *span(HVP.over(STEP0)),
              largest_difference(HVP, HUMANOID_OURS_1, STEP1, 32),
              float(np.abs(HVP.over(STEP1)[0] - HUMANOID_OURS_1.over(STEP1)[0]).min()),
              largest_difference(HVP, HUMANOID_OURS_1, STEP1, 32),
              *HVP.at(T), *HUMANOID_OURS_1.at(T)]),
    Claim(HVP_PAGE, "one seed: 260.2 at 1e7", lambda: HUMANOID_ORIGINAL.at(T)),
    Unchecked(HVP_PAGE, "the chosen direction 2.4-4.2 times (measured there, on the original's own "
              "graph)", "benchmarks/original_code/README.md (trpo_hvp_diagnostic.py)"),
    Table(HVP_PAGE, "iteration | 0 | 4", rows={
        "Gauss-Newton (default), Step_0": lambda c: HUMANOID_OURS_1.itr(int(c), STEP0),
        "original finite difference, Step_0": lambda c: HVP.itr(int(c), STEP0),
        "Gauss-Newton (default), Step_1": lambda c: HUMANOID_OURS_1.itr(int(c)),
        "original finite difference, Step_1": lambda c: HVP.itr(int(c)),
    }),
]

# ---------------------------------------------------------------------------- HalfCheetah take-off
CHEETAH_LOG = "original_code_halfcheetah/launches.log"


def exact_test() -> list[float]:
    """``[U, one-sided p, two-sided p]`` of the original's take-offs against ours."""
    return list(benchmark_module("takeoff").exact_rank_test(
        takeoffs("original_code_halfcheetah"), takeoffs("reproduction")))


def takeoff_row(grid: str):
    """A row of the take-off table: seed count, take-offs, median."""
    columns = {"seeds": lambda: [len(takeoffs(grid))], "take-off iterations": lambda: takeoffs(grid),
               "median": lambda: [float(np.median(takeoffs(grid)))]}
    return lambda column: columns[column]()


CHEETAH_CLAIMS = [
    Claim(CHEETAH, "1115 s, 1092 s and 1060 s; seed 4 (a later session, from a checkout of 2f41fa7, "
          "alone on the machine): 695 s; seed 5 (the same checkout, beside a CI run): 968 s",
          integers=True, values=lambda: [
              launch_seconds(CHEETAH_LOG, "start seed 1", "done seed 1"),
              launch_seconds(CHEETAH_LOG, "start seed 2", "done seed 2"),
              launch_seconds(CHEETAH_LOG, "start seed 3", "done seed 3"), 4,
              launch_seconds(CHEETAH_LOG, "start original HalfCheetah seed 4",
                             "done original HalfCheetah seed 4"), 5,
              launch_seconds(CHEETAH_LOG, "start original HalfCheetah seed 5",
                             "done original HalfCheetah seed 5")]),
    Claim(CHEETAH, "original code (seeds 1-5) -0.1, -0.1, 0.4, 5.1; ours -0.1, 0.0, 1.4, 8.3",
          lambda: [*drawn_mean(CHEETAH_ORIGINAL, None), *drawn_mean(CHEETAH_OURS, None)]),
    Claim(CHEETAH, "At the logs' `Itr` 12 (`n_timesteps` 2.08e6) the original's seeds 1-5 read 4.6, "
          "13.6, 12.0, 11.0, 0.0 (mean 8.2; ours 12.0 over ten seeds, from -0.2 to 41.8); at `Itr` "
          "29 (4.8e6), 102.4, 120.9, 133.5, 104.2, 48.0 (mean 101.8; ours 89.2, from 30.8 to "
          "138.4)", lambda: [
              value for itr in (12, 29) for value in (
                  timesteps_at(CHEETAH_ORIGINAL, itr), *CHEETAH_ORIGINAL.itr(itr),
                  mean(CHEETAH_ORIGINAL.itr(itr)), mean(CHEETAH_OURS.itr(itr)),
                  *span([CHEETAH_OURS.itr(itr)]))]),
    Claim(CHEETAH, "reaches 35 before iteration 16 (16 to 28; mean 19.2, 95% CI [13.0, 25.4])",
          integers=True, values=lambda: [
              35, min(takeoffs("original_code_halfcheetah")),
              *span([takeoffs("original_code_halfcheetah")]),
              mean(takeoffs("original_code_halfcheetah")), 95,
              *interval(takeoffs("original_code_halfcheetah"))]),
    Claim(CHEETAH, "with bins of 1.5e6 timesteps reads 0.6, 7.5, 14.4 and 28.7",
          lambda: [1.5e6, *drawn_mean(CHEETAH_OURS, 1.5e6)]),
    Claim(CHEETAH, "gives U = 30.5 of 50 pairs in which the original's seed takes off earlier, "
          "one-sided p = 0.26, two-sided p = 0.53", exact_test),
    Unchecked(CHEETAH, "(40 tasks x 20 rollouts x H 100, inner step 0.1, 5 outer Adam steps of 1e-3, "
              "clip 0.3, inner KL penalty 5e-4 fixed)", SETTINGS),
    Unchecked(CHEETAH, "rewards within 2.2e-16", ENV_CHECK),
    Unchecked(CHEETAH, "(MuJoCo 4 here, 1.50 in the paper; `../engine_response.md`: 2.3.3 and 4.0 "
              "agree", VERSIONS),
    Table(CHEETAH, "seeds | take-off iterations | median", integers=True, rows={
        # the paper's own statements: a mean over >= 3 seeds, 35 reached at about iteration 12
        "paper's ProMP mean curve (figure 2)": lambda c: {"seeds": [3], "take-off iterations": [
            benchmark_module("takeoff").PAPER_TAKEOFF["promp"]], "median": []}[c],
        "original code, our physics (here)": takeoff_row("original_code_halfcheetah"),
        "our ProMP (`../reproduction/takeoff.md`)": takeoff_row("reproduction"),
    }),
]

# ---------------------------------------------------------------------------- gradient variance
def rstd(algo: str) -> dict[str, np.ndarray]:
    """The measurements (``gradient_variance.csv``) of the study's ``algo`` run, seed 22."""
    from meta_policy_search.experiment.curves import read_progress

    return read_progress(os.path.join(RESULTS, GRADIENT_VARIANCE, algo, "HalfCheetahRandDirecEnv",
                                      "seed_22", "gradient_variance.csv"))


def rstd_cells(algo: str, timesteps: float):
    """A row of the RStd table: between the measurements around ``timesteps``, the nearest one."""
    def cell(column: str) -> list[float]:
        measured = rstd(algo)
        x, y = measured["n_timesteps"], measured["Meta-GradientRStd"]
        nearest = int(np.argmin(np.abs(x - timesteps)))
        return {"ours, interpolated (mean over seeds)": [float(np.interp(timesteps, x, y))],
                "nearest measurement: timesteps, value": [x[nearest], y[nearest]],
                "seeds": [], "paper": []}[column]
    return cell


def study_return(algo: str):
    """A row of the return table: the study run's post-update return at 1e7."""
    runs = Runs(f"{GRADIENT_VARIANCE}/{algo}/HalfCheetahRandDirecEnv/seed_22")
    return lambda column: runs.at(T) if column == "ours (mean over seeds)" else []


VARIANCE_CLAIMS = [
    Table(VARIANCE, "ours, interpolated (mean over seeds)", key_columns=3, rows={
        f"{legend} | HalfCheetahRandDirecEnv | {label}": rstd_cells(algo, timesteps)
        for legend, algo in (("DiCE-VPG", "dice_maml"), ("LVC-VPG", "lvc_vpg"))
        for label, timesteps in (("2e+06", 2e6), ("1e+07", 1e7))}),
    Table(VARIANCE, "ours (mean over seeds)", key_columns=3, rows={
        "DiCE-VPG | HalfCheetahRandDirecEnv | 1e+07": study_return("dice_maml"),
        "LVC-VPG | HalfCheetahRandDirecEnv | 1e+07": study_return("lvc_vpg")}),
]

# ---------------------------------------------------------------------------- to 1e8
LONG_PAGE = "benchmarks/results/reproduction_1e8/README.md"
LONG_PROMP = Runs("reproduction_1e8/promp/HalfCheetahRandDirecEnv/seed_1")
LONG_TRPO = Runs("reproduction_1e8/trpo_maml/HalfCheetahRandDirecEnv/seed_1")
LONG_PROMP_2 = Runs("reproduction_1e8/promp/HalfCheetahRandDirecEnv/seed_2")
LONG_PROMP_3 = Runs("reproduction_1e8/promp/HalfCheetahRandDirecEnv/seed_3")
LONG_TRPO_2 = Runs("reproduction_1e8/trpo_maml/HalfCheetahRandDirecEnv/seed_2")
LONG_PROMP_ALL = Runs("reproduction_1e8/promp/HalfCheetahRandDirecEnv/seed_*")
LONG_TRPO_ALL = Runs("reproduction_1e8/trpo_maml/HalfCheetahRandDirecEnv/seed_*")
COLLAPSE = 337
"""The iteration of ProMP seed 1's fall, the first after the KLInner spike."""

LONG_CLAIMS = [
    Claim(LONG_PAGE, "ProMP seed 1 reads 216.2 at 2e7, 247.3 at 5e7 and 112.9 at 1e8",
          lambda: [*LONG_PROMP.at(2e7), *LONG_PROMP.at(5e7), *LONG_PROMP.at(1e8)]),
    Claim(LONG_PAGE, "ProMP seed 2 reads 214.4 at 2e7, 248.1 at 5e7 and 301.7 at 1e8",
          lambda: [*LONG_PROMP_2.at(2e7), *LONG_PROMP_2.at(5e7), *LONG_PROMP_2.at(1e8)]),
    Claim(LONG_PAGE, "from iteration 300 on its post-update return is at least 210.5, and its "
          "`KLInner` is at most 0.127 in every iteration (at iteration 258)",
          lambda: [300, min(LONG_PROMP_2.over(first=300)[0]), max(LONG_PROMP_2.over("KLInner")[0]),
                   *argmax_itr(LONG_PROMP_2, "KLInner")], integers=True),
    Claim(LONG_PAGE, "MAML-TRPO seed 2 reads 157.0 at 2e7, 186.3 at 5e7 and 204.8 at 1e8",
          lambda: [*LONG_TRPO_2.at(2e7), *LONG_TRPO_2.at(5e7), *LONG_TRPO_2.at(1e8)]),
    Claim(LONG_PAGE, "ProMP seed 3 reads 221.7 at 2e7, 260.7 at 5e7 and 294.7 at 1e8; from "
          "iteration 300 on its post-update return is at least 240.8, and its `KLInner` is at "
          "most 0.105",
          lambda: [*LONG_PROMP_3.at(2e7), *LONG_PROMP_3.at(5e7), *LONG_PROMP_3.at(1e8),
                   min(LONG_PROMP_3.over(first=300)[0]), max(LONG_PROMP_3.over("KLInner")[0])]),
    Claim(LONG_PAGE, "(112.9, 301.7 and 294.7 at 1e8) and MAML-TRPO's two (235.3 and 204.8) give "
          "95% intervals of the means, [-29.4, 502.3] and [26.6, 413.5]",
          lambda: [*LONG_PROMP_ALL.at(1e8), *LONG_TRPO_ALL.at(1e8),
                   *interval(LONG_PROMP_ALL.at(1e8)), *interval(LONG_TRPO_ALL.at(1e8))]),
    Claim(LONG_PAGE, "MAML-TRPO seed 1 reads 185.3 at 2e7, 211.3 at 5e7 and 235.3 at 1e8",
          lambda: [*LONG_TRPO.at(2e7), *LONG_TRPO.at(5e7), *LONG_TRPO.at(1e8)]),
    Claim(LONG_PAGE, "falls from 235.4 at iteration 336 to 1.0 at iteration 337",
          lambda: [*LONG_PROMP.itr(COLLAPSE - 1), *LONG_PROMP.itr(COLLAPSE)]),
    Claim(LONG_PAGE, "its highest value afterwards is 125.7, its mean over the last 25 iterations "
          "86.4 (before the fall it peaked at 252.8)",
          lambda: [max(LONG_PROMP.over(first=COLLAPSE)[0]), mean(LONG_PROMP.over(first=600)[0]),
                   max(LONG_PROMP.over(last=COLLAPSE - 1)[0])]),
    Claim(LONG_PAGE, "(`KLInner`) is 12.37, where it was at most 0.065 in every earlier iteration; "
          "from iteration 345 on it is again at most 0.016",
          lambda: [*LONG_PROMP.itr(COLLAPSE - 1, "KLInner"),
                   max(LONG_PROMP.over("KLInner", last=COLLAPSE - 2)[0]),
                   max(LONG_PROMP.over("KLInner", first=345)[0])]),
]

# ---------------------------------------------------------------------------- ML10 cost
COST_PAGE = "benchmarks/results/metaworld_ml10/cost.md"
COST_FILES = ("cost_mb10_r2.json", "cost_mb10_r4.json")
"""The two reduced-iteration measurements, in the order of the page's columns."""


def cost_runs(files: tuple[str, ...] = COST_FILES) -> list[dict]:
    """The measurements of ``files`` (in ``benchmarks/results/metaworld_ml10``)."""
    runs = []
    for name in files:
        with open(os.path.join(RESULTS, "metaworld_ml10", name)) as f:
            runs.append(json.load(f))
    return runs


def cost_steps(run: dict) -> int:
    """Env steps (and samples) of one reduced iteration."""
    full = benchmark_module("metaworld_ml10_cost").FULL
    args = run["args"]
    return (args["meta_batch_size"] * args["rollouts_per_meta_task"]
            * full["max_path_length"] * full["phases"])


def cost_mean(run: dict, label: str) -> float:
    """Mean CPU seconds of a part over the iterations after the first (``whole``: the
    iteration less its probes)."""
    measured = run["iterations"][1:]
    if label == "whole":
        return mean([it["iteration_cpu_s"] - it.get("probes_total_cpu_s", 0.0) for it in measured])
    return mean([it["parts"].get(label, {"cpu_s": 0.0})["cpu_s"] for it in measured])


def cost_scaled(run: dict, label: str) -> float:
    """A part's CPU seconds scaled linearly to a full iteration."""
    full_steps = benchmark_module("metaworld_ml10_cost").FULL_STEPS
    return cost_mean(run, label) * full_steps / cost_steps(run)


def low_high(values: list[float]) -> list[float]:
    """``[low, high]``, or one value when both round to the same integer."""
    low, high = min(values), max(values)
    return [low] if round(low) == round(high) else [low, high]


def cost_row(label: str):
    """A row of the per-phase table: us per step of each file, then the scaled range."""
    def cell(column: str) -> list[float]:
        runs = cost_runs()
        if column.endswith("us / step"):
            run = runs[0] if "2 eps" in column else runs[1]
            return [1e6 * cost_mean(run, label) / cost_steps(run)]
        if label == "checkpoint":  # written as a bound: it does not scale with the steps
            largest = max(cost_mean(run, label) for run in runs)
            return [0.1] if largest < 0.1 else [largest]
        return low_high([cost_scaled(run, label) for run in runs])
    return cell


def floor_rows() -> dict:
    """The rows of the floor table, one per ML10 training class and the mean."""
    columns = {"`env.step` us": ("step_s", 1e6), "`mj_step` us": ("mj_step_s", 1e6),
               "reset ms": ("reset_s", 1e3), "build s": ("build_s", 1.0),
               "build MB": ("build_rss_mb", 1.0)}

    def floor() -> dict:
        return cost_runs()[0]["floor"]

    def row(name: str | None):
        def cell(column: str) -> list[float]:
            key, scale = columns[column]
            rows = floor().values() if name is None else [floor()[name]]
            return [scale * mean([r[key] for r in rows])]
        return cell
    classes = ("reach", "push", "pick-place", "door-open", "drawer-close", "button-press-topdown",
               "peg-insert-side", "window-open", "sweep", "basketball")
    return {**{c: row(f"{c}-v3") for c in classes}, "mean": row(None)}


def floor_mean(key: str) -> float:
    """The floor's mean over the classes."""
    return mean([r[key] for r in cost_runs()[0]["floor"].values()])


def weighted_share(group: str) -> float:
    """A cProfile group's share of the floor's step time, weighted by each class's step time."""
    rows = cost_runs()[0]["floor"].values()
    return (sum(r["profile_shares"][group] * r["step_s"] for r in rows)
            / sum(r["step_s"] for r in rows))


def wall_estimate(runs: list[dict] | None = None) -> list[float]:
    """Seconds per iteration on 2 quiet cores, ``[low, high]`` over ``runs`` (default: the
    TRPO-MAML files): sampling halved; the outer step halved (low) or not (high); the rest on
    one core."""
    runs = cost_runs() if runs is None else runs
    sampling = [cost_scaled(run, "sampling") for run in runs]
    outer = [cost_scaled(run, "outer_step") for run in runs]
    rest = [cost_scaled(run, "inner_step") + cost_scaled(run, "sample_processing")
            + cost_mean(run, "checkpoint") for run in runs]
    return [min(sampling) / 2 + min(outer) / 2 + min(rest),
            max(sampling) / 2 + max(outer) + max(rest)]


def probe(run: dict, key: str) -> list[float]:
    """``[low, high]`` of a probe over the measured iterations."""
    values = [it[key] for it in run["iterations"][1:]]
    return [min(values), max(values)]


def _cost_claims() -> list[Claim | Table | Unchecked]:
    runs = cost_runs

    def promp() -> list[dict]:
        return cost_runs(("cost_promp_mb10_r2.json",))

    def whole() -> list[float]:
        return [cost_scaled(run, "whole") for run in runs()]

    def walls() -> list[float]:
        """This session's wall minutes per iteration, scaled to a full one."""
        full_steps = benchmark_module("metaworld_ml10_cost").FULL_STEPS
        return [it["iteration_wall_s"] * full_steps / cost_steps(run) / 60
                for run in runs() for it in run["iterations"][1:]]

    rows = {"sampling (all)": "sampling", "- of which `env.step`": "sampling/env.step",
            "- of which the policy's forward pass": "sampling/policy.sample",
            "- of which `env.reset`": "sampling/env.reset",
            "- of which `set_task` (after iteration 0)": "sampling/env.set_task",
            "sample processing (baseline fit, GAE)": "sample_processing",
            "inner step": "inner_step",
            "outer step (TRPO: gradient, 10 CG products, line search)": "outer_step",
            "checkpoint": "checkpoint", "**whole iteration**": "whole"}
    return [
        Unchecked(COST_PAGE, "TRPO with 10 CG iterations, KL 0.01, 100 iterations",
                  "the ML10 entry of meta_policy_search/data/paper_configs.json"),
        Claim(COST_PAGE, "(load average 4.6-6.5 during the runs)", lambda: [
            min(min(r["loadavg_start"][0], r["loadavg_end"][0]) for r in runs() + promp()),
            max(max(r["loadavg_start"][0], r["loadavg_end"][0]) for r in runs() + promp())]),
        Table(COST_PAGE, "class | `env.step` us", rows=floor_rows(), integers=True),
        Claim(COST_PAGE, "`set_task` costs 15-22 us", lambda: [
            1e6 * min(r["set_task_s"] for r in runs()[0]["floor"].values()),
            1e6 * max(r["set_task_s"] for r in runs()[0]["floor"].values())], integers=True),
        Claim(COST_PAGE, "(96 of 491 us on average)",
              lambda: [1e6 * floor_mean("mj_step_s"), 1e6 * floor_mean("step_s")], integers=True),
        Claim(COST_PAGE, "`mj_step` 15 %, `touching_object` (a Python loop over the contacts, in "
              "push, pick-place and sweep) 11 %, scipy's `Rotation.from_matrix`/`as_quat` (object "
              "quaternions in the observation) 17 %",
              lambda: [100 * weighted_share(g)
                       for g in ("mj_step", "touching_object", "scipy_rotation")], integers=True),
        Table(COST_PAGE, "part | mb 10 x 2 eps: us / step",
              rows={row: cost_row(label) for row, label in rows.items()}, integers=True),
        Claim(COST_PAGE, "`env.step` inside the sampler is 87 % of the sampling time; the loop "
              "around it (policy, resets, bookkeeping) is the other 13 %", lambda: [
                  share := 100 * mean([cost_mean(r, "sampling/env.step") / cost_mean(r, "sampling")
                                       for r in runs()]), 100 - share], integers=True),
        Claim(COST_PAGE, "builds one Meta-World env once (0.16 s, ~19 MB;",
              lambda: [floor_mean("build_s"), floor_mean("build_rss_mb")], integers=True),
        Claim(COST_PAGE, "(692 and 586 us;", lambda: [
            1e6 * cost_mean(r, "outer_step") / cost_steps(r) for r in runs()], integers=True),
        Claim(COST_PAGE, "one loss evaluation (what a line-search step costs) 0.27-0.30 s and one "
              "Hessian-vector product 1.35-1.36 s at 20,000 samples (0.51-0.52 s and 2.3-2.5 s at "
              "40,000)", lambda: [*probe(runs()[0], "probe/loss_cpu_s"),
                                  *probe(runs()[0], "probe/hvp_cpu_s"),
                                  *probe(runs()[1], "probe/loss_cpu_s"),
                                  *probe(runs()[1], "probe/hvp_cpu_s")]),
        Claim(COST_PAGE, "at the probe's cost would take 14.9 s, more than the whole step (13.8 s;",
              lambda: [11 * mean(probe(runs()[0], "probe/hvp_cpu_s")),
                       cost_mean(runs()[0], "outer_step")]),
        Claim(COST_PAGE, "the outer step 27.9 s instead of 13.8 (tracing and XLA compilation), the "
              "inner step 1.6 s instead of 0.3, and the envs' first builds (3.5 s for 20 copies;",
              lambda: [runs()[0]["iterations"][0]["parts"]["outer_step"]["cpu_s"],
                       cost_mean(runs()[0], "outer_step"),
                       runs()[0]["iterations"][0]["parts"]["inner_step"]["cpu_s"],
                       cost_mean(runs()[0], "inner_step"),
                       runs()[0]["iterations"][0]["parts"]["sampling/env.set_task"]["cpu_s"]]),
        Claim(COST_PAGE, "the training process peaked at 2115 MB (20,000 samples per iteration) "
              "and 2579 MB (40,000), 23 KB per sample more; linear to 200,000 samples that is "
              "about 6.3 GB", lambda: [
                  runs()[0]["peak_rss_mb"], 20000, runs()[1]["peak_rss_mb"], 40000,
                  slope := 1000 * (runs()[1]["peak_rss_mb"] - runs()[0]["peak_rss_mb"])
                  / (cost_steps(runs()[1]) - cost_steps(runs()[0])), 200000,
                  (runs()[0]["peak_rss_mb"] + slope / 1000 * (200000 - cost_steps(runs()[0])))
                  / 1000], integers=True),
        Claim(COST_PAGE, "The sampler's 40 env copies add about 0.8 GB (19 MB each)",
              lambda: [40, 40 * floor_mean("build_rss_mb") / 1000, floor_mean("build_rss_mb")],
              integers=True),
        Claim(COST_PAGE, "85-90 s at best", lambda: sorted(
            cost_scaled(r, "sampling") / 2 for r in runs()), integers=True),
        Claim(COST_PAGE, "between 59-69 s (perfect two-thread scaling) and 117-138 s (none)",
              lambda: [*sorted(cost_scaled(r, "outer_step") / 2 for r in runs()),
                       *sorted(cost_scaled(r, "outer_step") for r in runs())], integers=True),
        Claim(COST_PAGE, "(inner step, processing, checkpoint): 6-8 s", lambda: sorted(
            cost_scaled(r, "inner_step") + cost_scaled(r, "sample_processing")
            + cost_mean(r, "checkpoint") for r in runs()), integers=True),
        Claim(COST_PAGE, "That is **149-236 s (2.5-3.9 min) per iteration, 4.1-6.6 h for the 100 "
              "iterations**", lambda: [*wall_estimate(), *(s / 60 for s in wall_estimate()),
                                      *(100 * s / 3600 for s in wall_estimate()), 100],
              integers=True),
        Claim(COST_PAGE, "(iteration 0's graphs, about 15 s more CPU here; the env builds, "
              "40 x 0.16 s;", lambda: [
                  0, runs()[0]["iterations"][0]["parts"]["outer_step"]["cpu_s"]
                  - cost_mean(runs()[0], "outer_step")
                  + runs()[0]["iterations"][0]["parts"]["inner_step"]["cpu_s"]
                  - cost_mean(runs()[0], "inner_step"), 40, floor_mean("build_s")],
              integers=True),
        Claim(COST_PAGE, "takes roughly the whole CPU time: 293-327 s per iteration, 8-9 h",
              lambda: [*sorted(whole()), *(100 * s / 3600 for s in sorted(whole()))],
              integers=True),
        Claim(COST_PAGE, "i.e. 8.5-12 min per full iteration", lambda: [min(walls()), max(walls())],
              integers=True),
        Claim(COST_PAGE, "at about 0.5-0.8 ms of mostly Python each", lambda: [
            1e3 * floor_mean("step_s"),
            max(1e3 * cost_mean(r, "sampling/env.step") / cost_steps(r) for r in runs())]),
        Claim(COST_PAGE, "sampling costs the same (888 us per step, 178 CPU s scaled), the outer "
              "step 200 us per sample (40 CPU s scaled, against TRPO's 117-138), the whole "
              "iteration 225 CPU s scaled", lambda: [
                  1e6 * cost_mean(promp()[0], "sampling") / cost_steps(promp()[0]),
                  cost_scaled(promp()[0], "sampling"),
                  1e6 * cost_mean(promp()[0], "outer_step") / cost_steps(promp()[0]),
                  cost_scaled(promp()[0], "outer_step"),
                  *sorted(cost_scaled(r, "outer_step") for r in runs()),
                  cost_scaled(promp()[0], "whole")], integers=True),
        Claim(COST_PAGE, "**116-136 s (1.9-2.3 min) per iteration on 2 quiet cores, 3.2-3.8 h per "
              "run** (the range is the outer step's two-thread scaling only: one file), and 6.3 h "
              "if the run gets one core", lambda: [
                  *wall_estimate(promp()), *(s / 60 for s in wall_estimate(promp())), 2,
                  *(100 * s / 3600 for s in wall_estimate(promp())),
                  100 * cost_scaled(promp()[0], "whole") / 3600], integers=True),
        Unchecked(COST_PAGE, "The estimate (4.1-6.6 h on 2 quiet cores)",
                  "the estimate of the section above, recomputed there"),
    ]


COST_CLAIMS = _cost_claims()

# ---------------------------------------------------------------------------- ML10 env step
ENVSTEP_PAGE = "benchmarks/results/metaworld_ml10/envstep_overhead.md"


def envstep_results(kind: str) -> list[dict]:
    """The committed files of one measurement of ``metaworld_envstep_overhead.py`` (``arms``,
    ``interleaving`` or ``wrapper_cost``), in seed order."""
    folder = os.path.join(RESULTS, "metaworld_ml10", "envstep")
    names = sorted(name for name in os.listdir(folder) if name.startswith(f"{kind}_seed"))
    results = []
    for name in names:
        with open(os.path.join(folder, name)) as f:
            results.append(json.load(f))
    return results


def envstep_table(kind: str, keys: tuple[str, ...]) -> dict:
    """The rows of a table of ``metaworld_envstep_overhead.py --summarize*``: us ranges, the
    per-seed mean ratios and their interval, recomputed with the script's own functions."""
    module = benchmark_module("metaworld_envstep_overhead")
    tables_of = module.arm_ratios if kind == "arms" else module.order_ratios
    fields = {"process CPU": "us", "thread CPU": "thread_us", "sequential": "sequential",
              "interleaved": "interleaved"}

    def row(key: str):
        def cell(column: str) -> list[float]:
            tables = [tables_of(result) for result in envstep_results(kind)]
            per_seed = [mean(table[key]["ratio"]) for table in tables]
            if column.startswith("ratio per seed"):
                return per_seed
            if column.startswith("95% CI"):
                return list(module.seed_interval(per_seed))
            field = fields[column.split(" us / step")[0]]
            values = [v for table in tables for v in table[key][field]]
            return [min(values), max(values)]
        return cell
    return {f"`{key}`": row(key) for key in keys}


def _envstep_claims() -> list[Claim | Table | Unchecked]:
    module = benchmark_module("metaworld_envstep_overhead")
    groups = ("mixed", *(f"single:{name}" for name in module.INTERLEAVING_CLASSES))

    def wrapper_cost(key: str) -> list[float]:
        values = [row[key] for result in envstep_results("wrapper_cost")
                  for row in result["wrapper_cost_rows"] if row["round"] > 0]
        return [min(values), max(values)]

    def interval(kind: str, key: str) -> list[float]:
        tables_of = module.arm_ratios if kind == "arms" else module.order_ratios
        return list(module.seed_interval(
            [mean(tables_of(result)[key]["ratio"]) for result in envstep_results(kind)]))

    def single_class_span() -> list[float]:
        bounds = [interval("interleaving", f"single:{name}")
                  for name in module.INTERLEAVING_CLASSES]
        return [min(low for low, _ in bounds), max(high for _, high in bounds)]

    def loads() -> list[float]:
        values = [r[key][0] for kind in ("arms", "interleaving", "wrapper_cost")
                  for r in envstep_results(kind) for key in ("loadavg_start", "loadavg_end")]
        return [min(values), max(values)]

    def largest_swing() -> list[float]:
        """The largest max / min of one arm's CPU us per step over all counted rounds."""
        pooled = {arm: [v for r in envstep_results("arms") for v in module.arm_ratios(r)[arm]["us"]]
                  for arm in module.ARMS}
        return [max(max(v) / min(v) for v in pooled.values())]

    def clipped() -> list[float]:
        values = [r["recorded_actions_clipped_fraction"] for r in envstep_results("arms")]
        return [min(values), max(values)]

    def cost_env_step() -> list[float]:
        """cost.md's env.step per step in the sampler, over its floor, per file."""
        floor = floor_mean("step_s")
        return sorted(cost_mean(run, "sampling/env.step") / cost_steps(run) / floor
                      for run in cost_runs())

    return [
        Unchecked(ENVSTEP_PAGE, "metaworld 3.1.1, mujoco 3.3.0, numpy 2.4.6, scipy 1.17.1, "
                  "gymnasium 1.4.0, Python 3.11.7", "package versions (the files' versions)"),
        Claim(ENVSTEP_PAGE, "load average 3.0-3.7 at the runs' starts and ends", loads),
        Claim(ENVSTEP_PAGE, "moved by up to a factor of 1.8 from round to round", largest_swing),
        Table(ENVSTEP_PAGE, "arm | process CPU us / step", rows=envstep_table("arms", module.ARMS),
              integers=True),
        Table(ENVSTEP_PAGE, "group | sequential us / step",
              rows=envstep_table("interleaving", groups), integers=True),
        Claim(ENVSTEP_PAGE, "our wrapper's own work costs 3.8-4.8 us per step",
              lambda: wrapper_cost("wrapper_us")),
        Claim(ENVSTEP_PAGE, "against 0.08-0.10 us for calling the replacement alone",
              lambda: wrapper_cost("stub_us")),
        Claim(ENVSTEP_PAGE, "Gaussian and uniform random actions cost 0.97-1.07 and 0.98-1.06 "
              "times the policy's actions", lambda: [*interval("arms", "raw_gaussian"),
                                                     *interval("arms", "raw_uniform")]),
        Claim(ENVSTEP_PAGE, "clipped to the box in 0.32-0.33 of their components", clipped),
        Claim(ENVSTEP_PAGE, "3.8-4.8 us per step measured directly; the `wrapper` arm's ratio to "
              "`raw` is 1.00-1.06", lambda: [*wrapper_cost("wrapper_us"),
                                             *interval("arms", "wrapper")]),
        Claim(ENVSTEP_PAGE, "(`raw_after_policy`: 1.00-1.06), and the intervals of the sampler and "
              "of the bare round robin overlap (1.11-1.31 and 1.12-1.28)", lambda: [
                  *interval("arms", "raw_after_policy"), *interval("arms", "sampler"),
                  *interval("arms", "round_robin")]),
        Claim(ENVSTEP_PAGE, "cost 1.12-1.28 times `raw` when stepped tick by tick, against "
              "1.00-1.06 env after env", lambda: [*interval("arms", "round_robin"),
                                                  *interval("arms", "wrapper")]),
        Claim(ENVSTEP_PAGE, "costs 1.17-1.18 times stepping them env after env, 10 copies of one "
              "class 1.02-1.07", lambda: [*interval("interleaving", "mixed"),
                                         *single_class_span()]),
        Claim(ENVSTEP_PAGE, "the sampler's steps cost 1.11-1.31 times the raw env's; cost.md's "
              "737-789 us is 1.50-1.61 times its floor", lambda: [
                  *interval("arms", "sampler"), *cost_env_step()]),
        Claim(ENVSTEP_PAGE, "measured 708 and 870 us per step", lambda: [
            1e6 * it["parts"]["sampling/env.step"]["cpu_s"] / cost_steps(cost_runs()[0])
            for it in cost_runs()[0]["iterations"][1:]], integers=True),
        Claim(COST_PAGE, "the sampler's steps cost 1.11-1.31 times those of the raw Meta-World env "
              "stepped episode after episode. Random actions instead of the policy's make no "
              "difference the files separate (0.97-1.07)", lambda: [
                  *interval("arms", "sampler"), *interval("arms", "raw_gaussian")]),
        Claim(COST_PAGE, "(every env copy stepped once per tick: 1.12-1.28, against 1.00-1.06 env "
              "after env)", lambda: [*interval("arms", "round_robin"),
                                     *interval("arms", "wrapper")]),
    ]


ENVSTEP_CLAIMS = _envstep_claims()

PAGE_CLAIMS: list[Claim | Table | Unchecked] = [
    *HOPPER_CLAIMS, *WALKER_CLAIMS, *HUMANOID_CLAIMS, *HVP_CLAIMS, *CHEETAH_CLAIMS, *VARIANCE_CLAIMS,
    *LONG_CLAIMS, *COST_CLAIMS, *ENVSTEP_CLAIMS]
"""The results READMEs' declarations, page by page."""
