"""Batched MuJoCo meta-envs: one ``MjData`` per env copy, the env's own row maths on all of them.

A MuJoCo meta-env writes its step once over ``k`` rows of data fields (:class:`MujocoRows`): its
positions, reward terms, termination and observation
(:class:`~meta_policy_search.envs.mujoco_envs.common.MujocoMetaEnv`). Its gymnasium ``step`` runs
those methods on its one row; :class:`BatchedMujocoEnv` runs them on every stepped copy at once.
This module knows no env class: it needs only :class:`MujocoRowEnv`.

Why ``MjData`` arrays and not :func:`mujoco.rollout.rollout`: a gymnasium env carries the
solver's warm start (``qacc_warmstart``) from one env step to the next, and ``rollout`` neither
returns it nor keeps it between calls, so its physics would drift from the single env's after a
few steps (contact solutions differ within the solver tolerance). Stepping each env's own
``MjData`` with ``mj_step(model, data, nstep=frame_skip)`` makes exactly the physics calls of
gymnasium's ``do_simulation`` (``mj_rnePostConstraint`` only where the contact forces
``cfrc_ext`` are used: Ant and Humanoid); the per-env Python left is three C calls, and
everything else is computed for all stepped envs at once from a ``[k, width]`` array of the
fields the env reads.

The batched env holds a private copy of the single env (``proto``): tasks are validated by its
``set_task``, reset noise is drawn by its ``reset(seed=...)``. The rand-params envs step each
task's own ``MjModel`` copy, with the parameters the single env's ``set_task`` writes.

A row's results do not depend on how many rows are stepped together (``||a||^2`` via
``matmul``, which calls the same BLAS dot for any batch; Python's ``sum`` of the reward terms
as sequential additions), so the batched results are bit-identical to the single env's
(``tests/test_batched_envs.py``).
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol

import mujoco
import numpy as np

from meta_policy_search.envs.base import BatchedMetaEnv, BatchedStep, check_num_tasks
from meta_policy_search.types import Task

_QPOS_QVEL = int(mujoco.mjtState.mjSTATE_QPOS | mujoco.mjtState.mjSTATE_QVEL)


def squared_norms(actions: np.ndarray) -> np.ndarray:
    """``[k]`` ``||a||^2`` of ``[k, d]`` rows, bit-identical to ``np.dot(a, a)`` per row."""
    return np.matmul(actions[:, None, :], actions[:, :, None])[:, 0, 0]


def row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``[k]`` ``np.dot(a[i], b[i])`` (same BLAS dot) for ``[k, d]`` rows."""
    return np.matmul(a[:, None, :], b[:, :, None])[:, 0, 0]


def row_layout(sizes: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Field name -> ``(start, size)`` in a row holding the fields of ``sizes`` in order."""
    layout, start = {}, 0
    for name, size in sizes.items():
        layout[name] = (start, size)
        start += size
    return layout


class MujocoRows:
    """The ``[k, width]`` data fields of ``k`` copies, read by field name.

    What a MuJoCo meta-env's row methods receive (see
    :class:`~meta_policy_search.envs.mujoco_envs.common.MujocoMetaEnv`).

    Args:
        values: ``[k, width]`` rows.
        layout: field name -> ``(start, size)`` in a row (:func:`row_layout`).
        model: the (shared) model of the copies, for constants such as ``body_mass``.
        nq: size of ``qpos``.
        nv: size of ``qvel``.
    """

    def __init__(
        self, values: np.ndarray, layout: dict[str, tuple[int, int]], model: Any, nq: int, nv: int
    ) -> None:
        self.values, self.layout, self.model = values, layout, model
        self.state = values[:, : nq + nv]
        """``[k, nq + nv]``: ``qpos`` followed by ``qvel``."""

    def __getitem__(self, name: str) -> np.ndarray:
        """The ``[k, size]`` columns of field ``name``."""
        start, size = self.layout[name]
        return self.values[:, start : start + size]

    def __len__(self) -> int:
        return len(self.values)


class MujocoRowEnv(Protocol):
    """What :class:`BatchedMujocoEnv` reads of a MuJoCo meta-env (see
    :class:`~meta_policy_search.envs.mujoco_envs.common.MujocoMetaEnv` for each method)."""

    model: Any
    data: Any
    frame_skip: int
    uses_contact_forces: ClassVar[bool]
    observation_space: Any
    action_space: Any

    def set_task(self, task: Task) -> None: ...

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any: ...

    def row_fields(self, model: Any) -> dict[str, int]: ...

    def row_views(self, model: Any, data: Any) -> tuple[np.ndarray, ...]: ...

    def task_array(self) -> Any: ...

    def task_model(self, model: Any) -> Any | None: ...

    def positions(self, rows: MujocoRows) -> np.ndarray: ...

    def observations(self, rows: MujocoRows) -> np.ndarray: ...

    def step_rows(
        self, rows: MujocoRows, task: np.ndarray, before: np.ndarray, after: np.ndarray,
        action: np.ndarray,
    ) -> BatchedStep: ...


class BatchedMujocoEnv(BatchedMetaEnv):
    """``num_envs`` copies of a MuJoCo meta-env.

    Args:
        env: the single env (copied through pickle; not modified); its row methods compute
            positions, observations, rewards and termination for many rows at once.
        num_envs: number of copies.
    """

    def __init__(self, env: MujocoRowEnv, num_envs: int) -> None:
        super().__init__(num_envs=num_envs, observation_space=env.observation_space,
                         action_space=env.action_space)
        proto: MujocoRowEnv = pickle.loads(pickle.dumps(env))
        self._proto = proto
        # A copy: the rand-params envs' set_task writes into the proto's model.
        self.model = copy.copy(proto.model)
        self.frame_skip = int(proto.frame_skip)
        self.nq, self.nv = int(self.model.nq), int(self.model.nv)
        self.models = [self.model] * num_envs
        self.datas = [mujoco.MjData(self.model) for _ in range(num_envs)]
        self._ctrl = [data.ctrl for data in self.datas]
        self._contact = bool(proto.uses_contact_forces)
        self._fields = row_layout(proto.row_fields(self.model))
        width = sum(size for _, size in self._fields.values())
        self.rows = np.zeros((num_envs, width))
        self._gather = self._make_gather()
        self._slots: list[tuple[Any, ...]] = []
        self._make_slots()
        self._gather(0)
        self.position = np.zeros((num_envs, proto.positions(self._rows(self.rows[:1])).shape[1]))
        self.task = np.zeros((num_envs,) + np.shape(proto.task_array()))
        self.task[:] = proto.task_array()

    def _make_slots(self) -> None:
        """Per env: its model, data and the views the hot loop copies between (made once:
        building a numpy view costs ~0.1 us, a third of a row copy)."""
        nq, nv = self.nq, self.nv
        self._slots = [
            (model, data, data.ctrl, row[:nq], data.qpos, row[nq : nq + nv], data.qvel)
            for model, data, row in zip(self.models, self.datas, self.rows)
        ]

    def _rows(self, values: np.ndarray) -> MujocoRows:
        return MujocoRows(values, self._fields, self.model, self.nq, self.nv)

    def _make_gather(self) -> Callable[[int], None]:
        """A function that copies env ``i``'s fields from its ``MjData`` into ``rows[i]``."""
        rows, datas, models = self.rows, self.datas, self.models
        if not self._contact:
            get_state = mujoco.mj_getState

            def gather_state(i: int) -> None:
                get_state(models[i], datas[i], rows[i], _QPOS_QVEL)

            return gather_state
        # Views into each MjData (valid as long as the data lives), concatenated into the row.
        views = [self._proto.row_views(self.model, data) for data in datas]
        concatenate = np.concatenate

        def gather_contact(i: int) -> None:
            concatenate(views[i], out=rows[i])

        return gather_contact

    # ------------------------------------------------------------------ protocol
    def set_tasks(self, tasks: Sequence[Task]) -> None:
        check_num_tasks(tasks, self.num_envs)
        proto = self._proto
        models: dict[int, Any] = {}  # the executor repeats each task object for its env copies
        for i, task in enumerate(tasks):
            proto.set_task(task)
            self.task[i] = proto.task_array()
            if id(task) not in models:
                models[id(task)] = proto.task_model(self.model)
            if models[id(task)] is not None:  # the task lives in the model: a model per task
                self.models[i] = models[id(task)]
        if any(model is not None for model in models.values()):
            self._make_slots()

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """gymnasium's ``reset(seed=...)`` for each env: the proto env draws the start state as
        it does for itself, which is copied into the env's data (``mj_resetData``, the state,
        ``mj_forward``)."""
        indices = np.asarray(indices)
        proto = self._proto
        for i, seed in zip(indices.tolist(), seeds):
            proto.reset(seed=int(seed))
            model, data = self.models[i], self.datas[i]
            mujoco.mj_resetData(model, data)
            data.qpos[:] = proto.data.qpos
            data.qvel[:] = proto.data.qvel
            mujoco.mj_forward(model, data)
            self._gather(i)
        rows = self._rows(self.rows[indices])
        self.position[indices] = proto.positions(rows)
        return proto.observations(rows)

    def step(self, indices: np.ndarray, actions: np.ndarray) -> BatchedStep:
        indices = np.asarray(indices)
        action = np.asarray(actions, dtype=np.float64)
        if action.shape != (len(indices), self.model.nu):
            raise ValueError(
                f"actions must have shape ({len(indices)}, {self.model.nu}), got {action.shape}"
            )
        models, datas, ctrls, gather = self.models, self.datas, self._ctrl, self._gather
        mj_step, frame_skip = mujoco.mj_step, self.frame_skip
        if self._contact:
            rne_post = mujoco.mj_rnePostConstraint
            for i, action_i in zip(indices.tolist(), action):
                model, data = models[i], datas[i]
                ctrls[i][...] = action_i
                mj_step(model, data, frame_skip)
                rne_post(model, data)
                gather(i)
        else:  # the hot loop of the cheap models: one C call and three row copies per env
            slots = self._slots
            for (model, data, ctrl, qpos_row, qpos, qvel_row, qvel), action_i in zip(
                map(slots.__getitem__, indices.tolist()), action
            ):
                ctrl[...] = action_i
                mj_step(model, data, frame_skip)
                qpos_row[...] = qpos
                qvel_row[...] = qvel
        rows = self._rows(self.rows[indices])
        after = self._proto.positions(rows)
        before = self.position[indices]
        self.position[indices] = after
        return self._proto.step_rows(rows, self.task[indices], before, after, action)
