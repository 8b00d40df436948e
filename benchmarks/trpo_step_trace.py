"""Per-op table of the W0 TRPO-MAML step from a TensorFlow profiler trace.

Builds the W0 run as ``trpo_step_profile.py`` does, runs the run's compiled step a few times
under ``tf.profiler.experimental`` and sums the trace's host events by name (XLA's kernels and
thunks, TF ops), excluding the events that enclose others (the ``tf.function`` call and the XLA
executable), so the shares add up to the traced work. On a loaded machine the absolute times are
meaningless; the shares are what this measures. Usage::

    python benchmarks/trpo_step_trace.py [--calls 3] [--top 30] [--json PATH]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def event_totals(logdir: Path) -> dict[str, dict[str, float]]:
    """Per thread-line kind and event name: total microseconds and count, from the trace files."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    totals: dict[str, dict[str, float]] = collections.defaultdict(
        lambda: {"us": 0.0, "count": 0})
    for path in logdir.rglob("*.xplane.pb"):
        space = xplane_pb2.XSpace()
        space.ParseFromString(path.read_bytes())
        for plane in space.planes:
            names = {k: m.name for k, m in plane.event_metadata.items()}
            for line in plane.lines:
                for event in line.events:
                    key = f"{plane.name} | {names.get(event.metadata_id, '?')}"
                    totals[key]["us"] += event.duration_ps / 1e6
                    totals[key]["count"] += 1
    return dict(totals)


ENCLOSING = ("ThunkExecutor::Execute", "_step", "EagerExecute", "EagerKernelExecute",
             "TFE_Py_ExecuteCancelable", "EagerLocalExecute: __inference__step",
             "__inference__step", "CpuExecutable::ExecuteAsyncOnStream", "BlockUntilReady")
"""Events that enclose the step's kernels (prefixes), left out of the per-op sums."""


def category(name: str) -> str | None:
    """The kind of a leaf event: matmul, fusion, single op, copy, thread wait, other; ``None``
    for enclosing events and the zero-length ``end:`` markers."""
    if name.startswith(ENCLOSING) or name.startswith("end: "):
        return None
    if name.startswith(("MatMul", "dot")):
        return "matmul (dot thunk)"
    if "fusion" in name:
        return "fused elementwise/reduction"
    if name.startswith("wrapped_"):
        return "single elementwise/reduce op"
    if name.startswith("copy"):
        return "copy"
    if name.startswith("while") or name.startswith("conditional"):
        return "loop/conditional control"
    if "ThreadPool" in name:
        return "thread-pool wait"
    return "other (eager call, constants)"


def phase(count_per_step: float, cg_iters: int, evals: int) -> str:
    """Where an event runs, from how often per step: CG loop, line search, or once."""
    if count_per_step == cg_iters:
        return "per CG iteration"
    if count_per_step == evals:
        return "per line-search evaluation"
    if count_per_step == 1:
        return "once"
    return "other"


_INSTRUCTION = re.compile(r"\s*(ROOT )?%([\w.\-]+) = (.*)")
_NOT_WORK = ("parameter", "get-tuple-element", "constant", "tuple")


def loop_invariant_work(hlo: str) -> dict[str, dict[str, int]]:
    """Per while-loop body of an HLO module: its instructions, and those that do work (not a
    parameter, tuple access or constant) yet depend on no loop-carried value that changes.

    A carried value is unchanged when the body's root tuple passes element ``i`` of its
    parameter straight back as element ``i``; work that reads only such values is repeated in
    every iteration with the same result and could be computed once before the loop.
    """
    out = {}
    lines = hlo.split("\n")
    for start, header in enumerate(lines):
        if not (header.startswith("%") and "body" in header.split("(")[0]):
            continue
        defs: dict[str, tuple[str, list[str]]] = {}
        root = ""
        for line in lines[start + 1:]:
            if line.strip() == "}":
                break
            match = _INSTRUCTION.match(line)
            if match:
                rest = match.group(3).split(", metadata")[0]
                defs[match.group(2)] = (rest, re.findall(r"%([\w.\-]+)", rest.split(", calls=")[0]))
                if match.group(1):
                    root = match.group(2)
        element = {name: int(m.group(1)) for name, (rest, _) in defs.items()
                   if (m := re.search(r"get-tuple-element\(.*index=(\d+)", rest))}
        passed = {element[op] for i, op in enumerate(defs[root][1]) if element.get(op) == i}
        changing = {name for name, i in element.items() if i not in passed}
        grew = True
        while grew:
            grew = False
            for name, (_, operands) in defs.items():
                if name not in changing and any(op in changing for op in operands):
                    changing.add(name)
                    grew = True
        work = [name for name, (rest, _) in defs.items()
                if not re.search(r"(^|[\s}])(" + "|".join(_NOT_WORK) + r")\(", rest)]
        out[header.split(" ")[0].lstrip("%")] = {
            "instructions": len(defs), "work": len(work),
            "invariant_work": sum(name not in changing for name in work)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3, help="traced step calls")
    parser.add_argument("--top", type=int, default=30, help="rows printed")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    args = parser.parse_args()

    import tensorflow as tf

    from benchmarks.trpo_step_profile import w0_step_inputs

    algo, inputs, reset = w0_step_inputs(2)

    def call() -> int:
        reset()
        return int(algo.optimizer._step_tf(inputs)["NumBacktracks"])

    backtracks = call()
    invariance = loop_invariant_work(
        algo.optimizer._step_tf.experimental_get_compiler_ir(inputs)(stage="optimized_hlo"))
    for body, n in invariance.items():
        print(f"{body}: {n['instructions']} instructions, {n['work']} doing work, "
              f"{n['invariant_work']} of those loop-invariant")
    logdir = Path(tempfile.mkdtemp(prefix="trpo_trace_"))
    tf.profiler.experimental.start(str(logdir))
    for _ in range(args.calls):
        call()
    tf.profiler.experimental.stop()
    totals = event_totals(logdir)
    rows = sorted(totals.items(), key=lambda kv: -kv[1]["us"])
    for name, t in rows[: args.top]:
        print(f"{t['us'] / 1e3 / args.calls:10.1f} ms/step {t['count'] / args.calls:8.1f} /step  {name}")
    cg_iters, evals = algo.optimizer.cg_iters, backtracks + 1
    table: dict[tuple[str, str], float] = collections.defaultdict(float)
    for name, t in rows:
        kind = category(name.split(" | ", 1)[1])
        if kind is not None:
            table[(kind, phase(t["count"] / args.calls, cg_iters, evals))] += t["us"] / 1e3 / args.calls
    step_ms = totals["/host:CPU | _step"]["us"] / 1e3 / args.calls
    leaf_ms = sum(table.values())
    print(f"step {step_ms:.0f} ms, leaf events {leaf_ms:.0f} ms (thread time), NumBacktracks "
          f"{backtracks}")
    for (kind, where), ms in sorted(table.items(), key=lambda kv: -kv[1]):
        print(f"{ms:9.1f} ms {ms / leaf_ms:6.1%}  {kind:32s} {where}")
    if args.json:
        args.json.write_text(json.dumps({
            "calls": args.calls, "num_backtracks": backtracks, "loop_bodies": invariance, "step_ms": step_ms,
            "leaf_ms": leaf_ms, "table": [{"kind": k, "where": w, "ms_per_step": ms}
                                          for (k, w), ms in table.items()], "rows": [
            {"name": n, "ms_per_step": t["us"] / 1e3 / args.calls,
             "count_per_step": t["count"] / args.calls} for n, t in rows]}, indent=1))


if __name__ == "__main__":
    main()
