"""A Gaussian MLP policy whose parameters are an ordered dict of ``tf.Variable``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from meta_policy_search.policies.networks import TF_NONLINEARITIES, gaussian_mlp_forward
from meta_policy_search.policies.numpy_policy import NumpyGaussianMLP, layer_names
from meta_policy_search.utils.validation import check_positive_int


class GaussianMLPPolicy(tf.Module):
    """Gaussian policy ``a ~ N(mlp(obs), diag(exp(log_std))^2)`` with a state-independent std.

    Parameters live in :meth:`get_params` (``W0, b0, ..., W{L}, b{L}, log_std``); the network is
    the pure function :meth:`forward`, so adapted parameter *tensors* can flow through it.
    Kernels start Glorot-uniform, biases at zero, ``log_std`` at ``log(init_std)``.

    Args:
        obs_dim: observation dimension.
        action_dim: action dimension.
        hidden_sizes: units of each hidden layer.
        learn_std: whether ``log_std`` is trained (it is a non-trainable variable otherwise).
        init_std: initial standard deviation (> 0).
        min_std: lower bound of the standard deviation (> 0).
        hidden_nonlinearity: ``'tanh'``, ``'relu'`` or ``'identity'``.
        seed: seed of the parameter initialisation and of :meth:`get_actions`' noise.
        dtype: ``tf.float32`` (default) or ``tf.float64`` (used by gradient checks).
    """

    def __init__(
        self,
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
        super().__init__(name=type(self).__name__)
        check_positive_int("obs_dim", obs_dim)
        check_positive_int("action_dim", action_dim)
        if any(not isinstance(h, (int, np.integer)) or h <= 0 for h in hidden_sizes):
            raise ValueError(f"hidden_sizes must be positive integers, got {tuple(hidden_sizes)!r}")
        if not init_std > 0 or not min_std > 0:
            raise ValueError(f"init_std and min_std must be > 0, got {init_std!r}, {min_std!r}")
        if hidden_nonlinearity not in TF_NONLINEARITIES:
            raise ValueError(
                f"hidden_nonlinearity must be one of {sorted(TF_NONLINEARITIES)}, "
                f"got {hidden_nonlinearity!r}"
            )
        self.obs_dim, self.action_dim = int(obs_dim), int(action_dim)
        self.hidden_sizes = tuple(int(h) for h in hidden_sizes)
        self.learn_std, self.init_std, self.min_std = bool(learn_std), float(init_std), float(min_std)
        self.hidden_nonlinearity = hidden_nonlinearity
        self.seed = seed
        self.dtype = tf.as_dtype(dtype)
        self.min_log_std = float(np.log(min_std))
        self._np_rng = np.random.default_rng(seed)
        self._params = self._init_params(np.random.default_rng(seed))

    # ----------------------------------------------------------------------------- parameters
    def _init_params(self, rng: np.random.Generator) -> dict[str, tf.Variable]:
        sizes = [self.obs_dim, *self.hidden_sizes, self.action_dim]
        np_dtype = self.dtype.as_numpy_dtype
        params: dict[str, tf.Variable] = {}
        for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            kernel = rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype(np_dtype)
            params[f"W{i}"] = tf.Variable(kernel, name=f"W{i}")
            params[f"b{i}"] = tf.Variable(np.zeros(fan_out, np_dtype), name=f"b{i}")
        log_std = np.full(self.action_dim, np.log(self.init_std), np_dtype)
        params["log_std"] = tf.Variable(log_std, trainable=self.learn_std, name="log_std")
        return params

    def get_params(self) -> dict[str, tf.Variable]:
        """All parameters, ordered ``W0, b0, ..., W{L}, b{L}, log_std``."""
        return dict(self._params)

    @property
    def trainable_param_names(self) -> list[str]:
        """Names of the parameters that gradient steps change (``log_std`` only if learn_std)."""
        return [name for name, var in self._params.items() if var.trainable]

    def get_param_values(self) -> dict[str, np.ndarray]:
        """Copies of all parameter values as numpy arrays."""
        return {name: var.numpy() for name, var in self._params.items()}

    def set_param_values(self, values: Mapping[str, np.ndarray]) -> None:
        """Assign parameter values.

        Raises:
            ValueError: if a name is unknown or a shape differs from the parameter's.
        """
        for name, value in values.items():
            if name not in self._params:
                raise ValueError(f"unknown parameter {name!r}; expected one of {list(self._params)}")
            value = np.asarray(value)
            expected = tuple(self._params[name].shape)
            if value.shape != expected:
                raise ValueError(f"parameter {name!r} must have shape {expected}, got {value.shape}")
            self._params[name].assign(value.astype(self.dtype.as_numpy_dtype))

    # -------------------------------------------------------------------------------- forward
    def forward(self, params: Mapping[str, tf.Tensor], observations: tf.Tensor) -> dict[str, tf.Tensor]:
        """Pure forward pass: ``{'mean', 'log_std'}`` for ``observations`` under ``params``.

        See :func:`~meta_policy_search.policies.networks.gaussian_mlp_forward` for the shapes of
        shared and per-task parameters.
        """
        return gaussian_mlp_forward(params, observations, self.hidden_nonlinearity, self.min_log_std)

    def numpy_policy(self, params: Mapping[str, np.ndarray]) -> NumpyGaussianMLP:
        """A :class:`NumpyGaussianMLP` over per-task ``params`` (leading task axis)."""
        names = layer_names(len(self.hidden_sizes))
        return NumpyGaussianMLP(
            {name: np.asarray(params[name]) for name in names},
            self.hidden_nonlinearity,
            self.min_log_std,
        )

    def get_actions(self, observations: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Sample actions for ``[N, obs_dim]`` observations (numpy, no graph call).

        Returns:
            ``(actions [N, A], {'mean': [N, A], 'log_std': [N, A]})``.
        """
        observations = np.asarray(observations)
        if observations.ndim != 2 or observations.shape[1] != self.obs_dim:
            raise ValueError(f"observations must be [N, {self.obs_dim}], got {observations.shape}")
        shared = {name: value[None] for name, value in self.get_param_values().items()}
        policy = self.numpy_policy(shared)
        noise = self._np_rng.standard_normal((1, len(observations), self.action_dim))
        actions, infos = policy.sample(observations[None], noise.astype(observations.dtype))
        return actions[0], {key: value[0] for key, value in infos.items()}

    # ------------------------------------------------------------------------------- pickling
    def _config(self) -> dict[str, Any]:
        return dict(
            obs_dim=self.obs_dim,
            action_dim=self.action_dim,
            hidden_sizes=self.hidden_sizes,
            learn_std=self.learn_std,
            init_std=self.init_std,
            min_std=self.min_std,
            hidden_nonlinearity=self.hidden_nonlinearity,
            seed=self.seed,
            dtype=self.dtype.name,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle the configuration and the current values, not TensorFlow objects.
        return (_rebuild_policy, (type(self), self._config(), self.get_param_values()))


def _rebuild_policy(
    cls: type[GaussianMLPPolicy], config: dict[str, Any], values: dict[str, np.ndarray]
) -> GaussianMLPPolicy:
    policy = cls(**config)
    policy.set_param_values(values)
    return policy
