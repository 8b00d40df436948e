"""The tables the documentation generates at build time: per-algorithm hyperparameters
(docs/algorithm_tables.py) and the committed result files (docs/markdown_results.py)."""

from __future__ import annotations

import os
import sys

import pytest

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "docs")
sys.path.insert(0, DOCS)
import algorithm_tables  # noqa: E402
import markdown_results  # noqa: E402

sys.path.remove(DOCS)


def rows(table: str) -> list[list[str]]:
    """A list-table's rows as lists of cells."""
    result: list[list[str]] = []
    for line in table.splitlines():
        if line.startswith("   * -"):
            result.append([line[6:].strip()])
        elif line.startswith("     -"):
            result[-1].append(line[6:].strip())
    return result


def test_promp_flags_give_the_script_default_and_the_papers_value():
    table = {row[0]: row[1:] for row in rows(algorithm_tables.flag_table_rst(("promp",)))}
    assert table["``--clip_eps``"][:2] == ["0.3", "0.3"]
    assert table["``--inner_lr``"][:2] == ["0.1", "per env, below"]  # 0.05 on RandParams
    assert table["``--sampling_mode``"][:2] == ["rollouts", "budget"]
    assert table["``--init_inner_kl_penalty``"][0] == "5e-4"


def test_paper_table_has_the_varying_settings_per_env():
    table = rows(algorithm_tables.paper_table_rst(("promp",)))
    header, body = table[0], {row[0]: dict(zip(table[0], row)) for row in table[1:]}
    assert "``inner_lr``" in header and "``discount``" not in header  # constant: flag table
    assert body["``HopperRandParamsEnv``"]["``inner_lr``"] == "0.05"
    assert body["``HalfCheetahRandDirecEnv``"]["``inner_lr``"] == "0.1"
    assert body["``HumanoidRandDirec2DEnv``"]["``hidden_sizes``"] == "(128, 128)"


def test_pages_with_two_algorithms_name_where_they_differ():
    table = {row[0]: row[1:] for row in rows(algorithm_tables.flag_table_rst(("vpg_maml", "lvc_vpg")))}
    assert table["``--inner_type``"][0] == "log_likelihood (MAML-VPG); likelihood_ratio (LVC-VPG)"
    e_maml = {row[0]: row[1:] for row in rows(algorithm_tables.flag_table_rst(
        ("e_maml_trpo", "e_maml_vpg")))}
    assert e_maml["``--step_size``"][0] == "0.01 (E-MAML-TRPO); \u2014 (E-MAML-VPG)"


def test_one_format_for_small_numbers_in_the_per_env_table():
    from meta_policy_search.experiment.configs import ProMPConfig
    from meta_policy_search.experiment.paper import paper_config_table_rst

    table = paper_config_table_rst(ProMPConfig())
    assert "fixed 5e-4" in table and "0.0005" not in table


def test_markdown_results_become_rest():
    text = ("# Title `x`\n\nSome `code`s and ``a |b|`` here_ 2*3.\n\n| a | b |\n|---|---:|\n"
            "| `k` | 1 |\n\n- item [link](https://example.org)\n")
    rst = markdown_results.markdown_to_rst(text)
    assert ".. rubric:: Title ``x``" in rst
    assert "Some ``code``\\ s and ``a |b|`` here\\_ 2\\*3." in rst
    assert rows(rst) == [["a", "b"], ["``k``", "1"]]
    assert "* item `link <https://example.org>`__" in rst


def test_star_lists_become_bullets():
    """meta_testing.py writes its success-rate lines as "* " items: a list, not a paragraph."""
    from docutils.core import publish_parts

    rst = markdown_results.markdown_to_rst("Success rate:\n\n* promp: 0.25, 0.73\n* random-init: 0.00\n")
    html = publish_parts(rst, writer="html", settings_overrides={"report_level": 5})["body"]
    assert html.count("<li>") == 2 and "* promp" not in html


def test_result_files_render_without_bullets_or_en_dashes():
    """A lone "-" cell (no value) stays text, not a bullet list; "--flag" stays two hyphens
    under the smart quotes Sphinx applies (an en dash would break a copied command)."""
    from docutils.core import publish_parts

    text = "| a | b |\n|---|---|\n| - | run --env X |\n\nBudget run (--env Y --seed 1).\n"
    rst = markdown_results.markdown_to_rst(text)
    html = publish_parts(rst, writer="html",
                         settings_overrides={"smart_quotes": True, "report_level": 5})["body"]
    assert "<li>" not in html and "\u2013" not in html
    assert "run --env X" in html and "(--env Y --seed 1)" in html
    assert rows(rst)[1][0] == "\\-"


def test_every_algorithm_has_a_page():
    from meta_policy_search.experiment.registry import ALGORITHMS

    on_pages = [name for names in algorithm_tables.PAGE_ALGORITHMS.values() for name in names]
    assert sorted(on_pages + algorithm_tables.generated_page_names()) == sorted(ALGORITHMS)
    for page in algorithm_tables.PAGE_ALGORITHMS:
        assert os.path.isfile(os.path.join(DOCS, "algorithms", f"{page}.rst")), page


def test_an_algorithm_without_a_page_gets_a_generated_one():
    """First-order MAML has no hand-written page: its page documents its module and gives its
    flags (``--first_order`` defaulting to yes, from its registry overrides)."""
    assert algorithm_tables.generated_page_names() == ["fo_maml"]
    page = algorithm_tables.generated_page_rst("fo_maml")
    assert ".. automodule:: meta_policy_search.meta_algos.fo_maml" in page
    assert "experiments/fo_maml_run_mujoco.py" in page and "--first_order True" in page
    table = {row[0]: row[1:] for row in rows(page[page.index(".. list-table::"):])}
    assert table["``--first_order``"][0] == "yes"
    assert table["``--inner_type``"][0] == "log_likelihood"


def test_ppo_maml_page_shows_the_promp_settings_its_script_takes():
    """The paper did not run PPO-MAML; its script applies ProMP's per-env section, without the
    KL penalty PPO-MAML does not have."""
    table = rows(algorithm_tables.paper_table_rst(("ppo_maml",)))
    header, body = table[0], {row[0]: dict(zip(table[0], row)) for row in table[1:]}
    assert body["``HopperRandParamsEnv``"]["``inner_lr``"] == "0.05"
    assert body["``HopperRandParamsEnv``"]["``num_ppo_steps``"] == "3"
    assert not any("kl" in column for column in header)


def test_a_section_of_a_result_file_is_cut_at_the_next_heading():
    text = "# T\n\n## Every cell at 1e7\n\n| a |\n|---|\n| 1 |\n\n## Next\n\nmore\n"
    assert markdown_results.section(text, "Every cell") == "| a |\n|---|\n| 1 |\n"
    with pytest.raises(ValueError, match="no section '## Renamed...'"):
        markdown_results.section(text, "Renamed")


def test_the_long_runs_section_waits_for_its_folder_then_shows_its_figures_and_table(tmp_path):
    """The results page names the long runs' folder until it is committed; then it shows the
    grid's two figures and its table at the paper's later points."""
    empty = markdown_results.long_horizon_rst(str(tmp_path), "reproduction_1e8")
    assert "No long runs are committed yet: ``benchmarks/results/reproduction_1e8/``" in empty
    assert ".. figure::" not in empty
    grid = tmp_path / "reproduction_1e8"
    grid.mkdir()
    (grid / "reproduction.md").write_text(
        "# Reproduction\n\n## Every learning-curve cell of the paper (fig2) at 1e7 timesteps\n\n"
        "| a |\n|---|\n| not run |\n\n## The paper's later points, to 1e8 timesteps\n\n"
        "| env | timesteps |\n|---|---|\n| HalfCheetahRandDirecEnv | 1e8 |\n\n"
        "- lead line\n\n## Every paper value the runs reach\n\n| b |\n|---|\n| 2 |\n\n"
        "Reference points not reached yet:\n")
    for name in ("reproduction.png", "reproduction_full.png"):
        (grid / name).write_bytes(b"\x89PNG")
    rst = markdown_results.long_horizon_rst(str(tmp_path), "reproduction_1e8")
    assert ".. figure:: ../benchmarks/results/reproduction_1e8/reproduction.png" in rst
    assert ".. figure:: ../benchmarks/results/reproduction_1e8/reproduction_full.png" in rst
    assert rows(rst) == [["env", "timesteps"], ["HalfCheetahRandDirecEnv", "1e8"]]  # only that table
    assert "* lead line" in rst and "not run" not in rst
    # once every point is reached, the full view is the same figure: not shown twice
    text = (grid / "reproduction.md").read_text()
    (grid / "reproduction.md").write_text(text.replace("Reference points not reached yet:", ""))
    rst = markdown_results.long_horizon_rst(str(tmp_path), "reproduction_1e8")
    assert "reproduction.png" in rst and "reproduction_full.png" not in rst
