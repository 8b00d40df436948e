"""A numpy Gaussian MLP for sampling: no TensorFlow, so worker processes stay light.

The TensorFlow policy (:class:`~meta_policy_search.policies.MetaGaussianMLPPolicy`) exports its
current per-task parameters as a :class:`NumpyGaussianMLP`; executors evaluate it once per time
step for all environments of their tasks (one batched matmul per layer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

NONLINEARITIES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
    "identity": lambda x: x,
}


def layer_names(num_hidden_layers: int) -> list[str]:
    """Parameter names of an MLP with ``num_hidden_layers`` hidden layers, in order.

    Layer ``i`` has kernel ``W{i}`` and bias ``b{i}``; the last pair is the output layer (the
    action mean), followed by ``log_std``.
    """
    names = []
    for i in range(num_hidden_layers + 1):
        names += [f"W{i}", f"b{i}"]
    return names + ["log_std"]


@dataclass(frozen=True)
class NumpyGaussianMLP:
    """Per-task Gaussian MLP policies as numpy arrays.

    Attributes:
        params: name -> array with a leading task axis ``T``: ``W{i}`` ``[T, in, out]``,
            ``b{i}`` ``[T, out]``, ``log_std`` ``[T, act_dim]``.
        hidden_nonlinearity: one of ``'tanh'``, ``'relu'``, ``'identity'``.
        min_log_std: lower bound applied to ``log_std``.
    """

    params: dict[str, np.ndarray]
    hidden_nonlinearity: str = "tanh"
    min_log_std: float = float(np.log(1e-6))

    @property
    def num_tasks(self) -> int:
        """Number of tasks ``T`` (the leading axis of every parameter)."""
        return int(self.params["log_std"].shape[0])

    @property
    def num_layers(self) -> int:
        """Number of affine layers, output layer included."""
        return sum(1 for name in self.params if name.startswith("W"))

    def task_slice(self, start: int, stop: int) -> NumpyGaussianMLP:
        """The policies of tasks ``start:stop`` (what a worker owning those tasks needs)."""
        sliced = {name: value[start:stop] for name, value in self.params.items()}
        return NumpyGaussianMLP(sliced, self.hidden_nonlinearity, self.min_log_std)

    def distribution(self, observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and log-std of the action distribution.

        Args:
            observations: ``[T, N, obs_dim]``: ``N`` observations for each of the ``T`` tasks.

        Returns:
            ``(mean, log_std)``, each ``[T, N, act_dim]``.
        """
        if observations.ndim != 3 or observations.shape[0] != self.num_tasks:
            raise ValueError(
                f"observations must be [T={self.num_tasks}, N, obs_dim], got {observations.shape}"
            )
        activation = NONLINEARITIES[self.hidden_nonlinearity]
        hidden = observations.astype(self.params["W0"].dtype, copy=False)
        last = self.num_layers - 1
        for i in range(self.num_layers):
            hidden = np.matmul(hidden, self.params[f"W{i}"]) + self.params[f"b{i}"][:, None, :]
            if i < last:
                hidden = activation(hidden)
        log_std = np.maximum(self.params["log_std"], self.min_log_std)[:, None, :]
        return hidden, np.broadcast_to(log_std, hidden.shape)

    def sample(
        self, observations: np.ndarray, noise: np.ndarray
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Actions ``mean + exp(log_std) * noise`` for ``[T, N, obs_dim]`` observations.

        Args:
            observations: ``[T, N, obs_dim]``.
            noise: standard normal draws ``[T, N, act_dim]`` (the caller owns the RNG so that
                sampling is reproducible however tasks are split across workers).

        Returns:
            ``(actions, {'mean': ..., 'log_std': ...})``, all ``[T, N, act_dim]``.
        """
        mean, log_std = self.distribution(observations)
        actions = mean + np.exp(log_std) * noise
        return actions, {"mean": mean, "log_std": log_std}
