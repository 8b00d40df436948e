"""Generic batched envs: the per-env path (:class:`EnvList`), the action-normalizing wrapper of a
batched env, and :func:`make_batched_env`, which picks an env's own batched form or the per-env
path.

The protocol, :class:`~meta_policy_search.envs.base.BatchedMetaEnv`, lives beside
:class:`~meta_policy_search.envs.base.MetaEnv`. An env whose reward, termination and observation
are written over rows returns its batched form from ``make_batched(num_envs)``; any other env is
stepped one copy at a time through :class:`EnvList`, which gives the same results by construction.
The per-env Python of gymnasium's ``step`` costs more than half of the sampling time, hence the
batched forms.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from meta_policy_search.envs.base import BatchedMetaEnv, BatchedStep, batched_form, check_num_tasks
from meta_policy_search.types import Task


def _is_scalar_number(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "biuf"
    return isinstance(value, (numbers.Real, np.bool_)) and not isinstance(value, str)


class EnvList(BatchedMetaEnv):
    """Any MetaEnv, one copy per env, stepped one after the other (the per-env path).

    The info keys are those of the first step's info whose values are scalar numbers; other
    entries are dropped.

    Args:
        envs: ``num_envs`` independent env copies.
    """

    def __init__(self, envs: Sequence[Any]) -> None:
        super().__init__(num_envs=len(envs), observation_space=envs[0].observation_space,
                         action_space=envs[0].action_space)
        self.envs = list(envs)
        self.info_keys: list[str] | None = None
        self._episode_steps = np.zeros(len(envs), dtype=np.int64)

    def set_tasks(self, tasks: Sequence[Task]) -> None:
        check_num_tasks(tasks, self.num_envs)
        for env, task in zip(self.envs, tasks):
            env.set_task(task)

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        obs = np.empty((len(indices), self.observation_space.shape[0]))
        for k, (i, seed) in enumerate(zip(indices, seeds)):
            obs[k], _ = self.envs[i].reset(seed=int(seed))
            self._episode_steps[i] = 0
        return obs

    def step(self, indices: np.ndarray, actions: np.ndarray) -> BatchedStep:
        num = len(indices)
        obs = np.empty((num, self.observation_space.shape[0]))
        rewards = np.empty(num)
        dones = np.empty(num, dtype=bool)
        keys = self.info_keys
        infos: dict[str, np.ndarray] = {} if keys is None else {key: np.empty(num) for key in keys}
        envs = self.envs
        for k, i in enumerate(indices):
            obs[k], rewards[k], terminated, truncated, info = envs[i].step(actions[k])
            dones[k] = terminated or truncated
            if keys is None:
                keys = self.info_keys = [key for key, v in info.items() if _is_scalar_number(v)]
                infos = {key: np.empty(num) for key in keys}
            try:
                for key in keys:
                    infos[key][k] = info[key]
            except KeyError as err:
                raise ValueError(
                    f"env info at step {self._episode_steps[i]} lacks key {err}, which earlier "
                    "steps had: a MetaEnv must return the same info keys every step"
                ) from None
            self._episode_steps[i] += 1
        return BatchedStep(obs, rewards, dones, infos)

    def close(self) -> None:
        for env in self.envs:
            env.close()


def make_batched_env(
    env: Any, num_envs: int, copy_env: Callable[[], Any], use_batched: bool = True
) -> BatchedMetaEnv:
    """``num_envs`` copies of ``env``: its own batched implementation if it has one (and it
    reproduces ``env``'s class, see :func:`~meta_policy_search.envs.base.batched_form`), else an
    :class:`EnvList` of copies.

    Args:
        env: the MetaEnv (possibly wrapped in ``normalize``).
        num_envs: number of copies, positive.
        copy_env: returns a new independent copy of ``env`` (used for the per-env path).
        use_batched: ``False`` forces the per-env path (for benchmarks and tests).

    Returns:
        A :class:`BatchedMetaEnv`.
    """
    batched = batched_form(env, num_envs) if use_batched else None
    if batched is not None:
        return batched
    return EnvList([copy_env() for _ in range(num_envs)])


class NormalizedBatchedEnv(BatchedMetaEnv):
    """A batched env whose actions go through :meth:`NormalizedEnv.action
    <meta_policy_search.envs.NormalizedEnv.action>` first (elementwise, so the same numbers).

    Args:
        env: the wrapped env's batched implementation.
        action_space: the normalized action space ``[-s, s]``.
        action: the wrapper's action mapping (applied to ``[k, act_dim]`` arrays).
    """

    def __init__(
        self, env: BatchedMetaEnv, action_space: Any, action: Callable[[np.ndarray], np.ndarray]
    ) -> None:
        super().__init__(num_envs=env.num_envs, observation_space=env.observation_space,
                         action_space=action_space)
        self.env = env
        self._action = action

    def set_tasks(self, tasks: Sequence[Task]) -> None:
        self.env.set_tasks(tasks)

    def reset(self, indices: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        return self.env.reset(indices, seeds)

    def step(self, indices: np.ndarray, actions: np.ndarray) -> BatchedStep:
        return self.env.step(indices, self._action(actions))

    def close(self) -> None:
        self.env.close()
