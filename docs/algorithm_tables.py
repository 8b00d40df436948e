"""The hyperparameter tables of the per-algorithm pages, generated at build time.

For the algorithms of a page (registry names, :data:`~meta_policy_search.experiment.registry.ALGORITHMS`):

* :func:`flag_table_rst`: flag, the run script's default, the paper's value (one value if the
  paper used it on every environment it ran the algorithm on, else "per env") and the field's
  docstring;
* :func:`paper_table_rst`: the paper's values per environment (``paper_configs.json``) for the
  environments whose curves of these algorithms the paper shows (``paper_reference.csv``); for
  an algorithm the paper did not run, those of the algorithm whose settings it takes.

Every number comes from the library's config classes and data files, so the pages cannot drift
from what the run scripts do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from meta_policy_search.experiment.config_parsing import field_docs
from meta_policy_search.experiment.configs import MetaRLConfig
from meta_policy_search.experiment.paper import (
    SECTION_FALLBACKS,
    load_paper_reference,
    paper_entry,
    paper_envs,
)
from meta_policy_search.experiment.registry import ALGORITHMS

SHARED_FLAGS = ("meta_batch_size", "rollouts_per_meta_task", "max_path_length", "inner_lr",
                "num_inner_grad_steps", "hidden_sizes", "discount", "gae_lambda",
                "sampling_mode")
"""Flags of every algorithm shown on each page, before the algorithm's own."""

PAGE_ALGORITHMS: dict[str, tuple[str, ...]] = {
    "promp": ("promp",),
    "trpo_maml": ("trpo_maml", "lvc_trpo"),
    "vpg_maml": ("vpg_maml", "lvc_vpg"),
    "e_maml": ("e_maml_trpo", "e_maml_vpg"),
    "dice": ("dice_maml", "vpg_dice"),
    "ppo_maml": ("ppo_maml",),
}
"""Per-algorithm page (``docs/algorithms/<page>.rst``) -> the registry names it documents."""


def format_value(value: Any) -> str:
    """A config or JSON value as the docs show it: ``(64, 64)``, ``yes``, ``5e-4``, ``0.1``."""
    if value is None:
        return "None"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(str(v) for v in value) + ")"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value != 0 and abs(value) < 0.01:
        short = f"{value:.0e}".replace("e-0", "e-")
        if float(short) == value:
            return short
    return f"{value:g}" if isinstance(value, float) else str(value)


NOT_A_FLAG = "\u2014"
"""The cell of a flag the algorithm's script does not have (E-MAML-VPG's ``--step_size``)."""


def _default(name: str, field: str) -> Any:
    algorithm = ALGORITHMS[name]
    overrides = dict(algorithm.overrides)
    return overrides[field] if field in overrides else getattr(algorithm.config_cls(), field)


def _has_flag(name: str, field: str) -> bool:
    return field in {f.name for f in dataclasses.fields(ALGORITHMS[name].config_cls)}


def paper_envs_of(names: Sequence[str]) -> list[str]:
    """The environments on which the paper shows a curve of one of ``names``, or of the
    algorithm whose paper settings one of them takes (:data:`SECTION_FALLBACKS`: PPO-MAML runs
    with ProMP's settings on ProMP's environments), in file order."""
    legends = {ALGORITHMS[name].legend for name in names}
    legends |= {ALGORITHMS[SECTION_FALLBACKS[ALGORITHMS[name].run_name]].legend
                for name in names if ALGORITHMS[name].run_name in SECTION_FALLBACKS}
    shown = {point.env for point in load_paper_reference() if point.algorithm in legends}
    return [env for env in paper_envs() if env in shown]


def _per_env_values(name: str, field: str, envs: Sequence[str]) -> list[Any]:
    return [paper_entry(ALGORITHMS[name].run_name, env).get(field) for env in envs]


def _cell(values_by_name: dict[str, str]) -> str:
    """One value, or ``'X (A); Y (B)'`` when the page's algorithms differ."""
    if len(set(values_by_name.values())) == 1:
        return next(iter(values_by_name.values()))
    return "; ".join(f"{value} ({ALGORITHMS[name].legend})" for name, value in values_by_name.items())


def flag_table_rst(names: Sequence[str]) -> str:
    """The flags of ``names``' run scripts as a list-table: flag, default, paper, meaning.

    Args:
        names: registry names sharing one config class family (e.g. ``('vpg_maml', 'lvc_vpg')``).

    Returns:
        reStructuredText, ready for ``.. include::``.
    """
    common = {f.name for f in dataclasses.fields(MetaRLConfig)}
    fields = list(SHARED_FLAGS)
    docs: dict[str, str] = {}
    for name in names:
        config_cls = ALGORITHMS[name].config_cls
        fields += [f.name for f in dataclasses.fields(config_cls)
                   if f.name not in common and f.name not in fields]
        fields += [field for field, _ in ALGORITHMS[name].overrides if field not in fields]
        docs = {**field_docs(config_cls), **docs}
    envs = paper_envs_of(names)
    rows = [["flag", "default", "paper", "meaning"]]
    for field in fields:
        default = _cell({name: format_value(_default(name, field)) if _has_flag(name, field)
                         else NOT_A_FLAG for name in names})
        if field == "max_path_length" and default == "None":
            default = "the env's H"
        paper_values: dict[str, str] = {}
        for name in names:
            if not _has_flag(name, field):
                paper_values[name] = NOT_A_FLAG
                continue
            values = _per_env_values(name, field, envs)
            if not envs or all(v is None for v in values):
                paper_values[name] = format_value(_default(name, field))
            elif len({repr(v) for v in values}) == 1:
                paper_values[name] = format_value(values[0])
            else:
                paper_values[name] = "per env, below"
        meaning = " ".join(docs.get(field, "").split())
        rows.append([f"``--{field}``", default, _cell(paper_values), meaning])
    return _list_table(rows, widths="26 12 12 50")


def paper_table_rst(names: Sequence[str]) -> str:
    """The paper's settings per environment for ``names`` (see the module docstring).

    Returns:
        reStructuredText: a list-table with one row per environment (per environment and
        algorithm where the page's algorithms differ) and a column per setting that varies, or
        a sentence if the paper shows none.
    """
    envs = paper_envs_of(names)
    if not envs:
        return "The paper shows no curve of this algorithm; the run scripts use the defaults above.\n"
    entries = {(env, name): paper_entry(ALGORITHMS[name].run_name, env)
               for env in envs for name in names}
    keys: list[str] = []
    for entry in entries.values():
        keys += [k for k in entry if k not in keys and k != "note"]
    # A setting equal on every row is the flag table's "paper" value already; one that none of
    # the scripts has (ProMP's KL penalty, in the section PPO-MAML takes) is not applied.
    keys = [k for k in keys if len({repr(entry.get(k)) for entry in entries.values()}) > 1
            and any(_has_flag(name, k) for name in names)]
    if not keys:
        listed = ", ".join(f"``{env}``" for env in envs)
        return (f"The paper ran it on {listed}, with the values of the flag table's *paper* "
                "column.\n")
    per_algorithm = any(entries[(env, names[0])] != entries[(env, name)]
                        for env in envs for name in names)
    header = ["environment"] + (["algorithm"] if per_algorithm else []) + [f"``{k}``" for k in keys]
    rows = [header]
    for env in envs:
        for name in (names if per_algorithm else names[:1]):
            entry = entries[(env, name)]
            label = [ALGORITHMS[name].legend] if per_algorithm else []
            rows.append([f"``{env}``", *label, *(format_value(entry[k]) if k in entry else ""
                                                 for k in keys)])
    return _list_table(rows)


def page_tables_rst(page: str) -> dict[str, str]:
    """``{'algo_<page>_flags.rst.inc': ..., 'algo_<page>_paper.rst.inc': ...}`` for ``page``."""
    names = PAGE_ALGORITHMS[page]
    return {f"algo_{page}_flags.rst.inc": flag_table_rst(names),
            f"algo_{page}_paper.rst.inc": paper_table_rst(names)}


GENERATED_PAGES_DIR = "algorithms/generated"
"""Where the generated pages go, relative to ``docs/`` (ignored by git; the toctree of
``algorithms.rst`` globs it)."""


def generated_page_names() -> list[str]:
    """Registry names with no hand-written page in :data:`PAGE_ALGORITHMS`: each gets a page
    generated from its declarations (:func:`generated_page_rst`), so that a new algorithm needs
    no docs file."""
    written = {name for names in PAGE_ALGORITHMS.values() for name in names}
    return [name for name in ALGORITHMS if name not in written]


def generated_page_rst(name: str) -> str:
    """The page of algorithm ``name``: its module's docstrings (the class is documented here,
    once), its run script, the flag and paper tables, and the commands that run it.

    Returns:
        reStructuredText of a whole page.
    """
    algorithm = ALGORITHMS[name]
    title = f"{algorithm.legend} (generated page)"
    flags = " ".join(algorithm.flags())
    return "\n".join([
        title, "=" * len(title), "",
        f".. automodule:: {algorithm.algorithm_module}", "   :members:", "",
        f"Registry name ``{name}``; run script ``experiments/{algorithm.script}.py``"
        + (f", which passes ``{flags}``" if flags else "") + f"; its runs record ``\"algo\": "
        f"\"{algorithm.run_name}\"`` in ``params.json``.", "",
        "Hyperparameters", "---------------", flag_table_rst((name,)), "",
        "The paper's values per environment:", "", paper_table_rst((name,)), "",
        "Run", "---", "::", "",
        f"    python experiments/{algorithm.script}.py --env HalfCheetahRandDirecEnv --seed 1",
        f"    python experiments/reproduce.py --algos {name} --envs HalfCheetahRandDirecEnv "
        "--seeds 1 2 3 --timesteps 1e7 --out data/reproduce", "",
    ])


def generated_page_modules() -> set[str]:
    """The modules documented by a generated page rather than by ``api.rst``: the algorithm
    modules of :func:`generated_page_names` that the package does not export."""
    return {ALGORITHMS[name].algorithm_module for name in generated_page_names()
            if ":" in ALGORITHMS[name].algorithm_name}


def _list_table(rows: Sequence[Sequence[str]], widths: str = "auto") -> str:
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in rows:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" if cell else "     -" for cell in row[1:])
    return "\n".join(lines) + "\n"
