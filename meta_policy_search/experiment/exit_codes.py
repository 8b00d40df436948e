"""The exit-status contract of every script in ``experiments/``, and the entry point that keeps it.

=======  ====================================================================================
status   meaning
=======  ====================================================================================
0        done (for ``reproduce.py`` and ``sweep.py``: every run finished)
1        a run failed after it started: a crash, a dead or hung sampler worker, non-finite
         values, a full disk. One ``error:`` line on stderr; the traceback is appended to the
         run's ``log.txt`` (or to a file the line names). A training run stays resumable.
2        bad usage or bad input: a flag, a value, a config file, a run directory that cannot be
         used. One ``error:`` line per problem, before TensorFlow loads wherever the check does
         not need it, and nothing is written.
130      interrupted (Ctrl-C); a training run stays resumable.
=======  ====================================================================================

:func:`run_script` is the ``if __name__ == "__main__"`` of each script: it calls the script's
``main``, maps what it raises to one line and a status, and exits. ``main`` itself keeps raising
ordinary exceptions, so tests and Python callers see them. No TensorFlow is imported here.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import traceback
import typing
from collections.abc import Callable
from typing import Any

from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.utils.disk_space import is_disk_full

EXIT_DONE = 0
"""The script did what it was asked."""
EXIT_RUN_FAILED = 1
"""A run failed after it started (the traceback is in a file the error line names)."""
EXIT_BAD_INPUT = 2
"""Bad usage or input: nothing was started or written (argparse uses the same status)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C, as shells report a process ended by SIGINT."""

EPILOG = (
    "exit status: 0 done; 1 the run failed after it started (one error line, the traceback in "
    "the run's log.txt or a file the line names); 2 bad usage or input (one error line, nothing "
    "written); 130 interrupted."
)
"""The contract in one sentence, for each script's ``--help``."""


def mark_failure(error: BaseException, traceback_path: str | None, hint: str = "") -> None:
    """Append ``error``'s traceback to ``traceback_path`` and remember where it went.

    Called where the failed work knows its log (the run script's runner: the run's ``log.txt``);
    :func:`run_script` then names that file in its one line, followed by ``hint``.

    Args:
        error: the exception being raised.
        traceback_path: the file to append the traceback to; ``None`` or an unwritable file
            (e.g. on a full disk) leaves it to :func:`run_script`.
        hint: what the user can do next, appended to the error line (e.g. how to resume).
    """
    written = None
    if traceback_path is not None:
        text = "".join(traceback.format_exception(error))
        try:
            with open(traceback_path, "a", encoding="utf-8") as f:
                f.write(text)
            written = traceback_path
        except OSError:
            pass
    error.__dict__["_failure_record"] = (written, hint)


def _failure_record(error: BaseException) -> tuple[str | None, str]:
    return error.__dict__.get("_failure_record", (None, ""))


def error_line(error: BaseException) -> str:
    """``error``'s message on one line: its type (unless self-explaining) and its text."""
    text = " ".join(str(error).split())
    if isinstance(error, (ConfigError, OSError)) and text:
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _save_traceback(error: BaseException, program: str) -> str | None:
    """Write ``error``'s traceback to a new temporary file; its path, or ``None`` if that fails."""
    with contextlib.suppress(OSError):
        fd, path = tempfile.mkstemp(prefix=f"{program}-traceback-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("".join(traceback.format_exception(error)))
        return path
    return None


def run_script(
    main: Callable[[], Any],
    program: str | None = None,
    bad_input: tuple[type[BaseException], ...] = (ConfigError,),
) -> typing.NoReturn:
    """Run a script's ``main`` and exit with the status of the contract (module docstring).

    Args:
        main: the script's entry point, called without arguments (it reads ``sys.argv``); an
            ``int`` it returns is the exit status, anything else means 0.
        program: the name in the error lines; default ``sys.argv[0]``'s file name.
        bad_input: exception types that mean bad input (status 2) when ``main`` raises them
            (its own checks); ``SystemExit`` (argparse, the run scripts' config errors) passes
            through unchanged.
    """
    program = program or os.path.basename(sys.argv[0] or "script")
    try:
        status = main()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        print(f"{program}: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except bad_input as error:
        print(f"{program}: error: {error_line(error)}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    except Exception as error:
        where, hint = _failure_record(error)
        if where is None and not is_disk_full(error):  # a full disk needs no traceback
            where = _save_traceback(error, program)
        details = f"{hint} (traceback in {where})" if where else hint
        print(f"{program}: error: {error_line(error)}{details}", file=sys.stderr)
        sys.exit(EXIT_RUN_FAILED)
    sys.exit(status if isinstance(status, int) and not isinstance(status, bool) else EXIT_DONE)
