"""E-MAML-TRPO (Stadie et al. 2018) on a MuJoCo meta-RL task.

TRPO-MAML plus the exploration term that credits the pre-update sampling distribution with the
post-update return. Usage::

    python experiments/e_maml_trpo_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
"""

from __future__ import annotations

import dataclasses

from trpo_maml_run_mujoco import make_algo, make_sample_processor

from meta_policy_search.utils.experiment import TRPOMAMLConfig, run_experiment


@dataclasses.dataclass(frozen=True)
class Config(TRPOMAMLConfig):
    """E-MAML-TRPO on MuJoCo: TRPO-MAML's settings with the exploration term on."""

    exploration: bool = True
    """Add E-MAML's exploration term."""


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_experiment(Config, "e_maml_trpo", make_algo, make_sample_processor, argv=argv)


if __name__ == "__main__":
    main()
