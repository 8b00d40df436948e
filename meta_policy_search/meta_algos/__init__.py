"""Meta-learning algorithms: ProMP, TRPO-MAML, VPG-MAML, PPO-MAML, E-MAML, DiCE-MAML, VPG-DiCE."""

from meta_policy_search.meta_algos.base import MAMLAlgo
from meta_policy_search.meta_algos.dice_maml import DICEMAML, VPG_DICEMAML
from meta_policy_search.meta_algos.ppo_maml import PPOMAML
from meta_policy_search.meta_algos.pro_mp import ProMP
from meta_policy_search.meta_algos.trpo_maml import TRPOMAML
from meta_policy_search.meta_algos.vpg_maml import VPGMAML

__all__ = ["MAMLAlgo", "ProMP", "TRPOMAML", "VPGMAML", "PPOMAML", "DICEMAML", "VPG_DICEMAML"]
