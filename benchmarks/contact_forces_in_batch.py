"""Can :class:`mujoco.batch.Batch` give Ant's and Humanoid's contact forces bit for bit?

The contact envs read ``cfrc_ext``, which gymnasium computes with ``mj_rnePostConstraint`` after
``mj_step``. A batch step does not run it, and the batch offers neither a hook to run it nor the
fields it reads (``contact``, ``efc_force`` cannot be bound). The one way to make a batch step
compute ``cfrc_ext`` is a sensor of the acceleration stage (here ``framelinacc`` on the first
body), whose evaluation runs ``mj_rnePostConstraint`` inside ``mj_forward``. This probe steps
``--copies`` copies of each env's model with such a sensor added in one batch (bound
``cfrc_ext``) and, side by side, one ``MjData`` per copy of the env's own model with gymnasium's
``mj_step`` then ``mj_rnePostConstraint``, from the env's reset states with uniform random
controls, and reports the largest difference of ``cfrc_ext`` and of the state, under the env's
own integrator and under Euler.

Under RK4, ``mj_step`` ends on the data of its last Runge-Kutta stage (contacts and constraint
forces at an intermediate state), which gymnasium's ``mj_rnePostConstraint`` reads, while the
sensor is evaluated in the step's first ``mj_forward`` only: the two differ whenever a contact
is active. Writes ``benchmarks/results/contact_forces_in_batch.md``. Usage::

    python benchmarks/contact_forces_in_batch.py [--steps 300] [--copies 4]
"""

from __future__ import annotations

import argparse
import copy
import platform
from pathlib import Path

import mujoco
import numpy as np
from mujoco.batch import Batch

from meta_policy_search.envs.mujoco_envs.ant_rand_direc import AntRandDirecEnv
from meta_policy_search.envs.mujoco_envs.humanoid_rand_direc import HumanoidRandDirecEnv

RESULT = Path(__file__).resolve().parent / "results" / "contact_forces_in_batch.md"


def model_with_acceleration_sensor(env: object) -> mujoco.MjModel:
    """The env's XML compiled with a ``framelinacc`` sensor on body 1, with the env's joint
    ranges (the paper's Humanoid hip range is set on the compiled model)."""
    model = env.model  # type: ignore[attr-defined]
    spec = mujoco.MjSpec.from_file(env.fullpath)  # type: ignore[attr-defined]
    spec.add_sensor(type=mujoco.mjtSensor.mjSENS_FRAMELINACC, objtype=mujoco.mjtObj.mjOBJ_BODY,
                    objname=model.body(1).name)
    augmented = spec.compile()
    augmented.jnt_range[:] = model.jnt_range
    return augmented


def compare(env: object, integrator: int, steps: int, copies: int) -> dict[str, float]:
    """Largest ``|cfrc_ext|`` and state differences between the batch and gymnasium's stepping
    over ``steps`` env steps of ``copies`` copies, and the number of copy-steps with contacts."""
    model = copy.copy(env.model)  # type: ignore[attr-defined]
    model.opt.integrator = integrator
    augmented = model_with_acceleration_sensor(env)
    augmented.opt.integrator = integrator
    frame_skip = int(env.frame_skip)  # type: ignore[attr-defined]
    datas = [mujoco.MjData(model) for _ in range(copies)]
    for seed, data in enumerate(datas):
        env.reset(seed=seed)  # type: ignore[attr-defined]
        data.qpos[:] = env.data.qpos  # type: ignore[attr-defined]
        data.qvel[:] = env.data.qvel  # type: ignore[attr-defined]
    batch = Batch(augmented, copies, nthread=1)
    ids = np.arange(copies)
    batch.reset(ids, stage=mujoco.mjtStage.mjSTAGE_NONE)
    qpos, qvel, ctrl, cfrc = (batch.bind(name) for name in ("qpos", "qvel", "ctrl", "cfrc_ext"))
    qpos[:] = [data.qpos for data in datas]
    qvel[:] = [data.qvel for data in datas]
    rng = np.random.default_rng(0)
    worst_force = worst_state = 0.0
    contact_steps = 0
    for _ in range(steps):
        controls = rng.uniform(-1.0, 1.0, size=(copies, model.nu))
        for data, control in zip(datas, controls):
            data.ctrl[:] = control
            mujoco.mj_step(model, data, frame_skip)
            mujoco.mj_rnePostConstraint(model, data)
            contact_steps += data.ncon > 0
        ctrl[:] = controls
        batch.step(ids, nstep=frame_skip)
        want = np.array([data.cfrc_ext for data in datas])
        state = np.array([np.concatenate([data.qpos, data.qvel]) for data in datas])
        worst_force = max(worst_force, float(np.abs(cfrc - want).max()))
        worst_state = max(worst_state, float(np.abs(np.concatenate([qpos, qvel], 1) - state).max()))
    return {"cfrc_ext": worst_force, "state": worst_state, "contact_steps": contact_steps}


def main() -> None:
    """Run the comparison for Ant and Humanoid and write the results table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300, help="env steps per copy")
    parser.add_argument("--copies", type=int, default=4, help="copies stepped side by side")
    args = parser.parse_args()
    lines = [
        "# Contact forces from a `mujoco.batch` step (acceleration sensor) vs gymnasium's",
        "",
        f"`python benchmarks/contact_forces_in_batch.py --steps {args.steps} --copies "
        f"{args.copies}`; mujoco {mujoco.__version__}, numpy {np.__version__}, "
        f"{platform.machine()}. Max abs difference over all copies and steps (0 = bit-identical).",
        "",
        "| env | integrator | max abs diff cfrc_ext | max abs diff qpos, qvel | copy-steps with contact |",
        "|---|---|---|---|---|",
    ]
    for env in (AntRandDirecEnv(), HumanoidRandDirecEnv()):
        own = int(env.model.opt.integrator)
        for integrator in (own, int(mujoco.mjtIntegrator.mjINT_EULER)):
            result = compare(env, integrator, args.steps, args.copies)
            label = mujoco.mjtIntegrator(integrator).name + (" (the env's)" if integrator == own
                                                              else " (probe only)")
            lines.append(f"| {type(env).__name__} | {label} | {result['cfrc_ext']:.6g} | "
                         f"{result['state']:.6g} | {result['contact_steps']} |")
            print(lines[-1])
    RESULT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
