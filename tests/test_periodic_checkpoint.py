"""--keep_every: the checkpoint of every N-th iteration is kept beside the newest one."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from meta_policy_search.experiment.configs import ProMPConfig, validate_config
from meta_policy_search.periodic_checkpoint import (
    PeriodicCheckpointCallback,
    kept_checkpoint_dir,
    kept_iterations,
)
from meta_policy_search.utils.checkpoint import restore_checkpoint


class RecordingTrainer:
    def __init__(self) -> None:
        self.saved: list[tuple[int, str]] = []

    def save(self, itr, checkpoint_dir=None, extra_state=None):
        self.saved.append((itr, checkpoint_dir))


def test_keeps_every_nth_iteration_in_its_own_directory(tmp_path):
    callback = PeriodicCheckpointCallback(3, str(tmp_path))
    trainer = RecordingTrainer()
    for itr in range(8):
        callback(trainer, itr, {})
    assert trainer.saved == [(2, str(tmp_path / "checkpoints_every" / "itr_000002")),
                             (5, str(tmp_path / "checkpoints_every" / "itr_000005"))]


@pytest.mark.parametrize("every", [0, -1, 2.0, True])
def test_rejects_a_bad_period(every, tmp_path):
    with pytest.raises(ValueError, match=f"keep_every must be an integer >= 1, got {every!r}"):
        PeriodicCheckpointCallback(every, str(tmp_path))


@pytest.mark.parametrize("every, ok", [(None, True), (1, True), (25, True), (0, False)])
def test_config_checks_keep_every(every, ok):
    errors = validate_config(ProMPConfig(keep_every=every))
    assert errors == ([] if ok else [f"--keep_every {every}: must be an integer >= 1, or none"])


def _scripts():
    experiments = os.path.join(os.path.dirname(__file__), os.pardir, "experiments")
    sys.path.insert(0, experiments)
    try:
        import meta_testing
        from promp_run_point_mass import main as train_point_mass
    finally:
        sys.path.remove(experiments)
    return meta_testing, train_point_mass


TINY = ["--meta_batch_size", "2", "--rollouts_per_meta_task", "2", "--max_path_length", "10",
        "--hidden_sizes", "8", "--log_formats", "csv"]


def test_kept_checkpoint_is_the_run_at_that_iteration_and_meta_tests(tmp_path, capsys):
    """A 5-iteration point-mass run keeping every 2nd iteration holds iterations 1 and 3; the
    kept iteration 1 has the parameters a 2-iteration run of the same seed ends with, and
    meta_testing.py --checkpoint 1 evaluates it."""
    from meta_policy_search.utils import logger

    meta_testing, train_point_mass = _scripts()
    long_run, short_run = str(tmp_path / "long"), str(tmp_path / "short")
    try:
        train_point_mass(TINY + ["--n_itr", "5", "--keep_every", "2", "--dump_path", long_run])
        train_point_mass(TINY + ["--n_itr", "2", "--dump_path", short_run])
    finally:
        logger.reset()
    assert kept_iterations(long_run) == [1, 3]
    kept = restore_checkpoint(kept_checkpoint_dir(long_run, 1))
    assert kept["itr"] == 1
    assert restore_checkpoint(os.path.join(long_run, "checkpoints"))["itr"] == 4
    kept_params = _policy_params(kept_checkpoint_dir(long_run, 1))
    short_params = _policy_params(os.path.join(short_run, "checkpoints"))
    last_params = _policy_params(os.path.join(long_run, "checkpoints"))
    assert kept_params.keys() == short_params.keys()
    for name in kept_params:
        np.testing.assert_array_equal(kept_params[name], short_params[name])
    assert any(not np.array_equal(kept_params[n], last_params[n]) for n in kept_params)

    out = str(tmp_path / "eval")
    meta_testing.main([long_run, "--checkpoint", "1", "--n_tasks", "1", "--num_adapt_steps", "0",
                       "--rollouts_per_task", "1", "--no_random_init", "--output_dir", out])
    with open(os.path.join(out, "meta_test.json")) as f:
        results = json.load(f)
    assert (results["checkpoint"], results["checkpoint_itr"]) == ("1", 1)

    capsys.readouterr()
    for value, message in (("2", "kept no checkpoint of iteration 2; it kept 1, 3"),
                           ("last", "checkpoint must be latest, best or an iteration number")):
        with pytest.raises(SystemExit) as error:
            meta_testing.main([long_run, "--checkpoint", value, "--output_dir", out])
        assert error.value.code == 2 and message in capsys.readouterr().err


def _policy_params(checkpoint_dir):
    """The policy's parameter arrays of the newest checkpoint of ``checkpoint_dir``."""
    import tensorflow as tf

    from meta_policy_search.utils.checkpoint_lookup import latest_checkpoint

    reader = tf.train.load_checkpoint(os.path.join(str(latest_checkpoint(checkpoint_dir)),
                                                   "tf_state"))
    names = [name for name in reader.get_variable_to_shape_map() if "policy" in name
             and "OPTIMIZER_SLOT" not in name and name.endswith("VARIABLE_VALUE")]
    assert names, "no policy variables found in the checkpoint"
    return {name: reader.get_tensor(name) for name in sorted(names)}


def test_a_kept_checkpoint_protects_the_run_and_overwrite_removes_it(tmp_path):
    import tensorflow as tf

    from meta_policy_search.experiment.run_checks import existing_run, remove_training_outputs
    from meta_policy_search.utils.checkpoint import save_checkpoint

    save_checkpoint(kept_checkpoint_dir(str(tmp_path), 4), 4, {"v": tf.Variable(1.0)}, {"itr": 4})
    assert existing_run(str(tmp_path)) == "a --keep_every checkpoint"
    assert "checkpoints_every" in remove_training_outputs(str(tmp_path))
    assert existing_run(str(tmp_path)) == "" and kept_iterations(str(tmp_path)) == []
