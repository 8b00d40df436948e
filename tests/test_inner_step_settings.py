"""The inner-step settings: one default and one check per value, shared by every algorithm and the
run scripts' configs."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from meta_policy_search.experiment import configs
from meta_policy_search.meta_algos.inner_step_settings import (
    DEFAULTS,
    FIELDS,
    MAML_INNER_TYPE,
    InnerStepSettings,
    invalid_settings,
)

ALGORITHM_DEFAULTS = {
    ("TRPOMAML", "jit_compile"): True,
    **{(name, "inner_type"): MAML_INNER_TYPE for name in ("TRPOMAML", "VPGMAML", "PPOMAML")},
}
"""The algorithm-specific defaults, documented in each class (XLA pays for TRPO's steps; the
algorithms named after MAML take MAML's inner objective)."""


def test_every_invalid_setting_is_named():
    bad = {"inner_lr": 0.0, "num_inner_grad_steps": -1, "inner_type": "lvc", "first_order": 1}
    assert [name for name, _, _ in invalid_settings(bad)] == list(bad)
    assert invalid_settings({"inner_lr": float("inf")}) == [
        ("inner_lr", float("inf"), "a finite number > 0")]
    with pytest.raises(ValueError, match=r"inner_lr must be a finite number > 0, got 0.0; "
                                         r"num_inner_grad_steps must be an integer >= 0, got -1"):
        InnerStepSettings(inner_lr=0.0, num_inner_grad_steps=-1)


def test_numpy_values_become_python_values():
    settings = InnerStepSettings(inner_lr=np.float32(0.5), num_inner_grad_steps=np.int64(2),
                                 first_order=np.bool_(True))
    assert (type(settings.inner_lr), type(settings.num_inner_grad_steps),
            type(settings.first_order)) == (float, int, bool)
    assert dataclasses.replace(settings, inner_type="dice").inner_type == "dice"


def test_the_configs_take_their_defaults_and_their_check_from_the_settings():
    config = configs.MetaRLConfig()
    for name in ("inner_lr", "num_inner_grad_steps", "trainable_inner_step_size", "first_order",
                 "jit_compile"):
        assert getattr(config, name) == getattr(DEFAULTS, name), name
    assert not set(FIELDS) & set(configs.FIELD_RULES), "checked twice"
    bad = configs.TRPOMAMLConfig(inner_lr=-1.0, inner_type="lvc")
    assert configs.validate_config(bad) == [
        "--inner_lr -1.0: must be a finite number > 0",
        "--inner_type lvc: must be one of likelihood_ratio, log_likelihood, dice",
    ]


def test_every_algorithm_signature_uses_the_one_default():
    from meta_policy_search import meta_algos

    for name in meta_algos.__all__:
        parameters = inspect.signature(getattr(meta_algos, name)).parameters
        for setting in FIELDS:
            if setting in parameters:
                expected = ALGORITHM_DEFAULTS.get((name, setting), getattr(DEFAULTS, setting))
                assert parameters[setting].default == expected, (name, setting)
        assert "meta_batch_size" not in parameters, f"{name}: the policy holds the task count"


def test_the_algorithm_stores_the_settings_and_reads_the_tasks_from_the_policy():
    from meta_policy_search.meta_algos import ProMP
    from meta_policy_search.policies import MetaGaussianMLPPolicy

    policy = MetaGaussianMLPPolicy(3, 2, 2, hidden_sizes=(4,), seed=0)
    algo = ProMP(policy, inner_lr=0.05, num_inner_grad_steps=2)
    assert algo.inner_step == InnerStepSettings(inner_lr=0.05, num_inner_grad_steps=2)
    assert (algo.meta_batch_size, algo.num_inner_grad_steps, algo.inner_type) == (
        3, 2, "likelihood_ratio")
    for step_size in algo.step_sizes.values():
        np.testing.assert_allclose(step_size.numpy(), 0.05)
    with pytest.raises(AttributeError):
        algo.first_order = True  # type: ignore[misc]
    with pytest.raises(ValueError, match="inner_lr must be a finite number > 0"):
        ProMP(policy, inner_lr=-0.1)
