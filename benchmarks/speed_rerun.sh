#!/usr/bin/env bash
# The timing benchmarks of the speed work, rerun in one go on a quiet machine (nothing else
# running: timings on a shared machine are meaningless). Writes everything to
# benchmarks/results/speed_rerun/ (or $OUT). From the repository root:
#
#     bash benchmarks/speed_rerun.sh
#     BEFORE=/path/to/checkout/of/0e6d729 bash benchmarks/speed_rerun.sh   # also the W0 before/after
#     ONLY_BEFORE_AFTER=1 BEFORE=... OUT=... bash benchmarks/speed_rerun.sh  # the before/after alone
#
# 1. whole iterations with their floors measured in the same run: W0 TRPO-MAML (2-D navigation,
#    outer pass and matmul floors), the paper's half-cheetah ProMP and TRPO-MAML and walker ProMP
#    (physics floor replaying the run's own controls);
# 2. the meta-step in passes of the policy and the TRPO step's matmul floor (W0, W1);
# 3. bare sampling phases against raw physics (half-cheetah, walker), for the run-vs-bare ratio;
# 4. the parallel executor's scaling over 1..16 workers against raw mj_step on as many processes
#    (../shared/tools/sampler_scaling.py; worker counts above the usable cores are skipped);
# 5. with BEFORE set: W0 TRPO-MAML and W1 ProMP at that checkout and here, back to back, and their
#    comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# Absolute but not resolved: realpath would follow the venv's python symlink out of the venv.
PY=${PY:-$ROOT/.venv/bin/python}
[[ $PY == /* ]] || PY=$ROOT/$PY
OUT=${OUT:-benchmarks/results/speed_rerun}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
export TF_CPP_MIN_LOG_LEVEL=2
if [[ -z "${ONLY_BEFORE_AFTER:-}" ]]; then  # ONLY_BEFORE_AFTER=1: step 5 alone
    "$PY" benchmarks/iteration_benchmark.py --only W0-trpo_maml,W1-promp,W1-trpo_maml,W2-promp \
        --iterations 5 --output_dir "$OUT"
    "$PY" benchmarks/metastep_profile.py --output_dir "$OUT"
    "$PY" benchmarks/sampling_benchmark.py --envs HalfCheetahRandDirecEnv Walker2DRandDirecEnv \
        --skip_per_env --repeats 3 --output_dir "$OUT"
    PYTHONPATH=. "$PY" ../shared/tools/sampler_scaling.py "$OUT/sampler_scaling.json"
fi
if [[ -n "${BEFORE:-}" ]]; then
    for label in before after; do
        code=$([[ $label == before ]] && echo "$BEFORE" || echo "$ROOT")
        (cd "$code" && "$PY" benchmarks/iteration_benchmark.py --only W0-trpo_maml,W1-promp \
            --iterations 6 --retrace_iterations 0 --output_dir "$OUT/w0_$label")
    done
    "$PY" benchmarks/compare_before_after.py "$OUT/w0_before" "$OUT/w0_after" \
        --label_before "$(git -C "$BEFORE" rev-parse --short HEAD)" \
        --label_after "$(git rev-parse --short HEAD)" --output "$OUT/w0_before_after.md"
fi
echo "results in $OUT"
