"""Per-task return baselines: linear feature fits and a zero baseline."""

from meta_policy_search.baselines.base import Baseline
from meta_policy_search.baselines.linear_baseline import LinearFeatureBaseline, LinearTimeBaseline
from meta_policy_search.baselines.zero_baseline import ZeroBaseline

__all__ = ["Baseline", "LinearFeatureBaseline", "LinearTimeBaseline", "ZeroBaseline"]
