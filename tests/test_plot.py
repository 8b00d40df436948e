"""experiments/plot.py and its library, meta_policy_search.experiment.curves, on synthetic runs:
reading, grouping by config, mean/std over seeds."""

from __future__ import annotations

import csv
import json
import os
import sys

import numpy as np
import pytest

from meta_policy_search.experiment import curves

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "experiments"))
import plot

sys.path.pop(0)


def make_run(directory, rows, params=None):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "progress.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    if params is not None:
        with open(os.path.join(directory, "params.json"), "w") as f:
            json.dump(params, f)


def rows_for(returns0, returns1, steps_per_itr):
    return [
        {"Itr": i, "n_timesteps": (i + 1) * steps_per_itr,
         "Step_0-AverageReturn": r0, "Step_1-AverageReturn": r1}
        for i, (r0, r1) in enumerate(zip(returns0, returns1))
    ]


@pytest.fixture
def runs_root(tmp_path):
    base = {"algo": "promp", "env": "PointEnvRandGoal", "inner_lr": 0.1}
    # Three seeds of one config (the third run is one iteration longer), one of another.
    make_run(tmp_path / "a" / "s1", rows_for([1, 2, 3], [2, 4, 6], 100),
             {**base, "seed": 1, "dump_path": "a/s1"})
    make_run(tmp_path / "a" / "s2", rows_for([3, 4, 5], [4, 6, 8], 110),
             {**base, "seed": 2, "dump_path": "a/s2"})
    make_run(tmp_path / "a" / "nested" / "s3", rows_for([5, 6, 7, 8], [6, 8, 10, 12], 120),
             {**base, "seed": 3, "dump_path": "a/s3"})
    make_run(tmp_path / "b" / "s1", rows_for([0, 0, 0], [1, 1, 1], 100),
             {**base, "inner_lr": 0.5, "seed": 1, "dump_path": "b/s1"})
    return tmp_path


def test_runs_are_grouped_by_params_without_seed(runs_root):
    runs = curves.find_runs([str(runs_root)])
    assert len(runs) == 4
    groups = curves.group_runs(runs)
    assert sorted(len(g) for g in groups.values()) == [1, 3]
    assert set(groups) == {"promp PointEnvRandGoal inner_lr=0.1",
                           "promp PointEnvRandGoal inner_lr=0.5"}


def test_mean_and_std_over_seeds(runs_root):
    groups = curves.group_runs(curves.find_runs([str(runs_root / "a")]))
    (runs,) = groups.values()
    x, mean, std = curves.aggregate(runs, "Step_0-AverageReturn", "n_timesteps")
    # Truncated to the shortest run (3 iterations); seeds give [1,3,5], [2,4,6], [3,5,7].
    np.testing.assert_allclose(mean, [3.0, 4.0, 5.0])
    np.testing.assert_allclose(std, np.full(3, np.std([1.0, 3.0, 5.0])))
    np.testing.assert_allclose(x, [110.0, 220.0, 330.0])  # mean of 100, 110, 120 per itr


def test_duplicated_iterations_keep_the_last_row(tmp_path):
    rows = rows_for([1, 2, 3], [0, 0, 0], 10)
    rows.insert(2, {**rows[1], "Step_0-AverageReturn": -99})  # itr 1 logged again on resume
    rows[1], rows[2] = rows[2], rows[1]
    make_run(tmp_path / "r", rows)
    columns = curves.read_progress(str(tmp_path / "r" / "progress.csv"))
    np.testing.assert_array_equal(columns["Itr"], [0, 1, 2])
    np.testing.assert_array_equal(columns["Step_0-AverageReturn"], [1, 2, 3])


def test_runs_without_params_are_their_own_group(tmp_path):
    make_run(tmp_path / "x", rows_for([1], [2], 5))
    make_run(tmp_path / "y", rows_for([1], [2], 5))
    assert len(curves.group_runs(curves.find_runs([str(tmp_path)]))) == 2


def test_main_writes_png_with_default_keys(runs_root, capsys):
    output = str(runs_root / "out" / "curves.png")
    assert plot.main([str(runs_root), "--output", output]) == output
    with open(output, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.abspath(output) in capsys.readouterr().out
    assert curves.default_keys(curves.find_runs([str(runs_root)])) == [
        "Step_0-AverageReturn", "Step_1-AverageReturn"]


def test_errors_name_the_problem(tmp_path, runs_root):
    with pytest.raises(ValueError, match="does not exist"):
        curves.find_runs([str(tmp_path / "missing")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no non-empty progress.csv"):
        curves.find_runs([str(tmp_path / "empty")])
    with pytest.raises(ValueError, match="NoSuchKey"):
        plot.main([str(runs_root), "--keys", "NoSuchKey", "--output",
                   str(tmp_path / "z.png")])


def test_reference_overlay(tmp_path):
    params = {"algo": "vpg_maml", "inner_type": "likelihood_ratio", "env": "HalfCheetahRandDirecEnv",
              "meta_batch_size": 40, "rollouts_per_meta_task": 20, "max_path_length": 100,
              "num_inner_grad_steps": 1, "seed": 1}
    make_run(tmp_path / "lvc", rows_for([1, 2], [3, 4], 150_000), params)
    (run,) = curves.find_runs([str(tmp_path)])
    points = curves.reference_points(params, "Step_1-AverageReturn")
    assert {p.algorithm for p in points} == {"LVC-VPG"}
    assert {p.figure for p in points} == {"fig2"} and len(points) == 4  # the 40 x 20 batch
    study = {**params, "meta_batch_size": 20, "rollouts_per_meta_task": 40}
    assert [(p.figure, p.value) for p in curves.reference_points(study, "Step_1-AverageReturn")] \
        == [("fig3", 73.0), ("fig3", 257.0)]  # the variance study's batch: figure 3 only
    assert curves.reference_points({**params, "inner_type": "log_likelihood"},
                                 "Step_1-AverageReturn") == []  # MAML-VPG: not in the paper
    output = str(tmp_path / "ref.png")
    assert plot.main([str(tmp_path), "--reference", "--output", output]) \
        == output


def test_reference_says_why_a_curve_has_no_paper_points(tmp_path, capsys):
    params = {"algo": "vpg_maml", "inner_type": "likelihood_ratio", "env": "HalfCheetahRandDirecEnv",
              "meta_batch_size": 10, "rollouts_per_meta_task": 5, "max_path_length": 100,
              "num_inner_grad_steps": 1, "seed": 1}
    reason = curves.missing_reference_reason(params, "Step_1-AverageReturn")
    assert reason is not None and "10 x 5" in reason and "40 x 20 (fig2)" in reason
    assert "20 x 40 (fig3)" in reason
    paper_batch = {**params, "meta_batch_size": 40, "rollouts_per_meta_task": 20}
    assert curves.missing_reference_reason(paper_batch, "Step_1-AverageReturn") is None
    assert "no MAML-VPG curve" in curves.missing_reference_reason(
        {**params, "inner_type": "log_likelihood"}, "Step_1-AverageReturn")
    assert "not one of the paper's" in curves.missing_reference_reason(
        {**params, "algo": "mine"}, "Step_1-AverageReturn")
    make_run(tmp_path / "small", rows_for([1, 2], [3, 4], 5_000), params)
    plot.main([str(tmp_path), "--reference", "--output", str(tmp_path / "ref.png")])
    out = capsys.readouterr().out
    assert "note: no paper points for" in out and "10 x 5" in out
    plot.main([str(tmp_path), "--output", str(tmp_path / "plain.png")])
    assert "note:" not in capsys.readouterr().out  # without --reference nothing to explain


def test_one_seed_run_draws_pre_and_post_update_on_one_axis_without_a_seed_band(tmp_path):
    """The quick start's PNG: one run, so one axis with both curves and no "over seeds" label."""
    make_run(tmp_path / "quick", rows_for([-40, -39], [-30, -20], 100),
             {"algo": "promp", "env": "PointEnvRandGoal", "seed": 1})
    groups = curves.group_runs(curves.find_runs([str(tmp_path)]))
    keys = ["Step_0-AverageReturn", "Step_1-AverageReturn"]
    ((title, lines),) = plot.layout(groups, keys)
    assert [label for _, _, label in lines] == [
        "Step_0-AverageReturn (pre-update)", "Step_1-AverageReturn (after 1 inner step)"]
    assert "seeds" not in plot.y_label(groups) and "one seed" in plot.y_label(groups)
    assert len(plot.layout(groups, keys, one_axis=False)) == 2  # --panel_per_key


def test_a_success_rate_panel_is_not_labelled_a_return(tmp_path):
    """Meta-World's Step_k-SuccessRate beside the returns: the shared y label says "value"."""
    make_run(tmp_path / "quick", rows_for([-40, -39], [-30, -20], 100),
             {"algo": "promp", "env": "PointEnvRandGoal", "seed": 1})
    groups = curves.group_runs(curves.find_runs([str(tmp_path)]))
    assert plot.y_label(groups, ["Step_0-AverageReturn", "Step_1-AverageReturn"]) == (
        "return (one seed)")
    assert plot.y_label(groups, ["Step_1-SuccessRate", "Step_1-AverageReturn"]) == (
        "value (one seed)")


def test_several_configurations_get_a_panel_per_key(runs_root):
    groups = curves.group_runs(curves.find_runs([str(runs_root)]))
    keys = ["Step_0-AverageReturn", "Step_1-AverageReturn"]
    panels = plot.layout(groups, keys)
    assert [title for title, _ in panels] == keys and all(len(lines) == 2 for _, lines in panels)
    assert "mean \u00b1 std over seeds" in plot.y_label(groups)  # a group has 3 seeds
    ((_, lines),) = plot.layout(groups, keys, one_axis=True)
    assert len(lines) == 4


def test_seeds_that_differ_in_execution_settings_are_one_configuration(tmp_path):
    """Log formats, executor, timeouts leave the results alone: a seed run before the default
    log formats changed and one after are seeds of one curve."""
    base = {"algo": "promp", "env": "PointEnvRandGoal", "n_itr": 3}
    make_run(tmp_path / "s1", rows_for([1, 2, 3], [2, 3, 4], 10),
             {**base, "seed": 1, "log_formats": ["stdout", "log", "csv"], "executor": "parallel"})
    make_run(tmp_path / "s2", rows_for([1, 2, 3], [2, 3, 4], 10),
             {**base, "seed": 2, "log_formats": ["log", "csv"], "executor": "iterative",
              "sampler_timeout": 60})
    make_run(tmp_path / "long", rows_for([1, 2, 3], [2, 3, 4], 10), {**base, "seed": 3, "n_itr": 9})
    groups = curves.group_runs(curves.find_runs([str(tmp_path)]))
    assert sorted(len(runs) for runs in groups.values()) == [1, 2]


NEW_PARAMS = {"algo": "promp", "env": "PointEnvRandGoal", "n_itr": 3, "inner_lr": 0.1,
              "sampling_mode": "budget", "executor": "parallel", "oracle": False,
              "keep_best": None, "first_order": False, "jit_compile": False,
              "paper_config": True, "paper_config_entry": {"algo": "promp"}}


def old_spelling(params: dict, *dropped: str) -> dict:
    """``params`` as an older version wrote it: ``parallel`` instead of ``executor`` (null),
    and without ``dropped``."""
    old = {k: v for k, v in params.items() if k not in dropped}
    return {**old, "parallel": True, "executor": None}


def test_old_and_new_params_spellings_are_one_configuration(tmp_path):
    """The committed HalfCheetah seeds mix both spellings: ``parallel`` vs ``executor``,
    ``oracle`` and ``keep_best`` missing vs false/null, ``paper_config`` missing."""
    trpo = {**NEW_PARAMS, "algo": "trpo_maml", "hvp_approach": "gauss_newton"}
    for name, params in {
        "promp_new": NEW_PARAMS,
        "promp_old": old_spelling(NEW_PARAMS, "oracle", "keep_best", "paper_config",
                                  "paper_config_entry"),
        "trpo_new": trpo,
        "trpo_old": old_spelling(trpo, "oracle", "hvp_approach"),
    }.items():
        make_run(tmp_path / name, rows_for([1, 2, 3], [2, 3, 4], 10), {**params, "seed": len(name)})
    groups = curves.group_runs(curves.find_runs([str(tmp_path)]))
    assert {label: len(runs) for label, runs in groups.items()} == {
        "promp PointEnvRandGoal": 2, "trpo_maml PointEnvRandGoal": 2}


def test_a_missing_key_reads_as_what_the_old_version_ran(tmp_path):
    """Without ``sampling_mode`` a run sampled fixed rollouts: not a seed of a budget run; an
    oracle run is not a seed of a run whose file predates the oracle."""
    make_run(tmp_path / "budget", rows_for([1, 2], [2, 3], 10), {**NEW_PARAMS, "seed": 1})
    make_run(tmp_path / "old", rows_for([1, 2], [2, 3], 10),
             {**old_spelling(NEW_PARAMS, "sampling_mode", "oracle"), "seed": 2})
    make_run(tmp_path / "oracle", rows_for([1, 2], [2, 3], 10),
             {**NEW_PARAMS, "sampling_mode": "rollouts", "oracle": True, "seed": 3})
    groups = curves.group_runs(curves.find_runs([str(tmp_path)]))
    assert sorted(groups) == ["promp PointEnvRandGoal oracle=False sampling_mode=budget",
                              "promp PointEnvRandGoal oracle=False sampling_mode=rollouts",
                              "promp PointEnvRandGoal oracle=True sampling_mode=rollouts"]


RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "benchmarks",
                       "results")


def test_committed_halfcheetah_runs_are_two_curves_of_ten_seeds():
    reproduction = os.path.join(RESULTS, "reproduction")
    runs = curves.find_runs([os.path.join(reproduction, algo, "HalfCheetahRandDirecEnv")
                             for algo in ("promp", "trpo_maml")])
    groups = curves.group_runs(runs)
    assert {label: len(seeds) for label, seeds in groups.items()} == {
        "promp HalfCheetahRandDirecEnv": 10, "trpo_maml HalfCheetahRandDirecEnv": 10}
    legends = {p.algorithm for seeds in groups.values()
               for p in curves.reference_points(seeds[0].params, "Step_1-AverageReturn")}
    assert legends == {"ProMP", "MAML-TRPO"}  # one set of paper points per curve


def test_every_committed_params_file_normalizes_to_its_algorithms_fields():
    """Each key an older params.json lacks (or spells differently) has a decided meaning: a
    config field added later needs an entry in curves.MISSING_PARAMS_MEAN (what runs before it
    ran) or in curves.IGNORED_PARAMS (it leaves results alone)."""
    import dataclasses
    import glob

    from meta_policy_search.experiment.registry import algorithm_for_params

    checked = 0
    for path in sorted(glob.glob(os.path.join(RESULTS, "**", "params.json"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            params = json.load(f)
        algorithm = algorithm_for_params(params)
        if algorithm is None:  # the original code's runs: not ours to normalize
            continue
        fields = {field.name for field in dataclasses.fields(algorithm.config_cls)}
        keys = set(curves.normalized_params(params)) - set(curves.IGNORED_PARAMS)
        assert keys == (fields | {"algo"}) - set(curves.IGNORED_PARAMS), (
            f"{path}: lacks {sorted(fields - keys - set(curves.IGNORED_PARAMS))}, has unknown "
            f"{sorted(keys - fields - {'algo'})}")
        checked += 1
    assert checked >= 70
