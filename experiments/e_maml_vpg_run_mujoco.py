"""E-MAML-VPG (Stadie et al. 2018) on a MuJoCo meta-RL task.

Usage::

    python experiments/e_maml_vpg_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
"""

from __future__ import annotations

import dataclasses

from vpg_maml_run_mujoco import make_algo

from meta_policy_search.utils.experiment import VPGMAMLConfig, run_experiment


@dataclasses.dataclass(frozen=True)
class Config(VPGMAMLConfig):
    """E-MAML-VPG on MuJoCo: VPG-MAML's settings with the exploration term on."""

    exploration: bool = True
    """Add E-MAML's exploration term."""


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_experiment(Config, "e_maml_vpg", make_algo, argv=argv)


if __name__ == "__main__":
    main()
