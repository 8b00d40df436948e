"""Shared machinery of the run scripts in ``experiments/``: config, CLI, seeding, builders.

A run script defines a frozen dataclass config (a subclass of a config in
:mod:`meta_policy_search.utils.experiment_configs`, with a
docstring per field) and a ``make_algo(config, policy)`` function, then calls
:func:`run_experiment`. Everything else (parsing, ``params.json``, logger, seeding, building the
env, policy, sampler and sample processor, resuming) happens here, so the scripts stay short.

Override precedence, lowest first:

1. the config class's defaults (a run script's own ``Config`` subclass included);
2. the paper config of (algorithm, env) from ``paper_configs.json``
   (:func:`~meta_policy_search.utils.paper.paper_overrides`): only fields the config class has,
   and not the fields the run script's ``Config`` redeclares (a script's own choices are never
   replaced); skipped when ``paper_config`` is false (the quick-start script's default) or the
   paper did not run the env. The env is the one chosen by the flags, else the config file,
   else the class default;
3. ``--config_file`` JSON;
4. command-line flags ``--<field> <value>``.

With ``--resume`` the run's ``params.json`` (complete and resolved) replaces 1 and 2; the config
file and flags still apply on top. ``params.json`` records the resolved config, the algorithm
(``algo``) and the paper-config entry that was applied (``paper_config_entry``: algorithm, env,
the fields it set and the script-owned fields it left alone; ``null`` if none).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime
import inspect
import json
import os
import textwrap
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from meta_policy_search.utils.experiment_configs import (  # noqa: F401 - re-exported
    DEFAULT_MAX_PATH_LENGTH,
    ENV_SETTINGS,
    RESERVED_KEYS,
    DiceMAMLConfig,
    MetaRLConfig,
    ProMPConfig,
    TRPOMAMLConfig,
    VPGMAMLConfig,
)
from meta_policy_search.utils.paper import describe_paper_entry, paper_overrides
from meta_policy_search.utils.serialization import atomic_write_json


# ---------------------------------------------------------------------------- config parsing
class ConfigError(ValueError):
    """A bad command line or config file (scripts print it without a traceback)."""


def field_docs(config_cls: type) -> dict[str, str]:
    """The docstrings written under each dataclass field (of ``config_cls`` and its bases).

    Args:
        config_cls: a dataclass.

    Returns:
        Field name -> its docstring (fields without one are missing).
    """
    docs: dict[str, str] = {}
    for cls in reversed(config_cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, following in zip(body, body[1:]):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                docs[node.target.id] = " ".join(following.value.value.split())
    return docs


def _coerce(name: str, value: Any, annotation: Any, from_cli: bool) -> Any:
    """Convert ``value`` (a JSON value, or a string if ``from_cli``) to the field's type."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if value is None or (from_cli and str(value).lower() in ("none", "null")):
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(name, value, inner[0], from_cli)
    expected = getattr(annotation, "__name__", str(annotation))
    if from_cli and annotation is not str:
        text = value
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            if origin is tuple:
                value = [v.strip() for v in text.strip("()[]").split(",") if v.strip()]
            elif annotation is bool and text.lower() in ("true", "false", "yes", "no"):
                value = text.lower() in ("true", "yes")
            else:
                raise ConfigError(f"--{name}: cannot parse {text!r} as {expected}") from None
        if origin is tuple and not isinstance(value, list):
            value = [value]  # "--hidden_sizes 64" is a one-layer network
    if annotation is bool and isinstance(value, (bool, int)) and value in (0, 1):
        return bool(value)
    if annotation is int and isinstance(value, (int, float)) and not isinstance(value, bool):
        if float(value).is_integer():
            return int(value)
    if annotation is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if annotation is str and isinstance(value, str):
        return value
    if origin is tuple and isinstance(value, (list, tuple)):
        item_type = args[0] if args else Any
        if item_type is Any:
            return tuple(value)
        return tuple(_coerce(name, v, item_type, from_cli and isinstance(v, str)) for v in value)
    if (annotation is dict or origin is dict) and isinstance(value, dict):
        return dict(value)
    raise ConfigError(f"{name}: expected {expected}, got {value!r}")


def config_from_dict(config_cls: type, values: dict[str, Any], base: Any = None) -> Any:
    """Build a config from ``values``, starting from ``base`` (default: the dataclass defaults).

    Args:
        config_cls: the config dataclass.
        values: field name -> JSON value (lists become tuples, ints become floats, ...).
            Keys in :data:`RESERVED_KEYS` are ignored.
        base: a ``config_cls`` instance whose values ``values`` override.

    Returns:
        A ``config_cls`` instance.

    Raises:
        ValueError: on a key that is not a field (naming it) or a value of the wrong type.
    """
    hints = typing.get_type_hints(config_cls)
    names = [f.name for f in dataclasses.fields(config_cls)]
    unknown = sorted(set(values) - set(names) - set(RESERVED_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown config key(s) {unknown} for {config_cls.__name__}; valid keys: {names}"
        )
    converted = {
        key: _coerce(key, value, hints[key], from_cli=False)
        for key, value in values.items()
        if key in names
    }
    base = config_cls() if base is None else base
    return dataclasses.replace(base, **converted)


def make_parser(config_cls: type, description: str | None = None) -> argparse.ArgumentParser:
    """An argparse parser with ``--config_file``, ``--resume`` and one ``--<field>`` per field.

    Flags left out are not set (``argparse.SUPPRESS``), so they do not override a config file.
    """
    parser = argparse.ArgumentParser(
        description=description or config_cls.__doc__,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--config_file", help="JSON file of config overrides")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --dump_path from its last checkpoint and params.json",
    )
    docs = field_docs(config_cls)
    defaults = config_cls()
    for field in dataclasses.fields(config_cls):
        default = getattr(defaults, field.name)
        parser.add_argument(
            f"--{field.name}",
            default=argparse.SUPPRESS,
            metavar=field.name.upper(),
            help=f"{docs.get(field.name, '')} (default: {default!r})".replace("%", "%%"),
        )
    return parser


@dataclasses.dataclass(frozen=True)
class ParsedCommandLine:
    """What :func:`parse_command_line` read: the config, whether to resume, the paper entry."""

    config: Any
    """The config (not yet resolved, see :func:`resolve_config`)."""
    resume: bool
    """``--resume`` was given."""
    paper_entry: dict[str, Any] | None
    """The paper-config entry applied
    (:func:`~meta_policy_search.utils.paper.paper_overrides`; with ``--resume``, the one the run's
    ``params.json`` recorded), or ``None``."""


def parse_command_line(
    config_cls: type, argv: Sequence[str] | None = None, algo_name: str | None = None
) -> ParsedCommandLine:
    """Parse the command line into a config, applying the precedence of the module docstring.

    Args:
        config_cls: the script's config dataclass.
        argv: arguments without the program name; ``None`` reads ``sys.argv``.
        algo_name: the algorithm's name (``'promp'``, ``'trpo_maml'``, ...), which selects the
            paper config's section; ``None`` applies no paper config.

    Returns:
        The config, ``resume`` and the paper entry applied.

    Raises:
        ConfigError: on unknown flags or config-file keys (naming them), unparsable values, or
            ``--resume`` without ``--dump_path``.
    """
    args, unknown = make_parser(config_cls).parse_known_args(argv)
    if unknown:
        raise ConfigError(f"unknown command-line argument(s) {unknown}")
    hints = typing.get_type_hints(config_cls)
    cli = {k: _coerce(k, v, hints[k], from_cli=True)
           for k, v in vars(args).items() if k not in ("config_file", "resume")}
    file_values = load_json(args.config_file) if args.config_file else {}
    if args.resume:
        if "dump_path" not in cli:
            raise ConfigError("--resume needs --dump_path (the run directory to continue)")
        stored = load_json(os.path.join(cli["dump_path"], "params.json"))
        config = config_from_dict(config_cls, stored)
        entry = stored.get("paper_config_entry")
    else:
        config, entry = _paper_config_base(config_cls, algo_name, [cli, file_values])
    if file_values:
        config = config_from_dict(config_cls, file_values, base=config)
    return ParsedCommandLine(dataclasses.replace(config, **cli), bool(args.resume), entry)


def parse_config(
    config_cls: type, argv: Sequence[str] | None = None, algo_name: str | None = None
) -> tuple[Any, bool]:
    """Parse the command line into a config: :func:`parse_command_line` without the entry.

    Args:
        config_cls: the script's config dataclass.
        argv: arguments without the program name; ``None`` reads ``sys.argv``.
        algo_name: selects the paper config's section; ``None`` applies no paper config.

    Returns:
        ``(config, resume)``.

    Raises:
        ConfigError: on unknown flags or config-file keys (naming them), unparsable values, or
            ``--resume`` without ``--dump_path``.
    """
    parsed = parse_command_line(config_cls, argv, algo_name)
    return parsed.config, parsed.resume


def _paper_config_base(
    config_cls: type, algo_name: str | None, layers: Sequence[dict[str, Any]]
) -> tuple[Any, dict[str, Any] | None]:
    """The class defaults with the paper entry applied, for the env and ``paper_config`` that the
    highest of ``layers`` (typed flags first, then the config file's JSON) chooses."""
    defaults = config_cls()
    if algo_name is None:
        return defaults, None
    hints = typing.get_type_hints(config_cls)

    def chosen(name: str) -> Any:
        for layer in layers:
            if name in layer:
                return _coerce(name, layer[name], hints[name], from_cli=False)
        return getattr(defaults, name)

    if not chosen("paper_config"):
        return defaults, None
    entry = paper_overrides(config_cls, algo_name, chosen("env"))
    if entry is None:
        return defaults, None
    return config_from_dict(config_cls, entry["applied"], base=defaults), entry


def load_json(path: str) -> dict[str, Any]:
    """Read a JSON object from ``path``; raise ValueError if it is not an object."""
    with open(path, encoding="utf-8") as f:
        values = json.load(f)
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: expected a JSON object of config keys, got {type(values)}")
    return values


def resolve_config(config: Any, algo_name: str) -> Any:
    """Fill the ``None`` fields that have computed defaults: ``max_path_length``, ``dump_path``.

    Args:
        config: a :class:`MetaRLConfig` (subclass) instance.
        algo_name: used in the default ``dump_path`` ``data/<algo>/<env>/run_<timestamp>``.

    Returns:
        A copy of ``config`` with those fields set.
    """
    updates: dict[str, Any] = {}
    if config.max_path_length is None:
        settings = ENV_SETTINGS.get(config.env, {})
        updates["max_path_length"] = settings.get("max_path_length", DEFAULT_MAX_PATH_LENGTH)
    if config.dump_path is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S_%f")
        updates["dump_path"] = os.path.join("data", algo_name, config.env, f"run_{stamp}")
    return dataclasses.replace(config, **updates)


def config_to_dict(
    config: Any, algo_name: str | None = None, paper_config_entry: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The config as a JSON-ready dict (what ``params.json`` holds).

    Args:
        config: a config dataclass instance.
        algo_name: if given, recorded as ``'algo'`` (first key).
        paper_config_entry: if ``algo_name`` is given, recorded as ``'paper_config_entry'``
            (last key; ``None`` when no paper config was applied).

    Returns:
        Field name -> JSON value, plus the metadata keys (:data:`RESERVED_KEYS`).
    """
    values = dataclasses.asdict(config)
    if not algo_name:
        return values
    return {"algo": algo_name, **values, "paper_config_entry": paper_config_entry}


def write_params(
    config: Any, dump_path: str, algo_name: str, paper_config_entry: dict[str, Any] | None = None
) -> str:
    """Atomically write ``params.json`` (the full config) into ``dump_path``; return its path."""
    path = os.path.join(dump_path, "params.json")
    atomic_write_json(path, config_to_dict(config, algo_name, paper_config_entry))
    return path


# ---------------------------------------------------------------------------- builders
def derive_seeds(seed: int) -> dict[str, int]:
    """Independent seeds for each component, derived from the root ``seed``.

    Returns:
        ``{'env', 'sampler', 'policy', 'tf'}`` -> int32 seeds (via ``np.random.SeedSequence``).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    words = np.random.SeedSequence(int(seed)).generate_state(4, dtype=np.uint32)
    return {k: int(w) % (2**31 - 1) for k, w in zip(("env", "sampler", "policy", "tf"), words)}


def build_env(config: MetaRLConfig, seed: int) -> Any:
    """The env ``config.env`` (normalized unless ``normalization_scale`` is None), task-seeded."""
    from meta_policy_search.envs import make_env, normalize

    env = make_env(config.env, **config.env_kwargs)
    if config.normalization_scale is not None:
        env = normalize(env, normalization_scale=config.normalization_scale)
    env.seed_tasks(seed)
    return env


def build_policy(config: MetaRLConfig, env: Any, seed: int) -> Any:
    """A ``MetaGaussianMLPPolicy`` sized for ``env``'s observation and action spaces."""
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

    ``config.executor``, when set, overrides ``config.parallel`` (a script's default).

    Raises:
        ConfigError: if ``config.sampling_mode`` is not one of
            :data:`~meta_policy_search.samplers.rollout.SAMPLING_MODES`.
    """
    from meta_policy_search.samplers import MetaSampler
    from meta_policy_search.samplers.rollout import SAMPLING_MODES

    if config.sampling_mode not in SAMPLING_MODES:
        choices = " or ".join(f"--sampling_mode {mode}" for mode in SAMPLING_MODES)
        raise ConfigError(
            f"sampling_mode must be one of {SAMPLING_MODES}, got {config.sampling_mode!r}; "
            f"pass {choices}"
        )
    if config.executor is None:
        executor, parallel = None, config.parallel
    else:
        executor, parallel = config.executor, None
    return MetaSampler(
        env=env,
        policy=policy,
        rollouts_per_meta_task=config.rollouts_per_meta_task,
        meta_batch_size=config.meta_batch_size,
        max_path_length=resolved_horizon(config),
        envs_per_task=config.envs_per_task,
        parallel=parallel,
        n_parallel=config.n_parallel,
        seed=seed,
        executor=executor,
        ray_address=config.ray_address,
        sampling_mode=config.sampling_mode,
    )


def resolved_horizon(config: MetaRLConfig) -> int:
    """``config.max_path_length`` after :func:`resolve_config` filled it in from the env table.

    Raises:
        ConfigError: if it is still ``None``.
    """
    if config.max_path_length is None:
        raise ConfigError("max_path_length is None: resolve the config with resolve_config() first")
    return int(config.max_path_length)


def build_baseline(config: MetaRLConfig) -> Any:
    """The baseline class named by ``config.baseline``, default-constructed."""
    from meta_policy_search import baselines

    names = [name for name in baselines.__all__ if name != "Baseline"]  # not the abstract base
    if config.baseline not in names:
        raise ValueError(f"baseline must be one of {names}, got {config.baseline!r}")
    return getattr(baselines, config.baseline)()


def build_sample_processor(config: MetaRLConfig) -> Any:
    """A ``MetaSampleProcessor`` (returns, baseline, GAE, advantage normalization)."""
    from meta_policy_search.samplers import MetaSampleProcessor

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
    from meta_policy_search import baselines
    from meta_policy_search.samplers import DiceSampleProcessor

    dice_baseline = getattr(config, "dice_baseline", "LinearTimeBaseline")
    names = [name for name in baselines.__all__ if name != "Baseline"]  # not the abstract base
    if dice_baseline not in names:
        raise ValueError(f"dice_baseline must be one of {names}, got {dice_baseline!r}")
    return DiceSampleProcessor(
        baseline=build_baseline(config),
        max_path_length=resolved_horizon(config),
        discount=config.discount,
        gae_lambda=config.gae_lambda,
        normalize_adv=config.normalize_adv,
        positive_adv=config.positive_adv,
        reward_baseline=getattr(baselines, dice_baseline)(),
    )


def run_experiment(
    config_cls: type,
    algo_name: str,
    make_algo: Callable[[Any, Any], Any],
    make_sample_processor: Callable[[Any], Any] = build_sample_processor,
    argv: Sequence[str] | None = None,
) -> str:
    """Parse the command line, build everything, train, and return the run directory.

    Seeds TensorFlow's global generator (``tf.random.set_seed``): this is script-level code.

    Args:
        config_cls: the script's config dataclass.
        algo_name: short name used in ``params.json`` and the default ``dump_path``.
        make_algo: ``make_algo(config, policy)`` returns the meta-algorithm.
        make_sample_processor: ``make_sample_processor(config)`` returns the processor.
        argv: command-line arguments (default ``sys.argv[1:]``).

    Returns:
        The run directory (``config.dump_path``).

    Raises:
        SystemExit: with the message of a :class:`ConfigError` (bad command line or config file,
            or ``dump_path`` already holds a checkpoint and ``--resume`` was not given), or of a
            missing config file.
    """
    import tensorflow as tf

    from meta_policy_search.meta_trainer import Trainer
    from meta_policy_search.utils import logger
    from meta_policy_search.utils.checkpoint import latest_checkpoint

    try:
        parsed = parse_command_line(config_cls, argv, algo_name)
        config, resume = resolve_config(parsed.config, algo_name), parsed.resume
        checkpoint_dir = os.path.join(config.dump_path, "checkpoints")
        if not resume and latest_checkpoint(checkpoint_dir) is not None:
            raise ConfigError(
                f"{config.dump_path} already holds a run: pass --resume to continue it, or "
                "choose another --dump_path"
            )
    except (ConfigError, FileNotFoundError) as error:
        raise SystemExit(f"error: {error}") from error
    os.makedirs(config.dump_path, exist_ok=True)
    logger.configure(dir=config.dump_path, format_strs=list(config.log_formats),
                     snapshot_mode="none", append=resume)
    write_params(config, config.dump_path, algo_name, parsed.paper_entry)
    if parsed.paper_entry is not None and not resume:
        logger.log(describe_paper_entry(parsed.paper_entry))

    seeds = derive_seeds(config.seed)
    tf.random.set_seed(seeds["tf"])
    env = build_env(config, seeds["env"])
    policy = build_policy(config, env, seeds["policy"])
    sampler = build_sampler(config, env, policy, seeds["sampler"])
    trainer = Trainer(
        algo=make_algo(config, policy),
        env=env,
        sampler=sampler,
        sample_processor=make_sample_processor(config),
        policy=policy,
        n_itr=config.n_itr,
        num_inner_grad_steps=config.num_inner_grad_steps,
        checkpoint_dir=checkpoint_dir,
    )
    if resume:
        start_itr = trainer.restore()
        logger.log(f"Resuming {config.dump_path} at iteration {start_itr}")
    try:
        trainer.train()
    finally:
        if hasattr(sampler, "close"):
            sampler.close()
    return config.dump_path
