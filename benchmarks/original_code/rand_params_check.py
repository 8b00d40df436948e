"""``--check_env`` for the rand-params envs: our package's env against its standalone twin.

Imports our package (run with ``PYTHONPATH=<our repo>``), never the original.
"""

from __future__ import annotations

import copy
import sys

import mujoco
import numpy as np
from original_rand_params_env import STANDALONE_ENVS

ACTION_SCALES = (0.1, 0.4, 1.2)
"""Half-widths of the check's uniform random actions: about the initial policy's actions after
``normalize`` (std 1 / 10), larger, and beyond the control range of 1 (MuJoCo clamps the
control while the cost uses the action as given)."""


def _model_differences(ours: mujoco.MjModel, standalone: mujoco.MjModel) -> list[str]:
    """Names of the ``MjModel`` array fields and ``opt`` fields whose values differ."""
    differing = []
    for name in dir(standalone):
        value = getattr(standalone, name, None)
        if name.startswith("_") or not isinstance(value, np.ndarray):
            continue
        if not np.array_equal(getattr(ours, name), value, equal_nan=True):
            differing.append(name)
    for name in dir(standalone.opt):
        value = getattr(standalone.opt, name)
        if name.startswith("_") or callable(value):
            continue
        if not np.array_equal(np.asarray(getattr(ours.opt, name)), np.asarray(value)):
            differing.append(f"opt.{name}")
    return differing


def check_rand_params_env(env_name: str, n_episodes: int = 20, n_steps: int = 200,
                          seed: int = 0) -> dict[str, object]:
    """Step our package's ``env_name`` and its standalone twin side by side.

    Run in a process where ``meta_policy_search`` is OUR package (``PYTHONPATH=.`` from the
    repository root). Checks first that the two compiled models are equal in every array field
    and every ``opt`` field, and that a deep copy of the standalone env is a fresh env. Then, per
    episode: a task from the standalone env's ``sample_tasks`` (global ``np.random`` seeded with
    ``seed``), given to our env as multipliers ``task / init`` and then to the standalone env as
    the values our env wrote into its model (so both models stay bitwise equal; the round trip
    changes a value by at most a few ulp, reported); both envs reset, then set to the same
    random ``qpos``/``qvel`` (the original's reset distribution); then ``n_steps`` steps with the
    same random actions, uniform in ``[-s, s]`` with ``s`` cycling through :data:`ACTION_SCALES`,
    ignoring ``done`` so that states after a fall are compared too. Compares observations (also
    right after setting the state), rewards and ``done`` against our ``terminated`` at every step.

    Returns:
        Max absolute differences of ``obs`` and ``reward``, the number of steps whose ``done``
        differs, the number of episodes that terminated (first ``done`` before ``n_steps``) and
        their mean length, the number of compared steps and of steps with ``done``, the model
        fields that differ (expected none), the task round trip's max relative change, and the
        file our env class came from.
    """
    from meta_policy_search.envs import mujoco_envs

    our_class = getattr(mujoco_envs, env_name)
    ours = our_class()
    standalone = STANDALONE_ENVS[env_name]()
    ours_file = sys.modules[our_class.__module__].__file__
    assert ours.dt == standalone.dt, (ours.dt, standalone.dt)
    assert ours.observation_space.shape == standalone.observation_space.shape
    assert np.array_equal(ours.action_space.low, standalone.action_space.low)
    assert np.array_equal(ours.action_space.high, standalone.action_space.high)
    assert np.array_equal(ours.init_qpos, standalone.init_qpos)
    assert np.array_equal(ours.init_qvel, standalone.init_qvel)
    assert ours._reset_noise_scale == 0.005, ours._reset_noise_scale
    model_differences = _model_differences(ours.model, standalone.model)

    clone = copy.deepcopy(standalone)
    assert clone.model is not standalone.model and clone.np_random is not standalone.np_random
    assert all(np.array_equal(clone.get_task()[k], standalone.init_params[k]) for k in standalone.init_params)

    np.random.seed(seed)  # the original's tasks come from the global RNG
    tasks = standalone.sample_tasks(n_episodes)
    rng = np.random.default_rng(seed)
    max_obs = max_rew = max_roundtrip = 0.0
    n_done_mismatch = n_done = n_compared = 0
    lengths = []
    for episode, task in enumerate(tasks):
        scale = ACTION_SCALES[episode % len(ACTION_SCALES)]
        init = standalone.init_params
        # a zero original (the world body's mass, the root joints' damping) stays zero: any multiplier
        ours.set_task({k: np.divide(task[k], init[k], out=np.ones_like(task[k]), where=init[k] != 0)
                       for k in task})
        written = {k: np.array(getattr(ours.model, k)) for k in task}
        max_roundtrip = max(max_roundtrip, max(
            float(np.max(np.abs(written[k] - task[k]) / np.where(task[k] != 0, task[k], 1.0))) for k in task))
        standalone.set_task(written)
        assert not _model_differences(ours.model, standalone.model)
        ours.reset(seed=int(rng.integers(2**31)))
        standalone.reset()
        qpos = standalone.init_qpos + rng.uniform(-0.005, 0.005, standalone.model.nq)
        qvel = standalone.init_qvel + rng.uniform(-0.005, 0.005, standalone.model.nv)
        ours.set_state(qpos, qvel)
        standalone.set_state(qpos, qvel)
        max_obs = max(max_obs, float(np.max(np.abs(ours._get_obs() - standalone._get_obs()))))
        first_done = None
        for t in range(n_steps):
            action = rng.uniform(-scale, scale, standalone.model.nu)
            obs_a, rew_a, terminated, truncated, _info = ours.step(action.copy())
            obs_b, rew_b, done_b, _ = standalone.step(action.copy())
            assert not truncated
            max_obs = max(max_obs, float(np.max(np.abs(obs_a - obs_b))))
            max_rew = max(max_rew, abs(float(rew_a) - float(rew_b)))
            n_done_mismatch += int(bool(terminated) != bool(done_b))
            n_done += int(done_b)
            if done_b and first_done is None:
                first_done = t + 1
            n_compared += 1
        if first_done is not None:
            lengths.append(first_done)
    return {
        "env": env_name,
        "max_abs_obs_diff": max_obs,
        "max_abs_reward_diff": max_rew,
        "n_steps_done_differs": n_done_mismatch,
        "n_episodes": n_episodes,
        "n_episodes_terminated": len(lengths),
        "mean_length_of_terminated_episodes": float(np.mean(lengths)) if lengths else None,
        "n_steps_compared": n_compared,
        "n_steps_done": n_done,
        "model_fields_differing": model_differences,
        "task_roundtrip_max_rel_change": max_roundtrip,
        "our_env_file": ours_file,
    }
