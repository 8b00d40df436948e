"""A researcher's own env by import path: ``package.module:ClassName``.

:func:`~meta_policy_search.envs.registry.make_env` accepts such a *spec* wherever it accepts a
built-in env name, so ``--env mypkg.tasks:MyEnv`` works in every run script, in
``experiments/reproduce.py`` and, since ``params.json`` records the spec as given, in
``--resume`` and ``experiments/meta_testing.py``.

The class does not have to subclass :class:`~meta_policy_search.envs.base.MetaEnv`: it is
checked against the protocol the library really calls (duck typing with a check,
:func:`protocol_problems`), because a missing method would otherwise surface as an
``AttributeError`` deep inside a worker process after TensorFlow has loaded. What it needs:

* a subclass of :class:`gymnasium.Env` (``normalize()`` and ``OracleEnv`` wrap it in gymnasium
  wrappers, which refuse anything else);
* its own ``sample_tasks``, ``set_task``, ``get_task``, ``reset`` and ``step`` (not the base
  classes' placeholders, which raise ``NotImplementedError``);
* ``seed_tasks`` and ``log_diagnostics`` methods and, once built, a ``task_rng`` attribute (a
  :class:`numpy.random.Generator`): the sampler seeds and checkpoints the task generator, the
  trainer logs the diagnostics. Subclassing ``MetaEnv`` supplies all three;
* once built: 1-D :class:`gymnasium.spaces.Box` ``observation_space`` and ``action_space``
  (:func:`check_env_instance`);
* importable under its own ``__module__`` and ``__qualname__``: the parallel executor pickles
  the env and its worker processes (started with ``spawn``, with the parent's ``sys.path``)
  import the class again by that name. A Ray cluster's nodes need the module on their path too.

Nothing here imports TensorFlow; gymnasium is imported only when a spec is resolved.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import re
import sys
from typing import Any

import gymnasium as gym
import numpy as np

from meta_policy_search.envs.base import MetaEnv

ENV_SPEC_SEPARATOR = ":"
"""Separates the module from the class in a spec; no built-in env name contains it."""

ENV_SPEC_FORMAT = "package.module:ClassName"
"""How a spec is written (shown in error messages and help texts)."""

_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")

REQUIRED_METHODS: dict[str, str] = {
    "sample_tasks": "sample_tasks(n_tasks) -> list of tasks",
    "set_task": "set_task(task)",
    "get_task": "get_task() -> task",
    "reset": "reset(*, seed=None, options=None) -> (observation, info)",
    "step": "step(action) -> (observation, reward, terminated, truncated, info)",
}
"""Methods a user env must implement itself, with the signature the library calls."""

INHERITABLE_METHODS: dict[str, str] = {
    "seed_tasks": "seed_tasks(seed)",
    "log_diagnostics": "log_diagnostics(paths, prefix='') -> dict",
}
"""Methods the library also calls, which :class:`~meta_policy_search.envs.base.MetaEnv`
supplies (with the ``task_rng`` attribute, checked on the instance)."""


class EnvSpecError(ValueError):
    """An env spec that cannot be resolved or a class that misses part of the MetaEnv protocol.

    Args:
        spec: the bad value.
        reason: what is wrong and what was expected.

    ``str()`` is ``env spec '<spec>': <reason>``.
    """

    def __init__(self, spec: object, reason: str) -> None:
        super().__init__(f"env spec {spec!r}: {reason}")
        self.spec = spec
        self.reason = reason


def is_env_spec(name: object) -> bool:
    """Whether ``name`` is meant as a ``package.module:ClassName`` spec (it contains a colon)."""
    return isinstance(name, str) and ENV_SPEC_SEPARATOR in name


def parse_env_spec(spec: str) -> tuple[str, str]:
    """Split ``'package.module:ClassName'`` into ``('package.module', 'ClassName')``.

    Args:
        spec: the spec; the class part may be dotted (``module:Outer.Inner``).

    Returns:
        ``(module_name, class_path)``.

    Raises:
        EnvSpecError: if ``spec`` is not a str, has no colon or more than one, or either side is
            not a dotted Python name.
    """
    if not isinstance(spec, str):
        raise EnvSpecError(spec, f"must be a str like {ENV_SPEC_FORMAT!r}")
    if spec.count(ENV_SPEC_SEPARATOR) != 1:
        hint = f" (e.g. {suggest_spec(spec)!r})" if ENV_SPEC_SEPARATOR not in spec else ""
        raise EnvSpecError(
            spec, f"expected exactly one ':' between module and class, as in "
            f"{ENV_SPEC_FORMAT!r}{hint}"
        )
    module_name, class_path = (part.strip() for part in spec.split(ENV_SPEC_SEPARATOR))
    for part, what in ((module_name, "module"), (class_path, "class")):
        if not _DOTTED_NAME.match(part):
            raise EnvSpecError(
                spec, f"{part!r} is not a valid {what} name; expected "
                f"{ENV_SPEC_FORMAT!r}"
            )
    return module_name, class_path


def suggest_spec(name: str) -> str:
    """``'mypkg.tasks.MyEnv'`` -> ``'mypkg.tasks:MyEnv'`` (the colon before the last part)."""
    module_name, _, class_name = name.rpartition(".")
    return f"{module_name or 'mypkg.tasks'}{ENV_SPEC_SEPARATOR}{class_name or 'MyEnv'}"


def load_env_class(spec: str) -> type:
    """Import the class a spec names and check it against the MetaEnv protocol.

    Args:
        spec: ``'package.module:ClassName'``; the module must be importable from ``sys.path``
            (the run scripts also search the working directory, see
            :func:`search_working_directory`).

    Returns:
        The class.

    Raises:
        EnvSpecError: naming ``spec``, if it is malformed, its module cannot be imported (or
            raises on import: the original error is the ``__cause__``), the module has no such
            attribute, the attribute is not a class, the class misses part of the protocol
            (:func:`protocol_problems`), or worker processes could not import it back.
    """
    module_name, class_path = parse_env_spec(spec)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and (module_name + ".").startswith(error.name + "."):
            raise EnvSpecError(
                spec, f"no module named {error.name!r}; install its package or put "
                "the directory holding it on PYTHONPATH (the run scripts also search the "
                "working directory)"
            ) from None
        raise EnvSpecError(
            spec, f"importing module {module_name!r} failed: {error}"
        ) from error
    except Exception as error:  # the user's module raised on import: name it, keep the cause
        raise EnvSpecError(
            spec, f"importing module {module_name!r} raised "
            f"{type(error).__name__}: {error}"
        ) from error
    obj: Any = module
    for depth, part in enumerate(class_path.split(".")):
        if not hasattr(obj, part):
            owner = module_name if depth == 0 else ".".join(class_path.split(".")[:depth])
            close = difflib.get_close_matches(part, _class_names(obj), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise EnvSpecError(spec, f"{owner!r} has no attribute {part!r}{hint}")
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        kind = "a function" if inspect.isroutine(obj) else f"a {type(obj).__name__}"
        raise EnvSpecError(
            spec, f"{class_path!r} is {kind}, not a class; name the env class "
            f"itself ({ENV_SPEC_FORMAT!r})"
        )
    problems = protocol_problems(obj)
    if problems:
        hint = ""
        if not issubclass(obj, MetaEnv):
            hint = (" (subclassing meta_policy_search.envs.MetaEnv supplies "
                    + ", ".join(INHERITABLE_METHODS) + " and task_rng)")
        raise EnvSpecError(
            spec, f"class {obj.__qualname__} does not follow the MetaEnv protocol: "
            + "; ".join(problems) + hint
        )
    where = _import_problem(obj)
    if where:
        raise EnvSpecError(spec, where)
    return obj


def protocol_problems(cls: type) -> list[str]:
    """What ``cls`` misses of the protocol the samplers, wrappers and trainer call.

    Args:
        cls: a class.

    Returns:
        One message per problem, each naming the missing or unimplemented member and its
        expected signature (empty if ``cls`` follows the protocol).
    """

    problems = []
    if not issubclass(cls, gym.Env):
        problems.append(
            "it is not a subclass of gymnasium.Env (normalize() and OracleEnv wrap the env in "
            "gymnasium wrappers, which require one)"
        )
    for name, signature in REQUIRED_METHODS.items():
        method = getattr(cls, name, None)
        placeholders = [getattr(base, name, None) for base in (MetaEnv, gym.Env)]
        if method is None or not callable(method):
            problems.append(f"missing {signature}")
        elif any(method is placeholder for placeholder in placeholders if placeholder):
            problems.append(f"{signature} is not implemented (the base class's placeholder "
                            "raises NotImplementedError)")
    for name, signature in INHERITABLE_METHODS.items():
        if not callable(getattr(cls, name, None)):
            problems.append(f"missing {signature}")
    return problems


def check_env_instance(env: Any, spec: str) -> None:
    """Check what only a built user env shows: its spaces (the samplers need flat boxes) and its
    task generator (the sampler checkpoints its state).

    Args:
        env: the instance built from ``spec``.
        spec: named in the message.

    Raises:
        EnvSpecError: if ``observation_space`` or ``action_space`` is missing or not a 1-D
            :class:`gymnasium.spaces.Box`, or ``task_rng`` is not a
            :class:`numpy.random.Generator`.
    """
    task_rng = getattr(env, "task_rng", None)
    if not isinstance(task_rng, np.random.Generator):
        raise EnvSpecError(
            spec, f"the env's task_rng must be a numpy.random.Generator (seeded by seed_tasks, "
            f"drawn from by sample_tasks), got {task_rng!r}; subclass "
            "meta_policy_search.envs.MetaEnv to inherit it"
        )

    for name in ("observation_space", "action_space"):
        space = getattr(env, name, None)
        if space is None:
            raise EnvSpecError(
                spec, f"the env has no {name}; set self.{name} to a 1-D "
                "gymnasium.spaces.Box in __init__"
            )
        if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
            raise EnvSpecError(
                spec, f"{name} must be a 1-D gymnasium.spaces.Box, got {space!r}"
            )


def search_working_directory() -> None:
    """Append the working directory to ``sys.path`` (as ``python -m`` would put it first).

    The run scripts call this, so that ``--env mypkg.tasks:MyEnv`` finds a ``mypkg`` in the
    directory they are started from even though ``python experiments/x.py`` puts only
    ``experiments/`` on the path. Appended, not prepended: installed packages are not shadowed.
    Worker processes inherit the parent's ``sys.path``.
    """
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)


def _class_names(obj: Any) -> list[str]:
    return [name for name, value in vars(obj).items() if isinstance(value, type)]


def _import_problem(cls: type) -> str | None:
    """Why a worker could not import ``cls`` back by its module and qualified name, or None."""
    module = sys.modules.get(cls.__module__)
    found: Any = module
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
    if found is cls:
        return None
    return (
        f"class {cls.__qualname__} cannot be imported back as "
        f"{cls.__module__}.{cls.__qualname__}, which the parallel executor's worker processes do "
        "when they unpickle the env; define it at the top level of an importable module"
    )
