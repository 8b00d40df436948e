"""Joining the path batches of several workers into one: whole task blocks, or shares of tasks."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

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


def assemble_shares(
    pieces: Sequence[tuple[PathBatch, int, int, int, int]], num_tasks: int, num_slots: int
) -> PathBatch:
    """Place the episodes of several workers' shares into one ``[T, N, H, ...]`` batch.

    Args:
        pieces: ``(batch, row, task, first, count)``: episodes ``0 .. count - 1`` of ``batch``'s
            row ``row`` become episodes ``first .. first + count - 1`` of ``task``.
        num_tasks: ``T``.
        num_slots: ``N``, the episode axis; slots no piece fills are padding (zero, mask 0).

    Returns:
        The assembled :class:`PathBatch` (new, writable arrays).

    Raises:
        ValueError: if the batches' env-info keys differ.
    """
    first_batch = pieces[0][0]
    keys = set(first_batch.env_infos)
    for batch, *_ in pieces:
        if set(batch.env_infos) != keys:
            raise ValueError(
                f"workers returned different env_infos keys: {sorted(keys)} vs "
                f"{sorted(batch.env_infos)}"
            )

    def place(select: Callable[[Any], np.ndarray], field: str | None = None) -> np.ndarray:
        """``select`` of each piece's batch (of its ``field`` if given), placed."""

        def source(batch: PathBatch) -> np.ndarray:
            return select(batch if field is None else getattr(batch, field))

        example = source(first_batch)
        out = np.zeros((num_tasks, num_slots) + example.shape[2:], example.dtype)
        for batch, row, task, first, count in pieces:
            out[task, first : first + count] = source(batch)[row, :count]
        return out

    return PathBatch(
        observations=place(operator.attrgetter("observations")),
        actions=place(operator.attrgetter("actions")),
        rewards=place(operator.attrgetter("rewards")),
        mask=place(operator.attrgetter("mask")),
        agent_infos={k: place(operator.itemgetter(k), "agent_infos") for k in first_batch.agent_infos},
        env_infos={k: place(operator.itemgetter(k), "env_infos") for k in first_batch.env_infos},
    )
