"""Batched MuJoCo meta-envs: one ``MjData`` per env copy, rewards and observations as arrays.

Why ``MjData`` arrays and not :func:`mujoco.rollout.rollout`: a gymnasium env carries the
solver's warm start (``qacc_warmstart``) from one env step to the next, and ``rollout`` neither
returns it nor keeps it between calls, so its physics would drift from the single env's after a
few steps (contact solutions differ within the solver tolerance). Stepping each env's own
``MjData`` with ``mj_step(model, data, nstep=frame_skip)`` makes exactly the physics calls of
gymnasium's ``do_simulation`` (``mj_rnePostConstraint`` only where the contact forces
``cfrc_ext`` are used: Ant and Humanoid); the per-env Python left is three C calls, and
everything else (velocity, reward terms, termination, observation) is computed for all stepped
envs at once from a ``[k, width]`` array of the fields the env reads.

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
from typing import Any

import mujoco
import numpy as np
from gymnasium.envs.mujoco.ant_v5 import AntEnv
from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv
from gymnasium.envs.mujoco.hopper_v5 import HopperEnv
from gymnasium.envs.mujoco.humanoid_v5 import HumanoidEnv
from gymnasium.envs.mujoco.swimmer_v5 import SwimmerEnv
from gymnasium.envs.mujoco.walker2d_v5 import Walker2dEnv
from gymnasium.utils import seeding

from meta_policy_search.envs.batched.base import BatchedMetaEnv, BatchedStep, check_num_tasks
from meta_policy_search.envs.mujoco_envs import ant_rand_direc, ant_rand_goal, humanoid_rand_direc
from meta_policy_search.envs.mujoco_envs.common import (
    ForwardRewardEnv,
    HealthyTerminationMixin,
    MujocoMetaEnv,
)
from meta_policy_search.envs.mujoco_envs.rand_params import RAND_PARAM_BASES, RandParamsEnv
from meta_policy_search.envs.mujoco_envs.tasks import (
    Direction2DTaskEnv,
    DirectionTaskEnv,
    GoalTaskEnv,
    VelocityTaskEnv,
)
from meta_policy_search.types import Task

_QPOS_QVEL = int(mujoco.mjtState.mjSTATE_QPOS | mujoco.mjtState.mjSTATE_QVEL)


def squared_norms(actions: np.ndarray) -> np.ndarray:
    """``[k]`` ``||a||^2`` of ``[k, d]`` rows, bit-identical to ``np.dot(a, a)`` per row."""
    return np.matmul(actions[:, None, :], actions[:, :, None])[:, 0, 0]


def row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``[k]`` ``np.dot(a[i], b[i])`` (same BLAS dot) for ``[k, d]`` rows."""
    return np.matmul(a[:, None, :], b[:, :, None])[:, 0, 0]


class BatchedMujocoEnv(BatchedMetaEnv):
    """``num_envs`` copies of one of the MuJoCo meta-envs of :mod:`meta_policy_search.envs.mujoco_envs`.

    Args:
        env: the single env (copied through pickle; not modified).
        num_envs: number of copies.

    Raises:
        ValueError: if ``env``'s class combines mixins this module does not know.
    """

    def __init__(self, env: MujocoMetaEnv, num_envs: int) -> None:
        super().__init__(num_envs, env.observation_space, env.action_space)
        proto: Any = pickle.loads(pickle.dumps(env))
        self._proto = proto
        # A copy: the rand-params envs' set_task writes into the proto's model.
        self.model = copy.copy(proto.model)
        self.frame_skip = int(proto.frame_skip)
        self.dt = float(proto.dt)
        self.nq, self.nv = int(self.model.nq), int(self.model.nv)
        self.models = [self.model] * num_envs
        self.datas = [mujoco.MjData(self.model) for _ in range(num_envs)]
        self._ctrl = [data.ctrl for data in self.datas]
        self._contact = isinstance(proto, (AntEnv, HumanoidEnv))
        self._fields = self._field_layout()
        width = sum(size for _, size in self._fields.values())
        self.rows = np.zeros((num_envs, width))
        self._gather = self._make_gather()
        self._slots: list[tuple[Any, ...]] = []
        self._make_slots()
        self.position = np.zeros((num_envs, len(proto._position())))
        self.task = np.zeros((num_envs,) + np.shape(self._task_value()))
        for i in range(num_envs):
            self.task[i] = self._task_value()

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
        model, sizes = self.model, {"qpos": self.nq, "qvel": self.nv}
        if self._contact:
            sizes["cfrc_ext"] = 6 * model.nbody
        if isinstance(self._proto, HumanoidEnv):
            sizes.update(
                cinert=10 * (model.nbody - 1), cvel=6 * (model.nbody - 1),
                qfrc_actuator=self.nv - 6, xipos=3 * model.nbody,
            )
        elif isinstance(self._proto, AntEnv):
            sizes["torso_xy"] = 2
        layout, start = {}, 0
        for name, size in sizes.items():
            layout[name] = (start, size)
            start += size
        return layout

    def field(self, rows: np.ndarray, name: str) -> np.ndarray:
        """The ``[k, size]`` columns of field ``name`` in ``rows``."""
        start, size = self._fields[name]
        return rows[:, start : start + size]

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
        """The Ant's or Humanoid's fields of ``data``, in the order of ``_field_layout``."""
        common = (data.qpos, data.qvel, data.cfrc_ext.ravel())
        if isinstance(self._proto, HumanoidEnv):
            return common + (
                data.cinert[1:].ravel(), data.cvel[1:].ravel(), data.qfrc_actuator[6:],
                data.xipos.ravel(),
            )
        return common + (data.xpos[self.model.body("torso").id, :2],)

    # ------------------------------------------------------------------ per-env-class maths
    def _task_value(self) -> Any:
        """The proto's current task as the array the reward reads."""
        proto = self._proto
        if isinstance(proto, VelocityTaskEnv):
            return proto.goal_velocity
        if isinstance(proto, (DirectionTaskEnv, Direction2DTaskEnv)):
            return proto.goal_direction
        if isinstance(proto, GoalTaskEnv):
            return proto.goal_position
        return 0.0  # rand params: the task lives in the env's model

    def _positions(self, rows: np.ndarray) -> np.ndarray:
        """``[k, p]``: what the single env's ``_position`` returns, for each row."""
        if isinstance(self._proto, HumanoidEnv):
            # gymnasium's mass_center for every row (the same einsum reduction order)
            body_mass = self.model.body_mass
            xipos = self.field(rows, "xipos").reshape(len(rows), -1, 3)
            return (np.einsum("b,nbj->nj", body_mass, xipos) / body_mass.sum())[:, 0:2]
        if isinstance(self._proto, AntEnv):
            return self.field(rows, "torso_xy")
        return self.field(rows, "qpos")[:, 0:1]

    def _observations(self, rows: np.ndarray) -> np.ndarray:
        proto, qpos, qvel = self._proto, self.field(rows, "qpos"), self.field(rows, "qvel")
        exclude = proto._exclude_current_positions_from_observation
        if isinstance(proto, HumanoidEnv):
            parts = [qpos[:, 2:] if exclude else qpos, qvel]
            parts += [self.field(rows, name) for name in ("cinert", "cvel", "qfrc_actuator")]
            parts.append(self.field(rows, "cfrc_ext")[:, 6:])
            return np.concatenate(parts, axis=1)
        if isinstance(proto, AntEnv):
            low, high = proto._contact_force_range
            contact = np.clip(self.field(rows, "cfrc_ext")[:, 6:], low, high)
            return np.concatenate([qpos[:, 2:] if exclude else qpos, qvel, contact], axis=1)
        if isinstance(proto, SwimmerEnv):
            return np.concatenate([qpos[:, 2:] if exclude else qpos, qvel], axis=1)
        if isinstance(proto, (HopperEnv, Walker2dEnv)):
            qvel = np.clip(qvel, -10, 10)
        return np.concatenate([qpos[:, 1:] if exclude else qpos, qvel], axis=1)

    def _terminated(self, rows: np.ndarray) -> np.ndarray:
        proto, qpos = self._proto, self.field(rows, "qpos")
        if not isinstance(proto, HealthyTerminationMixin):
            return np.zeros(len(rows), dtype=bool)
        if isinstance(proto, AntEnv):
            min_z, max_z = proto._healthy_z_range
            finite = np.all(np.isfinite(rows[:, : self.nq + self.nv]), axis=1)
            healthy = finite & (min_z <= qpos[:, 2]) & (qpos[:, 2] <= max_z)
        elif isinstance(proto, HumanoidEnv):
            min_z, max_z = proto._healthy_z_range
            healthy = (min_z < qpos[:, 2]) & (qpos[:, 2] < max_z)
        elif isinstance(proto, (HopperEnv, Walker2dEnv)):
            z, angle = qpos[:, 1], qpos[:, 2]
            min_z, max_z = proto._healthy_z_range
            min_angle, max_angle = proto._healthy_angle_range
            healthy = (min_z < z) & (z < max_z) & (min_angle < angle) & (angle < max_angle)
            if isinstance(proto, HopperEnv):
                state = rows[:, 2 : self.nq + self.nv]
                min_state, max_state = proto._healthy_state_range
                healthy &= np.all((min_state < state) & (state < max_state), axis=1)
        else:
            raise ValueError(f"no batched termination test for {type(proto).__name__}")
        return ~healthy

    def _step_infos(
        self, indices: np.ndarray, before: np.ndarray, after: np.ndarray, action: np.ndarray,
        rows: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """The single env's ``_step_info`` for every stepped env, in its key order."""
        proto, task = self._proto, self.task[indices]
        if isinstance(proto, GoalTaskEnv):  # AntRandGoalEnv
            offset = after - task
            return {
                "reward_forward": -(np.abs(offset[:, 0]) + np.abs(offset[:, 1])),
                **self._ant_costs(action, rows, ant_rand_goal.CTRL_COST_WEIGHT),
                "goal_distance": np.sqrt(row_dots(offset, offset)),
            }
        if not isinstance(proto, ForwardRewardEnv):
            raise ValueError(f"no batched reward for {type(proto).__name__}")
        velocity = (after - before) / self.dt
        if isinstance(proto, Direction2DTaskEnv):
            forward_vel = row_dots(task, velocity)
        else:
            forward_vel = velocity[:, 0]
        if isinstance(proto, DirectionTaskEnv):
            reward_forward = task * forward_vel
        elif isinstance(proto, VelocityTaskEnv):
            reward_forward = -np.abs(forward_vel - task)
        else:
            reward_forward = forward_vel
        if isinstance(proto, humanoid_rand_direc.HumanoidMixin):
            reward_forward = proto._forward_weight() * reward_forward
            contact = humanoid_rand_direc.CONTACT_COST_WEIGHT * np.sum(
                np.square(self.field(rows, "cfrc_ext")), axis=1
            )
            limit = humanoid_rand_direc.CONTACT_COST_MAX
            costs = {
                "reward_ctrl": -humanoid_rand_direc.CTRL_COST_WEIGHT * squared_norms(action),
                "reward_contact": -np.where(limit < contact, limit, contact),  # -min(c, limit)
                "reward_survive": np.full(len(indices), humanoid_rand_direc.SURVIVE_REWARD),
            }
        elif isinstance(proto, ant_rand_direc.AntForwardMixin):
            costs = {
                **self._ant_costs(action, rows, ant_rand_direc.CTRL_COST_WEIGHT),
                "reward_survive": np.full(len(indices), ant_rand_direc.SURVIVE_REWARD),
            }
        else:
            costs = {"reward_ctrl": -proto.ctrl_cost_weight * squared_norms(action)}
            if proto.survive_reward is not None:
                costs["reward_survive"] = np.full(len(indices), float(proto.survive_reward))
        return {"forward_vel": forward_vel, "reward_forward": reward_forward, **costs}

    def _ant_costs(
        self, action: np.ndarray, rows: np.ndarray, ctrl_cost_weight: float
    ) -> dict[str, np.ndarray]:
        clipped = np.clip(self.field(rows, "cfrc_ext"), -1.0, 1.0)
        contact = ant_rand_direc.CONTACT_COST_WEIGHT * np.sum(np.square(clipped), axis=1)
        return {"reward_ctrl": -ctrl_cost_weight * squared_norms(action), "reward_contact": -contact}

    # ------------------------------------------------------------------ protocol
    def set_tasks(self, tasks: Sequence[Task]) -> None:
        check_num_tasks(tasks, self.num_envs)
        rand_params = isinstance(self._proto, RandParamsEnv)
        models: dict[int, Any] = {}  # the executor repeats each task object for its env copies
        for i, task in enumerate(tasks):
            self._proto.set_task(task)
            self.task[i] = self._task_value()
            if rand_params:
                if id(task) not in models:
                    model = copy.copy(self.model)
                    for name in RAND_PARAM_BASES:
                        getattr(model, name)[:] = getattr(self._proto.model, name)
                    models[id(task)] = model
                self.models[i] = models[id(task)]
        if rand_params:
            self._make_slots()

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """gymnasium's ``reset(seed=...)`` for each env: the same ``np_random`` draws as the
        robot's ``reset_model`` (uniform position noise; velocity noise uniform, or Gaussian for
        the half-cheetah and the ant), then ``mj_resetData``, the state and ``mj_forward``."""
        indices = np.asarray(indices)
        proto = self._proto
        scale, init_qpos, init_qvel = proto._reset_noise_scale, proto.init_qpos, proto.init_qvel
        gaussian_qvel = isinstance(proto, (HalfCheetahEnv, AntEnv))
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
        rows = self.rows[indices]
        self.position[indices] = self._positions(rows)
        return self._observations(rows)

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
        rows = self.rows[indices]
        after = self._positions(rows)
        before = self.position[indices]
        self.position[indices] = after
        infos = self._step_infos(indices, before, after, action, rows)
        terms = [value for key, value in infos.items() if key.startswith("reward_")]
        rewards = 0.0 + terms[0]  # Python's sum(): 0 + t0 + t1 + ..., left to right
        for term in terms[1:]:
            rewards += term
        return BatchedStep(self._observations(rows), rewards, self._terminated(rows), infos)
