"""The physics the paper ran, where gymnasium's v5 models differ from it.

The paper's envs loaded gym 0.10.5's ``gym/envs/mujoco/assets/*.xml`` (cheetah, ant, humanoid,
walker, swimmer) and, for the two rand-params envs, the XMLs of ``rand_param_envs`` (commit
c662ac8). gymnasium rewrote those models for MuJoCo 3 (local instead of global coordinates) and
changed a few values on the way. Each function below undoes one change on a compiled
``MjModel``, after gymnasium has built it and before the env saves or copies it; every value is
pinned against the original XML by ``tests/test_paper_physics.py``. What cannot be matched is
listed in ``docs/differences.rst``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RAND_PARAM_ENVS_TIMESTEP = 0.004
"""Physics time step of ``rand_param_envs``' ``hopper.xml`` and ``walker2d.xml`` (gym and
gymnasium: 0.002). With its hard-coded ``frame_skip`` of 4, one env step is 0.016 s."""

GYM_WALKER2D_RIGHT_FOOT_FRICTION = 0.9
"""Sliding friction of gym's ``walker2d.xml`` ``foot_geom`` (the left foot has 1.9; gymnasium's
``walker2d_v5.xml`` gives both feet 1.9)."""

GYM_HUMANOID_LEFT_HIP_Y_RANGE_DEGREES = (-120.0, 20.0)
"""Range of gym's ``humanoid.xml`` joint ``left_hip_y``; gymnasium's model gives it -110 to 20,
the range both models give ``right_hip_y``."""


def use_rand_param_envs_timestep(env: Any) -> None:
    """Set ``env``'s physics time step to ``rand_param_envs``' 0.004 s.

    Args:
        env: a gymnasium ``MujocoEnv`` whose constructor has run; its ``dt`` (``timestep x
            frame_skip``) and render rate follow.
    """
    env.model.opt.timestep = RAND_PARAM_ENVS_TIMESTEP
    env.metadata = {**env.metadata, "render_fps": int(np.round(1.0 / env.dt))}


def use_gym_walker2d_feet(model: Any) -> None:
    """Give the walker's right foot gym's sliding friction 0.9 (the left keeps 1.9).

    Args:
        model: the compiled ``MjModel`` of gymnasium's ``walker2d_v5.xml``.
    """
    model.geom("foot_geom").friction[0] = GYM_WALKER2D_RIGHT_FOOT_FRICTION


def use_gym_humanoid_hips(model: Any) -> None:
    """Give the humanoid's ``left_hip_y`` joint gym's range, -120 to 20 degrees.

    Args:
        model: the compiled ``MjModel`` of gymnasium's ``humanoid.xml`` (ranges in radians).
    """
    model.joint("left_hip_y").range[:] = np.deg2rad(GYM_HUMANOID_LEFT_HIP_Y_RANGE_DEGREES)
