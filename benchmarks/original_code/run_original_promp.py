"""Run the ORIGINAL ProMP code (jonasrothfuss/ProMP, TF1 graph code) on one of our envs' physics.

A diagnostic outside our package: it answers whether the original algorithm code, on the same
physics as our reimplementation (MuJoCo 3+ through the official ``mujoco`` bindings, gymnasium's
models patched as our envs patch them), learns as ours does: on HalfCheetahRandDirecEnv, whether
it "takes off" as late; on Walker2DRandParamsEnv and HopperRandParamsEnv (``--env``), where it
ends at 1e7 steps; on HumanoidRandDirec2DEnv, whether the original's MAML-TRPO (``--algo
trpo_maml``, its ``TRPOMAML``) stays as flat as ours while its ProMP learns. The original code is
imported unmodified from ``--original_repo`` (a checkout of its master at 93ae339); nothing of it
is copied here. Before importing it, this script installs import-time shims (see ``README.md`` in
this folder for the full list):

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
  optimizer uses it, at import time. After the import, that module's ``np.reshape`` also takes
  numpy 1.x's ``newshape`` keyword (removed in numpy 2.4).

The envs are written here: the original's ``HalfCheetahRandDirecEnv`` and
``HumanoidRandDirec2DEnv`` inherit gym 0.10.5's mujoco-py ``MujocoEnv``, and the paper's
rand-params envs come from ``rand_param_envs`` on mujoco-py 0.5.7; none can run.
:class:`OriginalHalfCheetahRandDirecEnv`, :class:`OriginalWalker2DRandParamsEnv`,
:class:`OriginalHopperRandParamsEnv` and :class:`OriginalHumanoidRandDirec2DEnv` reproduce their
semantics on the official bindings and are importable without the original package or the
shims (``--check_env`` compares each with our package's env).

Usage (see ``README.md``)::

    nice python benchmarks/original_code/run_original_promp.py --original_repo /tmp/ProMP \\
        --seed 1 --n_itr 30 --dump_path runs_original/promp/HalfCheetahRandDirecEnv/seed_1
    nice python benchmarks/original_code/run_original_promp.py --original_repo /tmp/ProMP \\
        --env Walker2DRandParamsEnv --seed 1 --dump_path runs_original/promp/Walker2DRandParamsEnv/seed_1
    nice python benchmarks/original_code/run_original_promp.py --original_repo /tmp/ProMP \\
        --algo trpo_maml --env HumanoidRandDirec2DEnv --seed 1 \\
        --dump_path runs_original/trpo_maml/HumanoidRandDirec2DEnv/seed_1
    PYTHONPATH=. python benchmarks/original_code/run_original_promp.py --check_env [--env ENV]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from check_common import code_and_machine
from humanoid_check import check_humanoid_env
from original_env import HALF_CHEETAH_XML, OriginalHalfCheetahRandDirecEnv, check_env
from original_humanoid_env import HUMANOID_XML, OriginalHumanoidRandDirec2DEnv
from original_rand_params_env import (
    HOPPER_XML,
    WALKER2D_XML,
    OriginalHopperRandParamsEnv,
    OriginalWalker2DRandParamsEnv,
)
from original_shims import import_original
from rand_params_check import check_rand_params_env

ORIGINAL_COMMIT = "93ae339"
"""Commit of jonasrothfuss/ProMP (master) extracted at ``--original_repo``."""

SCRIPT_CONFIG_HEAD = {
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
}
"""The first keys of both original run scripts' default configs
(``run_scripts/pro-mp_run_mujoco.py``, ``run_scripts/maml_run_mujoco.py``), equal in both and in
this order."""

PAPER_CONFIG = {
    # the keys and their order follow run_scripts/pro-mp_run_mujoco.py's default config
    **SCRIPT_CONFIG_HEAD,
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
"""The HalfCheetahRandDirecEnv run's configuration: the original run script's defaults except
``n_itr`` (script: 1001; here ``--n_itr``, default 30) and ``parallel`` (script: True; here
``--parallel``, default iterative, faster on 2 cores). Every value equals our committed
HalfCheetah params.json."""

RAND_PARAMS_SETTINGS = {
    "max_path_length": 200,
    "inner_lr": 0.05,
    "num_promp_steps": 3,
    "target_inner_step": 0.01,
    "init_inner_kl_penalty": 1e-3,
    "adaptive_inner_kl_penalty": True,
    "n_itr": 32,
}
"""The rand-params runs' settings on top of :data:`PAPER_CONFIG` (all differ from it except
``target_inner_step``, listed because only the adaptive penalty uses it): the original's sweep
for ``[Walker2DRandParamsEnv, HopperRandParamsEnv]`` (``experiments/all_envs_eval/ppo_run_all.py``
of its ``full_code`` branch; all its other values equal :data:`PAPER_CONFIG`'s) except ``n_itr``
(sweep: 1001; here 32, the iterations our grid ran for 1e7 steps). Every value equals our
committed params.json of both envs."""

TRPO_MAML_CONFIG = {
    # the keys and their order follow run_scripts/maml_run_mujoco.py's default config
    **SCRIPT_CONFIG_HEAD,
    # E-MAML config
    "inner_lr": 0.1,
    "learning_rate": 1e-3,  # in the original's config but not passed to TRPOMAML (unused)
    "step_size": 0.01,
    "n_itr": 1001,
    "meta_batch_size": 40,
    "num_inner_grad_steps": 1,
    "inner_type": "log_likelihood",
}
"""The original MAML-TRPO run script's default configuration, except ``parallel`` (here
``--parallel``, default iterative). Used only under the per-env settings of
:data:`PAPER_CONFIGS`, which set ``env`` and ``n_itr``."""

HUMANOID_SETTINGS = {
    "env": "HumanoidRandDirec2DEnv",
    "max_path_length": 200,
    "hidden_sizes": (128, 128),
    "n_itr": 32,
}
"""HumanoidRandDirec2DEnv's settings on top of either algorithm's configuration: the paper's
(appendix D and ``experiments/all_envs_eval/{ppo,trpo}_run_all.py`` of the original's
``full_code`` branch, see ``shared/paper_configs.md``: H 200, hidden (128, 128); inner_lr 0.1,
one inner step and, for ProMP, 5 steps with the fixed inner KL penalty 5e-4 as the script
defaults) except ``n_itr`` (1001 there; here 32, the iterations our grid ran for 1.024e7 steps).
Every value equals our committed params.json of both algorithms on this env."""

PAPER_CONFIGS = {
    ("promp", "HalfCheetahRandDirecEnv"): PAPER_CONFIG,
    ("promp", "Walker2DRandParamsEnv"): {
        **PAPER_CONFIG, "env": "Walker2DRandParamsEnv", **RAND_PARAMS_SETTINGS},
    ("promp", "HopperRandParamsEnv"): {
        **PAPER_CONFIG, "env": "HopperRandParamsEnv", **RAND_PARAMS_SETTINGS},
    ("promp", "HumanoidRandDirec2DEnv"): {**PAPER_CONFIG, **HUMANOID_SETTINGS},
    ("trpo_maml", "HumanoidRandDirec2DEnv"): {**TRPO_MAML_CONFIG, **HUMANOID_SETTINGS},
}
"""``(--algo, --env)`` -> the run's configuration (keys in the order of the original run script;
settings dicts merged over it keep that order). Other combinations are not configured."""
ALGOS = ("promp", "trpo_maml")
ENVS = tuple(dict.fromkeys(env for _algo, env in PAPER_CONFIGS))


class EnvSetup(NamedTuple):
    """How ``run`` builds one env."""

    env_class: type
    """The standalone env (our physics, the original's semantics)."""
    xml: str
    """The XML its model is compiled from (patched as our env patches it)."""
    episodes_end_early: bool
    """Whether episodes can terminate before ``max_path_length``; then ``n_timesteps_real`` (the
    env steps of the returned episodes) is logged beside the original's nominal ``n_timesteps``."""
    check: Callable[[], dict[str, object]]
    """``--check_env``: steps our package's env beside the standalone one, returns the results."""


ENV_SETUPS = {
    "HalfCheetahRandDirecEnv": EnvSetup(OriginalHalfCheetahRandDirecEnv, HALF_CHEETAH_XML, False, check_env),
    "Walker2DRandParamsEnv": EnvSetup(OriginalWalker2DRandParamsEnv, WALKER2D_XML, True,
                                      functools.partial(check_rand_params_env, "Walker2DRandParamsEnv")),
    "HopperRandParamsEnv": EnvSetup(OriginalHopperRandParamsEnv, HOPPER_XML, True,
                                    functools.partial(check_rand_params_env, "HopperRandParamsEnv")),
    "HumanoidRandDirec2DEnv": EnvSetup(OriginalHumanoidRandDirec2DEnv, HUMANOID_XML, True,
                                       check_humanoid_env),
}
"""``--env`` -> its :class:`EnvSetup`."""


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------
def counting_sampler(sampler_class: type, logger: object) -> type:
    """A subclass of the original's ``MetaSampler`` that also logs ``n_timesteps_real``.

    ``n_timesteps_real`` is the cumulative number of env steps in the episodes
    ``obtain_samples`` returned (what our Trainer logs under that name), written after each
    logged sampling phase; the sampling itself is the original's.
    """

    class CountingMetaSampler(sampler_class):
        """The original ``MetaSampler``, counting the env steps of the episodes it returns."""

        n_timesteps_real = 0

        def obtain_samples(self, log: bool = False, log_prefix: str = "") -> dict:
            """The original ``obtain_samples``, then log the cumulative real step count."""
            paths = super().obtain_samples(log=log, log_prefix=log_prefix)
            self.n_timesteps_real += sum(len(path["rewards"]) for task in paths.values() for path in task)
            if log:
                logger.logkv("n_timesteps_real", self.n_timesteps_real)
            return paths

    return CountingMetaSampler


def make_algo(algo: str, config: dict, policy: object, orig: dict[str, object]) -> object:
    """The meta-algorithm as the original run script of ``algo`` builds it.

    ``promp``: ``ProMP`` as in ``run_scripts/pro-mp_run_mujoco.py``; ``trpo_maml``: ``TRPOMAML``
    as in ``run_scripts/maml_run_mujoco.py`` (``exploration=False``; the optimizer is TRPOMAML's
    own ``ConjugateGradientOptimizer()`` with its defaults).
    """
    if algo == "trpo_maml":
        return orig["TRPOMAML"](
            policy=policy,
            step_size=config["step_size"],
            inner_type=config["inner_type"],
            inner_lr=config["inner_lr"],
            meta_batch_size=config["meta_batch_size"],
            num_inner_grad_steps=config["num_inner_grad_steps"],
            exploration=False,
        )
    return orig["ProMP"](
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


def run(algo: str, config: dict, orig: dict[str, object]) -> None:
    """The original run script's ``main(config)`` (``pro-mp_run_mujoco.py`` or
    ``maml_run_mujoco.py``, which differ only in the algorithm), with our env class.

    Args:
        algo: ``'promp'`` or ``'trpo_maml'`` (see :func:`make_algo`).
        config: the run configuration (a value of :data:`PAPER_CONFIGS`; its ``env`` a key of
            :data:`ENV_SETUPS`).
        orig: the original's objects, from :func:`import_original`.
    """
    setup = ENV_SETUPS[config["env"]]
    sampler_class = orig["MetaSampler"]
    if setup.episodes_end_early:
        sampler_class = counting_sampler(sampler_class, orig["logger"])

    orig["set_seed"](config["seed"])

    baseline = orig["LinearFeatureBaseline"]()

    env = setup.env_class()  # instantiate env
    env = orig["normalize"](env)  # apply normalize wrapper to env

    policy = orig["MetaGaussianMLPPolicy"](
        name="meta-policy",
        obs_dim=np.prod(env.observation_space.shape),
        action_dim=np.prod(env.action_space.shape),
        meta_batch_size=config["meta_batch_size"],
        hidden_sizes=config["hidden_sizes"],
    )

    sampler = sampler_class(
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

    trainer = orig["Trainer"](
        algo=make_algo(algo, config, policy, orig),
        policy=policy,
        env=env,
        sampler=sampler,
        sample_processor=sample_processor,
        n_itr=config["n_itr"],
        num_inner_grad_steps=config["num_inner_grad_steps"],
    )

    trainer.train()


def provenance(args: argparse.Namespace) -> dict[str, object]:
    """Where this run came from: commits, library versions, host, command line.

    What :mod:`meta_policy_search.experiment.provenance` records for our runs, gathered here by
    hand: this process may not import our package (the original's package has its name).
    """
    here = os.path.dirname(os.path.realpath(__file__))
    setup = ENV_SETUPS[args.env]
    return {
        "script": os.path.realpath(__file__),
        "original_repo": os.path.realpath(args.original_repo),
        "original_commit": ORIGINAL_COMMIT,
        "algo": args.algo,
        "env_class": f"{setup.env_class.__module__}.{setup.env_class.__name__}",
        "env_xml": setup.xml,
        # tensorflow is the shim in a run; its __version__ is the real one
        **code_and_machine(here),
        "start_time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


# ---------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line arguments (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--original_repo",
                        help="path of the original ProMP repository (its meta_policy_search is imported)")
    parser.add_argument("--algo", choices=ALGOS, default="promp",
                        help="the original's ProMP or TRPOMAML (trpo_maml: HumanoidRandDirec2DEnv only)")
    parser.add_argument("--env", choices=ENVS, default=PAPER_CONFIG["env"],
                        help="the env; with --algo, the paper configuration (PAPER_CONFIGS)")
    parser.add_argument("--seed", type=int, default=PAPER_CONFIG["seed"])
    parser.add_argument("--n_itr", type=int, default=None,
                        help="iterations; default the configuration's (HalfCheetah 30, the others 32)")
    parser.add_argument("--dump_path", default=None,
                        help="log directory (progress.csv, params.json, provenance.json); "
                             "default /tmp/orig_promp/run_<time>")
    parser.add_argument("--parallel", action="store_true",
                        help="the original's MetaParallelEnvExecutor (one process per task) instead of the "
                             "iterative executor (faster on 2 cores, see README)")
    parser.add_argument("--meta_batch_size", type=int, default=PAPER_CONFIG["meta_batch_size"])
    parser.add_argument("--rollouts_per_meta_task", type=int, default=PAPER_CONFIG["rollouts_per_meta_task"])
    parser.add_argument("--max_path_length", type=int, default=None,
                        help="default the configuration's (HalfCheetah 100, the others 200)")
    parser.add_argument("--check_env", action="store_true",
                        help="compare our package's --env with its standalone env and exit (run with "
                             "PYTHONPATH=<our repo>; the original is not imported)")
    args = parser.parse_args(argv)
    if not args.check_env and (args.algo, args.env) not in PAPER_CONFIGS:
        parser.error(f"--algo {args.algo} is not configured for --env {args.env} "
                     f"(configured: {', '.join(f'{a} on {e}' for a, e in PAPER_CONFIGS)})")
    return args


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``--check_env``, or a training run of the original ProMP or TRPO-MAML code."""
    args = parse_args(argv)
    if args.check_env:
        print(json.dumps(ENV_SETUPS[args.env].check(), indent=2))
        return

    if not args.original_repo or not os.path.isdir(os.path.join(args.original_repo, "meta_policy_search")):
        raise SystemExit(f"--original_repo {args.original_repo!r}: expected a checkout of "
                         "jonasrothfuss/ProMP (93ae339) holding meta_policy_search/")
    orig = import_original(args.original_repo)
    config = dict(PAPER_CONFIGS[args.algo, args.env])
    config.update(
        seed=args.seed,
        n_itr=config["n_itr"] if args.n_itr is None else args.n_itr,
        parallel=args.parallel,
        meta_batch_size=args.meta_batch_size,
        rollouts_per_meta_task=args.rollouts_per_meta_task,
        max_path_length=config["max_path_length"] if args.max_path_length is None else args.max_path_length,
    )
    dump_path = args.dump_path or f"/tmp/orig_promp/run_{int(time.time())}"

    # as the original run script: configure the logger, dump the configuration, train
    orig["logger"].configure(dir=dump_path, format_strs=["stdout", "log", "csv"], snapshot_mode="last_gap")
    with open(os.path.join(dump_path, "params.json"), "w") as f:
        json.dump(config, f, cls=orig["ClassEncoder"])
    with open(os.path.join(dump_path, "provenance.json"), "w") as f:
        json.dump(provenance(args), f, indent=2)
    run(args.algo, config, orig)


if __name__ == "__main__":
    main()
