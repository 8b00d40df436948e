"""Pure numpy RL math on padded, masked time series: returns, GAE, masked statistics.

Every function is stateless and works on arrays whose **last axis is time** ``h = 0..H-1``
(typically ``[T, R, H]``: tasks, rollouts, steps). A float ``mask_t`` marks real steps with 1 and
padding after the end of an episode with 0; the masks are assumed to be *prefix* masks
(``1 ... 1 0 ... 0`` along time), which is what the samplers produce. Outputs are 0 on padding,
except for :func:`standardize_real_episodes` and :func:`shift_real_episodes_to_positive`, which
reproduce the original ProMP's statistics over zero-padded ``[N, H]`` arrays of the ``N`` real
episodes (an episode is real iff its first step is, so whole padded episodes never count).

Computation happens in float64; results are cast back to the dtype of the main input.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Axis = int | Sequence[int] | None


def _check_float(name: str, x: np.ndarray, min_rank: int = 1) -> np.ndarray:
    """Return ``x`` as a numpy array after checking it is floating point of rank >= ``min_rank``."""
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(
            f"{name} must be a floating point array, got dtype {x.dtype}; cast it with "
            f".astype(np.float32)"
        )
    if x.ndim < min_rank:
        raise ValueError(f"{name} must have rank >= {min_rank}, got shape {x.shape}")
    return x


def _check_same_shape(**arrays: np.ndarray) -> None:
    """Raise ValueError unless all keyword arrays have the same shape."""
    shapes = {name: np.shape(a) for name, a in arrays.items()}
    if len(set(shapes.values())) > 1:
        desc = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(f"shape mismatch: {desc}; expected identical shapes")


def _check_discount(name: str, value: float) -> float:
    """Return ``value`` as float after checking ``0 <= value <= 1``."""
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value


def discount_cumsum(x_t: np.ndarray, discount: float) -> np.ndarray:
    r"""Discounted cumulative sum along the last (time) axis.

    :math:`y_t = \sum_{k \ge 0} \gamma^k x_{t+k}` (:math:`\gamma` = ``discount``), computed by the
    reverse recursion :math:`y_t = x_t + \gamma y_{t+1}` with :math:`y_H = 0`, vectorized over all
    leading axes.

    Args:
        x_t: ``[..., H]`` float array.
        discount: factor in ``[0, 1]``.

    Returns:
        ``[..., H]`` array of the same dtype as ``x_t``.

    Raises:
        ValueError: if ``x_t`` is not a floating array of rank >= 1 or ``discount`` is outside
            ``[0, 1]``.
    """
    x_t = _check_float("x_t", x_t)
    discount = _check_discount("discount", discount)
    x64 = x_t.astype(np.float64)
    out = np.empty_like(x64)
    acc = np.zeros(x64.shape[:-1], dtype=np.float64)
    for h in range(x64.shape[-1] - 1, -1, -1):
        acc = x64[..., h] + discount * acc
        out[..., h] = acc
    return out.astype(x_t.dtype)


def masked_discounted_returns(r_t: np.ndarray, mask_t: np.ndarray, discount: float) -> np.ndarray:
    r"""Discounted reward-to-go inside each episode.

    :math:`G_t = \sum_{k \ge 0} \gamma^k r_{t+k} m_{t+k}` (:math:`\gamma` = ``discount``,
    :math:`m` the mask) on real steps, 0 on padding. With a
    prefix mask the sum stops at the episode's last real step.

    Args:
        r_t: ``[..., H]`` rewards.
        mask_t: ``[..., H]`` mask, 1 for real steps and 0 for padding.
        discount: factor in ``[0, 1]``.

    Returns:
        ``[..., H]`` returns, dtype of ``r_t``.

    Raises:
        ValueError: on non-float inputs, mismatched shapes or a discount outside ``[0, 1]``.
    """
    r_t = _check_float("r_t", r_t)
    mask_t = _check_float("mask_t", mask_t)
    _check_same_shape(r_t=r_t, mask_t=mask_t)
    m = mask_t.astype(np.float64)
    r = np.where(m > 0, r_t.astype(np.float64), 0.0)
    returns = discount_cumsum(r, discount) * m
    return returns.astype(r_t.dtype)


def _td_errors(
    r_t: np.ndarray, b_t: np.ndarray, mask_t: np.ndarray, discount: float
) -> np.ndarray:
    """float64 ``delta_t = (r_t + discount * b_{t+1} * m_{t+1} - b_t) * m_t`` with ``b_H = 0``."""
    m = mask_t.astype(np.float64)
    b = np.where(m > 0, b_t.astype(np.float64), 0.0)
    r = np.where(m > 0, r_t.astype(np.float64), 0.0)
    b_next = np.zeros_like(b)
    b_next[..., :-1] = b[..., 1:]
    return (r + discount * b_next - b) * m


def compute_gae(
    r_t: np.ndarray,
    b_t: np.ndarray,
    mask_t: np.ndarray,
    discount: float,
    gae_lambda: float,
) -> np.ndarray:
    r"""Generalized advantage estimation without bootstrapping past the episode's end.

    :math:`\delta_t = r_t + \gamma b_{t+1} - b_t` where :math:`b_{t+1} = 0` after the last real
    step, and :math:`A_t = \sum_{k \ge 0} (\gamma\lambda)^k \delta_{t+k}` (:math:`\gamma` =
    ``discount``, :math:`\lambda` = ``gae_lambda``; Schulman et al. 2016, "High-dimensional
    continuous control using generalized advantage estimation"). For :math:`\lambda = 1` this
    telescopes to :math:`A_t = G_t - b_t` (returns minus baseline). As in the
    original ProMP the value after the final step of an episode is taken to be 0, also for
    episodes cut at ``H``.

    Args:
        r_t: ``[..., H]`` rewards.
        b_t: ``[..., H]`` baseline values (values on padding are ignored).
        mask_t: ``[..., H]`` mask, 1 for real steps and 0 for padding.
        discount: ``gamma`` in ``[0, 1]``.
        gae_lambda: ``lambda`` in ``[0, 1]``.

    Returns:
        ``[..., H]`` advantages, 0 on padding, dtype of ``r_t``.

    Raises:
        ValueError: on non-float inputs, mismatched shapes or factors outside ``[0, 1]``.
    """
    r_t = _check_float("r_t", r_t)
    b_t = _check_float("b_t", b_t)
    mask_t = _check_float("mask_t", mask_t)
    _check_same_shape(r_t=r_t, b_t=b_t, mask_t=mask_t)
    discount = _check_discount("discount", discount)
    gae_lambda = _check_discount("gae_lambda", gae_lambda)
    deltas = _td_errors(r_t, b_t, mask_t, discount)
    adv = discount_cumsum(deltas, discount * gae_lambda) * mask_t.astype(np.float64)
    return adv.astype(r_t.dtype)


def discounted_rewards(r_t: np.ndarray, mask_t: np.ndarray, discount: float) -> np.ndarray:
    """Rewards discounted to the start of their episode: ``discount^h * r_h``.

    The original ProMP's DiCE ``discounted_rewards`` (``DiceSampleProcessor``): each reward
    weighted by the discount of its time step, with no sum over the future.

    Args:
        r_t: ``[..., H]`` rewards.
        mask_t: ``[..., H]`` mask, 1 for real steps and 0 for padding.
        discount: ``gamma`` in ``[0, 1]``.

    Returns:
        ``[..., H]`` discounted rewards, 0 on padding, dtype of ``r_t``.

    Raises:
        ValueError: on non-float inputs, mismatched shapes or a discount outside ``[0, 1]``.
    """
    r_t = _check_float("r_t", r_t)
    mask_t = _check_float("mask_t", mask_t)
    _check_same_shape(r_t=r_t, mask_t=mask_t)
    discount = _check_discount("discount", discount)
    m = mask_t.astype(np.float64)
    powers = discount ** np.arange(r_t.shape[-1], dtype=np.float64)
    return (powers * np.where(m > 0, r_t.astype(np.float64), 0.0) * m).astype(r_t.dtype)


def real_episodes(mask_t: np.ndarray) -> np.ndarray:
    """Which episodes are real: ``mask[..., r, 0] == 1``.

    A sampler may pad the episode axis with whole all-zero-mask episodes (so that tasks with
    fewer episodes fit one array); those are not real episodes.

    Args:
        mask_t: ``[..., R, H]`` prefix mask.

    Returns:
        ``[..., R]`` boolean array.

    Raises:
        ValueError: if ``mask_t`` is not a float array of rank >= 2.
    """
    mask_t = _check_float("mask_t", mask_t, min_rank=2)
    return mask_t[..., 0] > 0


def _real_episode_entries(x_t: np.ndarray, mask_t: np.ndarray) -> np.ndarray:
    """float64 ``[..., R, H]`` weights: 1 on every step of a real episode (padding included)."""
    x_t = _check_float("x_t", x_t, min_rank=2)
    mask_t = _check_float("mask_t", mask_t, min_rank=2)
    _check_same_shape(x_t=x_t, mask_t=mask_t)
    return np.broadcast_to(real_episodes(mask_t)[..., None], x_t.shape).astype(np.float64)


def standardize_real_episodes(x_t: np.ndarray, mask_t: np.ndarray, eps: float = 1e-8) -> np.ndarray:
    """Standardize each task's zero-padded ``[N, H]`` array of ``N`` real episodes.

    ``(x - mean) / (std + eps)`` with the mean and (population) standard deviation over all
    ``N x H`` entries of the task's real episodes, *including* the time steps after an episode
    ended (the original ProMP's DiCE normalization of its padded ``[N, H]`` arrays). Whole padded
    episodes (:func:`real_episodes`) are left out of the statistics.

    Args:
        x_t: ``[..., R, H]`` values; their values on padded steps of real episodes are used as
            they are (pass zeros to reproduce the original's zero padding).
        mask_t: ``[..., R, H]`` prefix mask.
        eps: added to the standard deviation.

    Returns:
        ``[..., R, H]`` standardized values on every step of a real episode (padding included),
        0 on whole padded episodes; dtype of ``x_t``.

    Raises:
        ValueError: on non-float inputs, rank < 2 or mismatched shapes.
    """
    entries = _real_episode_entries(x_t, mask_t)
    x = np.where(entries > 0, np.asarray(x_t, dtype=np.float64), 0.0)
    count = np.maximum(np.sum(entries, axis=(-2, -1), keepdims=True), 1.0)
    mean = np.sum(x * entries, axis=(-2, -1), keepdims=True) / count
    std = np.sqrt(np.sum((x - mean) ** 2 * entries, axis=(-2, -1), keepdims=True) / count)
    return ((x - mean) / (std + eps) * entries).astype(np.asarray(x_t).dtype)


def shift_real_episodes_to_positive(
    x_t: np.ndarray, mask_t: np.ndarray, eps: float = 1e-8
) -> np.ndarray:
    """Shift each task's zero-padded ``[N, H]`` array so that its smallest entry is ``eps``.

    ``x - min(x) + eps`` with the minimum over all ``N x H`` entries of the task's real episodes,
    including the steps after an episode ended (as the original ProMP's DiCE processor).

    Args:
        x_t: ``[..., R, H]`` values (used as they are on padded steps of real episodes).
        mask_t: ``[..., R, H]`` prefix mask.
        eps: value of the smallest shifted entry.

    Returns:
        ``[..., R, H]`` shifted values on every step of a real episode, 0 on whole padded
        episodes; dtype of ``x_t``.

    Raises:
        ValueError: on non-float inputs, rank < 2 or mismatched shapes.
    """
    entries = _real_episode_entries(x_t, mask_t)
    x = np.asarray(x_t, dtype=np.float64)
    minimum = np.min(np.where(entries > 0, x, np.inf), axis=(-2, -1), keepdims=True)
    minimum = np.where(np.isfinite(minimum), minimum, 0.0)
    return np.where(entries > 0, x - minimum + eps, 0.0).astype(np.asarray(x_t).dtype)


def masked_mean(
    x: np.ndarray, mask: np.ndarray, axis: Axis = None, keepdims: bool = False
) -> np.ndarray:
    """Mask-weighted mean ``sum(x * m) / sum(m)`` over ``axis`` (0 where ``sum(m) = 0``).

    Values of ``x`` on padding (even NaN or inf) do not contribute.

    Args:
        x: float array.
        mask: float array of the same shape, 1 for real entries and 0 for padding.
        axis: axes to reduce (``None``: all).
        keepdims: keep reduced axes with size 1.

    Returns:
        The mean as a float64 array (a 0-d array when all axes are reduced).

    Raises:
        ValueError: on non-float inputs or mismatched shapes.
    """
    x = _check_float("x", x, min_rank=0)
    mask = _check_float("mask", mask, min_rank=0)
    _check_same_shape(x=x, mask=mask)
    m = mask.astype(np.float64)
    total = np.sum(np.where(m > 0, x.astype(np.float64), 0.0) * m, axis=axis, keepdims=keepdims)
    count = np.sum(m, axis=axis, keepdims=keepdims)
    return np.asarray(np.where(count > 0, total / np.maximum(count, 1e-300), 0.0))


def masked_std(
    x: np.ndarray, mask: np.ndarray, axis: Axis = None, keepdims: bool = False
) -> np.ndarray:
    """Mask-weighted population standard deviation ``sqrt(masked_mean((x - mean)^2))``.

    Args:
        x: float array.
        mask: float array of the same shape, 1 for real entries and 0 for padding.
        axis: axes to reduce (``None``: all).
        keepdims: keep reduced axes with size 1.

    Returns:
        The standard deviation as a float64 array.

    Raises:
        ValueError: on non-float inputs or mismatched shapes.
    """
    mean = masked_mean(x, mask, axis=axis, keepdims=True)
    x64 = np.where(np.asarray(mask) > 0, np.asarray(x, dtype=np.float64), 0.0)
    var = masked_mean((x64 - mean) ** 2, mask, axis=axis, keepdims=keepdims)
    return np.sqrt(var)


def normalize_advantages(
    adv_t: np.ndarray, mask_t: np.ndarray, axis: Axis = None, eps: float = 1e-8
) -> np.ndarray:
    """Standardize advantages over the real steps: ``(A - mean) / (std + eps)``, 0 on padding.

    Mean and (population) standard deviation are mask-weighted over ``axis``; e.g.
    ``axis=(1, 2)`` on ``[T, R, H]`` normalizes each task separately, as the original ProMP.

    Args:
        adv_t: float advantages.
        mask_t: mask of the same shape.
        axis: axes over which the statistics are taken (``None``: all).
        eps: added to the standard deviation.

    Returns:
        Normalized advantages, dtype of ``adv_t``.

    Raises:
        ValueError: on non-float inputs or mismatched shapes.
    """
    mean = masked_mean(adv_t, mask_t, axis=axis, keepdims=True)
    std = masked_std(adv_t, mask_t, axis=axis, keepdims=True)
    m = np.asarray(mask_t, dtype=np.float64)
    x = np.where(m > 0, np.asarray(adv_t, dtype=np.float64), 0.0)
    return ((x - mean) / (std + eps) * m).astype(np.asarray(adv_t).dtype)


def shift_advantages_to_positive(
    adv_t: np.ndarray, mask_t: np.ndarray, axis: Axis = None, eps: float = 1e-8
) -> np.ndarray:
    """Shift advantages so the smallest real one is ``eps``: ``A - min(A) + eps``, 0 on padding.

    Args:
        adv_t: float advantages.
        mask_t: mask of the same shape.
        axis: axes over which the minimum is taken (``None``: all).
        eps: value of the smallest shifted advantage.

    Returns:
        Shifted advantages, dtype of ``adv_t``.

    Raises:
        ValueError: on non-float inputs or mismatched shapes.
    """
    adv_t = _check_float("adv_t", adv_t, min_rank=0)
    mask_t = _check_float("mask_t", mask_t, min_rank=0)
    _check_same_shape(adv_t=adv_t, mask_t=mask_t)
    m = mask_t.astype(np.float64)
    x = adv_t.astype(np.float64)
    minimum = np.min(np.where(m > 0, x, np.inf), axis=axis, keepdims=True)
    minimum = np.where(np.isfinite(minimum), minimum, 0.0)
    return np.where(m > 0, (x - minimum + eps) * m, 0.0).astype(adv_t.dtype)
