"""ProMP on the MAML paper's 2-D navigation task (PointEnvRandGoal): the quick-start run.

Small enough to show learning in a few minutes on 2 CPU cores (``make train``)::

    python experiments/promp_run_point_mass.py --dump_path data/promp_point_quickstart
    python experiments/plot.py data/promp_point_quickstart --output curve.png
"""

from __future__ import annotations

from meta_policy_search.experiment.algorithms import ProMPPointMassConfig
from meta_policy_search.experiment.exit_codes import run_script
from meta_policy_search.experiment.registry import get_algorithm
from meta_policy_search.experiment.runner import run_algorithm


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_algorithm(get_algorithm("promp"), argv, config_cls=ProMPPointMassConfig)


if __name__ == "__main__":
    run_script(main)
