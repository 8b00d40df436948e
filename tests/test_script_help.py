"""The scripts' ``--help``: every run script lists the environments (the paper's marked) and says
where the algorithms are listed, ``reproduce.py`` lists both, and no flag states its default
twice. The lists must come from the registries, so the expected names are read from them."""

from __future__ import annotations

import importlib.util
import os
import re
import sys

import pytest

from meta_policy_search.envs.registry import ENV_CLASS_NAMES
from meta_policy_search.experiment.paper import paper_envs
from meta_policy_search.experiment.registry import ALGORITHMS

EXPERIMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "experiments")
RUN_SCRIPTS = sorted({a.script for a in ALGORITHMS.values()} | {"promp_run_point_mass"})
OTHER_SCRIPTS = ("reproduce", "meta_testing", "render", "plot", "sweep")
PAPER_MARKED = {env: env in paper_envs() for env in ENV_CLASS_NAMES}
"""What every env list should show: each built-in env, marked when the paper ran it."""


def script_help(name: str, capsys, args: tuple[str, ...] = ()) -> str:
    """What ``python experiments/<name>.py [args] --help`` prints, with line breaks undone."""
    spec = importlib.util.spec_from_file_location(f"help_{name}", os.path.join(EXPERIMENTS,
                                                                                f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    with pytest.raises(SystemExit) as exit_info:
        module.main([*args, "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def flat(text: str) -> str:
    """``text`` with argparse's wrapping undone (a name may break after a hyphen)."""
    return re.sub(r"-\n\s*", "-", re.sub(r"(?<!-)\n\s*", " ", text))


def listed_envs(text: str, start: str) -> dict[str, bool]:
    """Env name -> marked as the paper's, for every built-in env name in ``text`` after
    ``start``."""
    text = text[text.index(start):]
    found = {}
    for name in ENV_CLASS_NAMES:
        match = re.search(rf"\b{name}(\*?)(?=[,\s(])", text)
        if match:
            found[name] = match.group(1) == "*"
    return found


@pytest.mark.parametrize("name", RUN_SCRIPTS)
def test_run_script_help_lists_every_env_with_the_papers_marked(name, capsys):
    text = flat(script_help(name, capsys))
    assert listed_envs(text, "Environments (--env):") == PAPER_MARKED
    assert "python experiments/reproduce.py --help" in text  # where the algorithms are


def test_reproduce_help_lists_every_algorithm_and_env(capsys):
    text = flat(script_help("reproduce", capsys))
    text = text[text.index("options:"):]  # the flags' help, not the usage line
    algos = text[text.index("--algos ALGO"):text.index("--envs ENV")]
    assert re.findall(r"(\w+) \(", algos)[1:] == list(ALGORITHMS)  # after "algorithms ("
    assert listed_envs(text, "--envs ENV") == PAPER_MARKED


def options(text: str) -> list[str]:
    """The help of each option: the blocks that start with an indented ``-``."""
    body = text[text.index("options:"):]
    return [block for block in re.split(r"\n  (?=-)", body)[1:]]


@pytest.mark.parametrize("name", ["promp_run_mujoco", *OTHER_SCRIPTS])
def test_no_option_states_its_default_twice(name, capsys):
    blocks = options(script_help(name, capsys))
    assert blocks
    for block in blocks:
        assert len(re.findall(r"default\s*:", block, flags=re.IGNORECASE)) <= 1, block


def test_gradient_variance_run_help_lists_every_env(capsys):
    text = flat(script_help("gradient_variance", capsys, ("run",)))
    assert listed_envs(text, "--env ENV") == PAPER_MARKED
