"""Conversion of Python control flow: each construct with a symbolic (tensor)
condition, which must become a cond/while op, and with a Python condition, which
is evaluated while tracing (no op)."""

import numpy as np
import pytest
from jit_testutil import assert_same, check, ops_of

import fw

T = fw.to_tensor


# ------------------------------------------------------------------ if / elif / else
def f_if(x):
    if x.sum() > 0:
        y = x * 2
    elif x.sum() > -3:
        y = x + 100
    else:
        y = -x
    return y


@pytest.mark.parametrize("v", [[1.0, 2.0], [-1.0, 0.5], [-5.0, -1.0]])
def test_if_elif_else_tensor_condition(v):
    sf = check(f_if, T(v), expect_ops=["cond"])
    # one program serves every branch
    for w in ([3.0, 4.0], [-1.0, -1.0], [-9.0, 1.0]):
        assert_same(f_if(T(w)), sf(T(w)))
    assert len(sf.program_cache) == 1


def f_if_py(x, flag):
    if flag:
        y = x * 2
    else:
        y = x - 1
    return y


def test_if_python_condition_is_specialised():
    sf = check(f_if_py, T([1.0]), True, absent_ops=["cond"])
    assert_same(f_if_py(T([1.0]), False), sf(T([1.0]), False))
    assert len(sf.program_cache) == 2  # one program per Python value


def f_if_one_branch(x):
    y = x
    if x.mean() > 0:
        y = y + 1
        z = y * 3  # only defined in one branch, never used after: fine  # noqa: F841
    return y


def test_if_without_else_and_branch_locals():
    check(f_if_one_branch, T([1.0, 2.0]), expect_ops=["cond"])
    check(f_if_one_branch, T([-1.0, -2.0]))


def f_if_python_number(x):
    k = 0
    if x.sum() > 0:
        k = 5
    return x * k


def test_number_assigned_in_a_tensor_branch_becomes_a_tensor():
    check(f_if_python_number, T([1.0, 2.0]), expect_ops=["cond"])
    check(f_if_python_number, T([-1.0, -2.0]))


def f_if_shapes(x):
    if x.sum() > 0:
        y = fw.concat([x, x])
    else:
        y = fw.concat([x, x * 0, x])
    return y.sum()


def test_branches_with_different_shapes_give_dynamic_dims():
    sf = check(f_if_shapes, T([1.0, 2.0]), expect_ops=["cond"])
    cond = [op for op in sf.concrete_program.main_program.walk() if op.name == "cond"][0]
    assert cond.results[0].type.shape == (-1,)


def f_nested_if(x):
    if x[0] > 0:
        if x[1] > 0:
            r = x + 1
        else:
            r = x - 1
    else:
        r = x * 0
    return r


@pytest.mark.parametrize("v", [[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0]])
def test_nested_if(v):
    check(f_nested_if, T(v), expect_ops=["cond"])


# ------------------------------------------------------------------ while
def f_while(x, n):
    i = 0
    s = x
    while i < n:
        s = s + x * i
        i += 1
    return s, i


def test_while_tensor_condition():
    sf = check(f_while, T([1.0, 2.0]), T(4), expect_ops=["while"])
    assert_same(f_while(T([1.0, 2.0]), T(7)), sf(T([1.0, 2.0]), T(7)))
    assert len(sf.program_cache) == 1


def test_while_python_condition_is_unrolled():
    check(f_while, T([1.0, 2.0]), 3, absent_ops=["while"])


def f_while_growing(x):
    while fw.shape(x)[0] < 16 and x.sum() < 100:  # (x.shape[0] would be -1 once dynamic)
        x = fw.concat([x, x])
    return x


def test_while_carried_shape_becomes_dynamic():
    sf = check(f_while_growing, T([1.0, 2.0]), expect_ops=["while"])
    loop = [op for op in sf.concrete_program.main_program.walk() if op.name == "while"][0]
    assert loop.results[0].type.shape == (-1,)


def f_while_float(x):
    t = 0
    while t < x.sum():
        t = t + 0.75
    return t


def test_while_number_that_changes_dtype_in_the_loop():
    check(f_while_float, T([1.0, 2.0]), expect_ops=["while"])


# ------------------------------------------------------------------ for
def f_for_range(x, n):
    acc = x * 0
    for i in range(n):
        acc = acc + x * i
    return acc


def test_for_range_python_bound_is_unrolled():
    check(f_for_range, T([1.0, 2.0]), 4, absent_ops=["while"])


def test_for_range_tensor_bound():
    sf = check(f_for_range, T([1.0, 2.0]), T(4), expect_ops=["while"])
    assert_same(f_for_range(T([1.0, 2.0]), T(0)), sf(T([1.0, 2.0]), T(0)))


def f_for_range3(x, a, b):
    acc = x * 0
    for i in range(a, b, 2):
        acc = acc + i
    return acc


def test_for_range_start_stop_step():
    check(f_for_range3, T([1.0]), T(1), T(8), expect_ops=["while"])
    check(f_for_range3, T([1.0]), 1, 8, absent_ops=["while"])


def f_for_tensor(x):
    acc = fw.zeros([3])
    for row in x:
        acc = acc + row * 2
    return acc


def test_for_over_a_tensor():
    check(f_for_tensor, fw.arange(12, dtype="float32").reshape([4, 3]), expect_ops=["while"])


def test_for_over_a_tensor_with_a_dynamic_first_dim():
    """The trip count is the first dim's size at run time (not another dim's)."""
    spec = [fw.static.InputSpec([None, 3], "float32")]
    sf = fw.jit.to_static(f_for_tensor, input_spec=spec, full_graph=True)
    for n in (5, 1, 0):
        x = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
        np.testing.assert_allclose(sf(T(x)).numpy(), (x * 2).sum(axis=0))
    assert len(sf.program_cache) == 1 and "shape" in ops_of(sf)
    enum = fw.jit.to_static(f_for_enumerate, input_spec=[fw.static.InputSpec([None, 2])],
                            full_graph=True)
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_allclose(enum(T(x)).numpy(), (x * np.arange(4)[:, None]).sum(axis=0))


def f_for_enumerate(x):
    acc = fw.zeros([2])
    for i, row in enumerate(x):
        acc = acc + row * i
    return acc


def test_for_enumerate_tensor():
    check(f_for_enumerate, fw.ones([3, 2]), expect_ops=["while"])


def f_for_list(xs):
    acc = xs[0] * 0
    for x in xs:
        acc = acc + x
    return acc


def test_for_over_a_python_list_of_tensors():
    check(f_for_list, [T([1.0]), T([2.0]), T([3.0])], absent_ops=["while"])


# ------------------------------------------------------------------ break / continue
def f_break(x):
    acc = fw.zeros([2])
    for row in x:
        if row.sum() > 2:
            break
        acc = acc + row
    return acc


def f_continue(x):
    acc = fw.zeros([2])
    for row in x:
        if row.sum() < 1:
            continue
        acc = acc + row
    return acc


def f_break_py(x, n):
    acc = x * 0
    for i in range(10):
        if i >= n:
            break
        if i % 2 == 0:
            continue
        acc = acc + i
    return acc


def f_while_break(x):
    i = 0
    while True:
        x = x * 2
        i += 1
        if x.sum() > 50:
            break
    return x, i


def test_break_continue_tensor_conditions():
    m = T([[1.0, 0.0], [0.5, 0.1], [3.0, 3.0], [1.0, 1.0]])
    check(f_break, m, expect_ops=["while", "cond"])
    check(f_continue, m, expect_ops=["while", "cond"])


def test_break_continue_python_conditions():
    check(f_break_py, T([1.0]), 7, absent_ops=["while", "cond"])


def test_while_true_with_tensor_break():
    check(f_while_break, T([1.0, 2.0]), expect_ops=["while"])


def f_for_else(x, stop):
    for i in range(4):
        if i == stop:
            break
    else:
        x = x + 100
    return x


def test_for_else():
    check(f_for_else, T([1.0]), 2)
    check(f_for_else, T([1.0]), 9)


# ------------------------------------------------------------------ return
def f_early_return(x):
    if x.sum() > 0:
        return x * 2
    y = x - 1
    return y * 3


def f_return_in_loop(x):
    for row in x:
        if row.sum() > 2:
            return row
    return x[0] * 0


def f_return_python(x, k):
    if k > 1:
        return x + k
    return x


@pytest.mark.parametrize("v", [[1.0, 2.0], [-1.0, -2.0]])
def test_early_return_tensor_condition(v):
    check(f_early_return, T(v), expect_ops=["cond"])


def test_return_inside_a_loop():
    check(f_return_in_loop, T([[1.0, 0.0], [2.0, 1.0], [5.0, 5.0]]), expect_ops=["while"])
    check(f_return_in_loop, T([[1.0, 0.0], [0.0, 1.0]]), expect_ops=["while"])


def test_return_python_condition():
    check(f_return_python, T([1.0]), 3, absent_ops=["cond"])
    check(f_return_python, T([1.0]), 0, absent_ops=["cond"])


def f_return_structure(x):
    if x.sum() > 0:
        return x, {"a": x + 1}
    return -x, {"a": x - 1}


def test_return_nested_structure():
    check(f_return_structure, T([1.0]))
    check(f_return_structure, T([-1.0]))


# ------------------------------------------------------------------ boolean operators
def f_and_or(x, y):
    if x.sum() > 0 and y.sum() > 0:
        r = x + y
    elif x.sum() > 0 or y.sum() > 0:
        r = x - y
    else:
        r = x * y
    return r


@pytest.mark.parametrize("a,b", [(1.0, 1.0), (1.0, -1.0), (-1.0, -1.0)])
def test_and_or_tensor(a, b):
    check(f_and_or, T([a]), T([b]), expect_ops=["logical_and", "logical_or", "cond"])


def f_not(x):
    if not x.sum() > 0:
        return x - 1
    return x + 1


def test_not_tensor():
    check(f_not, T([1.0]), expect_ops=["logical_not"])
    check(f_not, T([-1.0]))


def f_python_and(x, a, b):
    if a and b:
        return x + 1
    return x if not a else x * 2


def test_python_boolean_operators_short_circuit():
    check(f_python_and, T([1.0]), True, 0, absent_ops=["cond", "logical_and"])
    check(f_python_and, T([1.0]), 0, None, absent_ops=["cond"])


def f_ifexp(x):
    y = x * 2 if x.sum() > 0 else x * -3
    return y


def test_conditional_expression():
    check(f_ifexp, T([1.0, 2.0]), expect_ops=["cond"])
    check(f_ifexp, T([-1.0, -2.0]))


def f_chained(x):
    if 0 < x.sum() < 10:
        return x
    return -x


def test_chained_comparison():
    check(f_chained, T([1.0]), expect_ops=["logical_and"])
    check(f_chained, T([20.0]))


# ------------------------------------------------------------------ builtins
def f_len(x):
    n = len(x)
    return x * n


def f_len_dynamic(x):
    return fw.ones([2]) * len(x)


def test_len():
    check(f_len, T([1.0, 2.0, 3.0]))
    sf = fw.jit.to_static(f_len_dynamic, input_spec=[fw.static.InputSpec([None, 2])],
                          full_graph=True)
    assert_same(sf(fw.ones([5, 2])), T([5.0, 5.0]))
    assert "shape" in ops_of(sf)


def f_isinstance(x):
    if isinstance(x, fw.Tensor):
        return x + 1
    return x


def test_isinstance_of_a_symbolic_tensor_is_true():
    check(f_isinstance, T([1.0]))


def f_print(x):
    print("value:", x)
    return x + 1


def test_print_runs_with_the_program(capsys):
    sf = fw.jit.to_static(f_print, full_graph=True)
    sf(T([1.5]))
    sf(T([2.5]))
    out = capsys.readouterr().out
    assert out.count("value:") == 2 and "2.5" in out and "1.5" in out
    assert len(sf.program_cache) == 1


def f_assert(x):
    assert x.sum() > 0, "x must be positive"
    return x * 2


def test_assert_on_a_tensor_is_checked_each_run():
    sf = fw.jit.to_static(f_assert, full_graph=True)
    assert_same(sf(T([1.0])), T([2.0]))
    with pytest.raises(AssertionError, match="x must be positive"):
        sf(T([-1.0]))
    assert_same(sf(T([3.0])), T([6.0]))  # the flag is reset after a failure


def f_assert_one_element(x):
    assert x > 0, "x must be positive"  # a [1] condition, as Python's bool() takes
    return x * 2


def test_assert_on_a_one_element_tensor_condition():
    sf = fw.jit.to_static(f_assert_one_element, full_graph=True)
    for _ in range(2):  # the flag is reset after a failure
        np.testing.assert_array_equal(sf(T([1.5])).numpy(), [3.0])
        with pytest.raises(AssertionError, match="x must be positive"):
            f_assert_one_element(T([-1.0]))
        with pytest.raises(AssertionError, match="x must be positive"):
            sf(T([-1.0]))


def f_assert_py(x, n):
    assert n > 0, "n must be positive"
    return x * n


def test_assert_python():
    sf = fw.jit.to_static(f_assert_py, full_graph=True)
    assert_same(sf(T([1.0]), 2), T([2.0]))
    with pytest.raises(AssertionError, match="n must be positive"):
        sf(T([1.0]), 0)


# ------------------------------------------------------------------ lists and mutation
def f_list_unrolled(x):
    outs = []
    for i in range(3):
        outs.append(x * i)
    return fw.stack(outs)


def f_list_symbolic(x, n):
    outs = []
    i = 0
    while i < n:
        outs.append(x * i)
        i += 1
    return fw.stack(outs), fw.concat(outs, axis=0), len(outs)


def f_list_for_tensor(x):
    outs = [x[0]]
    for row in x:
        outs.append(row * 2)
    return fw.stack(outs)


def test_list_append_unrolled():
    check(f_list_unrolled, T([1.0, 2.0]), absent_ops=["while"])


def test_list_append_in_a_tensor_loop_is_a_tensor_array():
    sf = check(f_list_symbolic, T([1.0, 2.0]), T(3), expect_ops=["while", "concat"])
    a, c, n = sf(T([1.0, 2.0]), T(5))
    assert a.shape == [5, 2] and c.shape == [10] and int(n) == 5
    check(f_list_for_tensor, fw.ones([3, 2]), expect_ops=["while"])


def f_inplace(x):
    y = x * 1
    y.add_(x)
    y.scale_(2.0)
    return y


def test_inplace_methods_are_rebound():
    check(f_inplace, T([1.0, 2.0]))


def f_setitem(x):
    y = x * 1
    y[0] = 5.0
    y[1:3] = y[1:3] * 10
    y[-1] += 1
    return y


def test_setitem_is_functional():
    check(f_setitem, T([1.0, 2.0, 3.0, 4.0]), expect_ops=["setitem"])


def f_setitem_in_branch(x):
    y = x * 1
    if x.sum() > 0:
        y[0] = 0.0
    return y


def test_setitem_inside_a_tensor_branch():
    check(f_setitem_in_branch, T([1.0, 2.0]), expect_ops=["cond", "setitem"])
    check(f_setitem_in_branch, T([-1.0, -2.0]))


def test_python_values_still_work():
    def f(x, cfg):
        total = 0
        for _k, v in sorted(cfg.items()):
            total += v
        names = [k.upper() for k in cfg]
        return x * total, "".join(names)

    eager = f(T([1.0]), {"a": 1, "b": 2})
    sf = fw.jit.to_static(f, full_graph=True)
    assert_same(eager, sf(T([1.0]), {"a": 1, "b": 2}))


def test_undefined_branch_variable_reports_its_name():
    def f(x):
        if x.sum() > 0:
            z = x * 2
        return z

    with pytest.raises(fw.jit.ConversionError, match="'z'.*only in the true branch"):
        fw.jit.to_static(f, full_graph=True)(T([1.0]))


def test_generic_results_are_reproducible():
    x = np.random.RandomState(0).randn(4, 3).astype("float32")
    check(f_for_tensor, T(x[:, :3]))


def f_print_in_branch(x):
    if x.sum() > 0:
        print("inside", x)
    return x


def test_print_inside_tensor_control_flow_is_noted(capsys):
    sf = fw.jit.to_static(f_print_in_branch, full_graph=True)
    sf(T([1.0]))
    assert "symbolic" in capsys.readouterr().out
    notes = sf.conversion_report.notes
    assert len(notes) == 1 and "trace time" in notes[0][2]


def f_assert_in_branch(x):
    if x.sum() > 0:
        assert x.min() > 0, "all positive"
    return x


def test_assert_inside_a_tensor_branch():
    sf = fw.jit.to_static(f_assert_in_branch, full_graph=True)
    sf(T([1.0, 2.0]))
    sf(T([-1.0, -2.0]))  # the branch is not taken: no check
    with pytest.raises(AssertionError, match="all positive"):
        sf(T([3.0, -1.0]))


def f_range_negative_step(x, a, b, s):
    acc = x * 0
    for i in range(a, b, s):
        acc = acc + i
    return acc


def test_range_with_symbolic_negative_step():
    check(f_range_negative_step, T([1.0]), T(5), T(0), T(-2), expect_ops=["while"])


def f_concat_array(x, n):
    parts = []
    for i in range(n):
        parts.append(x + i)
    return fw.concat(parts, axis=0)


def test_tensor_array_concat():
    check(f_concat_array, fw.ones([2, 3]), T(3), expect_ops=["while"])


def f_range_of(x, n):
    acc = x
    for i in range(n):
        acc = acc + i
    return acc


_INT_BOUND = fw.to_tensor(3)
_FLOAT_BOUND = fw.to_tensor(3.0)


def f_range_of_captured(x, which):
    acc = x
    for _ in range(_INT_BOUND if which == "int" else _FLOAT_BOUND):
        acc = acc + 1.0
    return acc


def test_range_of_concrete_values_is_pythons_range():
    """Bounds that are no symbolic tensors go to Python's range as they are: an
    integer tensor is an index, a float (Python or tensor) is refused, as eagerly."""
    sf = fw.jit.to_static(f_range_of, full_graph=True)
    np.testing.assert_allclose(sf(T([1.0]), 3).numpy(), [4.0])  # 1 + 0 + 1 + 2
    for bad in (2.5, 3.0):
        with pytest.raises(TypeError, match="'float' object cannot be interpreted"):
            f_range_of(T([1.0]), bad)
        with pytest.raises(TypeError, match="'float' object cannot be interpreted"):
            sf(T([1.0]), bad)
    sc = fw.jit.to_static(f_range_of_captured, full_graph=True)
    np.testing.assert_allclose(sc(T([0.0]), "int").numpy(), [3.0])
    with pytest.raises(TypeError, match="only integer tensors"):
        f_range_of_captured(T([0.0]), "float")
    with pytest.raises(TypeError, match="only integer tensors"):
        sc(T([0.0]), "float")


def f_append_after_a_tensor_loop(x, n):
    parts = [x]
    alias = parts
    i = 0
    while i < n:
        x = x + 1
        i += 1
    parts.append(x * 2)  # back at the top level: a real append, seen through alias
    return alias


def test_append_after_a_tensor_loop_mutates_the_list():
    out = fw.jit.to_static(f_append_after_a_tensor_loop, full_graph=True)(T([1.0]), T(2))
    assert len(out) == 2
    np.testing.assert_allclose(out[0].numpy(), [1.0])
    np.testing.assert_allclose(out[1].numpy(), [6.0])  # (1 + 2) * 2
