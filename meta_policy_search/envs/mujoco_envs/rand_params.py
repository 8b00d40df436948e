"""Random physical parameters as tasks (the paper's Hopper and Walker2d "rand params" envs).

A task is a dict of per-element multipliers, one array per randomised model field::

    body_mass     [nbody]     1.5 ** U(-3, 3)
    body_inertia  [nbody, 3]  1.5 ** U(-3, 3)
    geom_friction [ngeom, 3]  1.5 ** U(-3, 3)
    dof_damping   [nv]        1.3 ** U(-3, 3)

:meth:`RandParamsEnv.set_task` writes ``original_value * multiplier`` into ``self.model``, where
the original values are copied from the model when the env is built. The original code stored
the absolute parameter values as the task; multipliers carry the same information, are
independent of the model file and keep the task small to check.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from meta_policy_search.envs.mujoco_envs.common import MujocoMetaEnv
from meta_policy_search.utils.validation import check_positive_int

RAND_PARAM_BASES: dict[str, float] = {
    "body_mass": 1.5,
    "body_inertia": 1.5,
    "geom_friction": 1.5,
    "dof_damping": 1.3,
}
"""Randomised ``MjModel`` fields and the base of their log-uniform multipliers."""

LOG_SCALE_LIMIT = 3.0
"""Multipliers are ``base ** U(-LOG_SCALE_LIMIT, LOG_SCALE_LIMIT)``."""


class RandParamsEnv(MujocoMetaEnv):
    """Task: per-element multipliers of the model's mass, inertia, friction and damping.

    Default task: all multipliers 1 (the unmodified model).
    """

    _original_params: dict[str, np.ndarray]
    _multipliers: dict[str, np.ndarray]

    def _save_original_params(self) -> None:
        """Copy the unmodified model fields; call once, right after the model is built."""
        self._original_params = {
            name: np.array(getattr(self.model, name), dtype=np.float64, copy=True)
            for name in RAND_PARAM_BASES
        }

    def default_task(self) -> dict[str, np.ndarray]:
        """Multipliers that leave the model unchanged (all ones)."""
        return {name: np.ones_like(value) for name, value in self._original_params.items()}

    def sample_tasks(self, n_tasks: int) -> list[dict[str, np.ndarray]]:
        """Draw ``n_tasks`` sets of log-uniform multipliers.

        Args:
            n_tasks: number of tasks, positive.

        Returns:
            A list of ``n_tasks`` dicts ``field name -> multipliers`` with the field's shape.

        Raises:
            ValueError: if ``n_tasks`` is not a positive integer.
        """
        n_tasks = check_positive_int("n_tasks", n_tasks)
        tasks = []
        for _ in range(n_tasks):
            task = {}
            for name, base in RAND_PARAM_BASES.items():
                exponent = self.task_rng.uniform(
                    -LOG_SCALE_LIMIT, LOG_SCALE_LIMIT, size=self._original_params[name].shape
                )
                task[name] = np.power(base, exponent)
            tasks.append(task)
        return tasks

    def set_task(self, task: dict[str, np.ndarray]) -> None:
        """Scale the model's parameters by ``task``'s multipliers (relative to the originals).

        Args:
            task: dict with exactly the keys ``body_mass``, ``body_inertia``, ``geom_friction``
                and ``dof_damping``, each a positive finite array of that model field's shape.

        Raises:
            ValueError: if keys are missing or extra, or an array has the wrong shape or a
                non-positive or non-finite entry.
        """
        if not isinstance(task, dict) or set(task) != set(RAND_PARAM_BASES):
            keys = sorted(task) if isinstance(task, dict) else type(task).__name__
            raise ValueError(
                f"rand-params task must be a dict with keys {sorted(RAND_PARAM_BASES)}, got {keys}"
            )
        multipliers = {}
        for name, original in self._original_params.items():
            value = np.asarray(task[name], dtype=np.float64)
            if value.shape != original.shape:
                raise ValueError(
                    f"task[{name!r}] must have shape {original.shape}, got {value.shape}"
                )
            if not np.all(np.isfinite(value) & (value > 0)):
                raise ValueError(f"task[{name!r}] multipliers must be finite and > 0, got {value}")
            multipliers[name] = value.copy()
        for name, original in self._original_params.items():
            getattr(self.model, name)[:] = original * multipliers[name]
        self._multipliers = multipliers

    def task_model(self, model: Any) -> Any:
        """A copy of ``model`` with the current task's scaled parameters (each batched copy
        steps its task's own model)."""
        model = copy.copy(model)
        for name in RAND_PARAM_BASES:
            getattr(model, name)[:] = getattr(self.model, name)
        return model

    def get_task(self) -> dict[str, np.ndarray]:
        """Return a copy of the current multipliers."""
        return {name: value.copy() for name, value in self._multipliers.items()}
