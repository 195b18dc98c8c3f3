"""fw.profiler's per-Layer view (issue 16): Layer forwards timed by module path only
while a profiler records, the "Layer Summary" table of SummaryView.ModelView, the
Layer events in the Chrome trace."""

import json
import os

import pytest

import fw
import fw.nn as nn
import fw.profiler as profiler
from fw.profiler import layer_view


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # Profiler() writes ./profiler_log/ by default


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([Block(), Block()])
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def _layers(events):
    return [e for e in events if e.kind == "Layer"]


def test_layer_events_by_module_path():
    net = Net()
    x = fw.ones([3, 4])
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        for _ in range(2):
            net(x)
            p.step()
    evs = _layers(p.events)
    counts = {}
    for e in evs:
        counts[e.name] = counts.get(e.name, 0) + 1
    assert counts == {"Net": 2, "Net.blocks.0": 2, "Net.blocks.0.fc": 2, "Net.blocks.0.act": 2,
                      "Net.blocks.1": 2, "Net.blocks.1.fc": 2, "Net.blocks.1.act": 2,
                      "Net.head": 2}
    depth = {e.name: e.args["depth"] for e in evs}
    assert depth["Net"] == 0 and depth["Net.blocks.1"] == 1 and depth["Net.blocks.1.fc"] == 2
    assert {e.args["layer"] for e in evs if e.name.endswith(".fc")} == {"Linear"}
    # a child's span lies inside its parent's
    net_evs = sorted((e for e in evs if e.name == "Net"), key=lambda e: e.start)
    for e in evs:
        if e.name != "Net":
            assert any(n.start <= e.start and e.end <= n.end for n in net_evs)


def test_hooks_installed_only_while_recording():
    plain = nn.Layer.__call__
    assert not layer_view.recording()
    net = Net()
    with profiler.Profiler(scheduler=(1, 2), on_trace_ready=lambda p: None) as p:
        assert nn.Layer.__call__ is plain  # step 0: READY
        net(fw.ones([1, 4]))
        p.step()
        assert nn.Layer.__call__ is not plain and layer_view.recording()
        net(fw.ones([1, 4]))
        p.step()
        assert nn.Layer.__call__ is plain
        net(fw.ones([1, 4]))
    assert nn.Layer.__call__ is plain and not layer_view.recording()
    # only the recorded step's forward was timed
    assert sum(1 for e in _layers(p.events) if e.name == "Net") == 1


def test_layer_hooks_survive_an_exception_in_forward():
    class Bad(nn.Layer):
        def forward(self, x):
            raise ValueError("boom")

    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        with pytest.raises(ValueError, match="boom"):
            Bad()(fw.ones([1]))
        Net()(fw.ones([1, 4]))
    # the failed call still closed its span and popped the path stack
    assert [e.args["depth"] for e in _layers(p.events) if e.name == "Net"] == [0]


def test_layer_summary_table(capsys):
    net = Net()
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        for _ in range(3):
            net(fw.ones([2, 4]))
    p.summary(views=profiler.SummaryView.ModelView, time_unit="us")
    text = capsys.readouterr().out
    assert "Layer Summary" in text
    lines = text.split("Layer Summary", 1)[1].splitlines()[1:]  # past the title
    rows = [ln for ln in lines if ln.strip() and not ln.startswith("-")
            and not ln.startswith("Name")][:8]
    names = [r.split()[0] for r in rows]
    indents = [len(r) - len(r.lstrip()) for r in rows]
    assert names[0] == "Net" and indents[0] == 0
    # tree order: every child right under its parent, indented two more spaces
    tree = list(zip(names, indents))
    assert ("blocks.0", 2) in tree and ("fc", 4) in tree and ("head", 2) in tree
    i = tree.index(("blocks.0", 2))
    assert {tree[i + 1], tree[i + 2]} == {("fc", 4), ("act", 4)}
    calls = {n: r.split()[1] for n, r in zip(names, rows)}
    assert calls["Net"] == "3" and calls["head"] == "3"
    # the ratio of the root is 100 %
    assert rows[0].split()[-1] == "100.00"


def test_layer_table_numbers():
    from fw.profiler.profiler import Event

    evs = [Event("M", "Layer", 0, 10_000, 1), Event("M.a", "Layer", 1000, 4000, 1),
           Event("M.a", "Layer", 5000, 6000, 1), Event("M.b", "Layer", 7000, 9000, 1),
           Event("M", "Layer", 20_000, 30_000, 1)]
    rows = layer_view.layer_table(evs, "total", 1e3, "us")
    assert [r[0] for r in rows] == ["M", "  a", "  b"]
    assert rows[0][1:] == ["2", "20.000", "10.000", "10.000", "10.000", "100.00"]
    assert rows[1][1:] == ["2", "4.000", "2.000", "3.000", "1.000", "20.00"]
    assert rows[2][1:] == ["1", "2.000", "2.000", "2.000", "2.000", "10.00"]


def test_chrome_trace_holds_layer_events(tmp_path):
    d = str(tmp_path / "t")
    with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing(d)):
        Net()(fw.ones([1, 4]))
    (name,) = os.listdir(d)
    with open(os.path.join(d, name), encoding="utf-8") as f:
        trace = json.load(f)
    names = {e["name"] for e in trace["traceEvents"] if e.get("cat") == "Layer"}
    assert {"Net", "Net.blocks.0.fc", "Net.head"} <= names
