"""Run the ORIGINAL ProMP code (jonasrothfuss/ProMP, TF1 graph code) on HalfCheetahRandDirecEnv.

A diagnostic outside our package: it answers whether the original algorithm code, on the same
physics as our reimplementation (MuJoCo 3+ through the official ``mujoco`` bindings, gymnasium's
``half_cheetah.xml``), "takes off" as late as ours does. The original code is imported unmodified
from ``--original_repo`` (a checkout of its master at 93ae339); nothing of it is copied
here. Before importing it, this script installs import-time shims (see ``README.md`` in this
folder for the full list):

* ``tensorflow`` -> ``tf.compat.v1`` with v2 behaviour disabled (graph mode, sessions,
  placeholders, ref variables). Using ``tf.compat.v1`` is fine here because this is a diagnostic
  outside our package. Added: ``contrib.layers.xavier_initializer`` (=
  ``glorot_uniform_initializer``) and ``layers.dense`` (Keras 3 removed ``tf.compat.v1.layers.dense``;
  the replacement creates the same ``<name>/kernel`` and ``<name>/bias`` variables, same
  initializers, same ops).
* ``gym`` (0.10.5 is not installable) -> gymnasium's ``Env``, ``spaces``, ``EzPickle``, and a
  ``MujocoEnv`` that cannot be instantiated (only needed as a base class at import time).
* ``rand_param_envs.gym.spaces.Box`` -> a class nothing is an instance of.
* ``scipy.signal.lfilter`` -> the one filter the original uses (discounted cumulative sum),
  ``y[n] = x[n] + d * y[n-1]``, the same float operations as scipy's.
* ``pyprind.ProgBar`` -> a silent progress bar; ``mpi4py.MPI.COMM_WORLD.Get_rank()`` -> 0.
* ``numpy.cast`` (removed in numpy 2) -> ``np.asarray(x, dtype)``; only the original's TRPO
  optimizer uses it, at import time.

The env, :class:`OriginalHalfCheetahRandDirecEnv`, is written here: the original's
``HalfCheetahRandDirecEnv`` inherits gym 0.10.5's mujoco-py ``MujocoEnv``, which cannot run. It
reproduces the original's semantics on the official bindings and is importable without the
original package or the shims (``--check_env`` compares it with our package's env).

Usage (see ``README.md``)::

    nice python benchmarks/original_code/run_original_promp.py --original_repo /tmp/ProMP \\
        --seed 1 --n_itr 30 --dump_path runs_original/promp/HalfCheetahRandDirecEnv/seed_1
    PYTHONPATH=. python benchmarks/original_code/run_original_promp.py --check_env
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time

import gymnasium
import mujoco
import numpy as np
from original_env import HALF_CHEETAH_XML, OriginalHalfCheetahRandDirecEnv, check_env
from original_shims import import_original

ORIGINAL_COMMIT = "93ae339"
"""Commit of jonasrothfuss/ProMP (master) extracted at ``--original_repo``."""

PAPER_CONFIG = {
    # the keys and their order follow run_scripts/pro-mp_run_mujoco.py's default config
    "seed": 1,
    "baseline": "LinearFeatureBaseline",
    "env": "HalfCheetahRandDirecEnv",
    # sampler config
    "rollouts_per_meta_task": 20,
    "max_path_length": 100,
    "parallel": False,
    # sample processor config
    "discount": 0.99,
    "gae_lambda": 1,
    "normalize_adv": True,
    # policy config
    "hidden_sizes": (64, 64),
    "learn_std": True,  # in the original's config but not passed to the policy (default True)
    # ProMP config
    "inner_lr": 0.1,
    "learning_rate": 1e-3,
    "num_promp_steps": 5,
    "clip_eps": 0.3,
    "target_inner_step": 0.01,
    "init_inner_kl_penalty": 5e-4,
    "adaptive_inner_kl_penalty": False,
    "n_itr": 30,
    "meta_batch_size": 40,
    "num_inner_grad_steps": 1,
}
"""The run's configuration: the original run script's defaults except ``n_itr`` (script: 1001;
here ``--n_itr``, default 30) and ``parallel`` (script: True; here ``--parallel``, default
iterative, faster on 2 cores). Every value equals our committed HalfCheetah params.json."""


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------
def run(config: dict, orig: dict[str, object]) -> None:
    """The original ``run_scripts/pro-mp_run_mujoco.py`` ``main(config)``, with our env class.

    Args:
        config: the run configuration (keys of :data:`PAPER_CONFIG`).
        orig: the original's objects, from :func:`import_original`.
    """
    orig["set_seed"](config["seed"])

    baseline = orig["LinearFeatureBaseline"]()

    env = OriginalHalfCheetahRandDirecEnv()  # instantiate env
    env = orig["normalize"](env)  # apply normalize wrapper to env

    policy = orig["MetaGaussianMLPPolicy"](
        name="meta-policy",
        obs_dim=np.prod(env.observation_space.shape),
        action_dim=np.prod(env.action_space.shape),
        meta_batch_size=config["meta_batch_size"],
        hidden_sizes=config["hidden_sizes"],
    )

    sampler = orig["MetaSampler"](
        env=env,
        policy=policy,
        rollouts_per_meta_task=config["rollouts_per_meta_task"],  # This batch_size is confusing
        meta_batch_size=config["meta_batch_size"],
        max_path_length=config["max_path_length"],
        parallel=config["parallel"],
    )

    sample_processor = orig["MetaSampleProcessor"](
        baseline=baseline,
        discount=config["discount"],
        gae_lambda=config["gae_lambda"],
        normalize_adv=config["normalize_adv"],
    )

    algo = orig["ProMP"](
        policy=policy,
        inner_lr=config["inner_lr"],
        meta_batch_size=config["meta_batch_size"],
        num_inner_grad_steps=config["num_inner_grad_steps"],
        learning_rate=config["learning_rate"],
        num_ppo_steps=config["num_promp_steps"],
        clip_eps=config["clip_eps"],
        target_inner_step=config["target_inner_step"],
        init_inner_kl_penalty=config["init_inner_kl_penalty"],
        adaptive_inner_kl_penalty=config["adaptive_inner_kl_penalty"],
    )

    trainer = orig["Trainer"](
        algo=algo,
        policy=policy,
        env=env,
        sampler=sampler,
        sample_processor=sample_processor,
        n_itr=config["n_itr"],
        num_inner_grad_steps=config["num_inner_grad_steps"],
    )

    trainer.train()


def _git(args: list[str], cwd: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
        return done.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def provenance(args: argparse.Namespace) -> dict[str, object]:
    """Where this run came from: commits, library versions, host, command line.

    What :mod:`meta_policy_search.experiment.provenance` records for our runs, gathered here by
    hand: this process may not import our package (the original's package has its name).
    """
    import tensorflow as tf  # the shim in a run; its __version__ is the real one

    here = os.path.dirname(os.path.realpath(__file__))
    return {
        "script": os.path.realpath(__file__),
        "commit": _git(["rev-parse", "HEAD"], here),
        "dirty": bool(_git(["status", "--porcelain"], here)),
        "original_repo": os.path.realpath(args.original_repo),
        "original_commit": ORIGINAL_COMMIT,
        "env_class": f"{__name__}.{OriginalHalfCheetahRandDirecEnv.__name__}",
        "env_xml": HALF_CHEETAH_XML,
        "python": sys.version.split()[0],
        "tensorflow": tf.__version__,
        "numpy": np.__version__,
        "mujoco": mujoco.__version__,
        "gymnasium": gymnasium.__version__,
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "command_line": [sys.executable, *sys.argv],
        "start_time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


# ---------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line arguments (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--original_repo",
                        help="path of the original ProMP repository (its meta_policy_search is imported)")
    parser.add_argument("--seed", type=int, default=PAPER_CONFIG["seed"])
    parser.add_argument("--n_itr", type=int, default=PAPER_CONFIG["n_itr"])
    parser.add_argument("--dump_path", default=None,
                        help="log directory (progress.csv, params.json, provenance.json); "
                             "default /tmp/orig_promp/run_<time>")
    parser.add_argument("--parallel", action="store_true",
                        help="the original's MetaParallelEnvExecutor (one process per task) instead of the "
                             "iterative executor (faster on 2 cores, see README)")
    parser.add_argument("--meta_batch_size", type=int, default=PAPER_CONFIG["meta_batch_size"])
    parser.add_argument("--rollouts_per_meta_task", type=int, default=PAPER_CONFIG["rollouts_per_meta_task"])
    parser.add_argument("--max_path_length", type=int, default=PAPER_CONFIG["max_path_length"])
    parser.add_argument("--check_env", action="store_true",
                        help="compare our package's env with the standalone env and exit (run with "
                             "PYTHONPATH=<our repo>; the original is not imported)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``--check_env``, or a training run of the original ProMP code."""
    args = parse_args(argv)
    if args.check_env:
        print(json.dumps(check_env(), indent=2))
        return

    if not args.original_repo or not os.path.isdir(os.path.join(args.original_repo, "meta_policy_search")):
        raise SystemExit(f"--original_repo {args.original_repo!r}: expected a checkout of "
                         "jonasrothfuss/ProMP (93ae339) holding meta_policy_search/")
    orig = import_original(args.original_repo)
    config = dict(PAPER_CONFIG)
    config.update(
        seed=args.seed,
        n_itr=args.n_itr,
        parallel=args.parallel,
        meta_batch_size=args.meta_batch_size,
        rollouts_per_meta_task=args.rollouts_per_meta_task,
        max_path_length=args.max_path_length,
    )
    dump_path = args.dump_path or f"/tmp/orig_promp/run_{int(time.time())}"

    # as the original run script: configure the logger, dump the configuration, train
    orig["logger"].configure(dir=dump_path, format_strs=["stdout", "log", "csv"], snapshot_mode="last_gap")
    with open(os.path.join(dump_path, "params.json"), "w") as f:
        json.dump(config, f, cls=orig["ClassEncoder"])
    with open(os.path.join(dump_path, "provenance.json"), "w") as f:
        json.dump(provenance(args), f, indent=2)
    run(config, orig)


if __name__ == "__main__":
    main()
