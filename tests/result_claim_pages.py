"""The numbers of the hand-written results pages, each with the committed files it comes from.

Read by ``tests/test_result_claims.py`` (the engine, :class:`Claim`, :class:`Table` and
:class:`Unchecked`, is in ``tests/result_claims.py``). A quote is copied from its page (line
breaks free); ``values`` recomputes its decimal numbers in order. Editing a number on a page
means editing its quote here, and the recomputation decides whether the new number stands.
"""

from __future__ import annotations

import datetime
import importlib
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

DECLARATIONS: list[Claim | Table | Unchecked] = [*HOPPER_CLAIMS, *WALKER_CLAIMS]
"""Everything the tests check, page by page."""
