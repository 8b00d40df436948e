"""A planned run of a run script: its resolved config, iteration count and command line.

Shared by ``experiments/reproduce.py`` (the paper's grid) and ``experiments/gradient_variance.py``
(one study run); both launch the registry's run script as a subprocess.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Sequence
from typing import Any

from meta_policy_search.experiment.config_parsing import config_to_dict, parse_config, resolve_config
from meta_policy_search.experiment.paper import paper_metric, timesteps_per_iteration
from meta_policy_search.experiment.registry import Algorithm
from meta_policy_search.utils.checkpoint_lookup import find_checkpoint


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of the grid."""

    algo: Algorithm
    env: str
    seed: int
    run_dir: str
    n_itr: int
    """Iterations that reach ``--timesteps`` as the paper counts them."""
    params: dict[str, Any]
    """The planned ``params.json``: ``algo`` and the resolved config, as JSON values."""
    args: tuple[str, ...]
    """Script arguments: the algorithm's flags, the grid's extra arguments, env, seed, n_itr."""

    @property
    def key(self) -> tuple[str, str, int]:
        """``(algorithm, env, seed)``."""
        return self.algo.name, self.env, self.seed

    @property
    def metric(self) -> str:
        """The paper's metric for this run: ``Step_K-AverageReturn``."""
        return paper_metric(self.params["num_inner_grad_steps"])

    def command(self, resume: bool) -> list[str]:
        """``['python', SCRIPT, ARGS...]``, with ``--resume`` to continue from a checkpoint."""
        return ["python", self.algo.script_path, *self.args, "--dump_path", self.run_dir,
                *(["--resume"] if resume else [])]


def plan_run(algo: Algorithm, env: str, seed: int, run_dir: str, timesteps: float,
             extra_args: Sequence[str]) -> Run:
    """One run: resolve its config as the script will, then derive ``n_itr`` from ``timesteps``."""
    config_cls, _, _ = algo.load()
    args = [*algo.flags(), *extra_args, "--env", env, "--seed", str(seed)]
    config, _ = parse_config(config_cls, [*args, "--dump_path", run_dir], algo.run_name)
    config = resolve_config(config, algo.run_name)
    per_itr = timesteps_per_iteration(config.meta_batch_size, config.rollouts_per_meta_task,
                                      int(config.max_path_length), config.num_inner_grad_steps)
    n_itr = max(1, math.ceil(timesteps / per_itr))
    # As params.json will hold it (JSON types: lists, not tuples), to compare with it later.
    params = json.loads(json.dumps(config_to_dict(dataclasses.replace(config, n_itr=n_itr),
                                                  algo.run_name)))
    params.pop("paper_config_entry")
    return Run(algo, env, seed, run_dir, n_itr, params, (*args, "--n_itr", str(n_itr)))


def has_checkpoint(run_dir: str) -> bool:
    """Whether ``run_dir/checkpoints`` holds a checkpoint that verifies, found as a resume finds
    it (:func:`~meta_policy_search.utils.checkpoint_lookup.find_checkpoint`), without TensorFlow."""
    return find_checkpoint(os.path.join(run_dir, "checkpoints")).path is not None
