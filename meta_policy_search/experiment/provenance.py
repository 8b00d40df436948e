"""What produced a run: the code's git commit, the package versions and the machine.

Every launch of a run (a fresh start or a ``--resume``) appends one record to the run's
``provenance.json``, so a run continued over several sessions, machines or commits says which
iterations each of them produced.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import socket
import subprocess
from typing import Any

from meta_policy_search.utils.serialization import atomic_write_json

PROVENANCE_FILE = "provenance.json"
"""In a run directory: the list of launch records, oldest first."""

RECORDED_PACKAGES = ("meta_policy_search", "tensorflow", "numpy", "gymnasium", "mujoco", "ray",
                     "metaworld")
"""Packages whose installed versions a launch record lists (``None`` when not installed)."""

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git_state(path: str = SOURCE_DIR) -> dict[str, Any]:
    """The commit checked out at ``path`` and whether tracked files differ from it.

    Returns:
        ``{'git_commit': sha or None, 'git_dirty': bool or None}``; ``None`` where ``path`` is
        not in a git work tree or git is missing (e.g. an installed wheel).
    """
    def git(*args: str) -> str | None:
        try:
            result = subprocess.run(["git", "-C", path, *args], capture_output=True, text=True,
                                    timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return result.stdout if result.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"git_commit": None, "git_dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit.strip(), "git_dirty": None if status is None else bool(status)}


def package_versions(names: tuple[str, ...] = RECORDED_PACKAGES) -> dict[str, str | None]:
    """Installed version of each package in ``names`` (``None`` if it is not installed)."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def machine_description() -> dict[str, Any]:
    """Host name, CPU model, usable cores, OS and Python version of this machine."""
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "host": socket.gethostname(),
        "cpu_model": cpu,
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def launch_record(start_itr: int) -> dict[str, Any]:
    """One launch: the time, the first iteration it runs, git state, packages and machine."""
    return {
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "start_itr": int(start_itr),
        **git_state(),
        "packages": package_versions(),
        "machine": machine_description(),
    }


def record_launch(run_dir: str, start_itr: int) -> dict[str, Any]:
    """Append :func:`launch_record` to ``run_dir/provenance.json`` (atomically) and return it.

    A fresh start (``start_itr == 0``) replaces the records of an earlier run in that directory.
    """
    path = os.path.join(run_dir, PROVENANCE_FILE)
    records = read_provenance(run_dir) if start_itr > 0 else []
    record = launch_record(start_itr)
    atomic_write_json(path, [*records, record])
    return record


def read_provenance(run_dir: str) -> list[dict[str, Any]]:
    """The launch records of ``run_dir`` (empty if it has none)."""
    path = os.path.join(run_dir, PROVENANCE_FILE)
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        return json.load(f)
