"""A run's components other than the meta-algorithm, each built from the config by one call.

The seeds (:func:`derive_seeds`), the env, the policy, the sampler, the baseline and sample
processor, and the Trainer's callbacks. :func:`~meta_policy_search.experiment.runner.run_experiment`
(and :func:`~meta_policy_search.evaluation.setup.build_evaluation`) call these; the
meta-algorithm is built by :func:`~meta_policy_search.experiment.runner.make_algorithm` from the
fields its settings class declares. The env, policy and sampler builders import their modules
when called, so importing this one loads no TensorFlow, MuJoCo or gymnasium (numpy only).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from meta_policy_search import baselines
from meta_policy_search.best_checkpoint import BestCheckpointCallback, best_checkpoint_dir
from meta_policy_search.experiment.config_values import ConfigError
from meta_policy_search.experiment.configs import MetaRLConfig
from meta_policy_search.periodic_checkpoint import PeriodicCheckpointCallback
from meta_policy_search.samplers.dice_sample_processor import DiceSampleProcessor
from meta_policy_search.samplers.meta_sample_processor import MetaSampleProcessor


def derive_seeds(seed: int) -> dict[str, int]:
    """Independent seeds for each component, derived from the root ``seed``.

    The sampler's seed also seeds the env's task distribution (``MetaSampler`` calls
    ``env.seed_tasks``). The first of the four words drawn was once an env seed that the sampler
    then overwrote; it is still drawn and skipped, so every run keeps its seeds.

    Returns:
        ``{'sampler', 'policy', 'tf'}`` -> int32 seeds (via ``np.random.SeedSequence``).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    words = np.random.SeedSequence(int(seed)).generate_state(4, dtype=np.uint32)[1:]
    return {k: int(w) % (2**31 - 1) for k, w in zip(("sampler", "policy", "tf"), words)}


def build_env(config: MetaRLConfig) -> Any:
    """The env ``config.env`` (normalized unless ``normalization_scale`` is None, with the task in
    the observation if ``config.oracle``). Its tasks are seeded by the sampler
    (:func:`build_sampler`)."""
    # gymnasium and MuJoCo load when the env is built, not when a config is parsed
    from meta_policy_search.envs import make_env, normalize

    env = make_env(config.env, **config.env_kwargs)
    if config.normalization_scale is not None:
        env = normalize(env, normalization_scale=config.normalization_scale)
    if config.oracle:
        # gymnasium and MuJoCo load when the env is built, not when a config is parsed
        from meta_policy_search.envs.oracle_env import OracleEnv

        env = OracleEnv(env)
    return env


def build_policy(config: MetaRLConfig, env: Any, seed: int) -> Any:
    """A ``MetaGaussianMLPPolicy`` sized for ``env``'s observation and action spaces."""
    # TensorFlow loads when the policy is built, not when a config is parsed
    from meta_policy_search.policies import MetaGaussianMLPPolicy

    return MetaGaussianMLPPolicy(
        meta_batch_size=config.meta_batch_size,
        obs_dim=int(np.prod(env.observation_space.shape)),
        action_dim=int(np.prod(env.action_space.shape)),
        hidden_sizes=tuple(config.hidden_sizes),
        learn_std=config.learn_std,
        init_std=config.init_std,
        hidden_nonlinearity=config.hidden_nonlinearity,
        seed=seed,
    )


def build_sampler(config: MetaRLConfig, env: Any, policy: Any, seed: int) -> Any:
    """A ``MetaSampler`` with the config's batch sizes, horizon, sampling mode and executor.

    The values were checked when the config was parsed
    (:func:`~meta_policy_search.experiment.configs.validate_config`); a config built otherwise
    gets ``MetaSampler``'s own ``ValueError``.
    """
    # the sampler loads gymnasium, which a config check does not need
    from meta_policy_search.samplers import MetaSampler

    return MetaSampler(
        env=env,
        policy=policy,
        rollouts_per_meta_task=config.rollouts_per_meta_task,
        max_path_length=resolved_horizon(config),
        envs_per_task=config.envs_per_task,
        n_parallel=config.n_parallel,
        seed=seed,
        executor=config.executor,
        ray_address=config.ray_address,
        sampling_mode=config.sampling_mode,
        nonfinite_samples=config.nonfinite_samples,
        timeout=_sampler_timeout(config.sampler_timeout),
    )


def _sampler_timeout(seconds: float | None) -> float | str | None:
    """``MetaSampler``'s ``timeout`` for ``--sampler_timeout``: none means automatic, 0 none."""
    if seconds is None:
        # the sampler loads gymnasium, which a config check does not need
        from meta_policy_search.samplers.meta_sampler import AUTO_TIMEOUT

        return AUTO_TIMEOUT
    return float(seconds) if seconds > 0 else None


def resolved_horizon(config: MetaRLConfig) -> int:
    """``config.max_path_length`` after
    :func:`~meta_policy_search.experiment.config_parsing.resolve_config` filled it in from the
    env table.

    Raises:
        ConfigError: if it is still ``None``.
    """
    if config.max_path_length is None:
        raise ConfigError("max_path_length is None: resolve the config with resolve_config() first")
    return int(config.max_path_length)


def _baseline(name: str, flag: str) -> Any:
    """A default-constructed instance of the baseline class ``name`` (the value of ``flag``).

    Raises:
        ValueError: if ``name`` is not a class of ``meta_policy_search.baselines``.
    """
    names = [n for n in baselines.__all__ if n != "Baseline"]  # not the abstract base
    if name not in names:
        raise ValueError(f"{flag} must be one of {names}, got {name!r}")
    return getattr(baselines, name)()


def build_baseline(config: MetaRLConfig) -> Any:
    """The baseline class named by ``config.baseline``, default-constructed."""
    return _baseline(config.baseline, "baseline")


def build_sample_processor(config: MetaRLConfig) -> Any:
    """A ``MetaSampleProcessor`` (returns, baseline, GAE, advantage normalization)."""
    return MetaSampleProcessor(
        baseline=build_baseline(config),
        discount=config.discount,
        gae_lambda=config.gae_lambda,
        normalize_adv=config.normalize_adv,
        positive_adv=config.positive_adv,
    )


def build_dice_sample_processor(config: MetaRLConfig) -> Any:
    """A ``DiceSampleProcessor`` (adds the baseline-adjusted rewards of the DiCE objective).

    The returns and GAE advantages use ``config.baseline``; the adjusted rewards use
    ``config.dice_baseline`` (configs without that field, e.g. TRPO-MAML's with
    ``--inner_type dice``: ``LinearTimeBaseline``, the original's).

    Raises:
        ValueError: if a baseline name is not a class of ``meta_policy_search.baselines``.
    """
    dice_baseline = getattr(config, "dice_baseline", "LinearTimeBaseline")
    return DiceSampleProcessor(
        baseline=build_baseline(config),
        max_path_length=resolved_horizon(config),
        discount=config.discount,
        gae_lambda=config.gae_lambda,
        normalize_adv=config.normalize_adv,
        positive_adv=config.positive_adv,
        reward_baseline=_baseline(dice_baseline, "dice_baseline"),
    )


def build_callbacks(
    config: Any, make_callbacks: Callable[[Any], Sequence[Any]] | None = None
) -> tuple[Any, ...]:
    """The Trainer's callbacks: the script's (``make_callbacks(config)``), then a
    :class:`~meta_policy_search.best_checkpoint.BestCheckpointCallback` if ``--keep_best`` and a
    :class:`~meta_policy_search.periodic_checkpoint.PeriodicCheckpointCallback` if
    ``--keep_every``."""
    callbacks = tuple(make_callbacks(config)) if make_callbacks is not None else ()
    if config.keep_best is not None:
        best_dir = best_checkpoint_dir(config.dump_path)
        callbacks += (BestCheckpointCallback(config.keep_best, best_dir),)
    if config.keep_every is not None:
        callbacks += (PeriodicCheckpointCallback(config.keep_every, config.dump_path),)
    return callbacks
