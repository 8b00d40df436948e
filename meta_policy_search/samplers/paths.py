"""Joining the paths of several workers into one batch: whole task blocks
(:func:`concatenate_paths`), or the compact shares of tasks that workers send back
(:class:`CompactPaths`, :func:`assemble_shares`)."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterable, Sequence

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


@dataclasses.dataclass(frozen=True)
class CompactPaths:
    """A collection's episodes without their padding: what a worker sends back.

    Episodes that end early leave most of a padded ``[S, N, H]`` batch zero (a walker's early
    episodes last about a tenth of ``H``); sending only the real steps moves a fraction of the
    bytes through the pipes, and the padded arrays are built once, where they are used
    (:func:`assemble_shares`).

    Attributes:
        lengths: ``[S, N]`` int64 length of each returned episode of each row (a share), 0 for
            no episode; every row's episodes come first.
        horizon: ``H``.
        observations: ``[n, obs_dim]`` float32, the real steps in ``(row, episode, step)``
            order (``n = lengths.sum()``); likewise the other arrays.
        actions: ``[n, act_dim]`` float32.
        rewards: ``[n]`` float32.
        agent_infos: name -> ``[n, ...]``.
        env_infos: name -> ``[n]``.
    """

    lengths: np.ndarray
    horizon: int
    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    agent_infos: dict[str, np.ndarray]
    env_infos: dict[str, np.ndarray]

    def row_steps(self, row: int, count: int) -> tuple[int, int]:
        """``(start, stop)`` of the steps of the first ``count`` episodes of ``row``."""
        start = int(self.lengths[:row].sum())
        return start, start + int(self.lengths[row, :count].sum())

    def padded(self) -> PathBatch:
        """The ``[S, N, H, ...]`` padded batch of all rows."""
        return assemble_shares(
            [(self, row, row, 0, self.lengths.shape[1]) for row in range(len(self.lengths))],
            len(self.lengths), self.lengths.shape[1],
        )


def assemble_shares(
    pieces: Sequence[tuple[CompactPaths, int, int, int, int]], num_tasks: int, num_slots: int
) -> PathBatch:
    """Place the episodes of several workers' shares into one padded ``[T, N, H, ...]`` batch.

    Args:
        pieces: ``(paths, row, task, first, count)``: episodes ``0 .. count - 1`` of row ``row``
            of ``paths`` become episodes ``first .. first + count - 1`` of ``task``.
        num_tasks: ``T``.
        num_slots: ``N``, the episode axis; slots no piece fills are padding.

    Returns:
        The :class:`PathBatch`: new, writable arrays, zero on padded steps and episodes (mask 0).

    Raises:
        ValueError: if the pieces' env-info keys differ.
    """
    first_paths = pieces[0][0]
    keys = list(first_paths.env_infos)
    for paths, *_ in pieces:
        if set(paths.env_infos) != set(keys):
            raise ValueError(
                f"workers returned different env_infos keys: {sorted(keys)} vs "
                f"{sorted(paths.env_infos)}"
            )
    horizon = first_paths.horizon
    lengths = np.zeros((num_tasks, num_slots), dtype=np.int64)
    segments: list[tuple[CompactPaths, int, int]] = []
    # Row-major (task, episode, step) order of the real steps: the order ``out[mask]`` fills.
    for paths, row, task, first, count in sorted(pieces, key=lambda piece: piece[2:4]):
        lengths[task, first : first + count] = paths.lengths[row, :count]
        start, stop = paths.row_steps(row, count)
        if segments and segments[-1][0] is paths and segments[-1][2] == start:
            segments[-1] = (paths, segments[-1][1], stop)  # one worker's tasks in order: one slice
        else:
            segments.append((paths, start, stop))
    mask = np.arange(horizon) < lengths[..., None]
    full = bool(mask.all())

    def place(select: Callable[[CompactPaths], np.ndarray]) -> np.ndarray:
        parts = [select(paths)[start:stop] for paths, start, stop in segments]
        values = parts[0] if len(parts) == 1 else np.concatenate(parts)
        shape = (num_tasks, num_slots, horizon) + values.shape[1:]
        if full:  # no padding anywhere (e.g. no early termination): the steps are the batch
            # A slice of one worker's arrays is reused as it is, unless it is read-only (Ray).
            return values.reshape(shape) if values.flags.writeable else values.reshape(shape).copy()
        out = np.zeros(shape, values.dtype)
        out[mask] = values
        return out

    return PathBatch(
        observations=place(operator.attrgetter("observations")),
        actions=place(operator.attrgetter("actions")),
        rewards=place(operator.attrgetter("rewards")),
        mask=mask.astype(np.float32),
        agent_infos={
            key: place(lambda paths, key=key: paths.agent_infos[key])  # type: ignore[misc]
            for key in first_paths.agent_infos
        },
        env_infos={
            key: place(lambda paths, key=key: paths.env_infos[key])  # type: ignore[misc]
            for key in keys
        },
    )
