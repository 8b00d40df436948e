"""Run-script configurations: frozen dataclasses with a docstring per field, and per-env defaults.

The defaults are the ProMP paper's (Rothfuss et al. 2019, appendix; the original code's
``experiments/all_envs_eval`` sweeps). Run scripts subclass one of these classes to change a
default (e.g. E-MAML sets ``exploration = True``); every field is a command-line flag
(see :mod:`meta_policy_search.utils.experiment`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

ENV_SETTINGS: dict[str, dict[str, Any]] = {
    "HalfCheetahRandDirecEnv": {"max_path_length": 100},
    "HalfCheetahRandVelEnv": {"max_path_length": 100},
    "AntRandDirecEnv": {"max_path_length": 200},
    "AntRandDirec2DEnv": {"max_path_length": 200},
    "AntRandGoalEnv": {"max_path_length": 200},
    "HumanoidRandDirecEnv": {"max_path_length": 200},
    "HumanoidRandDirec2DEnv": {"max_path_length": 200},
    "Walker2DRandDirecEnv": {"max_path_length": 200},
    "Walker2DRandVelEnv": {"max_path_length": 200},
    "Walker2DRandParamsEnv": {"max_path_length": 200},
    "HopperRandParamsEnv": {"max_path_length": 200},
    "SwimmerRandVelEnv": {"max_path_length": 200},
    "PointEnvRandGoal": {"max_path_length": 100},
    "MetaPointEnvCorner": {"max_path_length": 100},
    "MetaPointEnvMomentum": {"max_path_length": 200},
    "MetaPointEnvWalls": {"max_path_length": 100},
}
"""Per-env defaults applied when a config leaves the field ``None`` (the paper's horizons)."""

DEFAULT_MAX_PATH_LENGTH = 100
"""Horizon of envs missing from :data:`ENV_SETTINGS`."""

RESERVED_KEYS = ("algo",)
"""Keys of ``params.json`` that are metadata, accepted and ignored in config files."""


@dataclasses.dataclass(frozen=True)
class MetaRLConfig:
    """Settings shared by all meta-RL run scripts (defaults: the ProMP paper's)."""

    env: str = "HalfCheetahRandDirecEnv"
    """Env class name, built with ``meta_policy_search.envs.make_env``."""
    env_kwargs: dict = dataclasses.field(default_factory=dict)
    """Keyword arguments of the env constructor (JSON on the command line)."""
    seed: int = 1
    """Root seed: task, sampling, policy and TensorFlow seeds are derived from it."""
    n_itr: int = 1001
    """Number of meta-iterations."""
    dump_path: str | None = None
    """Output directory; ``None``: ``data/<algo>/<env>/run_<timestamp>``."""
    meta_batch_size: int = 40
    """Number of tasks per meta-iteration."""
    rollouts_per_meta_task: int = 20
    """Episodes per task and inner step."""
    max_path_length: int | None = None
    """Horizon ``H``; ``None``: the env's entry of ``ENV_SETTINGS``."""
    sampling_mode: str = "rollouts"
    """``rollouts``: exactly ``rollouts_per_meta_task`` episodes per task and phase; ``budget``:
    complete episodes until each task holds ``rollouts_per_meta_task x H`` real steps (the
    original's sampler: early-terminating tasks get more, shorter episodes)."""
    envs_per_task: int | None = None
    """Envs stepped together per task; ``None``: one per rollout."""
    parallel: bool = True
    """Sample with worker processes instead of in the main process."""
    n_parallel: int | None = None
    """Number of worker processes or Ray actors; ``None``: the number of CPU cores."""
    executor: str | None = None
    """Sampler executor: ``iterative``, ``parallel`` or ``ray``; overrides ``parallel`` when set."""
    ray_address: str | None = None
    """Ray cluster address for ``--executor ray`` (e.g. ``auto``); ``None``: a local Ray."""
    normalization_scale: float | None = 10.0
    """The policy acts in ``[-s, s]`` mapped onto the env's action box; ``None``: no mapping."""
    baseline: str = "LinearFeatureBaseline"
    """Baseline class in ``meta_policy_search.baselines``."""
    discount: float = 0.99
    """Discount factor ``gamma``."""
    gae_lambda: float = 1.0
    """GAE ``lambda``."""
    normalize_adv: bool = True
    """Standardize advantages per task."""
    positive_adv: bool = False
    """Shift advantages per task to be positive."""
    hidden_sizes: tuple[int, ...] = (64, 64)
    """Hidden layer widths of the policy MLP."""
    hidden_nonlinearity: str = "tanh"
    """Hidden activation: ``tanh``, ``relu`` or ``identity``."""
    learn_std: bool = True
    """Learn the policy's log-std."""
    init_std: float = 1.0
    """Initial policy standard deviation."""
    inner_lr: float = 0.1
    """Inner (adaptation) step size ``alpha``."""
    num_inner_grad_steps: int = 1
    """Number of inner adaptation steps."""
    trainable_inner_step_size: bool = False
    """Meta-learn the per-parameter inner step sizes."""
    first_order: bool = False
    """First-order approximation: no gradient through the inner step's gradient."""
    jit_compile: bool = False
    """Compile the algorithm's graphs with XLA (``benchmarks/results/algo_steps.md``)."""
    log_formats: tuple[str, ...] = ("stdout", "log", "csv", "tensorboard")
    """Logger outputs (``stdout`` prints a table per iteration)."""


@dataclasses.dataclass(frozen=True)
class ProMPConfig(MetaRLConfig):
    """ProMP (Rothfuss et al. 2019) settings."""

    learning_rate: float = 1e-3
    """Adam learning rate of the outer step."""
    num_ppo_steps: int = 5
    """Adam steps per outer step."""
    num_minibatches: int = 1
    """Minibatches per PPO step."""
    clip_eps: float = 0.3
    """Clip range of the outer surrogate."""
    target_inner_step: float = 0.01
    """Target inner KL for the adaptive penalty."""
    init_inner_kl_penalty: float = 5e-4
    """Initial coefficient ``eta`` of the inner KL penalty."""
    adaptive_inner_kl_penalty: bool = False
    """Adapt ``eta`` towards ``target_inner_step``."""
    anneal_factor: float = 1.0
    """Multiplies the clip range every iteration."""


@dataclasses.dataclass(frozen=True)
class TRPOMAMLConfig(MetaRLConfig):
    """TRPO-MAML and E-MAML-TRPO settings."""

    step_size: float = 0.01
    """TRPO trust region: maximum mean KL of the outer step."""
    inner_type: str = "log_likelihood"
    """Inner objective: ``log_likelihood`` (MAML), ``likelihood_ratio`` (LVC) or ``dice``."""
    exploration: bool = False
    """Add E-MAML's exploration term."""
    jit_compile: bool = True
    """Compile with XLA: 1.2-1.3x faster TRPO steps (``benchmarks/results/algo_steps.md``)."""


@dataclasses.dataclass(frozen=True)
class VPGMAMLConfig(MetaRLConfig):
    """VPG-MAML, LVC-VPG and E-MAML-VPG settings."""

    learning_rate: float = 1e-3
    """Adam learning rate of the outer step."""
    inner_type: str = "log_likelihood"
    """Inner objective: ``log_likelihood`` (MAML) or ``likelihood_ratio`` (LVC)."""
    exploration: bool = False
    """Add E-MAML's exploration term."""


@dataclasses.dataclass(frozen=True)
class DiceMAMLConfig(MetaRLConfig):
    """DiCE-MAML and VPG-DiCE settings."""

    learning_rate: float = 1e-3
    """Adam learning rate of the outer step."""
    dice_baseline: str = "LinearTimeBaseline"
    """Baseline class fitted to the discounted rewards for DiCE's adjusted rewards (the
    original's); ``baseline`` is the one of the returns and GAE advantages (VPG-DiCE's outer
    step)."""
