"""First-order MAML on a MuJoCo meta-RL task: VPG-MAML with ``--first_order true``.

Usage::

    python experiments/fo_maml_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
"""

from __future__ import annotations

from meta_policy_search.experiment.exit_codes import run_script
from meta_policy_search.experiment.registry import get_algorithm
from meta_policy_search.experiment.runner import run_algorithm


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_algorithm(get_algorithm("fo_maml"), argv)


if __name__ == "__main__":
    run_script(main)
