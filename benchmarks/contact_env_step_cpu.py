"""CPU per copy and env step of the contact envs' batched step: two trees and raw physics, interleaved.

Ant and Humanoid step one ``MjData`` per copy (``meta_policy_search.envs.batched.mujoco``). This
benchmark measures, in one process, what their batched ``step`` costs beyond the physics, for
this tree's ``BatchedMujocoEnv`` and for the one of ``--before`` (that checkout's
``envs/batched/mujoco.py``, loaded under another name on top of this tree's package), against
the raw calls on as many ``MjData``: ``mj_step(nstep=frame_skip)`` alone, and followed by
``mj_rnePostConstraint`` (the physics the contact envs need). All four arms start from the same
reset states and get the same uniform random actions; each env step times every arm with
``time.process_time``, in an order that rotates from step to step, so the arms share the
machine's load; a copy whose episode ends is reset in every arm with the same seed. The two
trees' observations and rewards are checked to be identical at every step. Medians and ranges
are over ``--rounds`` rounds, each a fresh reset; the last column is each round's difference
between the trees. **CPU time under load**, not wall time.

Writes ``benchmarks/results/contact_env_step_cpu.md``. Usage::

    python benchmarks/contact_env_step_cpu.py --before /path/to/main_checkout
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULT = REPO / "benchmarks" / "results" / "contact_env_step_cpu.md"
ENVS = ("AntRandDirec2DEnv", "HumanoidRandDirec2DEnv")


def load_batched_module(tree: Path) -> Any:
    """``tree``'s ``envs/batched/mujoco.py`` as a module of its own (its imports resolve to
    this tree's package)."""
    path = tree / "meta_policy_search" / "envs" / "batched" / "mujoco.py"
    spec = importlib.util.spec_from_file_location("before_batched_mujoco", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--before {tree}: no {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class RawPhysics:
    """``num_envs`` ``MjData`` of ``model`` stepped with ``mj_step`` (and, with ``post``,
    ``mj_rnePostConstraint``) in a Python loop, the copies' states set from the outside."""

    def __init__(self, model: Any, num_envs: int, frame_skip: int, post: bool) -> None:
        self.model, self.frame_skip, self.post = model, frame_skip, post
        self.datas = [mujoco.MjData(model) for _ in range(num_envs)]

    def reset(self, indices: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """``mj_resetData``, then the given ``qpos`` and ``qvel``, for each copy of ``indices``."""
        for i, qpos_i, qvel_i in zip(indices.tolist(), qpos, qvel):
            data = self.datas[i]
            mujoco.mj_resetData(self.model, data)
            data.qpos[:] = qpos_i
            data.qvel[:] = qvel_i

    def step(self, indices: np.ndarray, actions: np.ndarray) -> None:
        """One env step of the copies ``indices`` with the ``[k, nu]`` controls ``actions``."""
        model, frame_skip = self.model, self.frame_skip
        for i, action in zip(indices.tolist(), actions):
            data = self.datas[i]
            data.ctrl[:] = action
            mujoco.mj_step(model, data, frame_skip)
            if self.post:
                mujoco.mj_rnePostConstraint(model, data)


def run_round(name: str, before_module: Any, num_envs: int, num_steps: int,
              seed: int) -> dict[str, float]:
    """CPU microseconds per copy and env step of each arm over one round."""
    from meta_policy_search.envs import make_env

    env = make_env(name)
    env.seed_tasks(seed)
    tasks = env.sample_tasks(num_envs)
    after = env.make_batched(num_envs)
    before = before_module.BatchedMujocoEnv(env, num_envs)
    for batched in (after, before):
        batched.set_tasks(tasks)
    frame_skip = int(env.frame_skip)
    raw = RawPhysics(after.model, num_envs, frame_skip, post=False)
    raw_post = RawPhysics(after.model, num_envs, frame_skip, post=True)
    rng = np.random.default_rng(seed)

    def reset(indices: np.ndarray) -> None:
        seeds = rng.integers(2**31 - 1, size=len(indices))
        np.testing.assert_array_equal(after.reset(indices, seeds), before.reset(indices, seeds))
        states = after._physics
        qpos = np.array([states.datas[i].qpos for i in indices.tolist()])
        qvel = np.array([states.datas[i].qvel for i in indices.tolist()])
        raw.reset(indices, qpos, qvel)
        raw_post.reset(indices, qpos, qvel)

    indices = np.arange(num_envs)
    reset(indices)
    high = np.asarray(env.action_space.high)
    arms: dict[str, Any] = {
        "mj_step": lambda actions: raw.step(indices, actions),
        "mj_step + mj_rnePostConstraint": lambda actions: raw_post.step(indices, actions),
        "before: BatchedMujocoEnv.step": lambda actions: before.step(indices, actions),
        "after: BatchedMujocoEnv.step": lambda actions: after.step(indices, actions),
    }
    names = list(arms)
    seconds = dict.fromkeys(names, 0.0)
    for step in range(num_steps):
        actions = rng.uniform(-high, high, size=(num_envs, len(high)))
        results = {}
        for k in range(len(names)):
            arm = names[(step + k) % len(names)]
            start = time.process_time()
            results[arm] = arms[arm](actions)
            seconds[arm] += time.process_time() - start
        got, want = results["after: BatchedMujocoEnv.step"], results["before: BatchedMujocoEnv.step"]
        np.testing.assert_array_equal(got.observations, want.observations)
        np.testing.assert_array_equal(got.rewards, want.rewards)
        done = indices[got.dones]
        if len(done):
            reset(done)
    return {arm: value / (num_steps * num_envs) * 1e6 for arm, value in seconds.items()}


def tree_commit(tree: Path) -> str:
    """Short commit of ``tree``, with ``+dirty`` if it has changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True,
                              check=False).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("+dirty" if git("status", "--porcelain") else "")


def main() -> None:
    """Measure every env's arms over the rounds and write the results table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True,
                        help="checkout of the project whose BatchedMujocoEnv is the baseline")
    parser.add_argument("--copies", type=int, default=200,
                        help="env copies stepped together (a worker of the paper run: 200-400)")
    parser.add_argument("--steps", type=int, default=60, help="env steps per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per env")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from benchmarks.machine_info import describe_machine, load_average, machine_info

    before_module = load_batched_module(args.before.resolve())
    machine = machine_info(numpy=np.__version__, mujoco=mujoco.__version__)
    machine["load_average_start"] = load_average()
    lines = [
        "# CPU per copy and env step of the contact envs' batched step (CPU time under load)",
        "",
        f"`python benchmarks/contact_env_step_cpu.py {' '.join(sys.argv[1:])}`: before = "
        f"{tree_commit(args.before)}, after = {tree_commit(REPO)}; {args.copies} copies, "
        f"{args.steps} env steps per round, {args.rounds} rounds, the arms interleaved in one "
        "process (see the script's docstring). Microseconds of CPU per copy and env step: "
        "median (range) over the rounds.",
        "",
        "| env | mj_step | mj_step + mj_rnePostConstraint | before: BatchedMujocoEnv.step | "
        "after: BatchedMujocoEnv.step | after - before, per round |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name in ENVS:
        rounds = [run_round(name, before_module, args.copies, args.steps, seed)
                  for seed in range(args.rounds)]
        cells = []
        for arm in rounds[0]:
            values = [r[arm] for r in rounds]
            cells.append(f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})")
        differences = [r["after: BatchedMujocoEnv.step"] - r["before: BatchedMujocoEnv.step"]
                       for r in rounds]
        lines.append(f"| {name} | {' | '.join(cells)} | "
                     f"{', '.join(f'{d:+.1f}' for d in differences)} |")
        print(lines[-1], flush=True)
    machine["load_average_end"] = load_average()
    lines += ["", describe_machine(machine), ""]
    RESULT.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
