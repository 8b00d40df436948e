"""Learning curves of finished or running meta-RL runs: read, group by config, average.

The library part of ``experiments/plot.py``, shared with ``experiments/reproduce.py``. Every
``progress.csv`` below the given directories is a run. Runs whose ``params.json`` agree on
everything except the seed, the output directory and the settings that leave results alone are
seeds of one configuration (:func:`group_runs`), compared in today's spelling so that runs of
older versions join them (:func:`normalized_params`); :func:`aggregate` averages them row by row
(iteration by iteration, truncated to the shortest run). :func:`reference_points` finds the
paper's values of a run (``paper_reference.csv``, through the algorithm's legend name in the
registry).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from meta_policy_search.experiment.config_values import upgrade_legacy_params
from meta_policy_search.experiment.configs import RESUME_CHANGEABLE
from meta_policy_search.experiment.paper import (
    FIGURE_BATCHES,
    ReferencePoint,
    load_paper_reference,
    points_for_run,
)
from meta_policy_search.experiment.registry import algorithm_for_params

IGNORED_PARAMS = ("seed", "paper_config", "paper_config_entry",
                  *sorted(RESUME_CHANGEABLE - {"n_itr"}))
"""``params.json`` keys that do not distinguish configurations: the seed; ``paper_config`` and
``paper_config_entry``, which record how the settings were chosen (the settings themselves are
in ``params.json``, so two runs with the same settings are one configuration however they got
them); and the settings a ``--resume`` may change because they leave the results alone (output
path, log formats, executor, timeouts, ...). ``n_itr`` does distinguish: a longer run is another
curve."""

MISSING_PARAMS_MEAN: dict[str, Any] = {
    "oracle": False,  # no oracle env existed before the field
    "first_order": False,  # the meta-gradient was second order
    "jit_compile": False,  # nothing was compiled with XLA
    "sampling_mode": "rollouts",  # the sampler took exactly rollouts_per_meta_task episodes
    # Read only with exploration true; every committed E-MAML run records it, so a file that
    # lacks it is a run without the term (an E-MAML run older than the field would need its
    # commit to tell which form it used).
    "exploration_type": "original",
    "hvp_approach": "gauss_newton",  # TRPO's products of the KL: Gauss-Newton, or before it
    # double backprop, which gives the same product at the old parameters
}
"""Config fields that ``params.json`` files of older versions lack, and the value that reproduces
what those versions ran (the behaviour before the field existed). Keys that older files lack and
that do not distinguish configurations are in :data:`IGNORED_PARAMS`; the old ``parallel``
switch is renamed by
:func:`~meta_policy_search.experiment.config_values.upgrade_legacy_params`."""



@dataclass
class LoggedRun:
    """One run: its directory, its progress columns and its parameters."""

    path: str
    columns: dict[str, np.ndarray]
    params: dict = field(default_factory=dict)


def read_progress(csv_path: str) -> dict[str, np.ndarray]:
    """Read ``progress.csv`` into float columns (empty cells and text become NaN).

    If the run was resumed and an iteration appears twice, the last row of it is kept.

    Args:
        csv_path: path of a ``progress.csv``.

    Returns:
        Column name -> ``[num_rows]`` float64 array.
    """
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if rows and "Itr" in rows[0]:
        last = {}
        for row in rows:
            last[row["Itr"]] = row  # a later row of the same iteration wins
        rows = sorted(last.values(), key=lambda r: _to_float(r["Itr"]))
    keys = list(rows[0].keys()) if rows else []
    return {k: np.array([_to_float(r.get(k)) for r in rows], dtype=np.float64) for k in keys}


def _to_float(value: str | None) -> float:
    try:
        return float(value) if value not in (None, "") else math.nan
    except ValueError:
        return math.nan


def find_runs(directories: Sequence[str]) -> list[LoggedRun]:
    """All runs (directories with a ``progress.csv``) below ``directories``, sorted by path.

    Raises:
        ValueError: if a directory does not exist or no run is found.
    """
    runs = []
    for directory in directories:
        if not os.path.isdir(directory):
            raise ValueError(f"run directory {directory!r} does not exist")
        for root, _, files in os.walk(directory):
            if "progress.csv" in files:
                params_path = os.path.join(root, "params.json")
                params = {}
                if os.path.isfile(params_path):
                    with open(params_path, encoding="utf-8") as f:
                        params = json.load(f)
                columns = read_progress(os.path.join(root, "progress.csv"))
                if columns:
                    runs.append(LoggedRun(root, columns, params))
    if not runs:
        raise ValueError(f"no non-empty progress.csv found below {list(directories)}")
    return sorted(runs, key=lambda run: run.path)


def reference_points(params: dict, key: str) -> list[ReferencePoint]:
    """The paper's values of ``key`` for the env, algorithm and batch of a run's ``params.json``.

    Returns:
        The matching rows of ``paper_reference.csv`` (empty if the algorithm is not in the
        registry or the paper has no such curve), only those of the figure whose batch the run
        used (:func:`~meta_policy_search.experiment.paper.same_batch`).
    """
    algorithm = algorithm_for_params(params)
    if algorithm is None:
        return []
    return points_for_run(load_paper_reference(), params.get("env", ""), algorithm.legend, key,
                          params)


def missing_reference_reason(params: dict, key: str) -> str | None:
    """Why :func:`reference_points` finds no paper values for a run, or ``None`` if it finds some.

    Args:
        params: the run's ``params.json``.
        key: the ``progress.csv`` column.

    Returns:
        One sentence: the algorithm or env is not in the paper, the paper has no curve of
        ``key``, or the run's batch (``meta_batch_size x rollouts_per_meta_task``) is not the
        batch of the paper's figure (naming both).
    """
    if reference_points(params, key):
        return None
    algorithm = algorithm_for_params(params)
    if algorithm is None:
        return f"algorithm {params.get('algo')!r} is not one of the paper's"
    env = params.get("env", "")
    reference = load_paper_reference()
    same_curve = [p for p in reference if p.env == env and p.algorithm == algorithm.legend]
    if not same_curve:
        return f"the paper has no {algorithm.legend} curve on {env}"
    same_key = [p for p in same_curve if p.metric == key]
    if not same_key:
        return f"the paper's {algorithm.legend} curve on {env} is not {key}"
    batches = sorted({f"{FIGURE_BATCHES[p.figure][0]} x {FIGURE_BATCHES[p.figure][1]} "
                      f"({p.figure})" for p in same_key if p.figure in FIGURE_BATCHES})
    return (f"the run's batch is {params.get('meta_batch_size')} x "
            f"{params.get('rollouts_per_meta_task')} (meta_batch_size x rollouts_per_meta_task), "
            f"the paper's is {' or '.join(batches)}; a curve of another batch is not comparable")


def draw_reference(ax: Any, points: Sequence[ReferencePoint], color: Any,
                   label: str | None = None) -> None:
    """Draw reference points with error bars of their reading precision (hollow markers)."""
    if points:
        ax.errorbar([p.timesteps for p in points], [p.value for p in points],
                    yerr=[p.precision for p in points], fmt="o", mfc="none", color=color,
                    capsize=3, label=label)


def normalized_params(params: dict) -> dict:
    """A ``params.json`` in today's spelling, for comparing runs of different versions.

    ``parallel`` becomes ``executor``
    (:func:`~meta_policy_search.experiment.config_values.upgrade_legacy_params`), and a field
    of the run's algorithm that the file lacks gets the value of :data:`MISSING_PARAMS_MEAN`
    (``oracle`` missing is ``oracle`` false). A file without a registered ``algo`` (e.g. the
    original code's runs) is returned as it is.

    Returns:
        A new dict; ``params`` is not changed.
    """
    algorithm = algorithm_for_params(params)
    if algorithm is None:
        return dict(params)
    values = upgrade_legacy_params(params)
    fields = {field.name for field in dataclasses.fields(algorithm.config_cls)}
    for key, value in MISSING_PARAMS_MEAN.items():
        if key in fields:
            values.setdefault(key, value)
    return values


def config_key(run: LoggedRun) -> str:
    """The grouping key: :func:`normalized_params` without the :data:`IGNORED_PARAMS` (or the
    run's path when it has no ``params.json``)."""
    if not run.params:
        return "path:" + run.path
    params = {k: v for k, v in normalized_params(run.params).items() if k not in IGNORED_PARAMS}
    return json.dumps(params, sort_keys=True)


def algorithm_label(params: dict) -> str:
    """A run's algorithm as the registry names it (``lvc_vpg`` for a ``vpg_maml`` run with the
    LVC inner objective), else its ``algo`` (``'run'`` if none)."""
    algorithm = algorithm_for_params(params)
    return algorithm.name if algorithm is not None else str(params.get("algo", "run"))


def varying_keys(param_sets: Sequence[dict]) -> list[str]:
    """The keys whose values differ between ``param_sets`` (normalized ``params.json`` files),
    leaving out :data:`IGNORED_PARAMS`, ``algo`` and ``env``; sorted."""
    keys = {k for params in param_sets for k in params} - set(IGNORED_PARAMS) - {"algo", "env"}
    return sorted(k for k in keys
                  if len({json.dumps(params.get(k), sort_keys=True) for params in param_sets}) > 1)


def group_runs(runs: Sequence[LoggedRun]) -> dict[str, list[LoggedRun]]:
    """Group runs by :func:`config_key` and name each group.

    A group's label is its algorithm (:func:`algorithm_label`) and ``env`` plus ``key=value``
    for every setting that differs between the groups of the same algorithm and env
    (:func:`varying_keys`): the paper's per-env settings, or an algorithm's own fields, say
    nothing new next to the algorithm's and the env's name. Groups without ``params.json`` are
    labelled by their path.

    Returns:
        Label -> runs (seeds) of that configuration, in first-seen order.
    """
    groups: dict[str, list[LoggedRun]] = {}
    for run in runs:
        groups.setdefault(config_key(run), []).append(run)
    params_of = {key: normalized_params(runs_of_group[0].params)
                 for key, runs_of_group in groups.items()}

    def same_cell(params: dict) -> list[dict]:
        cell = (algorithm_label(params), params.get("env"))
        return [other for other in params_of.values()
                if other and (algorithm_label(other), other.get("env")) == cell]

    labelled = {}
    for key, runs_of_group in groups.items():
        params = params_of[key]
        if not params:
            label = runs_of_group[0].path
        else:
            parts = [algorithm_label(params), str(params.get("env", ""))]
            parts += [f"{k}={params.get(k)}" for k in varying_keys(same_cell(params))]
            label = " ".join(p for p in parts if p)
        while label in labelled:
            label += "'"
        labelled[label] = runs_of_group
    return labelled


def aggregate(runs: Sequence[LoggedRun], key: str, x_key: str) -> tuple[np.ndarray, ...]:
    """Mean and std over seeds of ``key``, aligned by row and cut to the shortest run.

    Args:
        runs: seeds of one configuration.
        key: the y column.
        x_key: the x column (averaged over seeds); ``'Itr'`` or ``'n_timesteps'`` typically.

    Returns:
        ``(x, mean, std)``, each ``[min_rows]``; ``std`` is the population std (0 for one seed).

    Raises:
        ValueError: if a run lacks ``key`` or ``x_key``.
    """
    for run in runs:
        for column in (key, x_key):
            if column not in run.columns:
                raise ValueError(f"{run.path}/progress.csv has no column {column!r}")
    length = min(len(run.columns[key]) for run in runs)
    ys = np.stack([run.columns[key][:length] for run in runs])
    xs = np.stack([run.columns[x_key][:length] for run in runs])
    return xs.mean(axis=0), ys.mean(axis=0), ys.std(axis=0)


def default_keys(runs: Sequence[LoggedRun]) -> list[str]:
    """``Step_k-AverageReturn`` for every inner step ``k`` present (else ``AverageReturn``)."""
    keys = {k for run in runs for k in run.columns if re.fullmatch(r"Step_\d+-AverageReturn", k)}
    if not keys:
        return ["AverageReturn"]
    return sorted(keys, key=lambda k: int(k.split("_")[1].split("-")[0]))
