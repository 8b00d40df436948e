"""Shared machinery of the run scripts in ``experiments/``: config, CLI, seeding, builders.

An algorithm is a frozen dataclass config (a subclass of a config in
:mod:`meta_policy_search.experiment.configs`, with a docstring per field) and a
``make_algo(config, policy)`` function (:mod:`meta_policy_search.experiment.algorithms`); a run
script calls :func:`~meta_policy_search.experiment.registry.run_script`, which passes them to
:func:`run_experiment`. Everything else (parsing, ``params.json``, logger, seeding, building the
env, policy, sampler and sample processor, resuming) happens here.

Override precedence, lowest first:

1. the config class's defaults (a run config of
   :mod:`~meta_policy_search.experiment.algorithms` included);
2. the paper config of (algorithm, env) from ``paper_configs.json``
   (:func:`~meta_policy_search.experiment.paper.paper_overrides`): only fields the config class
   has, and not the fields its run config redeclares (a script's own choices are never
   replaced); skipped when ``paper_config`` is false (the quick-start script's default) or the
   paper did not run the env. The env is the one chosen by the flags, else the config file,
   else the class default;
3. ``--config_file`` JSON;
4. command-line flags ``--<field> <value>``.

With ``--resume`` the run's ``params.json`` (complete and resolved) replaces 1 and 2; the config
file and flags still apply on top. ``params.json`` records the resolved config, the algorithm
(``algo``) and the paper-config entry that was applied (``paper_config_entry``: algorithm, env,
the fields it set and the script-owned fields it left alone; ``null`` if none).
"""

from __future__ import annotations

import os
import sys
import typing
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from meta_policy_search.experiment.config_parsing import (  # noqa: F401 - re-exported
    ConfigError,
    ParsedCommandLine,
    config_from_dict,
    config_to_dict,
    field_docs,
    load_json,
    make_parser,
    parse_command_line,
    parse_config,
    resolve_config,
    write_params,
)
from meta_policy_search.experiment.configs import (  # noqa: F401 - re-exported
    DEFAULT_MAX_PATH_LENGTH,
    ENV_SETTINGS,
    RESERVED_KEYS,
    DiceMAMLConfig,
    MetaRLConfig,
    PPOMAMLConfig,
    ProMPConfig,
    TRPOMAMLConfig,
    VPGMAMLConfig,
)
from meta_policy_search.experiment.paper import describe_paper_entry
from meta_policy_search.experiment.provenance import record_launch
from meta_policy_search.experiment.run_checks import (
    PreparedRun,
    check_unchanged,
    check_writable_dir,
    prepare_run,
)
from meta_policy_search.experiment.run_lock import acquire_run_lock
from meta_policy_search.utils.quiet_tf import import_tensorflow


# ---------------------------------------------------------------------------- builders
def derive_seeds(seed: int) -> dict[str, int]:
    """Independent seeds for each component, derived from the root ``seed``.

    The sampler's seed also seeds the env's task distribution (``MetaSampler`` calls
    ``env.seed_tasks``). The first of the four words drawn was once an env seed that the sampler
    then overwrote; it is still drawn and skipped, so every run keeps its seeds.

    Returns:
        ``{'sampler', 'policy', 'tf'}`` -> int32 seeds (via ``np.random.SeedSequence``).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    words = np.random.SeedSequence(int(seed)).generate_state(4, dtype=np.uint32)[1:]
    return {k: int(w) % (2**31 - 1) for k, w in zip(("sampler", "policy", "tf"), words)}


def build_env(config: MetaRLConfig) -> Any:
    """The env ``config.env`` (normalized unless ``normalization_scale`` is None, with the task in
    the observation if ``config.oracle``). Its tasks are seeded by the sampler
    (:func:`build_sampler`)."""
    from meta_policy_search.envs import make_env, normalize

    env = make_env(config.env, **config.env_kwargs)
    if config.normalization_scale is not None:
        env = normalize(env, normalization_scale=config.normalization_scale)
    if config.oracle:
        from meta_policy_search.envs.oracle_env import OracleEnv

        env = OracleEnv(env)
    return env


def build_policy(config: MetaRLConfig, env: Any, seed: int) -> Any:
    """A ``MetaGaussianMLPPolicy`` sized for ``env``'s observation and action spaces."""
    from meta_policy_search.policies import MetaGaussianMLPPolicy

    return MetaGaussianMLPPolicy(
        meta_batch_size=config.meta_batch_size,
        obs_dim=int(np.prod(env.observation_space.shape)),
        action_dim=int(np.prod(env.action_space.shape)),
        hidden_sizes=tuple(config.hidden_sizes),
        learn_std=config.learn_std,
        init_std=config.init_std,
        hidden_nonlinearity=config.hidden_nonlinearity,
        seed=seed,
    )


def build_sampler(config: MetaRLConfig, env: Any, policy: Any, seed: int) -> Any:
    """A ``MetaSampler`` with the config's batch sizes, horizon, sampling mode and executor.

    The values were checked when the config was parsed
    (:func:`~meta_policy_search.experiment.configs.validate_config`); a config built otherwise
    gets ``MetaSampler``'s own ``ValueError``.
    """
    from meta_policy_search.samplers import MetaSampler

    return MetaSampler(
        env=env,
        policy=policy,
        rollouts_per_meta_task=config.rollouts_per_meta_task,
        meta_batch_size=config.meta_batch_size,
        max_path_length=resolved_horizon(config),
        envs_per_task=config.envs_per_task,
        n_parallel=config.n_parallel,
        seed=seed,
        executor=config.executor,
        ray_address=config.ray_address,
        sampling_mode=config.sampling_mode,
        nonfinite_samples=config.nonfinite_samples,
        timeout=_sampler_timeout(config.sampler_timeout),
    )


def _sampler_timeout(seconds: float | None) -> float | str | None:
    """``MetaSampler``'s ``timeout`` for ``--sampler_timeout``: none means automatic, 0 none."""
    if seconds is None:
        from meta_policy_search.samplers.meta_sampler import AUTO_TIMEOUT

        return AUTO_TIMEOUT
    return float(seconds) if seconds > 0 else None


def resolved_horizon(config: MetaRLConfig) -> int:
    """``config.max_path_length`` after :func:`resolve_config` filled it in from the env table.

    Raises:
        ConfigError: if it is still ``None``.
    """
    if config.max_path_length is None:
        raise ConfigError("max_path_length is None: resolve the config with resolve_config() first")
    return int(config.max_path_length)


def build_baseline(config: MetaRLConfig) -> Any:
    """The baseline class named by ``config.baseline``, default-constructed."""
    from meta_policy_search import baselines

    names = [name for name in baselines.__all__ if name != "Baseline"]  # not the abstract base
    if config.baseline not in names:
        raise ValueError(f"baseline must be one of {names}, got {config.baseline!r}")
    return getattr(baselines, config.baseline)()


def build_sample_processor(config: MetaRLConfig) -> Any:
    """A ``MetaSampleProcessor`` (returns, baseline, GAE, advantage normalization)."""
    from meta_policy_search.samplers import MetaSampleProcessor

    return MetaSampleProcessor(
        baseline=build_baseline(config),
        discount=config.discount,
        gae_lambda=config.gae_lambda,
        normalize_adv=config.normalize_adv,
        positive_adv=config.positive_adv,
    )


def build_dice_sample_processor(config: MetaRLConfig) -> Any:
    """A ``DiceSampleProcessor`` (adds the baseline-adjusted rewards of the DiCE objective).

    The returns and GAE advantages use ``config.baseline``; the adjusted rewards use
    ``config.dice_baseline`` (configs without that field, e.g. TRPO-MAML's with
    ``--inner_type dice``: ``LinearTimeBaseline``, the original's).

    Raises:
        ValueError: if a baseline name is not a class of ``meta_policy_search.baselines``.
    """
    from meta_policy_search import baselines
    from meta_policy_search.samplers import DiceSampleProcessor

    dice_baseline = getattr(config, "dice_baseline", "LinearTimeBaseline")
    names = [name for name in baselines.__all__ if name != "Baseline"]  # not the abstract base
    if dice_baseline not in names:
        raise ValueError(f"dice_baseline must be one of {names}, got {dice_baseline!r}")
    return DiceSampleProcessor(
        baseline=build_baseline(config),
        max_path_length=resolved_horizon(config),
        discount=config.discount,
        gae_lambda=config.gae_lambda,
        normalize_adv=config.normalize_adv,
        positive_adv=config.positive_adv,
        reward_baseline=getattr(baselines, dice_baseline)(),
    )


def make_run_dir(dump_path: str) -> None:
    """Create ``dump_path`` and check that files can be written in it.

    Raises:
        ConfigError: if it cannot be created or written (e.g. a read-only file system).
    """
    try:
        os.makedirs(dump_path, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"--dump_path {dump_path}: cannot create it ({error.strerror or error})"
        ) from None
    check_writable_dir(dump_path, "--dump_path")


def exit_with_config_error(error: ConfigError) -> typing.NoReturn:
    """Print one ``error:`` line per message of ``error`` to stderr and exit with status 2."""
    for message in error.messages or (str(error),):
        print(f"error: {message}", file=sys.stderr)
    raise ConfigExit(str(error))


class ConfigExit(SystemExit):
    """``SystemExit(2)`` after a config error was printed; ``str()`` is the message."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message

    def __str__(self) -> str:
        return self.message


def build_callbacks(
    config: Any, make_callbacks: Callable[[Any], Sequence[Any]] | None = None
) -> tuple[Any, ...]:
    """The Trainer's callbacks: the script's (``make_callbacks(config)``), then a
    :class:`~meta_policy_search.best_checkpoint.BestCheckpointCallback` if ``--keep_best``."""
    from meta_policy_search.best_checkpoint import BestCheckpointCallback, best_checkpoint_dir

    callbacks = tuple(make_callbacks(config)) if make_callbacks is not None else ()
    if config.keep_best is not None:
        best_dir = best_checkpoint_dir(config.dump_path)
        callbacks += (BestCheckpointCallback(config.keep_best, best_dir),)
    return callbacks


def run_experiment(
    config_cls: type,
    algo_name: str,
    make_algo: Callable[[Any, Any], Any],
    make_sample_processor: Callable[[Any], Any] = build_sample_processor,
    argv: Sequence[str] | None = None,
    make_callbacks: Callable[[Any], Sequence[Any]] | None = None,
) -> str:
    """Parse the command line, build everything, train, and return the run directory.

    Seeds TensorFlow's global generator (``tf.random.set_seed``): this is script-level code.

    Args:
        config_cls: the script's config dataclass.
        algo_name: short name used in ``params.json`` and the default ``dump_path``.
        make_algo: ``make_algo(config, policy)`` returns the meta-algorithm.
        make_sample_processor: ``make_sample_processor(config)`` returns the processor.
        argv: command-line arguments (default ``sys.argv[1:]``).
        make_callbacks: ``make_callbacks(config)`` returns the Trainer's ``callbacks`` (e.g.
            :class:`~meta_policy_search.gradient_variance.GradientVarianceCallback`).

    Returns:
        The run directory (``config.dump_path``). ``--resume`` of a run that already completed
        ``n_itr`` iterations prints so to stderr and returns at once, touching nothing.

    Raises:
        ConfigExit: (a ``SystemExit`` with status 2) after printing the messages of a
            :class:`ConfigError`: a bad flag, value or config file, a ``--resume`` that would
            change the run, a corrupt checkpoint, or an unusable ``dump_path`` or one that
            another process owns (checked by :func:`prepare_run` before TensorFlow is imported
            and before anything is written). The run holds ``dump_path``'s lock
            (:mod:`~meta_policy_search.experiment.run_lock`) until it returns.
    """
    run_lock = None
    try:
        prepared = prepare_run(config_cls, algo_name, argv)
        if not prepared.finished:
            # The lock first: nothing is written in a directory another run owns.
            run_lock = acquire_run_lock(prepared.config.dump_path)
            check_unchanged(prepared)
            make_run_dir(prepared.config.dump_path)
    except ConfigError as error:
        if run_lock is not None:
            run_lock.release()
        exit_with_config_error(error)
    if prepared.finished:
        print(
            f"nothing to do: {prepared.config.dump_path} already completed all "
            f"n_itr={prepared.config.n_itr} iterations (its last checkpoint is iteration "
            f"{prepared.last_itr}); pass a larger --n_itr to continue training it",
            file=sys.stderr,
        )
        return prepared.config.dump_path
    assert run_lock is not None
    try:
        return _train(prepared, algo_name, make_algo, make_sample_processor, make_callbacks)
    finally:
        run_lock.release()


def _train(
    prepared: PreparedRun,
    algo_name: str,
    make_algo: Callable[[Any, Any], Any],
    make_sample_processor: Callable[[Any], Any],
    make_callbacks: Callable[[Any], Sequence[Any]] | None,
) -> str:
    """Build everything for a checked run whose directory this process owns, train, and
    return the run directory (:func:`run_experiment`'s second half)."""
    config, parsed, resume = prepared.config, prepared.parsed, prepared.parsed.resume
    checkpoint_dir = prepared.checkpoint_dir
    tf = import_tensorflow()  # after every check: a bad flag fails in well under a second

    from meta_policy_search.meta_trainer import Trainer
    from meta_policy_search.utils import logger

    logger.configure(dir=config.dump_path, format_strs=list(config.log_formats),
                     snapshot_mode="none", append=resume, keep_through=prepared.last_itr)
    if not resume or parsed.resume_changes:
        # A resumed run's params.json changes only to record an allowed change (e.g. n_itr).
        write_params(config, config.dump_path, algo_name, parsed.paper_entry)
    if resume and parsed.resume_changes:
        logger.log("Resumed with changed settings: " + ", ".join(
            f"{name}={getattr(config, name)!r}" for name in parsed.resume_changes))
    if parsed.paper_entry is not None and not resume:
        logger.log(describe_paper_entry(parsed.paper_entry))

    seeds = derive_seeds(config.seed)
    tf.random.set_seed(seeds["tf"])
    env = build_env(config)
    policy = build_policy(config, env, seeds["policy"])
    sampler = build_sampler(config, env, policy, seeds["sampler"])
    trainer = Trainer(
        algo=make_algo(config, policy),
        env=env,
        sampler=sampler,
        sample_processor=make_sample_processor(config),
        policy=policy,
        n_itr=config.n_itr,
        num_inner_grad_steps=config.num_inner_grad_steps,
        checkpoint_dir=checkpoint_dir,
        max_nonfinite_outer_steps=config.max_nonfinite_outer_steps,
        callbacks=build_callbacks(config, make_callbacks),
    )
    start_itr = trainer.restore() if resume else 0
    if resume:
        logger.log(f"Resuming {config.dump_path} at iteration {start_itr}")
    record_launch(config.dump_path, start_itr)
    try:
        trainer.train()
    finally:
        if hasattr(sampler, "close"):
            sampler.close()
    return config.dump_path
