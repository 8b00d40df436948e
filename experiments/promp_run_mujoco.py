"""ProMP (Rothfuss et al. 2019) on a MuJoCo meta-RL task.

Usage::

    python experiments/promp_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
    python experiments/promp_run_mujoco.py --config_file my.json --n_itr 200
    python experiments/promp_run_mujoco.py --dump_path data/promp/run1 --resume

Defaults are the paper's; ``--help`` lists every flag.
"""

from __future__ import annotations

from meta_policy_search.experiment.exit_codes import run_script
from meta_policy_search.experiment.registry import get_algorithm
from meta_policy_search.experiment.runner import run_algorithm


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_algorithm(get_algorithm("promp"), argv)


if __name__ == "__main__":
    run_script(main)
