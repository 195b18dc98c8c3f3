"""to_static as Paddle 3 behaves: ``full_graph=False`` by default, graph breaks at
``.numpy()``/``.item()``/``print(tensor)``, and functions whose source is not
available (``python -c``, stdin, ``exec``) run correctly and are reported honestly.
Each case compares to_static with eager results (and NumPy); ``full_graph=True``
keeps raising clear errors."""

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from jit_testutil import assert_same

import fw
from fw.jit import ConversionError

T = fw.to_tensor


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    for i, ln in enumerate(lines):
        if text in ln:
            return first + i
    raise AssertionError(text)


# ------------------------------------------------------------------ the default
def test_default_is_full_graph_false_with_paddles_signature():
    # Paddle 3.3.1: to_static(function=None, input_spec=None, build_strategy=None,
    # backend='CINN', **kwargs) with kwargs.get("full_graph") falling back to SOT
    ps = inspect.signature(fw.jit.to_static).parameters
    assert list(ps)[:4] == ["function", "input_spec", "build_strategy", "backend"]
    assert "full_graph" not in ps and ps["kwargs"].kind is inspect.Parameter.VAR_KEYWORD
    assert fw.jit.to_static(lambda x: x)._full_graph is False
    assert fw.jit.to_static(lambda x: x, full_graph=True)._full_graph is True
    with pytest.raises(TypeError, match="full_graph must be a bool"):
        fw.jit.to_static(lambda x: x, full_graph="yes")


def f_item_top(x):
    s = x.sum().item()  # needs the value: a graph break
    y = x * s
    return y + 1


def test_default_mode_breaks_the_graph_at_item_and_strict_mode_raises():
    x = T([1.0, 2.0, 3.0])
    sf = fw.jit.to_static(f_item_top)
    out = sf(x)
    np.testing.assert_allclose(out.numpy(), np.array([1.0, 2.0, 3.0]) * 6.0 + 1, rtol=1e-6)
    assert_same(out, f_item_top(x))
    rep = sf.conversion_report
    assert [ln for _, ln, _, _ in rep.fallbacks] == [_line_of(f_item_top, "x.sum().item()")]
    assert ".item()" in rep.fallbacks[0][3] and "x.sum().item()" in str(rep)
    # the statements after the break still run as a program
    assert len(sf._regions.cache) == 1
    with pytest.raises(ConversionError, match=r"\.item\(\)"):
        fw.jit.to_static(f_item_top, full_graph=True)(x)


def _helper_numpy(v):
    return float(v.numpy().max())  # in a function the converted one calls


def f_numpy_in_branch(x):
    y = x * 2
    if y.sum() > 0:
        k = _helper_numpy(y)
        y = y / k
    else:
        y = y - 1
    return y * 3


def test_numpy_inside_a_tensor_branch_and_a_called_function():
    sf = fw.jit.to_static(f_numpy_in_branch)
    for v in ([1.0, 4.0], [-1.0, -2.0], [3.0, -0.5]):
        x = np.asarray(v, np.float32)
        y = x * 2
        want = (y / y.max() if y.sum() > 0 else y - 1) * 3  # NumPy reference
        got = sf(T(x))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        assert_same(got, f_numpy_in_branch(T(x)))
    rep = sf.conversion_report
    assert [ln for _, ln, _, _ in rep.fallbacks] == \
        [_line_of(f_numpy_in_branch, "if y.sum() > 0:")]
    assert ".numpy()" in rep.fallbacks[0][3]
    with pytest.raises(ConversionError, match=r"\.numpy\(\)"):
        fw.jit.to_static(f_numpy_in_branch, full_graph=True)(T([1.0, 4.0]))


def f_print(x):
    y = x + 1
    print("y is", y)
    z = y * 2
    print("z sum", z.sum())
    return z


def test_print_of_a_tensor_is_a_graph_break_printing_as_eager(capsys):
    x = T([1.0, 2.0])
    f_print(x)
    eager_out = capsys.readouterr().out
    sf = fw.jit.to_static(f_print)
    for _ in range(2):  # the trace and the cached plan print the same as eager
        out = sf(x)
        assert capsys.readouterr().out == eager_out
        assert_same(out, f_print(x))
        capsys.readouterr()
    lines = [ln for _, ln, _, _ in sf.conversion_report.fallbacks]
    assert lines == [_line_of(f_print, 'print("y is", y)'), _line_of(f_print, 'print("z sum"')]
    assert all("print() of a tensor" in r for *_, r in sf.conversion_report.fallbacks)


def f_print_in_branch(x):
    if x.sum() > 0:
        print("positive", x)
        x = x * 2
    return x - 1


def test_print_inside_a_tensor_branch_prints_values_each_call(capsys):
    sf = fw.jit.to_static(f_print_in_branch)
    for v in ([1.0, 2.0], [-3.0, 1.0], [5.0, 0.0]):
        f_print_in_branch(T(v))
        want = capsys.readouterr().out
        got = sf(T(v))
        assert capsys.readouterr().out == want  # values, not the symbolic type
        assert_same(got, f_print_in_branch(T(v)))
        capsys.readouterr()
    # full_graph=True keeps today's behaviour: printed at trace time, noted
    strict = fw.jit.to_static(f_print_in_branch, full_graph=True)
    assert_same(strict(T([1.0, 2.0])), f_print_in_branch(T([1.0, 2.0])))
    assert "trace time" in str(strict.conversion_report)


def test_graph_break_gradients_match_eager():
    def f(x):
        a = x * x
        s = a.mean().item()
        print("mean", s)
        return (a * s).sum()

    x1 = T([1.0, -2.0, 0.5], stop_gradient=False)
    x2 = T([1.0, -2.0, 0.5], stop_gradient=False)
    fw.jit.to_static(f)(x1).backward()
    f(x2).backward()
    assert_same(x1.grad, x2.grad)


# ------------------------------------------------------------------ no source
_NO_SOURCE_DEFS = """
def f_branch(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    return y + 1

def f_plain(x):
    return x * 3 + 1
"""


def _no_source_checks(ns):
    """What every no-source case checks; returns a dict of findings (JSON-able)."""
    f_branch, f_plain = ns["f_branch"], ns["f_plain"]
    res = {}
    pos, neg = T([1.0, 2.0]), T([-1.0, -4.0])
    sf = fw.jit.to_static(f_branch)  # default: full_graph=False
    res["branch"] = [sf(pos).tolist(), sf(neg).tolist()]
    res["branch_eager"] = [f_branch(pos).tolist(), f_branch(neg).tolist()]
    res["report"] = str(sf.conversion_report)
    res["paths"] = sum(sf._regions.paths.values())
    res["branch_again"] = [sf(pos).tolist(), sf(neg).tolist()]  # replayed from the trie
    res["paths_again"] = sum(sf._regions.paths.values())
    plain = fw.jit.to_static(f_plain)
    res["plain"] = plain(pos).tolist()
    res["plain_programs"] = sum(plain._regions.paths.values())  # one captured path
    res["plain_segments"] = [s for _, s, _ in plain.conversion_report.captures]
    res["plain_report"] = str(plain.conversion_report)
    try:
        fw.jit.to_static(f_branch, full_graph=True)(pos)
        res["strict"] = None
    except ConversionError as e:
        res["strict"] = str(e)
    return res


def _assert_no_source_findings(res, origin):
    assert res["branch"] == res["branch_eager"] == [[3.0, 5.0], [-1.0, -4.0]]
    assert res["branch_again"] == res["branch"]
    rep = res["report"]
    # captured by trace (one graph break at the `if`, line 3), not converted, not eager
    assert "runs eagerly" not in rep and "source is not available" in rep and origin in rep
    assert "not converted" in rep and "captured by tracing" in rep
    m = re.search(re.escape(origin) + r":(\d+): graph break: `bool\(\)`", rep)
    assert m, rep
    ln = int(m.group(1))  # the line of `if x.sum() > 0:` (3 in the exec'd text)
    assert f"{origin}:{ln - 1}: not converted" in rep
    assert f"guards: line {ln} -> True" in rep and f"guards: line {ln} -> False" in rep
    assert res["paths"] == res["paths_again"] == 2  # both outcomes traced once, then replayed
    assert "are converted" not in rep  # never claims a conversion
    assert res["plain"] == [4.0, 7.0] and res["plain_programs"] == 1  # traced as written
    assert res["plain_segments"] == [1]  # no graph break: one program
    assert "not converted" in res["plain_report"]
    strict = res["strict"]
    assert strict is not None and "f_branch" in strict and "source is not available" in strict
    assert "are converted in the function itself" not in strict


def test_exec_defined_function_runs_and_is_reported_honestly():
    ns: dict = {"fw": fw}
    exec(compile(_NO_SOURCE_DEFS, "<string>", "exec"), ns)
    res = _no_source_checks(ns)
    _assert_no_source_findings(res, "<string>")
    assert "<string>:3" in res["strict"]  # the line of the tensor `if`


_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {here!r})
    import fw
    from test_graph_breaks import _no_source_checks
    DEFS
    print("RESULT" + json.dumps(_no_source_checks(globals())))
""")


def _run_script(mode):
    here = os.path.dirname(os.path.abspath(__file__))
    code = _SCRIPT.format(here=here).replace("DEFS", _NO_SOURCE_DEFS)
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
    return json.loads(line[0][len("RESULT"):])


@pytest.mark.parametrize("mode,origin", [("-c", "<string>"), ("stdin", "<stdin>")])
def test_python_c_and_stdin_functions_run_and_are_reported_honestly(mode, origin):
    _assert_no_source_findings(_run_script(mode), origin)


def test_a_lambda_is_reported_as_a_lambda_and_captured_with_a_graph_break():
    f = lambda x: x * 2 if x.sum() > 0 else x - 1  # noqa: E731
    sf = fw.jit.to_static(f)
    for v in ([1.0, 2.0], [-1.0, -2.0]):
        assert_same(sf(T(v)), f(T(v)))
    rep = str(sf.conversion_report)
    assert "it is a lambda" in rep and "graph break" in rep and "runs eagerly" not in rep
    with pytest.raises(ConversionError, match="because it is a lambda"):
        fw.jit.to_static(f, full_graph=True)(T([1.0]))


def test_a_whole_program_asked_for_keeps_prints_as_print_ops(tmp_path, capsys):
    """get_concrete_program / fw.jit.save need one program: no fallback exists there,
    so print stays a print op (values printed by each run) even by default."""
    sf = fw.jit.to_static(f_print)
    cp = sf.get_concrete_program(T([1.0, 2.0]))
    assert "print" in " ".join(op.name for op in cp.main_program.walk()) or cp.prints
    layer = fw.nn.Linear(2, 2)

    class Net(fw.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = layer

        def forward(self, x):
            y = self.fc(x)
            print("y", y)
            return y

    fw.jit.save(fw.jit.to_static(Net()), str(tmp_path / "m"),
                input_spec=[fw.static.InputSpec([1, 2], "float32")])
    loaded = fw.jit.load(str(tmp_path / "m"))
    x = T([[1.0, -1.0]])
    assert_same(loaded(x), layer(x))
