"""The Python API and the run scripts build the same algorithm from "the defaults".

Two copies of a default drift apart silently (TRPO-MAML's and VPG-MAML's inner objective once
did). These tests derive both sides instead of listing them: the constructors' defaults from
their signatures, the run scripts' from their config dataclasses and command lines.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import textwrap
from typing import Any

import pytest

from meta_policy_search.experiment import paper
from meta_policy_search.experiment.config_parsing import parse_command_line, resolve_config
from meta_policy_search.experiment.configs import MetaRLConfig, ProMPConfig, validate_config
from meta_policy_search.experiment.registry import ALGORITHMS, Algorithm
from meta_policy_search.meta_algos import inner_step_settings
from meta_policy_search.meta_algos.outer_step_settings import settings_class

POLICY = "the policy"


def _family_config(config_cls: type) -> type:
    """The library config a run config subclasses (``TRPOMAMLConfig`` for E-MAML-TRPO's)."""
    return next(cls for cls in config_cls.__mro__
                if cls.__module__ == paper.LIBRARY_CONFIG_MODULE)


def _script_choices(algorithm: Algorithm) -> dict[str, Any]:
    """What a Python user passes to build this registry entry: the fields its run config
    redeclares over its family's defaults (E-MAML's ``exploration = True``) and its overrides
    (LVC's ``inner_type``)."""
    config, family = algorithm.config_cls(), _family_config(algorithm.config_cls)()
    choices = {field.name: getattr(config, field.name)
               for field in dataclasses.fields(config)
               if getattr(config, field.name) != getattr(family, field.name)}
    choices.update(algorithm.overrides)
    return choices


def _resolved(algorithm_class: type, **kwargs: Any) -> dict[str, Any]:
    """Every constructor argument but the policy, with the class's defaults filled in."""
    bound = inspect.signature(algorithm_class).bind(POLICY, **kwargs)
    bound.apply_defaults()
    return {name: value for name, value in bound.arguments.items() if name != "policy"}


def _python_settings(algorithm: Algorithm, cls: type, config: MetaRLConfig) -> dict[str, Any]:
    parameters = inspect.signature(cls).parameters
    kwargs = {k: v for k, v in _script_choices(algorithm).items() if k in parameters}
    if "max_path_length" in parameters:  # DiCE's horizon is the env's, not a setting
        kwargs["max_path_length"] = config.max_path_length
    return _resolved(cls, **kwargs)


def _cli_settings(algorithm: Algorithm, real_class: type, argv: list[str],
                  monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], MetaRLConfig]:
    """The arguments the run script's builder passes to the algorithm for ``argv``, resolved."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(importlib.import_module(algorithm.algorithm_module),
                        real_class.__name__, lambda policy, **kwargs: calls.append(kwargs))
    parsed = parse_command_line(algorithm.config_cls, algorithm.flags() + argv,
                                algo_name=algorithm.run_name)
    config = resolve_config(parsed.config, algorithm.run_name)
    algorithm.make_algo(config, POLICY)
    [kwargs] = calls
    return _resolved(real_class, **kwargs), config


@pytest.mark.parametrize("argv", [[], ["--paper_config", "false"]], ids=["no_flags", "no_paper"])
@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_python_defaults_and_the_run_script_build_the_same_algorithm(name, argv, monkeypatch):
    algorithm = ALGORITHMS[name]
    real_class = algorithm.algorithm_class  # read before the builder's class is replaced
    cli, config = _cli_settings(algorithm, real_class, argv, monkeypatch)
    assert _python_settings(algorithm, real_class, config) == cli


def _plain_entry(class_name: str) -> Algorithm:
    """The entry of a class without overrides, else its entry with overrides (FO-MAML's)."""
    entries = [a for a in ALGORITHMS.values() if a.algorithm_name == class_name]
    return min(entries, key=lambda a: len(a.overrides))


@pytest.mark.parametrize("name", sorted({a.algorithm_name for a in ALGORITHMS.values()}))
def test_every_constructor_default_is_its_config_default(name):
    """Each setting a constructor and its family config both hold has one default."""
    entry = _plain_entry(name)
    config = dataclasses.replace(_family_config(entry.config_cls)(), **dict(entry.overrides))
    parameters = inspect.signature(entry.algorithm_class).parameters
    shared = [p for p in parameters if p in {f.name for f in dataclasses.fields(config)}]
    # DiCE's horizon defaults to the env's in the config (None) and must be given in Python;
    # the algorithm reads its tasks from the policy.
    shared = [p for p in shared if p not in ("max_path_length", "meta_batch_size")]
    assert shared, name
    mismatches = {p: (parameters[p].default, getattr(config, p)) for p in shared
                  if parameters[p].default != getattr(config, p)}
    assert not mismatches, f"{name}: (constructor default, config default) {mismatches}"



@pytest.mark.parametrize("value", [1.0, 0.5, 1.5, 0.0])
def test_the_config_and_promp_accept_the_same_anneal_factors(value):
    """A command line the config accepts must not fail later in ProMP's constructor."""
    from meta_policy_search.meta_algos import ProMP
    from meta_policy_search.policies import MetaGaussianMLPPolicy

    config_errors = validate_config(ProMPConfig(anneal_factor=value))
    policy = MetaGaussianMLPPolicy(1, 1, 1, hidden_sizes=(2,), seed=0)
    try:
        ProMP(policy, anneal_factor=value)
        constructor_error = ""
    except ValueError as error:
        constructor_error = str(error)
    assert bool(config_errors) == bool(constructor_error), (config_errors, constructor_error)
    assert bool(constructor_error) == (not 0 < value <= 1)


def _declared_settings(entry: Algorithm) -> set[str]:
    """The settings an algorithm declares: the inner step's and its settings class's."""
    return set(inner_step_settings.FIELDS) | {
        f.name for f in dataclasses.fields(settings_class(entry.config_cls))}


@pytest.mark.parametrize("name", sorted({a.algorithm_name for a in ALGORITHMS.values()}))
def test_no_constructor_writes_a_declared_default_again(name):
    """A constructor's default of a declared setting is read from the declaration (an
    attribute of the settings' ``DEFAULTS``), never written as a value: 0 defaults twice.
    FO-MAML's ``first_order`` is its own, fixed value (the registry checks it above)."""
    entry = _plain_entry(name)
    init = ast.parse(textwrap.dedent(inspect.getsource(entry.algorithm_class.__init__))).body[0]
    assert isinstance(init, ast.FunctionDef)
    arguments = init.args.args[-len(init.args.defaults):]
    written = {arg.arg: ast.unparse(default) for arg, default in zip(arguments, init.args.defaults)
               if arg.arg in _declared_settings(entry) and arg.arg not in dict(entry.overrides)
               and not (isinstance(default, ast.Attribute)
                        and isinstance(default.value, ast.Name)
                        and default.value.id in ("DEFAULTS", "INNER_STEP"))}
    assert not written, f"{name} restates the defaults of {written}"


def test_every_algorithm_config_declares_no_setting_of_its_own():
    """The library's algorithm configs add no field to their settings class and the run
    settings (DiCE's sample-processor baseline aside): their fields are derived."""
    for entry in ALGORITHMS.values():
        family = _family_config(entry.config_cls)
        own = set(vars(family).get("__annotations__", {})) - {"dice_baseline"}
        assert not own, f"{family.__name__} redeclares {sorted(own)}"

