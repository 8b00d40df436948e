"""The API pages of the packages list what each package exports and its modules.

A package's page shows its docstring, then (appended here, at build time, so the lists never go
stale) an autosummary table of the names in its ``__all__`` -- linked to the page of the module
that defines each, where it is documented once -- and a table of its modules with their first
docstring lines.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from typing import Any

from sphinx.application import Sphinx


def defining_module(package: Any, name: str) -> str:
    """The module of the package that defines ``package.name`` (its own page documents it)."""
    obj = getattr(package, name)
    module = getattr(obj, "__module__", None)
    if (inspect.isclass(obj) or inspect.isfunction(obj)) and module:
        return str(module)
    for module_name, module_obj in sorted(sys.modules.items()):
        if module_name.startswith(package.__name__ + ".") and module_obj is not None \
                and not hasattr(module_obj, "__path__") and module_obj.__dict__.get(name) is obj:
            return module_name
    return str(package.__name__)


def package_contents(package: Any) -> list[str]:
    """reST lines: the ``__all__`` table and the modules table of ``package``."""
    lines: list[str] = []
    exported = list(getattr(package, "__all__", ()))
    if exported:
        lines += ["", ".. rubric:: Exported names", "",
                  f"Importable as ``from {package.__name__} import ...``; each is documented on "
                  "the page of the module that defines it.", "", ".. autosummary::", ""]
        for name in exported:  # autosummary wants names relative to the current package
            module = defining_module(package, name)[len(package.__name__) + 1:]
            lines.append(f"   ~{module}.{name}" if module else f"   {name}")
    submodules = sorted(info.name for info in pkgutil.iter_modules(package.__path__))
    if submodules:
        lines += ["", ".. rubric:: Modules", "", ".. autosummary::", ""]
        for name in submodules:
            importlib.import_module(f"{package.__name__}.{name}")
            lines.append(f"   {name}")
    return lines + [""]


def append_package_contents(app: Sphinx, what: str, name: str, obj: Any, options: Any,
                            lines: list[str]) -> None:
    """``autodoc-process-docstring`` handler: extend a package's docstring (see module docs)."""
    if what == "module" and hasattr(obj, "__path__"):
        lines.extend(package_contents(obj))


def connect(app: Sphinx) -> None:
    """Connect the handler to a Sphinx application."""
    app.connect("autodoc-process-docstring", append_package_contents)
