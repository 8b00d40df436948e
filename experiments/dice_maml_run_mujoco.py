"""DiCE-MAML (Foerster et al. 2018) on a MuJoCo meta-RL task.

The inner and outer objectives are DiCE's magic-box objective; samples are processed with
``DiceSampleProcessor``. Usage::

    python experiments/dice_maml_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
"""

from __future__ import annotations

from meta_policy_search.experiment.registry import run_script


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_script("dice_maml", argv)


if __name__ == "__main__":
    main()
