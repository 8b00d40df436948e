"""The files every research repository has, and the Makefile's split between training and
development dependencies."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
DEV_ONLY = ("pytest", "sphinx", "furo", "sphinx-mathjax-offline", "ruff", "mypy")


def read(name: str) -> str:
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return f.read()


def requirement_names(name: str) -> set[str]:
    lines = [line.split("#")[0].strip() for line in read(name).splitlines()]
    return {re.split(r"[=<>\[]", line)[0] for line in lines if line}


def test_training_requirements_leave_out_the_tests_docs_and_linters():
    assert not requirement_names("requirements.txt") & set(DEV_ONLY)
    assert requirement_names("requirements-dev.txt") == set(DEV_ONLY)


def test_training_requirements_pin_tensorboard():
    """tensorflow 2.21 does not require tensorboard, so `make train` must install it for the
    docs' `tensorboard --logdir data/` to work (tests/test_run_outputs.py reads a run's events
    with it)."""
    pins = dict(line.split("==") for line in read("requirements.txt").splitlines()
                if "==" in line and not line.startswith("#"))
    assert pins["tensorboard"] == pins["tensorflow"] == "2.21.0"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_train_installs_no_dev_requirements_and_make_test_does(tmp_path):
    def dry_run(target: str) -> str:
        return subprocess.run(["make", "-n", target, f"VENV={tmp_path / 'venv'}"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout

    train = dry_run("train")
    assert "pip install -r requirements.txt" in train and "requirements-dev" not in train
    assert "[test" not in train and "docs]" not in train
    for target in ("test", "docs", "lint"):
        assert "pip install -r requirements-dev.txt" in dry_run(target), target


def test_citation_cff_cites_the_promp_paper():
    yaml = pytest.importorskip("yaml")  # PyYAML comes with ray, not pinned of its own
    citation = yaml.safe_load(read("CITATION.cff"))
    assert citation["cff-version"] == "1.2.0" and citation["license"] == "MIT"
    paper = citation["preferred-citation"]
    assert paper["title"] == "ProMP: Proximal Meta-Policy Search" and paper["year"] == 2019
    assert [a["family-names"] for a in paper["authors"]] == [
        "Rothfuss", "Lee", "Clavera", "Asfour", "Abbeel"]
    assert "1810.06784" in paper["url"]


def test_citation_cff_gives_the_softwares_version_and_release_date():
    """Version as setup.py and the package say, released on the date CHANGELOG.md gives it."""
    yaml = pytest.importorskip("yaml")
    import meta_policy_search

    citation = yaml.safe_load(read("CITATION.cff"))
    version = re.search(r'version="([^"]+)"', read("setup.py")).group(1)
    assert str(citation["version"]) == version == meta_policy_search.__version__
    released = re.search(rf"^## \[{re.escape(version)}\] - (\S+)$", read("CHANGELOG.md"), re.M)
    assert released is not None, f"CHANGELOG.md has no heading for version {version}"
    assert str(citation["date-released"]) == released.group(1)


def test_license_and_bibtex():
    """The BibTeX moved from the README to the docs' Citing page, which the README links."""
    license_text = read("LICENSE")
    assert license_text.startswith("MIT License") and "meta_policy_search authors" in license_text
    citing = read("docs/citing.rst")
    bibtex = citing[citing.index(".. code-block:: bibtex"):]
    assert "{ProMP}: Proximal Meta-Policy Search" in bibtex and "1810.06784" in bibtex
    assert "citing" in read("docs/index.rst").split(".. toctree::", 1)[1]
    assert "docs/citing.rst" in read("README.md")
    assert "## Unreleased" in read("CHANGELOG.md").replace("[Unreleased]", "Unreleased")


def test_the_resuming_docs_list_exactly_the_flags_a_resume_may_change():
    from meta_policy_search.experiment.configs import RESUME_CHANGEABLE

    page = read("docs/experiments.rst")
    start = page.index("Resuming\n--------\n") + len("Resuming\n--------\n")
    section = page[start:start + re.search(r"\n[^\n]+\n-{4,}\n", page[start:]).start()]
    listed = set(re.findall(r"``--(\w+)", section)) - {"resume"}
    assert listed == set(RESUME_CHANGEABLE) - {"dump_path"}
    assert "override the stored config" not in section  # the CLI refuses other flags
