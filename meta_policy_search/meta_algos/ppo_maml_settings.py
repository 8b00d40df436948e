"""PPO-MAML's settings (:class:`~meta_policy_search.meta_algos.ppo_maml.PPOMAML`): standard
library only."""

from __future__ import annotations

import dataclasses

from meta_policy_search.meta_algos.inner_step_settings import MAML_INNER_TYPE
from meta_policy_search.meta_algos.outer_step_settings import PPOStepSettings


@dataclasses.dataclass(frozen=True)
class PPOMAMLSettings(PPOStepSettings):
    """PPO-MAML's settings: ProMP's outer optimisation (its paper values), MAML's inner step."""

    inner_type: str = MAML_INNER_TYPE
    """Inner objective: ``log_likelihood`` (MAML, the default:
    :data:`~meta_policy_search.meta_algos.inner_step_settings.MAML_INNER_TYPE`) or
    ``likelihood_ratio`` (LVC: ProMP without its inner KL penalty)."""


DEFAULTS = PPOMAMLSettings()
"""PPO-MAML's default settings: the defaults of its constructor and its run configs."""
