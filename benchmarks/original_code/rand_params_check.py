"""``--check_env`` for the rand-params envs: our package's env against its standalone twin.

Imports our package (run with ``PYTHONPATH=<our repo>``), never the original.
"""

from __future__ import annotations

import copy
import sys

import numpy as np
from check_common import SideBySide, assert_same_setup, model_differences
from original_rand_params_env import STANDALONE_ENVS


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
    from meta_policy_search.envs.registry import env_class

    our_class = env_class(env_name)
    ours = our_class()
    standalone = STANDALONE_ENVS[env_name]()
    ours_file = sys.modules[our_class.__module__].__file__
    assert_same_setup(ours, standalone)
    assert ours._reset_noise_scale == 0.005, ours._reset_noise_scale
    model_fields_differing = model_differences(ours.model, standalone.model)

    clone = copy.deepcopy(standalone)
    assert clone.model is not standalone.model and clone.np_random is not standalone.np_random
    assert all(np.array_equal(clone.get_task()[k], standalone.init_params[k]) for k in standalone.init_params)

    np.random.seed(seed)  # the original's tasks come from the global RNG
    tasks = standalone.sample_tasks(n_episodes)
    rng = np.random.default_rng(seed)
    episodes = SideBySide()
    max_roundtrip = 0.0
    for episode, task in enumerate(tasks):
        init = standalone.init_params
        # a zero original (the world body's mass, the root joints' damping) stays zero: any multiplier
        ours.set_task({k: np.divide(task[k], init[k], out=np.ones_like(task[k]), where=init[k] != 0)
                       for k in task})
        written = {k: np.array(getattr(ours.model, k)) for k in task}
        max_roundtrip = max(max_roundtrip, max(
            float(np.max(np.abs(written[k] - task[k]) / np.where(task[k] != 0, task[k], 1.0))) for k in task))
        standalone.set_task(written)
        assert not model_differences(ours.model, standalone.model)
        episodes.run_random_episode(ours, standalone, rng, 0.005, n_steps, episode)
    return {
        "env": env_name,
        **episodes.summary(),
        "model_fields_differing": model_fields_differing,
        "task_roundtrip_max_rel_change": max_roundtrip,
        "our_env_file": ours_file,
    }
