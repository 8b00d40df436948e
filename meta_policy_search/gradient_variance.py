"""Meta-gradient variance across sampling rounds (the ProMP paper's section 7.2 study).

The paper compares how noisy the meta-gradient estimates of the LVC and DiCE inner objectives
are: at a fixed policy and a fixed set of tasks it re-samples the whole inner-step chain
(pre-update rollouts, inner step, post-update rollouts) several times, computes the
meta-gradient ``g_r`` of each round ``r``, and reports the relative standard deviation

.. math::

    \\mathrm{RStd} = \\frac{1}{P} \\sum_{p=1}^{P} \\frac{\\operatorname{std}_r\\, g_{r,p}}
    {\\left| \\operatorname{mean}_r\\, g_{r,p} \\right|}

over the ``P`` policy parameters (``Meta-GradientRStd`` in the original's logs).

:class:`GradientVarianceCallback` measures it every few iterations of a
:class:`~meta_policy_search.meta_trainer.Trainer` run and appends one row per measurement to
``gradient_variance.csv`` in the run directory. The measurement rounds draw from the sampler's
own phase counter, so a run with measurements samples differently afterwards from one without;
their env steps are not counted in ``n_timesteps``.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from meta_policy_search.utils.validation import check_positive_int

CSV_NAME = "gradient_variance.csv"
"""The measurements' file in the run directory."""

CSV_FIELDS = ("Itr", "n_timesteps", "Meta-GradientRStd", "Meta-GradientMedianRStd",
              "Meta-GradientNorm", "Rounds")
"""Columns of :data:`CSV_NAME`, one row per measurement."""


def relative_std(gradients: np.ndarray) -> tuple[float, float]:
    """Mean and median over parameters of ``std_r / |mean_r|`` of ``[rounds, P]`` gradients.

    Args:
        gradients: ``[R, P]`` flattened meta-gradients of ``R >= 2`` sampling rounds.

    Returns:
        ``(mean, median)`` over the parameters whose mean gradient is not exactly zero (a
        parameter with an identically zero gradient, e.g. an unused one, has no defined ratio).

    Raises:
        ValueError: if ``gradients`` is not 2-D with at least two rounds.
    """
    gradients = np.asarray(gradients, dtype=np.float64)
    if gradients.ndim != 2 or gradients.shape[0] < 2:
        raise ValueError(
            f"gradients must have shape [rounds >= 2, num_params], got {gradients.shape}"
        )
    mean = np.abs(gradients.mean(axis=0))
    std = gradients.std(axis=0)
    defined = mean > 0
    ratios = std[defined] / mean[defined]
    return float(ratios.mean()), float(np.median(ratios))


def sample_meta_gradient(trainer: Any, gradient_fn: Any) -> np.ndarray:
    """One sampling round on the trainer's current tasks; the flattened meta-gradient ``[P]``.

    Runs the inner-step chain as ``Trainer._run_iteration`` does (pre-update sampling,
    processing and inner steps, post-update sampling) without logging, evaluates
    ``gradient_fn(batches)`` and leaves the policy in its pre-update state.
    """
    policy, sampler, processor, algo = (trainer.policy, trainer.sampler,
                                        trainer.sample_processor, trainer.algo)
    policy.switch_to_pre_update()
    all_samples = []
    try:
        for step in range(trainer.num_inner_grad_steps + 1):
            samples = processor.process_samples(sampler.obtain_samples(log=False), log=False)
            all_samples.append(samples)
            if step < trainer.num_inner_grad_steps:
                algo.adapt_policy(samples)
        batches = algo._check_all_samples(all_samples)
        gradients = gradient_fn(batches)
    finally:
        policy.switch_to_pre_update()
    return np.concatenate([np.ravel(g.numpy()) for g in gradients])


def make_gradient_fn(algo: Any) -> Any:
    """A compiled ``batches -> [d meta_loss / d v for v in algo.meta_variables]``."""
    # TensorFlow loads only when a gradient function is built
    import tensorflow as tf

    @tf.function(reduce_retracing=True)
    def gradient_fn(batches: Sequence[Any]) -> list[tf.Tensor]:
        with tf.GradientTape() as tape:
            loss, _ = algo.meta_loss(batches)
        return tape.gradient(loss, algo.meta_variables)

    return gradient_fn


class GradientVarianceCallback:
    """Trainer callback: every ``every`` iterations, ``RStd`` of the meta-gradient over ``rounds``.

    Measures after iterations ``every - 1, 2 * every - 1, ...`` and after the last one, i.e. at
    the parameters the next iteration starts from, on the tasks of the iteration just run.

    Args:
        run_dir: where :data:`CSV_NAME` is appended to.
        every: iterations between measurements (a positive integer).
        rounds: sampling rounds per measurement (at least 2; the paper used 10).
        n_itr: the run's number of iterations (to also measure after the last one).
    """

    def __init__(self, run_dir: str, every: int, rounds: int, n_itr: int) -> None:
        check_positive_int("every", every)
        if not isinstance(rounds, int) or rounds < 2:
            raise ValueError(f"rounds must be an integer >= 2, got {rounds!r}")
        self.path = os.path.join(run_dir, CSV_NAME)
        self.every, self.rounds, self.n_itr = every, rounds, n_itr
        self._gradient_fn: Any = None

    def __call__(self, trainer: Any, itr: int, stats: dict[str, float]) -> None:
        """Measure if ``itr`` is due and append the row to the CSV."""
        if (itr + 1) % self.every != 0 and itr != self.n_itr - 1:
            return
        if self._gradient_fn is None:
            self._gradient_fn = make_gradient_fn(trainer.algo)
        gradients = np.stack([sample_meta_gradient(trainer, self._gradient_fn)
                              for _ in range(self.rounds)])
        mean_rstd, median_rstd = relative_std(gradients)
        row = {"Itr": itr, "n_timesteps": trainer.n_timesteps, "Meta-GradientRStd": mean_rstd,
               "Meta-GradientMedianRStd": median_rstd,
               "Meta-GradientNorm": float(np.linalg.norm(gradients.mean(axis=0))),
               "Rounds": self.rounds}
        append_row(self.path, row)
        print(f"itr {itr + 1}: Meta-GradientRStd {mean_rstd:.2f} (median {median_rstd:.2f}) "
              f"over {self.rounds} rounds", flush=True)


def append_row(path: str, row: dict[str, Any]) -> None:
    """Append ``row`` to the CSV at ``path`` (header first if new), dropping older rows of its ``Itr``.

    A resumed run re-measures an iteration whose row may already exist: the newest row wins.
    """
    rows = [r for r in read_rows(path) if int(r["Itr"]) != int(row["Itr"])]
    rows.append({key: row[key] for key in CSV_FIELDS})
    rows.sort(key=lambda r: int(r["Itr"]))
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def read_rows(path: str) -> list[dict[str, str]]:
    """The rows of a :data:`CSV_NAME` file (empty if it does not exist)."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
