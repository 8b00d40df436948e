"""experiments/reproduce.py: reference data, n_itr from timesteps, a tiny grid end to end."""

from __future__ import annotations

import csv
import importlib
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from meta_policy_search.experiment import comparison, paper
from meta_policy_search.experiment.paper import ReferencePoint
from meta_policy_search.experiment.registry import ALGORITHMS, algorithm_for_params, get_algorithm

EXPERIMENTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "experiments")
sys.path.insert(0, EXPERIMENTS)
import plot  # noqa: E402
import reproduce  # noqa: E402

sys.path.pop(0)

TINY = ["--meta_batch_size", "2", "--rollouts_per_meta_task", "2", "--max_path_length", "5",
        "--executor", "iterative", "--hidden_sizes", "8", "--num_inner_grad_steps", "1",
        "--num_ppo_steps", "1", "--log_formats", "csv,log"]
"""Per run: 2 x 2 x 5 x (1 + 1) = 40 timesteps per iteration."""


# ---------------------------------------------------------------------------- reference data
def test_reference_loader_parses_every_row():
    path = os.path.join(os.path.dirname(paper.__file__), os.pardir, paper.PAPER_REFERENCE_FILE)
    with open(path, encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    comments = [line for line in lines if line.startswith("#")]
    points = paper.load_paper_reference()
    assert comments and len(points) == len(lines) - len(comments) - 1  # minus the header
    assert points[0] == ReferencePoint("fig2", "HalfCheetahRandDirecEnv", "ProMP",
                                       "Step_1-AverageReturn", 1e7, 195.0, 20.0)
    assert all(p.precision > 0 and p.timesteps > 0 for p in points)
    assert "read off the ProMP paper" in paper.reference_provenance()


def test_every_reference_curve_maps_to_a_registry_algorithm_and_env():
    from meta_policy_search.envs.registry import ENV_CLASS_NAMES

    legends = {a.legend for a in ALGORITHMS.values()}
    for point in paper.load_paper_reference():
        assert point.algorithm in legends and point.env in ENV_CLASS_NAMES, point


def test_bad_reference_rows_are_named():
    header = ",".join(paper.REFERENCE_COLUMNS)
    with pytest.raises(ValueError, match="line 3"):
        paper._parse_reference(f"# note\n{header}\nfig2,Env,ProMP,m,1e7,ten,5\n", "x.csv")
    with pytest.raises(ValueError, match="header"):
        paper._parse_reference("figure,env\n", "x.csv")


def test_registry_entries_name_their_meta_algorithm_class():
    from meta_policy_search.meta_algos.base import MAMLAlgo

    for entry in ALGORITHMS.values():
        assert issubclass(entry.algorithm_class, MAMLAlgo), entry.name
    assert get_algorithm("lvc_vpg").algorithm_class.__name__ == "VPGMAML"
    assert get_algorithm("dice_maml").algorithm_class.__name__ == "DICEMAML"


def test_registry_names_runs_from_their_params():
    assert algorithm_for_params({"algo": "vpg_maml", "inner_type": "likelihood_ratio"}).name == \
        "lvc_vpg"
    assert algorithm_for_params({"algo": "vpg_maml", "inner_type": "log_likelihood"}).name == \
        "vpg_maml"
    assert algorithm_for_params({"algo": "e_maml_trpo"}).legend == "E-MAML-TRPO"
    assert algorithm_for_params({"algo": "ppo"}) is None
    assert get_algorithm("lvc_vpg").flags() == ["--inner_type", "likelihood_ratio"]
    with pytest.raises(ValueError, match="valid names: promp, trpo_maml"):
        get_algorithm("ppo")


# ---------------------------------------------------------------------------- planning
@pytest.mark.parametrize(("algo", "env", "extra", "per_itr"), [
    ("promp", "HopperRandParamsEnv", [], 40 * 20 * 200 * 2),
    ("promp", "AntRandGoalEnv", [], 40 * 20 * 200 * 3),  # 2 inner steps
    ("trpo_maml", "AntRandDirec2DEnv", [], 40 * 20 * 100 * 2),  # H = 100 (appendix)
    ("lvc_vpg", "MetaPointEnvMomentum", [], 40 * 20 * 200 * 4),  # 3 inner steps
    ("promp", "HalfCheetahRandDirecEnv", ["--meta_batch_size", "4"], 4 * 20 * 100 * 2),
    ("promp", "HalfCheetahRandVelEnv", [], 40 * 20 * 100 * 2),  # not in the paper: defaults
])
def test_n_itr_reaches_the_timesteps_as_the_paper_counts_them(tmp_path, algo, env, extra,
                                                              per_itr):
    (run,) = reproduce.plan_runs([(algo, env, (3,))], 1e7, str(tmp_path), extra)
    assert run.n_itr == -(-10_000_000 // per_itr)  # ceil
    assert run.params["n_itr"] == run.n_itr and run.params["seed"] == 3
    assert run.run_dir == str(tmp_path / algo / env / "seed_3")
    assert run.command(resume=False)[1] == get_algorithm(algo).script_path
    assert run.command(resume=True)[-1] == "--resume"


def test_timesteps_per_iteration_checks_its_counts():
    assert paper.timesteps_per_iteration(40, 20, 100, 1) == 160_000
    with pytest.raises(ValueError, match="max_path_length"):
        paper.timesteps_per_iteration(40, 20, 0, 1)


@pytest.mark.parametrize(("argv", "extra", "match"), [
    (["--algos", "ppo", "--envs", "PointEnvRandGoal"], [], "unknown algorithm 'ppo'; valid names"),
    (["--algos", "promp", "--envs", "PointEnv"], [], "unknown env.*valid names: PointEnvRandGoal"),
    (["--algos", "promp", "--envs", "PointEnvRandGoal"], ["--", "--inner_lr_typo", "1"],
     "inner_lr_typo"),
])
def test_bad_names_are_listed_with_the_valid_ones(tmp_path, capsys, argv, extra, match):
    assert reproduce.main([*argv, "--timesteps", "100", "--out", str(tmp_path), *extra]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert re.search(match, line), line
    assert not os.listdir(tmp_path)


def test_flags_set_per_run_are_refused_after_the_separator(tmp_path, capsys):
    with pytest.raises(SystemExit):
        reproduce.main(["--algos", "promp", "--envs", "PointEnvRandGoal", "--timesteps", "1",
                        "--out", str(tmp_path), "--", "--seed", "4"])
    assert "set by the grid" in capsys.readouterr().err


def test_a_run_directory_of_another_config_is_refused(tmp_path):
    (run,) = reproduce.plan_runs([("promp", "PointEnvRandGoal", (1,))], 100, str(tmp_path), TINY)
    os.makedirs(run.run_dir)
    with open(os.path.join(run.run_dir, "params.json"), "w") as f:
        json.dump({**run.params, "inner_lr": 0.5, "n_itr": 99}, f)
    with pytest.raises(ValueError, match="inner_lr: 0.5 there, 0.1 now"):
        reproduce.run_state(run)


def test_a_run_older_than_a_config_field_counts_it_as_its_default(tmp_path):
    (run,) = reproduce.plan_runs([("promp", "PointEnvRandGoal", (1,))], 100, str(tmp_path), TINY)
    os.makedirs(run.run_dir)
    older = {key: value for key, value in run.params.items() if key not in ("oracle", "keep_best")}
    with open(os.path.join(run.run_dir, "params.json"), "w") as f:
        json.dump(older, f)
    assert reproduce.run_state(run) == "start"
    with open(os.path.join(run.run_dir, "params.json"), "w") as f:
        json.dump({**older, "oracle": True}, f)
    with pytest.raises(ValueError, match="oracle: True there, False now"):
        reproduce.run_state(run)


# ---------------------------------------------------------------------------- comparison
def fake_run(directory, params, returns, per_itr, itr_time=lambda itr: 2.0):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "progress.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Itr", "n_timesteps", "ItrTime", "Step_1-AverageReturn"])
        for itr, value in enumerate(returns):
            writer.writerow([itr, (itr + 1) * per_itr, itr_time(itr), value])
    with open(os.path.join(directory, "params.json"), "w") as f:
        json.dump(params, f)
    return plot.find_runs([str(directory)])[0]


def test_comparison_interpolates_ours_at_the_papers_timesteps(tmp_path):
    # HalfCheetah, 40 x 20 x 100 x 2 = 160k steps per iteration: 100 iterations reach 1.6e7.
    params = {"algo": "promp", "env": "HalfCheetahRandDirecEnv", "meta_batch_size": 40,
              "rollouts_per_meta_task": 20, "max_path_length": 100, "num_inner_grad_steps": 1,
              "n_itr": 100, "sampling_mode": "budget"}
    seeds = [fake_run(tmp_path / f"s{s}", {**params, "seed": s}, np.arange(100.0) * s, 160_000,
                      itr_time=lambda itr, s=s: s * (1.0 + itr % 2))  # s, 2s, s, 2s, ...
             for s in (1, 2)]
    curve = comparison.Curve(get_algorithm("promp"), "HalfCheetahRandDirecEnv",
                            "Step_1-AverageReturn", seeds)
    reference = paper.load_paper_reference()
    # 1e7 steps = 62.5 iterations: itr 61.5 (0-based) interpolated -> 61.5 and 123.
    mean, std, n = comparison.ours_at(curve, 1e7)
    assert (mean, std, n) == pytest.approx((92.25, 30.75, 2))
    assert comparison.ours_at(curve, 2e7) is None
    text = comparison.comparison_markdown([curve], reference, "reproduce.py ...")
    assert "| HalfCheetahRandDirecEnv | ProMP | 1e7 | 195 +- 20 | 92.2 +- 30.8 (2) | -102.8 | no |" \
        in text
    assert "Every row: fig2, Step_1-AverageReturn." in text  # not a column of the same words
    assert "| HalfCheetahRandDirecEnv | ProMP | 2e7, 5e7, 1e8 |" in text  # not reached
    assert "ProMP (`promp`) on HalfCheetahRandDirecEnv: seeds 1, 2," in text
    assert "| HalfCheetahRandDirecEnv | ProMP | 1 | 100 | 150 s | 1.5 s (1.0 - 2.0) |" in text
    assert "| HalfCheetahRandDirecEnv | ProMP | 2 | 100 | 300 s | 3.0 s (2.0 - 4.0) |" in text
    png = comparison.draw_comparison([curve], reference, ["HalfCheetahRandDirecEnv"],
                                    str(tmp_path / "cmp.png"))
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_eta_uses_the_iteration_times_of_the_runs(tmp_path):
    runs = reproduce.plan_runs([("promp", "PointEnvRandGoal", (1, 2))], 400, str(tmp_path), TINY)
    assert [run.n_itr for run in runs] == [10, 10]
    assert reproduce.eta_seconds(runs, {r.key for r in runs}, 2) is None  # no data yet
    fake_run(runs[0].run_dir, runs[0].params, [0.0] * 4, 40)  # 4 of 10 done, 2 s each
    # seed 1: 6 x 2 s left; seed 2 (no rows) borrows 2 s/itr: 10 x 2 s; over 2 slots.
    assert reproduce.eta_seconds(runs, {r.key for r in runs}, 2) == pytest.approx(16.0)
    line = reproduce.status_line(runs, {runs[1].key}, {runs[1].key}, [], 2)
    assert "grid: 1/2 done, 1 running, 0 left | ETA 0:00:20" in line


# ---------------------------------------------------------------------------- end to end
def read_rows(run_dir: str) -> list[dict]:
    with open(os.path.join(run_dir, "progress.csv"), newline="") as f:
        return list(csv.DictReader(f))


class NoLauncher:
    def __init__(self, *args, **kwargs):
        raise AssertionError("a finished grid must not launch anything")


def test_tiny_grid_runs_skips_resumes_and_restarts(tmp_path, monkeypatch, capsys):
    out = str(tmp_path / "grid")
    args = ["--algos", "promp", "--envs", "PointEnvRandGoal", "--seeds", "1", "2",
            "--timesteps", "80", "--out", out, "--n_concurrent", "2", "--status_every", "2"]
    # PointEnvRandGoal has no curve in the paper: give it two reference points to compare with.
    fake_reference = [ReferencePoint("figX", "PointEnvRandGoal", "ProMP", "Step_1-AverageReturn",
                                     t, -2.0, 1.0) for t in (60.0, 1e9)]
    monkeypatch.setattr(reproduce, "load_paper_reference", lambda: fake_reference)
    run_dirs = [os.path.join(out, "promp", "PointEnvRandGoal", f"seed_{s}") for s in (1, 2)]

    # 1. Two runs of 2 iterations (80 timesteps / 40 per iteration), in parallel.
    assert reproduce.main([*args, "--", *TINY]) == 0, capsys.readouterr()
    first_rows = {}
    for run_dir in run_dirs:
        first_rows[run_dir] = read_rows(run_dir)
        assert [r["Itr"] for r in first_rows[run_dir]] == ["0", "1"]
        with open(os.path.join(run_dir, "done.json")) as f:
            assert json.load(f)["n_itr"] == 2
        with open(os.path.join(run_dir, "params.json")) as f:
            params = json.load(f)
        assert params["paper_config_entry"]["env"] == "PointEnvRandGoal"
        assert params["sampling_mode"] == "budget"  # the paper config, under the -- flags
        assert params["num_inner_grad_steps"] == 1 and params["inner_lr"] == 0.1
    with open(os.path.join(out, "reproduction.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(os.path.join(out, "reproduction.md")) as f:
        table = f.read()
    assert "| PointEnvRandGoal | ProMP | 60 | -2 +- 1 |" in table
    assert "(2) |" in table  # both seeds reached 60 timesteps
    assert "| PointEnvRandGoal | ProMP | 1e9 |" in table  # not reached
    assert "grid: 2/2 done, 0 running, 0 left" in capsys.readouterr().out

    # 2. Again: everything is finished, nothing is launched or written in the runs.
    stamps = {d: os.path.getmtime(os.path.join(d, "checkpoints", "latest")) for d in run_dirs}
    monkeypatch.setattr(reproduce, "LocalLauncher", NoLauncher)
    assert reproduce.main([*args, "--", *TINY]) == 0
    assert "2 finished, 0 to resume, 0 to start" in capsys.readouterr().out
    assert stamps == {d: os.path.getmtime(os.path.join(d, "checkpoints", "latest"))
                      for d in run_dirs}
    monkeypatch.undo()
    monkeypatch.setattr(reproduce, "load_paper_reference", lambda: fake_reference)

    # 3. Seed 1 crashed after its last checkpoint (no done marker), seed 2 during its first
    #    iteration (no checkpoint, no row); the grid now asks for 3 iterations.
    os.remove(os.path.join(run_dirs[0], "done.json"))
    os.remove(os.path.join(run_dirs[1], "done.json"))
    shutil.rmtree(os.path.join(run_dirs[1], "checkpoints"))
    os.remove(os.path.join(run_dirs[1], "progress.csv"))
    longer = [a if a != "80" else "120" for a in args]
    assert reproduce.main([*longer, "--", *TINY]) == 0
    assert "0 finished, 1 to resume, 1 to start" in capsys.readouterr().out
    resumed, restarted = (read_rows(d) for d in run_dirs)
    assert [r["Itr"] for r in resumed] == ["0", "1", "2"]
    assert resumed[:2] == first_rows[run_dirs[0]]  # continued, not restarted
    with open(os.path.join(run_dirs[0], "log.txt")) as f:
        assert "Resuming" in f.read()
    assert [r["Itr"] for r in restarted] == ["0", "1", "2"]
    assert restarted[0]["Time"] != first_rows[run_dirs[1]][0]["Time"]  # a fresh start


def test_a_finished_grid_does_not_import_tensorflow(tmp_path):
    (run,) = reproduce.plan_runs([("promp", "PointEnvRandGoal", (1,))], 40, str(tmp_path), TINY)
    fake_run(run.run_dir, run.params, [-1.0], 40)
    with open(os.path.join(run.run_dir, "done.json"), "w") as f:
        json.dump({"n_itr": 1}, f)
    argv = ["--algos", "promp", "--envs", "PointEnvRandGoal", "--seeds", "1", "--timesteps",
            "40", "--out", str(tmp_path), "--", *TINY]
    code = (f"import sys; sys.path.insert(0, {EXPERIMENTS!r}); import reproduce; "
            f"code = reproduce.main({argv!r}); "
            "assert 'tensorflow' not in sys.modules, 'tensorflow imported'; sys.exit(code)")
    root = os.path.dirname(EXPERIMENTS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 finished, 0 to resume, 0 to start" in result.stdout


def test_compare_only_draws_unfinished_runs_and_launches_nothing(tmp_path, monkeypatch, capsys):
    (run,) = reproduce.plan_runs([("promp", "PointEnvRandGoal", (1,))], 400, str(tmp_path), TINY)
    fake_run(run.run_dir, run.params, [-30.0, -20.0], 40)  # 2 of its 10 iterations, no done.json
    fake_reference = [ReferencePoint("figX", "PointEnvRandGoal", "ProMP", "Step_1-AverageReturn",
                                     60.0, -2.0, 1.0)]
    monkeypatch.setattr(reproduce, "load_paper_reference", lambda: fake_reference)
    monkeypatch.setattr(reproduce, "LocalLauncher", NoLauncher)
    argv = ["--algos", "promp", "--envs", "PointEnvRandGoal", "--seeds", "1", "--timesteps",
            "400", "--out", str(tmp_path), "--compare_only", "--", *TINY]
    assert reproduce.main(argv) == 0
    assert "0 finished, 0 to resume, 1 to start" in capsys.readouterr().out
    with open(os.path.join(str(tmp_path), "reproduction.md")) as f:
        assert "| PointEnvRandGoal | ProMP | 60 | -2 +- 1 |" in f.read()
    assert not os.path.exists(os.path.join(run.run_dir, "done.json"))


def test_comparison_of_one_seed_and_of_the_other_figures_batch(tmp_path):
    """LVC-VPG has returns in fig2 (40 x 20) and fig3 (20 x 40): a run meets only its batch's."""
    params = {"algo": "vpg_maml", "inner_type": "likelihood_ratio",
              "env": "HalfCheetahRandDirecEnv", "meta_batch_size": 40,
              "rollouts_per_meta_task": 20, "max_path_length": 100, "num_inner_grad_steps": 1,
              "n_itr": 63, "sampling_mode": "budget", "seed": 1}
    run = fake_run(tmp_path / "s1", params, np.full(63, 62.5), 160_000)
    curve = comparison.Curve(get_algorithm("lvc_vpg"), "HalfCheetahRandDirecEnv",
                            "Step_1-AverageReturn", [run])
    text = comparison.comparison_markdown([curve], paper.load_paper_reference(), "reproduce.py ...")
    assert "| LVC-VPG | 1e7 | 90 +- 20 | 62.5 (1) | -27.5 | no |" in text  # one seed: no "+- 0.0"
    assert "fig3" not in text and "4.5e7" not in text  # the variance study's points are not ours
    assert "on HalfCheetahRandDirecEnv: seed 1," in text


def test_comparison_rows_are_grouped_by_env(tmp_path):
    """Curves come in grid order (algorithm-major); the table lists them env by env."""
    def curve(algo, env, horizon, name):
        params = {"algo": algo, "env": env, "meta_batch_size": 40, "rollouts_per_meta_task": 20,
                  "max_path_length": horizon, "num_inner_grad_steps": 1, "n_itr": 40,
                  "sampling_mode": "budget", "seed": 1}
        per_itr = 40 * 20 * horizon * 2
        run = fake_run(tmp_path / name, params, np.full(70, 100.0), per_itr)
        return comparison.Curve(get_algorithm(algo), env, "Step_1-AverageReturn", [run])

    curves = [curve("promp", "HalfCheetahRandDirecEnv", 100, "a"),
              curve("promp", "HopperRandParamsEnv", 200, "b"),
              curve("trpo_maml", "HalfCheetahRandDirecEnv", 100, "c")]
    text = comparison.comparison_markdown(curves, paper.load_paper_reference(), "reproduce.py ...")
    detail = text[text.index("## Every paper value the runs reach"):]
    rows = [line.split("|")[1:3] for line in detail.splitlines() if line.startswith("| ")][1:]
    assert [(env.strip(), algo.strip()) for env, algo in rows][:3] == [
        ("HalfCheetahRandDirecEnv", "ProMP"), ("HalfCheetahRandDirecEnv", "MAML-TRPO"),
        ("HopperRandParamsEnv", "ProMP")]


def drawn_reference_x(ax):
    """The x of every paper point drawn in a panel (error-bar containers)."""
    return sorted(float(x) for container in ax.containers for x in container.lines[0].get_xdata())


def test_reached_view_ends_where_the_runs_end_and_names_the_later_points(tmp_path):
    """Runs to 1e7 fill a tenth of an axis to 1e8: the reached view ends at the runs' end, draws
    the paper's points up to there and names the later ones; the full view keeps them all."""
    params = {"algo": "promp", "env": "HalfCheetahRandDirecEnv", "meta_batch_size": 40,
              "rollouts_per_meta_task": 20, "max_path_length": 100, "num_inner_grad_steps": 1,
              "n_itr": 63, "sampling_mode": "budget", "seed": 1}
    run = fake_run(tmp_path / "s1", params, np.linspace(0.0, 180.0, 63), 160_000)
    curve = comparison.Curve(get_algorithm("promp"), "HalfCheetahRandDirecEnv",
                             "Step_1-AverageReturn", [run])
    reference = paper.load_paper_reference()
    reached = comparison.comparison_figure([curve], reference, ["HalfCheetahRandDirecEnv"],
                                           view="reached")
    full = comparison.comparison_figure([curve], reference, ["HalfCheetahRandDirecEnv"],
                                        view="full")
    (ax_reached,), (ax_full,) = reached.axes, full.axes
    assert ax_reached.get_xlim() == pytest.approx((0.0, 63 * 160_000 * comparison.REACH_MARGIN))
    assert drawn_reference_x(ax_reached) == [1e7]
    assert [t.get_text() for t in ax_reached.texts] == ["paper also at 2e7, 5e7, 1e8 (full view)"]
    assert ax_full.get_xlim()[1] > 1e8
    assert drawn_reference_x(ax_full) == [1e7, 2e7, 5e7, 1e8]
    assert not ax_full.texts
    with pytest.raises(ValueError, match="view 'wide': expected one of reached, full"):
        comparison.comparison_figure([curve], reference, ["HalfCheetahRandDirecEnv"], view="wide")


def test_long_horizon_grid_gives_the_later_points_and_promps_lead(tmp_path, monkeypatch, capsys):
    """A grid to 1e8 (``--compare_only``, nothing launched): its table gives 2e7, 5e7 and 1e8
    with the 95% interval, "not reached" where the runs are short, and ProMP's lead."""
    out = str(tmp_path / "grid_1e8")
    runs = reproduce.plan_runs([("promp", "HalfCheetahRandDirecEnv", (1, 2, 3)),
                                ("trpo_maml", "HalfCheetahRandDirecEnv", (1, 2, 3))], 1e8, out, [])
    assert {run.n_itr for run in runs} == {625}  # 625 x 160k = 1e8
    for run in runs:
        seed = run.params["seed"]
        if run.algo.name == "promp":  # all 625 iterations: itr 124 is 2e7, 624 is 1e8
            fake_run(run.run_dir, run.params, 0.5 * np.arange(625) + seed, 160_000)
        else:  # 200 iterations: 3.2e7
            fake_run(run.run_dir, run.params, 0.25 * np.arange(200) + seed, 160_000)
    monkeypatch.setattr(reproduce, "LocalLauncher", NoLauncher)
    assert reproduce.main(["--compare_only", "--timesteps", "1e8", "--out", out]) == 0
    assert "0 finished, 0 to resume, 6 to start" in capsys.readouterr().out
    for name in reproduce.COMPARISON_FILES:
        assert os.path.getsize(os.path.join(out, name)) > 0
    with open(os.path.join(out, "reproduction.md")) as f:
        text = f.read()
    later = text[text.index("## The paper's later points, to 1e8 timesteps"):
                 text.index("## Every paper value the runs reach")]
    # promp at 2e7: 62 + seed -> 64.0 +- 1.0, t(0.975, 2) x 1 / sqrt(3) = 2.48
    assert "| HalfCheetahRandDirecEnv | ProMP | 2e7 | 245 +- 15 | 3 | 64.0 +- 1.0 | [61.5, 66.5] " \
           "| no |" in later
    assert "| HalfCheetahRandDirecEnv | ProMP | 1e8 | 307 +- 10 | 3 | 314.0 +- 1.0 | " \
           "[311.5, 316.5] | no |" in later
    assert "| HalfCheetahRandDirecEnv | MAML-TRPO | 2e7 | 175 +- 15 | 3 | 33.0 +- 1.0 |" in later
    for step, paper_value in (("5e7", "215 +- 10"), ("1e8", "255 +- 10")):
        assert (f"| HalfCheetahRandDirecEnv | MAML-TRPO | {step} | {paper_value} | 0 | not reached "
                "(3 seeds, the furthest at 3.2e7) | | |") in later
    assert "- HalfCheetahRandDirecEnv at 2e7: ProMP's lead over MAML-TRPO +31.0 (paper +70); " \
           "95% CIs [61.5, 66.5] and [30.5, 35.5]: separate: yes" in later
    assert "at 1e8: ProMP's lead" not in later  # MAML-TRPO has not reached it
    # a grid to 1e7 has no such table: its later points are listed as not reached
    assert "later points" not in comparison.comparison_markdown(
        reproduce.load_curves(runs), paper.load_paper_reference(), "reproduce.py ...", 1e7)


def test_reached_table_has_a_figure_column_only_when_figures_differ(tmp_path):
    params = {"algo": "promp", "env": "PointEnvRandGoal", "meta_batch_size": 2,
              "rollouts_per_meta_task": 2, "max_path_length": 5, "num_inner_grad_steps": 1,
              "n_itr": 10, "sampling_mode": "budget", "seed": 1}
    run = fake_run(tmp_path / "s1", params, np.full(10, -5.0), 40)
    curve = comparison.Curve(get_algorithm("promp"), "PointEnvRandGoal", "Step_1-AverageReturn",
                             [run])

    def point(figure, timesteps):
        return ReferencePoint(figure, "PointEnvRandGoal", "ProMP", "Step_1-AverageReturn",
                              timesteps, -4.0, 1.0)

    one = comparison.comparison_markdown([curve], [point("figA", 100)], "reproduce.py ...")
    assert "| env | algorithm | timesteps | paper | ours (seeds) | ours - paper | within |" in one
    assert "Every row: figA, Step_1-AverageReturn." in one
    assert "| PointEnvRandGoal | ProMP | 100 | -4 +- 1 | -5.0 (1) | -1.0 | yes |" in one
    two = comparison.comparison_markdown([curve], [point("figA", 100), point("figB", 200)],
                                         "reproduce.py ...")
    assert "| env | algorithm | figure | timesteps |" in two
    assert "| PointEnvRandGoal | ProMP | figB | 200 |" in two and "Every row" not in two


# ---------------------------------------------------------------------------- mixed-seed grids
def test_cells_parse_and_format_round_trip():
    assert reproduce.parse_cell("promp:HalfCheetahRandDirecEnv:1-3,7") == (
        "promp", "HalfCheetahRandDirecEnv", (1, 2, 3, 7))
    assert reproduce.parse_cell("promp:pkg.mod:Env:2") == ("promp", "pkg.mod:Env", (2,))
    assert reproduce.format_seeds((7, 1, 2, 3, 9, 10)) == "1-3,7,9-10"
    for bad in ("promp:Env", "promp:Env:x", "promp:Env:1,1", "promp:Env:-1", ":Env:1"):
        with pytest.raises(ValueError, match="ALGO:ENV:SEEDS"):
            reproduce.parse_cell(bad)


def test_grid_merges_product_and_cells_and_discovers_runs(tmp_path):
    args, _ = reproduce.parse_args(["--algos", "promp", "--envs", "PointEnvRandGoal", "--seeds",
                                    "1", "2", "--cells", "promp:PointEnvRandGoal:2-4",
                                    "trpo_maml:PointEnvRandGoal:5", "--timesteps", "40",
                                    "--out", str(tmp_path)])
    cells = reproduce.grid_cells(args)
    assert cells == [("promp", "PointEnvRandGoal", (1, 2, 3, 4)),
                     ("trpo_maml", "PointEnvRandGoal", (5,))]
    for algo, env, seeds in cells:
        for seed in seeds:
            run_dir = tmp_path / algo / env / f"seed_{seed}"
            run_dir.mkdir(parents=True)
            (run_dir / "params.json").write_text("{}")
    (tmp_path / "promp" / "PointEnvRandGoal" / "seed_9").mkdir()  # no params.json: not a run
    found, _ = reproduce.parse_args(["--compare_only", "--timesteps", "40", "--out",
                                     str(tmp_path)])
    assert reproduce.grid_cells(found) == cells
    command = reproduce.grid_command(cells, args, [])
    assert "--cells promp:PointEnvRandGoal:1-4 trpo_maml:PointEnvRandGoal:5" in command


def test_confidence_interval_is_the_t_interval_of_the_mean():
    mean, std, half = comparison.confidence_interval([1.0, 2.0, 3.0])
    assert (mean, std) == (2.0, 1.0)
    assert half == pytest.approx(4.303 / np.sqrt(3))  # t(0.975, 2)
    assert comparison.confidence_interval([5.0]) is None


def test_summary_lists_every_paper_cell_with_not_run():
    point = ReferencePoint("fig2", "PointEnvRandGoal", "ProMP", "Step_1-AverageReturn", 100,
                           10.0, 1.0)
    other = ReferencePoint("fig2", "PointEnvRandGoal", "MAML-TRPO", "Step_1-AverageReturn", 100,
                           5.0, 1.0)
    runs = [plot.LoggedRun(f"s{i}", {"n_timesteps": np.array([0.0, 200.0]),
                                     "Step_1-AverageReturn": np.array([0.0, 2.0 * v])}, {})
            for i, v in enumerate((9.0, 10.0, 11.0))]
    curve = comparison.Curve(get_algorithm("promp"), "PointEnvRandGoal", "Step_1-AverageReturn",
                            runs)
    old = comparison.SUMMARY_TIMESTEPS
    comparison.SUMMARY_TIMESTEPS = 100
    try:
        lines = comparison.summary_markdown([curve], [point, other])
    finally:
        comparison.SUMMARY_TIMESTEPS = old
    (promp,) = [line for line in lines if "| ProMP |" in line]
    (trpo,) = [line for line in lines if "| MAML-TRPO |" in line]
    assert "| 3 | 10.0 +- 1.0 | [7.5, 12.5] | yes |" in promp
    assert "| 0 | not run |" in trpo


def _benchmark_module(name):
    """Import ``benchmarks/<name>.py`` (the benchmarks folder is not a package)."""
    sys.path.insert(0, os.path.join(os.path.dirname(EXPERIMENTS), "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def test_takeoff_is_the_first_trailing_mean_at_the_threshold():
    takeoff = _benchmark_module("takeoff")
    returns = np.array([0.0, 0.0, 40.0, 50.0, 30.0, 60.0])
    assert takeoff.takeoff_iteration(returns, threshold=35.0, window=3) == 4  # (40+50+30)/3
    assert takeoff.takeoff_iteration(returns, threshold=35.0, window=1) == 2
    assert takeoff.takeoff_iteration(returns, threshold=100.0) is None


def test_binned_mean_curve_pools_seeds_at_the_bin_start():
    takeoff = _benchmark_module("takeoff")
    seed_a = (np.array([100.0, 200.0, 300.0, 400.0]), np.array([0.0, 10.0, 20.0, 30.0]))
    seed_b = (np.array([100.0, 200.0, 300.0, 400.0]), np.array([2.0, 12.0, 22.0, 32.0]))
    xs, means = takeoff.binned_mean_curve([seed_a, seed_b], round_x=None)
    np.testing.assert_allclose(xs, [100, 200, 300, 400])
    np.testing.assert_allclose(means, [1, 11, 21, 31])
    # Bins of 250: [0, 250) holds x = 100, 200 and is drawn at 0; [250, 500) at 250.
    xs, means = takeoff.binned_mean_curve([seed_a, seed_b], round_x=250.0)
    np.testing.assert_allclose(xs, [0, 250])
    np.testing.assert_allclose(means, [6, 26])


def test_exact_rank_test_counts_every_split():
    takeoff = _benchmark_module("takeoff")
    assert takeoff.mann_whitney_u([1.0], [1.0]) == 0.5
    # Fully separated 3 against 3: 1 split of C(6, 3) = 20 is as extreme on each side.
    u, p_one, p_two = takeoff.exact_rank_test([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert (u, p_one, p_two) == (9.0, 1 / 20, 2 / 20)
    # Reversed: the one-sided p (first tends smaller) is then every split.
    assert takeoff.exact_rank_test([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])[1] == 1.0
    # Identical samples sit at the null mean: nothing is more central.
    assert takeoff.exact_rank_test([1.0, 1.0], [1.0, 1.0]) == (2.0, 1.0, 1.0)


def test_cell_diagnostics_names_each_setting_the_run_changed():
    diagnostics = _benchmark_module("cell_diagnostics")
    entry = {"inner_lr": 0.05, "hidden_sizes": [64, 64], "max_path_length": 200, "note": "x"}
    params = {"inner_lr": 0.1, "hidden_sizes": [64, 64]}
    assert diagnostics.settings_mismatches(entry, params) == [
        "inner_lr: paper 0.05, run 0.1", "max_path_length: paper 200, run '<missing>'"]
    assert diagnostics.settings_mismatches(entry, {**params, "inner_lr": 0.05,
                                                   "max_path_length": 200}) == []


def test_cell_diagnostics_reads_the_original_codes_settings_in_our_names():
    diagnostics = _benchmark_module("cell_diagnostics")
    entry = {"num_ppo_steps": 3, "sampling_mode": "budget", "inner_lr": 0.05}
    original = {"num_promp_steps": 3, "inner_lr": 0.05}  # the original run script's params.json
    assert diagnostics.settings_mismatches(entry, original) == []
    assert diagnostics.settings_mismatches(entry, {**original, "num_promp_steps": 5}) == [
        "num_ppo_steps: paper 3, run 5"]
    # our runs are read as they are: no key is invented for them
    assert diagnostics.settings_mismatches(entry, {"num_ppo_steps": 3, "inner_lr": 0.05}) == [
        "sampling_mode: paper 'budget', run '<missing>'"]


def test_cell_diagnostics_splits_episodes_at_the_nearest_iteration():
    diagnostics = _benchmark_module("cell_diagnostics")
    columns = {  # two iterations of 1000 nominal steps; 600 real steps in the second
        "Itr": np.array([0.0, 1.0]), "n_timesteps": np.array([1000.0, 2000.0]),
        "n_timesteps_real": np.array([1000.0, 1600.0]),
        "Step_0-NumTrajs": np.array([30.0, 2.0]), "Step_1-NumTrajs": np.array([20.0, 2.0]),
        "Step_0-AverageReturn": np.array([5.0, 50.0]), "Step_1-AverageReturn": np.array([7.0, 70.0]),
        "Step_1-AvgForwardVel": np.array([0.1, 0.5]),
    }
    row = diagnostics.seed_row(columns, timesteps=1500.0)
    assert row["start_step0"] == 5.0 and row["start_step1"] == 7.0
    assert row["start_length"] == 1000.0 / 50
    assert row["at"] == pytest.approx(38.5)  # halfway between 7 and 70
    assert row["nearest_itr"] == 0.0  # ties go to the earlier iteration
    row = diagnostics.seed_row(columns, timesteps=1900.0)
    assert (row["nearest_itr"], row["length"], row["velocity"]) == (1.0, 600.0 / 4, 0.5)
    assert np.isnan(diagnostics.seed_row(columns, timesteps=3000.0)["at"])  # not reached
