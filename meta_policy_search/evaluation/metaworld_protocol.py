"""Meta-World's meta-test protocol (Meta-World+), for ML1 and ML10 runs.

The benchmark's own evaluation, as Meta-World+ (McLean et al. 2025, arXiv:2505.11289) runs it:
``metalearning_evaluation`` and ``evaluation`` in ``metaworld/evaluation.py`` of metaworld 3.1.1
(PyPI; the same loop as github.com/Farama-Foundation/Metaworld at commit
182673d2081070593e68ce34a13f29118879788a), called with the settings of
``MetaworldMetaLearningConfig`` in ``metaworld_algorithms/envs/metaworld.py`` of
github.com/rainx0r/metaworld-algorithms at commit 30c9991f5e1e6e119d3f98266add3828390a038e
(``evaluation_num_episodes`` 3, ``evaluation_adaptation_steps`` 1,
``evaluation_adaptation_episodes`` 10, ``total_goals_per_task_test`` 40,
``total_goals_per_task_train`` 50, ``meta_batch_size`` 20, ``max_episode_steps`` 500). Pseudocode::

    slots: meta_batch_size envs, meta_batch_size / num_classes per env class of the split;
           the first goals_per_class goals of a class are dealt to its slots (goals[j::per_class])
    repeat num_evals = num_classes * goals_per_class / meta_batch_size times:
        every slot takes the next goal of its list (the list reshuffled whenever it starts over)
        policy <- pre-update parameters
        repeat adaptation_steps times:
            sample adaptation_episodes episodes per slot, stochastic actions, full horizon
            (no termination on success); one inner step on them
        evaluation: all slots step in lockstep with the *mean* action of their adapted policy;
            an episode ends at the first step with success (AutoTerminateOnSuccessWrapper of
            Meta-World) or after max_path_length steps, and the slot resets at once (SAME_STEP
            autoreset of gymnasium); per env class, the first
            evaluation_episodes episodes to end are counted (ties: lower slot first)
        round: success rate per class = successes among its counted episodes / evaluation_episodes;
               round success = mean over classes; round return = mean of the counted returns
    result: per-class success = mean over rounds; success_rate, mean_return = mean over rounds

So an episode succeeds if success occurs at any step, and a slot that succeeds quickly can supply
more than one of its class's counted episodes. Meta-World+ reports the test split (its
``evaluate_on_train`` is false for ML10); the train split (50 goals per class, 25 rounds for
ML10) is its ``evaluate_metalearning_on_train``. One difference from Meta-World's code: the goal
order within a cycle is a shuffle drawn from the evaluation seed, where Meta-World shuffles with
each env's own generator; which goals are evaluated is the same.

The functions here take the components of :func:`meta_policy_search.evaluation.setup.build_evaluation`
(``experiments/meta_testing.py --protocol metaworld`` is the front end) and return dicts; writing
them is the script's job.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from meta_policy_search.envs.metaworld_envs import METAWORLD_MAX_PATH_LENGTH, SPLITS
from meta_policy_search.evaluation.adaptation import default_eval_seed
from meta_policy_search.evaluation.run_loading import restore_run
from meta_policy_search.evaluation.setup import build_evaluation
from meta_policy_search.utils.validation import check_positive_int

PROTOCOL_SOURCE = (
    "metaworld 3.1.1 metaworld/evaluation.py (metalearning_evaluation, evaluation) with the "
    "settings of github.com/rainx0r/metaworld-algorithms@30c9991f5e1e6e119d3f98266add3828390a038e "
    "metaworld_algorithms/envs/metaworld.py (MetaworldMetaLearningConfig)"
)
"""Where the protocol comes from (recorded with every result)."""


@dataclasses.dataclass(frozen=True)
class MetaWorldProtocol:
    """Settings of Meta-World's meta-test protocol; the defaults are Meta-World+'s.

    Any other value no longer follows the benchmark's protocol (:meth:`is_benchmark_protocol`).
    """

    meta_batch_size: int = 20
    """Envs evaluated at once; a multiple of the split's number of env classes."""
    adaptation_steps: int = 1
    """Inner steps before the evaluation episodes."""
    adaptation_episodes: int = 10
    """Episodes per env sampled before each inner step."""
    evaluation_episodes: int = 3
    """Episodes counted per env class and round."""
    goals_per_class_test: int = 40
    """Goals of each test env class used (the first ones of the benchmark's list)."""
    goals_per_class_train: int = 50
    """Goals of each training env class used by the train split."""
    max_path_length: int = METAWORLD_MAX_PATH_LENGTH
    """Horizon of adaptation and evaluation episodes."""
    num_evals: int | None = None
    """Rounds; ``None``: ``num_classes x goals_per_class / meta_batch_size`` (every goal once)."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not (field.name == "num_evals" and value is None):
                check_positive_int(field.name, value)

    @classmethod
    def from_json(cls, text: str | None) -> MetaWorldProtocol:
        """The protocol with the fields of a JSON object changed (``None``: Meta-World+'s).

        Raises:
            ValueError: if ``text`` is not a JSON object of this class's fields, or a value is
                not a positive integer.
        """
        if text is None:
            return cls()
        try:
            values = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"not JSON ({error})") from None
        fields = sorted(f.name for f in dataclasses.fields(cls))
        if not isinstance(values, dict) or set(values) - set(fields):
            raise ValueError(f"must be a JSON object with keys among {fields}")
        return cls(**values)

    def goals_per_class(self, split: str) -> int:
        """Goals per env class used on ``split`` (``'train'`` or ``'test'``)."""
        return self.goals_per_class_test if _checked_split(split) == "test" \
            else self.goals_per_class_train

    def rounds(self, split: str, num_classes: int) -> int:
        """Number of rounds on ``split`` with ``num_classes`` env classes."""
        if self.num_evals is not None:
            return self.num_evals
        return max(1, num_classes * self.goals_per_class(split) // self.meta_batch_size)

    def is_benchmark_protocol(self) -> bool:
        """Whether every setting is Meta-World+'s."""
        return self == MetaWorldProtocol()


def _checked_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    return split


def protocol_slots(tasks_by_class: dict[str, list[int]], goals_per_class: int,
                   meta_batch_size: int) -> list[tuple[str, list[int]]]:
    """Deal each env class's goals to its evaluation slots, as ``metaworld.make_ml_envs``.

    Args:
        tasks_by_class: env name -> its task indices in the benchmark's order (e.g.
            :meth:`~meta_policy_search.envs.metaworld_envs.MetaWorldBenchmarkEnv.tasks_by_class`).
        goals_per_class: how many of each class's first tasks are used.
        meta_batch_size: number of slots, a multiple of the number of classes.

    Returns:
        ``meta_batch_size`` pairs ``(env name, task indices)``, the classes in order, each class's
        ``meta_batch_size / num_classes`` slots getting ``tasks[j::slots_per_class]``.

    Raises:
        ValueError: if the slots cannot be dealt evenly, as Meta-World's assertions require.
    """
    num_classes = len(tasks_by_class)
    if num_classes == 0 or meta_batch_size % num_classes:
        raise ValueError(f"meta_batch_size {meta_batch_size} must be a multiple of the number of "
                         f"env classes ({num_classes})")
    per_class = meta_batch_size // num_classes
    slots = []
    for name, tasks in tasks_by_class.items():
        tasks = list(tasks)[:goals_per_class]
        if len(tasks) < per_class or len(tasks) % per_class:
            raise ValueError(f"{name}: {len(tasks)} goals cannot be dealt evenly to {per_class} "
                             f"slots (choose goals_per_class and meta_batch_size to divide)")
        slots += [(name, tasks[j::per_class]) for j in range(per_class)]
    return slots


class GoalCycle:
    """Each slot's next goal, as Meta-World's ``PseudoRandomTaskSelectWrapper``: the slot's goals
    in turn, reshuffled each time the list starts over.

    Args:
        slots: ``(env name, task indices)`` per slot (:func:`protocol_slots`).
        rng: the generator of the shuffles.
    """

    def __init__(self, slots: Sequence[tuple[str, list[int]]], rng: np.random.Generator) -> None:
        self._goals = [list(tasks) for _, tasks in slots]
        self._position = -1
        self._rng = rng

    def next_tasks(self) -> list[int]:
        """The next task of every slot (one round's tasks)."""
        self._position += 1
        tasks = []
        for goals in self._goals:
            index = self._position % len(goals)
            if index == 0:
                self._rng.shuffle(goals)
            tasks.append(goals[index])
        return tasks


def evaluation_episodes(
    envs: Sequence[Any],
    slot_classes: Sequence[str],
    act: Callable[[np.ndarray], np.ndarray],
    num_episodes: int,
    max_path_length: int,
) -> tuple[dict[str, float], dict[str, list[float]], int]:
    """Meta-World's ``evaluation``: lockstep episodes that end at success; the first ones count.

    Args:
        envs: one env per slot, its task set; ``step`` returns Meta-World's ``success`` info.
        slot_classes: env class of each slot.
        act: ``[num_slots, obs_dim]`` observations -> ``[num_slots, action_dim]`` actions.
        num_episodes: episodes counted per class.
        max_path_length: steps after which an episode is cut.

    Returns:
        ``(success rate per class, counted episode returns per class, env steps taken)``.
    """
    classes = list(dict.fromkeys(slot_classes))
    returns: dict[str, list[float]] = {name: [] for name in classes}
    successes = dict.fromkeys(classes, 0)
    observations = np.stack([np.asarray(env.reset()[0], dtype=np.float64) for env in envs])
    episode_return = np.zeros(len(envs))
    episode_length = np.zeros(len(envs), dtype=np.int64)
    num_steps = 0
    while any(len(values) < num_episodes for values in returns.values()):
        actions = act(observations)
        for slot, env in enumerate(envs):
            observation, reward, _, _, info = env.step(actions[slot])
            num_steps += 1
            episode_return[slot] += float(reward)
            episode_length[slot] += 1
            success = float(info["success"]) == 1.0  # Meta-World terminates on exactly this
            if success or episode_length[slot] >= max_path_length:
                name = slot_classes[slot]
                returns[name].append(float(episode_return[slot]))
                if len(returns[name]) <= num_episodes:
                    successes[name] += int(success)
                observation, _ = env.reset()
                episode_return[slot], episode_length[slot] = 0.0, 0
            observations[slot] = observation
    rates = {name: successes[name] / num_episodes for name in classes}
    return rates, {name: values[:num_episodes] for name, values in returns.items()}, num_steps


def evaluate_metaworld_protocol(
    algo: Any,
    policy: Any,
    sampler: Any,
    sample_processor: Any,
    env: Any,
    split: str = "test",
    protocol: MetaWorldProtocol | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Meta-test a policy by Meta-World's protocol (see the module docstring).

    Args:
        algo: the run's meta-algorithm; its ``adapt_policy(samples)`` is the inner step.
        policy: its ``MetaGaussianMLPPolicy``, built for ``protocol.meta_batch_size`` tasks; its
            shared parameters are not changed.
        sampler: a ``MetaSampler`` over ``policy`` with ``meta_batch_size`` tasks,
            ``adaptation_episodes`` rollouts per task and ``max_path_length`` of the protocol.
        sample_processor: the run's sample processor.
        env: the (possibly normalized) Meta-World env the sampler copies; evaluation envs are
            copied from it.
        split: ``'test'`` (held-out env classes) or ``'train'`` (the training classes).
        protocol: the settings; ``None``: Meta-World+'s.
        seed: seed of the goal shuffles.

    Returns:
        ``{'split', 'protocol', 'follows_benchmark_protocol', 'source', 'num_evals',
        'success_rate', 'mean_return', 'task_success_rates' (env name -> mean over rounds),
        'rounds' (per round: 'tasks', 'task_success_rates', 'success_rate', 'mean_return',
        'num_env_steps')}``.

    Raises:
        ValueError: if ``env`` is not a Meta-World benchmark env, or the sampler does not match the
            protocol's batch, episodes or horizon.
    """
    protocol = MetaWorldProtocol() if protocol is None else protocol
    benchmark = getattr(env, "unwrapped", env)
    if not hasattr(benchmark, "tasks_by_class"):
        raise ValueError(f"the Meta-World protocol needs a Meta-World benchmark env (ML1-<env>, "
                         f"ML10), got {type(benchmark).__name__}")
    expected = (protocol.meta_batch_size, protocol.adaptation_episodes, protocol.max_path_length)
    actual = (sampler.meta_batch_size, sampler.rollouts_per_meta_task, sampler.max_path_length)
    if actual != expected:
        raise ValueError(f"the sampler has (meta_batch_size, rollouts_per_meta_task, "
                         f"max_path_length) = {actual}, the protocol needs {expected}")
    by_class = benchmark.tasks_by_class(_checked_split(split))
    slots = protocol_slots(by_class, protocol.goals_per_class(split), protocol.meta_batch_size)
    slot_classes = [name for name, _ in slots]
    cycle = GoalCycle(slots, np.random.default_rng(seed))
    envs = [copy.deepcopy(env) for _ in slots]
    rounds = []
    try:
        for _ in range(protocol.rounds(split, len(by_class))):
            rounds.append(_one_round(algo, policy, sampler, sample_processor, envs, slot_classes,
                                     cycle.next_tasks(), protocol))
    finally:
        policy.switch_to_pre_update()
        for evaluation_env in envs:
            evaluation_env.close()
    classes = list(dict.fromkeys(slot_classes))
    return {
        "split": split,
        "protocol": dataclasses.asdict(protocol),
        "follows_benchmark_protocol": protocol.is_benchmark_protocol(),
        "source": PROTOCOL_SOURCE,
        "num_evals": len(rounds),
        "success_rate": float(np.mean([r["success_rate"] for r in rounds])),
        "mean_return": float(np.mean([r["mean_return"] for r in rounds])),
        "task_success_rates": {
            name: float(np.mean([r["task_success_rates"][name] for r in rounds]))
            for name in classes
        },
        "rounds": rounds,
    }


def _one_round(algo: Any, policy: Any, sampler: Any, sample_processor: Any, envs: list[Any],
               slot_classes: list[str], tasks: list[int],
               protocol: MetaWorldProtocol) -> dict[str, Any]:
    sampler.set_tasks(tasks)
    policy.switch_to_pre_update()
    num_env_steps = 0
    for _ in range(protocol.adaptation_steps):
        paths = sampler.obtain_samples()
        num_env_steps += int(paths.num_env_steps)
        algo.adapt_policy(sample_processor.process_samples(paths))
    for evaluation_env, task in zip(envs, tasks):
        evaluation_env.set_task(task)
    sampling_policy = policy.get_sampling_policy()

    def mean_action(observations: np.ndarray) -> np.ndarray:
        mean, _ = sampling_policy.distribution(observations[:, None, :])
        return np.asarray(mean)[:, 0, :]

    rates, returns, steps = evaluation_episodes(envs, slot_classes, mean_action,
                                                protocol.evaluation_episodes,
                                                protocol.max_path_length)
    return {
        "tasks": [int(task) for task in tasks],
        "task_success_rates": rates,
        "success_rate": float(np.mean(list(rates.values()))),
        "mean_return": float(np.mean([value for values in returns.values() for value in values])),
        "num_env_steps": num_env_steps + steps,
    }


def evaluate_run(
    run_dir: str,
    config: Any,
    algo_name: str,
    make_algo: Callable[[Any, Any], Any],
    make_sample_processor: Callable[[Any], Any],
    splits: Sequence[str] = ("test",),
    protocol: MetaWorldProtocol | None = None,
    seed: int | None = None,
    executor: str | None = None,
    random_init: bool = True,
    checkpoint: str = "latest",
) -> dict[str, Any]:
    """Meta-test a Meta-World run, and the random-init baseline, by the benchmark's protocol.

    Rebuilds the run's components with :func:`meta_policy_search.evaluation.setup.build_evaluation`
    (the protocol's batch, episodes and horizon; ``rollouts`` sampling), restores its checkpoint
    and runs :func:`evaluate_metaworld_protocol` on every split; the baseline gets the same goals
    and seeds.

    Args:
        run_dir: a run of an ``ML10`` or ``ML1-<env>`` env.
        config: its config (:func:`meta_policy_search.evaluation.run_loading.load_run_config`).
        algo_name: its ``params.json`` ``algo``: the label of its results.
        make_algo: its script's ``make_algo(config, policy)``.
        make_sample_processor: its script's sample processor builder.
        splits: ``'test'`` and/or ``'train'``.
        protocol: the settings; ``None``: Meta-World+'s.
        seed: evaluation seed; ``None``: the run's seed + 10000.
        executor: the sampler's executor; ``None``: the run's.
        random_init: also evaluate a freshly initialised policy.
        checkpoint: ``'latest'``, ``'best'`` or a kept iteration number.

    Returns:
        ``{'run_dir', 'algo', 'env', 'env_kwargs', 'reward_function_version', 'seed',
        'checkpoint', 'checkpoint_itr', 'policies'}``, ``policies``: label -> split -> result.

    Raises:
        FileNotFoundError: if the run has no complete checkpoint.
        ValueError: if the run's env is not a Meta-World benchmark env.
    """
    protocol = MetaWorldProtocol() if protocol is None else protocol
    seed = default_eval_seed(config.seed) if seed is None else int(seed)
    config = dataclasses.replace(config, max_path_length=protocol.max_path_length,
                                 sampling_mode="rollouts")
    results: dict[str, Any] = {
        "run_dir": os.path.abspath(run_dir), "algo": algo_name, "env": config.env,
        "env_kwargs": config.env_kwargs, "seed": seed, "checkpoint": checkpoint, "policies": {},
    }
    for label in [algo_name] + (["random-init"] if random_init else []):
        setup = build_evaluation(config, make_algo, make_sample_processor,
                                            protocol.meta_batch_size, seed,
                                            protocol.adaptation_episodes, executor)
        try:
            if label == algo_name:
                results["checkpoint_itr"] = restore_run(run_dir, setup.algo,
                                                                   setup.policy, checkpoint)
                results["reward_function_version"] = getattr(
                    getattr(setup.env, "unwrapped", setup.env), "reward_function_version", None)
            results["policies"][label] = {
                split: evaluate_metaworld_protocol(setup.algo, setup.policy, setup.sampler,
                                                   setup.sample_processor, setup.env, split=split,
                                                   protocol=protocol, seed=seed)
                for split in splits
            }
        finally:
            setup.sampler.close()
    return results


# ---------------------------------------------------------------------------- tables
SUCCESS_CSV_FIELDS = ("policy", "split", "task", "success_rate")
"""Columns of the per-task success table (CSV)."""


def success_table_csv(results: dict[str, dict[str, Any]]) -> str:
    """The per-task success table as CSV, one row per policy, split and env class, and a row
    ``task = mean`` per policy and split (the protocol's success rate).

    Args:
        results: policy label -> split -> :func:`evaluate_metaworld_protocol`'s result.
    """
    buffer = io.StringIO()
    buffer.write(",".join(SUCCESS_CSV_FIELDS) + "\n")
    for label, splits in results.items():
        for split, result in splits.items():
            for task, rate in [*result["task_success_rates"].items(),
                               ("mean", result["success_rate"])]:
                buffer.write(f"{label},{split},{task},{rate:.6g}\n")
    return buffer.getvalue()


def success_table_markdown(results: dict[str, dict[str, Any]]) -> str:
    """The per-task success table as markdown: per split, one row per env class and a ``mean``
    row, one column per policy.

    Args:
        results: policy label -> split -> :func:`evaluate_metaworld_protocol`'s result.
    """
    labels = list(results)
    splits = list(dict.fromkeys(split for splits in results.values() for split in splits))
    lines = []
    for split in splits:
        columns = [label for label in labels if split in results[label]]
        first = results[columns[0]][split]
        lines += [f"### {split} split: success rate after adaptation "
                  f"({first['num_evals']} rounds; "
                  + ("Meta-World+'s protocol" if first["follows_benchmark_protocol"]
                     else "NOT Meta-World+'s protocol: " + _settings(first["protocol"]))
                  + ")", "",
                  "| task | " + " | ".join(columns) + " |",
                  "|---|" + "---|" * len(columns)]
        for task in first["task_success_rates"]:
            lines.append(f"| {task} | " + " | ".join(
                f"{results[label][split]['task_success_rates'][task]:.3f}" for label in columns)
                + " |")
        lines.append("| **mean** | " + " | ".join(
            f"**{results[label][split]['success_rate']:.3f}**" for label in columns) + " |")
        lines.append("")
    return "\n".join(lines)


def results_markdown(results: dict[str, Any]) -> str:
    """:func:`evaluate_run`'s result as markdown: a line naming the run, then the tables of
    :func:`success_table_markdown`."""
    header = (f"# {results['algo']} on {results['env']} (reward "
              f"{results.get('reward_function_version')}): checkpoint {results['checkpoint']}, "
              f"iteration {results.get('checkpoint_itr')}, evaluation seed {results['seed']}\n\n")
    return header + success_table_markdown(results["policies"])


def _settings(protocol: dict[str, Any]) -> str:
    default = dataclasses.asdict(MetaWorldProtocol())
    return ", ".join(f"{key} {value}" for key, value in protocol.items()
                     if value != default[key])
