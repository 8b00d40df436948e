"""The package's layers read top to bottom: a module imports only from its own layer
or the layers below it, and the run scripts in ``experiments/`` do not import each other.

Layers, bottom first: ``utils``; the components (``envs``, ``policies``, ``baselines``,
``optimizers``, ``types``, ``protocols``); ``samplers`` and ``meta_algos``; the Trainer and its
callbacks; ``experiment`` (configs, builders, CLI, registry); the evaluation tools above it. Every
import counts, including the ones inside functions (deferred to keep TensorFlow out of ``--help``).
"""

from __future__ import annotations

import ast
import builtins
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
                    if within(n, ("meta_policy_search.experiment", "meta_policy_search.evaluation")))
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


def module_name(path: str, root: str) -> str:
    """The dotted name of the module at ``path`` (a package's ``__init__.py`` is the package)."""
    name = os.path.relpath(path, root)[: -len(".py")].replace(os.sep, ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def import_graph(package_dir: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports, read from the source (every import:
    at the top, inside functions, under ``TYPE_CHECKING``). ``from a import b`` is an arrow to
    ``a.b`` where that is a module of the package, else to ``a``."""
    root = os.path.dirname(package_dir)
    paths = {module_name(path, root): path for path in modules_of(package_dir)}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name in paths)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    if submodule in paths:
                        targets.add(submodule)
                    elif node.module in paths:
                        targets.add(node.module)
        targets.discard(name)
        graph[name] = targets
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``graph``: its strongly connected components of two or more modules
    (Tarjan's algorithm), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(circles)


def test_the_package_has_no_import_circle():
    circles = import_circles(import_graph(PACKAGE))
    assert not circles, "import circles (every import counts, deferred ones too): " + "; ".join(
        " <-> ".join(circle) for circle in circles)


def test_the_circle_check_finds_a_planted_circle(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    import pkg.c\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\n"
                                  "if TYPE_CHECKING:\n    from pkg.a import x\n")
    (package / "d.py").write_text("from pkg.a import y\n")
    assert import_circles(import_graph(str(package))) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


def module_getattrs(path: str) -> list[str]:
    """How ``path`` defines a module-level ``__getattr__``: ``'def'`` for a function written
    there, ``'lazy'`` for ``__getattr__ = lazy_getattr(...)``, ``'other'`` for any other
    assignment."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__getattr__":
            found.append("def")
        elif isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__getattr__"
                for target in node.targets):
            lazy = (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                    and node.value.func.id == "lazy_getattr")
            found.append("lazy" if lazy else "other")
    return found


@pytest.mark.parametrize("path", modules_of(PACKAGE), ids=lambda p: os.path.relpath(p, PACKAGE))
def test_no_module_getattr_shim(path):
    """A module ``__getattr__`` can keep an old import path alive; the package has none. The one
    form allowed is a package ``__init__`` naming its own classes lazily (PEP 562, through
    :func:`~meta_policy_search.utils.lazy.lazy_getattr`), so that importing the package does not
    load TensorFlow."""
    found = module_getattrs(path)
    allowed = ["lazy"] if os.path.basename(path) == "__init__.py" else []
    assert all(kind in allowed for kind in found), (
        f"{path} defines a module __getattr__ ({found}); import the name from its own module")


@pytest.mark.parametrize("path", modules_of(PACKAGE), ids=lambda p: os.path.relpath(p, PACKAGE))
def test_no_re_export_outside_package_inits(path):
    """A module imports only what it uses: a name kept importable from a module that does not
    use it is an old path (``noqa: F401``); only a package ``__init__`` re-exports."""
    if os.path.basename(path) == "__init__.py":
        return
    with open(path, encoding="utf-8") as f:
        lines = [n for n, line in enumerate(f, 1) if "noqa: F401" in line]
    assert not lines, f"{path}:{lines}: an unused import kept importable (an old path)"


def positional_super_inits(path: str) -> list[int]:
    """Lines of ``path`` where ``super().__init__`` gets two or more arguments, any of them by
    position. Exceptions are left out: the built-in exception classes take
    positional arguments only."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    found = []
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        bases = {base.id for base in cls.bases if isinstance(base, ast.Name)}
        if any(isinstance(getattr(builtins, name, None), type)
               and issubclass(getattr(builtins, name), BaseException) for name in bases):
            continue
        for node in ast.walk(cls):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "__init__" and isinstance(node.func.value, ast.Call)
                    and isinstance(node.func.value.func, ast.Name)
                    and node.func.value.func.id == "super"
                    and len(node.args) + len(node.keywords) >= 2 and node.args):
                found.append(node.lineno)
    return found


@pytest.mark.parametrize("path", modules_of(PACKAGE), ids=lambda p: os.path.relpath(p, PACKAGE))
def test_super_init_takes_keyword_arguments(path):
    """Across a class boundary each argument is named (at most the first, e.g. the policy, by
    position), so that a reordered parent signature cannot silently swap two settings."""
    lines = positional_super_inits(path)
    assert not lines, f"{path}:{lines}: super().__init__ with positional arguments; name them"


PARSE_LAYER = ("config_values", "resume_parsing", "config_parsing", "configs", "paper",
               "script_help", "exit_codes")
"""The experiment modules that turn a command line into a validated config, without TensorFlow
(``test_robustness`` checks at run time that a bad command line fails before it loads)."""

BUILD_AND_RUN = ("components", "runner", "registry", "algorithms", "run_checks", "run_console",
                 "run_lock", "launch", "planning", "provenance")
"""The experiment modules that build and run what the parse layer read."""


@pytest.mark.parametrize("name", PARSE_LAYER)
def test_the_parse_layer_does_not_import_build_or_run(name):
    higher = sorted(n for n in package_imports(os.path.join(PACKAGE, "experiment", f"{name}.py"))
                    if within(n, tuple(f"meta_policy_search.experiment.{m}"
                                       for m in BUILD_AND_RUN)))
    assert not higher, f"experiment/{name}.py imports {higher}: parse -> build -> run, one way"


def unexplained_function_imports(source: str) -> list[int]:
    """Lines of imports inside functions without a reason: a run of consecutive import
    statements is explained by a comment on the line just above it or on any of its lines."""
    lines = source.split("\n")
    unexplained = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        statement_lists = [getattr(node, field) for node in ast.walk(function)
                           for field in ("body", "orelse", "finalbody", "handlers")
                           if isinstance(getattr(node, field, None), list)]
        for statements in statement_lists:
            run: list[ast.stmt] = []
            for statement in [*statements, None]:
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    run.append(statement)
                    continue
                if run:
                    above = lines[run[0].lineno - 2].strip()
                    commented = any("#" in lines[n - 1] for s in run
                                    for n in range(s.lineno, (s.end_lineno or s.lineno) + 1))
                    if not (above.startswith("#") or commented):
                        unexplained.extend(s.lineno for s in run)
                run = []
    return sorted(set(unexplained))


@pytest.mark.parametrize("path", modules_of(PACKAGE), ids=lambda p: os.path.relpath(p, PACKAGE))
def test_function_level_imports_say_why(path):
    """An import inside a function defers a heavy or optional module (TensorFlow, MuJoCo,
    gymnasium, Ray, Meta-World, matplotlib) and says so in a one-line comment; anything else is
    imported at the top of the module."""
    with open(path, encoding="utf-8") as f:
        lines = unexplained_function_imports(f.read())
    assert not lines, f"{path}:{lines}: a function-level import without a reason comment"


def test_the_import_reason_check_finds_a_bare_import():
    """The check above flags a deferred import with no comment and passes a commented one."""
    bare = "def f():\n    x = 1\n    import json\n    return json, x\n"
    explained = "def f():\n    # json is heavy here\n    import json\n    import os\n    return json, os\n"
    assert unexplained_function_imports(bare) == [3]
    assert unexplained_function_imports(explained) == []
