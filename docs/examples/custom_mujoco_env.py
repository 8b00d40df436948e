"""A MuJoCo meta-env of your own in one file: a half-cheetah that must stop at a goal on the x axis.

The reward is written once, over a batch of rows; the single env's ``step`` and the samplers'
batched stepping both run it. Train on it from the repository root with any run script::

    python experiments/promp_run_mujoco.py \
        --env docs.examples.custom_mujoco_env:HalfCheetahRandGoalEnv --max_path_length 100

``tests/test_docs_examples.py`` checks that it steps batched and that the batched steps equal the
single env's bit for bit.
"""

from __future__ import annotations

import numpy as np
from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

from meta_policy_search.envs.batched.mujoco import BatchedMujocoEnv, MujocoRows, squared_norms
from meta_policy_search.envs.mujoco_envs.common import MujocoMetaEnv, mujoco_warnings_to_python
from meta_policy_search.envs.mujoco_envs.diagnostics import final_step_values
from meta_policy_search.types import PathBatch


class HalfCheetahRandGoalEnv(MujocoMetaEnv, HalfCheetahEnv):
    """Half-cheetah rewarded for reaching a goal position ``g`` on the x axis.

    * Task: ``g`` uniform in ``[-3, 3]`` (default 0).
    * Reward: ``-|x - g| - 0.05 * ||a||^2`` with ``x`` the root's position after the step.
    * Observation: gymnasium's, with the root's ``x`` kept (18 dims); never terminates.
    * Info: ``goal_distance``, ``reward_goal``, ``reward_ctrl``.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        with mujoco_warnings_to_python():  # gymnasium's cheetah model warns once per build
            HalfCheetahEnv.__init__(self, frame_skip=5, render_mode=render_mode,
                                    exclude_current_positions_from_observation=False)
        self._finish_meta_init(0.0, render_mode)  # pickling support, then the default task

    # -- the task protocol of MetaEnv ------------------------------------------------------
    def sample_tasks(self, n_tasks: int) -> list[float]:
        """Draw goals uniformly, from the env's own generator (never ``np.random``)."""
        return [float(goal) for goal in self.task_rng.uniform(-3.0, 3.0, size=n_tasks)]

    def set_task(self, task: float) -> None:
        """Make ``task`` (a goal x position) the goal of the following episodes."""
        goal = float(task)
        if not np.isfinite(goal):
            raise ValueError(f"the task must be a finite goal position, got {task!r}")
        self.goal = goal

    def get_task(self) -> float:
        """The current goal."""
        return self.goal

    # -- the step, written once over k rows ------------------------------------------------
    def task_array(self) -> float:
        """The task as ``step_info`` reads it: row ``i`` of ``task`` is copy ``i``'s goal."""
        return self.goal

    def step_info(
        self, rows: MujocoRows, task: np.ndarray, before: np.ndarray, after: np.ndarray,
        action: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """Per-step info of ``k`` copies; the ``reward_`` entries sum to the reward.

        ``after`` holds the copies' positions after the step (``positions``: ``qpos[0]``, the
        root's x), ``action`` their ``[k, 6]`` actions; every entry is a ``[k]`` array.
        """
        distance = np.abs(after[:, 0] - task)
        return {"goal_distance": distance, "reward_goal": -distance,
                "reward_ctrl": -0.05 * squared_norms(action)}

    def make_batched(self, num_envs: int) -> BatchedMujocoEnv:
        """The batched form steps this class: its maths above is written over rows. (Without
        this declaration a class that overrides the library's step methods is stepped one copy
        at a time, in case its methods were written for one row only.)"""
        return BatchedMujocoEnv(self, num_envs)

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict[str, float]:
        """``AvgFinalGoalDistance``: the mean over episodes of the distance at the last step."""
        final = final_step_values(np.asarray(paths.env_infos["goal_distance"]), paths.mask)
        return {prefix + "AvgFinalGoalDistance": float(np.mean(final))}
