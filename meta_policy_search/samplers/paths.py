"""Joining the path batches of several workers' task blocks into one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from meta_policy_search.types import PathBatch


def concatenate_paths(batches: Sequence[PathBatch]) -> PathBatch:
    """Join path batches of disjoint task blocks along the task axis (in the given order).

    Batches with fewer episodes than the largest (``'budget'`` mode: each worker's episode axis
    is its own bucket) get whole padded episodes (all zero, mask 0) appended first.

    Args:
        batches: path batches with equal ``H`` and info keys.

    Returns:
        One :class:`PathBatch` whose task axis is the concatenation of the inputs' and whose
        episode axis is the largest of theirs.

    Raises:
        ValueError: if the batches' env-info keys differ.
    """
    if len(batches) == 1:
        return batches[0]
    keys = set(batches[0].env_infos)
    for batch in batches[1:]:
        if set(batch.env_infos) != keys:
            raise ValueError(
                f"workers returned different env_infos keys: {sorted(keys)} vs "
                f"{sorted(batch.env_infos)}"
            )
    num_episodes = max(batch.mask.shape[1] for batch in batches)

    def cat(arrays: Iterable[np.ndarray]) -> np.ndarray:
        parts = list(arrays)
        if all(part.shape[1] == num_episodes for part in parts):
            return np.concatenate(parts, axis=0)
        first = parts[0]
        out = np.zeros(
            (sum(len(part) for part in parts), num_episodes) + first.shape[2:], first.dtype
        )
        start = 0
        for array in parts:
            out[start : start + len(array), : array.shape[1]] = array
            start += len(array)
        return out

    return PathBatch(
        observations=cat(b.observations for b in batches),
        actions=cat(b.actions for b in batches),
        rewards=cat(b.rewards for b in batches),
        mask=cat(b.mask for b in batches),
        agent_infos={k: cat(b.agent_infos[k] for b in batches) for k in batches[0].agent_infos},
        env_infos={k: cat(b.env_infos[k] for b in batches) for k in batches[0].env_infos},
    )
