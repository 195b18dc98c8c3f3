"""Python syntax around converted control flow: exits inside ``with`` and
``try``, ``global`` names assigned in a tensor branch, imports and exception
names bound in a function, ``*args``/``**kwargs``, tuple indices in
assignments, docstrings, and functions whose body becomes empty."""

import contextlib

import numpy as np
import pytest
from jit_testutil import assert_same, ops_of

import fw

T = fw.to_tensor
COUNTER = 0


def _agree(fn, arg_sets, expect_ops=()):
    sf = fw.jit.to_static(fn, full_graph=True)
    for args in arg_sets:
        assert_same(fn(*args), sf(*args))
    names = ops_of(sf)
    for op in expect_ops:
        assert op in names, (op, names)
    return sf


ROWS = [np.array(r, np.float32) for r in (
    [[1.0, 0.0], [3.0, 1.0], [0.0, 1.0]],
    [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
)]


def f_return_in_with(m):
    acc = m[0] * 0
    for row in m:
        with contextlib.nullcontext():
            if row.sum() > 2.5:
                return acc * 10
            acc = acc + row
    return acc


def f_break_in_try(m):
    acc = m[0] * 0
    for row in m:
        try:
            if row.sum() > 2.5:
                break
            acc = acc + row
        except ValueError:
            acc = acc - 1
            continue
        else:
            acc = acc * 2
        finally:
            acc = acc + 1
    return acc


def f_return_in_except(x):
    try:
        raise ValueError("no")
    except ValueError as err:
        if x.sum() > 0:
            return x * len(str(err))
    return x - 1


@pytest.mark.parametrize("fn", [f_return_in_with, f_break_in_try])
def test_exits_inside_with_and_try(fn):
    _agree(fn, [(T(m),) for m in ROWS], expect_ops=["while"])


def test_return_inside_an_except_handler():
    _agree(f_return_in_except, [(T([1.0]),), (T([-1.0]),)], expect_ops=["cond"])


def f_global(x, flag):
    global COUNTER
    if flag:
        COUNTER = COUNTER + 1
        y = x * COUNTER
    else:
        y = x
    return y


def test_global_assigned_in_a_python_branch():
    global COUNTER
    COUNTER = 0
    sf = fw.jit.to_static(f_global, full_graph=True)
    assert_same(sf(T([2.0]), True), T([2.0]))  # the branch ran once, while tracing
    assert_same(sf(T([2.0]), True), T([2.0]))  # (the cached program)
    assert_same(sf(T([2.0]), False), T([2.0]))
    assert COUNTER == 1


def f_imports(x):
    if x.sum() > 0:
        import math
        from math import pi as p
        y = x * math.floor(p)
    else:
        y = x
    return y


def test_imports_inside_a_function_with_a_python_branch():
    assert_same(fw.jit.to_static(f_imports, full_graph=True)(T([1.0])), T([3.0]))


def f_varargs(x, *rest, scale=1.0, **opts):
    acc = x
    for r in rest:
        acc = acc + r
    if opts.get("negate"):
        acc = -acc
    if acc.sum() > 0:
        acc = acc * scale
    return acc


def test_star_args_and_keyword_args():
    sf = fw.jit.to_static(f_varargs, full_graph=True)
    assert_same(sf(T([1.0]), T([2.0]), T([3.0]), scale=2.0), f_varargs(T([1.0]), T([2.0]),
                                                                     T([3.0]), scale=2.0))
    assert_same(sf(T([1.0]), scale=3.0, negate=True), T([-1.0]))


def f_tuple_index(x):
    y = x * 1
    y[0, 1] = 9.0
    y[1, :] += 1.0
    return y


def test_tuple_indices_in_assignments():
    _agree(f_tuple_index, [(fw.zeros([2, 3]),)], expect_ops=["setitem"])


def f_docstring(x):
    """A docstring stays the function's docstring."""
    if x.sum() > 0:
        return x
    return -x


def test_docstring_is_kept():
    sf = fw.jit.to_static(f_docstring, full_graph=True)
    _agree(f_docstring, [(T([1.0]),), (T([-1.0]),)])
    assert sf.__doc__ == f_docstring.__doc__
    assert sf.code.count("A docstring") == 1  # kept as the docstring, not a statement too
    assert sf.code.split("\n")[1].strip().startswith('"""A docstring')  # and first


def f_only_docstring(x):
    """Nothing else."""


def test_function_that_is_only_a_docstring():
    assert fw.jit.to_static(f_only_docstring, full_graph=True)(T([1.0])) is None


def f_nested_def(x):
    def inner(v):
        if v.sum() > 0:
            return v * 2
        return v

    return inner(x) + inner(-x)


def test_nested_function_is_converted_when_called():
    _agree(f_nested_def, [(T([1.0]),), (T([-2.0]),)], expect_ops=["cond"])


def f_global_in_tensor_branch(x):
    global COUNTER
    if x.sum() > 0:
        COUNTER = COUNTER + 1
    return x * 2


def f_global_in_tensor_loop(x, n):
    global COUNTER
    for _ in range(n):
        COUNTER = COUNTER + x.sum()
    return x


def f_global_in_tensor_while(x, n):
    global COUNTER
    i = 0
    while i < n:
        COUNTER = COUNTER + 1
        i += 1
    return x


def f_global_same_in_both_branches(x):
    global COUNTER
    if x.sum() > 0:
        COUNTER = 5
    else:
        COUNTER = 5
    return x * COUNTER


@pytest.mark.parametrize("fn,args,what", [
    (f_global_in_tensor_branch, (T([1.0]),), "an `if`"),
    (f_global_in_tensor_loop, (T([1.0]), T(3)), "a `for` loop"),
    (f_global_in_tensor_while, (T([1.0]), T(3)), "a `while` loop"),
])
def test_global_assigned_under_a_tensor_condition_is_refused(fn, args, what):
    global COUNTER
    COUNTER = 0
    with pytest.raises(fw.jit.ConversionError, match=f"global 'COUNTER' is assigned in {what}"):
        fw.jit.to_static(fn, full_graph=True)(*args)
    assert COUNTER == 0  # no symbolic value left behind in the module


def test_global_given_one_python_value_by_both_branches_is_fine():
    global COUNTER
    COUNTER = 0
    assert_same(fw.jit.to_static(f_global_same_in_both_branches,
                                 full_graph=True)(T([1.0])), T([5.0]))
    assert COUNTER == 5


def _two():
    return fw.ones([2]) * 2


class UsesHelpers(fw.nn.Layer):
    def forward(self, x):
        base = _two()  # a zero-argument call of a plain function in a method
        if x.sum() > 0:
            base = base + super().extra_repr().count("x")
        return x * base


def test_zero_argument_calls_in_methods_and_functions_without_parameters():
    m = UsesHelpers()
    eager = m(T([1.0, 2.0]))
    fw.jit.to_static(m, full_graph=True)
    assert_same(m(T([1.0, 2.0])), eager)
    assert_same(fw.jit.to_static(_two, full_graph=True)(), T([2.0, 2.0]))


def f_error_after_early_return(x):
    y = 1
    if x.sum() > 0:
        return x
    y = "after"  # the code after the early return is guarded by `if not returned`
    return x + len(y)


def test_error_in_code_after_an_early_return_points_at_that_code():
    import inspect

    lines, first = inspect.getsourcelines(f_error_after_early_return)
    line = first + next(i for i, t in enumerate(lines) if 'y = "after"' in t)
    with pytest.raises(fw.jit.ConversionError, match="variable 'y'") as ei:
        fw.jit.to_static(f_error_after_early_return, full_graph=True)(T([1.0]))
    assert ei.value.lineno == line


def f_python_objects(x):
    a = np.zeros(3)
    a[1] = 2.0  # a NumPy array: assigned as Python does
    alias = []
    lst = alias
    if x.sum() > 0:
        x = x + 1
    lst.append(x)  # after a tensor `if`: still the same list object as `alias`
    kinds = (isinstance(x, (list, tuple)), isinstance(x, fw.Tensor), isinstance(a, np.ndarray))
    return x * float(a.sum()), len(alias), kinds


def test_python_objects_keep_python_semantics_in_converted_code():
    sf = fw.jit.to_static(f_python_objects, full_graph=True)
    for v in ([1.0], [-1.0]):
        assert_same(list(f_python_objects(T(v))), list(sf(T(v))))


def f_imports_in_branches(x):
    if x.sum() > 0:
        import math as _m_in_branch
        x = x + 0
    else:
        import math as _m_in_branch
    return x * _m_in_branch.pi  # bound in either branch: a local of this function


def test_an_import_in_a_branch_binds_a_local_of_the_function():
    for v in (2.0, -2.0):
        x = fw.to_tensor([v])
        np.testing.assert_allclose(f_imports_in_branches(x).numpy(), [v * np.pi], rtol=1e-6)
    sf = fw.jit.to_static(f_imports_in_branches, full_graph=True)
    # a tensor condition: both branches are traced, each binds the same module
    np.testing.assert_allclose(sf(fw.to_tensor([2.0])).numpy(), [2.0 * np.pi], rtol=1e-6)
