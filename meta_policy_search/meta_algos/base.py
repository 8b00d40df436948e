"""Base class of the meta-algorithms: inner adaptation, per-task parameters, shared objectives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorflow as tf

from meta_policy_search.choices import EXPLORATION_TYPES
from meta_policy_search.meta_algos import objectives
from meta_policy_search.meta_algos.batch import TensorBatch, to_tensor_batch
from meta_policy_search.meta_algos.forward import (
    AdaptationChain,
    log_likelihood,
    old_log_likelihood,
    post_update_surrogate,
)
from meta_policy_search.meta_algos.inner_step import Params, adapt
from meta_policy_search.meta_algos.inner_step_settings import DEFAULTS, InnerStepSettings
from meta_policy_search.policies.distributions import DistInfo
from meta_policy_search.policies.meta_gaussian_mlp_policy import MetaGaussianMLPPolicy
from meta_policy_search.protocols import OuterOptimizer
from meta_policy_search.types import SampleBatch


def check_exploration_type(exploration_type: str) -> str:
    """Return ``exploration_type`` after checking it is one of
    :data:`~meta_policy_search.choices.EXPLORATION_TYPES`.

    Raises:
        ValueError: naming the bad value and the valid ones.
    """
    if exploration_type not in EXPLORATION_TYPES:
        raise ValueError(
            f"exploration_type must be one of {EXPLORATION_TYPES}, got {exploration_type!r}"
        )
    return exploration_type


class MAMLAlgo(tf.Module):
    r"""Gradient-based meta-learning with ``num_inner_grad_steps`` inner policy-gradient steps.

    One meta-iteration (driven by :class:`~meta_policy_search.meta_trainer.Trainer`), for every
    task at once, with :math:`\theta_0 = \theta` tiled over the tasks:

    1. for :math:`k = 0, \dots, K-1`: sample :math:`\mathcal{D}_k` with :math:`\pi_{\theta_k}`,
       then :math:`\theta_{k+1} = \theta_k - \alpha \nabla_\theta L^{\text{in}}(\theta_k;
       \mathcal{D}_k)`;
    2. sample :math:`\mathcal{D}_K` with :math:`\pi_{\theta_K}`;
    3. update :math:`\theta` with an outer step on
       :math:`L^{\text{out}}(\theta_K(\theta); \mathcal{D}_0, \dots, \mathcal{D}_K)`,
       differentiating through every inner step.

    The outer step reads one forward pass, :meth:`forward`: the adaptation chain
    :math:`\theta_0, \dots, \theta_K` and the policy's distributions on every batch
    (:class:`~meta_policy_search.meta_algos.forward.AdaptationChain`). Subclasses state their
    outer loss as :meth:`objective`, a function of that chain and the batches returning
    ``(loss, stats)``; :meth:`meta_loss` evaluates it at the current parameters. They set
    :attr:`optimizer`, built on :meth:`meta_loss`, which the default :meth:`optimize_policy`
    runs and :meth:`checkpoint_state` saves (or override :meth:`optimize_policy`).

    The inner-step settings are checked and stored as
    :attr:`inner_step`, an
    :class:`~meta_policy_search.meta_algos.inner_step_settings.InnerStepSettings`, which holds
    their defaults.

    Args:
        policy: the meta-policy; its ``meta_batch_size`` is the number of tasks ``T`` (the
            algorithm reads it there: :attr:`meta_batch_size`).
        inner_lr: initial inner step size ``alpha`` (one per parameter element).
        num_inner_grad_steps: number of inner steps ``K >= 0``; ``K = 0`` is plain policy
            optimisation on the task mixture (the *pretrained* baseline of the MAML paper).
        trainable_inner_step_size: meta-learn ``alpha`` with the outer optimizer (Meta-SGD).
        inner_type: ``'likelihood_ratio'`` (LVC), ``'log_likelihood'`` (MAML) or ``'dice'``.
        first_order: drop the second-order term (first-order MAML approximation).
        jit_compile: compile the algorithm's graphs with XLA.
        exploration: add E-MAML's pre-update sampling term to the outer loss (see
            :meth:`exploration_loss`).
        exploration_type: its form, one of
            :data:`~meta_policy_search.choices.EXPLORATION_TYPES`.

    Raises:
        ValueError: naming every invalid inner-step setting.
    """

    optimizer: OuterOptimizer | None = None
    """The outer optimizer, built by the subclass on :attr:`meta_variables` and the objective;
    ``None`` until then."""

    inner_step: InnerStepSettings
    """The inner-step settings, fixed at construction; :meth:`forward` and :meth:`adapt_policy`
    read them (also as the read-only attributes ``num_inner_grad_steps``, ``inner_type``, ...)."""

    def __init__(
        self,
        policy: MetaGaussianMLPPolicy,
        inner_lr: float = DEFAULTS.inner_lr,
        num_inner_grad_steps: int = DEFAULTS.num_inner_grad_steps,
        trainable_inner_step_size: bool = DEFAULTS.trainable_inner_step_size,
        inner_type: str = DEFAULTS.inner_type,
        first_order: bool = DEFAULTS.first_order,
        jit_compile: bool = DEFAULTS.jit_compile,
        exploration: bool = False,
        exploration_type: str = "original",
    ) -> None:
        super().__init__(name=type(self).__name__)
        self.inner_step = InnerStepSettings(
            inner_lr=inner_lr,
            num_inner_grad_steps=num_inner_grad_steps,
            inner_type=inner_type,
            trainable_inner_step_size=trainable_inner_step_size,
            first_order=first_order,
            jit_compile=jit_compile,
        )
        self.policy = policy
        self.exploration = bool(exploration)
        self.exploration_type = check_exploration_type(exploration_type)
        params = policy.get_params()
        self.step_sizes = {
            name: tf.Variable(
                tf.fill(params[name].shape, tf.cast(self.inner_step.inner_lr, policy.dtype)),
                trainable=self.trainable_inner_step_size,
                name=f"step_size_{name}",
            )
            for name in policy.trainable_param_names
        }
        self._adapt_graph = tf.function(
            lambda params, batch: self.adapt_step(params, batch)[0],
            reduce_retracing=True, jit_compile=self.jit_compile,
        )
        self._tensor_cache = _TensorBatchCache(self.num_inner_grad_steps + 1)

    # ------------------------------------------------------------- the inner-step settings
    @property
    def meta_batch_size(self) -> int:
        """Number of tasks ``T`` (the policy's)."""
        return int(self.policy.meta_batch_size)

    @property
    def num_inner_grad_steps(self) -> int:
        """``inner_step.num_inner_grad_steps``: the number of inner steps ``K``."""
        return self.inner_step.num_inner_grad_steps

    @property
    def inner_type(self) -> str:
        """``inner_step.inner_type``: the inner objective."""
        return self.inner_step.inner_type

    @property
    def trainable_inner_step_size(self) -> bool:
        """``inner_step.trainable_inner_step_size``: whether the step sizes are meta-learned."""
        return self.inner_step.trainable_inner_step_size

    @property
    def first_order(self) -> bool:
        """``inner_step.first_order``: whether the second-order term is dropped."""
        return self.inner_step.first_order

    @property
    def jit_compile(self) -> bool:
        """``inner_step.jit_compile``: whether the graphs are compiled with XLA."""
        return self.inner_step.jit_compile

    @property
    def needs_adjusted_rewards(self) -> bool:
        """Whether the objectives read the batches' DiCE ``adjusted_rewards``.

        True for ``inner_type='dice'``: the sample processor must then compute them
        (``computes_adjusted_rewards``, i.e. a
        :class:`~meta_policy_search.samplers.DiceSampleProcessor`).
        """
        return self.inner_type == "dice"

    # ---------------------------------------------------------------------------- variables
    @property
    def meta_variables(self) -> list[tf.Variable]:
        """Variables of the outer optimisation: policy parameters (+ step sizes if trainable)."""
        params = self.policy.get_params()
        variables = [params[name] for name in self.policy.trainable_param_names]
        if self.trainable_inner_step_size:
            variables += list(self.step_sizes.values())
        return variables

    def checkpoint_state(self) -> dict[str, tf.Module | tf.Variable]:
        """Trackables for :class:`tf.train.Checkpoint`: policy, step sizes, optimizer state."""
        state: dict[str, tf.Module | tf.Variable] = {
            "policy_params": _VariableDict(self.policy.get_params()),
            "step_sizes": _VariableDict(self.step_sizes),
        }
        if self.optimizer is not None:
            optimizer_state: Any = self.optimizer.checkpoint_state()
            if isinstance(optimizer_state, dict):
                optimizer_state = _VariableDict(optimizer_state)
            state["optimizer"] = optimizer_state
        return state

    # ---------------------------------------------------------------------- the forward pass
    def tiled_params(self, num_tasks: int | tf.Tensor) -> Params:
        """The shared policy parameters repeated on a leading task axis (differentiable)."""
        return self.policy.stacked_params(num_tasks)

    def inner_objective(self, params: Params, batch: TensorBatch) -> tuple[tf.Tensor, DistInfo]:
        """Per-task inner losses ``[T]`` of type ``inner_type`` and the policy's distribution.

        Args:
            params: name -> ``[T, ...]`` per-task parameters.
            batch: the inner step's samples.

        Returns:
            ``(losses [T], dist_info)``, ``dist_info`` the policy's ``{'mean', 'log_std'}``
            ``[T, M, A]`` under ``params`` on ``batch``.
        """
        dist_info = self.policy.forward(params, batch.observations)
        new_log_likelihood = log_likelihood(dist_info, batch)
        if self.inner_type == "likelihood_ratio":
            loss = objectives.likelihood_ratio_objective(
                new_log_likelihood, old_log_likelihood(batch), batch.advantages, batch.mask
            )
        elif self.inner_type == "log_likelihood":
            loss = objectives.log_likelihood_objective(new_log_likelihood, batch.advantages, batch.mask)
        else:
            loss = objectives.dice_objective(
                new_log_likelihood, old_log_likelihood(batch), batch.adjusted_rewards, batch.mask
            )
        return loss, dist_info

    def adapt_step(self, params: Params, batch: TensorBatch) -> tuple[Params, DistInfo]:
        """One inner step per task from ``params`` on ``batch``
        (:func:`~meta_policy_search.meta_algos.inner_step.adapt`).

        Returns:
            ``(adapted params, dist_info)``, ``dist_info`` as in :meth:`inner_objective` at
            ``params``.
        """
        return adapt(
            params, self.step_sizes, lambda p: self.inner_objective(p, batch), self.first_order
        )

    def forward(self, batches: Sequence[TensorBatch]) -> AdaptationChain:
        """The adaptation chain at the current parameters, computed once for every objective.

        Args:
            batches: the ``K + 1`` batches of one meta-iteration, ``batches[k]`` sampled by
                ``theta_k``, the last one post-update.

        Returns:
            ``theta_0 .. theta_K`` (``theta_0`` the shared parameters tiled over the tasks of
            ``batches``) and the policy's distribution under ``theta_k`` on ``batches[k]``.
        """
        params = [self.tiled_params(tf.shape(batches[0].observations)[0])]
        dist_infos = []
        for batch in batches[:-1]:
            adapted, dist_info = self.adapt_step(params[-1], batch)
            params.append(adapted)
            dist_infos.append(dist_info)
        dist_infos.append(self.policy.forward(params[-1], batches[-1].observations))
        return AdaptationChain(params, dist_infos)

    def objective(
        self, chain: AdaptationChain, batches: Sequence[TensorBatch]
    ) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        r"""The outer loss as a function of the forward pass, and its statistics.

        Default: the mean over tasks of the post-update surrogate :math:`-\mathbb{E}[r A]`,
        :math:`r = \pi_{\theta_K}(a \mid s) / \pi_{\text{old}}(a \mid s)`, plus E-MAML's
        pre-update sampling term (:meth:`exploration_loss`) when ``exploration`` is set.

        Args:
            chain: :meth:`forward` on ``batches``.
            batches: the ``K + 1`` batches, the last one post-update.

        Returns:
            ``(scalar loss, {name: tensor})``.
        """
        loss = post_update_surrogate(chain, batches)
        if self.exploration:
            loss += self.exploration_loss(chain, batches)
        return tf.reduce_mean(loss), {}

    def meta_loss(self, batches: Sequence[TensorBatch]) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        """:meth:`objective` of :meth:`forward` at the current parameters: ``(loss, stats)``."""
        return self.objective(self.forward(batches), batches)

    # ------------------------------------------------------------------------- meta-iteration
    def to_tensors(self, samples: SampleBatch) -> TensorBatch:
        """Convert a processed batch to the policy's dtype.

        The last ``num_inner_grad_steps + 1`` conversions are cached by object identity: the
        inner step (``adapt_policy``) and the outer step (:meth:`optimize_policy`) of one
        iteration convert every inner batch once. A batch must not be modified in
        place after it was first converted.

        Raises:
            ValueError: if the batch was not processed, or if :attr:`needs_adjusted_rewards`
                and it has no ``adjusted_rewards`` (process it with ``DiceSampleProcessor``).
        """
        batch = self._tensor_cache.get(samples)
        if batch is None:
            batch = to_tensor_batch(
                samples,
                self.policy.dtype,
                require_adjusted_rewards=self.needs_adjusted_rewards,
            )
            self._tensor_cache.put(samples, batch)
        return batch

    def adapt_policy(self, samples: SampleBatch) -> None:
        """Inner step for every task from the policy's current per-task parameters.

        Sets the adapted parameters on the policy (used by the next sampling phase).
        """
        if samples.meta_batch_size != self.meta_batch_size:
            raise ValueError(
                f"samples hold {samples.meta_batch_size} tasks, expected meta_batch_size="
                f"{self.meta_batch_size}"
            )
        current = {
            name: tf.constant(value) for name, value in self.policy.get_task_param_values().items()
        }
        adapted = self._adapt_graph(current, self.to_tensors(samples))
        self.policy.update_task_parameters(
            {name: adapted[name].numpy() for name in self.policy.trainable_param_names}
        )

    def _check_all_samples(self, all_samples_data: Sequence[SampleBatch]) -> tuple[TensorBatch, ...]:
        expected = self.num_inner_grad_steps + 1
        if len(all_samples_data) != expected:
            raise ValueError(
                f"optimize_policy needs num_inner_grad_steps + 1 = {expected} sample batches "
                f"(pre- and post-update), got {len(all_samples_data)}"
            )
        return tuple(self.to_tensors(samples) for samples in all_samples_data)

    def optimize_policy(self, all_samples_data: Sequence[SampleBatch]) -> dict[str, float]:
        """Outer (meta) step on ``all_samples_data[k]``, the batch of inner step ``k``.

        The default runs ``self.optimizer`` (built by the subclass on :meth:`meta_loss`) once and
        reports its statistics.

        Returns:
            The algorithm's statistics (the Trainer logs them).
        """
        if self.optimizer is None:
            raise NotImplementedError(
                f"{type(self).__name__} sets no optimizer: build one in __init__ or override "
                "optimize_policy"
            )
        batches = self._check_all_samples(all_samples_data)
        return {key: float(value) for key, value in self.optimizer.optimize(batches).items()}

    # ------------------------------------------------------------ objectives shared by subclasses
    def exploration_loss(self, chain: AdaptationChain, batches: Sequence[TensorBatch]) -> tf.Tensor:
        r"""E-MAML's pre-update sampling term per task ``[T]``, of type ``exploration_type``.

        ``'original'`` (the original ProMP code's E-MAML-TRPO/VPG): the task's mean post-update
        reward, standardized over the meta-batch, times the mean log-likelihood of its step-0
        samples under the current shared parameters :math:`\theta_0`
        (:func:`~meta_policy_search.meta_algos.objectives.exploration_objective`); only step 0
        is credited, also with several inner steps.

        ``'emaml_paper'``: the trajectory score-function form with a leave-one-out baseline
        (:func:`~meta_policy_search.meta_algos.objectives.paper_exploration_objective`), summed
        over the sampling distributions of all inner steps :math:`k < K` (:math:`\theta_k` adapted
        from :math:`\theta`).

        Args:
            chain: :meth:`forward` on ``batches``.
            batches: the ``K + 1`` batches, the last one post-update.

        Returns:
            ``[T]`` per-task losses.
        """
        # The term runs the policy on the pre-update batches itself rather than reading
        # chain.inner_dist_infos: the same values, but sharing them reorders the float
        # summation of the gradient, and existing seeds would no longer reproduce.
        post = batches[-1]
        if self.exploration_type == "original":
            dist_info = self.policy.forward(chain.params[0], batches[0].observations)
            return objectives.exploration_objective(
                log_likelihood(dist_info, batches[0]), batches[0].mask, post.rewards, post.mask
            )
        post_returns = objectives.real_episode_mean(
            tf.reduce_sum(post.rewards * post.mask, axis=-1), post.mask
        )
        total = tf.zeros_like(post_returns)
        for params, batch in zip(chain.params[:-1], batches[:-1]):
            dist_info = self.policy.forward(params, batch.observations)
            total += objectives.paper_exploration_objective(
                log_likelihood(dist_info, batch), batch.mask, post_returns
            )
        return total


class _TensorBatchCache:
    """The last ``size`` ``SampleBatch -> TensorBatch`` conversions, keyed by object identity.

    A plain class (not a list attribute of the ``tf.Module``), so checkpoints do not track it;
    it holds the batches themselves, so an ``id`` cannot be reused while cached.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: list[tuple[SampleBatch, TensorBatch]] = []

    def get(self, samples: SampleBatch) -> TensorBatch | None:
        for cached, batch in self.entries:
            if cached is samples:
                return batch
        return None

    def put(self, samples: SampleBatch, batch: TensorBatch) -> None:
        self.entries = (self.entries + [(samples, batch)])[-self.size:]


class _VariableDict(tf.Module):
    """Holds named variables as attributes so tf.train.Checkpoint tracks them by name."""

    def __init__(self, variables: dict) -> None:
        super().__init__()
        for name, variable in variables.items():
            setattr(self, name, variable)

