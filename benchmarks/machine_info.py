"""Machine description recorded with every benchmark result (shared by the benchmark scripts)."""

from __future__ import annotations

import datetime
import json
import os
import platform
from collections.abc import Callable
from pathlib import Path


def machine_info(**versions: str) -> dict:
    """CPU model, core counts, Python and platform, the date, and the given package versions.

    Args:
        versions: package name -> version string, added as they are (e.g. ``numpy=np.__version__``).

    Returns:
        ``{'cpu_model', 'cpu_count', 'usable_cores', 'python', <versions>, 'platform', 'date'}``.
    """
    cpu = platform.processor()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu_model": cpu,
        "cpu_count": os.cpu_count(),
        "usable_cores": usable,
        "python": platform.python_version(),
        **versions,
        "platform": platform.platform(),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def write_results(
    output_dir: Path, stem: str, result: dict, write_markdown: Callable[[Path, dict], None]
) -> None:
    """Write ``result`` to ``output_dir/stem.json`` and, with ``write_markdown``, ``stem.md``."""
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / f"{stem}.json").write_text(json.dumps(result, indent=2, default=float) + "\n")
    write_markdown(output_dir / f"{stem}.md", result)
    print(f"wrote {output_dir / stem}.json and .md")
