"""Utilities: the experiment :mod:`~meta_policy_search.utils.logger` and atomic file writes."""

from meta_policy_search.utils.serialization import (
    atomic_dump_joblib,
    atomic_open,
    atomic_write_bytes,
    atomic_write_json,
)

__all__ = ["atomic_dump_joblib", "atomic_open", "atomic_write_bytes", "atomic_write_json"]
