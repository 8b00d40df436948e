"""Utilities: the experiment :mod:`~meta_policy_search.utils.logger` and atomic file writes.

Also checkpoints (:mod:`~meta_policy_search.utils.checkpoint`), the RL math shared by the
sample processors (:mod:`~meta_policy_search.utils.rl_math`: discounted sums, GAE), argument
checks (:mod:`~meta_policy_search.utils.validation`) and TensorFlow's quiet import. Nothing here
imports the rest of the package. The atomic writers are imported on first access (PEP 562), so
that code needing only the argument checks loads no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meta_policy_search.utils.lazy import lazy_getattr

if TYPE_CHECKING:
    from meta_policy_search.utils.serialization import (
        atomic_dump_joblib,
        atomic_open,
        atomic_write_bytes,
        atomic_write_json,
    )

__all__ = ["atomic_dump_joblib", "atomic_open", "atomic_write_bytes", "atomic_write_json"]


__getattr__ = lazy_getattr(
    __name__, {name: "meta_policy_search.utils.serialization" for name in __all__}
)
