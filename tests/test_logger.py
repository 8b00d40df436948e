"""Logger: CSV widening, key/value semantics, TensorBoard events, snapshots, atomic writes."""

import csv
import json
import os

import joblib
import numpy as np
import pytest

from meta_policy_search.utils import atomic_open, atomic_write_bytes, atomic_write_json, logger
from meta_policy_search.utils.serialization import TEMP_PREFIX


@pytest.fixture(autouse=True)
def _reset_logger():
    yield
    logger.reset()


def temp_files(directory):
    return [name for name in os.listdir(directory) if name.startswith(TEMP_PREFIX)]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_csv_columns_appearing_later_widen_the_header(tmp_path):
    logger.configure(dir=str(tmp_path), format_strs=("csv",))
    logger.logkv("Itr", 0)
    logger.logkv("AverageReturn", -12.5)
    logger.dumpkvs()
    logger.logkv("Itr", 1)
    logger.logkv("KL", 0.25)  # new column
    logger.logkv("AverageReturn", 3.0)
    logger.dumpkvs()
    logger.logkv("Itr", 2)
    logger.logkv("Note", "a, \"quoted\" string")  # another one, with CSV special characters
    logger.dumpkvs()
    rows = read_csv(tmp_path / "progress.csv")
    with open(tmp_path / "progress.csv", newline="") as f:
        header = next(csv.reader(f))
    assert header == ["Itr", "AverageReturn", "KL", "Note"]
    assert rows == [
        {"Itr": "0", "AverageReturn": "-12.5", "KL": "", "Note": ""},
        {"Itr": "1", "AverageReturn": "3.0", "KL": "0.25", "Note": ""},
        {"Itr": "2", "AverageReturn": "", "KL": "", "Note": 'a, "quoted" string'},
    ]
    assert temp_files(tmp_path) == []


def test_csv_floats_round_trip_exactly(tmp_path):
    logger.configure(dir=str(tmp_path), format_strs=("csv",))
    value = 1.0 / 3.0
    logger.logkv("x", np.float64(value))
    logger.dumpkvs()
    assert float(read_csv(tmp_path / "progress.csv")[0]["x"]) == value


def test_append_continues_an_existing_csv(tmp_path):
    logger.configure(dir=str(tmp_path), format_strs=("csv", "log"))
    logger.logkv("Itr", 0)
    logger.dumpkvs()
    logger.configure(dir=str(tmp_path), format_strs=("csv", "log"), append=True)
    logger.logkv("Itr", 1)
    logger.logkv("New", 2.5)
    logger.dumpkvs()
    assert read_csv(tmp_path / "progress.csv") == [
        {"Itr": "0", "New": ""},
        {"Itr": "1", "New": "2.5"},
    ]
    assert (tmp_path / "log.txt").read_text().count("Logging to") == 2
    logger.configure(dir=str(tmp_path), format_strs=("csv",))  # no append: truncated
    logger.logkv("Itr", 5)
    logger.dumpkvs()
    assert read_csv(tmp_path / "progress.csv") == [{"Itr": "5"}]


def test_logkv_mean_dumpkvs_and_value_conversion(tmp_path):
    logger.configure(dir=str(tmp_path), format_strs=("csv",))
    for value in [1.0, 2.0, np.float32(6.0)]:
        logger.logkv_mean("mean", value)
    logger.logkv("overwritten", 1)
    logger.logkv("overwritten", np.array(7))
    logger.logkv("flag", True)
    dumped = logger.dumpkvs()
    assert dumped == {"mean": 3.0, "overwritten": 7, "flag": 1}
    assert type(dumped["overwritten"]) is int and type(dumped["mean"]) is float
    assert logger.dumpkvs() == {}  # cleared; empty dumps write no row
    logger.logkv_mean("mean", 10.0)  # the mean restarts after a dump
    assert logger.dumpkvs() == {"mean": 10.0}
    assert [row["mean"] for row in read_csv(tmp_path / "progress.csv")] == ["3.0", "10.0"]
    with pytest.raises(ValueError, match="'vector'"):
        logger.logkv("vector", np.ones(3))
    with pytest.raises(ValueError, match="logkv_mean"):
        logger.logkv_mean("name", "text")


def test_stdout_table_and_text_log(tmp_path, capsys):
    logger.configure(dir=str(tmp_path), format_strs=("stdout", "log"))
    logger.logkv("Step_0-AverageReturn", 1.5)
    logger.dumpkvs()
    logger.log("hello", 42)
    out = capsys.readouterr().out
    assert "| Step_0-AverageReturn | 1.5" in out and "hello 42" in out
    text = (tmp_path / "log.txt").read_text()
    assert "| Step_0-AverageReturn | 1.5" in text and text.rstrip().endswith("hello 42")


def test_tensorboard_event_file_written_and_readable(tmp_path):
    tf = pytest.importorskip("tensorflow")
    from tensorflow.core.util import event_pb2

    logger.configure(dir=str(tmp_path), format_strs=("tensorboard",))
    for itr in (3, 4):
        logger.logkv("Itr", itr)
        logger.logkv("AverageReturn", 10.0 * itr)
        logger.logkv("Name", "skipped")
        logger.dumpkvs()
    logger.logkv("NoItr", 1.0)  # without 'Itr' the step is the dump counter (2)
    logger.dumpkvs()
    logger.reset()
    event_files = [name for name in os.listdir(tmp_path) if name.startswith("events.out.tfevents")]
    assert len(event_files) == 1
    scalars = {}
    for record in tf.data.TFRecordDataset(str(tmp_path / event_files[0])):
        event = event_pb2.Event.FromString(record.numpy())
        for value in event.summary.value:
            assert value.metadata.plugin_data.plugin_name == "scalars"
            scalars[(value.tag, event.step)] = float(tf.make_ndarray(value.tensor))
    assert scalars == {
        ("Itr", 3): 3.0,
        ("AverageReturn", 3): 30.0,
        ("Itr", 4): 4.0,
        ("AverageReturn", 4): 40.0,
        ("NoItr", 2): 1.0,
    }


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("all", {f"itr_{i}.pkl" for i in range(5)}),
        ("last", {"params.pkl"}),
        ("gap", {"itr_0.pkl", "itr_2.pkl", "itr_4.pkl"}),
        ("last_gap", {"itr_0.pkl", "itr_2.pkl", "itr_4.pkl", "params.pkl"}),
        ("none", set()),
    ],
)
def test_save_itr_params_snapshot_modes(tmp_path, mode, expected):
    logger.configure(dir=str(tmp_path), format_strs=(), snapshot_mode=mode, snapshot_gap=2)
    for itr in range(5):
        logger.save_itr_params(itr, {"itr": itr, "w": np.full(3, float(itr))})
    assert set(os.listdir(tmp_path)) == expected
    for name in expected:
        loaded = joblib.load(tmp_path / name)
        itr = 4 if name == "params.pkl" else int(name[4:-4])
        assert loaded["itr"] == itr
        np.testing.assert_array_equal(loaded["w"], np.full(3, float(itr)))


def test_configure_validation_and_reset(tmp_path):
    with pytest.raises(ValueError, match="'parquet'"):
        logger.configure(dir=str(tmp_path), format_strs=("csv", "parquet"))
    with pytest.raises(ValueError, match="snapshot_mode"):
        logger.configure(dir=str(tmp_path), snapshot_mode="sometimes")
    with pytest.raises(ValueError, match="snapshot_gap"):
        logger.configure(dir=str(tmp_path), snapshot_gap=0)
    with pytest.raises(ValueError, match="itr"):
        logger.configure(dir=str(tmp_path), format_strs=()).save_itr_params(-1, {})
    logger.reset()
    assert logger.get_dir() is None
    with pytest.raises(RuntimeError, match="configure"):
        logger.save_itr_params(0, {})


def test_configure_without_dir_uses_a_fresh_temp_dir():
    log_dir = logger.configure(format_strs=("csv",)).dir
    try:
        assert logger.get_dir() == log_dir and os.path.isdir(log_dir)
        assert os.listdir(log_dir) == ["progress.csv"]
    finally:
        logger.reset()
        os.remove(os.path.join(log_dir, "progress.csv"))
        os.rmdir(log_dir)


def test_atomic_write_bytes_and_json(tmp_path):
    path = tmp_path / "state.bin"
    atomic_write_bytes(path, b"first")
    atomic_write_bytes(path, b"second")
    assert path.read_bytes() == b"second"
    json_path = tmp_path / "params.json"
    atomic_write_json(json_path, {"lr": np.float32(0.5), "sizes": np.array([64, 64]), "n": 3})
    assert json.loads(json_path.read_text()) == {"lr": 0.5, "sizes": [64, 64], "n": 3}
    with pytest.raises(TypeError, match="object"):
        atomic_write_json(json_path, {"bad": object()})
    assert json.loads(json_path.read_text())["n"] == 3  # untouched by the failed write
    assert temp_files(tmp_path) == []


def test_atomic_open_failure_leaves_destination_and_no_temp_file(tmp_path):
    path = tmp_path / "checkpoint.pkl"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="crash"):
        with atomic_open(path) as f:
            f.write(b"half-written")
            assert temp_files(tmp_path) != []  # the data goes to a temp file first
            raise RuntimeError("crash")
    assert path.read_bytes() == b"old"
    assert temp_files(tmp_path) == []
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(path, "ab"):
            pass
