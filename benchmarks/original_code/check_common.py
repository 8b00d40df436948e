"""Pieces shared by the ``--check_env`` checks of the rand-params envs and the humanoid, and the
provenance the harness scripts record (:func:`code_and_machine`).

Each check steps our package's env and its standalone twin side by side from the same states
with the same actions (:class:`SideBySide`), after checking that their compiled models are equal
(:func:`model_differences`). Imports neither our package nor the original.
"""

from __future__ import annotations

import platform
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np


def _git(args: list[str], cwd: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
        return done.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def code_and_machine(repo_dir: str) -> dict[str, Any]:
    """The commit of ``repo_dir`` (and whether its tree was dirty), the library versions, the
    host and the command line: what every result file of these scripts records."""
    import gymnasium
    import tensorflow as tf

    return {
        "commit": _git(["rev-parse", "HEAD"], repo_dir),
        "dirty": bool(_git(["status", "--porcelain"], repo_dir)),
        "python": sys.version.split()[0],
        "tensorflow": tf.__version__,
        "numpy": np.__version__,
        "mujoco": mujoco.__version__,
        "gymnasium": gymnasium.__version__,
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "command_line": [sys.executable, *sys.argv],
    }


ACTION_SCALES = (0.1, 0.4, 1.2)
"""Half-widths of the checks' uniform random actions, as fractions of the control half-range:
about the initial policy's actions after ``normalize`` (std 1 / 10 of the half-range), larger,
and beyond the control range (MuJoCo clamps the control while the cost uses the action as
given)."""

StepComparison = Callable[[np.ndarray, dict, np.ndarray, dict], dict[str, float]]
"""``(our obs, our info, standalone obs, standalone info) -> {name: value}``: per-step values
(differences, or magnitudes of interest) whose maxima a check reports."""


def max_abs_obs_diff(obs_ours: np.ndarray, _info_ours: dict, obs_standalone: np.ndarray,
                     _info_standalone: dict) -> dict[str, float]:
    """The default :data:`StepComparison`: ``max_abs_obs_diff`` of equally laid out observations."""
    return {"max_abs_obs_diff": float(np.max(np.abs(obs_ours - obs_standalone)))}


def model_differences(ours: mujoco.MjModel, standalone: mujoco.MjModel) -> list[str]:
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


def assert_same_setup(ours: Any, standalone: Any, same_obs_shape: bool = True) -> None:
    """Assert equal step duration, action bounds, initial state and (optionally) observation
    shape of our env and the standalone env."""
    assert ours.dt == standalone.dt, (ours.dt, standalone.dt)
    if same_obs_shape:
        assert ours.observation_space.shape == standalone.observation_space.shape
    assert np.array_equal(ours.action_space.low, standalone.action_space.low)
    assert np.array_equal(ours.action_space.high, standalone.action_space.high)
    assert np.array_equal(ours.init_qpos, standalone.init_qpos)
    assert np.array_equal(ours.init_qvel, standalone.init_qvel)


class SideBySide:
    """Episodes of our env and the standalone env from the same state with the same actions.

    Accumulates, over all episodes, the maxima of what ``compare_step`` returns (also for the
    observations right after the state is set, with empty infos), the max absolute reward
    difference, the steps whose ``done`` differs from our ``terminated``, the steps with
    ``done``, and each episode's first ``done``. Episodes step on past ``done``, so that states
    after a fall are compared too.

    Args:
        compare_step: per-step comparison (:data:`StepComparison`).
    """

    def __init__(self, compare_step: StepComparison = max_abs_obs_diff) -> None:
        self.compare_step = compare_step
        self.maxima: dict[str, float] = {}
        self.max_reward_diff = 0.0
        self.n_done_mismatch = self.n_done = self.n_compared = 0
        self.lengths: list[int] = []
        self.n_episodes = 0

    def _record(self, values: dict[str, float]) -> None:
        for key, value in values.items():
            self.maxima[key] = max(self.maxima.get(key, 0.0), value)

    def run_random_episode(self, ours: Any, standalone: Any, rng: np.random.Generator,
                           reset_noise: float, n_steps: int, episode: int) -> None:
        """Reset both envs (their tasks set by the caller), draw one start state (uniform
        ``reset_noise`` around the standalone's initial state) and ``n_steps`` random actions
        at ``ACTION_SCALES[episode % 3]`` from ``rng``, and run them as :meth:`run_episode`."""
        ours.reset(seed=int(rng.integers(2**31)))
        standalone.reset()
        model = standalone.model
        qpos = standalone.init_qpos + rng.uniform(-reset_noise, reset_noise, model.nq)
        qvel = standalone.init_qvel + rng.uniform(-reset_noise, reset_noise, model.nv)
        scale = ACTION_SCALES[episode % len(ACTION_SCALES)]
        self.run_episode(ours, standalone, qpos, qvel, random_actions(rng, model, n_steps, scale))

    def run_episode(self, ours: Any, standalone: Any, qpos: np.ndarray, qvel: np.ndarray,
                    actions: np.ndarray) -> None:
        """Set both envs to ``(qpos, qvel)`` and step both with each row of ``actions``.

        Both envs must have been reset (and given their task) by the caller.
        """
        ours.set_state(qpos, qvel)
        standalone.set_state(qpos, qvel)
        self._record(self.compare_step(ours._get_obs(), {}, standalone._get_obs(), {}))
        first_done = None
        for t, action in enumerate(actions):
            obs_a, rew_a, terminated, truncated, info_a = ours.step(action.copy())
            obs_b, rew_b, done_b, info_b = standalone.step(action.copy())
            assert not truncated
            self._record(self.compare_step(obs_a, info_a, obs_b, info_b))
            self.max_reward_diff = max(self.max_reward_diff, abs(float(rew_a) - float(rew_b)))
            self.n_done_mismatch += int(bool(terminated) != bool(done_b))
            self.n_done += int(done_b)
            if done_b and first_done is None:
                first_done = t + 1
            self.n_compared += 1
        if first_done is not None:
            self.lengths.append(first_done)
        self.n_episodes += 1

    def summary(self) -> dict[str, Any]:
        """The accumulated maxima and counts, under the names the checks report."""
        return {
            **self.maxima,
            "max_abs_reward_diff": self.max_reward_diff,
            "n_steps_done_differs": self.n_done_mismatch,
            "n_episodes": self.n_episodes,
            "n_episodes_terminated": len(self.lengths),
            "mean_length_of_terminated_episodes": float(np.mean(self.lengths)) if self.lengths else None,
            "n_steps_compared": self.n_compared,
            "n_steps_done": self.n_done,
        }


def random_actions(rng: np.random.Generator, model: mujoco.MjModel, n_steps: int,
                   scale: float) -> np.ndarray:
    """``[n_steps, nu]`` actions uniform in ``scale`` times the (symmetric) control range,
    drawn row by row from ``rng`` (as a loop drawing one action per step would)."""
    half_range = model.actuator_ctrlrange[:, 1]
    assert np.array_equal(model.actuator_ctrlrange[:, 0], -half_range), "symmetric ranges only"
    return np.stack([rng.uniform(-scale, scale, model.nu) * half_range for _ in range(n_steps)])
