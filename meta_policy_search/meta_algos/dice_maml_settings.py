"""DiCE-MAML's and VPG-DiCE's settings (:mod:`~meta_policy_search.meta_algos.dice_maml`):
standard library only."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from meta_policy_search.meta_algos.outer_step_settings import AdamStepSettings


@dataclasses.dataclass(frozen=True)
class DiceMAMLSettings(AdamStepSettings):
    """DiCE-MAML's and VPG-DiCE's settings: an Adam outer step (DiCE inner steps)."""

    takes_horizon: ClassVar[bool] = True  # the DiCE objectives are built for a horizon H


DEFAULTS = DiceMAMLSettings()
"""DiCE-MAML's default settings: the defaults of its constructor and its run configs."""
