"""E-MAML-TRPO (Stadie et al. 2018) on a MuJoCo meta-RL task.

TRPO-MAML plus the exploration term that credits the pre-update sampling distribution with the
post-update return. Usage::

    python experiments/e_maml_trpo_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
"""

from __future__ import annotations

from meta_policy_search.experiment.exit_codes import run_script
from meta_policy_search.experiment.registry import get_algorithm
from meta_policy_search.experiment.runner import run_algorithm


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_algorithm(get_algorithm("e_maml_trpo"), argv)


if __name__ == "__main__":
    run_script(main)
