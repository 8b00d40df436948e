"""Lazy package attributes (PEP 562): a package names its classes without importing their modules.

Used by the packages whose light parts configuration code reads (the sampling quota, the
inner-step settings, the argument checks) next to modules that load numpy or TensorFlow.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``name`` from ``modules[name]`` on first access.

    Args:
        package: the package's ``__name__``; the value is cached in its namespace.
        modules: attribute name -> the module that defines it.

    Returns:
        The function to assign to the package's ``__getattr__``; it raises AttributeError for
        any other name.
    """
    def module_getattr(name: str) -> Any:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(modules[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return module_getattr
