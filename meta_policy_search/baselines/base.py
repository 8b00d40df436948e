"""The baseline interface: fit on one task's returns, predict them for its observations."""

from __future__ import annotations

import abc
from typing import overload

import numpy as np


@overload
def check_baseline_inputs(
    observations: np.ndarray, mask: np.ndarray, returns: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


@overload
def check_baseline_inputs(
    observations: np.ndarray, mask: np.ndarray, returns: None = None
) -> tuple[np.ndarray, np.ndarray, None]: ...


def check_baseline_inputs(
    observations: np.ndarray, mask: np.ndarray, returns: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Validate the arrays passed to :meth:`Baseline.fit` / :meth:`Baseline.predict`.

    Args:
        observations: ``[R, H, obs_dim]`` observations of one task.
        mask: ``[R, H]`` mask, 1 for real steps and 0 for padding.
        returns: ``[R, H]`` returns or ``None`` (prediction).

    Returns:
        The inputs as numpy arrays.

    Raises:
        ValueError: if a rank or shape is wrong or an array is not floating point.
    """
    observations = np.asarray(observations)
    mask = np.asarray(mask)
    if observations.ndim != 3:
        raise ValueError(
            f"observations must be [R, H, obs_dim] (one task), got shape {observations.shape}"
        )
    if mask.shape != observations.shape[:2]:
        raise ValueError(
            f"mask must be [R, H] = {observations.shape[:2]} to match observations "
            f"{observations.shape}, got shape {mask.shape}"
        )
    if returns is not None:
        returns = np.asarray(returns)
        if returns.shape != observations.shape[:2]:
            raise ValueError(
                f"returns must be [R, H] = {observations.shape[:2]} to match observations "
                f"{observations.shape}, got shape {returns.shape}"
            )
    for name, arr in (("observations", observations), ("mask", mask), ("returns", returns)):
        if arr is not None and not np.issubdtype(arr.dtype, np.floating):
            raise ValueError(f"{name} must be a floating point array, got dtype {arr.dtype}")
    return observations, mask, returns


class Baseline(abc.ABC):
    """Predicts the discounted return of a state; refit on each task's samples.

    The sample processor calls, for every task ``t``, ``fit(obs[t], returns[t], mask[t])`` and
    then ``predict(obs[t], mask[t])``; padded steps (``mask = 0``) must not influence the fit,
    and predictions on them are 0.
    """

    @abc.abstractmethod
    def fit(self, observations: np.ndarray, returns: np.ndarray, mask: np.ndarray) -> None:
        """Fit the baseline to one task's returns.

        Args:
            observations: ``[R, H, obs_dim]`` observations.
            returns: ``[R, H]`` discounted returns (targets).
            mask: ``[R, H]`` mask, 1 for real steps and 0 for padding.

        Raises:
            ValueError: on wrong ranks or shapes.
        """

    @abc.abstractmethod
    def predict(self, observations: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Predict returns.

        Args:
            observations: ``[R, H, obs_dim]`` observations.
            mask: ``[R, H]`` mask, 1 for real steps and 0 for padding.

        Returns:
            ``[R, H]`` float32 predictions, 0 on padding.

        Raises:
            ValueError: on wrong ranks or shapes.
        """

    @abc.abstractmethod
    def get_param_values(self) -> np.ndarray:
        """Return the fitted parameters as a flat float64 array (empty if not fitted)."""

    @abc.abstractmethod
    def set_param_values(self, values: np.ndarray) -> None:
        """Set the parameters from a flat array as returned by :meth:`get_param_values`.

        Args:
            values: flat parameter array (empty means "not fitted").

        Raises:
            ValueError: if ``values`` is not a flat array.
        """
