"""The ProMP paper's experiments as package data: settings per environment and algorithm, curves.

Two files ship in ``meta_policy_search/data`` (``package_data`` in ``setup.py``), each with its
provenance:

``paper_configs.json``
    The settings of the paper's experiments (appendix D and the original code's sweep scripts):
    per environment the horizon ``H``, ``inner_lr``, the number of inner steps, the hidden sizes,
    ProMP's PPO steps and inner KL penalty, and the original's budget sampling. Layout::

        {"provenance": [...],
         "common": {FIELD: VALUE},                  # every paper entry, every algorithm
         "paper": {ENV: {"note": "...",             # optional, shown in the docs table
                         "all": {FIELD: VALUE},     # every algorithm
                         ALGO: {FIELD: VALUE}}},    # one algorithm (a run script's algo_name)
         "not_in_paper": {ENV: {"max_path_length": H, "note": "..."}},
         "benchmark_configs": {ENV: {...}}}        # optional: as "paper", other sources

    ``benchmark_configs`` holds, in the layout of a ``paper`` entry, the settings of a
    benchmark's own reference code for an env the ProMP paper did not run (``ML10``: Meta-World+'s
    MAML-TRPO, its ``note`` names the source); they are applied the same way, but the env is not
    one of :func:`paper_envs` (nor of the paper's tables and reproduction grid).
    :func:`paper_entry` merges them (``common`` < ``all`` < ``ALGO``; an algorithm without a
    section of its own takes the one :data:`SECTION_FALLBACKS` names, e.g. PPO-MAML ProMP's);
    :func:`meta_policy_search.experiment.config_parsing.parse_command_line` applies the result between the
    config class's defaults and ``--config_file``.
``paper_reference.csv``
    The post-update returns read off the paper's learning-curve figures, with their reading
    precision (:func:`load_paper_reference`).

This module needs neither TensorFlow nor numpy: the experiment launcher reads it in a process
that trains nothing.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import functools
import importlib.resources
import json
import math
from collections.abc import Sequence
from typing import Any

from meta_policy_search.utils.validation import check_non_negative_int, check_positive_int

DATA_PACKAGE = "meta_policy_search"
"""Package holding the ``data`` directory."""

PAPER_CONFIGS_FILE = "data/paper_configs.json"
"""The paper's settings, relative to :data:`DATA_PACKAGE`."""

PAPER_REFERENCE_FILE = "data/paper_reference.csv"
"""The paper's curve values, relative to :data:`DATA_PACKAGE`."""

ALL_ALGOS = "all"
"""Section of a paper entry that applies to every algorithm."""

SECTION_FALLBACKS: dict[str, str] = {"ppo_maml": "promp"}
"""Algorithm -> the section it takes where a paper entry has none of its own. The paper did not
run PPO-MAML; it takes ProMP's section, so that the two differ only in the inner objective and
the inner KL penalty: the same PPO steps, and ProMP's hidden sizes on ``MetaPointEnvMomentum``.
ProMP's keys that PPO-MAML's config lacks (the KL penalty's) are left out by
:func:`paper_overrides`. An algorithm in neither a section nor this table gets the ``all``
settings, and its config defaults for the rest."""

BENCHMARK_CONFIGS = "benchmark_configs"
"""Section of ``paper_configs.json`` with settings taken from a benchmark's own code."""

_ENTRY_META_KEYS = ("note",)
"""Keys of a paper entry that describe it and are not settings."""

LIBRARY_CONFIG_MODULE = "meta_policy_search.experiment.configs"
"""Module of the library's config classes; fields declared elsewhere belong to run scripts."""
LIBRARY_SETTINGS_PACKAGE = "meta_policy_search.meta_algos."
"""Package of the algorithms' settings classes, which the library's configs subclass: their
fields are library defaults too."""

REFERENCE_COLUMNS = ("figure", "env", "algorithm", "metric", "timesteps", "value", "precision")
"""Header of ``paper_reference.csv``."""

FIGURE_BATCHES: dict[str, tuple[int, int]] = {"fig2": (40, 20), "fig3": (20, 40)}
"""``(meta_batch_size, rollouts_per_meta_task)`` of the runs behind each figure: the learning
curves (figure 2) used 40 tasks x 20 rollouts, the gradient-variance study (figure 3) 20 x 40.
Both figures have an LVC-VPG return curve on HalfCheetahRandDirecEnv; :func:`same_batch` keeps a
run from being compared with the figure of the other batch."""


def _read_text(relative_path: str) -> str:
    return (importlib.resources.files(DATA_PACKAGE) / relative_path).read_text(encoding="utf-8")


@functools.cache
def _paper_configs() -> dict[str, Any]:
    data = json.loads(_read_text(PAPER_CONFIGS_FILE))
    for key in ("provenance", "common", "paper", "not_in_paper"):
        if key not in data:
            raise ValueError(f"{PAPER_CONFIGS_FILE} lacks the top-level key {key!r}")
    for env, entry in data["paper"].items():
        if ALL_ALGOS not in entry or "max_path_length" not in entry[ALL_ALGOS]:
            raise ValueError(f"{PAPER_CONFIGS_FILE}: paper entry {env!r} needs "
                             f"'{ALL_ALGOS}': {{'max_path_length': H, ...}}")
    both = sorted(set(data["paper"]) & set(data["not_in_paper"]))
    if both:
        raise ValueError(f"{PAPER_CONFIGS_FILE}: {both} are both in 'paper' and 'not_in_paper'")
    for env, entry in data.get(BENCHMARK_CONFIGS, {}).items():
        if env in data["paper"] or ALL_ALGOS not in entry or "note" not in entry:
            raise ValueError(f"{PAPER_CONFIGS_FILE}: {BENCHMARK_CONFIGS} entry {env!r} needs "
                             f"'note' (its source) and '{ALL_ALGOS}', and no 'paper' entry")
    return data


def _entry(env: str) -> dict[str, Any] | None:
    """``env``'s entry in ``paper``, else in ``benchmark_configs``, else ``None``."""
    data = _paper_configs()
    return data["paper"].get(env, data.get(BENCHMARK_CONFIGS, {}).get(env))


def load_paper_configs() -> dict[str, Any]:
    """The content of ``paper_configs.json`` (a copy: changing it changes nothing else).

    Returns:
        The JSON object described in the module docstring.

    Raises:
        ValueError: if the file lacks a section or a paper entry lacks its horizon.
    """
    return copy.deepcopy(_paper_configs())


def paper_envs() -> tuple[str, ...]:
    """The environments the paper ran, in the file's order."""
    return tuple(_paper_configs()["paper"])


def paper_algos(env: str) -> tuple[str, ...]:
    """The algorithms with their own section in ``env``'s paper entry (empty if none)."""
    entry = _paper_configs()["paper"].get(env, {})
    return tuple(k for k in entry if k not in (ALL_ALGOS, *_ENTRY_META_KEYS))


def env_horizons() -> dict[str, int]:
    """Horizon ``H`` of every environment in ``paper_configs.json`` (the paper's and the others).

    Returns:
        Env class name -> ``max_path_length``.
    """
    data = _paper_configs()
    horizons = {env: int(e[ALL_ALGOS]["max_path_length"]) for env, e in data["paper"].items()}
    horizons.update({env: int(e["max_path_length"]) for env, e in data["not_in_paper"].items()})
    return horizons


def paper_entry(algo_name: str, env: str) -> dict[str, Any]:
    """The paper's settings for ``algo_name`` on ``env``: ``common`` < ``all`` < ``algo_name``.

    Args:
        algo_name: a run script's algorithm name (``'promp'``, ``'trpo_maml'``, ...); an
            algorithm without its own section gets the section :data:`SECTION_FALLBACKS` names
            for it (:func:`paper_section`), else only the ``all`` settings.
        env: an env class name (or a ``benchmark_configs`` env such as ``ML10``).

    Returns:
        Config field -> JSON value (lists stay lists); empty if neither the paper nor a
        ``benchmark_configs`` entry covers ``env``.
        Keys are not checked against any config class here (see
        :func:`paper_overrides`).
    """
    entry = _entry(env)
    if entry is None:
        return {}
    section = paper_section(algo_name, env)
    return copy.deepcopy({**_paper_configs()["common"], **entry[ALL_ALGOS],
                          **entry.get(section, {})})


def paper_section(algo_name: str, env: str) -> str:
    """The section of ``env``'s paper entry that applies to ``algo_name`` on top of ``all``.

    Returns:
        ``algo_name`` if the entry has that section, else its :data:`SECTION_FALLBACKS` entry if
        the entry has that one, else ``'all'`` (no algorithm-specific settings).
    """
    entry = _entry(env) or {}
    for section in (algo_name, SECTION_FALLBACKS.get(algo_name)):
        if section is not None and section in entry:
            return section
    return ALL_ALGOS


def timesteps_per_iteration(
    meta_batch_size: int, rollouts_per_meta_task: int, max_path_length: int,
    num_inner_grad_steps: int,
) -> int:
    """Environment steps of one meta-iteration as the paper counts them.

    ``meta_batch_size x rollouts_per_meta_task x H`` per sampling phase, one phase before each
    inner step and one after the last: ``(num_inner_grad_steps + 1)`` phases. (The original's
    ``n_timesteps`` grew by this nominal amount, and so does this package's; ``n_timesteps_real``
    counts the steps actually taken.)

    Returns:
        The product, a positive int.

    Raises:
        ValueError: if a count is not positive (or ``num_inner_grad_steps`` negative).
    """
    return (check_positive_int("meta_batch_size", meta_batch_size)
            * check_positive_int("rollouts_per_meta_task", rollouts_per_meta_task)
            * check_positive_int("max_path_length", max_path_length)
            * (check_non_negative_int("num_inner_grad_steps", num_inner_grad_steps) + 1))


def paper_metric(num_inner_grad_steps: int) -> str:
    """The paper's metric for a run with ``K`` inner steps: ``Step_K-AverageReturn``."""
    return f"Step_{int(num_inner_grad_steps)}-AverageReturn"


# ---------------------------------------------------------------------------- applying entries
def script_fields(config_cls: type) -> frozenset[str]:
    """Fields that a class outside :mod:`~meta_policy_search.experiment.configs` declares.

    These are a run script's own choices (e.g. the quick-start's ``meta_batch_size = 20``); the
    paper config leaves them alone.

    Args:
        config_cls: a config dataclass.

    Returns:
        The field names declared (or redeclared) by ``config_cls`` or a base of it defined
        elsewhere than the library's config module and the algorithms' settings modules.
    """
    names = {f.name for f in dataclasses.fields(config_cls)}
    owned: set[str] = set()
    for cls in config_cls.__mro__:
        if cls.__module__ != LIBRARY_CONFIG_MODULE and not cls.__module__.startswith(
                LIBRARY_SETTINGS_PACKAGE):
            owned.update(set(vars(cls).get("__annotations__", {})) & names)
    return frozenset(owned)


def paper_overrides(config_cls: type, algo_name: str, env: str) -> dict[str, Any] | None:
    """The paper config's values for ``algo_name`` on ``env`` that ``config_cls`` takes.

    Keys that are not fields of ``config_cls`` (e.g. ProMP's settings for a TRPO config) are
    left out, as are the fields the run script redeclares (:func:`script_fields`).

    Args:
        config_cls: the script's config dataclass.
        algo_name: the algorithm's name (a section of ``paper_configs.json``).
        env: the env class name.

    Returns:
        ``None`` if the paper did not run ``env``; else the entry as ``params.json`` records it:
        ``{'algo', 'env', 'applied': {field: JSON value}, 'kept_script_defaults': [field, ...]}``,
        plus ``'section'`` (e.g. ``'promp'``) when ``algo_name`` took another algorithm's
        section (:data:`SECTION_FALLBACKS`).
    """
    settings = paper_entry(algo_name, env)
    if not settings:
        return None
    names = {f.name for f in dataclasses.fields(config_cls)}
    owned = script_fields(config_cls)
    entry: dict[str, Any] = {
        "algo": algo_name,
        "env": env,
        "applied": {k: v for k, v in settings.items() if k in names and k not in owned},
        "kept_script_defaults": sorted(k for k in settings if k in owned),
    }
    section = paper_section(algo_name, env)
    if section not in (algo_name, ALL_ALGOS):
        entry["section"] = section
    return entry


def describe_paper_entry(entry: dict[str, Any]) -> str:
    """One log line: which paper entry a run got, the fields it set and those it left alone."""
    applied = ", ".join(f"{k}={v}" for k, v in entry["applied"].items())
    text = f"Paper config {entry['algo']}/{entry['env']}"
    if "section" in entry:
        text += f" (the paper's {entry['section']} settings)"
    text += f": {applied}"
    if entry["kept_script_defaults"]:
        text += f"; kept the run script's own {', '.join(entry['kept_script_defaults'])}"
    return text + " (overridden by --config_file and flags; --paper_config false to skip)"


# ---------------------------------------------------------------------------- reference curves
@dataclasses.dataclass(frozen=True)
class ReferencePoint:
    """One value read off a figure of the paper."""

    figure: str
    """Figure id (``fig2``: learning curves, ``fig3``: LVC vs DiCE gradient variance)."""
    env: str
    """Env class name."""
    algorithm: str
    """The paper's legend name (``ProMP``, ``MAML-TRPO``, ``LVC-VPG``, ...)."""
    metric: str
    """A ``progress.csv`` column, e.g. ``Step_1-AverageReturn``."""
    timesteps: float
    """x: environment steps as the paper counts them (:func:`timesteps_per_iteration`)."""
    value: float
    """y read off the figure."""
    precision: float
    """Reading precision (+-) of ``value``."""


def load_paper_reference() -> list[ReferencePoint]:
    """Parse ``paper_reference.csv`` (lines starting with ``#`` are provenance comments).

    Returns:
        One :class:`ReferencePoint` per data row, in file order.

    Raises:
        ValueError: on a wrong header or a row that does not parse (naming its line).
    """
    return _parse_reference(_read_text(PAPER_REFERENCE_FILE), PAPER_REFERENCE_FILE)


def same_batch(point: ReferencePoint, params: dict[str, Any]) -> bool:
    """Whether a run (its ``params.json``) used the batch of the figure ``point`` comes from.

    A figure missing from :data:`FIGURE_BATCHES`, or a run without the two batch fields, matches.
    """
    batch = FIGURE_BATCHES.get(point.figure)
    if batch is None or "meta_batch_size" not in params or "rollouts_per_meta_task" not in params:
        return True
    return (int(params["meta_batch_size"]), int(params["rollouts_per_meta_task"])) == batch


def points_for_run(reference: Sequence[ReferencePoint], env: str, legend: str, metric: str,
                   params: dict[str, Any]) -> list[ReferencePoint]:
    """The points of ``reference`` for a run's env, algorithm (legend name), metric and batch.

    Args:
        reference: points to choose from (e.g. :func:`load_paper_reference`).
        env: env class name.
        legend: the paper's name of the run's algorithm.
        metric: ``progress.csv`` column.
        params: the run's ``params.json`` (its batch, :func:`same_batch`).
    """
    return [p for p in reference if p.env == env and p.algorithm == legend and p.metric == metric
            and same_batch(p, params)]


def reference_provenance() -> str:
    """The comment lines of ``paper_reference.csv`` without their ``#``, joined by spaces."""
    lines = _read_text(PAPER_REFERENCE_FILE).splitlines()
    return " ".join(line.lstrip("#").strip() for line in lines if line.startswith("#"))


def _parse_reference(text: str, source: str) -> list[ReferencePoint]:
    numbered = [(i + 1, line) for i, line in enumerate(text.splitlines())
                if line.strip() and not line.startswith("#")]
    if not numbered:
        raise ValueError(f"{source}: no header row")
    header = next(csv.reader([numbered[0][1]]))
    if tuple(header) != REFERENCE_COLUMNS:
        raise ValueError(f"{source}: header must be {','.join(REFERENCE_COLUMNS)}, got {header}")
    points = []
    for line_number, line in numbered[1:]:
        row = next(csv.reader([line]))
        try:
            if len(row) != len(REFERENCE_COLUMNS):
                raise ValueError(f"{len(row)} columns instead of {len(REFERENCE_COLUMNS)}")
            figure, env, algorithm, metric = row[:4]
            timesteps, value, precision = (float(v) for v in row[4:])
            if not all(math.isfinite(v) for v in (timesteps, value, precision)):
                raise ValueError("non-finite number")
        except ValueError as error:
            raise ValueError(f"{source} line {line_number}: {error}: {line!r}") from None
        points.append(ReferencePoint(figure, env, algorithm, metric, timesteps, value, precision))
    return points


# ---------------------------------------------------------------------------- docs table
def _format_value(value: Any) -> str:
    if isinstance(value, list):
        return "(" + ", ".join(str(v) for v in value) + ")"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value != 0 and abs(value) < 0.01:
        short = f"{value:.0e}".replace("e-0", "e-")  # 5e-4, not 0.0005
        if float(short) == value:
            return short
    return f"{value:g}" if isinstance(value, float) else str(value)


def _per_algo(env: str, key: str) -> str:
    """``key``'s value in ``env``'s entry; ``'X (promp); Y (others)'`` if algorithms differ."""
    data = _paper_configs()
    entry = data["paper"][env]
    shared = {**data["common"], **entry[ALL_ALGOS]}.get(key)
    special = [(algo, entry[algo][key]) for algo in paper_algos(env) if key in entry[algo]]
    if not special:
        return "" if shared is None else _format_value(shared)
    parts = [f"{_format_value(v)} ({algo})" for algo, v in special]
    if shared is not None:
        parts.append(f"{_format_value(shared)} (others)")
    return "; ".join(parts)


def _promp_cell(env: str) -> str:
    settings = paper_entry("promp", env)
    steps = settings.get("num_ppo_steps", "")
    penalty = _format_value(settings.get("init_inner_kl_penalty", ""))
    if settings.get("adaptive_inner_kl_penalty"):
        target = _format_value(settings.get("target_inner_step", ""))
        return f"{steps} / adaptive, init {penalty}, target {target}"
    return f"{steps} / fixed {penalty}"


def paper_config_table_rst(defaults: Any) -> str:
    """The per-environment settings as a reStructuredText list-table (built into the docs).

    Columns: environment, ``H``, ``inner_lr``, inner steps ``K``, hidden sizes, ProMP's PPO steps
    and inner KL penalty, sampling mode, note. Environments the paper did not run get their
    horizon and the config defaults.

    Args:
        defaults: ProMP's default config
            (:class:`~meta_policy_search.experiment.configs.ProMPConfig` ``()``), which fills the
            rows of the environments the paper did not run. Passed in because the config classes
            read this module's horizons.

    Returns:
        The table, ready for ``.. include::``.
    """
    data = _paper_configs()
    header = ["environment", "H", "inner_lr", "K", "hidden sizes",
              "ProMP: PPO steps / inner KL penalty", "sampling_mode", "note"]
    rows = []
    for env in data["paper"]:
        rows.append([f"``{env}``", _per_algo(env, "max_path_length"), _per_algo(env, "inner_lr"),
                     _per_algo(env, "num_inner_grad_steps"), _per_algo(env, "hidden_sizes"),
                     _promp_cell(env), _per_algo(env, "sampling_mode"),
                     data["paper"][env].get("note", "")])
    promp_default = (f"{defaults.num_ppo_steps} / fixed "
                     f"{_format_value(defaults.init_inner_kl_penalty)}")
    for env, entry in data["not_in_paper"].items():
        rows.append([f"``{env}``", str(entry["max_path_length"]), f"{defaults.inner_lr:g}",
                     str(defaults.num_inner_grad_steps), _format_value(list(defaults.hidden_sizes)),
                     promp_default, defaults.sampling_mode,
                     f"not in the paper: config defaults; H: {entry.get('note', '')}"])
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: auto", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" if cell else "     -" for cell in row[1:])
    return "\n".join(lines) + "\n"
