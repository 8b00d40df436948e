"""Meta-learning algorithms: ProMP, TRPO-MAML, VPG-MAML, PPO-MAML, E-MAML, DiCE-MAML, VPG-DiCE.

Every algorithm is a :class:`~meta_policy_search.meta_algos.base.MAMLAlgo`: the shared,
differentiable inner step (:mod:`~meta_policy_search.meta_algos.inner_step`, its settings in
:mod:`~meta_policy_search.meta_algos.inner_step_settings`) with the algorithm's inner objective,
and an outer step on its outer objective; the objectives are free functions in
:mod:`~meta_policy_search.meta_algos.objectives`. The user guide writes them out and has a page
per algorithm.

Every class is imported on first access (PEP 562), so that configuration code reads
:mod:`~meta_policy_search.meta_algos.inner_step_settings` without loading TensorFlow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meta_policy_search.utils.lazy import lazy_getattr

if TYPE_CHECKING:
    from meta_policy_search.meta_algos.base import MAMLAlgo
    from meta_policy_search.meta_algos.dice_maml import DICEMAML, VPG_DICEMAML
    from meta_policy_search.meta_algos.ppo_maml import PPOMAML
    from meta_policy_search.meta_algos.pro_mp import ProMP
    from meta_policy_search.meta_algos.trpo_maml import TRPOMAML
    from meta_policy_search.meta_algos.vpg_maml import VPGMAML

_LAZY = {
    "MAMLAlgo": "meta_policy_search.meta_algos.base",
    "ProMP": "meta_policy_search.meta_algos.pro_mp",
    "TRPOMAML": "meta_policy_search.meta_algos.trpo_maml",
    "VPGMAML": "meta_policy_search.meta_algos.vpg_maml",
    "PPOMAML": "meta_policy_search.meta_algos.ppo_maml",
    "DICEMAML": "meta_policy_search.meta_algos.dice_maml",
    "VPG_DICEMAML": "meta_policy_search.meta_algos.dice_maml",
}

__all__ = ["MAMLAlgo", "ProMP", "TRPOMAML", "VPGMAML", "PPOMAML", "DICEMAML", "VPG_DICEMAML"]


__getattr__ = lazy_getattr(__name__, _LAZY)
