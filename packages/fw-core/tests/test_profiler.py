"""fw.profiler (issue 16): Paddle 3.3's scheduler states, recorded op events, the
summary tables, Chrome traces parsed back, result files, and zero cost when off."""

import json
import os
import re
import time

import numpy as np
import pytest

import fw
import fw.profiler as profiler
from fw.core.dispatch import observe_state


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    # Profiler() writes ./profiler_log/ by default (as Paddle): keep it out of the repo
    monkeypatch.chdir(tmp_path)


def _ops(events):
    return [e for e in events if e.kind == "Operator"]


def test_make_scheduler_matches_paddle_states():
    # Paddle 3.3.1: make_scheduler(closed=1, ready=1, record=2, repeat=2, skip_first=1)
    # gives, for steps 0..9 (checked side by side with paddle.profiler):
    want = ["CLOSED", "CLOSED", "READY", "RECORD", "RECORD_AND_RETURN",
            "CLOSED", "READY", "RECORD", "RECORD_AND_RETURN", "CLOSED"]
    s = profiler.make_scheduler(closed=1, ready=1, record=2, repeat=2, skip_first=1)
    assert [s(i).name for i in range(10)] == want
    forever = profiler.make_scheduler(closed=0, ready=0, record=1)
    assert all(forever(i) == profiler.ProfilerState.RECORD_AND_RETURN for i in range(5))
    with pytest.raises(ValueError, match="make_scheduler: record"):
        profiler.make_scheduler(closed=1, ready=1, record=0)
    with pytest.raises(ValueError, match="closed"):
        profiler.make_scheduler(closed=-1, ready=1, record=1)


def test_hook_is_installed_only_while_recording():
    assert observe_state.hook is None
    with profiler.Profiler(scheduler=(1, 2)) as prof:
        assert observe_state.hook is None  # step 0: READY, nothing installed
        prof.step()
        assert observe_state.hook is not None  # step 1: RECORD
        prof.step()
        assert observe_state.hook is None
    assert observe_state.hook is None


def test_records_ops_of_the_recorded_steps_only(tmp_path):
    x = fw.to_tensor(np.ones((3, 4), np.float32))
    w = fw.to_tensor(np.ones((4, 5), np.float32))
    got = []
    with profiler.Profiler(scheduler=(1, 3), on_trace_ready=lambda p: got.append(p.events),
                           record_shapes=True, profile_memory=True, with_flops=True) as prof:
        for i in range(4):
            if i == 0:
                fw.tanh(x)       # step 0 is not recorded
            else:
                fw.matmul(x, w) + 1.0
            prof.step()
    assert len(got) == 1  # one recorded range [1, 3) handed over once
    ops = _ops(got[0])
    assert [e.name for e in ops].count("matmul") == 2
    assert "tanh" not in {e.name for e in ops}
    mm = next(e for e in ops if e.name == "matmul")
    assert mm.args["input_shapes"] == [[3, 4], [4, 5]]
    assert mm.args["bytes"] == 3 * 5 * 4
    assert mm.args["flops"] == 2 * 3 * 5 * 4
    steps = [e.name for e in got[0] if e.kind == "ProfileStep"]
    assert steps == ["ProfileStep#1", "ProfileStep#2"]
    assert all(e.end >= e.start for e in got[0])


def test_record_event_context_manager_decorator_and_begin_end():
    @profiler.RecordEvent("decorated")
    def f(t):
        return t * 2.0

    with profiler.Profiler() as prof:
        with profiler.RecordEvent("region"):
            f(fw.ones([2]))
        ev = profiler.RecordEvent("manual")
        ev.begin()
        ev.end()
    names = [e.name for e in prof.events if e.kind == "PythonUserDefined"]
    assert sorted(names) == ["decorated", "manual", "region"]
    region = next(e for e in prof.events if e.name == "region")
    mul = next(e for e in _ops(prof.events) if e.name == "multiply")
    assert region.start <= mul.start and mul.end <= region.end  # nested in the timeline
    with pytest.raises(TypeError, match="RecordEvent: name"):
        profiler.RecordEvent(3)


def test_summary_tables(capsys):
    x = fw.ones([8, 8])
    with profiler.Profiler(record_shapes=True, profile_memory=True, with_flops=True) as prof:
        for _ in range(3):
            fw.matmul(x, x)
        with profiler.RecordEvent("udf"):
            fw.exp(x)
    prof.summary(sorted_by=profiler.SortedKeys.CPUTotal, time_unit="us")
    out = capsys.readouterr().out
    for title in ("Overview Summary", "Operator Summary", "UserDefined Summary",
                  "Memory Summary", "Operator Summary by input shapes"):
        assert title in out
    row = next(line for line in out.splitlines() if line.startswith("matmul ")
               and "[" not in line)
    cells = row.split()
    assert cells[1] == "3"  # calls
    assert cells[-1] == str(3 * 2 * 8 * 8 * 8)  # FLOPs column
    only = profiler.ProfilerResult(prof.events).summary(views=profiler.SummaryView.UDFView)
    assert "udf" in only and "Operator Summary" not in only
    with pytest.raises(ValueError, match="time_unit"):
        prof.summary(time_unit="hours")


def test_summary_self_time_does_not_count_nested_ops_twice():
    from fw.profiler.profiler import Event
    from fw.profiler.summary import summary_text

    evs = [Event("add", "Operator", 0, 100, 1), Event("cast", "Operator", 10, 40, 1)]
    text = summary_text(evs, views=profiler.SummaryView.OperatorView, time_unit="ns")
    rows = {line.split()[0]: line.split() for line in text.splitlines()
            if line.startswith(("add ", "cast "))}
    assert rows["add"][2] == "70.000" and rows["cast"][2] == "30.000"


def test_chrome_trace_parses_back(tmp_path):
    d = tmp_path / "trace"
    with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing(str(d), "w0")) as p:
        with profiler.RecordEvent("outer"):
            fw.ones([4]) + 1.0
    files = os.listdir(d)
    assert len(files) == 1 and files[0].startswith("w0") and files[0].endswith(".json")
    data = json.loads((d / files[0]).read_text())
    evs = data["traceEvents"]
    xs = [e for e in evs if e["ph"] == "X"]
    assert {"outer", "add"} <= {e["name"] for e in xs}
    for e in xs:  # the Trace Event Format fields Perfetto needs
        assert {"name", "ph", "ts", "dur", "pid", "tid", "cat"} <= set(e)
        assert e["dur"] >= 0 and e["ts"] >= 0
    r = profiler.load_profiler_result(p.last_trace_path)
    assert sorted(e.name for e in r.events) == sorted(e["name"] for e in xs)


def test_result_file_round_trip_and_bad_files(tmp_path):
    with profiler.Profiler(on_trace_ready=profiler.export_protobuf(str(tmp_path))) as p:
        fw.ones([2]) * 3.0
    r = profiler.load_profiler_result(p.last_trace_path)
    assert [(e.name, e.kind, e.start, e.end) for e in r.get_data()] == \
        [(e.name, e.kind, e.start, e.end) for e in p.events]
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="neither"):
        profiler.load_profiler_result(str(bad))
    bad.write_text("not json")
    with pytest.raises(ValueError, match="cannot read"):
        profiler.load_profiler_result(str(bad))


def test_timer_only_step_info():
    prof = profiler.Profiler(timer_only=True)
    prof.start()
    for _ in range(3):
        fw.ones([2]) + 1.0
        time.sleep(0.01)  # a step long enough for 5 printed decimals to be exact to 0.1%
        prof.step(num_samples=8)
    assert observe_state.hook is None  # timer_only records no op events
    info = prof.step_info(unit="images")
    prof.stop()
    m = re.fullmatch(r" batch_cost: ([0-9.]+) s ips: ([0-9.]+) images/s", info)
    assert m, info  # no DataLoader: no reader_cost field, as in Paddle
    batch, ips = float(m.group(1)), float(m.group(2))
    assert batch >= 0.01 and ips == pytest.approx(8 / batch, rel=0.05)
    prof.start()
    prof.step()  # no num_samples: steps/s
    assert prof.step_info().endswith(" steps/s")
    assert prof.step_info() == ""  # nothing since the last call
    prof.stop()


def test_default_on_trace_ready_writes_to_profiler_log(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with profiler.Profiler():
        fw.ones([2]) + 1.0
    files = os.listdir(tmp_path / "profiler_log")
    assert len(files) == 1 and files[0].endswith(".paddle_trace.json")


def test_bad_arguments():
    with pytest.raises(TypeError, match="targets"):
        profiler.Profiler(targets=["cpu"])
    with pytest.raises(ValueError, match="start, end"):
        profiler.Profiler(scheduler=(3, 1))
    with pytest.raises(RuntimeError, match="step"):
        profiler.Profiler().step()


def test_executor_runs_appear_in_the_timeline():
    from fw.core import ir

    def f(a):
        return fw.exp(a) * 2.0

    prog = ir.trace(f, [ir.TensorType((2,), fw.float32)])
    with profiler.Profiler() as p:
        out = ir.run(prog, np.ones(2, np.float32))
    np.testing.assert_allclose(np.asarray(out[0] if isinstance(out, (list, tuple)) else out),
                               2 * np.e * np.ones(2), rtol=1e-6)
    runs = [e for e in p.events if e.name == "Executor::run"]
    assert len(runs) == 1 and runs[0].args["ops"] == len(prog.global_block.ops)


@pytest.mark.parametrize("mod", ["fw.profiler", "fw.profiler.profiler", "fw.profiler.export"])
def test_docstring_examples_run(mod, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def test_collective_ops_are_communication_events():
    from types import SimpleNamespace

    from fw.profiler.profiler import _Recorder
    from fw.profiler.summary import summary_text

    rec = _Recorder(False, False, False)
    out = fw.ones([4])
    rec.op_event(SimpleNamespace(name="c_allreduce"), [out], out, 0, 2000)
    rec.op_event(SimpleNamespace(name="add"), [out, out], out, 3000, 4000)
    assert [e.kind for e in rec.events] == ["Communication", "Operator"]
    text = summary_text(rec.events, views=profiler.SummaryView.DistributedView, time_unit="us")
    row = next(line for line in text.splitlines() if line.startswith("c_allreduce"))
    assert row.split()[1:3] == ["1", "2.000"]
