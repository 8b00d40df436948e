"""Render a policy's episodes offscreen: frames for a GIF or a strip of stills.

The MuJoCo envs render through gymnasium's ``render_mode="rgb_array"``. A machine without a
display needs an offscreen OpenGL backend: ``MUJOCO_GL=egl`` (what ``experiments/render.py`` sets
unless ``MUJOCO_GL`` is given) or ``MUJOCO_GL=osmesa``; set it before the first frame is drawn.

TensorFlow and the offscreen GL libraries must not share a process: on the development machine
(TensorFlow 2.21, Mesa's EGL) loading either after the other crashes the process with a
segmentation fault. :func:`render_episodes` therefore draws in a fresh process by default, given
only numpy policies (:class:`~meta_policy_search.policies.numpy_policy.NumpyGaussianMLP`, e.g.
``policy.get_sampling_policy()``); :func:`render_episode` draws in the calling process, for
programs that never import TensorFlow.

:func:`caption_frame`, :func:`tile` and :func:`save_gif` turn frames into the pictures people
share (Pillow, which matplotlib already requires). ``experiments/render.py`` uses them to show a
trained run before and after adaptation.

Only numpy at import; gymnasium, MuJoCo and Pillow are imported when used.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import multiprocessing
from collections.abc import Sequence
from typing import Any

import numpy as np

from meta_policy_search.envs import make_env, normalize
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.types import Task
from meta_policy_search.utils.validation import check_positive_int

TRACKING_CAMERA = "track"
"""The camera of gymnasium's planar robots (half-cheetah, hopper, walker) that follows the body;
used when the model has it, so that a fast runner stays in the picture."""


@dataclasses.dataclass(frozen=True)
class RenderedEpisode:
    """One rendered episode."""

    frames: np.ndarray
    """``[F, height, width, 3]`` uint8: the state after ``reset`` and after every
    ``frame_every``-th step."""
    frame_steps: np.ndarray
    """``[F]`` int: the number of steps taken before each frame (0 for the reset state)."""
    frame_positions: np.ndarray | None
    """``[F]`` float: the root's x position (MuJoCo's ``qpos[0]``, in metres) at each frame: the
    tracking camera hides how far the robot went. ``None`` for an env without MuJoCo data."""
    episode_return: float
    """Undiscounted return of the episode."""
    num_steps: int
    """Steps taken (``max_path_length`` unless the env terminated the episode)."""
    mean_infos: dict[str, float]
    """Each per-step env info averaged over the episode, e.g. ``forward_vel`` (the mean forward
    velocity of a running robot) or Meta-World's ``success``."""


def can_render(env: Any) -> bool:
    """Whether ``env`` (possibly wrapped) declares gymnasium's ``rgb_array`` render mode."""
    metadata = getattr(getattr(env, "unwrapped", env), "metadata", {}) or {}
    return "rgb_array" in metadata.get("render_modes", [])


def make_render_env(
    env_name: str,
    env_kwargs: dict[str, Any] | None = None,
    normalization_scale: float | None = 10.0,
    width: int = 200,
    height: int = 150,
) -> Any:
    """Build the env ``env_name`` to draw ``width x height`` RGB frames, as a run's script does.

    Args:
        env_name: a MuJoCo env class name of :func:`~meta_policy_search.envs.make_env` (its
            constructor must take ``render_mode``), e.g. ``'HalfCheetahRandDirecEnv'``.
        env_kwargs: further constructor arguments (a run's ``env_kwargs``).
        normalization_scale: wrap in :func:`~meta_policy_search.envs.normalize` with this scale
            (the run's ``normalization_scale``; ``None``: no wrapper), so that the policy's
            actions mean what they meant in training.
        width: frame width in pixels, positive.
        height: frame height in pixels, positive.

    Returns:
        The env; ``env.render()`` returns a ``[height, width, 3]`` uint8 frame. It renders through
        the model's tracking camera (:data:`TRACKING_CAMERA`) when the model has one.

    Raises:
        ValueError: if ``width`` or ``height`` is not positive, or the env cannot render RGB
            frames (the message names it).
    """
    for name, value in (("width", width), ("height", height)):
        check_positive_int(name, value)
    try:
        env = make_env(env_name, render_mode="rgb_array", **(env_kwargs or {}))
    except TypeError as error:  # a constructor without render_mode
        raise ValueError(f"env {env_name} cannot render frames: {error}") from None
    if not can_render(env):
        raise ValueError(f"env {env_name} cannot render frames: its render modes "
                         f"{env.metadata.get('render_modes', [])} lack 'rgb_array'")
    renderer = getattr(env, "mujoco_renderer", None)
    if renderer is not None:
        # MuJoCo loads only for an env that renders through it
        import mujoco

        renderer.width, renderer.height = int(width), int(height)
        camera_id = mujoco.mj_name2id(renderer.model, mujoco.mjtObj.mjOBJ_CAMERA,
                                      TRACKING_CAMERA)
        if camera_id >= 0:
            renderer.camera_id = camera_id
    if normalization_scale is not None:
        env = normalize(env, normalization_scale=normalization_scale)
    return env


def render_episode(
    env: Any,
    policy: NumpyGaussianMLP,
    task: Task,
    max_path_length: int,
    seed: int,
    frame_every: int = 1,
    deterministic: bool = False,
) -> RenderedEpisode:
    """Run one episode of ``task`` with a one-task policy and keep its frames.

    The policy acts as in sampling: ``mean + exp(log_std) * noise`` with standard normal noise
    drawn from ``seed`` (``deterministic``: the mean). Rendering does not change the dynamics:
    the same seed gives the same episode on an env that does not render. Draws in this process:
    in a program that imports TensorFlow use :func:`render_episodes`.

    Args:
        env: a :class:`~meta_policy_search.envs.MetaEnv` built with ``render_mode="rgb_array"``
            (see :func:`make_render_env`).
        policy: the policy of this task alone (``num_tasks == 1``; e.g.
            ``policy.get_sampling_policy().task_slice(i, i + 1)``).
        task: the task to set.
        max_path_length: ``H``, the episode's step limit, positive.
        seed: seeds ``env.reset`` and the action noise.
        frame_every: keep the frame after every ``frame_every``-th step (and the reset state).
        deterministic: act with the policy's mean instead of sampling.

    Returns:
        A :class:`RenderedEpisode`.

    Raises:
        ValueError: if ``policy`` holds more than one task, or ``max_path_length`` or
            ``frame_every`` is not positive.
    """
    if policy.num_tasks != 1:
        raise ValueError(f"policy must hold one task's parameters (task_slice(i, i + 1)), got "
                         f"{policy.num_tasks} tasks")
    for name, value in (("max_path_length", max_path_length), ("frame_every", frame_every)):
        check_positive_int(name, value)
    env.set_task(task)
    observation, _ = env.reset(seed=int(seed))
    action_dim = int(policy.params["log_std"].shape[-1])
    noise = np.random.default_rng(int(seed)).standard_normal((max_path_length, action_dim))
    if deterministic:
        noise = np.zeros_like(noise)
    data = getattr(getattr(env, "unwrapped", env), "data", None)
    position = (lambda: float(data.qpos[0])) if data is not None else (lambda: float("nan"))
    frames, frame_steps = [np.asarray(env.render(), dtype=np.uint8)], [0]
    positions = [position()]
    total, infos, num_steps = 0.0, [], 0
    for step in range(max_path_length):
        obs = np.asarray(observation, dtype=np.float64)[None, None, :]
        action, _ = policy.sample(obs, noise[step][None, None, :])
        observation, reward, terminated, truncated, info = env.step(action[0, 0])
        total += float(reward)
        infos.append(info)
        num_steps = step + 1
        if num_steps % frame_every == 0 or terminated or truncated:
            frames.append(np.asarray(env.render(), dtype=np.uint8))
            frame_steps.append(num_steps)
            positions.append(position())
        if terminated or truncated:
            break
    keys = [key for key, value in infos[0].items() if np.isscalar(value)] if infos else []
    mean_infos = {key: float(np.mean([float(info[key]) for info in infos])) for key in keys}
    return RenderedEpisode(np.stack(frames), np.asarray(frame_steps),
                           np.asarray(positions) if data is not None else None, total, num_steps,
                           mean_infos)


@dataclasses.dataclass(frozen=True)
class EpisodeRequest:
    """One episode for :func:`render_episodes` (the arguments of :func:`render_episode`)."""

    policy: NumpyGaussianMLP
    """The policy of this task alone (``num_tasks == 1``)."""
    task: Task
    """The task to set."""
    max_path_length: int
    """The episode's step limit."""
    seed: int
    """Seeds ``env.reset`` and the action noise."""
    frame_every: int = 1
    """Keep the frame after every ``frame_every``-th step (and the reset state)."""
    deterministic: bool = False
    """Act with the policy's mean instead of sampling."""


def render_episodes(
    requests: Sequence[EpisodeRequest],
    env_name: str,
    env_kwargs: dict[str, Any] | None = None,
    normalization_scale: float | None = 10.0,
    width: int = 200,
    height: int = 150,
    in_subprocess: bool = True,
) -> list[RenderedEpisode]:
    """Render several episodes on one env built by :func:`make_render_env`.

    Args:
        requests: the episodes.
        env_name: the env's name (see :func:`make_render_env`).
        env_kwargs: see :func:`make_render_env`.
        normalization_scale: see :func:`make_render_env`.
        width: frame width in pixels.
        height: frame height in pixels.
        in_subprocess: draw in a fresh (spawned) process, so that a TensorFlow already loaded
            in this one cannot meet the GL libraries (see the module docstring). ``False``: in
            this process.

    Returns:
        One :class:`RenderedEpisode` per request, in order.

    Raises:
        ValueError: as :func:`make_render_env` and :func:`render_episode`.
    """
    args = (list(requests), env_name, env_kwargs, normalization_scale, width, height)
    if not in_subprocess:
        return _render_all(*args)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(_render_all, *args).result()


def _render_all(requests: list[EpisodeRequest], env_name: str, env_kwargs: dict[str, Any] | None,
                normalization_scale: float | None, width: int,
                height: int) -> list[RenderedEpisode]:
    env = make_render_env(env_name, env_kwargs, normalization_scale, width, height)
    try:
        return [render_episode(env, r.policy, r.task, r.max_path_length, r.seed, r.frame_every,
                               r.deterministic) for r in requests]
    finally:
        env.close()


def caption_frame(frame: np.ndarray, lines: Sequence[str], font_size: int = 11) -> np.ndarray:
    """``frame`` with a white band of text lines above it.

    Args:
        frame: ``[height, width, 3]`` uint8.
        lines: the caption, one string per line; a line wider than the frame is wrapped at
            spaces.
        font_size: text height in pixels.

    Returns:
        ``[band + height, width, 3]`` uint8.
    """
    # Pillow loads only when frames are drawn, not to check a command line
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=font_size)
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    wrapped: list[str] = []
    for text in lines:
        line = ""
        for word in text.split(" "):
            candidate = f"{line} {word}" if line else word
            if line and measure.textlength(candidate, font=font) > frame.shape[1] - 8:
                wrapped.append(line)
                candidate = word
            line = candidate
        wrapped.append(line)
    lines = wrapped
    line_height = font_size + 3
    band = Image.new("RGB", (frame.shape[1], 4 + line_height * len(lines)), "white")
    draw = ImageDraw.Draw(band)
    for i, line in enumerate(lines):
        draw.text((4, 2 + i * line_height), line, fill="black", font=font)
    return np.concatenate([np.asarray(band, dtype=np.uint8), frame], axis=0)


def tile(rows: Sequence[Sequence[np.ndarray]], gap: int = 2) -> np.ndarray:
    """Images laid out in a grid on a white background, ``gap`` pixels apart.

    Args:
        rows: rows of ``[h, w, 3]`` uint8 images; each cell is as large as the largest image
            of its row and column.
        gap: pixels between cells.

    Returns:
        The grid, ``[H, W, 3]`` uint8.
    """
    heights = [max(image.shape[0] for image in row) for row in rows]
    widths = [max(row[j].shape[1] for row in rows if j < len(row))
              for j in range(max(len(row) for row in rows))]
    grid = np.full((sum(heights) + gap * (len(rows) - 1),
                    sum(widths) + gap * (len(widths) - 1), 3), 255, dtype=np.uint8)
    y = 0
    for row, height in zip(rows, heights):
        x = 0
        for image, width in zip(row, widths):
            grid[y:y + image.shape[0], x:x + image.shape[1]] = image
            x += width + gap
        y += height + gap
    return grid


def save_gif(frames: Sequence[np.ndarray], path: str, frame_seconds: float = 0.2,
             colors: int = 32) -> str:
    """Write ``frames`` as a looping GIF with a shared palette of ``colors`` colours.

    Args:
        frames: ``[H, W, 3]`` uint8 images of one size.
        path: the file to write.
        frame_seconds: how long each frame shows.
        colors: palette size (fewer: a smaller file).

    Returns:
        ``path``.
    """
    # Pillow loads only when frames are drawn, not to check a command line
    from PIL import Image

    images = [Image.fromarray(frame) for frame in frames]
    # One palette for all frames (from a montage of a few): no flicker between frames.
    sample = np.concatenate([np.asarray(frames[i]) for i in
                             np.linspace(0, len(frames) - 1, min(4, len(frames))).astype(int)])
    palette = Image.fromarray(sample).quantize(colors=colors)
    quantized = [image.quantize(palette=palette, dither=Image.Dither.NONE) for image in images]
    quantized[0].save(path, save_all=True, append_images=quantized[1:], loop=0,
                      duration=int(round(1000 * frame_seconds)), optimize=True)
    return path


def save_png(image: np.ndarray, path: str, colors: int | None = 128) -> str:
    """Write ``image`` as a PNG, reduced to a palette of ``colors`` colours (``None``: full RGB).

    Returns:
        ``path``.
    """
    # Pillow loads only when frames are drawn, not to check a command line
    from PIL import Image

    picture = Image.fromarray(image)
    if colors is not None:
        picture = picture.quantize(colors=colors, dither=Image.Dither.NONE)
    picture.save(path, optimize=True)
    return path
