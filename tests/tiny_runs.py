"""A tiny ProMP point-mass training run shared by the meta-test tests, and the meta-test script.

``meta_testing`` is ``experiments/meta_testing.py`` imported as a module; :func:`train_tiny_point_mass`
runs ``experiments/promp_run_point_mass.py`` for 2 iterations on small batches.
"""

import os
import sys

EXPERIMENTS_DIR = os.path.join(os.path.dirname(__file__), os.pardir, "experiments")
sys.path.insert(0, EXPERIMENTS_DIR)
import meta_testing  # noqa: E402,F401
from promp_run_point_mass import main as train_point_mass  # noqa: E402

sys.path.remove(EXPERIMENTS_DIR)

TINY_RUN = [
    "--n_itr", "2", "--meta_batch_size", "4", "--rollouts_per_meta_task", "4",
    "--max_path_length", "20", "--hidden_sizes", "8", "--log_formats", "csv", "--seed", "3",
]


def train_tiny_point_mass(path, *extra):
    """Train :data:`TINY_RUN` (plus ``extra`` flags) into ``path``; return the run directory."""
    from meta_policy_search.utils import logger

    try:
        return train_point_mass(TINY_RUN + list(extra) + ["--dump_path", str(path)])
    finally:
        logger.reset()
