"""Trainer loop and atomic checkpoints, with small duck-typed fakes for the components."""

from __future__ import annotations

import csv
import os
import time

import numpy as np
import pytest
import tensorflow as tf

from meta_policy_search import meta_trainer
from meta_policy_search.meta_trainer import Trainer
from meta_policy_search.types import PathBatch, SampleBatch
from meta_policy_search.utils import checkpoint as checkpoint_module
from meta_policy_search.utils import logger
from meta_policy_search.utils.checkpoint import restore_checkpoint, save_checkpoint
from meta_policy_search.utils.checkpoint_lookup import find_checkpoint, latest_checkpoint

T, R, H = 2, 3, 4
PADDED = 2


class FakeSampler:
    """Returns rollouts whose mask has a known, call-dependent number of real steps.

    Like the ``'budget'`` sampling mode, each batch has ``PADDED`` whole padded episodes (all
    zero, mask 0) after the ``R`` real ones.
    """

    nominal_timesteps_per_phase = T * R * H

    def __init__(self, calls: list, seed: int = 0) -> None:
        self.calls = calls
        self.rng = np.random.default_rng(seed)
        self.num_obtained = 0
        self.steps_per_call: list[int] = []

    def update_tasks(self) -> None:
        self.calls.append("update_tasks")

    def obtain_samples(self, log: bool = False, log_prefix: str = "") -> PathBatch:
        self.calls.append(f"sample:{log_prefix}")
        self.num_obtained += 1
        lengths = np.zeros((T, R + PADDED), np.int64)
        lengths[:, :R] = self.rng.integers(1, H + 1, size=(T, R))
        mask = (np.arange(H)[None, None, :] < lengths[..., None]).astype(np.float32)
        self.steps_per_call.append(int(mask.sum()))
        rewards = mask * np.float32(self.num_obtained)
        return PathBatch(
            observations=np.zeros((T, R + PADDED, H, 1), np.float32),
            actions=np.zeros((T, R + PADDED, H, 1), np.float32),
            rewards=rewards,
            mask=mask,
        )

    def get_state(self) -> dict:
        return {"rng": self.rng.bit_generator.state, "num_obtained": self.num_obtained}

    def set_state(self, state: dict) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.num_obtained = state["num_obtained"]


class FakeBaseline:
    def __init__(self) -> None:
        self.params = np.zeros(3)

    def get_param_values(self) -> np.ndarray:
        return self.params.copy()

    def set_param_values(self, values: np.ndarray) -> None:
        self.params = np.array(values)


class FakeProcessor:
    def __init__(self, calls: list) -> None:
        self.calls = calls
        self.baseline = FakeBaseline()

    def process_samples(self, paths: PathBatch, log: bool = False, log_prefix: str = ""):
        self.calls.append(f"process:{log_prefix}")
        self.baseline.params = self.baseline.params + 1.0
        if log:
            logger.logkv(log_prefix + "AverageReturn", float(paths.real_episode_returns().mean()))
        zeros = np.zeros_like(paths.rewards)
        return SampleBatch.from_paths(paths, returns=zeros, baselines=zeros, advantages=zeros)


class FakeAlgo:
    """Counts outer steps in a tf.Variable, so checkpoints carry TF state."""

    def __init__(self, calls: list, num_inner_grad_steps: int = 1) -> None:
        self.calls = calls
        self.num_inner_grad_steps = num_inner_grad_steps
        self.step = tf.Variable(0.0)
        self.inner_lr = tf.Variable([0.1, 0.2])

    def adapt_policy(self, samples: SampleBatch) -> None:
        assert isinstance(samples, SampleBatch)
        self.calls.append("adapt")

    def optimize_policy(self, all_samples_data: list) -> dict:
        self.calls.append(f"optimize:{len(all_samples_data)}")
        self.step.assign_add(1.0)
        self.inner_lr.assign(self.inner_lr * 2.0)
        return {"LossAfter": float(self.step.numpy()), "MeanKL": 0.5}

    def checkpoint_state(self) -> dict:
        return {"algo_step": self.step, "inner_lr": self.inner_lr}


class FakePolicy:
    def __init__(self, calls: list) -> None:
        self.calls = calls
        self.params = {"W0": tf.Variable(np.ones((1, 2), np.float32))}

    def switch_to_pre_update(self) -> None:
        self.calls.append("switch_to_pre_update")

    def get_params(self) -> dict:
        return self.params

    def get_sampling_policy(self):
        """Per-task log stds whose mean std (1.875) differs from exp(mean log std) (1.414)."""
        from types import SimpleNamespace

        log_std = np.log(np.array([[0.5, 1.0], [2.0, 4.0]], np.float32))
        return SimpleNamespace(params={"log_std": log_std}, min_log_std=float(np.log(1e-6)))


class FakeEnv:
    def __init__(self, seed: int = 0) -> None:
        self._task_rng = np.random.default_rng(seed)

    @property
    def unwrapped(self):
        return self

    @property
    def task_rng(self) -> np.random.Generator:
        return self._task_rng

    def log_diagnostics(self, paths: PathBatch, prefix: str = "") -> dict:
        return {prefix + "AvgDiag": float(paths.mask.mean())}


def make_trainer(tmp_path, n_itr, num_inner_grad_steps=1, checkpoint=True, seed=0, **kw):
    calls: list = []
    trainer = Trainer(
        algo=FakeAlgo(calls, num_inner_grad_steps),
        env=FakeEnv(seed),
        sampler=FakeSampler(calls, seed),
        sample_processor=FakeProcessor(calls),
        policy=FakePolicy(calls),
        n_itr=n_itr,
        checkpoint_dir=str(tmp_path / "checkpoints") if checkpoint else None,
        **kw,
    )
    return trainer, calls


def read_csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def log_dir(tmp_path):
    logger.configure(dir=str(tmp_path), format_strs=["csv"])
    yield tmp_path
    logger.reset()


def test_call_order_follows_the_meta_iteration(log_dir):
    trainer, calls = make_trainer(log_dir, n_itr=1, num_inner_grad_steps=2, checkpoint=False)
    trainer.train()
    assert calls == [
        "update_tasks",
        "switch_to_pre_update",
        "sample:Step_0-",
        "process:Step_0-",
        "adapt",
        "sample:Step_1-",
        "process:Step_1-",
        "adapt",
        "sample:Step_2-",
        "process:Step_2-",
        "optimize:3",
    ]


def test_progress_csv_keys_and_cumulative_timesteps(log_dir, capsys):
    trainer, _ = make_trainer(log_dir, n_itr=3, num_inner_grad_steps=1, checkpoint=False)
    all_stats = []
    trainer.callbacks = (lambda tr, itr, stats: all_stats.append(stats),)
    trainer.train()
    rows = read_csv(log_dir / "progress.csv")
    assert [int(r["Itr"]) for r in rows] == [0, 1, 2]
    expected_keys = {
        "Itr", "n_timesteps", "n_timesteps_real", "Time", "ItrTime", "Time-Sampling", "Time-SampleProc",
        "Time-InnerStep", "Time-TotalInner", "Time-OuterStep", "LossAfter", "MeanKL",
        "Step_0-AverageReturn", "Step_1-AverageReturn", "Step_0-AvgDiag", "Step_1-AvgDiag",
    }
    assert expected_keys <= set(rows[0])
    # Two sampling calls per iteration: n_timesteps counts the nominal T x R x H steps of both
    # (the paper's x-axis), n_timesteps_real the real (unmasked) steps.
    assert [int(r["n_timesteps"]) for r in rows] == [2 * T * R * H * (i + 1) for i in range(3)]
    steps = trainer.sampler.steps_per_call
    cumulative = np.cumsum(np.add.reduceat(steps, [0, 2, 4]))
    assert [int(r["n_timesteps_real"]) for r in rows] == cumulative.tolist()
    assert trainer.n_timesteps_real == sum(steps)
    assert [float(r["LossAfter"]) for r in rows] == [1.0, 2.0, 3.0]
    # The original's keys: the policies' mean action std per step, and the outer step's time.
    assert all(float(r["Step_1-AveragePolicyStd"]) == pytest.approx(1.875) for r in rows)
    assert all(float(r["Time-MAMLSteps"]) >= float(r["Time-OuterStep"]) for r in rows)
    # Step_1 return: rewards equal the call number (2 in itr 0) on each real step; the average
    # is over the T x R real episodes, not the padded ones.
    mask_steps_call2 = steps[1]
    assert all_stats[0]["Step_1-AverageReturn"] == pytest.approx(2.0 * mask_steps_call2 / (T * R))
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("itr ")]
    assert len(lines) == 3 and "ETA" in lines[-1] and lines[-1].startswith("itr 2/2")


def test_the_trainer_alone_logs_the_algorithm_statistics(log_dir):
    trainer, _ = make_trainer(log_dir, n_itr=2, checkpoint=False)
    trainer.train()
    rows = read_csv(log_dir / "progress.csv")
    assert [float(r["LossAfter"]) for r in rows] == [1.0, 2.0]


def test_checkpoint_every_iteration_and_resume(log_dir):
    ckpt_dir = str(log_dir / "checkpoints")
    trainer, _ = make_trainer(log_dir, n_itr=3)
    saved_itrs = []
    trainer.callbacks = (
        lambda tr, itr, stats: saved_itrs.append(restore_checkpoint(ckpt_dir)["itr"]),
    )
    trainer.train()
    assert saved_itrs == [0, 1, 2]
    n_timesteps_after_3 = trainer.n_timesteps
    n_timesteps_real_after_3 = trainer.n_timesteps_real
    assert n_timesteps_after_3 == 3 * 2 * T * R * H != n_timesteps_real_after_3

    # An uninterrupted 5-iteration run, for comparison (logged elsewhere).
    logger.configure(dir=str(log_dir / "ref"), format_strs=["csv"])
    reference, _ = make_trainer(log_dir / "ref", n_itr=5, checkpoint=False)
    reference.train()
    logger.configure(dir=str(log_dir), format_strs=["csv"], append=True)

    # Rebuild fresh components and continue to 5 iterations.
    resumed, calls = make_trainer(log_dir, n_itr=5)
    assert resumed.restore() == 3
    assert resumed.start_itr == 3
    assert resumed.algo.step.numpy() == 3.0
    np.testing.assert_allclose(resumed.algo.inner_lr.numpy(), [0.8, 1.6])
    np.testing.assert_array_equal(resumed.sample_processor.baseline.params, np.full(3, 6.0))
    assert resumed.n_timesteps == n_timesteps_after_3
    assert resumed.n_timesteps_real == n_timesteps_real_after_3
    assert resumed.elapsed_seconds == trainer.elapsed_seconds > 0
    assert resumed.sampler.num_obtained == 6
    resumed.train()
    assert calls.count("update_tasks") == 2
    assert resumed.algo.step.numpy() == 5.0
    # Same RNG streams restored: the resumed run sampled exactly what the reference did.
    assert resumed.n_timesteps == reference.n_timesteps
    assert resumed.n_timesteps_real == reference.n_timesteps_real
    assert resumed.sampler.steps_per_call == reference.sampler.steps_per_call[6:]
    assert restore_checkpoint(ckpt_dir)["itr"] == 4
    rows = read_csv(log_dir / "progress.csv")
    assert [int(r["Itr"]) for r in rows] == [0, 1, 2, 3, 4]
    # Time is the training time summed over the resume: it keeps growing from iteration 2 to 3.
    times = [float(r["Time"]) for r in rows]
    assert times == sorted(times) and times[3] >= times[2] + float(rows[3]["ItrTime"]) * 0.99


def test_resume_from_a_checkpoint_without_the_real_step_count(log_dir):
    """Checkpoints written before n_timesteps_real stored the real count as n_timesteps."""
    trainer, _ = make_trainer(log_dir, n_itr=2, num_inner_grad_steps=2)
    trainer.train()
    old_state = trainer._side_state()
    real = old_state.pop("n_timesteps_real")
    old_state["n_timesteps"] = real
    save_checkpoint(trainer.checkpoint_dir, 1, trainer._trackables(), old_state)

    resumed, _ = make_trainer(log_dir, n_itr=3, num_inner_grad_steps=2)
    assert resumed.restore() == 2
    assert resumed.n_timesteps_real == real
    assert resumed.n_timesteps == 2 * 3 * T * R * H  # nominal: 2 iterations of K + 1 = 3 phases


class StatelessSampler(FakeSampler):
    """A user's sampler without ``get_state``: the Trainer saves the env's task RNG itself."""

    def __getattribute__(self, name):
        if name in ("get_state", "set_state"):
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_the_env_task_rng_is_saved_once(log_dir):
    """With a sampler that keeps state, the task RNG is the sampler's to save (MetaSampler's state
    holds it); without one, the Trainer saves it through the env's public ``task_rng``."""
    trainer, _ = make_trainer(log_dir, n_itr=1)
    assert "env_task_rng" not in trainer._side_state()

    stateless, _ = make_trainer(log_dir, n_itr=1)
    stateless.sampler = StatelessSampler([], 0)
    stateless.env.task_rng.random(3)  # moves the state away from the seed's
    saved = stateless.env.task_rng.bit_generator.state
    side_state = stateless._side_state()
    assert "sampler" not in side_state and side_state["env_task_rng"] == saved
    save_checkpoint(stateless.checkpoint_dir, 0, stateless._trackables(), side_state)

    resumed, _ = make_trainer(log_dir, n_itr=2)
    resumed.sampler = StatelessSampler([], 0)
    assert resumed.env.task_rng.bit_generator.state != saved
    assert resumed.restore() == 1
    assert resumed.env.task_rng.bit_generator.state == saved


def test_an_older_checkpoint_with_two_copies_of_the_task_rng_resumes(log_dir):
    """Checkpoints written before the Trainer left the task RNG to the sampler also hold it as
    ``env_task_rng``; they resume, the sampler's state restoring it."""
    trainer, _ = make_trainer(log_dir, n_itr=1)
    trainer.train()
    old_state = trainer._side_state()
    old_state["env_task_rng"] = trainer.env.task_rng.bit_generator.state
    save_checkpoint(trainer.checkpoint_dir, 0, trainer._trackables(), old_state)

    resumed, _ = make_trainer(log_dir, n_itr=2)
    assert resumed.restore() == 1
    assert resumed.sampler.num_obtained == trainer.sampler.num_obtained


def test_callback_can_stop_training(log_dir):
    trainer, calls = make_trainer(log_dir, n_itr=10, checkpoint=False)
    trainer.callbacks = (lambda tr, itr, stats: itr < 1,)
    trainer.train()
    assert calls.count("update_tasks") == 2


@pytest.mark.parametrize("kwargs", [
    {"n_itr": -1}, {"n_itr": 2, "start_itr": -3},
    {"n_itr": 2, "algo": FakeAlgo([], num_inner_grad_steps=1.5)},
    {"n_itr": 2, "algo": None},
])
def test_trainer_rejects_bad_counts(kwargs):
    """The Trainer checks its counts and reads the inner steps from the algorithm."""
    kwargs = {"algo": FakeAlgo([]), **kwargs}
    with pytest.raises(ValueError, match="non-negative integer"):
        Trainer(env=None, sampler=None, sample_processor=None, policy=None, **kwargs)


def _trackables(value: float):
    return {"v": tf.Variable(value), "nested": {"w": tf.Variable([value, 2 * value])}}


def test_checkpoint_round_trip(tmp_path):
    save_checkpoint(str(tmp_path), 7, _trackables(3.0), {"rng": {"a": np.arange(3)}})
    fresh = _trackables(0.0)
    state = restore_checkpoint(str(tmp_path), fresh)
    assert state["itr"] == 7
    np.testing.assert_array_equal(state["rng"]["a"], np.arange(3))
    assert fresh["v"].numpy() == 3.0
    np.testing.assert_array_equal(fresh["nested"]["w"].numpy(), [3.0, 6.0])


def test_failed_save_leaves_previous_checkpoint_intact(tmp_path, monkeypatch):
    directory = str(tmp_path)
    save_checkpoint(directory, 1, _trackables(1.0), {"tag": "first"})
    save_checkpoint(directory, 2, _trackables(2.0), {"tag": "second"})

    # Crash while writing the new checkpoint (after its tensors and side file).
    def exploding(*args, **kwargs):
        raise OSError("disk full (simulated)")

    with monkeypatch.context() as patch:
        patch.setattr(checkpoint_module, "checkpoint_manifest", exploding)
        with pytest.raises(OSError, match="simulated"):
            save_checkpoint(directory, 3, _trackables(3.0), {"tag": "third"})
    fresh = _trackables(0.0)
    state = restore_checkpoint(directory, fresh)
    assert state["tag"] == "second" and state["itr"] == 2
    assert fresh["v"].numpy() == 2.0
    assert os.path.basename(latest_checkpoint(directory)) == "itr_000002"

    # Crash after the new directory is complete and in place but before the pointer moves: the
    # scan finds the new checkpoint (it verifies) and reports the stale pointer.
    with monkeypatch.context() as patch:
        patch.setattr(checkpoint_module, "atomic_write_bytes", exploding)
        with pytest.raises(OSError, match="simulated"):
            save_checkpoint(directory, 3, _trackables(3.0), {"tag": "third"})
    lookup = find_checkpoint(directory)
    assert lookup.state["tag"] == "third"
    assert lookup.notes() == [f"{os.path.join(directory, 'latest')} names itr_000002, an older "
                              "checkpoint; found itr_000003 by scanning instead"]

    # The next save succeeds and cleans up what the crashes left behind.
    save_checkpoint(directory, 4, _trackables(4.0), {"tag": "fourth"})
    assert restore_checkpoint(directory)["tag"] == "fourth"
    assert sorted(os.listdir(directory)) == ["itr_000004", "latest"]


def test_restore_without_checkpoint_raises(tmp_path):
    with pytest.raises(FileNotFoundError, match="no complete checkpoint"):
        restore_checkpoint(str(tmp_path))


def test_dice_algorithm_needs_a_processor_with_adjusted_rewards():
    from meta_policy_search.baselines import ZeroBaseline
    from meta_policy_search.meta_algos import TRPOMAML
    from meta_policy_search.policies import MetaGaussianMLPPolicy
    from meta_policy_search.samplers import DiceSampleProcessor, MetaSampleProcessor

    policy = MetaGaussianMLPPolicy(T, 1, 1, hidden_sizes=(2,), seed=0)
    algo = TRPOMAML(policy, inner_type="dice")
    with pytest.raises(ValueError, match="MetaSampleProcessor computes none: use a DiceSampleProcessor"):
        Trainer(algo, FakeEnv(), None, MetaSampleProcessor(ZeroBaseline()), policy, n_itr=1)
    Trainer(algo, FakeEnv(), None, DiceSampleProcessor(ZeroBaseline(), max_path_length=H), policy,
            n_itr=1)
    lvc = TRPOMAML(policy, inner_type="likelihood_ratio")
    Trainer(lvc, FakeEnv(), None, MetaSampleProcessor(ZeroBaseline()), policy, n_itr=1)


# ---------------------------------------------------------------------------- non-finite guard
class NaNAlgo(FakeAlgo):
    """An outer step that writes NaN into the policy and a NaN loss at chosen iterations."""

    def __init__(self, calls: list, policy: FakePolicy, bad_steps: set[int]) -> None:
        super().__init__(calls)
        self.policy = policy
        self.bad_steps = bad_steps
        self.num_steps = 0

    def optimize_policy(self, all_samples_data: list) -> dict:
        stats = super().optimize_policy(all_samples_data)
        self.num_steps += 1
        if self.num_steps in self.bad_steps:
            self.policy.params["W0"].assign(self.policy.params["W0"] * np.nan)
            stats["LossAfter"] = float("nan")
        return stats

    def checkpoint_state(self) -> dict:
        return {**super().checkpoint_state(), "policy": dict(self.policy.params)}


def make_nan_trainer(tmp_path, n_itr, bad_steps, **kw):
    trainer, calls = make_trainer(tmp_path, n_itr, **kw)
    trainer.algo = NaNAlgo(calls, trainer.policy, bad_steps)
    return trainer


def test_non_finite_outer_step_is_rejected_and_restored(log_dir):
    trainer = make_nan_trainer(log_dir, n_itr=3, bad_steps={2})
    trainer.train()
    assert np.all(np.isfinite(trainer.policy.params["W0"].numpy()))
    # The rejected step's other variables were restored too: 2 accepted steps remain.
    assert trainer.algo.step.numpy() == 2.0
    np.testing.assert_allclose(trainer.algo.inner_lr.numpy(), [0.4, 0.8])
    rows = read_csv(log_dir / "progress.csv")
    assert [r["RejectedOuterSteps"] for r in rows] == ["0", "1", "1"]
    assert rows[1]["LossAfter"] == ""  # the non-finite statistic is not logged
    assert trainer.num_rejected_outer_steps == 1


def test_non_finite_outer_steps_in_a_row_stop_the_run(log_dir):
    from meta_policy_search.meta_trainer import NonFiniteError

    trainer = make_nan_trainer(log_dir, n_itr=10, bad_steps={2, 3, 4}, max_nonfinite_outer_steps=3)
    with pytest.raises(NonFiniteError, match="LossAfter, policy_params.W0.*3 rejected outer steps in a row"):
        trainer.train()
    # Checkpoints were written only with finite values (iterations 0 to 2).
    state = restore_checkpoint(str(log_dir / "checkpoints"), trainer._trackables())
    assert state["itr"] == 2
    assert np.all(np.isfinite(trainer.policy.params["W0"].numpy()))


def test_checkpoint_with_non_finite_values_is_never_written(tmp_path):
    variable = tf.Variable([1.0, np.inf])
    with pytest.raises(ValueError, match="non-finite values in .*bad"):
        save_checkpoint(str(tmp_path), 0, {"bad": variable}, {})
    with pytest.raises(ValueError, match="state.baseline"):
        save_checkpoint(str(tmp_path), 0, {}, {"baseline": np.array([np.nan])})
    assert latest_checkpoint(str(tmp_path)) is None


def test_progress_lines_number_like_progress_csv_and_the_eta_skips_graph_building(
        log_dir, capsys):
    """The first iteration (graph tracing) is slow; the ETA must not extrapolate it."""
    trainer, _ = make_trainer(log_dir, n_itr=4, checkpoint=False)
    optimize_policy = trainer.algo.optimize_policy
    first_call = [True]

    def slow_first_outer_step(*args, **kwargs):
        if first_call[0]:
            first_call[0] = False
            time.sleep(1.5)  # as tracing the graphs does
        return optimize_policy(*args, **kwargs)

    trainer.algo.optimize_policy = slow_first_outer_step
    trainer.train()
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("itr ")]
    rows = read_csv(log_dir / "progress.csv")
    assert [line.split(" |")[0] for line in lines] == [f"itr {r['Itr']}/3" for r in rows]
    assert lines[0].endswith("ETA ? (this itr built the graphs)")
    # 2 iterations left at the fast iterations' pace: well under a second (the running mean
    # including the first would say 0:00:02).
    assert lines[1].endswith("ETA 0:00:00") and lines[-1].endswith("ETA 0:00:00")
    assert meta_trainer.seconds_per_iteration([9.0, 1.0, 3.0]) == 2.0
    assert meta_trainer.seconds_per_iteration([9.0]) is None
