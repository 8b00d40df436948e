"""Per-task return baselines: linear feature fits and a zero baseline.

The sample processor fits a baseline to each task's returns and subtracts its prediction to
form advantages (with GAE). :class:`~meta_policy_search.baselines.linear_baseline.LinearFeatureBaseline`
is the paper's; ``--baseline`` chooses another for a run.
"""

from meta_policy_search.baselines.base import Baseline
from meta_policy_search.baselines.linear_baseline import LinearFeatureBaseline, LinearTimeBaseline
from meta_policy_search.baselines.zero_baseline import ZeroBaseline

__all__ = ["Baseline", "LinearFeatureBaseline", "LinearTimeBaseline", "ZeroBaseline"]
