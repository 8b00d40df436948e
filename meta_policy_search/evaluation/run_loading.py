"""Reading a trained run back: its ``params.json`` as a config, and its checkpoints.

Only reading happens here (``params.json``, checkpoint directories); writing results is the
script's job. TensorFlow loads only when a checkpoint is restored into built objects.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from meta_policy_search.best_checkpoint import BEST_DIR_NAME
from meta_policy_search.experiment.config_values import config_from_dict, load_json
from meta_policy_search.meta_trainer import checkpoint_trackables
from meta_policy_search.periodic_checkpoint import kept_checkpoint_dir, kept_iterations
from meta_policy_search.utils.checkpoint import restore_checkpoint
from meta_policy_search.utils.checkpoint_lookup import CheckpointError, find_checkpoint


def read_run_params(run_dir: str) -> dict[str, Any]:
    """Read a run's ``params.json`` as a dict (the config's fields plus ``'algo'``).

    Args:
        run_dir: a run directory written by ``run_experiment``.

    Returns:
        The JSON object.

    Raises:
        FileNotFoundError: if ``run_dir/params.json`` does not exist.
        ValueError: if it does not hold a JSON object.
    """
    path = os.path.join(run_dir, "params.json")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} not found: {run_dir!r} is not a run directory")
    return load_json(path)


def load_run_config(run_dir: str, config_cls: type) -> Any:
    """Read a run's ``params.json`` into ``config_cls``.

    Args:
        run_dir: a run directory written by ``run_experiment``.
        config_cls: the config dataclass of the run's script.

    Returns:
        A ``config_cls`` instance with the run's values.

    Raises:
        FileNotFoundError: if ``run_dir/params.json`` does not exist.
        ValueError: if it holds keys that are not fields of ``config_cls``.
    """
    return config_from_dict(config_cls, read_run_params(run_dir))


CHECKPOINT_CHOICES = ("latest", "best")
"""Which checkpoint of a run to evaluate by name: the newest, or the one ``--keep_best`` kept.
An iteration number (``'99'``) names one that ``--keep_every`` kept."""


class CheckpointChoiceError(ValueError, argparse.ArgumentTypeError):
    """A ``--checkpoint`` value that is none of ``latest``, ``best`` or an iteration number (a
    ``ValueError``; argparse prints its message as the flag's error)."""


def checkpoint_choice(value: str) -> str:
    """Check a ``--checkpoint`` value: ``'latest'``, ``'best'`` or an iteration number >= 0.

    Args:
        value: the command-line value.

    Returns:
        ``value`` (an iteration number without leading zeros).

    Raises:
        CheckpointChoiceError: (a ``ValueError``) naming ``value`` and what is allowed.
    """
    if value in CHECKPOINT_CHOICES:
        return value
    if value.isdigit():
        return str(int(value))
    raise CheckpointChoiceError(f"checkpoint must be latest, best or an iteration number kept by "
                     f"--keep_every (e.g. 99), got {value!r}")


def find_checkpoint_dir(run_dir: str, which: str = "latest") -> str:
    """A checkpoint directory of ``run_dir``, checked to hold a complete checkpoint (found by
    scanning its ``itr_*`` directories, :func:`~meta_policy_search.utils.checkpoint_lookup.find_checkpoint`).

    Args:
        run_dir: a run directory.
        which: ``'latest'`` (``run_dir/checkpoints``, written after every iteration),
            ``'best'`` (``run_dir/checkpoints_best``, written by ``--keep_best``) or an iteration
            number such as ``'99'`` (``run_dir/checkpoints_every/itr_000099``, written by
            ``--keep_every``).

    Returns:
        The checkpoint directory.

    Raises:
        ValueError: if ``which`` is none of these (:func:`checkpoint_choice`).
        FileNotFoundError: if it holds no checkpoint.
        CheckpointError: (a ``ValueError``) if it holds checkpoints but none reads back, naming
            the newest one's damaged file.
    """
    which = checkpoint_choice(str(which))
    if which == "best":
        checkpoint_dir = os.path.join(run_dir, BEST_DIR_NAME)
        hint = "train it with --keep_best Step_1-AverageReturn (it keeps the best iteration)"
    elif which == "latest":
        checkpoint_dir = os.path.join(run_dir, "checkpoints")
        hint = "train the run first (the Trainer saves one after every iteration)"
    else:
        checkpoint_dir = kept_checkpoint_dir(run_dir, int(which))
        kept = kept_iterations(run_dir)
        hint = (f"the run kept iterations {', '.join(map(str, kept))} (--keep_every)" if kept
                else "train it with --keep_every N (it keeps every N-th iteration)")
    lookup = find_checkpoint(checkpoint_dir)
    if lookup.path is None and lookup.damaged:
        raise CheckpointError(f"no checkpoint in {checkpoint_dir!r} reads back: "
                              f"{lookup.damaged[0]}")
    if lookup.path is None:
        raise FileNotFoundError(f"no complete checkpoint in {checkpoint_dir!r}: {hint}")
    return checkpoint_dir


def restore_run(run_dir: str, algo: Any, policy: Any, which: str = "latest") -> int:
    """Restore a checkpoint of ``run_dir`` into ``algo`` and ``policy``.

    Restores what the Trainer saved from ``algo.checkpoint_state()`` (policy parameters, inner
    step sizes, optimizer and algorithm state) and the policy parameters.

    Args:
        run_dir: the run directory.
        algo: built with the run's config (see
            :func:`~meta_policy_search.evaluation.setup.build_evaluation`).
        policy: ``algo``'s policy.
        which: ``'latest'``, ``'best'`` or a kept iteration (see :func:`find_checkpoint_dir`).

    Returns:
        The iteration of the restored checkpoint.

    Raises:
        FileNotFoundError: if the run has no complete checkpoint.
    """
    state = restore_checkpoint(find_checkpoint_dir(run_dir, which),
                               checkpoint_trackables(algo, policy))
    return int(state["itr"])


def restore_policy_params(run_dir: str, policy: Any) -> int:
    """Restore only the policy parameters of ``run_dir``'s newest checkpoint into ``policy``.

    For the ``pretrained`` baseline: a policy trained by another run (any algorithm, or without
    meta-learning) adapted with the evaluated run's algorithm.

    Args:
        run_dir: a run directory whose checkpoint holds ``policy_params`` of the same shapes.
        policy: a policy with the other run's architecture.

    Returns:
        The iteration of the restored checkpoint.

    Raises:
        FileNotFoundError: if the run has no complete checkpoint.
    """
    state = restore_checkpoint(find_checkpoint_dir(run_dir),
                               {"policy_params": dict(policy.get_params())})
    return int(state["itr"])
