"""Gaussian MLP policy with one adapted parameter set per task for post-update sampling."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from meta_policy_search.policies.gaussian_mlp_policy import GaussianMLPPolicy
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP
from meta_policy_search.utils.validation import check_positive_int


class MetaGaussianMLPPolicy(GaussianMLPPolicy):
    """A :class:`GaussianMLPPolicy` that samples with per-task (adapted) parameters.

    Before adaptation (:meth:`switch_to_pre_update`) every task uses the shared parameters.
    After an inner step the algorithm calls :meth:`update_task_parameters` with the adapted
    parameters of all tasks, and sampling uses task ``t``'s parameters for task ``t``.

    Arguments not listed below are those of :class:`GaussianMLPPolicy`.

    Args:
        meta_batch_size: number of tasks ``T``.
    """

    def __init__(
        self,
        meta_batch_size: int,
        obs_dim: int,
        action_dim: int,
        hidden_sizes: Sequence[int] = (64, 64),
        learn_std: bool = True,
        init_std: float = 1.0,
        min_std: float = 1e-6,
        hidden_nonlinearity: str = "tanh",
        seed: int | None = None,
        dtype: tf.DType = tf.float32,
    ) -> None:
        self.meta_batch_size = check_positive_int("meta_batch_size", meta_batch_size)
        super().__init__(
            obs_dim=obs_dim, action_dim=action_dim, hidden_sizes=hidden_sizes,
            learn_std=learn_std, init_std=init_std, min_std=min_std,
            hidden_nonlinearity=hidden_nonlinearity, seed=seed, dtype=dtype,
        )
        self._task_params: dict[str, np.ndarray] | None = None

    @property
    def is_pre_update(self) -> bool:
        """True while all tasks sample with the shared (pre-update) parameters."""
        return self._task_params is None

    def switch_to_pre_update(self) -> None:
        """Forget adapted parameters: every task samples with the shared parameters again."""
        self._task_params = None

    def stacked_params(self, num_tasks: int | tf.Tensor | None = None) -> dict[str, tf.Tensor]:
        """The shared parameters tiled on a leading task axis (differentiable).

        Args:
            num_tasks: size ``T`` of the task axis (a tensor inside graphs); default
                ``meta_batch_size``.

        Returns:
            name -> ``[T, *param_shape]`` tensor.
        """
        if num_tasks is None:
            num_tasks = self.meta_batch_size
        return {name: tf.repeat(var[None], num_tasks, axis=0) for name, var in self._params.items()}

    def update_task_parameters(self, updated_params: Mapping[str, Any]) -> None:
        """Set the adapted parameters used for sampling.

        Args:
            updated_params: name -> ``[T, ...]`` array (numpy or tensor) for some or all
                parameters; parameters left out (e.g. a fixed ``log_std``) stay shared.

        Raises:
            ValueError: on an unknown name or a shape other than ``[T, *param_shape]``.
        """
        task_params = self._tiled_values()
        for name, value in updated_params.items():
            if name not in self._params:
                raise ValueError(f"unknown parameter {name!r}; expected one of {list(self._params)}")
            value = np.asarray(value, dtype=self.dtype.as_numpy_dtype)
            expected = (self.meta_batch_size, *self._params[name].shape)
            if value.shape != expected:
                raise ValueError(f"adapted {name!r} must have shape {expected}, got {value.shape}")
            task_params[name] = value
        self._task_params = task_params

    def _tiled_values(self) -> dict[str, np.ndarray]:
        return {
            name: np.repeat(value[None], self.meta_batch_size, axis=0)
            for name, value in self.get_param_values().items()
        }

    def get_task_param_values(self) -> dict[str, np.ndarray]:
        """Current per-task parameters ``[T, ...]`` (the shared ones tiled before adaptation)."""
        return self._tiled_values() if self._task_params is None else dict(self._task_params)

    def get_sampling_policy(self) -> NumpyGaussianMLP:
        """The current per-task policies as a TF-free :class:`NumpyGaussianMLP` for executors."""
        return self.numpy_policy(self.get_task_param_values())

    def get_actions(self, observations: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Sample actions for all tasks at once.

        Args:
            observations: ``[T, N, obs_dim]``, ``N`` observations per task.

        Returns:
            ``(actions [T, N, A], {'mean': [T, N, A], 'log_std': [T, N, A]})``.
        """
        observations = np.asarray(observations)
        expected = (self.meta_batch_size, self.obs_dim)
        if observations.ndim != 3 or (observations.shape[0], observations.shape[2]) != expected:
            raise ValueError(
                f"observations must be [T={self.meta_batch_size}, N, obs_dim={self.obs_dim}], "
                f"got {observations.shape}"
            )
        noise = self._np_rng.standard_normal((*observations.shape[:2], self.action_dim))
        return self.get_sampling_policy().sample(observations, noise.astype(observations.dtype))

    def _config(self) -> dict[str, Any]:
        return dict(meta_batch_size=self.meta_batch_size, **super()._config())
