"""The meta-training loop: sampler -> sample processor -> algorithm -> logger -> checkpoint."""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from meta_policy_search.protocols import MetaAlgorithm, MetaPolicy, SampleProcessor, Sampler
from meta_policy_search.utils import logger
from meta_policy_search.utils.checkpoint import restore_checkpoint, save_checkpoint
from meta_policy_search.utils.validation import check_non_negative_int, check_positive_int


class NonFiniteError(FloatingPointError):
    """Training produced NaN or inf values and cannot continue (see ``Trainer``)."""


Callback = Callable[["Trainer", int, dict[str, float]], Any]
"""``callback(trainer, itr, stats)`` runs after each iteration; returning ``False`` stops training."""


class Trainer:
    """Runs gradient-based meta-RL: one meta-iteration per loop, as in the original ProMP code.

    Pseudocode of one iteration (the documentation's *Architecture* page draws it)::

        sampler.update_tasks()                    # meta_batch_size new tasks
        policy.switch_to_pre_update()             # sample with the shared (pre-update) params
        for step in 0..num_inner_grad_steps:
            paths = sampler.obtain_samples()      # [T, R, H] padded rollouts
            samples = sample_processor.process_samples(paths)
            if step < num_inner_grad_steps:
                algo.adapt_policy(samples)              # per-task adapted params for the next step
        algo.optimize_policy(all_samples)         # outer step through the inner steps
        log Step_k-* statistics, timings, n_timesteps; save a checkpoint

    The Trainer only sequences the components; extend it with ``callbacks``.

    Step counts: ``n_timesteps`` in ``progress.csv`` is the paper's x-axis, the *nominal*
    ``meta_batch_size x rollouts_per_meta_task x max_path_length`` steps per sampling phase
    (``sampler.nominal_timesteps_per_phase``), i.e. ``(K + 1)`` times that per iteration, as the
    original counted, in both sampling modes. ``n_timesteps_real`` is the cumulative number of
    real env steps in the returned batches (fewer than nominal when episodes end early in the
    ``'rollouts'`` mode; at least nominal in the ``'budget'`` mode).

    Args:
        algo: a :class:`~meta_policy_search.protocols.MetaAlgorithm` (a ``MAMLAlgo``); its
            ``num_inner_grad_steps`` ``K`` says how many batches each iteration samples
            (``K + 1``), and the Trainer logs the statistics its ``optimize_policy`` returns.
        env: the (normalized) :class:`~meta_policy_search.envs.base.MetaEnv`; its
            ``log_diagnostics(paths, prefix)`` is logged.
        sampler: a :class:`~meta_policy_search.protocols.Sampler` (a ``MetaSampler``); its
            ``get_state``/``set_state``, if any, are checkpointed.
        sample_processor: a :class:`~meta_policy_search.protocols.SampleProcessor` (a
            ``MetaSampleProcessor`` or ``DiceSampleProcessor``); its baseline's
            ``get_param_values``/``set_param_values``, if any, are checkpointed.
        policy: the :class:`~meta_policy_search.protocols.MetaPolicy` (``get_params`` is
            checkpointed).
        n_itr: total number of meta-iterations (the loop runs ``start_itr .. n_itr - 1``).
        start_itr: first iteration, > 0 when resuming (see :meth:`restore`).
        checkpoint_dir: where to save a checkpoint after every iteration; ``None`` disables
            checkpointing.
        callbacks: called as ``callback(trainer, itr, stats)`` after each iteration, where
            ``stats`` holds the algorithm's statistics and ``Step_k-AverageReturn``; a callback
            returning ``False`` stops training.
        max_nonfinite_outer_steps: an outer step whose statistics (losses, KL) or resulting
            meta-variables hold NaN or inf is rejected: every variable of the algorithm's
            ``checkpoint_state()`` and the policy (parameters, step sizes, optimizer state) is
            restored to its value before the step, ``RejectedOuterSteps`` counts it and the
            iteration's checkpoint is still written (with the restored, finite values). After
            this many rejected steps in a row training stops with a :class:`NonFiniteError`.

    Why in the Trainer: a single NaN (e.g. an overflow in one batch) would otherwise turn every
    parameter into NaN for the rest of the run and into every later checkpoint (issue 9).

    Raises:
        ValueError: on a negative ``n_itr``, ``start_itr`` or ``algo.num_inner_grad_steps``, a
            non-positive ``max_nonfinite_outer_steps``, or if
            the algorithm needs DiCE's adjusted rewards (``algo.needs_adjusted_rewards``) and
            the sample processor does not compute them (``computes_adjusted_rewards``).
    """

    def __init__(
        self,
        algo: MetaAlgorithm,
        env: Any,
        sampler: Sampler,
        sample_processor: SampleProcessor,
        policy: MetaPolicy,
        n_itr: int,
        start_itr: int = 0,
        checkpoint_dir: str | None = None,
        callbacks: Sequence[Callback] = (),
        max_nonfinite_outer_steps: int = 3,
    ) -> None:
        for name, value in (("n_itr", n_itr), ("start_itr", start_itr)):
            check_non_negative_int(name, value)
        # The algorithm takes its inner steps, so the Trainer samples its K + 1 batches.
        num_inner_grad_steps = check_non_negative_int(
            "algo.num_inner_grad_steps", getattr(algo, "num_inner_grad_steps", None))
        check_positive_int("max_nonfinite_outer_steps", max_nonfinite_outer_steps)
        if getattr(algo, "needs_adjusted_rewards", False) and not getattr(
            sample_processor, "computes_adjusted_rewards", False
        ):
            raise ValueError(
                f"{type(algo).__name__} (inner_type={getattr(algo, 'inner_type', None)!r}) uses "
                f"the DiCE objective, which needs adjusted rewards, but "
                f"{type(sample_processor).__name__} computes none: use a DiceSampleProcessor "
                "(build_dice_sample_processor in the run scripts)"
            )
        self.algo = algo
        self.env = env
        self.sampler = sampler
        self.sample_processor = sample_processor
        self.policy = policy
        self.n_itr = int(n_itr)
        self.start_itr = int(start_itr)
        self.num_inner_grad_steps = num_inner_grad_steps
        """The algorithm's number of inner steps ``K``; each iteration samples ``K + 1``
        batches."""
        self.checkpoint_dir = checkpoint_dir
        self.callbacks = tuple(callbacks)
        self.max_nonfinite_outer_steps = int(max_nonfinite_outer_steps)
        self.num_rejected_outer_steps = 0
        """Outer steps rejected for non-finite values so far (``RejectedOuterSteps``)."""
        self._rejected_in_a_row = 0
        self.n_timesteps = 0
        """Cumulative nominal env steps (the paper's count): ``T x R x H`` per sampling phase."""
        self.n_timesteps_real = 0
        """Cumulative number of real env steps sampled (pre- and post-update)."""
        self.elapsed_seconds = 0.0
        """Wall-clock seconds of training so far, summed over resumes (``Time`` in progress.csv)."""

    # ------------------------------------------------------------------ training loop
    def train(self) -> None:
        """Run iterations ``start_itr .. n_itr - 1`` (nothing if ``start_itr >= n_itr``)."""
        start_time = time.time()
        elapsed_before = self.elapsed_seconds
        iteration_seconds: list[float] = []
        for itr in range(self.start_itr, self.n_itr):
            itr_start_time = time.time()
            stats = self._run_iteration(itr)
            self.elapsed_seconds = elapsed_before + time.time() - start_time
            logger.logkv("Itr", itr)
            logger.logkv("n_timesteps", self.n_timesteps)
            logger.logkv("n_timesteps_real", self.n_timesteps_real)
            logger.logkv("Time", self.elapsed_seconds)
            logger.logkv("ItrTime", time.time() - itr_start_time)
            logger.dumpkvs()
            if self.checkpoint_dir is not None:
                self.save(itr)
            iteration_seconds.append(time.time() - itr_start_time)
            self._print_progress(itr, stats, iteration_seconds)
            if any(callback(self, itr, stats) is False for callback in self.callbacks):
                logger.log(f"Training stopped by a callback after iteration {itr}")
                break

    def _run_iteration(self, itr: int) -> dict[str, float]:
        """One meta-iteration; logs its statistics (not yet dumped) and returns a summary."""
        stats: dict[str, float] = {}
        self.sampler.update_tasks()
        self.policy.switch_to_pre_update()
        all_samples_data = []
        sampling_time = processing_time = inner_step_time = 0.0
        inner_start = time.time()
        for step in range(self.num_inner_grad_steps + 1):
            prefix = f"Step_{step}-"
            logger.logkv(prefix + "AveragePolicyStd", _average_policy_std(self.policy))

            t0 = time.time()
            paths = self.sampler.obtain_samples(log=True, log_prefix=prefix)
            sampling_time += time.time() - t0
            self.n_timesteps += int(self.sampler.nominal_timesteps_per_phase)
            self.n_timesteps_real += int(paths.num_env_steps)

            t0 = time.time()
            samples = self.sample_processor.process_samples(paths, log=True, log_prefix=prefix)
            for key, value in self.env.log_diagnostics(paths, prefix=prefix).items():
                logger.logkv(key, value)
            all_samples_data.append(samples)
            processing_time += time.time() - t0
            stats[prefix + "AverageReturn"] = _average_return(paths)

            if step < self.num_inner_grad_steps:
                t0 = time.time()
                self.algo.adapt_policy(samples)
                inner_step_time += time.time() - t0
        total_inner_time = time.time() - inner_start

        t0 = time.time()
        algo_stats = self._guarded_outer_step(all_samples_data, itr)
        outer_time = time.time() - t0
        stats.update(algo_stats)

        logger.logkv("Time-Sampling", sampling_time)
        logger.logkv("Time-SampleProc", processing_time)
        logger.logkv("Time-InnerStep", inner_step_time)
        logger.logkv("Time-TotalInner", total_inner_time)
        logger.logkv("Time-OuterStep", outer_time)
        # The original's name for the outer step and its logging, kept for its plotting scripts.
        logger.logkv("Time-MAMLSteps", time.time() - t0)
        return stats

    def _guarded_outer_step(self, all_samples_data: list[Any], itr: int) -> dict[str, Any]:
        """``algo.optimize_policy``, undone if it yields a non-finite statistic or variable.

        Logs the step's finite statistics (the algorithm only returns them).
        """
        before = _variables(self._trackables())
        snapshot = {name: variable.numpy() for name, variable in before.items()}
        algo_stats = self.algo.optimize_policy(all_samples_data) or {}
        bad_stats = [key for key, value in algo_stats.items() if not _all_finite(value)]
        for key, value in algo_stats.items():
            if key not in bad_stats:
                logger.logkv(key, value)
        after = _variables(self._trackables())
        bad_variables = [name for name, variable in after.items() if not _all_finite(variable)]
        if not bad_stats and not bad_variables:
            self._rejected_in_a_row = 0
            logger.logkv("RejectedOuterSteps", self.num_rejected_outer_steps)
            return dict(algo_stats)
        for name, variable in before.items():
            variable.assign(snapshot[name])
        known = {id(variable) for variable in before.values()}
        for variable in after.values():  # created by the step (e.g. optimizer slots): zero
            if id(variable) not in known:
                variable.assign(np.zeros(variable.shape, variable.dtype.as_numpy_dtype))
        self.num_rejected_outer_steps += 1
        self._rejected_in_a_row += 1
        what = ", ".join(bad_stats + bad_variables[:5])
        message = (
            f"iteration {itr}: outer step rejected, non-finite values in {what}; the parameters "
            f"and optimizer state were restored ({self._rejected_in_a_row} in a row)"
        )
        logger.log(message)
        logger.logkv("RejectedOuterSteps", self.num_rejected_outer_steps)
        if self._rejected_in_a_row >= self.max_nonfinite_outer_steps:
            raise NonFiniteError(
                f"{message}; stopping after {self.max_nonfinite_outer_steps} rejected outer steps "
                "in a row. The checkpoint of the last good iteration is intact: after fixing the "
                "env's rewards or observations, --resume continues from it; a smaller "
                "--learning_rate needs a new run (it cannot change on --resume)"
            )
        return {key: value for key, value in algo_stats.items() if key not in bad_stats}

    def _print_progress(
        self, itr: int, stats: dict[str, float], iteration_seconds: Sequence[float]
    ) -> None:
        """One line: ``itr`` numbered as ``Itr`` in progress.csv (0 .. n_itr - 1), returns,
        steps, seconds per iteration and the ETA of :func:`seconds_per_iteration`."""
        returns = " ".join(
            f"R{k}={stats[f'Step_{k}-AverageReturn']:.1f}"
            for k in range(self.num_inner_grad_steps + 1)
        )
        itrs_left = self.n_itr - 1 - itr
        secs_per_itr = seconds_per_iteration(iteration_seconds)
        if secs_per_itr is None and itrs_left > 0:
            timing = f"{iteration_seconds[-1]:.2f} s/itr | ETA ? (this itr built the graphs)"
        else:
            eta = datetime.timedelta(seconds=round((secs_per_itr or 0.0) * itrs_left))
            shown = iteration_seconds[-1] if secs_per_itr is None else secs_per_itr
            timing = f"{shown:.2f} s/itr | ETA {eta}"
        print(f"itr {itr}/{self.n_itr - 1} | {returns} | steps {self.n_timesteps} | {timing}",
              flush=True)

    def _nominal_timesteps_per_itr(self) -> int:
        """The paper's steps of one iteration: ``(K + 1) x T x R x H``."""
        return (self.num_inner_grad_steps + 1) * int(self.sampler.nominal_timesteps_per_phase)

    # ------------------------------------------------------------------ checkpoints
    def _trackables(self) -> dict[str, Any]:
        return checkpoint_trackables(self.algo, self.policy)

    def _side_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {
            "n_timesteps": self.n_timesteps,
            "n_timesteps_real": self.n_timesteps_real,
            "num_rejected_outer_steps": self.num_rejected_outer_steps,
            # A resume continues the count, so a run that keeps diverging stops as it would have.
            "rejected_outer_steps_in_a_row": self._rejected_in_a_row,
            "elapsed_seconds": self.elapsed_seconds,
        }
        if hasattr(self.sampler, "get_state"):
            # The sampler seeds the env's task RNG and draws the tasks: its state holds the RNG.
            state["sampler"] = self.sampler.get_state()
        elif (task_rng := self._env_task_rng()) is not None:
            state["env_task_rng"] = task_rng.bit_generator.state
        baseline = getattr(self.sample_processor, "baseline", None)
        if baseline is not None and hasattr(baseline, "get_param_values"):
            state["baseline"] = baseline.get_param_values()
        return state

    def _env_task_rng(self) -> np.random.Generator | None:
        """The env's task RNG, through the MetaEnv's public ``task_rng`` (of the innermost env:
        a gymnasium wrapper does not forward attributes); ``None`` for an env without one."""
        task_rng = getattr(getattr(self.env, "unwrapped", self.env), "task_rng", None)
        return task_rng if isinstance(task_rng, np.random.Generator) else None

    def save(
        self, itr: int, checkpoint_dir: str | None = None, extra_state: dict[str, Any] | None = None
    ) -> str:
        """Atomically checkpoint everything needed to continue after iteration ``itr``.

        Saved: the algorithm's ``checkpoint_state()`` (policy, step sizes, optimizer), the
        policy parameters, the sampler state (which holds the env's task RNG; without a
        sampler ``get_state`` the Trainer saves that RNG itself), the baseline parameters,
        ``n_timesteps``, ``n_timesteps_real``, the rejected outer steps (in total and in a row)
        and the training time so far.

        Args:
            itr: the iteration just completed.
            checkpoint_dir: defaults to the Trainer's ``checkpoint_dir``.
            extra_state: picklable entries added to the checkpoint's side state (e.g. the
                metric of :class:`~meta_policy_search.best_checkpoint.BestCheckpointCallback`).

        Returns:
            The checkpoint directory written.

        Raises:
            ValueError: if neither ``checkpoint_dir`` nor the Trainer's is set.
        """
        checkpoint_dir = checkpoint_dir or self.checkpoint_dir
        if checkpoint_dir is None:
            raise ValueError("Trainer.save needs a checkpoint_dir, got None")
        state = {**self._side_state(), **(extra_state or {})}
        return save_checkpoint(checkpoint_dir, itr, self._trackables(), state)

    def restore(self, checkpoint_dir: str | None = None) -> int:
        """Load the newest checkpoint and continue after its iteration.

        The components must already be built with the run's configuration; their state is
        overwritten. Sets ``start_itr`` to the saved iteration + 1. A checkpoint written
        before ``n_timesteps_real`` existed stored the real count as ``n_timesteps``: it becomes
        ``n_timesteps_real``, and ``n_timesteps`` is recomputed as the nominal count of the
        ``itr + 1`` iterations done.

        Args:
            checkpoint_dir: defaults to the Trainer's ``checkpoint_dir``.

        Returns:
            The new ``start_itr``.

        Raises:
            ValueError: if neither ``checkpoint_dir`` nor the Trainer's is set.
            FileNotFoundError: if there is no complete checkpoint.
        """
        checkpoint_dir = checkpoint_dir or self.checkpoint_dir
        if checkpoint_dir is None:
            raise ValueError("Trainer.restore needs a checkpoint_dir, got None")
        state = restore_checkpoint(checkpoint_dir, self._trackables())
        if "n_timesteps_real" in state:
            self.n_timesteps = int(state["n_timesteps"])
            self.n_timesteps_real = int(state["n_timesteps_real"])
        else:  # an older checkpoint: its n_timesteps counted real steps
            self.n_timesteps_real = int(state.get("n_timesteps", 0))
            self.n_timesteps = self._nominal_timesteps_per_itr() * (int(state["itr"]) + 1)
        self.num_rejected_outer_steps = int(state.get("num_rejected_outer_steps", 0))
        self._rejected_in_a_row = int(state.get("rejected_outer_steps_in_a_row", 0))
        # 0 for checkpoints written before it was stored: Time then restarts, as it used to.
        self.elapsed_seconds = float(state.get("elapsed_seconds", 0.0))
        # Optional members (protocols module docstring): present since save() stored them.
        if "sampler" in state:
            # Restores the env's task RNG too. Older checkpoints also hold a copy of it as
            # env_task_rng, the same state: not read.
            cast(Any, self.sampler).set_state(state["sampler"])
        elif "env_task_rng" in state and (task_rng := self._env_task_rng()) is not None:
            task_rng.bit_generator.state = state["env_task_rng"]
        if "baseline" in state:
            cast(Any, self.sample_processor).baseline.set_param_values(state["baseline"])
        self.start_itr = int(state["itr"]) + 1
        return self.start_itr


def seconds_per_iteration(iteration_seconds: Sequence[float]) -> float | None:
    """Seconds per iteration for the ETA: the mean over this process's iterations but its first.

    The first iteration of a process (also after ``--resume``) traces and compiles the
    ``tf.function`` graphs and may take several times as long as the next ones, so it is left out.

    Args:
        iteration_seconds: wall-clock seconds of each iteration run so far by this process.

    Returns:
        The mean of ``iteration_seconds[1:]``, or ``None`` with fewer than two iterations.
    """
    if len(iteration_seconds) < 2:
        return None
    return float(np.mean(iteration_seconds[1:]))


def checkpoint_trackables(algo: MetaAlgorithm, policy: MetaPolicy) -> dict[str, Any]:
    """The TensorFlow state a Trainer checkpoint holds, by name (save and restore must agree).

    Args:
        algo: the meta-algorithm; its ``checkpoint_state()`` (policy, step sizes, optimizer).
        policy: the meta-policy; its ``get_params()`` are added as ``policy_params`` unless the
            algorithm's state already has that name.

    Returns:
        Name -> trackable, for :func:`~meta_policy_search.utils.checkpoint.save_checkpoint` and
        :func:`~meta_policy_search.utils.checkpoint.restore_checkpoint`.
    """
    trackables = dict(algo.checkpoint_state())
    if hasattr(policy, "get_params") and "policy_params" not in trackables:
        trackables["policy_params"] = dict(policy.get_params())
    return trackables


def _variables(trackables: Any) -> dict[str, Any]:
    """Every ``tf.Variable`` in ``trackables`` (variables, ``tf.Module`` s, nested dicts), once,
    by its path (``policy_params.W0``; a module's variables by their own names)."""
    found: dict[str, Any] = {}
    seen: set[int] = set()
    pending: list[tuple[str, Any]] = [("", trackables)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, dict):
            pending.extend((f"{path}{key}.", value) for key, value in item.items())
        elif hasattr(item, "assign") and hasattr(item, "numpy"):
            if id(item) not in seen:
                seen.add(id(item))
                found[path.rstrip(".") or item.name] = item
        elif hasattr(item, "variables"):
            pending.extend((f"{path}{v.name.split(':')[0]}.", v) for v in item.variables)
    return found


def _all_finite(value: Any) -> bool:
    """True unless ``value`` (a number, array, tensor or variable) holds a NaN or inf."""
    if isinstance(value, str):
        return True
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    return not np.issubdtype(array.dtype, np.inexact) or bool(np.all(np.isfinite(array)))


def _average_policy_std(policy: Any) -> float:
    """Mean action standard deviation of the policies that sample next, over tasks and dims."""
    sampling_policy = policy.get_sampling_policy()
    log_std = np.maximum(sampling_policy.params["log_std"], sampling_policy.min_log_std)
    return float(np.mean(np.exp(log_std)))


def _average_return(paths: Any) -> float:
    """Mean undiscounted return over the real episodes of a ``PathBatch``."""
    return float(np.mean(paths.real_episode_returns()))
