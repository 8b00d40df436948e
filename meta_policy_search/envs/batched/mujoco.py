"""Batched MuJoCo meta-envs: one ``MjData`` per env copy, rewards and observations as arrays.

Why ``MjData`` arrays and not :func:`mujoco.rollout.rollout`: a gymnasium env carries the
solver's warm start (``qacc_warmstart``) from one env step to the next, and ``rollout`` neither
returns it nor keeps it between calls, so its physics would drift from the single env's after a
few steps (contact solutions differ within the solver tolerance). Stepping each env's own
``MjData`` with ``mj_step(model, data, nstep=frame_skip)`` makes exactly the physics calls of
gymnasium's ``do_simulation`` (``mj_rnePostConstraint`` only where the contact forces
``cfrc_ext`` are used: Ant and Humanoid); the per-env Python left is three C calls, and
everything else (velocity, reward terms, termination, observation) is computed for all stepped
envs at once from a ``[k, width]`` array of the fields the env reads (:class:`MujocoRows`).

The maths of each env lives with the env: its ``batched_*`` methods (defaults in
:class:`~meta_policy_search.envs.mujoco_envs.common.MujocoMetaEnv`, the task's terms in the task
mixins, the robot's observation and termination in its mixin) are the array twins of its
``_step_info``, ``_get_obs`` and ``_is_terminated``. This module knows no env class.

The batched env holds a private copy of the single env (``proto``): tasks are validated by its
``set_task``; reset noise is drawn as the robot's ``reset_model`` draws it from
``np_random(seed)`` (checked against the single env's ``reset(seed=...)`` by the tests). The
rand-params envs step each task's own ``MjModel`` copy, with the parameters the single env's
``set_task`` writes.

Results are bit-identical to the single env's (``tests/test_batched_envs.py``): the same float
operations in the same order (``||a||^2`` via ``matmul``, which calls the same BLAS dot as
``np.dot``; Python's ``sum`` of the reward terms as sequential additions).
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np
from gymnasium.utils import seeding

from meta_policy_search.envs.batched.base import BatchedMetaEnv, BatchedStep, check_num_tasks
from meta_policy_search.types import Task

if TYPE_CHECKING:
    from meta_policy_search.envs.mujoco_envs.common import MujocoMetaEnv

_QPOS_QVEL = int(mujoco.mjtState.mjSTATE_QPOS | mujoco.mjtState.mjSTATE_QVEL)



def squared_norms(actions: np.ndarray) -> np.ndarray:
    """``[k]`` ``||a||^2`` of ``[k, d]`` rows, bit-identical to ``np.dot(a, a)`` per row."""
    return np.matmul(actions[:, None, :], actions[:, :, None])[:, 0, 0]


def row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``[k]`` ``np.dot(a[i], b[i])`` (same BLAS dot) for ``[k, d]`` rows."""
    return np.matmul(a[:, None, :], b[:, :, None])[:, 0, 0]


class MujocoRows:
    """The ``[k, width]`` data fields of ``k`` stepped copies, read by field name.

    What the envs' ``batched_*`` hooks receive (see
    :class:`~meta_policy_search.envs.mujoco_envs.common.MujocoMetaEnv`).

    Args:
        values: ``[k, width]`` rows.
        layout: field name -> ``(start, size)`` in a row.
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


class BatchedMujocoEnv(BatchedMetaEnv):
    """``num_envs`` copies of one of the MuJoCo meta-envs of :mod:`meta_policy_search.envs.mujoco_envs`.

    Args:
        env: the single env (copied through pickle; not modified); its ``batched_*`` methods
            compute positions, observations, rewards and termination for many rows at once.
        num_envs: number of copies.
    """

    def __init__(self, env: MujocoMetaEnv, num_envs: int) -> None:
        super().__init__(num_envs, env.observation_space, env.action_space)
        proto: MujocoMetaEnv = pickle.loads(pickle.dumps(env))
        self._proto = proto
        # A copy: the rand-params envs' set_task writes into the proto's model.
        self.model = copy.copy(proto.model)
        self.frame_skip = int(proto.frame_skip)
        self.dt = float(proto.dt)
        self.nq, self.nv = int(self.model.nq), int(self.model.nv)
        self.models = [self.model] * num_envs
        self.datas = [mujoco.MjData(self.model) for _ in range(num_envs)]
        self._ctrl = [data.ctrl for data in self.datas]
        self._contact = proto.batched_contact
        self._fields = self._field_layout()
        width = sum(size for _, size in self._fields.values())
        self.rows = np.zeros((num_envs, width))
        self._gather = self._make_gather()
        self._slots: list[tuple[Any, ...]] = []
        self._make_slots()
        self.position = np.zeros((num_envs, len(proto._position())))
        self.task = np.zeros((num_envs,) + np.shape(proto.batched_task_value()))
        for i in range(num_envs):
            self.task[i] = proto.batched_task_value()

    def _make_slots(self) -> None:
        """Per env: its model, data and the views the hot loop copies between (made once:
        building a numpy view costs ~0.1 us, a third of a row copy)."""
        nq, nv = self.nq, self.nv
        self._slots = [
            (model, data, data.ctrl, row[:nq], data.qpos, row[nq : nq + nv], data.qvel)
            for model, data, row in zip(self.models, self.datas, self.rows)
        ]

    # ------------------------------------------------------------------ layout of self.rows
    def _field_layout(self) -> dict[str, tuple[int, int]]:
        """Name -> ``(start, size)`` of the data fields each env's row holds."""
        sizes = {"qpos": self.nq, "qvel": self.nv}
        if self._contact:
            sizes["cfrc_ext"] = 6 * self.model.nbody
            sizes.update(self._proto.batched_extra_fields(self.model))
        layout, start = {}, 0
        for name, size in sizes.items():
            layout[name] = (start, size)
            start += size
        return layout

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
        views = [self._contact_views(data) for data in datas]
        concatenate = np.concatenate

        def gather_contact(i: int) -> None:
            concatenate(views[i], out=rows[i])

        return gather_contact

    def _contact_views(self, data: Any) -> tuple[np.ndarray, ...]:
        """The contact env's fields of ``data``, in the order of ``_field_layout``."""
        common = (data.qpos, data.qvel, data.cfrc_ext.ravel())
        return common + self._proto.batched_extra_views(self.model, data)

    # ------------------------------------------------------------------ protocol
    def set_tasks(self, tasks: Sequence[Task]) -> None:
        check_num_tasks(tasks, self.num_envs)
        proto = self._proto
        models: dict[int, Any] = {}  # the executor repeats each task object for its env copies
        for i, task in enumerate(tasks):
            proto.set_task(task)
            self.task[i] = proto.batched_task_value()
            if id(task) not in models:
                models[id(task)] = proto.batched_task_model(self.model)
            if models[id(task)] is not None:  # the task lives in the model: a model per task
                self.models[i] = models[id(task)]
        if any(model is not None for model in models.values()):
            self._make_slots()

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """gymnasium's ``reset(seed=...)`` for each env: the same ``np_random`` draws as the
        robot's ``reset_model`` (uniform position noise; velocity noise uniform, or Gaussian for
        the half-cheetah and the ant), then ``mj_resetData``, the state and ``mj_forward``."""
        indices = np.asarray(indices)
        proto = self._proto
        scale, init_qpos, init_qvel = proto._reset_noise_scale, proto.init_qpos, proto.init_qvel
        gaussian_qvel = proto.batched_gaussian_reset_velocity
        for i, seed in zip(indices.tolist(), seeds):
            rng, _ = seeding.np_random(int(seed))
            qpos = init_qpos + rng.uniform(low=-scale, high=scale, size=self.nq)
            if gaussian_qvel:
                qvel = init_qvel + scale * rng.standard_normal(self.nv)
            else:
                qvel = init_qvel + rng.uniform(low=-scale, high=scale, size=self.nv)
            model, data = self.models[i], self.datas[i]
            mujoco.mj_resetData(model, data)
            data.qpos[:] = qpos
            data.qvel[:] = qvel
            mujoco.mj_forward(model, data)
            self._gather(i)
        rows = self._rows(self.rows[indices])
        self.position[indices] = proto.batched_positions(rows)
        return proto.batched_observations(rows)

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
        proto, rows = self._proto, self._rows(self.rows[indices])
        after = proto.batched_positions(rows)
        before = self.position[indices]
        self.position[indices] = after
        infos = proto.batched_step_info(rows, self.task[indices], before, after, action)
        terms = [value for key, value in infos.items() if key.startswith("reward_")]
        rewards = 0.0 + terms[0]  # Python's sum(): 0 + t0 + t1 + ..., left to right
        for term in terms[1:]:
            rewards += term
        observations = proto.batched_observations(rows)
        return BatchedStep(observations, rewards, proto.batched_terminated(rows), infos)
