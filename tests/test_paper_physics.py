"""Each MuJoCo env's compiled model against the model the paper ran.

Sources (``tests/data/gym_0_10_5_assets``, MIT, see its ``LICENSE.md``):

* gym 0.10.5's ``gym/envs/mujoco/assets/*.xml`` (tag v0.10.5, commit c8f8149): the models of the
  original ProMP envs, which load them by name through ``gym.envs.mujoco.MujocoEnv``.
* ``hopper.xml`` and ``walker2d.xml`` are in global coordinates, which MuJoCo 3 refuses;
  ``converted/`` holds them as MuJoCo 2.3.3 saved them (``convert_global_models.py``).
* ``rand_param_envs`` (commit c662ac8, 2018-08-30, used by the paper's HopperRandParams and
  Walker2DRandParams) ships gym's ``hopper.xml`` and ``walker2d.xml`` with one change: ``<option
  timestep="0.004">``. Its ``RandomEnv`` passes ``frame_skip=4`` to ``MujocoEnv`` whatever the
  subclass asks for (Walker2DRandParamsEnv asks for 5).
* Frame skips: the original ProMP envs' ``MujocoEnv.__init__(self, '<model>.xml', frame_skip)``.

Every numeric array of the two compiled ``MjModel`` s is compared, and the physics options, so
a changed friction, joint range, damping, armature, gear, mass, geometry, contact parameter or
time step fails here.
"""

from __future__ import annotations

import os

import mujoco
import numpy as np
import pytest

from meta_policy_search.envs.mujoco_envs.ant_rand_direc import AntRandDirecEnv
from meta_policy_search.envs.mujoco_envs.ant_rand_direc_2d import AntRandDirec2DEnv
from meta_policy_search.envs.mujoco_envs.ant_rand_goal import AntRandGoalEnv
from meta_policy_search.envs.mujoco_envs.half_cheetah_rand_direc import HalfCheetahRandDirecEnv
from meta_policy_search.envs.mujoco_envs.half_cheetah_rand_vel import HalfCheetahRandVelEnv
from meta_policy_search.envs.mujoco_envs.hopper_rand_params import HopperRandParamsEnv
from meta_policy_search.envs.mujoco_envs.humanoid_rand_direc import HumanoidRandDirecEnv
from meta_policy_search.envs.mujoco_envs.humanoid_rand_direc_2d import HumanoidRandDirec2DEnv
from meta_policy_search.envs.mujoco_envs.swimmer_rand_vel import SwimmerRandVelEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_direc import Walker2DRandDirecEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_params import Walker2DRandParamsEnv
from meta_policy_search.envs.mujoco_envs.walker2d_rand_vel import Walker2DRandVelEnv

ASSETS = os.path.join(os.path.dirname(__file__), "data", "gym_0_10_5_assets")
RAND_PARAM_ENVS_TIMESTEP = 0.004

# class -> (original model file under ASSETS, the original's frame_skip, time step override)
ORIGINALS = {
    HalfCheetahRandDirecEnv: ("half_cheetah.xml", 5, None),
    HalfCheetahRandVelEnv: ("half_cheetah.xml", 5, None),
    AntRandDirecEnv: ("ant.xml", 5, None),
    AntRandDirec2DEnv: ("ant.xml", 5, None),
    AntRandGoalEnv: ("ant.xml", 5, None),
    HumanoidRandDirecEnv: ("humanoid.xml", 5, None),
    HumanoidRandDirec2DEnv: ("humanoid.xml", 5, None),
    Walker2DRandDirecEnv: ("converted/walker2d.xml", 8, None),
    Walker2DRandVelEnv: ("converted/walker2d.xml", 8, None),
    SwimmerRandVelEnv: ("swimmer.xml", 4, None),
    HopperRandParamsEnv: ("converted/hopper.xml", 4, RAND_PARAM_ENVS_TIMESTEP),
    Walker2DRandParamsEnv: ("converted/walker2d.xml", 4, RAND_PARAM_ENVS_TIMESTEP),
}

# Arrays that describe names, cameras, textures, materials and collision acceleration
# structures: not physics.
NOT_PHYSICS_PREFIXES = ("name", "cam_", "mat_", "tex_", "bvh_", "light_")
NOT_PHYSICS = {"body_bvhadr", "body_bvhnum", "ntexdata", "names", "paths"}

# The swimmer's original disabled all contacts with <option collision="predefined"> and no
# <contact><pair>; MuJoCo 3 dropped that option, and gymnasium gives its geoms contype 0 and
# conaffinity 0 instead. Both have no contacts (test_swimmer_has_no_contacts), so the filter
# bits differ and nothing else.
SWIMMER_CONTACT_FILTER = {"geom_contype", "geom_conaffinity", "body_contype", "body_conaffinity"}

OPTIONS = ("timestep", "integrator", "iterations", "solver", "cone", "impratio", "gravity",
           "density", "viscosity", "wind", "magnetic", "disableflags", "enableflags", "o_margin",
           "tolerance", "noslip_iterations")


def _ids(classes):
    return [c.__name__ for c in classes]


def load_original(cls):
    """The compiled model the paper's env ran (with its time step), and its frame skip."""
    path, frame_skip, timestep = ORIGINALS[cls]
    with open(os.path.join(ASSETS, path)) as f:
        xml = f.read().replace(' collision="predefined"', "")
    model = mujoco.MjModel.from_xml_string(xml)
    if timestep is not None:
        model.opt.timestep = timestep
    return model, frame_skip


def physics_arrays(model, cls):
    skip = NOT_PHYSICS | (SWIMMER_CONTACT_FILTER if cls is SwimmerRandVelEnv else set())
    arrays = {}
    for name in dir(model):
        if name.startswith("_") or name.startswith(NOT_PHYSICS_PREFIXES) or name in skip:
            continue
        value = getattr(model, name)
        if isinstance(value, np.ndarray) and value.dtype != object:
            arrays[name] = value
    return arrays


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("cls", list(ORIGINALS), ids=_ids(ORIGINALS))
def test_model_is_the_papers(cls):
    """Every physics array and option of our model equals the original's."""
    original, frame_skip = load_original(cls)
    ours = cls().model
    assert cls().frame_skip == frame_skip
    expected, actual = physics_arrays(original, cls), physics_arrays(ours, cls)
    assert expected.keys() == actual.keys()
    for name, value in expected.items():
        # The converted files print joint ranges in degrees to 6 significant digits.
        atol = 1e-5 if name == "jnt_range" else 1e-9
        np.testing.assert_allclose(actual[name], value, rtol=0, atol=atol, err_msg=name)
    for name in OPTIONS:
        np.testing.assert_array_equal(getattr(ours.opt, name), getattr(original.opt, name),
                                      err_msg=f"opt.{name}")


@pytest.mark.parametrize("cls, dt", [(HopperRandParamsEnv, 0.016), (Walker2DRandParamsEnv, 0.016),
                                     (Walker2DRandDirecEnv, 0.016), (HalfCheetahRandDirecEnv, 0.05),
                                     (HumanoidRandDirecEnv, 0.015), (SwimmerRandVelEnv, 0.04)])
def test_env_step_duration(cls, dt):
    """``dt`` = time step x frame skip, as the original envs stepped (rand params: 0.004 x 4)."""
    assert cls().dt == pytest.approx(dt, abs=1e-12)


def test_named_values_the_paper_ran():
    """The values gymnasium's v5 models changed, by name (a readable subset of the test above)."""
    walker = Walker2DRandDirecEnv().model
    assert walker.geom("foot_geom").friction[0] == 0.9  # gym walker2d.xml: right foot 0.9
    assert walker.geom("foot_left_geom").friction[0] == 1.9  # and left foot 1.9
    humanoid = HumanoidRandDirecEnv().model
    np.testing.assert_allclose(np.rad2deg(humanoid.joint("left_hip_y").range), [-120, 20])
    np.testing.assert_allclose(np.rad2deg(humanoid.joint("right_hip_y").range), [-110, 20])
    assert HopperRandParamsEnv().model.opt.timestep == RAND_PARAM_ENVS_TIMESTEP


def test_swimmer_has_no_contacts():
    """Ours, like the original's ``collision="predefined"`` model, never makes a contact."""
    env = SwimmerRandVelEnv()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        env.step(rng.uniform(-1, 1, size=2))
        assert env.data.ncon == 0


def test_rand_params_tasks_scale_the_papers_model():
    """A task multiplies the original's values, not gymnasium's (the time step stays 0.004)."""
    env = HopperRandParamsEnv()
    original, _ = load_original(HopperRandParamsEnv)
    task = env.sample_tasks(1)[0]
    env.set_task(task)
    np.testing.assert_allclose(env.model.geom_friction, original.geom_friction
                               * task["geom_friction"], rtol=1e-12)
    assert env.model.opt.timestep == RAND_PARAM_ENVS_TIMESTEP
