"""Sphinx configuration: API pages generated for every module of meta_policy_search."""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
sys.path.insert(0, ROOT)  # build from the repository without installing
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import meta_policy_search  # noqa: E402
from meta_policy_search.utils.quiet_tf import import_tensorflow  # noqa: E402

# Autodoc imports modules that import TensorFlow; loading it here first, through the filter the
# run scripts use, keeps its CUDA start-up lines out of the build's output.
import_tensorflow()
from meta_policy_search.experiment.configs import ProMPConfig  # noqa: E402
from meta_policy_search.experiment.paper import paper_config_table_rst  # noqa: E402

GENERATED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_generated")
"""Files written at build time from the package's data and included by the pages."""


def write_generated(name: str, text: str) -> None:
    """Write ``_generated/name`` unless it already holds ``text`` (no needless rebuilds)."""
    os.makedirs(GENERATED, exist_ok=True)
    path = os.path.join(GENERATED, name)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# The per-environment settings table of experiments.rst, from paper_configs.json.
write_generated("paper_configs_table.rst.inc", paper_config_table_rst(ProMPConfig()))

# The hyperparameter tables of the per-algorithm pages (docs/algorithms/*.rst).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import algorithm_tables  # noqa: E402

for _page in algorithm_tables.PAGE_ALGORITHMS:
    for _name, _text in algorithm_tables.page_tables_rst(_page).items():
        write_generated(_name, _text)

# A page per algorithm without a hand-written one (a new algorithm needs no docs file).
_PAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), algorithm_tables.GENERATED_PAGES_DIR)
os.makedirs(_PAGES, exist_ok=True)
for _name in algorithm_tables.generated_page_names():
    _path = os.path.join(_PAGES, f"{_name}.rst")
    _text = algorithm_tables.generated_page_rst(_name)
    if not os.path.isfile(_path) or open(_path, encoding="utf-8").read() != _text:
        with open(_path, "w", encoding="utf-8") as _f:
            _f.write(_text)

# The committed result tables of the results page, converted from benchmarks/results/**/*.md.
import markdown_results  # noqa: E402

RESULT_FILES = (
    "reproduction/reproduction.md", "reproduction/gradient_variance/gradient_variance.md",
    "meta_test_point/meta_test.md", "meta_test_point/trpo_maml/meta_test.md",
    "maml_nav/meta_test_best/meta_test.md",
    "metaworld_ml1_reach/promp/meta_test/meta_test.md",
    "metaworld_ml1_reach/trpo_maml/meta_test/meta_test.md",
    "iteration.md", "sampling.md", "algo_steps.md", "algo_steps_metastep.md",
    "metastep_profile.md", "trpo_step_profile.md", "packing.md", "sample_processing.md",
)
"""Files of ``benchmarks/results/`` the results page shows (as ``results_<path>.rst.inc``)."""
for _path in RESULT_FILES:
    with open(os.path.join(ROOT, "benchmarks", "results", _path), encoding="utf-8") as _f:
        write_generated("results_" + _path.replace("/", "_").replace(".md", ".rst.inc"),
                        markdown_results.markdown_to_rst(_f.read()))

# The long HalfCheetah runs to 1e8, once their grid is committed in this folder.
LONG_HORIZON_FOLDER = "reproduction_1e8"
write_generated("results_long_horizon.rst.inc", markdown_results.long_horizon_rst(
    os.path.join(ROOT, "benchmarks", "results"), LONG_HORIZON_FOLDER))

# reproduce.rst shows the figure-2 table of reproduction.md, as generated.
with open(os.path.join(ROOT, "benchmarks", "results", "reproduction", "reproduction.md"),
          encoding="utf-8") as _f:
    write_generated("reproduction_figure2_cells.rst.inc", markdown_results.markdown_to_rst(
        markdown_results.section(_f.read(), "Every learning-curve cell of the paper")))

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
    # MathJax 3 shipped with the docs (copied into _static/mathjax): formulas render offline and
    # on machines without access to MathJax's CDN.
    "sphinx-mathjax-offline",
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
# Parameters are documented once, in the class docstring's "Args:", with the types of the
# signature merged in; no "Return type: None" for undocumented returns.
autoclass_content = "class"
autodoc_class_signature = "mixed"
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented_params"
autodoc_typehints_format = "short"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# "Attributes:" sections as :ivar: fields, so dataclass/NamedTuple fields are not described twice.
napoleon_use_ivar = True

exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]
root_doc = "index"
html_theme = "furo"
html_title = f"meta_policy_search {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_js_files = ["wrap_identifiers.js"]
# Literal blocks (``::``) in these pages are shell commands; Python code uses code-block python.
highlight_language = "bash"
pygments_style = "sphinx"
pygments_dark_style = "monokai"

# Every cross-reference must resolve (``make docs`` runs ``-n -W``). References to our own names
# resolve through ``resolve_own_reference`` below; only the third-party and standard-library
# names of ``docs_references.THIRD_PARTY_ROOTS`` are left unlinked (CI has no network for
# intersphinx inventories).
nitpicky = True

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs_references  # noqa: E402
import package_pages  # noqa: E402


def setup(app):  # noqa: ANN001, ANN201 - Sphinx's extension hook
    """Connect the reference resolver and docstring filters of :mod:`docs_references` and the
    package contents of :mod:`package_pages`."""
    docs_references.connect(app)
    package_pages.connect(app)


def check_api_index_lists_every_module() -> None:
    """Fail the build if ``api.rst`` misses a module of the package (or lists a gone one)."""
    import pkgutil
    import re

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "api.rst"),
              encoding="utf-8") as f:
        listed = set(re.findall(r"^   (meta_policy_search[\w.]*)$", f.read(), flags=re.M))
    modules = {"meta_policy_search"} | {
        info.name for info in pkgutil.walk_packages(meta_policy_search.__path__,
                                                    "meta_policy_search.")
    }
    modules -= algorithm_tables.generated_page_modules()  # documented on their own page
    if listed != modules:
        raise RuntimeError(
            f"docs/api.rst must list every module of the package: missing "
            f"{sorted(modules - listed)}, not modules {sorted(listed - modules)}"
        )


check_api_index_lists_every_module()
