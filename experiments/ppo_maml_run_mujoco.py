"""PPO-MAML on a MuJoCo meta-RL task: MAML inner steps, PPO's clipped surrogate outside.

The meta-RL baseline of garage (``MAMLPPO``), RLlib and torchrl; not in the ProMP paper, whose
ProMP settings it takes on the paper's environments (the ``promp`` section of
``paper_configs.json``: same PPO steps and clip range, no inner KL penalty).

Usage::

    python experiments/ppo_maml_run_mujoco.py --env HalfCheetahRandDirecEnv --seed 1
    python experiments/ppo_maml_run_mujoco.py --num_ppo_steps 3 --clip_eps 0.2
    python experiments/ppo_maml_run_mujoco.py --inner_type likelihood_ratio   # ProMP without KL

``--help`` lists every flag.
"""

from __future__ import annotations

from meta_policy_search.experiment.exit_codes import run_script
from meta_policy_search.experiment.registry import get_algorithm
from meta_policy_search.experiment.runner import run_algorithm


def main(argv: list[str] | None = None) -> str:
    """Run the experiment from command-line arguments; return the run directory."""
    return run_algorithm(get_algorithm("ppo_maml"), argv)


if __name__ == "__main__":
    run_script(main)
