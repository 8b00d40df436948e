"""Old path of :mod:`meta_policy_search.evaluation.comparison`, kept so that existing imports work.

Import from :mod:`meta_policy_search.evaluation.comparison` instead: these are the meta-test
comparison's baseline *policies*, not the value baselines of :mod:`meta_policy_search.baselines`.
"""

from __future__ import annotations

import warnings

from meta_policy_search.evaluation.comparison import (
    DEFAULT_FIRST_STEP_SIZE,
    DEFAULT_LATER_STEP_SIZE,
    ScheduledStepSizes,
    check_baseline_params,
    check_step_size,
    pretrained_budget_note,
    step_size_description,
    to_markdown,
)

__all__ = [
    "DEFAULT_FIRST_STEP_SIZE",
    "DEFAULT_LATER_STEP_SIZE",
    "ScheduledStepSizes",
    "check_baseline_params",
    "check_step_size",
    "pretrained_budget_note",
    "step_size_description",
    "to_markdown",
]

warnings.warn(
    "meta_policy_search.meta_test_baselines moved to meta_policy_search.evaluation.comparison",
    DeprecationWarning,
    stacklevel=2,
)
