"""Batched MuJoCo meta-envs: one ``MjData`` per env copy, the env's own row maths on all of them.

A MuJoCo meta-env writes its step once over ``k`` rows of data fields (:class:`MujocoRows`): its
positions, reward terms, termination and observation
(:class:`~meta_policy_search.envs.mujoco_envs.common.MujocoMetaEnv`). Its gymnasium ``step`` runs
those methods on its one row; :class:`BatchedMujocoEnv` runs them on every stepped copy at once.
This module knows no env class: it needs only :class:`MujocoRowEnv`.

Why not :func:`mujoco.rollout.rollout`: a gymnasium env carries the solver's warm start
(``qacc_warmstart``) from one env step to the next, and ``rollout`` neither returns it nor keeps
it between calls, so its physics would drift from the single env's after a few steps (contact
solutions differ within the solver tolerance). The copies of an env without contact forces are
one :class:`mujoco.batch.Batch` instead: each copy is a row of the full integration state (warm
start included), which one C call loads into a shared ``MjData``, steps
``mj_step(nstep=frame_skip)`` and saves back, for all stepped copies at once. That makes exactly
the physics calls of gymnasium's ``do_simulation`` on an ``MjData`` that stays in the CPU's
cache, with no Python per copy. The envs that read the contact forces ``cfrc_ext`` (Ant and
Humanoid), which ``mj_step`` does not compute, keep one ``MjData`` per copy and call
``mj_step`` and ``mj_rnePostConstraint`` on each, as gymnasium does (so do all envs on
MuJoCo < 4, which has no :mod:`mujoco.batch`). A batch cannot give those forces: it neither runs
``mj_rnePostConstraint`` after a step nor exposes the contacts it reads, and an acceleration
sensor, which makes ``mj_forward`` compute ``cfrc_ext``, gives other numbers under these envs'
RK4 integrator, whose step ends on the data of its last stage
(``benchmarks/results/contact_forces_in_batch.md``). Everything else is computed for all stepped
envs at once from a ``[k, width]`` array of the fields the env reads.

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
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

import mujoco
import numpy as np

try:
    from mujoco.batch import Batch
except ImportError:  # MuJoCo < 4 (the metaworld extra pins 3.3): one MjData per copy
    Batch = None

from meta_policy_search.envs.base import BatchedMetaEnv, BatchedStep, check_num_tasks
from meta_policy_search.types import Task


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
        self._fields = row_layout(proto.row_fields(self.model))
        if proto.uses_contact_forces or Batch is None:
            width = sum(size for _, size in self._fields.values())
            self._physics: _Physics = _DataPerCopy(proto, self.model, num_envs, width)
        else:
            self._physics = _BatchOfStates(self.model, num_envs)
        first = self._rows(self._physics.rows(np.zeros(1, dtype=np.int64)))
        self.position = np.zeros((num_envs, proto.positions(first).shape[1]))
        self.task = np.zeros((num_envs,) + np.shape(proto.task_array()))
        self.task[:] = proto.task_array()

    def _rows(self, values: np.ndarray) -> MujocoRows:
        return MujocoRows(values, self._fields, self.model, self.nq, self.nv)

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
            self._physics.set_models(self.models)

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """gymnasium's ``reset(seed=...)`` for each env: the proto env draws the start state as
        it does for itself, which is copied into the env's state (``mj_resetData``, then
        ``qpos`` and ``qvel``)."""
        indices = np.asarray(indices, dtype=np.int64)
        proto = self._proto
        qpos = np.empty((len(indices), self.nq))
        qvel = np.empty((len(indices), self.nv))
        for n, seed in enumerate(seeds):
            proto.reset(seed=int(seed))
            qpos[n], qvel[n] = proto.data.qpos, proto.data.qvel
        self._physics.reset(indices, qpos, qvel)
        rows = self._rows(self._physics.rows(indices))
        self.position[indices] = proto.positions(rows)
        return proto.observations(rows)

    def step(self, indices: np.ndarray, actions: np.ndarray) -> BatchedStep:
        indices = np.asarray(indices, dtype=np.int64)
        action = np.asarray(actions, dtype=np.float64)
        if action.shape != (len(indices), self.model.nu):
            raise ValueError(
                f"actions must have shape ({len(indices)}, {self.model.nu}), got {action.shape}"
            )
        self._physics.step(indices, action, self.frame_skip)
        rows = self._rows(self._physics.rows(indices))
        after = self._proto.positions(rows)
        before = self.position[indices]
        self.position[indices] = after
        return self._proto.step_rows(rows, self.task[indices], before, after, action)


class _Physics(Protocol):
    """The simulators of a :class:`BatchedMujocoEnv`'s copies."""

    def set_models(self, models: list[Any]) -> None:
        """Step copy ``i`` with ``models[i]`` from now on."""

    def reset(self, indices: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """``mj_resetData`` each copy of ``indices``, then set its ``[k, nq]`` ``qpos`` and
        ``[k, nv]`` ``qvel``."""

    def step(self, indices: np.ndarray, controls: np.ndarray, frame_skip: int) -> None:
        """Set the ``[k, nu]`` controls of the copies ``indices`` and advance each
        ``frame_skip`` physics steps."""

    def rows(self, indices: np.ndarray) -> np.ndarray:
        """``[k, width]``: the row fields of the copies ``indices`` now (a new array)."""


class _BatchOfStates:
    """The copies as rows of one :class:`mujoco.batch.Batch` (one thread: a sampler worker owns
    a core), for envs whose rows are ``qpos`` and ``qvel`` only.

    The batch steps each row on a shared ``MjData`` from its full integration state, which gives
    the numbers of stepping the copy's own ``MjData`` (the batch's contract, checked against the
    single env by ``tests/test_batched_envs.py``).
    """

    def __init__(self, model: Any, num_envs: int) -> None:
        self.batch = Batch(model, num_envs, nthread=1)
        self.qpos, self.qvel = self.batch.bind("qpos"), self.batch.bind("qvel")
        self.ctrl = self.batch.bind("ctrl")

    def set_models(self, models: list[Any]) -> None:
        self.batch.set_models(models)

    def reset(self, indices: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        # The batch wants ascending ids; the rows are written by index, in any order.
        self.batch.reset(np.sort(indices), stage=mujoco.mjtStage.mjSTAGE_NONE)
        self.qpos[indices] = qpos
        self.qvel[indices] = qvel

    def step(self, indices: np.ndarray, controls: np.ndarray, frame_skip: int) -> None:
        self.ctrl[indices] = controls
        self.batch.step(np.sort(indices), nstep=frame_skip)

    def rows(self, indices: np.ndarray) -> np.ndarray:
        return np.concatenate((self.qpos[indices], self.qvel[indices]), axis=1)


class _DataPerCopy:
    """One ``MjData`` per copy, for the envs whose rows hold the contact forces ``cfrc_ext``
    (computed by ``mj_rnePostConstraint`` after each step, which a batch cannot do: see the
    module's docstring), and for every env where MuJoCo has no :mod:`mujoco.batch`.

    The Python work per copy and step is kept to the calls themselves: the controls are written
    through views bound once, and the rows of all stepped copies are read by one ``concatenate``
    of views into their ``MjData`` rather than one per copy.

    Args:
        proto: the env, whose :meth:`MujocoRowEnv.row_views` name the row fields in an ``MjData``.
        model: the model of every copy until :meth:`set_models`.
        num_envs: number of copies.
        width: the size of a row.
    """

    def __init__(self, proto: MujocoRowEnv, model: Any, num_envs: int, width: int) -> None:
        self.width = width
        self.models = [model] * num_envs
        self.datas = [mujoco.MjData(model) for _ in range(num_envs)]
        # Views into each MjData (valid as long as the data lives): a copy's row is their
        # concatenation, and its controls are written through the bound ``ctrl``.
        self.views = [proto.row_views(model, data) for data in self.datas]
        self.controls = [data.ctrl for data in self.datas]
        self.contact = bool(proto.uses_contact_forces)

    def set_models(self, models: list[Any]) -> None:
        self.models = list(models)

    def reset(self, indices: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        for i, qpos_i, qvel_i in zip(indices.tolist(), qpos, qvel):
            model, data = self.models[i], self.datas[i]
            mujoco.mj_resetData(model, data)
            data.qpos[:] = qpos_i
            data.qvel[:] = qvel_i
            mujoco.mj_forward(model, data)

    def step(self, indices: np.ndarray, controls: np.ndarray, frame_skip: int) -> None:
        mj_step, rne_post = mujoco.mj_step, mujoco.mj_rnePostConstraint
        models, datas, bound_controls = self.models, self.datas, self.controls
        if self.contact:
            for i, control in zip(indices.tolist(), controls):
                model, data = models[i], datas[i]
                bound_controls[i][:] = control
                mj_step(model, data, frame_skip)
                rne_post(model, data)
        else:
            for i, control in zip(indices.tolist(), controls):
                bound_controls[i][:] = control
                mj_step(models[i], datas[i], frame_skip)

    def rows(self, indices: np.ndarray) -> np.ndarray:
        views = self.views
        parts = [view for i in indices.tolist() for view in views[i]]
        if not parts:  # no copy stepped: concatenate refuses an empty list
            return np.empty((0, self.width))
        return np.concatenate(parts).reshape(len(indices), self.width)
