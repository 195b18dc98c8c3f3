"""``break``/``continue``/``return`` in converted loops and branches, at each
position a loop can leave (first iteration, a middle one, the last, never),
in Python loops and in loops that become ``while`` ops, nested loops, and what
becomes of variables that only some paths assign.

Each converted function is called on several inputs through one cached program,
so a single trace must serve every exit position."""

import re

import numpy as np
import pytest
from jit_testutil import assert_same, ops_of

import fw

T = fw.to_tensor
# rows whose sum first exceeds 2.5 at row 0, 1, 3 (the last) or never
ROWS = {
    "first": [[3.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
    "middle": [[1.0, 1.0], [2.0, 2.0], [0.0, 1.0], [5.0, 0.0]],
    "last": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 2.0]],
    "never": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]],
}


def _agree(fn, arg_sets, expect_ops=()):
    """`fn` eagerly and converted agree on every argument tuple (one program)."""
    sf = fw.jit.to_static(fn, full_graph=True)
    for args in arg_sets:
        assert_same(fn(*args), sf(*args))
    names = ops_of(sf)
    for op in expect_ops:
        assert op in names, (op, names)
    return sf


def _rows():
    return [(T(np.array(r, np.float32)),) for r in ROWS.values()]


# ------------------------------------------------------------------ break
def f_for_tensor_break(m):
    acc = m[0] * 0
    seen = fw.zeros([], "int64")
    for row in m:
        seen = seen + 1
        if row.sum() > 2.5:
            break
        acc = acc + row
    return acc, seen


def f_range_tensor_break(m):
    acc = m[0] * 0
    k = fw.zeros([], "int64")
    for i in range(4):  # a Python loop: iterations after a tensor break do nothing
        k = k + 1
        if m[i].sum() > 2.5:
            break
        acc = acc + m[i] * (i + 1)
    return acc, k


def f_while_tensor_break(m):
    i = fw.zeros([], "int64")
    acc = m[0] * 0
    while i < 4:
        row = m[i]
        i = i + 1
        if row.sum() > 2.5:
            break
        acc = acc + row
    return acc, i


@pytest.mark.parametrize("fn", [f_for_tensor_break, f_range_tensor_break, f_while_tensor_break])
def test_break_at_every_position(fn):
    _agree(fn, _rows(), expect_ops=["cond"])


def f_break_then_else(m):
    acc = m[0] * 0
    for i in range(4):
        if m[i].sum() > 2.5:
            acc = acc + 100
            break
        acc = acc + m[i]
    else:
        acc = acc - 1000
    return acc


def test_for_else_with_a_tensor_break():
    _agree(f_break_then_else, _rows(), expect_ops=["cond"])


# ------------------------------------------------------------------ continue
def f_continue_positions(m):
    acc = m[0] * 0
    n = fw.zeros([], "int64")
    for row in m:
        n = n + 1
        if row.sum() > 2.5:
            continue
        acc = acc * 2 + row
    return acc, n


def f_range_continue(m):
    acc = m[0] * 0
    for i in range(4):
        if m[i].sum() > 2.5:
            continue
        acc = acc * 2 + m[i]
    return acc


@pytest.mark.parametrize("fn", [f_continue_positions, f_range_continue])
def test_continue_at_every_position(fn):
    _agree(fn, _rows(), expect_ops=["cond"])


# ------------------------------------------------------------------ return
def f_return_in_tensor_loop(m):
    for row in m:
        if row.sum() > 2.5:
            return row * 10
    return m[0] * 0 - 1


def f_return_in_python_loop(m):
    acc = m[0] * 0
    for i in range(4):
        acc = acc + m[i]
        if m[i].sum() > 2.5:
            return acc * 10
    return acc - 1


def f_return_in_while(m):
    i = 0
    acc = m[0] * 0
    while i < fw.shape(m)[0]:
        acc = acc + m[i]
        if m[i].sum() > 2.5:
            return acc
        i = i + 1
    return -acc


@pytest.mark.parametrize("fn", [f_return_in_tensor_loop, f_return_in_python_loop,
                                f_return_in_while])
def test_return_from_a_loop_at_every_position(fn):
    _agree(fn, _rows(), expect_ops=["cond"])


def f_return_in_loop_in_if(m, flag):
    acc = m[0] * 0
    if flag.sum() > 0:
        for row in m:
            if row.sum() > 2.5:
                return acc + row
            acc = acc + 1
        acc = acc * 3
    else:
        acc = acc - 5
    return acc


def test_return_inside_a_loop_inside_an_if():
    sets = [(m, T([f])) for (m,) in _rows() for f in (1.0, -1.0)]
    _agree(f_return_in_loop_in_if, sets, expect_ops=["cond", "while"])


# ------------------------------------------------------------------ nested loops
def f_nested_python(x):
    acc = x * 0
    for _i in range(3):
        for j in range(3):
            if j == 1:
                break
            acc = acc + 1
        acc = acc + 10
    return acc


def f_nested_tensor_outer(x, n):
    acc = x * 0
    for _i in range(n):
        for j in range(3):
            if j == 1:
                break
            acc = acc + 1
        acc = acc + 10
    return acc


def f_nested_tensor_inner(m):
    acc = m[0] * 0
    for i in range(3):
        for row in m:
            if row.sum() > 2.5:
                break
            acc = acc + row
        acc = acc * (i + 2)
    return acc


def f_nested_both_tensor(m, n):
    acc = m[0] * 0
    outer = fw.zeros([], "int64")
    for _i in range(n):
        outer = outer + 1
        j = 0
        while j < 4:
            if m[j].sum() > 2.5:
                break
            acc = acc + m[j]
            j = j + 1
    return acc, outer


def test_inner_break_leaves_only_the_inner_loop():
    # the outer loop goes on after the inner one breaks (its own break flag only)
    x = T([1.0])
    assert float(fw.jit.to_static(f_nested_python, full_graph=True)(x)) == 33.0
    _agree(f_nested_python, [(x,)])
    _agree(f_nested_tensor_outer, [(x, T(n)) for n in (0, 1, 3)], expect_ops=["while"])
    _agree(f_nested_tensor_inner, _rows(), expect_ops=["while", "cond"])
    _agree(f_nested_both_tensor, [(m, T(n)) for (m,) in _rows() for n in (0, 2)],
           expect_ops=["while"])


def f_break_outer_from_flag(m):
    acc = m[0] * 0
    for i in range(3):
        stop = False
        for row in m:
            if row.sum() > 2.5:
                stop = True
                break
            acc = acc + row
        if stop:
            break
        acc = acc * (i + 2)
    return acc


def test_outer_break_after_an_inner_break():
    _agree(f_break_outer_from_flag, _rows(), expect_ops=["while"])


# ------------------------------------------------------------------ branches
def f_branches_assign_different_sets(x):
    a = x + 1
    b = x - 1
    c = x * 0
    if x.sum() > 0:
        a = a * 2
        c = a + b
    else:
        b = b * 3
    return a, b, c


def test_branches_assigning_different_variables():
    _agree(f_branches_assign_different_sets, [(T([1.0, 2.0]),), (T([-1.0, -2.0]),)],
           expect_ops=["cond"])


def f_one_branch_returns(x):
    if x.sum() > 0:
        return x * 2
    else:
        y = x - 1
        z = y * 3
    return y + z


def f_one_branch_breaks(m):
    acc = m[0] * 0
    for row in m:
        if row.sum() > 2.5:
            break
        else:
            extra = row * 2
        acc = acc + extra
    return acc


def f_one_branch_continues(m):
    acc = m[0] * 0
    for row in m:
        if row.sum() > 2.5:
            extra = row * 2
        else:
            continue
        acc = acc + extra
    return acc


def test_one_branch_exits_the_other_assigns():
    _agree(f_one_branch_returns, [(T([1.0, 2.0]),), (T([-1.0, -2.0]),)], expect_ops=["cond"])
    _agree(f_one_branch_breaks, _rows(), expect_ops=["cond"])
    _agree(f_one_branch_continues, _rows(), expect_ops=["cond"])


@pytest.mark.parametrize("used,branch", [("y", "true"), ("z", "false")])
def test_variable_of_one_branch_used_after_is_an_error_naming_it(used, branch):
    # fw's design (like Paddle's UndefinedVar placeholders): a tensor only one
    # branch of a tensor `if` assigns has no value after it; using it is a
    # ConversionError naming the variable, the branch and the `if`'s line
    def f(x, which):
        if which.sum() > 0:
            y = x * 2  # noqa: F841
        else:
            z = x * 3  # noqa: F841
        return (y if used == "y" else z) + 1  # noqa: F821

    with pytest.raises(fw.jit.ConversionError,
                       match=rf"'{used}'.*only in the {branch} branch of the `if` at "
                             rf"{re.escape(__file__)}:\d+"):
        fw.jit.to_static(f, full_graph=True)(T([1.0]), T([1.0]))


def test_variable_of_one_branch_with_a_python_condition_is_fine():
    def f(x, flag):
        if flag:
            y = x * 2
        else:
            y = x - 1
            w = y * 5
            return w
        return y

    _agree(f, [(T([1.0]), True), (T([1.0]), False)])


def f_set_only_in_a_branch_that_may_return(x):
    if x.sum() > 0:
        x = x + 1  # does not leave: its return flag stays a Python False
    else:
        y = x * 2
        if y.mean() < -100:
            return y
    return y + 1


def test_a_branch_that_does_not_leave_gets_no_stand_in_for_the_other_branchs_variable():
    """Only a branch that may leave (its flag True or a tensor) gets a stand-in for a
    variable the other branch assigns; in one that does not, the variable has no
    value, and using it is an error (eagerly an UnboundLocalError), not zeros."""
    with pytest.raises(UnboundLocalError):
        f_set_only_in_a_branch_that_may_return(fw.to_tensor([1.0]))
    with pytest.raises(fw.jit.ConversionError) as ei:
        fw.jit.to_static(f_set_only_in_a_branch_that_may_return,
                         full_graph=True)(fw.to_tensor([1.0]))
    msg = str(ei.value)
    assert "variable 'y' is used" in msg and "assigned only in the false branch" in msg, msg


def f_other_branch_may_return(x):
    if x.sum() > 0:
        y = x * 2
    else:
        if x.mean() < 0:  # a tensor condition: the branch may return
            return -x
    return y


def test_a_branch_that_may_return_gets_a_stand_in_for_the_other_branchs_variable():
    """The false branch's return flag is a symbolic tensor: on the paths where it
    returns, y is never read, so it may stand in with zeros and the function
    converts (both paths agree with Python)."""
    sf = fw.jit.to_static(f_other_branch_may_return, full_graph=True)
    for v, want in (([1.0, 2.0], [2.0, 4.0]), ([-1.0, -2.0], [1.0, 2.0])):
        x = fw.to_tensor(v)
        np.testing.assert_allclose(f_other_branch_may_return(x).numpy(), want)
        np.testing.assert_allclose(sf(x).numpy(), want)
    assert len(sf.program_cache) == 1
