"""Same-seed check of the split of sampling phases: ProMP and TRPO-MAML with 1, 2 and 3 workers.

Usage, from the repository root (``CODE`` is the checkout whose code runs)::

    python benchmarks/results/same_seed_split/run.py OUT_DIR CODE
    python benchmarks/results/same_seed_split/run.py --compare AFTER_DIR BEFORE_DIR

Two iterations of ``experiments/promp_run_mujoco.py`` and ``trpo_maml_run_mujoco.py`` with
``tools/same_seed_progress.py``'s tiny settings (4 tasks x 3 rollouts, 2 env copies per task) on
its terminating point env and HopperRandParamsEnv, in both sampling modes, with the iterative
executor and the parallel one with 2 workers (whole tasks) and 3 workers (a phase's 12 episodes,
8 under the step budget's first round, dealt 4 or 3 to a worker: tasks split between workers);
every non-time column of ``progress.csv`` compared as text (that tool's reading and comparison).
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


def record(out: Path, code: Path) -> None:
    """Run every combination with the sources of ``code`` into ``out/<label>``."""
    env_vars = dict(os.environ, PYTHONPATH=str(code), TF_CPP_MIN_LOG_LEVEL="2")
    for name in ("promp", "trpo_maml"):
        for env, env_args in ssp.ENVS.items():
            for mode in ssp.MODES:
                for executor, workers in (("iterative", None), ("parallel", 2), ("parallel", 3)):
                    label = f"{name}-{env}-{mode}-{executor}{workers or ''}"
                    dump = out / label
                    if ssp.is_complete(dump):
                        continue
                    shutil.rmtree(dump, ignore_errors=True)
                    command = [sys.executable, str(code / ssp.SCRIPTS[name]), *ssp.COMMON,
                               *env_args, "--sampling_mode", mode, "--executor", executor,
                               "--dump_path", str(dump)]
                    if workers:
                        command += ["--n_parallel", str(workers)]
                    start = time.monotonic()
                    done = subprocess.run(command, cwd=code, env=env_vars, capture_output=True,
                                          text=True)
                    status = "ok" if done.returncode == 0 else done.stderr[-2000:]
                    print(label, status, round(time.monotonic() - start), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        results = ssp.compare(Path(sys.argv[2]), Path(sys.argv[3]))
        same = sum(verdict.startswith("identical") for _, verdict, _ in results)
        print(f"{same} of {len(results)} runs identical")
    else:
        record(Path(sys.argv[1]), Path(sys.argv[2]).resolve())
