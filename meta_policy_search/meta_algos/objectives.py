"""Pure TensorFlow objectives of gradient-based meta-RL, one function per estimator.

Every function maps ``[T, ...]`` tensors (``T`` tasks on the leading axis) to per-task losses
``[T]`` to be *minimised*; padded time steps (``mask == 0``) never contribute. Summing the
per-task losses of an inner objective and differentiating once yields every task's own inner
gradient in a single backward pass.
"""

from __future__ import annotations

import tensorflow as tf


def masked_task_mean(values: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """Mean of ``values`` over the real steps of each task.

    Args:
        values: ``[T, ...]`` per-step values.
        mask: same shape as ``values``, 1 for real steps and 0 for padding.

    Returns:
        ``[T]``: ``sum(values * mask) / max(sum(mask), 1)`` over all axes but the first.
    """
    axes = list(range(1, values.shape.rank))
    total = tf.reduce_sum(values * mask, axis=axes)
    count = tf.maximum(tf.reduce_sum(mask, axis=axes), tf.ones_like(total))
    return total / count


def likelihood_ratio_objective(
    log_likelihood_new: tf.Tensor,
    log_likelihood_old: tf.Tensor,
    advantages: tf.Tensor,
    mask: tf.Tensor,
) -> tf.Tensor:
    r"""LVC objective (ProMP's inner objective), as a loss.

    :math:`L_t = -\mathbb{E}_t\big[\pi_\theta(a \mid s) / \pi_{\text{old}}(a \mid s)\, A\big]`
    with :math:`\pi_{\text{old}}` the sampling policy held constant. At
    :math:`\theta = \theta_{\text{old}}` its gradient is the policy gradient and its Hessian
    is the low-variance curvature estimate of Rothfuss et al., ProMP, ICLR 2019, eq. (9).

    Args:
        log_likelihood_new: ``[T, ...]`` log-probabilities under the differentiated policy.
        log_likelihood_old: ``[T, ...]`` log-probabilities under the sampling policy.
        advantages: ``[T, ...]`` advantages.
        mask: ``[T, ...]`` 1 for real steps.

    Returns:
        ``[T]`` per-task losses.
    """
    ratio = tf.exp(log_likelihood_new - tf.stop_gradient(log_likelihood_old))
    return -masked_task_mean(ratio * advantages, mask)


def log_likelihood_objective(
    log_likelihood: tf.Tensor, advantages: tf.Tensor, mask: tf.Tensor
) -> tf.Tensor:
    r"""MAML's inner objective (REINFORCE surrogate).

    :math:`L_t = -\mathbb{E}_t[\log \pi_\theta(a \mid s)\, A]`, the mean over task ``t``'s
    real steps.

    Finn et al., "Model-Agnostic Meta-Learning", ICML 2017. Returns ``[T]`` per-task losses.
    """
    return -masked_task_mean(log_likelihood * advantages, mask)


def real_episode_task_mean(values: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """Mean of each task's zero-padded ``[N, H]`` array, ``N`` its number of real episodes.

    ``sum(values * mask) / (N * H)``: padded steps of real episodes count in the denominator
    with value 0, whole padded episodes (``mask[t, r, 0] == 0``) not at all. This is the
    original ProMP's ``tf.reduce_mean`` over its per-task padded ``[N, H]`` placeholders.

    Args:
        values: ``[T, R, H]`` per-step values.
        mask: ``[T, R, H]`` prefix mask, 1 for real steps.

    Returns:
        ``[T]`` means (0 for a task without real episodes).
    """
    total = tf.reduce_sum(values * mask, axis=[1, 2])
    num_episodes = tf.reduce_sum(mask[..., 0], axis=-1)
    horizon = tf.cast(tf.shape(mask)[-1], mask.dtype)
    return total / tf.maximum(num_episodes * horizon, tf.ones_like(total))


def real_episode_mean(per_episode: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """Mean of ``[T, R]`` per-episode values over each task's real episodes; returns ``[T]``."""
    real = mask[..., 0]
    total = tf.reduce_sum(per_episode * real, axis=-1)
    return total / tf.maximum(tf.reduce_sum(real, axis=-1), tf.ones_like(total))


def dice_objective(
    log_likelihood: tf.Tensor,
    log_likelihood_old: tf.Tensor,
    adjusted_rewards: tf.Tensor,
    mask: tf.Tensor,
) -> tf.Tensor:
    r"""DiCE objective with a baseline, as a loss (the original ProMP's DiCE-MAML objective).

    .. math::

       L_t = -\frac{1}{N_t H} \sum_{n, h} w_{n,h}\, \tilde r_{n,h}\, m_{n,h}, \qquad
       w_{n,h} = \exp\Big(\sum_{h' \le h} \log \pi(a_{h'} \mid s_{h'})
                 - \log \pi_{\text{old}}(a_{h'} \mid s_{h'})\Big)

    over the :math:`N_t` real episodes of task :math:`t` (mask :math:`m`), with
    :math:`\pi_{\text{old}}` held constant and :math:`\tilde r` the adjusted rewards of
    :class:`~meta_policy_search.samplers.DiceSampleProcessor`: the discounted rewards
    ``gamma^h r_h`` minus a baseline, standardized over the task's padded ``[N, H]`` array.

    At :math:`\pi = \pi_{\text{old}}` (the policy that sampled the data) the weight :math:`w` is
    DiCE's magic box of the cumulative log-probability (value 1, and every derivative is the
    DiCE estimator's; Foerster et al., "DiCE: The Infinitely Differentiable Monte Carlo
    Estimator", ICML 2018). Anchoring the box at ``pi_old`` rather than at
    ``stop_gradient(log pi)`` makes the objective an ordinary (importance-weighted) function of
    the parameters, which is what lets finite differences check its meta-gradients, and keeps
    it correct when the parameters move away from the sampling policy. The original summed the
    log-probabilities of padded steps into the box as well; with a prefix mask that changes
    only the masked-out entries.

    Args:
        log_likelihood: ``[T, R, H]`` log-probabilities under the differentiated policy.
        log_likelihood_old: ``[T, R, H]`` log-probabilities under the sampling policy.
        adjusted_rewards: ``[T, R, H]``.
        mask: ``[T, R, H]``.

    Returns:
        ``[T]`` per-task losses.
    """
    # Accumulate the per-step log-ratios rather than subtracting two long cumulative sums: the
    # latter cancels catastrophically in float32 when H is large.
    log_ratio = (log_likelihood - tf.stop_gradient(log_likelihood_old)) * mask
    weights = tf.exp(tf.cumsum(log_ratio, axis=-1))
    return -real_episode_task_mean(weights * adjusted_rewards, mask)


def surrogate_objective(ratio: tf.Tensor, advantages: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    r"""TRPO's surrogate :math:`L_t = -\mathbb{E}_t[r A]` with :math:`r = \pi_\theta / \pi_{\text{old}}`.

    Returns ``[T]`` per-task losses.
    """
    return -masked_task_mean(ratio * advantages, mask)


def clipped_surrogate_objective(
    ratio: tf.Tensor, advantages: tf.Tensor, mask: tf.Tensor, clip_eps: tf.Tensor | float
) -> tf.Tensor:
    r"""PPO's clipped surrogate, as a loss.

    :math:`L_t = -\mathbb{E}_t[\min(r A, \operatorname{clip}(r, 1 - \epsilon, 1 + \epsilon) A)]`.

    Returns ``[T]`` per-task losses.

    Schulman et al., "Proximal Policy Optimization Algorithms", 2017.
    """
    clipped = tf.clip_by_value(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    return -masked_task_mean(tf.minimum(ratio * advantages, clipped * advantages), mask)


def meta_batch_standardized_rewards(rewards: tf.Tensor, mask: tf.Tensor, eps: float = 1e-8) -> tf.Tensor:
    """Rewards standardized over the real steps of all tasks: ``(r - mean) / (std + eps)``.

    The original ProMP's ``adj_avg_rewards`` (``MetaSampleProcessor``), with the mean and the
    population standard deviation over every real step of the meta-batch.

    Args:
        rewards: ``[T, R, H]``.
        mask: ``[T, R, H]``, 1 for real steps.
        eps: added to the standard deviation.

    Returns:
        ``[T, R, H]`` standardized rewards, 0 on padding.
    """
    count = tf.maximum(tf.reduce_sum(mask), tf.ones([], mask.dtype))
    mean = tf.reduce_sum(rewards * mask) / count
    std = tf.sqrt(tf.reduce_sum(tf.square(rewards - mean) * mask) / count)
    return (rewards - mean) / (std + eps) * mask


def exploration_objective(
    pre_update_log_likelihood: tf.Tensor,
    pre_update_mask: tf.Tensor,
    post_update_rewards: tf.Tensor,
    post_update_mask: tf.Tensor,
) -> tf.Tensor:
    r"""E-MAML's pre-update sampling term as the original ProMP code computed it.

    :math:`L_t = -\mathbb{E}_h[\bar r_{t,h}]\; \mathbb{E}_h[\log \pi_\theta(a_h \mid s_h)]`
    with the first mean over the real post-update steps of task ``t``, :math:`\bar r` the
    post-update rewards standardized over the
    whole meta-batch (:func:`meta_batch_standardized_rewards`, held constant), and the second
    mean over the real pre-update (step 0) steps of task ``t``: the task's standardized
    post-update reward credited to every pre-update action (Stadie et al., "Some considerations
    on learning to explore via meta-reinforcement learning", 2018; Al-Shedivat et al. 2018).

    Args:
        pre_update_log_likelihood: ``[T, R, H]`` log-probabilities of the step-0 actions under
            the differentiated pre-update parameters.
        pre_update_mask: ``[T, R, H]``.
        post_update_rewards: ``[T, R', H]`` rewards of the last (post-update) batch.
        post_update_mask: ``[T, R', H]``.

    Returns:
        ``[T]`` per-task losses.
    """
    adjusted = tf.stop_gradient(meta_batch_standardized_rewards(post_update_rewards, post_update_mask))
    return -masked_task_mean(adjusted, post_update_mask) * masked_task_mean(
        pre_update_log_likelihood, pre_update_mask
    )


def paper_exploration_objective(
    pre_update_log_likelihood: tf.Tensor, pre_update_mask: tf.Tensor, post_update_returns: tf.Tensor
) -> tf.Tensor:
    r"""E-MAML's term in the paper's trajectory form, with a leave-one-out baseline.

    :math:`L_t = -\mathbb{E}_n\big[\sum_h \log \pi(a_h \mid s_h)\big]\,
    \operatorname{sg}(J_t - b_t)` (sg: stop-gradient), the mean over the task's real episodes
    :math:`n`: a score-function estimate of how the pre-update policy's
    exploration changes the return ``J_t`` reached after adaptation (Stadie et al., "Some
    considerations on learning to explore via meta-RL", 2018; Al-Shedivat et al. 2018).
    ``b_t`` is the mean of the *other* tasks' ``J`` (leave-one-out, so the baseline adds no
    bias); with a single task it is 0.

    Args:
        pre_update_log_likelihood: ``[T, R, H]`` log-probabilities of the pre-update actions.
        pre_update_mask: ``[T, R, H]``.
        post_update_returns: ``[T]`` mean undiscounted return of each task's post-update rollouts.

    Returns:
        ``[T]`` per-task losses.
    """
    num_tasks = tf.cast(tf.shape(post_update_returns)[0], post_update_returns.dtype)
    others = (tf.reduce_sum(post_update_returns) - post_update_returns) / tf.maximum(
        num_tasks - 1.0, 1.0
    )
    centred = tf.stop_gradient(post_update_returns - tf.where(num_tasks > 1.0, others, 0.0))
    trajectory_log_likelihood = tf.reduce_sum(pre_update_log_likelihood * pre_update_mask, axis=-1)
    return -real_episode_mean(trajectory_log_likelihood, pre_update_mask) * centred
