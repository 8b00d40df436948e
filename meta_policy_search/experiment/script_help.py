"""What the scripts' ``--help`` says beyond each flag: the environments and the algorithms, both
derived from their registries, and the formatter that appends each flag's default once.

The env list comes from :data:`~meta_policy_search.envs.registry.ENV_CLASS_NAMES` and
:func:`~meta_policy_search.experiment.paper.paper_envs` (the environments of the ProMP paper,
marked), so a new env shows up in every ``--help`` without an edit here; ``reproduce.py
--help`` lists :data:`~meta_policy_search.experiment.registry.ALGORITHMS` itself, and a run
script's help says so. Nothing here imports TensorFlow: ``--help`` stays instant.
"""

from __future__ import annotations

import argparse
import re

from meta_policy_search.envs.env_spec import ENV_SPEC_FORMAT
from meta_policy_search.envs.registry import ENV_CLASS_NAMES, METAWORLD_NAME_PREFIXES
from meta_policy_search.experiment.paper import paper_envs

PAPER_MARK = "*"
"""Appended to the name of an environment the ProMP paper ran."""

ALGORITHM_LIST_WHERE = (
    "Algorithms: one run script each in experiments/; `python experiments/reproduce.py --help` "
    "lists them all (their registry: meta_policy_search/experiment/registry.py; a docs page "
    "each under docs/algorithms/)"
)
"""Where a run script's ``--help`` sends a reader for the other algorithms."""

_STATES_DEFAULT = re.compile(r"\(default\b|\bdefault\s*:", re.IGNORECASE)


def env_names_text() -> str:
    """Every built-in env name, the paper's marked with :data:`PAPER_MARK`, and the other forms
    ``--env`` accepts (Meta-World names, a user class), as one line of text."""
    paper = set(paper_envs())
    names = [name + (PAPER_MARK if name in paper else "") for name in ENV_CLASS_NAMES]
    metaworld = " or ".join(prefix + "<env>" if prefix.endswith("-") else prefix
                            for prefix in METAWORLD_NAME_PREFIXES)
    return (f"{', '.join(names)} ({PAPER_MARK}: an environment of the ProMP paper, whose settings "
            f"--paper_config applies); Meta-World: {metaworld} (optional install); your own "
            f"MetaEnv class: {ENV_SPEC_FORMAT}")


def run_script_epilog() -> str:
    """The text after a run script's flags: the environments ``--env`` takes and where the
    algorithms are listed."""
    return f"Environments (--env): {env_names_text()}. {ALGORITHM_LIST_WHERE}."


class DefaultsOnceHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``argparse.ArgumentDefaultsHelpFormatter`` that leaves alone a help string which states
    its own default ("(default: the run's)"): appending ``(default: None)`` to it would print a
    second, contradicting default."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        help_text = action.help or ""
        if _STATES_DEFAULT.search(help_text):
            return help_text
        return super()._get_help_string(action)
