"""The run scripts' runner: check the command line, build the meta-algorithm and the run, train.

A run script passes its registry entry (:mod:`~meta_policy_search.experiment.registry`) to
:func:`run_algorithm`, which calls :func:`run_experiment` with the entry's config class and
builders. :func:`prepare_run` turns the command line into a validated config
(:func:`~meta_policy_search.experiment.config_parsing.parse_command_line`, which documents the
override precedence) and checks the env and the run directory
(:mod:`~meta_policy_search.experiment.run_checks`, given plain values); then the meta-algorithm
is built here (one builder for every algorithm, :func:`make_algorithm`, from the fields the
algorithm declares), the env, policy, sampler and sample processor by
the ``build_*`` of :mod:`~meta_policy_search.experiment.components`, and all are handed to the
:class:`~meta_policy_search.meta_trainer.Trainer`. Nothing is imported from TensorFlow until
every check has passed.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from meta_policy_search.experiment.components import (
    build_callbacks,
    build_dice_sample_processor,
    build_env,
    build_policy,
    build_sample_processor,
    build_sampler,
    derive_seeds,
    resolved_horizon,
)
from meta_policy_search.experiment.config_parsing import (
    ParsedCommandLine,
    parse_command_line,
    resolve_config,
    write_params,
)
from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.experiment.configs import (
    MetaRLConfig,
)
from meta_policy_search.experiment.exit_codes import mark_failure
from meta_policy_search.experiment.paper import describe_paper_entry
from meta_policy_search.experiment.provenance import record_launch
from meta_policy_search.experiment.run_checks import (
    RunDir,
    check_checkpoint_tensors,
    check_env,
    check_run_dir,
    check_unchanged,
    existing_run,
    exit_with_config_error,
    make_run_dir,
    remove_training_outputs,
)
from meta_policy_search.experiment.run_console import announce_run_dir
from meta_policy_search.experiment.run_lock import acquire_run_lock
from meta_policy_search.meta_algos import inner_step_settings  # standard library only
from meta_policy_search.meta_algos.outer_step_settings import settings_class
from meta_policy_search.meta_trainer import Trainer
from meta_policy_search.utils import logger
from meta_policy_search.utils.checkpoint_lookup import find_checkpoint
from meta_policy_search.utils.disk_space import is_disk_full
from meta_policy_search.utils.quiet_tf import import_tensorflow


# ---------------------------------------------------------------------------- algorithms
def algorithm_arguments(config: MetaRLConfig) -> dict[str, Any]:
    """The keyword arguments of the meta-algorithm a config describes, derived from the
    declarations: the inner-step settings
    (:data:`~meta_policy_search.meta_algos.inner_step_settings.FIELDS`) and the fields of the
    algorithm's settings class (:func:`~meta_policy_search.meta_algos.outer_step_settings.settings_class`),
    plus the env's horizon for an algorithm that takes one (DiCE).

    Args:
        config: a config subclassing an algorithm's settings class (checked when it was parsed,
            with the rules the algorithm's constructor runs again).

    Returns:
        Argument name -> value.
    """
    settings_cls = settings_class(type(config))
    names = [name for name in inner_step_settings.FIELDS if hasattr(config, name)]
    names += [f.name for f in dataclasses.fields(settings_cls) if f.name not in names]
    arguments = {name: getattr(config, name) for name in names}
    if settings_cls.takes_horizon:
        arguments["max_path_length"] = resolved_horizon(config)
    return arguments


def make_algorithm(algorithm_class: type, config: MetaRLConfig, policy: Any) -> Any:
    """The meta-algorithm ``algorithm_class`` for ``policy`` with the settings of ``config``.

    The one builder of every algorithm: its arguments are :func:`algorithm_arguments`, so a new
    algorithm needs no builder of its own.
    """
    return algorithm_class(policy, **algorithm_arguments(config))


def make_trpo_maml_sample_processor(config: Any) -> Any:
    """DiCE's processor for ``--inner_type dice`` (it needs adjusted rewards), else the default."""
    if config.inner_type == "dice":
        return build_dice_sample_processor(config)
    return build_sample_processor(config)


# ---------------------------------------------------------------------------- running
@dataclasses.dataclass(frozen=True)
class PreparedRun:
    """A checked command line of a run script: what :func:`prepare_run` returns."""

    config: Any
    """The validated, resolved config (``max_path_length`` and ``dump_path`` filled in)."""
    parsed: ParsedCommandLine
    """What :func:`~meta_policy_search.experiment.config_parsing.parse_command_line` read."""
    run_dir: RunDir
    """The run directory's state when it was checked (checkpoint, whether a resume is done)."""

    @property
    def finished(self) -> bool:
        """With ``--resume``: the run has already completed ``n_itr`` iterations."""
        return self.run_dir.finished

    @property
    def last_itr(self) -> int | None:
        """With ``--resume``: the iteration of the checkpoint the run continues after."""
        return self.run_dir.last_itr


def prepare_run(
    config_cls: type, algo_name: str, argv: Sequence[str] | None = None
) -> PreparedRun:
    """Parse and check a run script's command line without writing anything or loading TF.

    In order: the flags, config file and every value
    (:func:`~meta_policy_search.experiment.config_parsing.parse_command_line`), the env
    (:func:`~meta_policy_search.experiment.run_checks.check_env`) and the run directory
    (:func:`~meta_policy_search.experiment.run_checks.check_run_dir`).

    Args:
        config_cls: the script's config dataclass.
        algo_name: the algorithm's name (paper config section, default ``dump_path``).
        argv: arguments without the program name; ``None`` reads ``sys.argv``.

    Raises:
        ConfigError: one message per problem found.
    """
    parsed = parse_command_line(config_cls, argv, algo_name)
    config = resolve_config(parsed.config, algo_name)
    check_env(config.env, config.env_kwargs)
    run_dir = check_run_dir(config.dump_path, parsed.resume, config.n_itr,
                            overwrite=parsed.overwrite,
                            reads_best_checkpoint=config.keep_best is not None)
    return PreparedRun(config, parsed, run_dir)


def run_algorithm(
    algorithm: Any, argv: Sequence[str] | None = None, config_cls: type | None = None
) -> str:
    """The run scripts' ``main``: train a registry entry from command-line arguments.

    Args:
        algorithm: an :class:`~meta_policy_search.experiment.registry.Algorithm`
            (``get_algorithm('trpo_maml')``); its overrides are prepended to ``argv``.
        argv: arguments without the program name; ``None`` reads ``sys.argv``.
        config_cls: the config class instead of the entry's (the quick-start script's
            :class:`~meta_policy_search.experiment.algorithms.ProMPPointMassConfig`).

    Returns:
        The run directory.
    """
    # An entry with overrides (first-order MAML: VPG-MAML with --first_order true) runs with
    # them first on its command line; flags after them may still change them.
    argv = algorithm.flags() + list(sys.argv[1:] if argv is None else argv)
    return run_experiment(config_cls or algorithm.config_cls, algorithm.run_name,
                          algorithm.make_algo, algorithm.make_sample_processor, argv=argv,
                          script_path=algorithm.script_path)


def run_experiment(
    config_cls: type,
    algo_name: str,
    make_algo: Callable[[Any, Any], Any],
    make_sample_processor: Callable[[Any], Any] = build_sample_processor,
    argv: Sequence[str] | None = None,
    make_callbacks: Callable[[Any], Sequence[Any]] | None = None,
    *,
    script_path: str,
) -> str:
    """Parse the command line, build everything, train, and return the run directory.

    Seeds TensorFlow's global generator (``tf.random.set_seed``): this is script-level code.
    Prints the run directory and the commands that resume, plot and meta-test it when training
    starts and when it ends, also on an error
    (:func:`~meta_policy_search.experiment.run_console.announce_run_dir`).

    Args:
        config_cls: the script's config dataclass.
        algo_name: short name used in ``params.json`` and the default ``dump_path``.
        make_algo: ``make_algo(config, policy)`` returns the meta-algorithm.
        make_sample_processor: ``make_sample_processor(config)`` returns the processor.
        argv: command-line arguments (default ``sys.argv[1:]``).
        make_callbacks: ``make_callbacks(config)`` returns the Trainer's ``callbacks`` (e.g.
            :class:`~meta_policy_search.gradient_variance.GradientVarianceCallback`).
        script_path: the run script that resumes the run (the registry entry's
            :attr:`~meta_policy_search.experiment.registry.Algorithm.script_path`), shown in the
            printed commands.

    Returns:
        The run directory (``config.dump_path``). ``--resume`` of a run that already completed
        ``n_itr`` iterations prints so to stderr and returns at once, touching nothing.

    Raises:
        ConfigExit: (a ``SystemExit`` with status 2) after printing the messages of a
            :class:`ConfigError`: a bad flag, value or config file, a ``--resume`` that would
            change the run or finds a damaged file (a checkpoint, ``progress.csv``), a fresh
            start on a directory that holds a run (without ``--overwrite``), or an unusable
            ``dump_path`` or one that another process owns. All of this is checked before
            anything is written; TensorFlow is imported only for the last check of a resume
            (:func:`~meta_policy_search.experiment.run_checks.check_checkpoint_tensors`). The
            run holds ``dump_path``'s lock (:mod:`~meta_policy_search.experiment.run_lock`)
            until it returns.
        Exception: whatever failed once training started (a dead sampler worker, non-finite
            values, a full disk as a
            :class:`~meta_policy_search.utils.disk_space.DiskFullError`), after its traceback
            was appended to ``log.txt``
            (:func:`~meta_policy_search.experiment.exit_codes.mark_failure`).
    """
    run_lock = None
    prepared: PreparedRun | None = None
    try:
        prepared = prepare_run(config_cls, algo_name, argv)
        for note in prepared.run_dir.notes:
            print(f"note: {note}", file=sys.stderr)
        if not prepared.finished:
            if prepared.parsed.resume:
                check_checkpoint_tensors(prepared.run_dir)
            # The lock first: nothing is written in a directory another run owns.
            run_lock = acquire_run_lock(prepared.config.dump_path)
            check_unchanged(prepared.run_dir)
            if prepared.parsed.overwrite:
                removed = remove_training_outputs(prepared.config.dump_path)
                if removed:
                    print(f"--overwrite: deleted {', '.join(removed)} in "
                          f"{prepared.config.dump_path}", file=sys.stderr)
            make_run_dir(prepared.config.dump_path)
    except ConfigError as error:
        if run_lock is not None:
            run_lock.release()
        exit_with_config_error(error)
    except Exception as error:  # a full disk while taking the lock
        if run_lock is not None:
            run_lock.release()
        if prepared is not None:
            mark_failure(error, None, _resume_hint(error, prepared.config.dump_path))
        raise
    if prepared.finished:
        print(
            f"nothing to do: {prepared.config.dump_path} already completed all "
            f"n_itr={prepared.config.n_itr} iterations (its last checkpoint is iteration "
            f"{prepared.last_itr}); pass a larger --n_itr to continue training it",
            file=sys.stderr,
        )
        return prepared.config.dump_path
    assert run_lock is not None
    run_dir = prepared.config.dump_path
    announce_run_dir(run_dir, script_path, "resumed" if prepared.parsed.resume else "started")
    finished = False
    try:
        run_dir = _train(prepared, algo_name, make_algo, make_sample_processor, make_callbacks)
        finished = True
        return run_dir
    except BaseException as error:
        mark_failure(error, None if is_disk_full(error) else os.path.join(run_dir, "log.txt"),
                     _resume_hint(error, run_dir))
        raise
    finally:
        announce_run_dir(run_dir, script_path, "finished" if finished else "stopped before the end")
        run_lock.release()


def _resume_hint(error: BaseException, dump_path: str) -> str:
    """What to do once the cause of a full disk is fixed, from what the run directory holds."""
    if not is_disk_full(error):
        return ""
    if find_checkpoint(os.path.join(dump_path, "checkpoints")).path is not None:
        return "; the run stays resumable: free some space, then continue it with --resume"
    if existing_run(dump_path):
        return ("; it has no checkpoint yet: free some space, then start it again with "
                "--overwrite")
    return "; free some space, then run the same command again"


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
    checkpoint_dir = prepared.run_dir.checkpoint_dir
    tf = import_tensorflow()  # after every check: a bad flag fails in well under a second
    logger.configure(dir=config.dump_path, format_strs=list(config.log_formats),
                     snapshot_mode="none", append=resume, keep_through=prepared.last_itr)
    if not resume or parsed.resume_changes:
        # A resumed run's params.json changes only to record an allowed change (e.g. n_itr).
        write_params(config, config.dump_path, algo_name, parsed.paper_entry)
    for note in prepared.run_dir.notes:
        logger.log(f"note: {note}")
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
