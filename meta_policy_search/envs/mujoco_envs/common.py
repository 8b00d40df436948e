"""The step shared by every MuJoCo meta-env, written once over rows, and its pickling.

Each concrete env inherits from a task mixin (:mod:`.tasks` or :mod:`.rand_params`), which
inherits from :class:`MujocoMetaEnv`, and then from a gymnasium v5 MuJoCo env, e.g.
``class HalfCheetahRandDirecEnv(DirectionTaskEnv, HalfCheetahEnv)``. :class:`MujocoMetaEnv`
comes first in the method resolution order, so its :meth:`~MujocoMetaEnv.step` and observation
replace gymnasium's while the physics and reset noise stay gymnasium's.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import mujoco
import numpy as np
from gymnasium import utils
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv

from meta_policy_search.envs.base import BatchedStep, MetaEnv
from meta_policy_search.envs.batched.mujoco import (
    BatchedMujocoEnv,
    MujocoRows,
    row_layout,
    squared_norms,
)
from meta_policy_search.envs.mujoco_envs.diagnostics import velocity_diagnostics
from meta_policy_search.types import PathBatch, Task


def sum_reward_terms(infos: dict[str, np.ndarray]) -> np.ndarray:
    """``[k]`` rewards: the sum of the info entries whose key starts with ``'reward_'``, from 0
    and left to right as Python's ``sum`` adds them."""
    terms = [value for key, value in infos.items() if key.startswith("reward_")]
    rewards = 0.0 + terms[0]
    for term in terms[1:]:
        rewards += term
    return rewards


class MujocoMetaEnv(MetaEnv, MujocoEnv, utils.EzPickle):
    """Base of the MuJoCo meta-envs: the step written once over rows, never truncating, pickling.

    An env's maths reads ``k`` rows of data fields
    (:class:`~meta_policy_search.envs.batched.mujoco.MujocoRows`: ``qpos``, ``qvel`` and, for the
    contact envs, ``cfrc_ext`` and :meth:`extra_fields`) and returns ``[k]`` or ``[k, ...]``
    arrays:

    * :meth:`positions`: the position whose finite difference over a step is the velocity;
    * :meth:`step_info`: the per-step info dict from the positions before and after the
      ``frame_skip`` physics steps; the reward is the sum of the entries whose key starts with
      ``'reward_'``, so every reward term is visible to :meth:`log_diagnostics` and the tests;
    * :meth:`terminated` (never, by default) and :meth:`observations`.

    :meth:`step` runs them on this env's one row; :meth:`make_batched` returns a
    :class:`~meta_policy_search.envs.batched.mujoco.BatchedMujocoEnv`, which runs them on every
    stepped copy at once. A row's results do not depend on the batch, so both give the same
    numbers. The task reaches the maths as :meth:`task_array` (or, for the rand-params envs, as
    the model of :meth:`task_model`).

    Pickling re-runs the (argument-free) constructor through gymnasium's
    :class:`~gymnasium.utils.EzPickle`, then restores the task, the task RNG, the episode RNG
    and the simulator state, so a copy sent to a worker process behaves exactly like the
    original (same task, same next step).

    :class:`~gymnasium.envs.mujoco.mujoco_env.MujocoEnv` and :class:`~gymnasium.utils.EzPickle`
    are listed as bases so the simulator attributes (``model``, ``data``, ``dt``, ...) are typed;
    the concrete gymnasium env, which derives from both, still follows this class in the method
    resolution order, so the order is the same as without them.
    """

    if TYPE_CHECKING:
        # gymnasium robot settings the row methods read (each robot has some of them)
        _exclude_current_positions_from_observation: bool
        _reset_noise_scale: float
        _healthy_z_range: tuple[float, float]
        _healthy_angle_range: tuple[float, float]
        _healthy_state_range: tuple[float, float]
        _contact_force_range: tuple[float, float]
        frame_skip: int

    uses_contact_forces: ClassVar[bool] = False
    """Whether the rows hold the contact forces ``cfrc_ext`` (``mj_rnePostConstraint`` after each
    step) and the fields of :meth:`extra_fields`."""
    _row_layout: dict[str, tuple[int, int]] | None = None

    def _finish_meta_init(self, task: Task, render_mode: str | None) -> None:
        """Record the constructor arguments for pickling and set the initial task.

        Must be called at the end of every concrete ``__init__``, after the gymnasium
        constructor (which records its own, different, arguments).
        """
        utils.EzPickle.__init__(self, render_mode=render_mode)
        self.set_task(task)

    # ------------------------------------------------------------------ the rows
    def extra_fields(self, model: Any) -> dict[str, int]:
        """Names and sizes of the data fields the rows hold after ``qpos``, ``qvel`` and
        ``cfrc_ext`` (contact envs only)."""
        return {}

    def extra_views(self, model: Any, data: Any) -> tuple[np.ndarray, ...]:
        """Views into ``data`` of :meth:`extra_fields`, in the same order."""
        return ()

    def row_fields(self, model: Any) -> dict[str, int]:
        """Names and sizes of the data fields a row holds, in order."""
        sizes = {"qpos": int(model.nq), "qvel": int(model.nv)}
        if self.uses_contact_forces:
            sizes["cfrc_ext"] = 6 * int(model.nbody)
            sizes.update(self.extra_fields(model))
        return sizes

    def row_views(self, model: Any, data: Any) -> tuple[np.ndarray, ...]:
        """Views into ``data`` of :meth:`row_fields`, in the same order."""
        views = (data.qpos, data.qvel)
        if self.uses_contact_forces:
            views += (data.cfrc_ext.ravel(), *self.extra_views(model, data))
        return views

    def _rows(self) -> MujocoRows:
        """This env's one row, read from its simulator now."""
        if self._row_layout is None:  # fixed by the model's sizes: computed once
            self._row_layout = row_layout(self.row_fields(self.model))
        values = np.concatenate(self.row_views(self.model, self.data))[None]
        return MujocoRows(values, self._row_layout, self.model, int(self.model.nq),
                          int(self.model.nv))

    # ------------------------------------------------------------------ the maths, over k rows
    def task_array(self) -> Any:
        """The current task as the array the reward reads (``0.0``: none, e.g. the rand-params
        envs, whose task lives in the model)."""
        return 0.0

    def task_model(self, model: Any) -> Any | None:
        """A copy of ``model`` with the current task's parameters, or ``None`` if the task does
        not change the model."""
        return None

    def positions(self, rows: MujocoRows) -> np.ndarray:
        """``[k, p]`` positions whose finite difference is the velocity: ``qpos[0]`` for planar
        bodies."""
        return rows["qpos"][:, 0:1]

    def observations(self, rows: MujocoRows) -> np.ndarray:
        """``[k, obs_dim]``: gymnasium's observation, ``qpos[1:]`` (or all of ``qpos``) and
        ``qvel``, unless the robot's mixin overrides it."""
        qpos = rows["qpos"]
        exclude = self._exclude_current_positions_from_observation
        return np.concatenate([qpos[:, 1:] if exclude else qpos, rows["qvel"]], axis=1)

    def terminated(self, rows: MujocoRows) -> np.ndarray:
        """``[k]`` bool: whether the state after the step ends the episode (never, unless
        overridden)."""
        return np.zeros(len(rows), dtype=bool)

    def step_info(
        self, rows: MujocoRows, task: np.ndarray, before: np.ndarray, after: np.ndarray,
        action: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """The info of one step of ``k`` copies, each entry ``[k]``, the same keys every step;
        the keys starting with ``'reward_'`` sum to the reward.

        Args:
            rows: the copies' data fields after the step.
            task: ``[k, ...]`` :meth:`task_array` of each copy's task.
            before: ``[k, p]`` :meth:`positions` before the step.
            after: ``[k, p]`` positions after it.
            action: ``[k, act_dim]`` actions.
        """
        raise NotImplementedError(f"{type(self).__name__} defines no step_info")

    def step_rows(
        self, rows: MujocoRows, task: np.ndarray, before: np.ndarray, after: np.ndarray,
        action: np.ndarray,
    ) -> BatchedStep:
        """Observations, rewards, termination and infos of ``k`` stepped copies (arguments as
        :meth:`step_info`)."""
        infos = self.step_info(rows, task, before, after, action)
        return BatchedStep(self.observations(rows), sum_reward_terms(infos),
                           self.terminated(rows), infos)

    # ------------------------------------------------------------------ gymnasium API, one row
    def _get_obs(self) -> np.ndarray:
        # gymnasium's reset_model returns this: the observation of the one row.
        return self.observations(self._rows())[0]

    # gymnasium's MujocoEnv.step narrows gym.Env.step's reward (SupportsFloat) and info
    # (dict[str, Any]) to np.float64; the info contract here is Python floats.
    def step(  # type: ignore[override]
        self, action: np.ndarray
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, float]]:
        """Advance the physics ``frame_skip`` steps with ``action`` as the control, then
        :meth:`step_rows` on this env's one row.

        Args:
            action: ``[act_dim]`` control, already within the action bounds (MuJoCo clamps the
                control but the cost uses ``action`` as given, as in the original).

        Returns:
            ``(observation [obs_dim], reward, terminated, truncated=False, info)``; ``info``
            maps names to Python floats, the same keys every step.

        Raises:
            ValueError: if ``action`` does not have shape ``[act_dim]``.
        """
        action = np.asarray(action, dtype=np.float64)
        before = self.positions(self._rows())
        self.do_simulation(action, self.frame_skip)
        rows = self._rows()
        task = np.asarray(self.task_array(), dtype=np.float64)[None]
        step = self.step_rows(rows, task, before, self.positions(rows), action[None])
        if self.render_mode == "human":
            self.render()
        info = {key: float(value[0]) for key, value in step.infos.items()}
        return step.observations[0], float(step.rewards[0]), bool(step.dones[0]), False, info

    def make_batched(self, num_envs: int) -> BatchedMujocoEnv:
        """``num_envs`` copies stepped with per-copy ``MjData`` and this env's row maths (see
        :mod:`meta_policy_search.envs.batched.mujoco`)."""
        return BatchedMujocoEnv(self, num_envs)

    def _get_reset_info(self) -> dict[str, float]:
        # Reset infos are not part of the rollout data; keep them empty rather than leak
        # gymnasium's (sometimes array-valued) ones.
        return {}

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        state = utils.EzPickle.__getstate__(self)
        state["meta_task"] = self.get_task()
        state["meta_task_rng"] = self._task_rng
        state["meta_np_random"] = (self._np_random, self._np_random_seed)
        data = self.data
        state["meta_physics"] = {
            "time": float(data.time),
            "qpos": data.qpos.copy(),
            "qvel": data.qvel.copy(),
            "act": data.act.copy(),
            "ctrl": data.ctrl.copy(),
            "qacc_warmstart": data.qacc_warmstart.copy(),
        }
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        utils.EzPickle.__setstate__(self, state)
        self.set_task(state["meta_task"])
        self._task_rng = state["meta_task_rng"]
        self._np_random, self._np_random_seed = state["meta_np_random"]
        physics = state["meta_physics"]
        self.data.time = physics["time"]
        for name in ("qpos", "qvel", "act", "ctrl", "qacc_warmstart"):
            getattr(self.data, name)[:] = physics[name]
        mujoco.mj_forward(self.model, self.data)
        mujoco.mj_rnePostConstraint(self.model, self.data)


class ForwardRewardEnv(MujocoMetaEnv):
    """Step info of the locomotion envs: ``forward_vel``, ``reward_forward``, then the costs.

    The info is ``{"forward_vel": v, "reward_forward": _forward_reward(task, v),
    **_cost_terms(rows, a)}`` with ``v = _forward_velocity(task, (after - before) / dt)``, in
    that key order (the reward sums the ``'reward_'`` entries in this order), each over ``k``
    rows. The task mixins of :mod:`.tasks` define ``_forward_velocity`` and ``_forward_reward``;
    the default cost terms are ``reward_ctrl = -ctrl_cost_weight * ||a||^2``, followed by
    ``reward_survive = survive_reward`` unless ``survive_reward`` is ``None``. The default
    diagnostics are :func:`.diagnostics.velocity_diagnostics`.
    """

    ctrl_cost_weight: ClassVar[float] = 0.0
    survive_reward: ClassVar[float | None] = None

    def _forward_velocity(self, task: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """``[k]`` speed the task rewards, from the ``[k, p]`` velocities: the x velocity unless
        the task mixin overrides it."""
        return velocity[:, 0]

    def _forward_reward(self, task: np.ndarray, forward_vel: np.ndarray) -> np.ndarray:
        """``[k]`` ``reward_forward`` terms for ``forward_vel`` (the velocity itself by default)."""
        return forward_vel

    def _cost_terms(self, rows: MujocoRows, action: np.ndarray) -> dict[str, np.ndarray]:
        """The info entries that follow ``reward_forward``, each ``[k]``."""
        costs = {"reward_ctrl": -self.ctrl_cost_weight * squared_norms(action)}
        if self.survive_reward is not None:
            costs["reward_survive"] = np.full(len(action), float(self.survive_reward))
        return costs

    def step_info(
        self, rows: MujocoRows, task: np.ndarray, before: np.ndarray, after: np.ndarray,
        action: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """``forward_vel``, ``reward_forward``, then the costs."""
        velocity = (after - before) / float(self.dt)
        forward_vel = self._forward_velocity(task, velocity)
        return {
            "forward_vel": forward_vel,
            "reward_forward": self._forward_reward(task, forward_vel),
            **self._cost_terms(rows, action),
        }

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """``AvgForwardVel``, ``AvgFinalForwardVel``, ``AvgCtrlCost`` (see :mod:`.diagnostics`)."""
        return velocity_diagnostics(paths, prefix)


@contextlib.contextmanager
def mujoco_warnings_to_python() -> Iterator[None]:
    """Route MuJoCo's warnings to :func:`warnings.warn` while building a model.

    MuJoCo's default handler appends every warning to ``MUJOCO_LOG.TXT`` in the working
    directory; gymnasium's ``half_cheetah.xml`` triggers one (``settotalmass`` is deprecated) each
    time it is compiled, i.e. in every worker. The deprecation is dropped (the model is
    gymnasium's, not ours); any other warning becomes a Python ``RuntimeWarning``.
    """

    def handler(message: str) -> None:
        if "settotalmass" not in message:
            warnings.warn(f"MuJoCo: {message}", RuntimeWarning, stacklevel=2)

    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(handler)
    try:
        yield
    finally:
        mujoco.set_mju_user_warning(previous)


# ---------------------------------------------------------------------- shared by the robots
def planar_observations(env: MujocoMetaEnv, rows: MujocoRows) -> np.ndarray:
    """``[k, obs_dim]``: Hopper's and Walker2d's observation (``qpos[1:]``, ``qvel`` clipped to
    ``[-10, 10]``) for each row."""
    qpos = rows["qpos"]
    exclude = env._exclude_current_positions_from_observation
    qvel = np.clip(rows["qvel"], -10, 10)
    return np.concatenate([qpos[:, 1:] if exclude else qpos, qvel], axis=1)


def planar_healthy(env: Any, rows: MujocoRows) -> np.ndarray:
    """``[k]`` bool: Hopper's and Walker2d's height and angle test (``env`` has gymnasium's
    ``_healthy_z_range`` and ``_healthy_angle_range``)."""
    qpos = rows["qpos"]
    z, angle = qpos[:, 1], qpos[:, 2]
    min_z, max_z = env._healthy_z_range
    min_angle, max_angle = env._healthy_angle_range
    return (min_z < z) & (z < max_z) & (min_angle < angle) & (angle < max_angle)
