"""docs/compute_budget.rst's tables are benchmarks/figure_time.py's output on the committed runs."""

from __future__ import annotations

import os
import sys

import pytest

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
sys.path.insert(0, REPO)
from benchmarks import figure_time  # noqa: E402


def test_the_page_holds_the_scripts_current_output():
    page = figure_time.PAGE.read_text()
    generated = page.split(figure_time.BEGIN + "\n", 1)[1].split(figure_time.END + "\n", 1)[0]
    assert generated.strip() == figure_time.page_text().strip(), (
        "docs/compute_budget.rst is out of date: run python benchmarks/figure_time.py --write"
    )


def test_the_grid_is_figure_2s_25_cells():
    cells = figure_time.figure_cells()
    assert len(cells) == 25 and len(set(cells)) == 25
    assert ("lvc_vpg", "HopperRandParamsEnv") in cells
    assert ("e_maml_vpg", "HopperRandParamsEnv") not in cells  # not in the paper's figure


def test_a_cell_without_runs_is_priced_from_its_proxy_on_the_same_env():
    cells = {(c.algo, c.env): c for c in figure_time.priced_cells()}
    cell = cells[("lvc_vpg", "Walker2DRandParamsEnv")]
    assert cell.seeds == 0
    ratio = (cells[("lvc_vpg", "HalfCheetahRandDirecEnv")].seconds_per_iteration
             / cells[("promp", "HalfCheetahRandDirecEnv")].seconds_per_iteration)
    promp = cells[("promp", "Walker2DRandParamsEnv")]
    assert cell.seconds_per_iteration == pytest.approx(promp.seconds_per_iteration * ratio)
    assert cell.iterations(1e7) == promp.iterations(1e7) == 32  # 40 x 20 x 200 x 2 per iteration


def test_longest_first_scheduling():
    # 5 | 4 -> 5 | 4+3 -> 5+3 | 7 -> 8 | 7+1
    assert figure_time.makespan([3, 1, 5, 3, 4], 2) == 8
    assert figure_time.makespan([3, 1, 5], 10) == 5
    assert figure_time.makespan([2.0] * 6, 3) == 4.0
