"""Sphinx event handlers that make the API pages resolve every reference to our own names.

* :func:`resolve_own_reference` links a reference to one of the package's names however the
  docstring spells it: through a re-export (``meta_policy_search.envs.MetaEnv`` is documented as
  ``meta_policy_search.envs.base.MetaEnv``) or unqualified (``PathBatch``, ``MetaEnv.set_task``)
  when exactly one documented object has that name. A reference that matches none (or several)
  of our objects still fails the ``-n -W`` build.
* Third-party and standard-library names (``numpy.ndarray``, ``tf.Tensor``, ``int``) are left
  as unlinked text: the build runs without network, so intersphinx inventories are unavailable.
  Only the roots in :data:`THIRD_PARTY_ROOTS` and Python's builtins are treated this way.
* :func:`skip_third_party_docstring` keeps gymnasium's and TensorFlow's docstrings (inherited by
  our overrides that have none) off our pages; napoleon no longer reads an attribute docstring's first
  words before a colon as its type (:func:`parse_google_docstrings_except_attributes`).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import inspect
import sys
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.nodes import make_refnode

PACKAGE = "meta_policy_search"

THIRD_PARTY_ROOTS = frozenset({
    # third-party libraries (and the aliases our docstrings use)
    "numpy", "np", "tensorflow", "tf", "gymnasium", "gym", "mujoco", "joblib", "ray",
    "matplotlib", "docutils", "sphinx",
}) | frozenset(sys.stdlib_module_names)
"""First components of dotted names that are left unlinked instead of failing the build: the
libraries we use and the standard library."""

def is_third_party(target: str) -> bool:
    """Whether a reference target names something outside the package (see module docstring)."""
    root = target.split(".", 1)[0]
    return root in THIRD_PARTY_ROOTS or (root == target and hasattr(builtins, target))


def defining_name(target: str) -> str | None:
    """``module.qualname`` of the object a dotted name of the package refers to, or ``None``."""
    parts = target.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attr in parts[split:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        if inspect.ismodule(obj):
            return obj.__name__
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        if module and qualname:
            return f"{module}.{qualname}"
        return None
    return None


def own_candidates(objects: dict[str, Any], target: str, node: nodes.Element) -> list[str]:
    """Documented names of the package that a reference's target can mean."""
    if target.startswith(PACKAGE + "."):
        if target in objects:
            return [target]
        defined = defining_name(target)
        return [defined] if defined in objects else []
    inherited = inherited_candidate(objects, target, node)
    if inherited is not None:
        return [inherited]
    suffix = "." + target
    matches = [name for name in objects if name.startswith(PACKAGE) and name.endswith(suffix)]
    if len(matches) > 1:
        # Prefer the object nearest to where the reference is written: its class, its module.
        module, cls = node.get("py:module"), node.get("py:class")
        scopes = [f"{module}.{cls}." if module and cls else None, f"{module}." if module else None]
        for scope in filter(None, scopes):
            near = [name for name in matches if name.startswith(scope)]
            if len(near) == 1:
                return near
    return matches


def inherited_candidate(objects: dict[str, Any], target: str, node: nodes.Element) -> str | None:
    """A member named in a class's docstring that the class inherits from one of our bases."""
    module, cls = node.get("py:module"), node.get("py:class")
    if not (module and cls):
        return None
    defined = defining_name(f"{module}.{cls}")
    owner: Any = None
    if defined is not None:
        with contextlib.suppress(ImportError, AttributeError):
            owner = importlib.import_module(module)
            for part in cls.split("."):
                owner = getattr(owner, part)
    if not inspect.isclass(owner):
        return None
    for base in owner.__mro__:
        name = f"{base.__module__}.{base.__qualname__}.{target}"
        if name in objects:
            return name
    return None


def resolve_own_reference(
    app: Sphinx, env: Any, node: nodes.Element, contnode: nodes.Node
) -> nodes.Node | None:
    """``missing-reference`` handler: link our names, leave third-party names as text."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~.")
    if is_third_party(target):
        return contnode
    domain = env.get_domain("py")
    objects = domain.objects
    candidates = own_candidates(objects, target, node)
    if len(candidates) != 1:
        return None
    entry = objects[candidates[0]]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode,
                        candidates[0])


def owner_providing_doc(obj: Any) -> type | None:
    """The class in whose ``__dict__`` a method's inherited docstring is written, if any."""
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    qualname = getattr(obj, "__qualname__", "")
    if module is None or "." not in qualname:
        return None
    owner: Any = module
    for part in qualname.split(".")[:-1]:
        owner = getattr(owner, part, None)
    if not inspect.isclass(owner):
        return None
    name = qualname.rsplit(".", 1)[1]
    for cls in owner.__mro__[1:]:
        member = cls.__dict__.get(name)
        if member is not None and getattr(member, "__doc__", None):
            return cls
    return None


def skip_third_party_docstring(
    app: Sphinx, what: str, name: str, obj: Any, skip: bool, options: Any
) -> bool | None:
    """``autodoc-skip-member`` handler: skip our undocumented overrides of third-party methods.

    Such a member would otherwise show the third-party docstring it inherits (gymnasium's
    ``MujocoEnv`` arguments, TensorFlow's ``Module`` text) as if it were ours.
    """
    function = getattr(obj, "fget", obj)
    if not str(getattr(function, "__module__", "")).startswith(PACKAGE):
        return None
    if getattr(function, "__doc__", None):
        return None
    provider = owner_providing_doc(function)
    if provider is not None and not provider.__module__.startswith(PACKAGE):
        return True
    return None


def parse_google_docstrings_except_attributes(app: Sphinx) -> None:
    """Let napoleon parse function and class docstrings only; attribute docstrings stay text.

    napoleon reads an attribute docstring's words before a colon as its type (``"Root seed:
    task, sampling ..."`` would be typed ``Root seed``); ours are plain sentences and the
    annotation gives the type.
    """
    from sphinx.ext.napoleon import _process_docstring

    listeners = app.events.listeners["autodoc-process-docstring"]
    napoleon = [listener for listener in listeners if listener.handler is _process_docstring]
    for listener in napoleon:
        app.disconnect(listener.id)

    def process(app: Sphinx, what: str, name: str, obj: Any, options: Any,
                lines: list[str]) -> None:
        if what not in ("attribute", "data", "property"):
            _process_docstring(app, what, name, obj, options, lines)

    app.connect("autodoc-process-docstring", process)


def drop_inherited_class_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """``autodoc-process-docstring`` handler: no third-party class docstring on our classes."""
    if what != "class" or not inspect.isclass(obj) or "__doc__" not in obj.__dict__:
        return
    if obj.__dict__["__doc__"] is None and obj.__module__.startswith(PACKAGE):
        lines.clear()


def connect(app: Sphinx) -> None:
    """Connect the handlers of this module to a Sphinx application."""
    app.connect("missing-reference", resolve_own_reference)
    app.connect("autodoc-skip-member", skip_third_party_docstring)
    app.connect("autodoc-process-docstring", drop_inherited_class_docstring, priority=400)
    parse_google_docstrings_except_attributes(app)
