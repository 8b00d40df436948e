"""VPG-MAML's settings (:class:`~meta_policy_search.meta_algos.vpg_maml.VPGMAML`, also LVC-VPG,
E-MAML-VPG and first-order MAML): standard library only."""

from __future__ import annotations

import dataclasses

from meta_policy_search.meta_algos.inner_step_settings import MAML_INNER_TYPE
from meta_policy_search.meta_algos.outer_step_settings import (
    AdamStepSettings,
    ExplorationSettings,
)


@dataclasses.dataclass(frozen=True)
class VPGMAMLSettings(ExplorationSettings, AdamStepSettings):
    """VPG-MAML's settings: one Adam step on the post-update policy-gradient objective."""

    inner_type: str = MAML_INNER_TYPE
    """Inner objective: ``log_likelihood`` (MAML, the default:
    :data:`~meta_policy_search.meta_algos.inner_step_settings.MAML_INNER_TYPE`) or
    ``likelihood_ratio`` (LVC)."""


DEFAULTS = VPGMAMLSettings()
"""VPG-MAML's default settings: the defaults of its constructor and its run configs."""
