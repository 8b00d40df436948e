"""Convert gym 0.10.5's global-coordinate models to local coordinates (run once, by hand).

MuJoCo 2.3.4 and later refuse ``coordinate="global"``; MuJoCo 2.3.3 still compiles it and saves
the compiled model in local coordinates. One edit comes first: the foot bodies'
``pos="0.13/2 0 0.1"`` (hopper) and ``pos="0.2/2 0 0.1"`` (walker) are not numbers and MuJoCo
2.3.3 rejects them; they become
``0.13 0 0`` and ``0.2 0 0``, the frames gymnasium's converted models use. With
``inertiafromgeom`` and global joint and geom positions, a body frame's position changes no
physics (only where ``xpos`` is reported). The physics values are unchanged by the conversion;
``tests/test_paper_physics.py`` compiles the saved files with the installed MuJoCo and compares
them with the envs' models. Usage (in a throw-away virtual environment)::

    pip install mujoco==2.3.3
    python tests/data/gym_0_10_5_assets/convert_global_models.py
"""

import os

import mujoco

HERE = os.path.dirname(os.path.abspath(__file__))

FOOT_FRAMES = {"hopper": ("0.13/2 0 0.1", "0.13 0 0"), "walker2d": ("0.2/2 0 0.1", "0.2 0 0")}

for name, (bad_pos, frame_pos) in FOOT_FRAMES.items():
    with open(os.path.join(HERE, f"{name}.xml")) as f:
        xml = f.read().replace(f'pos="{bad_pos}"', f'pos="{frame_pos}"')
    model = mujoco.MjModel.from_xml_string(xml)
    mujoco.mj_saveLastXML(os.path.join(HERE, "converted", f"{name}.xml"), model)
    print(f"converted {name}.xml with MuJoCo {mujoco.__version__}")
