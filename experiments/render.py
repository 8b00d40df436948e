"""Render a trained run's policy before and after adaptation: an animated GIF and a PNG of stills.

Usage::

    python experiments/render.py data/promp/HalfCheetahRandDirecEnv/run_x
    python experiments/render.py RUN_DIR --tasks "[1, -1]" --output_dir media --deterministic

Rebuilds the run's env, policy, sampler and algorithm from its ``params.json`` (as
``experiments/meta_testing.py`` does), restores its checkpoint and, for each task: samples the
run's own pre-update batch (``rollouts_per_meta_task`` episodes of ``max_path_length`` steps),
takes the run's inner step(s) with its own step sizes (``inner_lr``, or the learned ones of a
``trainable_inner_step_size`` run), samples again, and renders one episode with the pre-update
and one with the adapted policy (same reset state and action noise; offscreen, through
``MUJOCO_GL=egl`` unless ``MUJOCO_GL`` says otherwise, in a process without TensorFlow: see
:mod:`meta_policy_search.rendering`).

Tasks: ``--tasks`` as JSON (``"[1, -1]"``: forward and backward for the direction envs); by
default both directions for a direction env (``HalfCheetahRandDirecEnv``, ...), else ``--n_tasks``
held-out tasks drawn with the evaluation seed.

Writes into ``--output_dir`` (default ``RUN_DIR/render``):

* ``render.gif``: one row per task, before and after adaptation side by side, every
  ``--frame_every``-th step, each panel captioned with the task, the episode's return and its
  mean forward velocity (for envs that report ``forward_vel``);
* ``render.png``: ``--num_stills`` frames of each episode in a row, the same captions plus the
  average return of the sampled batch;
* ``render.json``: the tasks, the sampled batches' average returns and each rendered episode's
  return, length and mean env infos.

Only MuJoCo envs render (their constructors take ``render_mode``); the point envs and Meta-World
do not.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from meta_policy_search import evaluation
from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.experiment.configs import EXECUTORS
from meta_policy_search.experiment.exit_codes import EPILOG, run_script
from meta_policy_search.experiment.registry import algorithm_for_run_name
from meta_policy_search.experiment.run_checks import check_writable_dir
from meta_policy_search.experiment.script_help import DefaultsOnceHelpFormatter
from meta_policy_search.utils.serialization import atomic_write_json

CAPTION_INFOS = {"forward_vel": "v_x {:+.2f} m/s"}
"""Env infos shown in the captions (their episode mean) and how."""


def format_task(task: Any) -> str:
    """A short label of a task: ``+1`` for a direction, ``[0.21, -0.13]`` for a goal."""
    values = np.asarray(task, dtype=np.float64) if not isinstance(task, dict) else None
    if values is None:
        return str(task)
    if values.ndim == 0:
        return f"{float(values):+g}"
    return np.array2string(values, precision=2, separator=", ")


def default_tasks(env: Any, n_tasks: int, seed: int) -> list[Any]:
    """Both directions for a direction env, else ``n_tasks`` held-out tasks."""
    from meta_policy_search.envs.mujoco_envs.tasks import DirectionTaskEnv

    if isinstance(getattr(env, "unwrapped", env), DirectionTaskEnv):
        return [1.0, -1.0]
    return evaluation.draw_tasks(env, n_tasks, seed)


def parse_tasks(text: str, env: Any) -> list[Any]:
    """The tasks of ``--tasks``: a JSON list, each item accepted by ``env.set_task``.

    Raises:
        ValueError: if ``text`` is not a non-empty JSON list or the env refuses a task.
    """
    try:
        tasks = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg})") from None
    if not isinstance(tasks, list) or not tasks:
        raise ValueError("must be a non-empty JSON list of tasks, e.g. \"[1, -1]\"")
    tasks = [np.asarray(task, dtype=np.float64) if isinstance(task, list) else task
             for task in tasks]
    for task in tasks:
        env.set_task(task)  # raises ValueError naming the task
    return tasks


def adapt(run_dir: str, tasks: list[Any], num_adapt_steps: int | None, seed: int,
          checkpoint: str, executor: str) -> dict[str, Any]:
    """Restore the run and adapt its policy to ``tasks`` as in training.

    Returns:
        ``config``, ``checkpoint_itr``, ``num_adapt_steps``, ``policies``: the numpy
        policies of all tasks before and after adaptation, ``batch_returns``:
        ``[num_adapt_steps + 1, n_tasks]`` average return of each sampled batch.
    """
    params = evaluation.read_run_params(run_dir)
    algorithm = algorithm_for_run_name(str(params["algo"]))
    config_cls, make_algo, make_sample_processor = algorithm.load()
    config = evaluation.load_run_config(run_dir, config_cls)
    if num_adapt_steps is None:
        num_adapt_steps = max(1, int(config.num_inner_grad_steps))
    setup = evaluation.build_evaluation(config, make_algo, make_sample_processor,
                                        n_tasks=len(tasks), seed=seed, executor=executor)
    try:
        itr = evaluation.restore_run(run_dir, setup.algo, setup.policy, checkpoint)
        setup.sampler.set_tasks(tasks)
        setup.policy.switch_to_pre_update()
        pre_policy = setup.policy.get_sampling_policy()
        paths = setup.sampler.obtain_samples()
        batch_returns = [paths.task_average_returns()]
        for _ in range(num_adapt_steps):
            setup.algo.adapt_policy(setup.sample_processor.process_samples(paths))
            paths = setup.sampler.obtain_samples()
            batch_returns.append(paths.task_average_returns())
        post_policy = setup.policy.get_sampling_policy()
    finally:
        setup.policy.switch_to_pre_update()
        setup.sampler.close()
    return {"config": config, "checkpoint_itr": itr, "num_adapt_steps": num_adapt_steps,
            "policies": (pre_policy, post_policy),
            "batch_returns": np.asarray(batch_returns)}


def episode_caption(task: Any, phase: str, episode: Any) -> list[str]:
    """Two caption lines: task and phase; the episode's return and mean infos."""
    stats = [f"return {episode.episode_return:.1f}"]
    stats += [fmt.format(episode.mean_infos[key]) for key, fmt in CAPTION_INFOS.items()
              if key in episode.mean_infos]
    return [f"task {format_task(task)}, {phase}", ", ".join(stats)]


def still_caption(episode: Any, index: int) -> str:
    """``'step 24, x +2.1 m'``: the frame's step and, for MuJoCo envs, the root's position."""
    text = f"step {episode.frame_steps[index]}"
    if episode.frame_positions is not None:
        text += f", x {episode.frame_positions[index]:+.1f} m"
    return text


def main(argv: Sequence[str] | None = None) -> str:
    """Command-line entry point; returns the output directory."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=EPILOG,
                                     formatter_class=DefaultsOnceHelpFormatter)
    parser.add_argument("run_dir", help="run directory with params.json and checkpoints/")
    parser.add_argument("--tasks", default=None,
                        help="tasks as a JSON list, e.g. \"[1, -1]\" (default: both directions "
                        "of a direction env, else --n_tasks held-out tasks)")
    parser.add_argument("--n_tasks", type=int, default=2, help="tasks to draw without --tasks")
    parser.add_argument("--num_adapt_steps", type=int, default=None,
                        help="inner steps (default: the run's num_inner_grad_steps)")
    parser.add_argument("--seed", type=int, default=None,
                        help="evaluation seed (default: the run's seed + 10000)")
    parser.add_argument("--checkpoint", type=evaluation.checkpoint_choice, default="latest",
                        metavar="{latest,best,ITR}",
                        help="the run's newest checkpoint, its best (--keep_best) or iteration "
                        "ITR's (--keep_every)")
    parser.add_argument("--executor", choices=EXECUTORS, default="iterative",
                        help="sampler executor of the adaptation batches")
    parser.add_argument("--max_path_length", type=int, default=None,
                        help="steps of the rendered episodes (default: the run's)")
    parser.add_argument("--frame_every", type=int, default=4,
                        help="keep a frame every this many steps")
    parser.add_argument("--num_stills", type=int, default=5,
                        help="frames per episode in render.png")
    parser.add_argument("--width", type=int, default=200, help="frame width in pixels")
    parser.add_argument("--height", type=int, default=150, help="frame height in pixels")
    parser.add_argument("--crop_top", type=float, default=0.0,
                        help="fraction of each frame's height to cut off at the top (sky)")
    parser.add_argument("--frame_seconds", type=float, default=0.2,
                        help="how long each GIF frame shows")
    parser.add_argument("--deterministic", action="store_true",
                        help="render with the policy's mean action instead of sampling")
    parser.add_argument("--output_dir", default=None, help="default: RUN_DIR/render")
    args = parser.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")  # offscreen: no display needed

    # Every check before TensorFlow loads: a bad argument fails at once, naming the value.
    positive = ("n_tasks", "num_adapt_steps", "max_path_length", "frame_every", "num_stills",
                "width", "height")
    for name in positive:
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} {value}: must be an integer >= 1")
    if args.seed is not None and args.seed < 0:
        parser.error(f"--seed {args.seed}: must be an integer >= 0")
    if not args.frame_seconds > 0:
        parser.error(f"--frame_seconds {args.frame_seconds}: must be a number > 0")
    if not 0 <= args.crop_top < 1:
        parser.error(f"--crop_top {args.crop_top}: must be a fraction in [0, 1)")
    try:
        params = evaluation.read_run_params(args.run_dir)
        algorithm_for_run_name(str(params.get("algo")))
        evaluation.find_checkpoint_dir(args.run_dir, args.checkpoint)
    except (ValueError, FileNotFoundError) as error:
        parser.error(f"run_dir {args.run_dir}: {' '.join(str(error).split())}")
    output_dir = args.output_dir or os.path.join(args.run_dir, "render")
    try:
        check_writable_dir(output_dir, "--output_dir")
    except ConfigError as error:
        parser.error(str(error))
    from meta_policy_search import rendering

    try:
        env = rendering.make_render_env(params["env"], params.get("env_kwargs") or {},
                                        params.get("normalization_scale"), args.width, args.height)
    except ValueError as error:
        parser.error(f"run_dir {args.run_dir}: {error}")
    seed = evaluation.default_eval_seed(params.get("seed", 0)) if args.seed is None else args.seed
    if args.tasks is None:
        tasks = default_tasks(env, args.n_tasks, seed)
    else:
        try:
            tasks = parse_tasks(args.tasks, env)
        except ValueError as error:
            parser.error(f"--tasks {args.tasks}: {error}")
    env.close()  # it only checked the env and the tasks: frames are drawn in another process

    adapted = adapt(args.run_dir, tasks, args.num_adapt_steps, seed, args.checkpoint,
                    args.executor)
    config, num_steps = adapted["config"], adapted["num_adapt_steps"]
    horizon = args.max_path_length or config.max_path_length
    phases = ("before adaptation", f"after {num_steps} inner step{'s' if num_steps > 1 else ''}")
    summary: dict[str, Any] = {
        "run_dir": args.run_dir, "algo": params.get("algo"), "env": config.env,
        "checkpoint": args.checkpoint, "checkpoint_itr": adapted["checkpoint_itr"],
        "seed": seed, "num_adapt_steps": num_steps, "inner_lr": config.inner_lr,
        "rollouts_per_task": config.rollouts_per_meta_task, "max_path_length": horizon,
        "deterministic": args.deterministic, "tasks": [],
    }
    requests = []
    for index, task in enumerate(tasks):
        episode_seed = int(np.random.default_rng([seed, index]).integers(2**31 - 1))
        requests += [rendering.EpisodeRequest(
            policy.task_slice(index, index + 1), task, horizon, episode_seed, args.frame_every,
            args.deterministic) for policy in adapted["policies"]]
    # In a fresh process: TensorFlow, loaded here, and the GL libraries must not meet.
    episodes = rendering.render_episodes(
        requests, config.env, config.env_kwargs, config.normalization_scale, args.width,
        args.height)
    gif_rows, png_rows = [], []
    for index, task in enumerate(tasks):
        entry: dict[str, Any] = {"task": np.asarray(task).tolist()}
        gif_row = []
        for phase_index, (key, phase) in enumerate(zip(("pre", "post"), phases)):
            episode = episodes[2 * index + phase_index]
            batch_return = float(adapted["batch_returns"][-phase_index, index])
            entry[key] = {"batch_average_return": batch_return,
                          "episode_return": episode.episode_return,
                          "num_steps": episode.num_steps, "mean_infos": episode.mean_infos}
            caption = episode_caption(task, phase, episode)
            frames = episode.frames[:, int(args.crop_top * episode.frames.shape[1]):]
            gif_row.append([rendering.caption_frame(frame, caption) for frame in frames])
            stills = np.linspace(0, len(episode.frames) - 1, args.num_stills).round().astype(int)
            strip = rendering.tile([[rendering.caption_frame(frames[i], [still_caption(
                episode, i)]) for i in stills]])
            caption[1] += (f" (batch of {config.rollouts_per_meta_task} episodes: "
                           f"{batch_return:.1f})")
            png_rows.append([rendering.caption_frame(strip, ["; ".join(caption)], font_size=12)])
        gif_rows.append(gif_row)
        summary["tasks"].append(entry)
        print(f"task {format_task(task)}: return {entry['pre']['batch_average_return']:.1f} "
              f"before, {entry['post']['batch_average_return']:.1f} after adaptation "
              f"(batch averages); rendered episodes: {entry['pre']['episode_return']:.1f} -> "
              f"{entry['post']['episode_return']:.1f}")

    legend = algorithm_for_run_name(str(params["algo"])).legend
    title = [f"{legend} on {config.env}, iteration {adapted['checkpoint_itr']}: "
             f"{num_steps} inner step{'s' if num_steps > 1 else ''} (inner_lr {config.inner_lr}) "
             f"on {config.rollouts_per_meta_task} episodes per task"]
    num_frames = min(len(frames) for row in gif_rows for frames in row)
    gif_frames = [rendering.caption_frame(
        rendering.tile([[frames[f] for frames in row] for row in gif_rows]), title, font_size=12)
        for f in range(num_frames)]
    os.makedirs(output_dir, exist_ok=True)
    rendering.save_gif(gif_frames, os.path.join(output_dir, "render.gif"), args.frame_seconds)
    rendering.save_png(rendering.caption_frame(rendering.tile(png_rows), title, font_size=12),
                       os.path.join(output_dir, "render.png"))
    atomic_write_json(os.path.join(output_dir, "render.json"), summary)
    print(f"Wrote render.gif, render.png and render.json to {os.path.abspath(output_dir)}")
    return output_dir


if __name__ == "__main__":
    run_script(main)
