"""Sampling: executors that run whole rollouts, the meta-sampler, and the sample processors.

Every name is imported on first access (PEP 562): configuration code reads
:data:`~meta_policy_search.samplers.quota.SAMPLING_MODES` without loading numpy or gymnasium, and
sampler worker processes load only what the rollout loop needs (numpy, gymnasium, the envs),
never the sample processors' TensorFlow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meta_policy_search.utils.lazy import lazy_getattr

if TYPE_CHECKING:
    from meta_policy_search.samplers.dice_sample_processor import DiceSampleProcessor
    from meta_policy_search.samplers.iterative_executor import MetaIterativeEnvExecutor
    from meta_policy_search.samplers.meta_sample_processor import MetaSampleProcessor
    from meta_policy_search.samplers.meta_sampler import MetaSampler
    from meta_policy_search.samplers.parallel_executor import MetaParallelEnvExecutor
    from meta_policy_search.samplers.ray_executor import MetaRayEnvExecutor

_LAZY = {
    "MetaIterativeEnvExecutor": "meta_policy_search.samplers.iterative_executor",
    "MetaParallelEnvExecutor": "meta_policy_search.samplers.parallel_executor",
    "MetaRayEnvExecutor": "meta_policy_search.samplers.ray_executor",  # imports Ray lazily
    "MetaSampler": "meta_policy_search.samplers.meta_sampler",
    "MetaSampleProcessor": "meta_policy_search.samplers.meta_sample_processor",
    "DiceSampleProcessor": "meta_policy_search.samplers.dice_sample_processor",
}

__all__ = [
    "DiceSampleProcessor",
    "MetaIterativeEnvExecutor",
    "MetaParallelEnvExecutor",
    "MetaRayEnvExecutor",
    "MetaSampleProcessor",
    "MetaSampler",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
