"""How far gym's half-cheetah moves under the initial policy's action noise, per MuJoCo version.

Runs gym 0.10.5's ``half_cheetah.xml`` (``tests/data/gym_0_10_5_assets``) with nothing but the
official ``mujoco`` bindings, so the same script runs on any installed MuJoCo: ``EPISODES``
episodes of ``H`` env steps (``FRAME_SKIP`` physics steps each) from the model's initial state
with gymnasium's reset noise, under Gaussian actions of std ``ACTION_STD`` (the initial policy's
std 1 mapped from [-10, 10] onto [-1, 1]) from a fixed seed. It prints one JSON line: the MuJoCo
version and the mean, std and mean absolute value of the episodes' forward velocity (``dx /
(H * dt)``), the quantity HalfCheetahRandDirecEnv rewards.

Usage (e.g. once per installed MuJoCo)::

    python benchmarks/engine_response.py
"""

from __future__ import annotations

import json
import os

import mujoco
import numpy as np

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "data",
                     "gym_0_10_5_assets", "half_cheetah.xml")
EPISODES, H, FRAME_SKIP, ACTION_STD, SEED = 200, 100, 5, 0.1, 0


def forward_velocities() -> np.ndarray:
    """``[EPISODES]`` mean forward velocity of each episode."""
    with open(MODEL) as f:
        model = mujoco.MjModel.from_xml_string(f.read())
    data = mujoco.MjData(model)
    rng = np.random.default_rng(SEED)
    dt = model.opt.timestep * FRAME_SKIP
    velocities = []
    for _ in range(EPISODES):
        mujoco.mj_resetData(model, data)
        data.qpos[:] = model.qpos0 + rng.uniform(-0.1, 0.1, model.nq)
        data.qvel[:] = 0.1 * rng.standard_normal(model.nv)
        mujoco.mj_forward(model, data)
        start = data.qpos[0]
        for _ in range(H):
            data.ctrl[:] = np.clip(ACTION_STD * rng.standard_normal(model.nu), -1, 1)
            for _ in range(FRAME_SKIP):
                mujoco.mj_step(model, data)
        velocities.append((data.qpos[0] - start) / (H * dt))
    return np.array(velocities)


if __name__ == "__main__":
    v = forward_velocities()
    print(json.dumps({"mujoco": mujoco.__version__, "episodes": EPISODES,
                      "mean_velocity": round(float(v.mean()), 5),
                      "std_velocity": round(float(v.std()), 5),
                      "mean_abs_velocity": round(float(np.abs(v).mean()), 5)}))
