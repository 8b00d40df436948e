"""The package's layers read top to bottom (issue 11): a module imports only from its own layer
or the layers below it, and the run scripts in ``experiments/`` do not import each other.

Layers, bottom first: ``utils``; the components (``envs``, ``policies``, ``baselines``,
``optimizers``, ``types``, ``protocols``); ``samplers`` and ``meta_algos``; the Trainer and its
callbacks; ``experiment`` (configs, builders, CLI, registry); the evaluation tools above it. Every
import counts, including the ones inside functions (deferred to keep TensorFlow out of ``--help``).
"""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "meta_policy_search")
EXPERIMENTS = os.path.join(ROOT, "experiments")

UTILS_MAY_IMPORT = ("meta_policy_search.utils",)
"""``utils`` holds only true utilities: it imports nothing else of the package."""

ABOVE_THE_COMPONENTS = (
    "meta_policy_search.experiment",
    "meta_policy_search.evaluation",
    "meta_policy_search.meta_test_baselines",
    "meta_policy_search.meta_trainer",
    "meta_policy_search.best_checkpoint",
    "meta_policy_search.gradient_variance",
)
"""What the component sub-packages and the Trainer's contracts must not import."""

COMPONENTS = ("envs", "policies", "baselines", "optimizers", "samplers", "meta_algos")


def modules_of(directory: str) -> list[str]:
    return sorted(
        os.path.join(root, name)
        for root, _, names in os.walk(directory)
        for name in names
        if name.endswith(".py")
    )


def imported_modules(path: str) -> set[str]:
    """Absolute names of every module ``path`` imports (``from x import y`` gives ``x`` and
    ``x.y``: ``y`` may be a sub-module)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; the package uses absolute imports"
            module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def package_imports(path: str) -> set[str]:
    return {name for name in imported_modules(path) if within(name, ("meta_policy_search",))}


@pytest.mark.parametrize("path", modules_of(os.path.join(PACKAGE, "utils")),
                         ids=os.path.basename)
def test_utils_import_no_higher_layer(path):
    higher = sorted(name for name in package_imports(path) if not within(name, UTILS_MAY_IMPORT)
                    and name != "meta_policy_search")
    assert not higher, f"{path} imports {higher}: utils may import only utils"


@pytest.mark.parametrize(
    "path",
    [p for package in COMPONENTS for p in modules_of(os.path.join(PACKAGE, package))]
    + [os.path.join(PACKAGE, name) for name in ("types.py", "protocols.py")
       if os.path.isfile(os.path.join(PACKAGE, name))],
    ids=lambda p: os.path.relpath(p, PACKAGE),
)
def test_components_import_nothing_above_them(path):
    higher = sorted(name for name in package_imports(path) if within(name, ABOVE_THE_COMPONENTS))
    assert not higher, f"{path} imports {higher}, a layer above it"


@pytest.mark.parametrize("name", ["meta_trainer.py", "best_checkpoint.py", "gradient_variance.py"])
def test_the_trainer_layer_does_not_import_the_experiment_machinery(name):
    higher = sorted(n for n in package_imports(os.path.join(PACKAGE, name))
                    if within(n, ("meta_policy_search.experiment", "meta_policy_search.evaluation",
                                  "meta_policy_search.meta_test_baselines")))
    assert not higher, f"{name} imports {higher}, a layer above it"


def test_experiment_scripts_do_not_import_each_other():
    scripts = {name[:-3] for name in os.listdir(EXPERIMENTS) if name.endswith(".py")}
    for name in sorted(scripts):
        path = os.path.join(EXPERIMENTS, f"{name}.py")
        others = sorted(module for module in imported_modules(path)
                        if module.split(".")[0] in scripts)
        assert not others, f"experiments/{name}.py imports the script(s) {others}"
        with open(path, encoding="utf-8") as f:
            assert "sys.path.insert" not in f.read(), f"experiments/{name}.py edits sys.path"
