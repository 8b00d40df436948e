"""README.md: short, its results table generated from reproduction.md, its links alive, its
Python example working, and no sentence in it that names a cause (those need their evidence
beside them, on the docs pages)."""

from __future__ import annotations

import os
import re
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
TOOLS = os.path.join(ROOT, "tools")
sys.path.insert(0, TOOLS)
import readme_results  # noqa: E402

sys.path.remove(TOOLS)


def read(name: str) -> str:
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return f.read()


def test_readme_results_table_is_the_one_generated_from_reproduction_md():
    readme = read("README.md")
    block = readme_results.results_table(read(os.path.join(
        "benchmarks", "results", "reproduction", "reproduction.md")))
    assert readme_results.replace_block(readme, block) == readme, (
        "README.md's results table differs from reproduction.md: run python "
        "tools/readme_results.py")
    assert "| HalfCheetahRandDirecEnv ProMP | 195 \u00b1 20 |" in readme  # the block is not empty


SMALL_REPRODUCTION_MD = """# Reproduction

## Every learning-curve cell of the paper (fig2) at 1e7 timesteps

Some text.

| figure | env | algorithm | paper | seeds | ours: mean +- std | 95% CI | paper in CI |
|---|---|---|---|---|---|---|---|
| fig2 | EnvA | ProMP | 195 +- 20 | 3 | 182.8 +- 19.2 | [169.1, 196.6] | yes |
| fig2 | EnvA | E-MAML-TRPO | 125 +- 20 | 1 | 148.9 | one seed | |
| fig2 | EnvB | LVC-VPG | 98 +- 10 | 0 | not run | | |

## Every paper value the runs reach

| env | algorithm | figure | metric | timesteps | paper | ours | seeds | ours - paper | within |
|---|---|---|---|---|---|---|---|---|---|
| EnvA | ProMP | fig2 | Step_1-AverageReturn | 1e7 | 195 +- 20 | 1.0 | 3 | 1 | yes |
"""


def test_results_table_lists_the_cells_with_runs():
    table = readme_results.results_table(SMALL_REPRODUCTION_MD)
    rows = [line for line in table.splitlines() if line.startswith("| Env")]
    assert rows == ["| EnvA ProMP | 195 \u00b1 20 | 182.8 \u00b1 19.2 [169.1, 196.6] | 3 |",
                    "| EnvA E-MAML-TRPO | 125 \u00b1 20 | 148.9 (one seed) | 1 |"]
    assert "2 of the paper's 3 figure-2 cells have runs." in table


def test_results_table_names_what_reproduction_md_lacks():
    with pytest.raises(ValueError, match="no section"):
        readme_results.results_table("# Reproduction\n\nnothing here\n")
    without_ci = SMALL_REPRODUCTION_MD.replace("| 95% CI |", "| CI |")
    with pytest.raises(ValueError, match="lacks the columns \\['95% CI'\\]"):
        readme_results.results_table(without_ci)


def test_readme_is_short_and_names_no_cause():
    readme = read("README.md")
    assert len(readme.splitlines()) <= 150
    for phrase in ("because", "accounts for", "account for", "is not made by", "not made by our",
                   "made by our", "shared", "caused", "due to"):
        assert phrase not in readme.lower(), phrase


def test_readme_links_point_to_files_of_the_repository():
    links = re.findall(r"\]\(([^)#]+)\)", read("README.md"))
    local = [link for link in links if not link.startswith("http")]
    assert "docs/citing.rst" in local and "docs/algorithms/ppo_maml.rst" in local
    for link in local:
        assert os.path.exists(os.path.join(ROOT, link)), link


def test_readme_python_example_trains(tmp_path, monkeypatch, capsys):
    """The README's example as written, with 2 iterations instead of 20."""
    from meta_policy_search.utils import logger

    readme = read("README.md")
    section = readme[readme.index("## From Python"):]
    start = section.index("```python\n") + len("```python\n")
    code = section[start:section.index("\n```", start)]
    assert "n_itr=20" in code
    monkeypatch.chdir(tmp_path)
    try:
        exec(compile(code.replace("n_itr=20", "n_itr=2"), "README.md", "exec"), {})
    finally:
        logger.reset()
    assert "itr 1/1 | R0=" in capsys.readouterr().out
