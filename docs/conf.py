"""Sphinx configuration: API pages generated for every module of meta_policy_search."""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
sys.path.insert(0, ROOT)  # build from the repository without installing
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import meta_policy_search  # noqa: E402

project = "meta_policy_search"
author = "meta_policy_search developers"
copyright = "2025, meta_policy_search developers"  # noqa: A001 - Sphinx's name
release = meta_policy_search.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx.ext.mathjax",
]

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
    "member-order": "bysource",
    # Document each object once, on the page of the module defining it: a package's
    # ``__all__`` re-exports would otherwise be described twice (a -W error).
    "ignore-module-all": True,
}
autodoc_typehints = "description"
autodoc_class_signature = "separated"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# "Attributes:" sections as :ivar: fields, so dataclass/NamedTuple fields are not described twice.
napoleon_use_ivar = True

exclude_patterns = ["_build", "architecture.md", "Thumbs.db", ".DS_Store"]
root_doc = "index"
html_theme = "alabaster"
html_static_path = []
nitpicky = False
