"""What the :class:`~meta_policy_search.meta_trainer.Trainer` needs of its components, and what
a meta-algorithm needs of its outer optimizer.

Structural types (:class:`typing.Protocol`): a component satisfies one by having the methods,
whatever its class, so your own sampler, sample processor or meta-algorithm plugs in without
subclassing (``tests/test_trainer.py`` drives the Trainer with small fakes). The library's
implementations are :class:`~meta_policy_search.samplers.MetaSampler`,
:class:`~meta_policy_search.samplers.MetaSampleProcessor` (and
:class:`~meta_policy_search.samplers.DiceSampleProcessor`) and the subclasses of
:class:`~meta_policy_search.meta_algos.base.MAMLAlgo`; the env's contract is
:class:`~meta_policy_search.envs.base.MetaEnv`.

Optional members the Trainer uses when present: a sampler's ``get_state()``/``set_state(state)``
(which save and restore the env's task RNG with the rest of the sampling state; without them the
Trainer saves that RNG itself, through the env's ``task_rng``) and a processor's ``baseline`` with
``get_param_values()``/``set_param_values(values)`` (saved in checkpoints); an algorithm's
``needs_adjusted_rewards`` and a processor's ``computes_adjusted_rewards`` (DiCE, checked when
the Trainer is built).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from meta_policy_search.types import PathBatch, SampleBatch


class Sampler(Protocol):
    """Samples one phase of rollouts for the current meta-batch of tasks."""

    @property
    def nominal_timesteps_per_phase(self) -> int:
        """``meta_batch_size x rollouts_per_meta_task x max_path_length``: the paper's count."""
        ...

    def update_tasks(self) -> Any:
        """Draw a new meta-batch of tasks (``meta_batch_size`` of them)."""
        ...

    def obtain_samples(self, log: bool = False, log_prefix: str = "") -> PathBatch:
        """Roll out the policy's current per-task parameters; ``log``: record statistics."""
        ...


class SampleProcessor(Protocol):
    """Turns one phase's rollouts into a training batch (returns, baseline, advantages)."""

    def process_samples(
        self, paths: PathBatch, log: bool = False, log_prefix: str = ""
    ) -> SampleBatch:
        """Process one inner step's rollouts of all tasks."""
        ...


class MetaAlgorithm(Protocol):
    """Adapts the policy per task (inner steps) and updates it (outer step)."""

    @property
    def num_inner_grad_steps(self) -> int:
        """Inner steps ``K`` per meta-iteration: the Trainer samples ``K + 1`` batches."""
        ...

    def adapt_policy(self, samples: SampleBatch) -> None:
        """One inner step per task on ``samples``; the policy then samples with the result."""
        ...

    def optimize_policy(self, all_samples_data: Sequence[SampleBatch]) -> dict[str, float]:
        """The outer step on the batches of every inner step; returns its statistics."""
        ...

    def checkpoint_state(self) -> dict[str, Any]:
        """Trackables for :class:`tf.train.Checkpoint` (policy, step sizes, optimizer state)."""
        ...


class MetaPolicy(Protocol):
    """The meta-policy as the Trainer sees it."""

    def switch_to_pre_update(self) -> None:
        """Sample with the shared (pre-update) parameters again."""
        ...

    def get_params(self) -> Any:
        """Ordered dict name -> ``tf.Variable`` of the shared parameters."""
        ...

    def get_sampling_policy(self) -> Any:
        """The numpy sampling policy (its ``params['log_std']`` is logged)."""
        ...


class OuterOptimizer(Protocol):
    """The outer optimizer of a :class:`~meta_policy_search.meta_algos.base.MAMLAlgo`
    (:class:`~meta_policy_search.optimizers.MinibatchAdamOptimizer`,
    :class:`~meta_policy_search.optimizers.ConjugateGradientOptimizer`)."""

    def optimize(self, inputs: Any) -> Mapping[str, Any]:
        """One outer step on the algorithm's batches; returns its statistics."""
        ...

    def checkpoint_state(self) -> Any:
        """Its state for :class:`tf.train.Checkpoint` (a trackable or a dict of them)."""
        ...
