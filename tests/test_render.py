"""Offscreen rendering: frames of an episode, and experiments/render.py on the committed ProMP
HalfCheetahRandDirecEnv checkpoint (its adapted policy runs the way its task asks)."""

from __future__ import annotations

import ctypes.util
import json
import os
import re
import sys

import numpy as np
import pytest

from meta_policy_search import rendering
from meta_policy_search.envs import make_env, normalize
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP

REPO = os.path.join(os.path.dirname(__file__), os.pardir)
EXPERIMENTS_DIR = os.path.join(REPO, "experiments")
CHEETAH_RUN = os.path.join(REPO, "benchmarks", "results", "reproduction", "promp",
                           "HalfCheetahRandDirecEnv", "seed_10")


needs_offscreen_gl = pytest.mark.skipif(
    os.environ.get("MUJOCO_GL", "egl") == "egl" and ctypes.util.find_library("EGL") is None,
    reason="no EGL library for offscreen rendering: install libegl1 (Mesa) or set MUJOCO_GL=osmesa",
)


@pytest.fixture(autouse=True)
def offscreen_gl(monkeypatch):
    if "MUJOCO_GL" not in os.environ:
        monkeypatch.setenv("MUJOCO_GL", "egl")


@pytest.fixture
def render_script():
    sys.path.insert(0, EXPERIMENTS_DIR)
    try:
        import render
    finally:
        sys.path.remove(EXPERIMENTS_DIR)
    return render


def random_policy(obs_dim: int, act_dim: int, seed: int = 0) -> NumpyGaussianMLP:
    rng = np.random.default_rng(seed)
    params = {"W0": rng.normal(0, 0.5, (1, obs_dim, 8)), "b0": np.zeros((1, 8)),
              "W1": rng.normal(0, 0.5, (1, 8, act_dim)), "b1": np.zeros((1, act_dim)),
              "log_std": np.zeros((1, act_dim))}
    return NumpyGaussianMLP(params)


@needs_offscreen_gl
def test_rendered_frames_change_and_rendering_leaves_the_episode_unchanged():
    # Drawn in a spawned process: this test process may have loaded TensorFlow, which crashes
    # next to the GL libraries (and must stay loadable after this test).
    policy = random_policy(17, 6)
    request = rendering.EpisodeRequest(policy, task=-1.0, max_path_length=12, seed=3,
                                       frame_every=4)
    (episode,) = rendering.render_episodes([request], "HalfCheetahRandDirecEnv", width=64,
                                           height=48)
    assert episode.frames.shape == (4, 48, 64, 3) and episode.frames.dtype == np.uint8
    np.testing.assert_array_equal(episode.frame_steps, [0, 4, 8, 12])
    assert episode.num_steps == 12 and episode.frame_positions.shape == (4,)
    assert not np.array_equal(episode.frames[0], episode.frames[-1])  # the cheetah moved
    assert episode.frames.std() > 10  # a scene, not a blank buffer

    # The same episode on an env that does not render: same seed, same noise, same return.
    plain = normalize(make_env("HalfCheetahRandDirecEnv"))
    plain.set_task(-1.0)
    observation, _ = plain.reset(seed=3)
    noise = np.random.default_rng(3).standard_normal((12, 6))
    total, velocities = 0.0, []
    for step in range(12):
        action, _ = policy.sample(np.asarray(observation)[None, None], noise[step][None, None])
        observation, reward, _, _, info = plain.step(action[0, 0])
        total += reward
        velocities.append(info["forward_vel"])
    assert episode.episode_return == pytest.approx(total, rel=1e-12)
    assert episode.frame_positions[-1] == pytest.approx(plain.unwrapped.data.qpos[0], rel=1e-12)
    assert episode.mean_infos["forward_vel"] == pytest.approx(np.mean(velocities), rel=1e-12)


def test_render_env_and_episode_arguments_are_checked():
    # Building a render env draws nothing: safe in this process.
    with pytest.raises(ValueError, match="PointEnvRandGoal cannot render"):
        rendering.make_render_env("PointEnvRandGoal")
    with pytest.raises(ValueError, match="width must be a positive integer, got 0"):
        rendering.make_render_env("HalfCheetahRandDirecEnv", width=0)
    with pytest.raises(ValueError, match="PointEnvRandGoal cannot render"):  # from the child
        rendering.render_episodes([], "PointEnvRandGoal")
    two_tasks = NumpyGaussianMLP({k: np.repeat(v, 2, axis=0)
                                  for k, v in random_policy(17, 6).params.items()})
    with pytest.raises(ValueError, match="one task's parameters"):
        rendering.render_episode(None, two_tasks, 1.0, 10, seed=0)


def test_caption_and_tile_sizes():
    frame = np.zeros((30, 40, 3), dtype=np.uint8)
    captioned = rendering.caption_frame(frame, ["a", "b"], font_size=10)
    assert captioned.shape[1:] == (40, 3) and captioned.shape[0] > 30
    assert (captioned[:captioned.shape[0] - 30] > 0).any()  # the band is white with text
    grid = rendering.tile([[frame, frame], [frame]], gap=2)
    assert grid.shape == (62, 82, 3)


@pytest.mark.parametrize("argv, message", [
    (["no/such/run"], "run_dir no/such/run: .*not a run directory"),
    ([CHEETAH_RUN, "--width", "0"], "--width 0: must be an integer >= 1"),
    ([CHEETAH_RUN, "--tasks", "[2]"], "--tasks \\[2\\]: direction task must be -1.0 or \\+1.0"),
    ([CHEETAH_RUN, "--tasks", "forward"], "--tasks forward: not JSON"),
    ([CHEETAH_RUN, "--checkpoint", "best"], "no complete checkpoint"),
])
def test_render_script_rejects_bad_input_before_loading_tensorflow(render_script, capsys, argv,
                                                                   message):
    with pytest.raises(SystemExit) as exit_info:
        render_script.main(argv)
    assert exit_info.value.code == 2
    assert re.search(message, capsys.readouterr().err)


@needs_offscreen_gl
def test_committed_cheetah_checkpoint_runs_the_way_its_task_asks_after_adaptation(
        render_script, tmp_path):
    from PIL import Image

    output_dir = render_script.main([CHEETAH_RUN, "--output_dir", str(tmp_path), "--width", "64",
                                     "--height", "48", "--frame_every", "10", "--num_stills", "3"])
    with open(os.path.join(output_dir, "render.json")) as f:
        summary = json.load(f)
    assert summary["num_adapt_steps"] == 1 and summary["inner_lr"] == 0.1
    assert [entry["task"] for entry in summary["tasks"]] == [1.0, -1.0]
    for entry in summary["tasks"]:
        post = entry["post"]
        # The adapted policy runs in its task's direction, and adaptation raised the return.
        assert post["mean_infos"]["forward_vel"] * entry["task"] > 0.5
        assert post["batch_average_return"] > entry["pre"]["batch_average_return"] + 50
        assert post["num_steps"] == 100
    with Image.open(os.path.join(output_dir, "render.gif")) as gif:
        assert gif.n_frames == 100 // 10 + 1
        width, height = gif.size
        assert width >= 2 * 64 and height >= 2 * 48
    with Image.open(os.path.join(output_dir, "render.png")) as png:
        assert png.size[0] >= 3 * 64
