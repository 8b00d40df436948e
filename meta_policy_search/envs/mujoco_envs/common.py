"""The step loop and pickling shared by every MuJoCo meta-env.

Each concrete env inherits from a task mixin (:mod:`.tasks` or :mod:`.rand_params`), which
inherits from :class:`MujocoMetaEnv`, and then from a gymnasium v5 MuJoCo env, e.g.
``class HalfCheetahRandDirecEnv(DirectionTaskEnv, HalfCheetahEnv)``. :class:`MujocoMetaEnv`
comes first in the method resolution order, so its :meth:`~MujocoMetaEnv.step` replaces
gymnasium's while the physics, observations and reset noise stay gymnasium's.
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

from meta_policy_search.envs.base import MetaEnv
from meta_policy_search.envs.batched.mujoco import BatchedMujocoEnv, MujocoRows, squared_norms
from meta_policy_search.envs.mujoco_envs.diagnostics import velocity_diagnostics
from meta_policy_search.types import PathBatch, Task

if TYPE_CHECKING:
    from meta_policy_search.envs.batched.base import BatchedMetaEnv


class MujocoMetaEnv(MetaEnv, MujocoEnv, utils.EzPickle):
    """Base of the MuJoCo meta-envs: a task-aware ``step``, never truncating, and pickling.

    Subclasses define ``_step_info`` (the locomotion envs through
    :class:`ForwardRewardEnv`), which turns the positions before and after the
    ``frame_skip`` physics steps into the per-step info dict. The reward is the sum of the info
    entries whose key starts with ``'reward_'``, so every reward term is visible to
    :meth:`log_diagnostics` and to the tests. ``_is_terminated`` defaults to never.

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
        # Defined by the concrete gymnasium env that follows this class in the MRO; declared for
        # the type checker only, as a definition here would shadow the env's own.
        def _get_obs(self) -> np.ndarray: ...

        # gymnasium robot settings the batched hooks read (each robot has some of them)
        _exclude_current_positions_from_observation: bool
        _reset_noise_scale: float
        _healthy_z_range: tuple[float, float]
        _healthy_angle_range: tuple[float, float]
        _healthy_state_range: tuple[float, float]
        _contact_force_range: tuple[float, float]

    def _finish_meta_init(self, task: Task, render_mode: str | None) -> None:
        """Record the constructor arguments for pickling and set the initial task.

        Must be called at the end of every concrete ``__init__``, after the gymnasium
        constructor (which records its own, different, arguments).
        """
        utils.EzPickle.__init__(self, render_mode=render_mode)
        self.set_task(task)

    # ------------------------------------------------------------------ hooks for subclasses
    def _position(self) -> np.ndarray:
        """Position whose finite difference is the velocity: ``qpos[0]`` for planar bodies."""
        return self.data.qpos[0:1].copy()

    def _step_info(
        self, position_before: np.ndarray, position_after: np.ndarray, action: np.ndarray
    ) -> dict[str, float]:
        """Return the info dict of one step; keys starting with ``'reward_'`` sum to the reward."""
        raise NotImplementedError

    def _is_terminated(self) -> bool:
        """Whether the state after the step ends the episode (never, unless overridden)."""
        return False

    def velocity(self, position_before: np.ndarray, position_after: np.ndarray) -> np.ndarray:
        """Finite-difference velocity ``(after - before) / dt`` over one env step."""
        return (position_after - position_before) / self.dt

    # ------------------------------------------------------------------ gymnasium API
    # gymnasium's MujocoEnv.step narrows gym.Env.step's reward (SupportsFloat) and info
    # (dict[str, Any]) to np.float64; the info contract here is Python floats.
    def step(  # type: ignore[override]
        self, action: np.ndarray
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, float]]:
        """Advance the physics ``frame_skip`` steps with ``action`` as the control.

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
        position_before = self._position()
        self.do_simulation(action, self.frame_skip)
        position_after = self._position()
        info = self._step_info(position_before, position_after, action)
        reward = float(sum(value for key, value in info.items() if key.startswith("reward_")))
        terminated = bool(self._is_terminated())
        if self.render_mode == "human":
            self.render()
        return self._get_obs(), reward, terminated, False, info

    def make_batched(self, num_envs: int) -> BatchedMetaEnv:
        """``num_envs`` copies stepped with per-copy ``MjData`` and this env's ``batched_*``
        array maths (see :mod:`meta_policy_search.envs.batched.mujoco`)."""
        return BatchedMujocoEnv(self, num_envs)

    # ------------------------------------------------------------------ batched form
    # What BatchedMujocoEnv computes for many copies at once: each hook is the array twin of
    # the single env's step (same float operations in the same order, so bit-identical results),
    # kept here next to the maths it reproduces.
    batched_contact: ClassVar[bool] = False
    """Whether the batched rows hold the contact forces ``cfrc_ext`` (``mj_rnePostConstraint``
    after each step) and the fields of :meth:`batched_extra_views`."""
    batched_gaussian_reset_velocity: ClassVar[bool] = False
    """Whether the robot's ``reset_model`` draws its velocity noise Gaussian (half-cheetah, ant)
    instead of uniform."""

    def batched_extra_fields(self, model: Any) -> dict[str, int]:
        """Names and sizes of the data fields the rows hold after ``qpos``, ``qvel`` and
        ``cfrc_ext`` (contact envs only)."""
        return {}

    def batched_extra_views(self, model: Any, data: Any) -> tuple[np.ndarray, ...]:
        """Views into ``data`` of :meth:`batched_extra_fields`, in the same order."""
        return ()

    def batched_task_value(self) -> Any:
        """The current task as the array the batched reward reads (``0.0``: none, e.g. the
        rand-params envs, whose task lives in the model)."""
        return 0.0

    def batched_task_model(self, model: Any) -> Any | None:
        """A copy of ``model`` with the current task's parameters, or ``None`` if the task does
        not change the model."""
        return None

    def batched_positions(self, rows: MujocoRows) -> np.ndarray:
        """``[k, p]``: ``_position`` for each row."""
        return rows["qpos"][:, 0:1]

    def batched_observations(self, rows: MujocoRows) -> np.ndarray:
        """``[k, obs_dim]``: the robot's ``_get_obs`` for each row (``qpos[1:]``, ``qvel``)."""
        qpos = rows["qpos"]
        exclude = self._exclude_current_positions_from_observation
        return np.concatenate([qpos[:, 1:] if exclude else qpos, rows["qvel"]], axis=1)

    def batched_terminated(self, rows: MujocoRows) -> np.ndarray:
        """``[k]`` bool: ``_is_terminated`` for each row (never, unless overridden)."""
        return np.zeros(len(rows), dtype=bool)

    def batched_step_info(
        self, rows: MujocoRows, task: np.ndarray, before: np.ndarray, after: np.ndarray,
        action: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """``_step_info`` for every stepped copy, each entry ``[k]``, in the same key order.

        Args:
            rows: the stepped copies' data fields.
            task: ``[k, ...]`` :meth:`batched_task_value` of each copy's task.
            before: ``[k, p]`` positions before the step.
            after: ``[k, p]`` positions after it.
            action: ``[k, act_dim]`` actions.
        """
        raise NotImplementedError(f"{type(self).__name__} has no batched step info")

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


class HealthyTerminationMixin(MujocoMetaEnv):
    """Terminate when the gymnasium env's ``is_healthy`` test fails."""

    if TYPE_CHECKING:
        # Defined by the concrete gymnasium env (Ant, Hopper, Humanoid, Walker2d) that follows
        # this mixin in the MRO; declared for the type checker only, as a definition here would
        # shadow it.
        @property
        def is_healthy(self) -> bool: ...

    def _is_terminated(self) -> bool:
        return not self.is_healthy

    def batched_terminated(self, rows: MujocoRows) -> np.ndarray:
        """The robot's healthy test for each row: each robot's mixin defines it."""
        raise NotImplementedError(f"no batched termination test for {type(self).__name__}")


class ForwardRewardEnv(MujocoMetaEnv):
    """Step info of the locomotion envs: ``forward_vel``, ``reward_forward``, then the costs.

    The info is ``{"forward_vel": v, "reward_forward": _forward_reward(v), **_cost_terms(a)}``
    with ``v = _forward_velocity(before, after)``, in that key order (the reward sums the
    ``'reward_'`` entries in this order). The task mixins of :mod:`.tasks` define
    ``_forward_velocity`` and ``_forward_reward``; the default cost terms are
    ``reward_ctrl = -ctrl_cost_weight * ||a||^2``, followed by ``reward_survive =
    survive_reward`` unless ``survive_reward`` is ``None``. The default diagnostics are
    :func:`.diagnostics.velocity_diagnostics`.
    """

    ctrl_cost_weight: ClassVar[float] = 0.0
    survive_reward: ClassVar[float | None] = None

    def _forward_velocity(self, position_before: np.ndarray, position_after: np.ndarray) -> float:
        """Speed the task rewards: the x velocity unless the task mixin overrides it."""
        return float(self.velocity(position_before, position_after)[0])

    def _forward_reward(self, forward_vel: float) -> float:
        """The ``reward_forward`` term for ``forward_vel`` (the velocity itself by default)."""
        return forward_vel

    def _cost_terms(self, action: np.ndarray) -> dict[str, float]:
        """The info entries that follow ``reward_forward``."""
        costs = {"reward_ctrl": -self.ctrl_cost_weight * squared_norm(action)}
        if self.survive_reward is not None:
            costs["reward_survive"] = self.survive_reward
        return costs

    def batched_forward_velocity(self, task: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """``[k]``: ``_forward_velocity`` for each row (the x velocity)."""
        return velocity[:, 0]

    def batched_forward_reward(self, task: np.ndarray, forward_vel: np.ndarray) -> np.ndarray:
        """``[k]``: ``_forward_reward`` for each row."""
        return forward_vel

    def batched_cost_terms(self, rows: MujocoRows, action: np.ndarray) -> dict[str, np.ndarray]:
        """``_cost_terms`` for each row."""
        costs = {"reward_ctrl": -self.ctrl_cost_weight * squared_norms(action)}
        if self.survive_reward is not None:
            costs["reward_survive"] = np.full(len(action), float(self.survive_reward))
        return costs

    def batched_step_info(
        self, rows: MujocoRows, task: np.ndarray, before: np.ndarray, after: np.ndarray,
        action: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """``forward_vel``, ``reward_forward``, then the costs, as ``_step_info``."""
        velocity = (after - before) / float(self.dt)
        forward_vel = self.batched_forward_velocity(task, velocity)
        return {
            "forward_vel": forward_vel,
            "reward_forward": self.batched_forward_reward(task, forward_vel),
            **self.batched_cost_terms(rows, action),
        }

    def _step_info(
        self, position_before: np.ndarray, position_after: np.ndarray, action: np.ndarray
    ) -> dict[str, float]:
        forward_vel = self._forward_velocity(position_before, position_after)
        return {
            "forward_vel": forward_vel,
            "reward_forward": self._forward_reward(forward_vel),
            **self._cost_terms(action),
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


# ---------------------------------------------------------------------- reward helpers
def squared_norm(action: np.ndarray) -> float:
    """``||action||^2`` as a Python float."""
    return float(np.dot(action, action))


def planar_observations(env: MujocoMetaEnv, rows: MujocoRows) -> np.ndarray:
    """``[k, obs_dim]``: Hopper's and Walker2d's ``_get_obs`` (``qpos[1:]``, ``qvel`` clipped to
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


def clipped_contact_cost(cfrc_ext: np.ndarray, weight: float) -> float:
    """``weight * ||clip(cfrc_ext, -1, 1)||^2``: the Ant's contact cost."""
    clipped = np.clip(cfrc_ext, -1.0, 1.0)
    return float(weight * np.sum(np.square(clipped)))
