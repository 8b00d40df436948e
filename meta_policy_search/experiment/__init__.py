"""Experiment machinery: run-script configs, CLI parsing, builders, paper configs, the registry.

The top layer of the package: it builds envs, policies, samplers, sample processors and
meta-algorithms and hands them to the :class:`~meta_policy_search.meta_trainer.Trainer`, so it
may import everything; nothing below it imports it (``tests/test_layers.py``).
"""
