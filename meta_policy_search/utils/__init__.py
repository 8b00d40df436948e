"""Utilities: the experiment :mod:`~meta_policy_search.utils.logger` and atomic file writes.

Also checkpoints (:mod:`~meta_policy_search.utils.checkpoint`), the RL math shared by the
sample processors (:mod:`~meta_policy_search.utils.rl_math`: discounted sums, GAE), argument
checks and TensorFlow's quiet import. Nothing here imports the rest of the package.
"""

from meta_policy_search.utils.serialization import (
    atomic_dump_joblib,
    atomic_open,
    atomic_write_bytes,
    atomic_write_json,
)

__all__ = ["atomic_dump_joblib", "atomic_open", "atomic_write_bytes", "atomic_write_json"]
