"""The lines a run prints about its directory: where it writes, and the one-line commands that
resume, plot and meta-test it.

Printed on the console (not only in ``log.txt``) when the run starts and when it ends, so the
user of the default timestamped ``--dump_path`` need not search ``data/`` for it. The commands
name this process's Python and the run script as they were started, so they can be pasted into
the same shell.
"""

from __future__ import annotations

import os
import shlex
import sys


def _shown_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it, else absolute."""
    relative = os.path.relpath(os.path.abspath(path))
    return os.path.abspath(path) if relative.startswith(os.pardir) else relative


def run_script_path(script_path: str) -> str:
    """The run script of this process: the ``__main__`` file when it lies beside ``script_path``
    in ``experiments/`` (``gradient_variance.py`` training a run), else ``script_path`` (the
    registry's script of the run, for a run started from Python or its own script)."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file and os.path.dirname(os.path.realpath(main_file)) == os.path.dirname(
            os.path.realpath(script_path)):
        return main_file
    return script_path


def follow_up_commands(run_dir: str, script_path: str) -> dict[str, str]:
    """The commands that resume, plot and meta-test the run in ``run_dir``.

    Args:
        run_dir: the run directory (``--dump_path``).
        script_path: the registry's run script of the run (:func:`run_script_path`).

    Returns:
        ``{"resume": ..., "plot": ..., "meta-test": ...}``, each one shell line.
    """
    python = shlex.quote(_shown_path(sys.executable))
    script = run_script_path(script_path)
    experiments = os.path.dirname(script)
    directory = shlex.quote(_shown_path(run_dir))
    png = shlex.quote(_shown_path(os.path.join(run_dir, "learning_curves.png")))

    def command(script_path: str, arguments: str) -> str:
        return f"{python} {shlex.quote(_shown_path(script_path))} {arguments}"

    return {
        "resume": command(script, f"--dump_path {directory} --resume"),
        "plot": command(os.path.join(experiments, "plot.py"), f"{directory} --output {png}"),
        "meta-test": command(os.path.join(experiments, "meta_testing.py"), directory),
    }


def announce_run_dir(run_dir: str, script_path: str, state: str) -> None:
    """Print the run directory and :func:`follow_up_commands` to stdout.

    Args:
        run_dir: the run directory.
        script_path: the registry's run script of the run.
        state: what the run is doing, e.g. ``"started"`` or ``"finished"``, shown in the first
            line.
    """
    lines = [f"Run directory ({state}): {_shown_path(run_dir)}"]
    lines += [f"  {name + ':':<10} {command}"
              for name, command in follow_up_commands(run_dir, script_path).items()]
    print("\n".join(lines), flush=True)
