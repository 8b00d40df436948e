"""Same-seed check of the env refactor: ProMP on every built-in env with both executors.

Usage, from the repository root (``PYTHONPATH`` selects the code that runs)::

    PYTHONPATH=<checkout> python benchmarks/results/same_seed_envs/run.py record BEFORE
    PYTHONPATH=<checkout> python benchmarks/results/same_seed_envs/run.py compare AFTER BEFORE

Two iterations of ``experiments/promp_run_mujoco.py`` per env (4 point envs, 12 MuJoCo envs) on
the iterative and the parallel executor (2 workers), plus TRPO-MAML in budget mode on the
terminating point env and HopperRandParamsEnv; every non-time column of ``progress.csv`` is
compared as text (``tools/same_seed_progress.py``'s reading and comparison).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, "tools")
import same_seed_progress as ssp

POINT = {"PointEnvRandGoal": ["--env_kwargs", '{"goal_tolerance": 0.05}'],
         "MetaPointEnvCorner": [], "MetaPointEnvMomentum": [], "MetaPointEnvWalls": []}
MUJOCO = ["HalfCheetahRandDirecEnv", "HalfCheetahRandVelEnv", "AntRandDirecEnv",
          "AntRandDirec2DEnv", "AntRandGoalEnv", "HumanoidRandDirecEnv", "HumanoidRandDirec2DEnv",
          "Walker2DRandDirecEnv", "Walker2DRandVelEnv", "SwimmerRandVelEnv", "HopperRandParamsEnv",
          "Walker2DRandParamsEnv"]
COMMON = ["--seed", "3", "--n_itr", "2", "--meta_batch_size", "2", "--rollouts_per_meta_task", "2",
          "--max_path_length", "20", "--paper_config", "false", "--hidden_sizes", "[16]",
          "--log_formats", "csv"]


def runs() -> dict[str, list[str]]:
    """Label -> script and arguments."""
    out = {}
    for env in [*POINT, *MUJOCO]:
        for executor in ("iterative", "parallel"):
            args = ["experiments/promp_run_mujoco.py", "--env", env, *POINT.get(env, []), *COMMON,
                    "--executor", executor]
            if executor == "parallel":
                args += ["--n_parallel", "2"]
            out[f"promp-{env}-{executor}"] = args
    for env in ("PointEnvRandGoal", "HopperRandParamsEnv"):
        out[f"trpo_maml-{env}-budget-parallel"] = [
            "experiments/trpo_maml_run_mujoco.py", "--env", env, *POINT.get(env, []), *COMMON,
            "--sampling_mode", "budget", "--executor", "parallel", "--n_parallel", "2"]
    return out


def main() -> None:
    """Run the missing runs into OUT_DIR; with ``compare``, compare them with REFERENCE_DIR."""
    action, out_dir = sys.argv[1], Path(sys.argv[2])
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    for label, (script, *args) in runs().items():
        dump = out_dir / label
        if ssp.is_complete(dump):
            continue
        shutil.rmtree(dump, ignore_errors=True)
        start = time.monotonic()
        result = subprocess.run([sys.executable, script, *args, "--dump_path", str(dump)],
                                env=env, capture_output=True, text=True)
        print(label, "ok" if result.returncode == 0 else f"FAILED {result.stderr[-2000:]}",
              f"{time.monotonic() - start:.0f} s", flush=True)
    if action == "compare":
        results = ssp.compare(out_dir, Path(sys.argv[3]))
        same = sum(verdict.startswith("identical") for _, verdict, _ in results)
        print(f"{same} of {len(results)} runs identical")


if __name__ == "__main__":
    main()
