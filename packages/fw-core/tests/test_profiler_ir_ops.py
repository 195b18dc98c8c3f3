"""fw.profiler traces the ops inside compiled IR programs (issue 16): one event per
kernel call with the op name (and the operand shapes with ``record_shapes``), the
Chrome trace parsed back, and nothing changed in a program's compiled code when no
profiler records."""

import json
import os

import numpy as np
import pytest

import fw
import fw.profiler as profiler
from fw.core import ir
from fw.core.ir.executor import Compiled


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # Profiler() writes ./profiler_log/ by default


def _program():
    def f(a, w):
        return fw.tanh(fw.matmul(a, w)) + a.sum()

    return ir.trace(f, [ir.TensorType((2, 3), fw.float32), ir.TensorType((3, 3), fw.float32)])


def _run_ops(prog):
    # the ops that run a kernel (constant ops are computed once, at compile time)
    return [op.name for op in prog.global_block.ops if op.operands]


def test_each_ir_op_is_an_event_with_its_shapes():
    prog = _program()
    c = Compiled(prog)
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    w = np.eye(3, dtype=np.float32)
    with profiler.Profiler(record_shapes=True, on_trace_ready=lambda p: None) as p:
        out = c([a, w])
    np.testing.assert_allclose(out[0], np.tanh(a @ w) + a.sum(), rtol=1e-6)
    evs = [e for e in p.events if e.args.get("ir")]
    assert [e.name for e in evs] == _run_ops(prog)
    mm = next(e for e in evs if e.name == "matmul")
    assert mm.args["input_shapes"] == [[2, 3], [3, 3]]
    assert mm.args["input_dtypes"] == ["float32", "float32"]
    assert all(e.kind == "Operator" and e.end >= e.start for e in evs)
    run = next(e for e in p.events if e.name == "Executor::run")
    # the op events lie inside the run's span
    assert all(run.start <= e.start and e.end <= run.end for e in evs)


def test_without_record_shapes_no_shapes_and_timer_only_no_ops():
    prog = _program()
    c = Compiled(prog)
    arrays = [np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)]
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        c(arrays)
    evs = [e for e in p.events if e.args.get("ir")]
    assert evs and all("input_shapes" not in e.args for e in evs)
    with profiler.Profiler(timer_only=True, on_trace_ready=lambda p: None) as p2:
        c(arrays)
        p2.step()
    assert not [e for e in p2.events if e.args.get("ir")]


def test_compiled_code_is_untouched_when_no_profiler_records():
    prog = _program()
    c = Compiled(prog)
    src = c.source
    kernels = {k: v for k, v in c._ns.items() if k.startswith("k")}
    arrays = [np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)]
    with profiler.Profiler(on_trace_ready=lambda p: None):
        c(arrays)
    # the traced twin is a separate compilation; this one's code and kernels are as before
    assert c.source == src
    assert {k: v for k, v in c._ns.items() if k.startswith("k")} == kernels
    assert not any(getattr(v, "__name__", "") == "traced" for v in kernels.values())
    assert c._traced is not None and c._traced.op_trace
    assert all(getattr(v, "__name__", "") == "traced"
               for k, v in c._traced._ns.items() if k.startswith("k"))
    np.testing.assert_allclose(c(arrays)[0], c._traced(arrays)[0])


def test_chrome_trace_holds_the_ir_ops(tmp_path):
    prog = _program()
    d = str(tmp_path / "trace")
    arrays = [np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)]
    with profiler.Profiler(record_shapes=True, on_trace_ready=profiler.export_chrome_tracing(d)):
        ir.run(prog, *arrays)
    (name,) = os.listdir(d)
    with open(os.path.join(d, name), encoding="utf-8") as f:
        trace = json.load(f)
    ops = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e["args"].get("ir")]
    assert [e["name"] for e in ops] == _run_ops(prog)
    assert next(e for e in ops if e["name"] == "matmul")["args"]["input_shapes"] == \
        [[2, 3], [3, 3]]
    assert all(e["dur"] >= 0 and e["cat"] == "Operator" for e in ops)


def test_ir_ops_in_the_operator_summary(capsys):
    prog = _program()
    c = Compiled(prog)
    arrays = [np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)]
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        for _ in range(3):
            c(arrays)
    p.summary(views=profiler.SummaryView.OperatorView, time_unit="us")
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.startswith("matmul "))
    assert row.split()[1] == "3"  # calls


def test_flops_of_an_ir_matmul():
    prog = _program()
    c = Compiled(prog)
    arrays = [np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)]
    with profiler.Profiler(with_flops=True, profile_memory=True,
                           on_trace_ready=lambda p: None) as p:
        c(arrays)
    mm = next(e for e in p.events if e.args.get("ir") and e.name == "matmul")
    assert mm.args["flops"] == 2 * 2 * 3 * 3  # 2*M*N*K
    assert mm.args["bytes"] == 2 * 3 * 4


def test_layer_view_docstring_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest

    from fw.profiler import layer_view

    n = len(layer_view._hooks)
    res = doctest.testmod(layer_view, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
    assert len(layer_view._hooks) == n  # the example unregisters its hook
