"""benchmarks/initial_policy_returns.py: the initial policy's return per initialisation seed."""

from __future__ import annotations

import importlib
import json
import os
import sys

import numpy as np

from meta_policy_search.envs.normalized_env import NormalizedEnv
from meta_policy_search.envs.registry import make_env
from meta_policy_search.policies.gaussian_mlp_policy import GaussianMLPPolicy

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCHMARKS)
initial_policy_returns = importlib.import_module("initial_policy_returns")
sys.path.pop(0)

ENV = "HalfCheetahRandDirecEnv"


def _env() -> NormalizedEnv:
    env = NormalizedEnv(make_env(ENV), normalization_scale=10.0)
    env.seed_tasks(0)
    return env


def test_zero_inputs_appended_change_nothing_but_the_weights_they_meet():
    env = _env()
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    plain = GaussianMLPPolicy(obs_dim, act_dim, (8,), seed=3)
    padded = GaussianMLPPolicy(obs_dim + 4, act_dim, (8,), seed=5)
    values = plain.get_param_values()
    values["W0"] = np.concatenate([values["W0"], padded.get_param_values()["W0"][obs_dim:]])
    padded.set_param_values(values)

    runs = [initial_policy_returns.policy_returns(policy, _env(), pad, 60, np.random.default_rng(1), 20)
            for policy, pad in ((plain, 0), (padded, 4))]
    assert runs[0] == runs[1]
    assert runs[0][2] == 3  # 60 steps of 20-step episodes (the cheetah never terminates)
    # Other weights on the padded rows would not matter either; other weights on the real
    # inputs do, so the comparison above can fail.
    values["W0"][0] += 1.0
    padded.set_param_values(values)
    moved = initial_policy_returns.policy_returns(padded, _env(), 4, 60, np.random.default_rng(1), 20)
    assert moved[0] != runs[0][0]


def test_results_summarise_every_seed(tmp_path):
    out = tmp_path / "out"
    initial_policy_returns.main(["--env", ENV, "--hidden_sizes", "8", "--seeds", "3", "--steps", "40",
                                 "--max_path_length", "20", "--pad", "2", "--output", str(out)])
    record = json.loads((out / "results.json").read_text())
    assert [row["seed"] for row in record["rows"]] == [1, 2, 3]
    for key in ("inputs_17", "inputs_19"):  # the cheetah observes 17 values
        returns = [row[key]["return"] for row in record["rows"]]
        assert record["summary"][key]["mean"] == np.mean(returns)
        assert record["summary"][key]["std"] == np.std(returns, ddof=1)
        assert all(row[key]["episodes"] == 2 for row in record["rows"])
    assert {"git_commit", "versions", "machine"} <= set(record)
    assert "| 3 |" in (out / "results.md").read_text()
