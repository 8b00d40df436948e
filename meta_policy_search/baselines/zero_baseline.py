"""A baseline that always predicts 0 (advantages become plain returns)."""

from __future__ import annotations

import numpy as np

from meta_policy_search.baselines.base import Baseline, check_baseline_inputs


class ZeroBaseline(Baseline):
    """Predicts 0 everywhere; has no parameters."""

    def fit(self, observations: np.ndarray, returns: np.ndarray, mask: np.ndarray) -> None:
        """Validate the inputs and do nothing (see :meth:`Baseline.fit`)."""
        check_baseline_inputs(observations, mask, returns)

    def predict(self, observations: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Return ``[R, H]`` zeros (see :meth:`Baseline.predict`)."""
        observations, mask, _ = check_baseline_inputs(observations, mask)
        return np.zeros(observations.shape[:2], dtype=np.float32)

    def get_param_values(self) -> np.ndarray:
        """Return an empty array: the zero baseline has no parameters."""
        return np.zeros((0,), dtype=np.float64)

    def set_param_values(self, values: np.ndarray) -> None:
        """Accept an empty array (see :meth:`Baseline.set_param_values`).

        Args:
            values: must be empty.

        Raises:
            ValueError: if ``values`` is not empty.
        """
        if np.asarray(values).size != 0:
            raise ValueError(
                f"ZeroBaseline has no parameters, got values of shape {np.shape(values)}"
            )
