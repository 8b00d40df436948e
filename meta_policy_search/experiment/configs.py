"""Run-script configurations: frozen dataclasses with a docstring per field, and per-env defaults.

The defaults are the settings the ProMP paper (Rothfuss et al. 2019, appendix D; the original
code's ``experiments/all_envs_eval`` sweeps) shares across environments. What the paper changed
per environment and algorithm (horizon, inner step size and steps, hidden sizes, ProMP's PPO
steps and KL penalty, budget sampling) lives in the package data file ``paper_configs.json``
(:mod:`meta_policy_search.experiment.paper`) and is applied on top of these defaults by
:func:`meta_policy_search.experiment.config_parsing.parse_command_line` unless ``paper_config``
is false. The run configs of :mod:`~meta_policy_search.experiment.algorithms` subclass these
classes to change a default (e.g. E-MAML sets ``exploration = True``); a field a run config
redeclares keeps its value over the paper config. Every field is a command-line flag (see
:mod:`meta_policy_search.experiment.config_parsing`), checked once when the command line is
parsed (:func:`validate_config`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from meta_policy_search.experiment.paper import env_horizons

# The algorithms' settings modules are standard library only, like these:
from meta_policy_search.meta_algos import inner_step_settings
from meta_policy_search.meta_algos.dice_maml_settings import DiceMAMLSettings
from meta_policy_search.meta_algos.inner_step_settings import DEFAULTS as INNER_STEP
from meta_policy_search.meta_algos.outer_step_settings import Rule, field_rule
from meta_policy_search.meta_algos.ppo_maml_settings import PPOMAMLSettings
from meta_policy_search.meta_algos.pro_mp_settings import ProMPSettings
from meta_policy_search.meta_algos.trpo_maml_settings import TRPOMAMLSettings
from meta_policy_search.meta_algos.vpg_maml_settings import VPGMAMLSettings
from meta_policy_search.samplers.quota import (  # standard library only
    DEFAULT_SAMPLING_MODE,
    SAMPLING_MODES,
)

ENV_SETTINGS: dict[str, dict[str, Any]] = {
    env: {"max_path_length": horizon} for env, horizon in env_horizons().items()
}
"""Per-env defaults applied when a config leaves the field ``None`` (the paper's horizons, from
``paper_configs.json``; also used when ``paper_config`` is false)."""

DEFAULT_MAX_PATH_LENGTH = 100
"""Horizon of envs missing from :data:`ENV_SETTINGS`."""


def env_settings(env: str) -> dict[str, Any]:
    """Per-env defaults of ``env``: its :data:`ENV_SETTINGS` entry; for the Meta-World names
    (``ML1-<env>``, ``ML10``) Meta-World's horizon; else none."""
    if env in ENV_SETTINGS:
        return ENV_SETTINGS[env]
    # the envs package loads gymnasium and MuJoCo: a command line is checked without them
    from meta_policy_search.envs import metaworld_envs

    if metaworld_envs.is_metaworld_env_name(env):
        return {"max_path_length": metaworld_envs.METAWORLD_MAX_PATH_LENGTH}
    return {}


def _is_env_name(value: str) -> bool:
    # the envs package loads gymnasium and MuJoCo: a command line is checked without them
    from meta_policy_search.envs.metaworld_envs import is_metaworld_env_name

    return value in ENV_SETTINGS or ENV_SPEC_SEPARATOR in value or is_metaworld_env_name(value)


RESERVED_KEYS = ("algo", "paper_config_entry")
"""Keys of ``params.json`` that are metadata, accepted and ignored in config files: the
algorithm's name and the paper-config entry that was applied
(see :func:`~meta_policy_search.experiment.config_parsing.config_to_dict`)."""

RESUME_CHANGEABLE = frozenset({
    "n_itr", "dump_path", "log_formats", "executor", "n_parallel", "ray_address",
    "sampler_timeout", "nonfinite_samples", "max_nonfinite_outer_steps", "keep_best",
    "keep_every",
})
"""Fields a ``--resume`` may change: they do not alter the results of the iterations already
run (the executors return identical samples). Any other difference from the run's
``params.json`` is refused, naming the field and its stored value."""


@dataclasses.dataclass(frozen=True)
class MetaRLConfig:
    """Settings shared by all meta-RL run scripts (defaults: the ProMP paper's)."""

    env: str = "HalfCheetahRandDirecEnv"
    """Env: a built-in env class name (``PointEnvRandGoal``, ``HalfCheetahRandDirecEnv``, ...) or
    your own MetaEnv class as ``package.module:ClassName`` (e.g. ``mypkg.tasks:MyEnv``, importable
    from the working directory or ``PYTHONPATH``; see docs/custom_env.rst), built with
    ``meta_policy_search.envs.make_env``."""
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
    sampling_mode: str = DEFAULT_SAMPLING_MODE
    """``rollouts``: exactly ``rollouts_per_meta_task`` episodes per task and phase; ``budget``:
    complete episodes until each task holds ``rollouts_per_meta_task x H`` real steps (the
    original's sampler, with a per-task instead of a global budget: early-terminating tasks get
    more, shorter episodes; see ``MetaSampler``)."""
    envs_per_task: int | None = None
    """Envs stepped together per task; ``None``: one per rollout."""
    n_parallel: int | None = None
    """Number of worker processes or Ray actors; ``None``: the number of CPU cores."""
    executor: str = "parallel"
    """Sampler executor: ``iterative`` (in the main process), ``parallel`` (worker processes) or
    ``ray`` (Ray actors). A ``params.json`` of an older run with ``parallel`` true/false and no
    executor reads as ``parallel``/``iterative`` (``upgrade_legacy_params``)."""
    ray_address: str | None = None
    """Ray cluster address for ``--executor ray`` (e.g. ``auto``); ``None``: a local Ray."""
    normalization_scale: float | None = 10.0
    """The policy acts in ``[-s, s]`` mapped onto the env's action box; ``None``: no mapping."""
    oracle: bool = False
    """Append the task parameters to every observation
    (:class:`~meta_policy_search.envs.oracle_env.OracleEnv`): the *oracle* baseline of
    ``experiments/meta_testing.py``."""
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
    inner_lr: float = INNER_STEP.inner_lr
    """Inner (adaptation) step size ``alpha``."""
    num_inner_grad_steps: int = INNER_STEP.num_inner_grad_steps
    """Number of inner adaptation steps. ``0`` trains a plain policy on the task mixture (the
    *pretrained* baseline of ``experiments/meta_testing.py``); it samples one batch per iteration
    instead of ``K + 1``, so it matches a ``K``-step run's sample budget with ``(K + 1) x n_itr``
    iterations."""
    trainable_inner_step_size: bool = INNER_STEP.trainable_inner_step_size
    """Meta-learn the per-parameter inner step sizes."""
    first_order: bool = INNER_STEP.first_order
    """First-order approximation: no gradient through the inner step's gradient."""
    jit_compile: bool = INNER_STEP.jit_compile
    """Compile the algorithm's graphs with XLA (``benchmarks/results/algo_steps.md``)."""
    log_formats: tuple[str, ...] = ("log", "csv", "tensorboard")
    """Logger outputs. The console gets the Trainer's one progress line per iteration; add
    ``stdout`` to also print the table of every logged key (some 45 rows on MuJoCo) each
    iteration, the table ``log.txt`` holds."""
    paper_config: bool = True
    """Apply the paper's settings for this algorithm and ``env`` (``paper_configs.json``) over the
    defaults; fields the run script redeclares, ``--config_file`` and flags still win."""
    sampler_timeout: float | None = None
    """Seconds a sampling phase may wait for worker processes or Ray actors before they are
    presumed hung and the run stops naming them; ``None``: automatic, the larger of 600 s and
    20 times the slowest phase so far; ``0``: wait forever. Ignored by the iterative executor."""
    nonfinite_samples: str = "raise"
    """A NaN or inf observation, action or reward: ``raise`` an error naming the task, rollout and
    step, or ``drop`` the episode (counted as ``NonFiniteEpisodesDropped``)."""
    max_nonfinite_outer_steps: int = 3
    """An outer step producing a non-finite loss or parameter is undone (``RejectedOuterSteps``);
    after this many in a row the run stops with an error."""
    keep_best: str | None = None
    """Also keep the checkpoint of the iteration with the highest value of this return
    (``Step_k-AverageReturn``, ``k <= num_inner_grad_steps``) in ``RUN_DIR/checkpoints_best``,
    for ``meta_testing.py --checkpoint best`` (the MAML paper evaluated its best iterate)."""
    keep_every: int | None = None
    """Also keep the checkpoint of every N-th iteration (iterations N-1, 2N-1, ...) in
    ``RUN_DIR/checkpoints_every/itr_<itr>``, for ``meta_testing.py --checkpoint <itr>`` and for
    looking at a run where it changed (about 64 KB each for the paper's policies)."""


# ---------------------------------------------------------------------------- algorithm configs
# Each algorithm's settings (fields, defaults, checks, help texts) are declared once, in its
# settings class beside the algorithm (meta_algos/*_settings.py); its config is that class on
# top of the shared run settings, so nothing is restated here.
@dataclasses.dataclass(frozen=True)
class ProMPConfig(ProMPSettings, MetaRLConfig):
    """ProMP (Rothfuss et al. 2019) settings."""


@dataclasses.dataclass(frozen=True)
class PPOMAMLConfig(PPOMAMLSettings, MetaRLConfig):
    """PPO-MAML settings: ProMP's outer optimisation (its paper values), MAML's inner step.

    Not in the paper; on its environments the paper config applies ProMP's section
    (:data:`~meta_policy_search.experiment.paper.SECTION_FALLBACKS`).
    """


@dataclasses.dataclass(frozen=True)
class TRPOMAMLConfig(TRPOMAMLSettings, MetaRLConfig):
    """TRPO-MAML and E-MAML-TRPO settings."""


@dataclasses.dataclass(frozen=True)
class VPGMAMLConfig(VPGMAMLSettings, MetaRLConfig):
    """VPG-MAML, LVC-VPG, E-MAML-VPG and first-order MAML settings."""


@dataclasses.dataclass(frozen=True)
class DiceMAMLConfig(DiceMAMLSettings, MetaRLConfig):
    """DiCE-MAML and VPG-DiCE settings."""

    dice_baseline: str = "LinearTimeBaseline"
    """Baseline class fitted to the discounted rewards for DiCE's adjusted rewards (the
    original's); ``baseline`` is the one of the returns and GAE advantages (VPG-DiCE's outer
    step)."""


# ---------------------------------------------------------------------------- validation
# Choices copied here so that checking a command line never imports TensorFlow or gymnasium;
# tests/test_robustness.py checks they equal the library's own lists.
EXECUTORS = ("iterative", "parallel", "ray")
BASELINES = ("LinearFeatureBaseline", "LinearTimeBaseline", "ZeroBaseline")
NONLINEARITIES = ("tanh", "relu", "identity")
NONFINITE_MODES = ("raise", "drop")
LOG_FORMATS = ("stdout", "log", "csv", "tensorboard")


def _positive_int() -> Rule:
    return Rule(lambda v: v >= 1, "an integer >= 1")


def _optional_positive_int() -> Rule:
    return Rule(lambda v: v is None or v >= 1, "an integer >= 1, or none")


def _positive() -> Rule:
    return Rule(lambda v: v > 0, "a finite number > 0")


def _one_of(choices: tuple[str, ...] | Callable[[], Any]) -> Rule:
    names = choices() if callable(choices) else choices
    return Rule(lambda v: v in names, "one of " + ", ".join(names))


ENV_SPEC_SEPARATOR = ":"
"""A user env is ``package.module:ClassName`` (as in ``meta_policy_search.envs.env_spec``, which
:func:`~meta_policy_search.experiment.run_checks.check_env` uses to import and check it; only the
syntax is checked here, without importing gymnasium)."""

FIELD_RULES: dict[str, Rule] = {
    "env": Rule(
        _is_env_name,
        "a built-in env class name (" + ", ".join(ENV_SETTINGS) + "), a Meta-World benchmark "
        "(ML1-<env>, e.g. ML1-reach-v3, or ML10) or a user env class as "
        "package.module:ClassName, with a colon before the class (e.g. mypkg.tasks:MyEnv)",
    ),
    "seed": Rule(lambda v: 0 <= v < 2**32, "an integer in [0, 2^32)"),
    "n_itr": _positive_int(),
    "dump_path": Rule(lambda v: v is None or v.strip() != "", "a directory path"),
    "meta_batch_size": _positive_int(),
    "rollouts_per_meta_task": _positive_int(),
    "max_path_length": _optional_positive_int(),
    "sampling_mode": _one_of(SAMPLING_MODES),
    "envs_per_task": _optional_positive_int(),
    "n_parallel": _optional_positive_int(),
    "executor": _one_of(EXECUTORS),
    "normalization_scale": Rule(lambda v: v is None or v > 0, "a finite number > 0, or none"),
    "baseline": _one_of(BASELINES),
    "discount": Rule(lambda v: 0 <= v <= 1, "a number in [0, 1]"),
    "gae_lambda": Rule(lambda v: 0 <= v <= 1, "a number in [0, 1]"),
    "hidden_sizes": Rule(
        lambda v: len(v) > 0 and all(isinstance(h, int) and h >= 1 for h in v),
        "a non-empty list of layer widths >= 1 (e.g. 64,64); a linear policy is not supported",
    ),
    "hidden_nonlinearity": _one_of(NONLINEARITIES),
    "init_std": _positive(),
    "log_formats": Rule(lambda v: all(f in LOG_FORMATS for f in v), "some of " + ", ".join(LOG_FORMATS)),
    "sampler_timeout": Rule(lambda v: v is None or v >= 0, "seconds >= 0 (0: no limit), or none"),
    "nonfinite_samples": _one_of(NONFINITE_MODES),
    "max_nonfinite_outer_steps": _positive_int(),
    "keep_every": _optional_positive_int(),
    # The algorithms' own fields carry their rule (meta_algos/*_settings.py).
    "dice_baseline": _one_of(BASELINES),
}
"""Per-field valid values, checked by :func:`validate_config` (every float field is also
checked finite). Keyed by field name, so a field means the same in every config class. An
algorithm's own fields carry their rule in their declaration
(:func:`~meta_policy_search.meta_algos.outer_step_settings.setting`); the inner-step settings
(``inner_lr``, ``num_inner_grad_steps``, ``inner_type``, ...) are not here:
:class:`~meta_policy_search.meta_algos.inner_step_settings.InnerStepSettings` holds their one
check."""


def validate_config(config: Any) -> list[str]:
    """Check every field of a (resolved or not) run-script config against its declared rule or
    :data:`FIELD_RULES`,
    and the inner-step settings with
    :func:`~meta_policy_search.meta_algos.inner_step_settings.invalid_settings`.

    Args:
        config: a :class:`MetaRLConfig` (subclass) instance.

    Returns:
        One message per invalid field, ``--<field> <value>: must be <allowed>`` (empty if valid).
    """
    fields = dataclasses.fields(config)
    values = {field.name: getattr(config, field.name) for field in fields}
    rules = {field.name: field_rule(field) or FIELD_RULES.get(field.name) for field in fields}
    invalid_inner_step = {
        name: allowed for name, _, allowed in inner_step_settings.invalid_settings(values)
    }
    errors = []
    for name, value in values.items():
        if name in inner_step_settings.FIELDS:
            if name in invalid_inner_step:
                errors.append(f"--{name} {_show(value)}: must be {invalid_inner_step[name]}")
            continue
        if isinstance(value, float) and not math.isfinite(value):
            errors.append(f"--{name} {value}: must be a finite number")
            continue
        rule = rules[name]
        if rule is not None and not rule.check(value):
            errors.append(f"--{name} {_show(value)}: must be {rule.allowed}")
    if not errors:
        errors += _cross_field_errors(config)
    return errors


def _cross_field_errors(config: Any) -> list[str]:
    errors = []
    if config.envs_per_task is not None and config.envs_per_task > config.rollouts_per_meta_task:
        errors.append(
            f"--envs_per_task {config.envs_per_task}: must be at most --rollouts_per_meta_task "
            f"({config.rollouts_per_meta_task})"
        )
    returns = [f"Step_{k}-AverageReturn" for k in range(config.num_inner_grad_steps + 1)]
    if config.keep_best is not None and config.keep_best not in returns:
        errors.append(f"--keep_best {config.keep_best}: must be one of {', '.join(returns)}")
    num_minibatches = getattr(config, "num_minibatches", 1)
    if num_minibatches > config.meta_batch_size:
        errors.append(
            f"--num_minibatches {num_minibatches}: must be at most --meta_batch_size "
            f"({config.meta_batch_size}): minibatches split the tasks"
        )
    if config.n_parallel is not None and config.n_parallel > config.meta_batch_size:
        errors.append(
            f"--n_parallel {config.n_parallel}: must be at most --meta_batch_size "
            f"({config.meta_batch_size}): each worker needs a task"
        )
    return errors


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value) if value else "[]"
    return str(value)
