"""meta_policy_search: gradient-based meta-reinforcement learning (ProMP, MAML, E-MAML, DiCE)."""

__version__ = "0.1.0"
