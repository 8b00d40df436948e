"""Machine description recorded with every benchmark result (shared by the benchmark scripts)."""

from __future__ import annotations

import datetime
import json
import os
import platform
from collections.abc import Callable
from pathlib import Path

from meta_policy_search.experiment.provenance import machine_description


def machine_info(**versions: str) -> dict:
    """CPU model, core counts, Python and platform, the date, and the given package versions.

    Args:
        versions: package name -> version string, added as they are (e.g. ``numpy=np.__version__``).

    Returns:
        ``{'cpu_model', 'cpu_count', 'usable_cores', 'python', <versions>, 'platform', 'date'}``.
    """
    machine = machine_description()
    return {
        "cpu_model": machine["cpu_model"],
        "cpu_count": os.cpu_count(),
        "usable_cores": machine["usable_cores"],
        "python": platform.python_version(),
        **versions,
        "platform": platform.platform(),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def load_average() -> list[float]:
    """The 1, 5 and 15 min load averages, rounded to 2 decimals (recorded at a run's start and end)."""
    return [round(x, 2) for x in os.getloadavg()]


def write_results(
    output_dir: Path, stem: str, result: dict, write_markdown: Callable[[Path, dict], None]
) -> None:
    """Write ``result`` to ``output_dir/stem.json`` and, with ``write_markdown``, ``stem.md``."""
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / f"{stem}.json").write_text(json.dumps(result, indent=2, default=float) + "\n")
    write_markdown(output_dir / f"{stem}.md", result)
    print(f"wrote {output_dir / stem}.json and .md")


VERSION_LABELS = {"tensorflow": "TensorFlow", "numpy": "numpy", "mujoco": "MuJoCo",
                  "gymnasium": "gymnasium"}
"""Package keys of :func:`machine_info` shown by :func:`describe_machine`, in this order."""


def describe_machine(machine: dict, note: str = "") -> str:
    """The results files' closing line: CPU, cores, load average at the start and end, versions.

    Args:
        machine: :func:`machine_info`'s dict with ``load_average_start`` and ``load_average_end``
            added by the benchmark.
        note: added after the load averages' unit (e.g. ``'; the machine was shared'``).
    """
    versions = ", ".join(f"{label} {machine[key]}" for key, label in VERSION_LABELS.items()
                         if key in machine)
    return (f"Machine: {machine['cpu_model']}, {machine['usable_cores']} usable cores, load "
            f"average {machine['load_average_start']} at the start and "
            f"{machine['load_average_end']} at the end (1, 5, 15 min{note}); Python "
            f"{machine['python']}, {versions}; {machine['date']}.")
