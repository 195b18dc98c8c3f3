"""Trace capture with graph breaks (`fw.jit._segments`): functions whose source is
not available are traced, broken where Python needs a tensor's value, and replayed
from a trie of segments keyed by guard values. Every case compares with the same
function run eagerly (and NumPy where it is short)."""

import numpy as np
import pytest
from jit_testutil import assert_same

import fw
from fw.jit import ConversionError, _segments

T = fw.to_tensor

_DEFS = """
import fw

def f_loop(x):
    # a tensor-dependent while: one guard per iteration
    while x.sum() < 10.0:
        x = x * 2.0 + 0.5
    return x - 1.0

def g_inner(x):
    if x.mean() > 0:
        return x * 3.0
    return -x

def f_nested(x, w):
    h = fw.tanh(x * w)
    y = g_inner(h) + h
    if float(y.max()) > 1.0:
        y = y / 2.0
    return y.sum() * w

def f_int(x):
    n = int(x.sum())            # a tensor-valued Python int: guard on its value
    return x * n + fw.ones([n])[: x.shape[0]].sum()

log = []

def f_appends(x):
    y = x * 2.0
    log.append(y)               # a list the trace cannot replay
    return y + 1.0

def f_prints(x):
    y = x + 1.0
    print("y is", y)            # a tensor printed: eager, so each call prints
    return y

def f_item(x):
    s = x.abs().max().item()    # guard on the value
    print("scale", 2)           # a Python-only print: fine (runs while tracing)
    return x / s

class Net(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = fw.nn.Linear(3, 4)
        self.fc2 = fw.nn.Linear(4, 2)

    def forward(self, x):
        h = fw.nn.functional.relu(self.fc1(x))
        if h.sum() > 1.0:
            h = h * 0.5
        return self.fc2(h)

class BNNet(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.bn = fw.nn.BatchNorm1D(3)

    def forward(self, x):
        y = self.bn(x)
        if y.sum() > 0:
            y = y * 2.0
        return y

class BNPlain(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.bn = fw.nn.BatchNorm1D(3)

    def forward(self, x):
        return self.bn(x) * 2.0

def f_tolist(x, table):
    row = table[x.argmax()]     # a tensor index: an op, no break
    vals = x.tolist()           # a break: guard on the values
    return row * vals[0] + int(x.sum())
"""


@pytest.fixture
def ns():
    d: dict = {}
    exec(compile(_DEFS, "<string>", "exec"), d)
    return d


def _line(text):
    for i, ln in enumerate(_DEFS.split("\n")):
        if text in ln:
            return i + 1
    raise AssertionError(text)


def _paths(sf):
    return sum(sf._regions.paths.values())


def test_while_loop_on_tensors_takes_different_trip_counts(ns):
    f = ns["f_loop"]
    sf = fw.jit.to_static(f)
    cases = [[1.0, 1.0], [4.0, 4.0], [0.1, 0.2], [1.0, 1.0], [20.0, 1.0]]
    for v in cases:
        out = sf(T(v))
        assert_same(out, f(T(v)))
        x = np.array(v, np.float32)
        while x.sum() < 10:
            x = x * 2 + 0.5
        np.testing.assert_allclose(out.numpy(), x - 1, rtol=1e-6)
    assert isinstance(sf._regions, _segments.SegmentRunner)
    # [1,1] and [0.1,0.2] share a prefix of the trie; the repeat of [1,1] is a replay
    assert _paths(sf) == 4
    rep = sf.conversion_report
    assert rep.graph_breaks[0][1] == _line("while x.sum() < 10.0")
    segs = [s for _, s, _ in rep.captures]
    # trip counts 2, 1, 4 and 0: a guard per test of the condition (trips + 1), so
    # trips + 2 segments
    assert segs == [4, 3, 6, 2]


def test_nested_calls_and_float_guard_with_gradients(ns):
    f = ns["f_nested"]
    sf = fw.jit.to_static(f)
    for v in ([0.5, 1.0, 2.0], [-0.5, -1.0, 0.2], [0.01, 0.02, 0.01]):
        w1 = T([1.5], stop_gradient=False)
        w2 = T([1.5], stop_gradient=False)
        x1 = T(v, stop_gradient=False)
        x2 = T(v, stop_gradient=False)
        out = sf(x1, w1)
        ref = f(x2, w2)
        assert_same(out, ref)
        out.sum().backward()
        ref.sum().backward()
        assert_same(x1.grad, x2.grad)
        assert_same(w1.grad, w2.grad)
    lines = [ln for _, ln, _ in sf.conversion_report.graph_breaks]
    # the break inside the called function is reported at its own line
    assert _line("if x.mean() > 0") in lines and _line("if float(y.max()) > 1.0") in lines


def test_a_layer_whose_forward_has_no_source_trains_like_eager(ns):
    fw.seed(3)
    net = ns["Net"]()
    ref = ns["Net"]()
    ref.set_state_dict(net.state_dict())
    static = fw.jit.to_static(net)
    opt = fw.optimizer.SGD(0.1, parameters=static.parameters())
    opt_ref = fw.optimizer.SGD(0.1, parameters=ref.parameters())
    rng = np.random.default_rng(0)
    for step in range(4):
        x = T(rng.standard_normal((5, 3)).astype("float32") * (1 + step))
        y = T(rng.standard_normal((5, 2)).astype("float32"))
        loss = ((static(x) - y) ** 2).mean()
        loss_ref = ((ref(x) - y) ** 2).mean()
        assert_same(loss, loss_ref, rtol=1e-5, atol=1e-6)
        loss.backward()
        loss_ref.backward()
        for p, q in zip(static.parameters(), ref.parameters()):
            assert_same(p.grad, q.grad, rtol=1e-5, atol=1e-6)
        opt.step()
        opt_ref.step()
        opt.clear_grad()
        opt_ref.clear_grad()
    assert isinstance(static.forward._regions, _segments.SegmentRunner)
    assert "graph break" in str(static.forward.conversion_report)


def test_path_limit_then_eager_for_that_signature(ns, monkeypatch):
    monkeypatch.setattr(_segments, "MAX_PATHS", 3)
    f = ns["f_int"]
    sf = fw.jit.to_static(f)
    for k in range(1, 7):
        v = [float(k), 1.0]
        assert_same(sf(T(v)), f(T(v)))
    assert _paths(sf) == 3
    rep = str(sf.conversion_report)
    assert "more than 3 traced paths" in rep and "runs eagerly for this input signature" in rep
    # a known value still replays its path
    assert_same(sf(T([1.0, 1.0])), f(T([1.0, 1.0])))


def test_item_guard_replays_and_python_print_runs_only_while_tracing(ns, capsys):
    f = ns["f_item"]
    sf = fw.jit.to_static(f)
    vs = ([1.0, -4.0], [2.0, 3.0], [1.0, -4.0], [2.0, 3.0])
    refs = [f(T(v)) for v in vs]
    capsys.readouterr()
    for v, r in zip(vs, refs):
        out = sf(T(v))
        assert_same(out, r)
        np.testing.assert_allclose(out.numpy(), np.array(v) / np.abs(v).max(), rtol=1e-6)
    assert _paths(sf) == 2
    assert capsys.readouterr().out.count("scale 2") == 2  # the two traces only (documented)
    assert "runs only while a path is traced" in str(sf.conversion_report)


def test_list_append_is_refused_and_runs_eagerly(ns):
    f = ns["f_appends"]
    sf = fw.jit.to_static(f)
    out = sf(T([1.0, 2.0]))
    assert_same(out, T([3.0, 5.0]))
    log = ns["log"]
    assert len(log) == 1 and isinstance(log[0], fw.Tensor)  # eager's append, no Value left
    assert_same(log[0], T([2.0, 4.0]))
    sf(T([0.0, 1.0]))
    assert len(log) == 2
    rep = str(sf.conversion_report)
    assert "the whole function runs eagerly" in rep and "changes a list" in rep


def test_print_of_a_tensor_is_refused_and_prints_each_call(ns, capsys):
    sf = fw.jit.to_static(ns["f_prints"])
    sf(T([1.0]))
    sf(T([2.0]))
    out = capsys.readouterr().out
    assert out.count("y is") == 2 and "Value" not in out
    assert out == f"y is {T([2.0])}\ny is {T([3.0])}\n"
    ln = _line("print(\"y is\", y)")
    assert f"`print()`/`str()` of a tensor at <string>:{ln} in f_prints" in \
        str(sf.conversion_report)


def test_state_updates_are_refused(ns):
    net = ns["BNNet"]()
    ref = ns["BNNet"]()
    ref.set_state_dict(net.state_dict())
    static = fw.jit.to_static(net)
    x = T(np.arange(12, dtype="float32").reshape(4, 3))
    assert_same(static(x), ref(x))
    assert_same(net.bn._mean, ref.bn._mean)
    assert "writes state" in str(static.forward.conversion_report)


def test_state_without_a_branch_is_one_whole_program(ns):
    net = ns["BNPlain"]()
    ref = ns["BNPlain"]()
    ref.set_state_dict(net.state_dict())
    static = fw.jit.to_static(net)
    rng = np.random.default_rng(1)
    for _ in range(2):
        x = T(rng.standard_normal((4, 3)).astype("float32"))
        assert_same(static(x), ref(x))
        assert_same(net.bn._mean, ref.bn._mean)
        assert_same(net.bn._variance, ref.bn._variance)
    assert static.forward._regions is None and len(static.forward.program_cache) == 1
    assert "runs eagerly" not in str(static.forward.conversion_report)


def test_full_graph_true_still_raises(ns):
    with pytest.raises(ConversionError, match="source is not available"):
        fw.jit.to_static(ns["f_loop"], full_graph=True)(T([1.0, 1.0]))


def test_hook_is_off_outside_a_capture():
    # a symbolic value outside a capture keeps raising
    from fw.core.errors import UnsupportedError
    from fw.core.ir.builder import Builder
    from fw.core.ir.types import TensorType

    b = Builder()
    with b:
        v = b.add_input(TensorType((1,), fw.float32), "x")
        with pytest.raises(UnsupportedError):
            bool(v)
        with pytest.raises(UnsupportedError):
            float(v)


_CHILD = """
import json
import numpy as np
import fw
DEFS
sf = fw.jit.to_static(f_loop)
res = {"loop": [], "loop_eager": []}
for v in ([1.0, 1.0], [4.0, 4.0], [1.0, 1.0]):
    res["loop"].append(sf(fw.to_tensor(v)).tolist())
    res["loop_eager"].append(f_loop(fw.to_tensor(v)).tolist())
res["loop_paths"] = sum(sf._regions.paths.values())
fw.seed(1)
net, ref = Net(), Net()
ref.set_state_dict(net.state_dict())
static = fw.jit.to_static(net)
rng = np.random.default_rng(0)
res["losses"], res["losses_eager"], res["grad_diff"] = [], [], 0.0
for step in range(3):
    x = fw.to_tensor(rng.standard_normal((4, 3)).astype("float32") * (1 + step))
    a, b = static(x).square().mean(), ref(x).square().mean()
    a.backward(); b.backward()
    res["losses"].append(float(a)); res["losses_eager"].append(float(b))
    for p, q in zip(static.parameters(), ref.parameters()):
        d = float(np.abs(p.grad.numpy() - q.grad.numpy()).max())
        res["grad_diff"] = max(res["grad_diff"], d)
        p.clear_gradient(); q.clear_gradient()
res["report"] = str(static.forward.conversion_report)
print("RESULT" + json.dumps(res))
"""


@pytest.mark.parametrize("mode", ["-c", "stdin"])
def test_python_c_and_stdin_capture_loops_and_a_layer(mode):
    import json
    import os
    import subprocess
    import sys

    code = _CHILD.replace("DEFS", _DEFS)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if mode == "-c":
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=240, env=env)
    else:
        proc = subprocess.run([sys.executable, "-"], input=code, capture_output=True,
                              text=True, timeout=240, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    assert line, proc.stdout[-2000:]
    res = json.loads(line[0][len("RESULT"):])
    assert res["loop"] == res["loop_eager"]
    np.testing.assert_allclose(res["loop"][0], [4.5, 4.5])  # 1 -> 2.5 -> 5.5, minus 1
    assert res["loop_paths"] == 2
    np.testing.assert_allclose(res["losses"], res["losses_eager"], rtol=1e-5)
    assert res["grad_diff"] < 1e-5
    origin = "<string>" if mode == "-c" else "<stdin>"
    assert f"{origin}:" in res["report"] and "graph break" in res["report"]


def test_tolist_and_tensor_index(ns):
    f = ns["f_tolist"]
    sf = fw.jit.to_static(f)
    table = T(np.arange(12, dtype="float32").reshape(4, 3))
    for v in ([1.0, 3.0, 2.0, 0.0], [5.0, 1.0, 0.0, 0.0], [1.0, 3.0, 2.0, 0.0]):
        out = sf(T(v), table)
        assert_same(out, f(T(v), table))
        np.testing.assert_allclose(out.numpy(), np.arange(12).reshape(4, 3)[int(np.argmax(v))]
                                   * v[0] + int(sum(v)))
    assert _paths(sf) == 2
    rep = str(sf.conversion_report)
    assert f"<string>:{_line('vals = x.tolist()')}: graph break: `.numpy()` / `.tolist()`" in rep


@fw.jit.to_static
def _converted_helper(x):
    if x.sum() > 0:  # converted (this file has source): a cond op, no graph break
        return x * 10.0
    return x - 10.0


def test_a_converted_function_called_from_a_captured_one_joins_its_segment():
    d: dict = {"helper": _converted_helper, "fw": fw}
    exec(compile("def f(x):\n    y = helper(x * 2.0)\n    if y.mean() > 5:\n"
                 "        return y + 1.0\n    return y\n", "<string>", "exec"), d)
    f = d["f"]
    sf = fw.jit.to_static(f)
    for v in ([1.0, 2.0], [-1.0, -2.0], [0.1, 0.1]):
        np.testing.assert_allclose(sf(T(v)).numpy(), f(T(v)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(sf(T([1.0, 2.0])).numpy(), [21.0, 41.0])
    rep = sf.conversion_report
    assert [ln for _, ln, _ in rep.graph_breaks] == [3]  # only the captured function's `if`
    assert _paths(sf) == 2


def test_concrete_program_of_a_capture_without_breaks():
    # a source-less function captured in one segment has one program; with a graph
    # break there is none to give, and the error says why
    ns = {"fw": fw}
    exec("def f(x):\n    return x * 2 + 1\n"
         "def g(x):\n    if (x > 0).all():\n        return x * 2\n    return x\n", ns)
    f = fw.jit.to_static(ns["f"])
    np.testing.assert_allclose(f(fw.ones([3])).numpy(), [3.0, 3.0, 3.0])
    cp = f.concrete_program
    assert type(cp).__name__ == "ConcreteProgram" and len(cp.inputs) == 1
    g = fw.jit.to_static(ns["g"])
    g(fw.ones([3]))
    with pytest.raises(RuntimeError, match="one program per segment"):
        _ = g.concrete_program
