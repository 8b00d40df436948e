"""Probe: tyro on the run scripts' ProMP config, as CleanRL uses it."""
import sys

import tyro

from meta_policy_search.experiment.configs import ProMPConfig

config = tyro.cli(ProMPConfig, args=sys.argv[1:])
print("parsed", config.clip_eps, config.hidden_sizes)
