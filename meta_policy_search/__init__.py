"""meta_policy_search: gradient-based meta-reinforcement learning (ProMP, MAML, E-MAML, DiCE).

A TensorFlow 2 reimplementation of the ProMP paper's code (Rothfuss et al., ICLR 2019) with its
component names: a :class:`~meta_policy_search.meta_trainer.Trainer` runs meta-iterations of a
sampler (:mod:`~meta_policy_search.samplers`), a sample processor with a baseline
(:mod:`~meta_policy_search.baselines`), a meta-algorithm (:mod:`~meta_policy_search.meta_algos`)
with its optimizer (:mod:`~meta_policy_search.optimizers`) and a policy
(:mod:`~meta_policy_search.policies`) on a task distribution (:mod:`~meta_policy_search.envs`).
:mod:`~meta_policy_search.experiment` builds them from a config for the run scripts.
"""

__version__ = "0.1.0"
