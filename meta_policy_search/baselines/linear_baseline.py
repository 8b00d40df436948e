"""Linear baselines fit by ridge-regularized least squares on hand-made features."""

from __future__ import annotations

import warnings

import numpy as np

from meta_policy_search.baselines.base import Baseline, check_baseline_inputs


def step_time_features(steps: np.ndarray) -> np.ndarray:
    """Polynomial time features ``[s, s^2, s^3, 1]``, ``s = h / 100``, of given time steps ``h``.

    Args:
        steps: ``[N]`` integer time steps within their episodes.

    Returns:
        ``[N, 4]`` float64 features.
    """
    s = np.asarray(steps, dtype=np.float64) / 100.0
    return np.stack([s, s**2, s**3, np.ones_like(s)], axis=-1)


def ridge_least_squares(
    features: np.ndarray,
    targets: np.ndarray,
    reg_coeff: float = 1e-5,
    num_tries: int = 5,
) -> np.ndarray | None:
    """Solve ``min_c ||X c - y||^2 + reg ||c||^2``, raising ``reg`` until the solution is finite.

    The normal equations ``(X^T X + reg I) c = X^T y`` are solved; if the solution contains
    NaN or inf, ``reg`` is multiplied by 10, at most ``num_tries`` attempts in total (as the
    original rllab/ProMP baseline).

    Args:
        features: ``[N, F]`` design matrix ``X``.
        targets: ``[N]`` targets ``y``.
        reg_coeff: initial ridge coefficient.
        num_tries: number of attempts.

    Returns:
        ``[F]`` float64 coefficients, or ``None`` if no attempt gave a finite solution.
    """
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64)
    gram = x.T @ x
    rhs = x.T @ y
    eye = np.eye(gram.shape[0])
    reg = float(reg_coeff)
    for _ in range(num_tries):
        with np.errstate(all="ignore"):
            try:
                coeffs = np.linalg.solve(gram + reg * eye, rhs)
            except np.linalg.LinAlgError:
                coeffs = np.linalg.lstsq(gram + reg * eye, rhs, rcond=None)[0]
        if np.all(np.isfinite(coeffs)):
            return coeffs
        reg *= 10.0
    return None


class LinearModelBaseline(Baseline):
    """Shared fit/predict of a linear model ``b(s_h) = phi(s_h)^T c`` on masked steps.

    Subclasses define the features ``phi``. They are built for the real steps only: where
    episodes end early (budget sampling), padding can outnumber real steps several times.
    """

    def __init__(self, reg_coeff: float = 1e-5) -> None:
        if not reg_coeff > 0:
            raise ValueError(f"reg_coeff must be > 0, got {reg_coeff}")
        self._reg_coeff = float(reg_coeff)
        self._coeffs: np.ndarray | None = None

    def _features(self, observations: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """Return ``[N, F]`` float64 features of ``[N, obs_dim]`` observations at time ``steps``."""
        raise NotImplementedError

    def _real_step_features(self, observations: np.ndarray, real: np.ndarray) -> np.ndarray:
        """Features ``[N, F]`` of the ``N`` real steps of ``[R, H, obs_dim]``, in row-major order."""
        _, steps = np.nonzero(real)
        return self._features(observations[real], steps)

    def fit(self, observations: np.ndarray, returns: np.ndarray, mask: np.ndarray) -> None:
        """Fit the coefficients on the real steps only (see :meth:`Baseline.fit`).

        Padded steps are dropped before building the design matrix, so their values (even NaN)
        do not matter. Without any real step, or if no finite solution exists, the previous
        coefficients are kept (with a warning in the latter case).

        Raises:
            ValueError: on wrong ranks or shapes, or non-finite returns on real steps.
        """
        observations, mask, returns = check_baseline_inputs(observations, mask, returns)
        real = mask > 0
        if not real.any():
            return
        if not np.all(np.isfinite(returns[real])):
            raise ValueError("returns must be finite on real steps (mask > 0)")
        feats = self._real_step_features(observations, real)
        coeffs = ridge_least_squares(feats, returns[real], reg_coeff=self._reg_coeff)
        if coeffs is None:
            warnings.warn(
                f"{type(self).__name__}: no finite least-squares solution; keeping the "
                "previous coefficients",
                RuntimeWarning,
                stacklevel=2,
            )
            return
        self._coeffs = coeffs

    def predict(self, observations: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Predict ``phi(s)^T c`` on real steps, 0 on padding (0 everywhere before a fit).

        See :meth:`Baseline.predict`.
        """
        observations, mask, _ = check_baseline_inputs(observations, mask)
        if self._coeffs is None:
            return np.zeros(observations.shape[:2], dtype=np.float32)
        real = mask > 0
        feats = self._real_step_features(observations, real)
        if feats.shape[-1] != self._coeffs.shape[0]:
            raise ValueError(
                f"{type(self).__name__} was fit with {self._coeffs.shape[0]} features, got "
                f"observations {observations.shape} giving {feats.shape[-1]}"
            )
        pred = np.zeros(real.shape, dtype=np.float32)
        pred[real] = feats @ self._coeffs
        return pred

    def get_param_values(self) -> np.ndarray:
        """Return a copy of the coefficients, or an empty array before the first fit."""
        if self._coeffs is None:
            return np.zeros((0,), dtype=np.float64)
        return self._coeffs.copy()

    def set_param_values(self, values: np.ndarray) -> None:
        """Set the coefficients (see :meth:`Baseline.set_param_values`).

        Args:
            values: ``[F]`` coefficients; an empty array resets to "not fitted".

        Raises:
            ValueError: if ``values`` is not one-dimensional.
        """
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 1:
            raise ValueError(f"values must be a flat [F] array, got shape {values.shape}")
        self._coeffs = values.copy() if values.size else None


class LinearFeatureBaseline(LinearModelBaseline):
    """Linear regression of returns on state and time features (rllab / ProMP's baseline).

    Features per step ``h`` with clipped observation ``o = clip(obs, -10, 10)`` and
    ``s = h / 100``: ``[o, o^2, s, s^2, s^3, 1]`` (``2 * obs_dim + 4`` values). Fit by ridge
    least squares on the real steps, with ``reg_coeff`` raised tenfold (at most 5 tries) until
    the solution is finite.

    Args:
        reg_coeff: initial ridge regularization coefficient (default ``1e-5``).

    Raises:
        ValueError: if ``reg_coeff <= 0``.
    """

    def _features(self, observations: np.ndarray, steps: np.ndarray) -> np.ndarray:
        o = np.clip(observations.astype(np.float64), -10.0, 10.0)
        return np.concatenate([o, o**2, step_time_features(steps)], axis=-1)


class LinearTimeBaseline(LinearModelBaseline):
    """Linear regression of returns on time features only: ``[s, s^2, s^3, 1]``, ``s = h / 100``.

    Args:
        reg_coeff: initial ridge regularization coefficient (default ``1e-5``).

    Raises:
        ValueError: if ``reg_coeff <= 0``.
    """

    def _features(self, observations: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return step_time_features(steps)
