"""Errors are the user's: they name the construct and the user's file:line, say
what to write instead, and are `ConversionError`s (never a crash of the process);
`full_graph=False` runs what cannot be converted eagerly and reports it."""

import logging

import numpy as np
import pytest
from jit_testutil import assert_same

import fw
from fw.jit import ConversionError

T = fw.to_tensor
HERE = __file__


def _line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    for i, ln in enumerate(lines):
        if text in ln:
            return first + i
    raise AssertionError(text)


def f_numpy(x):
    y = x * 2
    v = y.numpy()
    return v


def f_item(x):
    return x + x.sum().item()


def f_int(x):
    n = int(x.sum())
    return x * n


def f_np_call(x):
    return np.tanh(x)


def f_np_kwarg(x):
    return np.sum(a=x)  # the symbolic tensor passed by keyword


def f_bad_cond(x):
    if x > 0:  # a 2-element condition
        return x
    return -x


@fw.jit.not_to_static
def library_code(v):
    if v:  # not converted: a symbolic v cannot be a Python bool
        return v
    return -v


def f_bool_in_library(x):
    return library_code(x.sum())


@pytest.mark.parametrize("fn,text,construct,words", [
    (f_numpy, "v = y.numpy()", "numpy", "`.numpy()`"),
    (f_item, "x.sum().item()", "item", "`.item()`"),
    (f_int, "n = int(x.sum())", "int", "`int`"),
    (f_np_call, "np.tanh(x)", "numpy.tanh", "numpy.tanh"),
    (f_np_kwarg, "np.sum(a=x)", "numpy.sum", "numpy.sum"),
    (f_bad_cond, "if x > 0", "`if`", "one value"),
])
def test_error_names_construct_and_line(fn, text, construct, words):
    with pytest.raises(ConversionError) as ei:
        fw.jit.to_static(fn, full_graph=True)(T([1.0, 2.0]))
    e = ei.value
    assert e.filename == HERE and e.lineno == _line_of(fn, text), (e.filename, e.lineno)
    assert words in str(e)
    assert f"{HERE}:{e.lineno}" in str(e) and text in str(e)
    assert e.hint  # says what to write instead
    assert construct in (e.construct or "") or construct in str(e)


def test_conversion_error_is_an_unsupported_error():
    assert issubclass(ConversionError, fw.core.errors.UnsupportedError)
    assert issubclass(ConversionError, NotImplementedError)


def test_bool_in_unconverted_code():
    with pytest.raises(ConversionError, match="as a Python bool"):
        fw.jit.to_static(f_bool_in_library, full_graph=True)(T([1.0]))


def test_generator_is_refused_with_a_clear_message():
    def g(x):
        for _ in range(2):
            yield x

    with pytest.raises(ConversionError, match="yield"):
        fw.jit.to_static(g, full_graph=True)(T([1.0]))


def test_user_errors_keep_their_type_and_get_a_note():
    def f(x):
        return fw.matmul(x, fw.ones([5, 2]))  # shape mismatch: the user's bug

    with pytest.raises(fw.core.errors.InvalidArgumentError) as ei:
        fw.jit.to_static(f, full_graph=True)(fw.ones([2, 3]))
    assert any("to_static" in n for n in getattr(ei.value, "__notes__", []))


def test_type_mismatch_between_branches_names_the_variable():
    def f(x):
        if x.sum() > 0:
            y = x.astype("float64")
        else:
            y = x
        return y

    with pytest.raises(ConversionError, match="'y' is float64 after the true branch"):
        fw.jit.to_static(f, full_graph=True)(T([1.0]))


def test_python_value_depending_on_a_tensor_names_the_variable():
    def f(x):
        if x.sum() > 0:
            mode = "a"
        else:
            mode = "b"
        return x, mode

    with pytest.raises(ConversionError, match="variable 'mode'"):
        fw.jit.to_static(f, full_graph=True)(T([1.0]))


def test_variable_first_assigned_in_a_tensor_loop():
    def f(x):
        i = 0
        while i < x.sum():
            last = x * i
            i += 1
        return last

    with pytest.raises(ConversionError, match="'last'.*inside the loop"):
        fw.jit.to_static(f, full_graph=True)(T([3.0]))


def test_backward_inside_tensor_branch_is_refused():
    lin = fw.nn.Linear(2, 1)

    def f(x):
        loss = lin(x).mean()
        if loss > 0:
            loss.backward()
        return loss

    with pytest.raises(ConversionError, match="backward"):
        fw.jit.to_static(f, full_graph=True)(fw.ones([1, 2]))


# ------------------------------------------------------------------ full_graph=False
def f_mixed(x):
    a = x * 2
    n = int(a.sum().numpy())
    b = a + n
    c = np.tanh(np.asarray(b))
    d = fw.to_tensor(c) * 3
    if d.sum() > 0:
        d = d + 1
    return d


def test_fallback_runs_unconvertible_statements_eagerly(caplog):
    sf = fw.jit.to_static(f_mixed, full_graph=False)
    x = T([0.5, 1.0])
    with caplog.at_level(logging.WARNING, logger="fw.jit"):
        out = sf(x)
    assert_same(out, f_mixed(x))
    rep = sf.conversion_report
    lines = [ln for _, ln, _, _ in rep.fallbacks]
    assert lines == [_line_of(f_mixed, "int(a.sum().numpy())"),
                     _line_of(f_mixed, "np.tanh(np.asarray(b))")]
    assert "calls .numpy()" in rep.fallbacks[0][3]
    assert "numpy.asarray" in rep.fallbacks[1][3]
    assert "np.tanh(np.asarray(b))" in str(rep)
    logged = [r for r in caplog.records if "runs eagerly" in r.getMessage()]
    assert len(logged) == 2
    # the report and the log name each fallback once; later calls reuse the plan
    out2 = sf(T([2.0, -1.0]))
    assert_same(out2, f_mixed(T([2.0, -1.0])))
    assert len(rep.fallbacks) == 2


def test_fallback_gradients_flow_through_programs_and_eager_statements():
    def f(x):
        a = x * x
        k = float(a.sum().numpy())
        return (a * k).sum()

    sf = fw.jit.to_static(f, full_graph=False)
    x = T([1.0, 2.0], stop_gradient=False)
    sf(x).backward()
    x2 = T([1.0, 2.0], stop_gradient=False)
    f(x2).backward()
    assert_same(x.grad, x2.grad)


def test_full_graph_true_is_strict():
    with pytest.raises(ConversionError):
        fw.jit.to_static(f_mixed, full_graph=True)(T([0.5, 1.0]))


def test_fully_convertible_function_has_an_empty_report():
    def f(x):
        return x + 1

    sf = fw.jit.to_static(f, full_graph=False)
    sf(T([1.0]))
    assert sf.conversion_report.empty


def test_fallback_training_step_with_an_eager_logging_line():
    import copy

    fw.seed(0)
    a = fw.nn.Sequential(fw.nn.Linear(4, 5), fw.nn.ReLU(), fw.nn.Linear(5, 2))
    b = copy.deepcopy(a)
    oa = fw.optimizer.Adam(0.01, parameters=a.parameters())
    ob = fw.optimizer.Adam(0.01, parameters=b.parameters())
    logged = []

    def step(model, opt):
        def f(x, y):
            loss = fw.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            logged.append(loss.item())  # needs the value: runs eagerly
            opt.step()
            opt.clear_grad()
            return loss
        return f

    eager = step(a, oa)
    static = fw.jit.to_static(step(b, ob), full_graph=False)
    rng = np.random.RandomState(0)
    for _ in range(3):
        x = T(rng.randn(6, 4).astype("float32"))
        y = T(rng.randint(0, 2, 6))
        assert_same(eager(x, y), static(x, y), rtol=1e-5)
    for p, q in zip(a.parameters(), b.parameters()):
        assert_same(p, q, rtol=1e-5, atol=1e-6)
    assert len(static.conversion_report.fallbacks) == 1
    assert logged[0::2] == pytest.approx(logged[1::2], rel=1e-5)


def f_region_inner(x):
    a = x * 2
    k = float(a.sum().numpy())  # eager
    return a + k


def f_region_outer(x, inner):
    b = x + 1
    k = float(b.sum().numpy())  # eager
    c = inner(b)  # the inner function runs its own regions
    return c * k


def test_fallback_functions_nest_each_with_its_own_regions():
    inner = fw.jit.to_static(f_region_inner, full_graph=False)
    outer = fw.jit.to_static(f_region_outer, full_graph=False)
    for v in ([1.0, 2.0], [-3.0, 0.5]):
        x = np.asarray(v, np.float32)
        b = x + 1
        a = b * 2
        want = (a + a.sum()) * b.sum()  # NumPy reference
        np.testing.assert_allclose(outer(T(x), inner).numpy(), want, rtol=1e-6)
    # each function's report lists its own eager statements (the inner one once)
    assert [ln for _, ln, _, _ in inner.conversion_report.fallbacks] == \
        [_line_of(f_region_inner, "k = float(a.sum().numpy())")]
    assert [ln for _, ln, _, _ in outer.conversion_report.fallbacks][0] == \
        _line_of(f_region_outer, "k = float(b.sum().numpy())")


def f_region_no_return(x, out):
    y = x * 2
    out.append(float(y.sum().numpy()))


def test_region_form_code_outside_a_runner_runs_as_plain_python():
    """The region form of a function called with no runner active runs its
    statements in order: the return value, or None when it falls off the end."""
    from fw.jit._regions import RegionRunner

    r = RegionRunner(fw.jit.to_static(f_region_inner, full_graph=False))
    x = np.asarray([1.0, 2.0], np.float32)
    np.testing.assert_allclose(r.fn(T(x)).numpy(), x * 2 + 6.0)
    seen = []
    r2 = RegionRunner(fw.jit.to_static(f_region_no_return, full_graph=False))
    assert r2.fn(T(x), seen) is None
    assert seen == [6.0]


_EARLY_SEEN: list = []


def f_region_early_return(x):
    if x.sum() > 0:
        return x * 2
    _EARLY_SEEN.append(float(x.sum().numpy()))  # eager
    return x - 1


def test_region_form_stops_at_a_return_with_and_without_a_runner():
    """A return taken in an earlier region (a Python flag outside a runner, a
    concrete bool tensor after a traced group) ends the function: later statements
    never run."""
    from fw.jit._regions import RegionRunner

    x = np.asarray([1.0, 2.0], np.float32)
    for call in (RegionRunner(fw.jit.to_static(f_region_early_return, full_graph=False)).fn,
                 fw.jit.to_static(f_region_early_return, full_graph=False)):
        _EARLY_SEEN.clear()
        np.testing.assert_allclose(call(T(x)).numpy(), x * 2)
        assert _EARLY_SEEN == []
        np.testing.assert_allclose(call(T(-x)).numpy(), -x - 1)
        assert _EARLY_SEEN == [-3.0]
