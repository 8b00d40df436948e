"""The gradient-variance study: RStd's formula, the measurement rounds, the script's CSV and plot."""

from __future__ import annotations

import csv
import json
import os
import sys

import numpy as np
import pytest

from meta_policy_search.gradient_variance import (
    CSV_NAME,
    GradientVarianceCallback,
    make_gradient_fn,
    relative_std,
    sample_meta_gradient,
)

EXPERIMENTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments")


def test_relative_std_by_hand():
    gradients = np.array([[1.0, 2.0, 0.0, -1.0],
                          [3.0, 2.0, 0.0, -3.0],
                          [2.0, 2.0, 0.0, -5.0]])
    # column 0: std sqrt(2/3) / |2|; column 1: 0; column 2: mean 0 (excluded);
    # column 3: std sqrt(8/3) / |-3|
    ratios = [np.sqrt(2 / 3) / 2, 0.0, np.sqrt(8 / 3) / 3]
    mean, median = relative_std(gradients)
    assert mean == pytest.approx(np.mean(ratios))
    assert median == pytest.approx(np.median(ratios))


@pytest.mark.parametrize("shape", [(1, 4), (4,), (2, 2, 2)])
def test_relative_std_rejects_bad_shapes(shape):
    with pytest.raises(ValueError, match="rounds >= 2"):
        relative_std(np.ones(shape))


@pytest.mark.parametrize("every, rounds", [(0, 10), (2, 1), (1.5, 10)])
def test_callback_rejects_bad_settings(tmp_path, every, rounds):
    with pytest.raises(ValueError):
        GradientVarianceCallback(str(tmp_path), every, rounds, n_itr=3)


def build_trainer(rollouts: int, seed: int = 3):
    """A small LVC-VPG trainer on 2-D navigation, built as the run scripts build it."""
    from meta_policy_search.experiment import components
    from meta_policy_search.experiment.config_parsing import parse_config
    from meta_policy_search.experiment.registry import get_algorithm
    from meta_policy_search.meta_trainer import Trainer

    algorithm = get_algorithm("lvc_vpg")
    config, _ = parse_config(algorithm.config_cls, [
        "--env", "PointEnvRandGoal", "--meta_batch_size", "2", "--rollouts_per_meta_task",
        str(rollouts), "--max_path_length", "20", "--num_inner_grad_steps", "1",
        "--inner_type", "likelihood_ratio", "--paper_config", "false", "--executor", "iterative",
        "--hidden_sizes", "16,16", "--seed", str(seed), "--dump_path", "/tmp/unused",
    ], "vpg_maml")
    seeds = components.derive_seeds(config.seed)
    env = components.build_env(config)
    policy = components.build_policy(config, env, seeds["policy"])
    sampler = components.build_sampler(config, env, policy, seeds["sampler"])
    return Trainer(algo=algorithm.make_algo(config, policy), env=env, sampler=sampler,
                   sample_processor=components.build_sample_processor(config), policy=policy,
                   n_itr=1)


def rstd_of(trainer, rounds: int) -> float:
    trainer.sampler.update_tasks()
    gradient_fn = make_gradient_fn(trainer.algo)
    gradients = np.stack([sample_meta_gradient(trainer, gradient_fn) for _ in range(rounds)])
    return relative_std(gradients)[1]


def test_rounds_resample_the_same_tasks_and_noise_shrinks_with_more_rollouts():
    """Rounds differ (fresh samples) on the same tasks; 16x the rollouts cuts the noise.

    The relative std of a mean of N independent rollouts scales as 1 / sqrt(N): 16x the
    rollouts should give about a quarter of the median RStd. Identical rounds (re-used samples)
    would give 0; rounds on different tasks or a gradient not averaged over the batch would not
    shrink like this.
    """
    small = build_trainer(rollouts=2)
    tasks = small.sampler.update_tasks()
    gradient_fn = make_gradient_fn(small.algo)
    first = sample_meta_gradient(small, gradient_fn)
    second = sample_meta_gradient(small, gradient_fn)
    assert small.sampler.tasks == tasks
    assert not np.allclose(first, second)
    assert small.policy._task_params is None  # left in the pre-update state

    noisy = rstd_of(build_trainer(rollouts=2), rounds=6)
    quiet = rstd_of(build_trainer(rollouts=32), rounds=6)
    assert 0.1 < quiet / noisy < 0.5, (noisy, quiet)


def test_script_writes_rows_resumes_and_plots(tmp_path):
    sys.path.insert(0, EXPERIMENTS)
    import gradient_variance as script

    tiny = ["--", "--meta_batch_size", "2", "--rollouts_per_meta_task", "2",
            "--max_path_length", "10", "--hidden_sizes", "8,8", "--executor", "iterative",
            "--num_inner_grad_steps", "1"]
    common = ["run", "--algo", "lvc_vpg", "--env", "PointEnvRandGoal", "--seed", "1",
              "--every", "2", "--rounds", "3", "--out", str(tmp_path)]
    # 2 tasks x 2 rollouts x H 10 x 2 phases = 80 steps per iteration
    script.main([*common, "--timesteps", "240", *tiny])
    run_dir = tmp_path / "lvc_vpg" / "PointEnvRandGoal" / "seed_1"
    with open(run_dir / CSV_NAME, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["Itr"]) for r in rows] == [1, 2]  # every 2nd and the last of 3
    assert [int(r["n_timesteps"]) for r in rows] == [160, 240]
    assert all(float(r["Meta-GradientRStd"]) > 0 for r in rows)

    script.main([*common, "--timesteps", "400", *tiny])  # resumed: iterations 3 and 4
    with open(run_dir / CSV_NAME, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["Itr"]) for r in rows] == [1, 2, 3, 4]

    script.main(["plot", str(tmp_path)])
    assert (tmp_path / "gradient_variance.png").stat().st_size > 0
    assert "LVC-VPG" in (tmp_path / "gradient_variance.md").read_text()


def plotted_lvc_rows(tmp_path, measurements: str) -> list[str]:
    """The LVC-VPG rows of the RStd table plotted from one run's ``gradient_variance.csv`` rows."""
    sys.path.insert(0, EXPERIMENTS)
    import gradient_variance as script

    run_dir = tmp_path / "lvc_vpg" / "HalfCheetahRandDirecEnv" / "seed_22"
    run_dir.mkdir(parents=True)
    (run_dir / "params.json").write_text(json.dumps(
        {"algo": "vpg_maml", "inner_type": "likelihood_ratio", "env": "HalfCheetahRandDirecEnv"}))
    (run_dir / CSV_NAME).write_text("Itr,n_timesteps,Meta-GradientRStd\n" + measurements)
    script.main(["plot", str(tmp_path)])
    return [line for line in (tmp_path / "gradient_variance.md").read_text().splitlines()
            if line.startswith("| LVC-VPG")]


def test_plot_compares_only_the_papers_rstd_points(tmp_path):
    """fig3 of paper_reference.csv also has the study's returns (73, 102, ...): not RStd values."""
    rows = [line.split("|") for line in plotted_lvc_rows(tmp_path, "11,2000000,4.0\n62,10000000,7.0\n")]
    paper = [row[7].strip() for row in rows if row[7].strip()]
    assert paper == ["5 +- 2", "6 +- 2"], rows


def test_rstd_is_read_between_measurements_at_the_papers_timesteps(tmp_path):
    """Measured at 9.6e6 and 1.008e7, the RStd at the paper's 1e7 lies between the two (as the
    paper's figure is read), next to the nearest measurement, 1.008e7."""
    rows = plotted_lvc_rows(tmp_path, "59,9600000,30.8\n62,10080000,5.6\n")
    (row,) = [line for line in rows if line.startswith("| LVC-VPG | HalfCheetahRandDirecEnv | 1e+07")]
    # 30.8 + (1e7 - 9.6e6) / (1.008e7 - 9.6e6) x (5.6 - 30.8) = 9.8
    assert row.split("|")[4:7] == [" 9.8 ", " 1.008e+07: 5.6 ", " 1 "], row


def test_plot_compares_the_runs_returns_with_figure_3s(tmp_path):
    """The study's runs (20 x 40) meet figure 3's returns (73 at 1e7) in a table of their own."""
    sys.path.insert(0, EXPERIMENTS)
    import gradient_variance as script

    run_dir = tmp_path / "lvc_vpg" / "HalfCheetahRandDirecEnv" / "seed_22"
    run_dir.mkdir(parents=True)
    (run_dir / "params.json").write_text(json.dumps(
        {"algo": "vpg_maml", "inner_type": "likelihood_ratio", "env": "HalfCheetahRandDirecEnv",
         "meta_batch_size": 20, "rollouts_per_meta_task": 40}))
    (run_dir / CSV_NAME).write_text("Itr,n_timesteps,Meta-GradientRStd\n62,10080000,7.0\n")
    # 9.92e6 -> 100, 1.008e7 -> 120: 110 at 1e7
    (run_dir / "progress.csv").write_text(
        "Itr,n_timesteps,Step_1-AverageReturn\n61,9920000,100.0\n62,10080000,120.0\n")
    output = tmp_path / "not" / "yet" / "there"  # --output is created
    script.main(["plot", str(tmp_path), "--output", str(output)])
    text = (output / "gradient_variance.md").read_text()
    returns = text.split("## Post-update return")[1]
    assert "| LVC-VPG | HalfCheetahRandDirecEnv | 1e+07 | 110.0 | 1 | 73 +- 10 |" in returns
    assert "257" not in returns  # 4.5e7 not reached
