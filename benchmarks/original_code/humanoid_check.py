"""``--check_env`` for HumanoidRandDirec2DEnv: our package's env against its standalone twin.

Our env's observation is gymnasium v5's (348 dims); the original's has 376: v5 drops the world
body's rows of ``cinert``, ``cvel`` and ``cfrc_ext`` and the root's 6 entries of
``qfrc_actuator``. The check compares the 348 shared entries and reports the largest absolute
value of each dropped part. Imports our package (run with ``PYTHONPATH=<our repo>``), never the
original.
"""

from __future__ import annotations

import copy
import sys

import mujoco
import numpy as np
from check_common import (
    SideBySide,
    StepComparison,
    assert_same_setup,
    model_differences,
)
from original_humanoid_env import OriginalHumanoidRandDirec2DEnv

REWARD_TERMS = {
    "reward_forward": "reward_linvel",
    "reward_ctrl": "reward_quadctrl",
    "reward_contact": "reward_impact",
    "reward_survive": "reward_alive",
}
"""Our env's reward terms -> the original's info key of the same term."""


def observation_layout(model: mujoco.MjModel) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Where gymnasium v5's observation lies in the original's, and what v5 leaves out.

    Returns:
        ``(kept, dropped)``: ``kept`` the indices into the original's observation of v5's
        entries, in v5's order; ``dropped`` the name of each left-out part -> its indices.
    """
    nbody, nv = model.nbody, model.nv
    # (part, its size in the original's observation, the leading entries v5 leaves out)
    parts = [("qpos[2:]", model.nq - 2, 0), ("qvel", nv, 0), ("cinert", 10 * nbody, 10),
             ("cvel", 6 * nbody, 6), ("qfrc_actuator", nv, 6), ("cfrc_ext", 6 * nbody, 6)]
    kept, dropped, start = [], {}, 0
    for name, size, n_dropped in parts:
        if n_dropped:
            dropped[f"{name}[:{n_dropped}]"] = np.arange(start, start + n_dropped)
        kept.append(np.arange(start + n_dropped, start + size))
        start += size
    return np.concatenate(kept), dropped


def humanoid_step_comparison(model: mujoco.MjModel) -> StepComparison:
    """The check's per-step comparison (a ``check_common.StepComparison``): the shared
    observation entries, the largest absolute value of each dropped part, each reward term's
    difference and the largest contact cost met (how much the contacts were exercised)."""
    kept, dropped = observation_layout(model)

    def compare(obs_ours: np.ndarray, info_ours: dict, obs_standalone: np.ndarray,
                info_standalone: dict) -> dict[str, float]:
        assert obs_standalone.shape == (kept.size + sum(i.size for i in dropped.values()),)
        values = {"max_abs_obs_diff": float(np.max(np.abs(obs_ours - obs_standalone[kept])))}
        for name, indices in dropped.items():
            values[f"max_abs_original_only_{name}"] = float(np.max(np.abs(obs_standalone[indices])))
        if info_standalone:
            for ours, original in REWARD_TERMS.items():
                values[f"max_abs_{ours}_diff"] = abs(info_ours[ours] - float(info_standalone[original]))
            values["max_contact_cost"] = -float(info_standalone["reward_impact"])
        return values

    return compare


def _assert_tasks_from_global_rng(standalone: OriginalHumanoidRandDirec2DEnv, seed: int) -> None:
    """A new env and a deep copy each draw their task from the global ``np.random``."""
    for make in (OriginalHumanoidRandDirec2DEnv, lambda: copy.deepcopy(standalone)):
        np.random.seed(seed)
        env = make()
        np.random.seed(seed)
        assert np.array_equal(env.get_task(), standalone.sample_tasks(1)[0])
        assert env.model is not standalone.model and env.np_random is not standalone.np_random


def check_humanoid_env(n_episodes: int = 20, n_steps: int = 200, seed: int = 0) -> dict[str, object]:
    """Step our package's ``HumanoidRandDirec2DEnv`` and its standalone twin side by side.

    Run in a process where ``meta_policy_search`` is OUR package (``PYTHONPATH=.`` from the
    repository root). Checks first that the two compiled models are equal in every array field
    and every ``opt`` field, and that a new env and a deep copy of the standalone env draw their
    task from the global RNG. Then, per episode: a direction from the standalone env's
    ``sample_tasks`` (global ``np.random`` seeded with ``seed``), given to both envs; both reset,
    then set to the same random ``qpos``/``qvel`` (the original's reset distribution); then
    ``n_steps`` steps with the same random actions, uniform in ``s`` times the control range
    with ``s`` cycling through :data:`~check_common.ACTION_SCALES`, ignoring ``done`` so that
    fallen states (with floor contacts) are compared too. Compares the observations' shared
    entries (also right after setting the state), the rewards and their terms, and ``done``
    against our ``terminated`` at every step.

    Returns:
        Max absolute differences of the shared observation entries, of the reward and of each
        reward term; the max absolute value of each part only the original observes (expected
        0); the counts of :class:`~check_common.SideBySide`; the largest contact cost met; the
        model fields that differ (expected none); the largest change our ``set_task`` makes to a
        direction; and the file our env class came from.
    """
    from meta_policy_search.envs.mujoco_envs.humanoid_rand_direc_2d import HumanoidRandDirec2DEnv

    ours = HumanoidRandDirec2DEnv()
    standalone = OriginalHumanoidRandDirec2DEnv()
    ours_file = sys.modules[HumanoidRandDirec2DEnv.__module__].__file__
    assert_same_setup(ours, standalone, same_obs_shape=False)
    kept, _dropped = observation_layout(standalone.model)
    assert ours.observation_space.shape == (kept.size,), (ours.observation_space.shape, kept.size)
    assert ours._reset_noise_scale == 0.01, ours._reset_noise_scale
    model_fields_differing = model_differences(ours.model, standalone.model)
    _assert_tasks_from_global_rng(standalone, seed)

    np.random.seed(seed)  # the original's tasks come from the global RNG
    tasks = standalone.sample_tasks(n_episodes)
    rng = np.random.default_rng(seed)
    episodes = SideBySide(humanoid_step_comparison(standalone.model))
    max_task_change = 0.0
    for episode, task in enumerate(tasks):
        ours.set_task(task)
        standalone.set_task(task)
        max_task_change = max(max_task_change, float(np.max(np.abs(ours.get_task() - task))))
        episodes.run_random_episode(ours, standalone, rng, 0.01, n_steps, episode)
    return {
        "env": "HumanoidRandDirec2DEnv",
        "obs_dims_ours_original": [int(kept.size), int(standalone.obs_dim)],
        **episodes.summary(),
        "model_fields_differing": model_fields_differing,
        "task_max_abs_change_by_our_set_task": max_task_change,
        "our_env_file": ours_file,
    }
