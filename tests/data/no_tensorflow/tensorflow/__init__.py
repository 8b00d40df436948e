"""Stands in for TensorFlow in tests that check a script refuses bad input before loading it."""

raise ImportError("tensorflow was imported before the input was checked (tests/data/no_tensorflow)")
