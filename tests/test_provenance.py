"""provenance.json: each launch of a run records the commit, package versions and machine."""

import importlib.metadata
import subprocess

import numpy as np

from meta_policy_search.experiment import provenance


def test_a_launch_records_this_checkouts_commit_and_the_installed_versions(tmp_path):
    record = provenance.record_launch(str(tmp_path), start_itr=0)
    head = subprocess.run(["git", "-C", provenance.SOURCE_DIR, "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()
    if head:  # a source checkout (an installed wheel records None)
        assert record["git_commit"] == head and isinstance(record["git_dirty"], bool)
    assert record["packages"]["numpy"] == np.__version__
    assert set(provenance.RECORDED_PACKAGES) == set(record["packages"])
    for name, version in record["packages"].items():  # None exactly when not installed
        try:
            assert version == importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            assert version is None
    assert record["machine"]["usable_cores"] >= 1 and record["machine"]["python"]
    assert provenance.read_provenance(str(tmp_path)) == [record]


def test_a_resume_appends_a_record_and_a_fresh_start_replaces_them(tmp_path):
    first = provenance.record_launch(str(tmp_path), start_itr=0)
    resumed = provenance.record_launch(str(tmp_path), start_itr=27)
    assert [r["start_itr"] for r in provenance.read_provenance(str(tmp_path))] == [0, 27]
    assert provenance.read_provenance(str(tmp_path)) == [first, resumed]
    provenance.record_launch(str(tmp_path), start_itr=0)
    assert [r["start_itr"] for r in provenance.read_provenance(str(tmp_path))] == [0]


def test_a_directory_without_records_reads_as_none(tmp_path):
    assert provenance.read_provenance(str(tmp_path)) == []
