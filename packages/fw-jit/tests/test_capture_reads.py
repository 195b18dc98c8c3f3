"""Trace capture (`fw.jit._segments`), its gaps: `.item()` reads that steer nothing
are graph breaks without a guard; the fallback to capture when AST conversion of a
function with source fails; the held stdout is per thread; and the captured
programs run the same kernels as eager mode (the performance guard of the large
matmul body of asv_bench/benchmarks/bench_jit_capture.py). Every result is
compared with the same function run eagerly."""

import builtins
import json
import sys
import threading

import numpy as np
import pytest
from jit_testutil import assert_same, load_source

import fw
from fw.jit import ConversionError, _convert_call, _segments

T = fw.to_tensor

_DEFS = """
import json
import fw

def f_log(x):
    y = x * 2.0
    loss = (y * y).mean()
    v = loss.item()              # only printed and returned: no guard
    print("loss", v)
    return y + 1.0, {"loss": v}

def f_scale(x):
    s = x.sum().item()           # baked into an op (`x * s`): a guard
    return x * s

def f_fstring(x):
    v = x.mean().item()
    print(f"mean {v:.3f}")       # formatted before print: not provably unused
    return x + 1.0

def f_json(x):
    v = x.max().item()
    return x - 1.0, json.dumps({"v": v})   # json needs a real float: traced again

def f_branch_after(x):
    v = x.sum().item()
    y = x * 3.0
    if y.mean() > 0:             # a tensor guard after an unguarded read
        y = y - 1.0
    return y, v

def f_int_item(x):
    n = x.argmax().item()        # an int read, returned
    return x * 2.0, n
"""


@pytest.fixture
def ns():
    d: dict = {}
    exec(compile(_DEFS, "<string>", "exec"), d)
    return d


def _paths(sf):
    return sum(sf._regions.paths.values())


def _root(sf):
    (root,) = sf._regions.roots.values()
    return root


def test_item_only_printed_and_returned_needs_no_guard(ns, capsys):
    f = ns["f_log"]
    sf = fw.jit.to_static(f)
    rng = np.random.default_rng(0)
    vals = [rng.standard_normal(3).astype("float32") for _ in range(_segments.MAX_PATHS + 4)]
    refs = [f(T(v)) for v in vals]
    eager_out = capsys.readouterr().out
    for v, ref in zip(vals, refs):
        out = sf(T(v))
        assert_same(out[0], ref[0])
        assert type(out[1]["loss"]) is float and out[1]["loss"] == ref[1]["loss"]
        np.testing.assert_allclose(out[1]["loss"], np.mean((2 * v) ** 2), rtol=1e-6)
    # one path, every call replayed (no eager fallback), each call prints its own value
    assert _paths(sf) == 1 and not sf._regions.eager_keys
    assert _root(sf).free and list(_root(sf).children) == [_segments._FREE]
    assert capsys.readouterr().out == eager_out
    assert eager_out.count("loss") == len(vals)
    rep = str(sf.conversion_report)
    assert "more than" not in rep
    assert "steers nothing (only returned or printed): no guard" in rep and \
        "<no guard>" in rep


def test_item_baked_into_an_op_keeps_its_guard(ns):
    f = ns["f_scale"]
    sf = fw.jit.to_static(f)
    for v in ([1.0, 2.0], [3.0, 5.0], [1.0, 2.0], [2.0, 1.0]):
        out = sf(T(v))
        assert_same(out, f(T(v)))
        np.testing.assert_allclose(out.numpy(), np.array(v) * sum(v))
    assert _paths(sf) == 2  # sums 3 and 8: one path per value, as before
    assert not _root(sf).free
    # the program holds the plain number, not the stand-in
    prog = next(iter(_root(sf).children.values())).cp.main_program
    fills = [op.attrs["fill_value"] for op in prog.walk() if op.name == "full"]
    assert fills and all(type(x) is float for x in fills)


def test_formatted_item_is_guarded_and_prints_like_before(ns, capsys):
    f = ns["f_fstring"]
    sf = fw.jit.to_static(f)
    for v in ([1.0, 2.0], [4.0, 6.0], [1.0, 2.0]):
        assert_same(sf(T(v)), f(T(v)))
    assert _paths(sf) == 2 and not _root(sf).free
    out = capsys.readouterr().out.splitlines()
    # eager prints every call; the capture prints once per traced path (documented)
    assert out.count("mean 1.500") == 3 and out.count("mean 5.000") == 2


def test_a_read_that_needs_a_real_number_is_traced_again_with_guards(ns):
    f = ns["f_json"]
    sf = fw.jit.to_static(f)
    for v in ([1.0, 2.0], [4.0, 6.0]):
        out, ref = sf(T(v)), f(T(v))
        assert_same(out[0], ref[0])
        assert out[1] == ref[1] == json.dumps({"v": float(max(v))})
    assert _paths(sf) == 2 and not _root(sf).free


def test_unguarded_read_then_a_tensor_guard(ns):
    f = ns["f_branch_after"]
    sf = fw.jit.to_static(f)
    for v in ([1.0, 2.0], [-4.0, -6.0], [3.0, 1.0], [-1.0, -1.5], [5.0, 5.0]):
        out, ref = sf(T(v)), f(T(v))
        assert_same(out, ref)
        assert out[1] == float(sum(v))
    root = _root(sf)
    assert root.free
    (after,) = root.children.values()
    assert set(after.children) == {True, False} and _paths(sf) == 2


def test_int_item_returned(ns):
    f = ns["f_int_item"]
    sf = fw.jit.to_static(f)
    for v in ([1.0, 2.0, 0.0], [5.0, 0.0, 1.0], [0.0, 0.0, 9.0]):
        out, ref = sf(T(v)), f(T(v))
        assert_same(out, ref)
        assert type(out[1]) is int and out[1] == int(np.argmax(v))
    assert _paths(sf) == 1


def test_ast_conversion_failure_with_source_falls_back_to_capture(tmp_path, monkeypatch):
    mod = load_source(
        "def g(x):\n"
        "    y = fw.tanh(x) * 2.0\n"
        "    if y.sum() > 0:\n"
        "        y = y + 1.0\n"
        "    else:\n"
        "        y = y - 1.0\n"
        "    return y * y\n", tmp_path)

    def refuse(fn, namespace):
        raise ConversionError("refused by the test", fn.__code__.co_filename,
                              fn.__code__.co_firstlineno, construct="function")

    monkeypatch.setattr(_convert_call, "convert_source", refuse)
    sf = fw.jit.to_static(mod.g)
    for v in ([1.0, 2.0], [-1.0, -3.0], [0.5, 0.5], [-2.0, 1.0]):
        assert_same(sf(T(v)), mod.g(T(v)))
        t = np.tanh(np.array(v, "float32")) * 2
        t = t + 1 if t.sum() > 0 else t - 1
        np.testing.assert_allclose(sf(T(v)).numpy(), t * t, rtol=1e-6)
    assert isinstance(sf._regions, _segments.SegmentRunner)
    assert _paths(sf) == 2
    rep = str(sf.conversion_report)
    assert "refused by the test" in rep and "captured by tracing" in rep


_SLOW = """
import fw

def f_wait(x, gate):
    y = x + 1.0
    if y.sum() > 0:                # a break: the trace is running here
        print("traced line")
        gate()                     # lets the other thread print, then waits
    return y
"""


def test_held_stdout_is_per_thread(capsys):
    d: dict = {}
    exec(compile(_SLOW, "<string>", "exec"), d)
    reached, printed = threading.Event(), threading.Event()
    real_print = builtins.print

    def gate():
        if threading.current_thread() is threading.main_thread() and not reached.is_set():
            reached.set()
            assert printed.wait(30), "the other thread did not print"

    def other():
        assert reached.wait(30), "the trace did not start"
        print("other thread line")
        printed.set()

    th = threading.Thread(target=other)
    th.start()
    sf = fw.jit.to_static(d["f_wait"])
    out = sf(T([1.0, 2.0]), gate)
    th.join(30)
    assert not th.is_alive()
    assert_same(out, T([2.0, 3.0]))
    lines = capsys.readouterr().out.splitlines()
    # the other thread's line went out at once (not into the held trace output, where
    # it would follow "traced line", or vanish with a refused trace)
    assert lines == ["other thread line", "traced line"]
    assert not isinstance(sys.stdout, _segments._HeldStdout)
    assert builtins.print is real_print  # the trace's stand-in print is gone


def test_two_threads_capture_at_once():
    d: dict = {}
    exec(compile(_DEFS, "<string>", "exec"), d)
    f = d["f_branch_after"]
    sf = fw.jit.to_static(f)
    inputs = [[float(i), -2.0 * i] for i in range(-6, 6)]
    results: dict = {}

    def work(k):
        for v in inputs[k::2]:
            results[tuple(v)] = sf(T(v))

    ths = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for th in ths:
        th.start()
    for th in ths:
        th.join(120)
    assert not any(th.is_alive() for th in ths)
    assert len(results) == len(inputs)
    for v in inputs:
        assert_same(results[tuple(v)], f(T(v)))


# -------------------------------------------- performance guard (no timing)
_BODY = """
import fw

def body(x, w1, w2):
    h = fw.tanh(fw.matmul(x, w1))
    h = fw.nn.functional.gelu(h) + h * 0.5
    if h.mean() > 0:
        h = fw.tanh(fw.matmul(h, w2)) * 2.0 + h
    else:
        h = fw.sigmoid(fw.matmul(h, w1)) - h
    return (h * h).mean(axis=1)
"""


class _Rec:
    """A profiler recorder keeping (op, operand dtypes, result dtype) of each op, eager
    ops and the IR executor's kernel calls alike."""

    def __init__(self):
        self.ops = []

    @staticmethod
    def _dt(a):
        return str(a.dtype).replace("fw.", "") if hasattr(a, "dtype") else type(a).__name__

    def op_event(self, op, args, out, t0, t1):
        self.ops.append((getattr(op, "name", op),
                         tuple(self._dt(a) for a in args if hasattr(a, "dtype")),
                         self._dt(out)))

    def ir_op_event(self, name, args, res, t0, t1):
        self.ops.append((name, tuple(self._dt(a) for a in args if hasattr(a, "dtype")),
                         self._dt(res)))

    def event(self, *args, **kwargs):
        pass


@pytest.mark.parametrize("mode", ["capture", "whole"])
def test_captured_programs_run_the_eager_kernels_and_never_retrace(mode, tmp_path):
    from fw.core import _observe

    if mode == "capture":
        d: dict = {}
        exec(compile(_BODY, "<string>", "exec"), d)
        f = d["body"]
    else:  # with source: AST conversion, one whole program
        f = load_source(_BODY.replace("import fw\n", ""), tmp_path).body
    sf = fw.jit.to_static(f)
    rng = np.random.default_rng(0)
    ws = [T(rng.standard_normal((128, 128)).astype("float32") * 0.06) for _ in range(2)]
    xs = [T(np.abs(rng.standard_normal((32, 128))).astype("float32")),
          T(-np.abs(rng.standard_normal((32, 128))).astype("float32"))]

    def traced():
        return dict(sf._regions.paths) if mode == "capture" else len(sf.program_cache)

    with fw.no_grad():
        for x in xs:
            sf(x, *ws)
        before = traced()
        for x in xs:
            rec = _Rec()
            _observe.set_recorder(rec)
            try:
                eager = f(x, *ws)
                n_eager = len(rec.ops)
                out = sf(x, *ws)
            finally:
                _observe.set_recorder(None)
            assert_same(out, eager)
            e_ops, c_ops = rec.ops[:n_eager], rec.ops[n_eager:]
            # the same ops, in float32, the same number of them: no float64 or reference
            # detour, no extra copies at segment borders
            # (operands: a Python scalar is an operand eagerly, a constant in a program)
            assert sorted((o[0], o[2]) for o in c_ops) == \
                sorted((o[0], o[2]) for o in e_ops), (c_ops, e_ops)
            assert all(o[2] in ("float32", "bool") and set(o[1]) <= {"float32"}
                       for o in c_ops), c_ops
            assert sum(o[0] == "matmul" for o in c_ops) == 2
        # no re-tracing per call
        assert traced() == before


_MIXED = """
import fw

def f_mixed(x):
    v = x.sum().item()
    y = x * 2.0
    if y.mean() > 0:
        print("v", v)          # only printed on this branch
    else:
        y = y * v              # used on this one: the read becomes a guard
    return y
"""


def test_a_read_used_on_one_branch_only_becomes_a_guard(capsys):
    d: dict = {}
    exec(compile(_MIXED, "<string>", "exec"), d)
    f = d["f_mixed"]
    sf = fw.jit.to_static(f)
    vals = ([1.0, 2.0], [3.0, 4.0], [-1.0, -2.0], [1.0, 2.0], [-3.0, -1.0], [-1.0, -2.0],
            [5.0, 1.0])
    refs = [f(T(v)) for v in vals]
    eager_out = capsys.readouterr().out
    for v, ref in zip(vals, refs):
        assert_same(sf(T(v)), ref)
        x = np.array(v, "float32") * 2
        np.testing.assert_allclose(sf(T(v)).numpy(), x if x.mean() > 0 else x * sum(v))
    root = _root(sf)
    assert not root.free and _segments._FREE not in root.children
    # the positive sums 3, 7 and 6 each print on every call, as eagerly (each call twice
    # above: the comparison and the NumPy check)
    out = capsys.readouterr().out
    for line in ("v 3.0", "v 7.0", "v 6.0"):
        assert out.count(line) == 2 * eager_out.count(line)
    assert not sf._regions.eager_keys and sf._regions.disabled is None


_IN_BRANCH = """
import fw

def f_branch_print(x):
    v = x.sum().item()
    y = x * 2.0
    if y.mean() > 0:
        print("positive", v)   # printed on this branch only, every call
        y = y + 1.0
    return y
"""


def test_a_replayed_print_follows_its_branch(capsys):
    d: dict = {}
    exec(compile(_IN_BRANCH, "<string>", "exec"), d)
    f = d["f_branch_print"]
    sf = fw.jit.to_static(f)
    vals = ([1.0, 2.0], [-1.0, -2.0], [3.0, 4.0], [-5.0, 1.0], [2.0, 2.0])
    for v in vals:
        f(T(v))
    eager_out = capsys.readouterr().out
    for v in vals:
        assert_same(sf(T(v)), f(T(v)))
    both = capsys.readouterr().out  # the captured call's line, then the eager call's
    assert eager_out == "positive 3.0\npositive 7.0\npositive 4.0\n"
    assert both == "".join(f"{line}\n{line}\n" for line in eager_out.splitlines())
    assert _root(sf).free and _paths(sf) == 2


_STEP_CHILD = """
import json
import numpy as np
import fw

def step(net, x):
    loss = net(x).square().mean()
    print("loss", loss.item())       # every step: no guard, replayed
    return loss

fw.seed(3)
net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.Tanh(), fw.nn.Linear(8, 1))
sf = fw.jit.to_static(step)
rng = np.random.default_rng(0)
losses = []
for i in range(12):
    x = fw.to_tensor(rng.standard_normal((5, 4)).astype("float32"))
    loss = sf(net, x)
    loss.backward()
    losses.append(float(loss))
    g = [p.grad.numpy().copy() for p in net.parameters()]
    net.clear_gradients()
    ref = step(net, x)
    ref.backward()
    gd = max(float(np.abs(a - p.grad.numpy()).max()) for a, p in zip(g, net.parameters()))
    net.clear_gradients()
    assert gd < 1e-6, gd
print("RESULT" + json.dumps({"losses": losses,
                             "paths": sum(sf._regions.paths.values()),
                             "eager_keys": len(sf._regions.eager_keys)}))
"""


def test_python_c_training_step_printing_its_loss_every_call():
    import json
    import os
    import subprocess

    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-c", _STEP_CHILD], capture_output=True,
                          text=True, timeout=240, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    res = json.loads([ln for ln in lines if ln.startswith("RESULT")][0][len("RESULT"):])
    printed = [ln for ln in lines if ln.startswith("loss ")]
    # each step prints twice (captured, then the eager reference), the same value
    assert len(printed) == 24
    for k, loss in enumerate(res["losses"]):
        assert printed[2 * k] == printed[2 * k + 1]
        np.testing.assert_allclose(float(printed[2 * k].split()[1]), loss, rtol=1e-6)
    assert res["paths"] == 1 and res["eager_keys"] == 0
