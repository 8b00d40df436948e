"""ProMP on the MAML paper's 2-D navigation task (PointEnvRandGoal): the quick-start run.

Small enough to show learning in a few minutes on 2 CPU cores (``make train``)::

    python experiments/promp_run_point_mass.py --dump_path data/promp_point_quickstart
    python experiments/plot.py data/promp_point_quickstart --output curve.png
"""

from __future__ import annotations

import dataclasses

from promp_run_mujoco import make_algo

from meta_policy_search.utils.experiment import ProMPConfig, run_experiment


@dataclasses.dataclass(frozen=True)
class Config(ProMPConfig):
    """ProMP on PointEnvRandGoal, sized for a laptop: 20 tasks x 20 rollouts, H = 100."""

    env: str = "PointEnvRandGoal"
    """Env class name, built with ``meta_policy_search.envs.make_env``."""
    n_itr: int = 40
    """Number of meta-iterations."""
    meta_batch_size: int = 20
    """Number of tasks per meta-iteration."""
    max_path_length: int | None = 100
    """Horizon ``H`` (the MAML paper's 100)."""
    parallel: bool = False
    """Sample in the main process: the point env is too cheap for worker processes to pay."""
    log_formats: tuple[str, ...] = ("log", "csv", "tensorboard")
    """Logger outputs; no ``stdout`` table, the Trainer prints one line per iteration."""
    paper_config: bool = False
    """Keep these quick-start settings (1 inner step, exactly 20 rollouts per task) instead of the
    paper's PointEnvRandGoal entry (3 inner steps, budget sampling); ``true`` applies the entry to
    the fields this script does not set itself."""


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_experiment(Config, "promp", make_algo, argv=argv)


if __name__ == "__main__":
    main()
