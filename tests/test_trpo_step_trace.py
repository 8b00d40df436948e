"""The TRPO step trace's HLO reading (benchmarks/trpo_step_trace.py) finds loop-invariant work."""

from __future__ import annotations

import os
import sys

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
sys.path.insert(0, REPO)

from benchmarks.trpo_step_trace import category, loop_invariant_work, phase  # noqa: E402

BODY = """HloModule m

%body.1 (arg.1: (s32[], f32[4], f32[4])) -> (s32[], f32[4], f32[4]) {
  %arg.1 = (s32[], f32[4]{0}, f32[4]{0}) parameter(0)
  %gte.0 = s32[] get-tuple-element(%arg.1), index=0
  %gte.1 = f32[4]{0} get-tuple-element(%arg.1), index=1
  %gte.2 = f32[4]{0} get-tuple-element(%arg.1), index=2
  %one = s32[] constant(1)
  %next = s32[] add(%gte.0, %one)
  %fixed = f32[4]{0} fusion(%gte.2), kind=kLoop, calls=%square
  %moving = f32[4]{0} multiply(%gte.1, %fixed)
  ROOT %out = (s32[], f32[4]{0}, f32[4]{0}) tuple(%next, %moving, %gte.2)
}
"""


def test_work_on_values_the_loop_passes_through_unchanged_is_loop_invariant():
    # element 2 is passed back as element 2: %fixed reads only it; %next and %moving change
    assert loop_invariant_work(BODY) == {"body.1": {"instructions": 9, "work": 3,
                                                    "invariant_work": 1}}


def test_work_on_a_changing_value_is_not_loop_invariant():
    changed = BODY.replace("tuple(%next, %moving, %gte.2)", "tuple(%next, %moving, %moving)")
    assert loop_invariant_work(changed)["body.1"]["invariant_work"] == 0


def test_trace_events_are_sorted_by_kind_and_by_how_often_they_run():
    assert category("MatMul_1.244") == "matmul (dot thunk)"
    assert category("add_multiply_fusion.1") == "fused elementwise/reduction"
    assert category("ThunkExecutor::Execute") is None
    assert category("end: MatMul.218") is None
    assert phase(10, cg_iters=10, evals=9) == "per CG iteration"
    assert phase(9, cg_iters=10, evals=9) == "per line-search evaluation"
    assert phase(1, cg_iters=10, evals=9) == "once"
