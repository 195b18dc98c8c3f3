"""What values pass through converted control flow: containers of tensors and
Python values carried by a tensor ``while`` or merged after a tensor ``if``,
lists built in loops (`TensorArray`), conditions of other dtypes and shapes,
the builtins converted code calls (``len``, ``range``, ``enumerate``,
``isinstance``, ``print``), and the errors for what cannot be carried."""

import numpy as np
import pytest
from jit_testutil import assert_same, load_source, ops_of

import fw
from fw.jit import ConversionError

T = fw.to_tensor


def _agree(fn, arg_sets, expect_ops=()):
    sf = fw.jit.to_static(fn, full_graph=True)
    for args in arg_sets:
        assert_same(fn(*args), sf(*args))
    names = ops_of(sf)
    for op in expect_ops:
        assert op in names, (op, names)
    return sf


# ------------------------------------------------------------------ while carries
def f_while_containers(x, n):
    pair = (x, x * 2)
    lst = [x + 1, x - 1]
    d = {"a": x, "b": x * 0}
    tag = "loop"
    nothing = None
    i = 0
    while i < n:
        pair = (pair[1], pair[0] + pair[1])
        lst = [lst[1] * 2, lst[0]]
        d = {"a": d["a"] + 1, "b": d["b"] - d["a"]}
        tag = "loop"  # the same Python value: carried as a constant
        i += 1
    return pair, lst, d, tag, nothing, i


def test_while_carries_tuples_lists_dicts_and_constants():
    x = T([1.0, 2.0])
    sf = _agree(f_while_containers, [(x, T(n)) for n in (0, 1, 4)], expect_ops=["while"])
    assert len(sf.program_cache) == 1


def f_while_changes_constant(x, n):
    tag = "a"
    i = 0
    while i < n:
        tag = "b"
        i += 1
    return x, tag


def f_while_changes_dict_keys(x, n):
    d = {"a": x}
    i = 0
    while i < n:
        d = {"b": x}
        i += 1
    return d


def f_while_tensor_becomes_string(x, n):
    i = 0
    while i < n:
        x = "done"
        i += 1
    return x


def f_while_list_becomes_tensor(x, n):
    pair = [x, x]
    i = 0
    while i < n:
        pair = x
        i += 1
    return pair


@pytest.mark.parametrize("fn,words", [
    (f_while_changes_constant, "variable 'tag' changes from str 'a' to str 'b'"),
    (f_while_changes_dict_keys, "dict 'd' changes its keys"),
    (f_while_tensor_becomes_string, "variable 'x' is a tensor before the loop but str"),
    (f_while_list_becomes_tensor, "list 'pair' has 2 items before the loop and a tensor"),
])
def test_while_refuses_what_it_cannot_carry(fn, words):
    with pytest.raises(ConversionError, match="while") as ei:
        fw.jit.to_static(fn, full_graph=True)(T([1.0]), T(2))
    assert words in str(ei.value)


def f_while_number_stays_number(x, n):
    k = 0
    i = 0
    while i < n:
        k = 3  # a Python number assigned in the body: carried as a tensor
        i += 1
    return x * k


def test_while_carries_numbers_assigned_in_the_body():
    _agree(f_while_number_stays_number, [(T([2.0]), T(n)) for n in (0, 2)])


def f_while_returns_none_or_tensor(x, n):
    i = 0
    while i < n:
        if x.sum() > 100:
            return x
        i += 1
    return None


def f_falls_off_the_end(x):
    if x.sum() > 0:
        return x * 2


def f_returns_none_everywhere(x, m):
    for row in m:
        if row.sum() > x.sum():
            return
    return None


def f_none_under_python_condition(x, flag):
    if flag:
        return None
    if x.sum() > 0:
        return x
    return -x


@pytest.mark.parametrize("fn", [f_while_returns_none_or_tensor, f_falls_off_the_end])
def test_none_on_one_path_and_a_tensor_on_another_is_an_error(fn):
    # eagerly one path gives None: a program cannot (it used to give zeros)
    args = (T([1.0]), T(2)) if fn is f_while_returns_none_or_tensor else (T([1.0]),)
    with pytest.raises(ConversionError, match="returns None on one path and a tensor"):
        fw.jit.to_static(fn, full_graph=True)(*args)


def test_none_on_every_path_or_under_a_python_condition_is_fine():
    sf = fw.jit.to_static(f_returns_none_everywhere, full_graph=True)
    assert sf(T([1.0]), T([[0.0], [3.0]])) is None
    assert sf(T([5.0]), T([[0.0], [3.0]])) is None
    _agree(f_none_under_python_condition, [(T([1.0]), True), (T([1.0]), False),
                                           (T([-1.0]), False)])


def test_region_form_function_without_return_gives_none():
    calls = []

    def f(x):
        y = x * 2
        calls.append(float(y.sum().numpy()))  # needs a concrete value: runs eagerly

    sf = fw.jit.to_static(f, full_graph=False)
    assert sf(T([1.0])) is None
    assert calls == [2.0]


# ------------------------------------------------------------------ if merges
def f_if_containers(x):
    pair = (x, x + 1)
    d = {"k": x, "name": "same"}
    opts = [1, "s", None]
    if x.sum() > 0:
        pair = (pair[1], pair[0])
        d = {"k": d["k"] * 3, "name": "same"}
        opts = [1, "s", None]
        mode = "fast"
    else:
        d = {"k": -d["k"], "name": "same"}
        mode = "fast"
    return pair, d, opts, mode


def test_if_merges_containers_and_equal_python_values():
    _agree(f_if_containers, [(T([1.0]),), (T([-1.0]),)], expect_ops=["cond"])


def f_if_numbers(x):
    k = 1
    f = 2
    same = 7
    if x.sum() > 0:
        k = 2  # different ints: an int64 result
        f = 0.5  # an int against a float: a float result
        same = 7
    return x * k, x * f, same


def test_if_merges_python_numbers_into_tensors():
    sf = _agree(f_if_numbers, [(T([3.0]),), (T([-3.0]),)])
    _, _, same = sf(T([1.0]))
    assert same == 7 and isinstance(same, int)


def f_if_bool_flags(x):
    neg = False
    if x.sum() < 0:
        neg = True
    return fw.where(fw.to_tensor(neg) if not isinstance(neg, fw.Tensor) else neg, -x, x)


def test_if_merges_python_bools_into_a_bool_tensor():
    _agree(f_if_bool_flags, [(T([2.0]),), (T([-2.0]),)])


@pytest.mark.parametrize("body,words", [
    ("r = [x]\n    if x.sum() > 0:\n        r = [x, x]", "list 'r' has 2 items after the true "
                                                       "branch and 1"),
    ("r = {'a': x}\n    if x.sum() > 0:\n        r = {'b': x}", "dict 'r' has keys ['b']"),
    ("r = x\n    if x.sum() > 0:\n        r = fw.ones([1, 1])",
     "variable 'r' has rank 2 after the true branch"),
    ("r = x\n    if x.sum() > 0:\n        r = fw.cast(x, 'int64')",
     "variable 'r' is int64 after the true branch and float32"),
    ("r = 'a'\n    if x.sum() > 0:\n        r = 'b'", "variable 'r' is str 'b' after the true "
                                                    "branch and str 'a'"),
    # objects whose == gives no truth value (NumPy arrays) are not the same value
    ("import numpy as np\n    r = np.array([1, 2])\n    if x.sum() > 0:\n"
     "        r = np.array([1, 3])", "variable 'r' is ndarray"),
    # a value's repr is shown whole up to 39 characters, cut to 37 + '...' from 40
    (f"r = 'a'\n    if x.sum() > 0:\n        r = '{'b' * 37}'",
     f"variable 'r' is str '{'b' * 37}' after the true branch"),
    (f"r = 'a'\n    if x.sum() > 0:\n        r = '{'b' * 38}'",
     f"variable 'r' is str '{'b' * 36}... after the true branch"),
])
def test_if_refuses_branches_that_cannot_merge(tmp_path, body, words):
    f = load_source(f"def f(x):\n    {body}\n    return r\n", tmp_path).f
    with pytest.raises(ConversionError, match="if") as ei:
        fw.jit.to_static(f, full_graph=True)(T([1.0]))
    assert words in str(ei.value), str(ei.value)


def f_ifexp(x):
    y = x * 2 if x.sum() > 0 else x - 1
    k = 3 if x.sum() > 100 else 4
    return y, x * k


def test_conditional_expression_values():
    _agree(f_ifexp, [(T([1.0]),), (T([-1.0]),)], expect_ops=["cond"])


# ------------------------------------------------------------------ conditions
def f_int_condition(x, k):
    if k:  # an int64 tensor: true when nonzero
        y = x + 1
    else:
        y = x - 1
    return y


def f_one_element_condition(x):
    if x > 0:  # shape [1]: one value
        y = x + 1
    else:
        y = x - 1
    return y


def test_conditions_of_other_dtypes_and_shapes():
    _agree(f_int_condition, [(T([1.0]), T(3)), (T([1.0]), T(0))], expect_ops=["cond", "cast"])
    _agree(f_one_element_condition, [(T([2.0]),), (T([-2.0]),)], expect_ops=["reshape"])


def f_logic(x, y, flag):
    a = x.sum() > 0 and y  # a tensor and a non-bool tensor
    b = flag or x.sum() > 0  # a Python value first
    c = x.sum() > 0 and flag  # a tensor then a Python value
    d = not (x.sum() > 0)
    e = flag and x.sum() > 0  # a Python value first: `and` goes on when it is true
    return fw.cast(a, "float32"), fw.cast(b, "float32"), fw.cast(c, "float32"), \
        fw.cast(d, "float32"), fw.cast(e, "float32")


@pytest.mark.parametrize("flag", [True, False])
def test_boolean_operators_mix_tensors_and_python_values(flag):
    sf = fw.jit.to_static(f_logic, full_graph=True)
    for x, y in ((T([1.0]), T(1.0)), (T([-1.0]), T(0.0)), (T([1.0]), T(0.0))):
        eager = [fw.cast(fw.to_tensor(bool(v)), "float32") if not isinstance(v, fw.Tensor)
                 else v for v in f_logic(x, y, flag)]
        assert_same([e.reshape([]) for e in eager], [s.reshape([]) for s in sf(x, y, flag)])


# ------------------------------------------------------------------ builtins
def f_builtins(x, xs):
    n = len(xs)  # a Python list: a Python int
    acc = x * 0
    for i, v in enumerate(xs, 1):
        acc = acc + v * i
    for j in range(1, n):
        acc = acc + j
    ok = isinstance(n, int) and isinstance(x, fw.Tensor)
    print("n =", n)
    return acc, ok


def test_builtins_on_python_values(capsys):
    xs = [T([1.0]), T([2.0]), T([3.0])]
    _agree(f_builtins, [(T([1.0]), xs)], )
    assert "n = 3" in capsys.readouterr().out


def f_symbolic_range2(x, a, b):
    acc = x * 0
    for i in range(a, b):
        acc = acc + fw.cast(i, "float32")
    return acc


def test_range_with_two_symbolic_bounds_and_mixed_dtypes():
    _agree(f_symbolic_range2, [(T([1.0]), T(2), T(6)), (T([1.0]), T(5), T(2))],
           expect_ops=["while"])
    # an int32 bound is cast to int64; a shape-[1] bound reshaped to a scalar
    _agree(f_symbolic_range2, [(T([1.0]), T(np.int32(1)), T([4]))], expect_ops=["while"])


def f_len_tensor(x):
    return x * len(x)


def test_len_of_a_dynamic_dim_is_a_tensor():
    from fw.jit import InputSpec

    sf = fw.jit.to_static(f_len_tensor, input_spec=[InputSpec([-1], "float32")], full_graph=True)
    assert_same(sf(T([1.0, 2.0, 3.0])), T([3.0, 6.0, 9.0]))
    assert_same(sf(T([1.0])), T([1.0]))


def f_iter_0d(x):
    acc = x * 0
    for v in x.sum():
        acc = acc + v
    return acc


def test_iterating_over_a_0d_tensor_is_refused():
    with pytest.raises(ConversionError, match="iterating over a 0-D tensor"):
        fw.jit.to_static(f_iter_0d, full_graph=True)(T([1.0]))


# ------------------------------------------------------------------ TensorArray
def f_array_ops(x, n):
    outs = []
    i = 0
    while i < n:
        outs.append(x * (i + 1))
        i += 1
    first = outs[0]
    return fw.stack(outs, axis=1), fw.concat(outs, axis=1), first, len(outs)


def test_tensor_array_stack_concat_index_along_other_axes():
    x = fw.arange(6, dtype="float32").reshape([2, 3])
    eager = f_array_ops(x, 3)
    s, c, first, n = fw.jit.to_static(f_array_ops, full_graph=True)(x, T(3))
    assert_same(eager[:3], [s, c, first])
    assert int(n) == 3


def f_array_iterated(x, n):
    outs = []
    i = 0
    while i < n:
        outs.append(x)
        i += 1
    total = x * 0
    for o in outs:
        total = total + o
    return total


def test_iterating_over_a_list_built_in_a_tensor_loop_is_refused():
    with pytest.raises(ConversionError, match="iterating over a list built in a loop"):
        fw.jit.to_static(f_array_iterated, full_graph=True)(T([1.0]), T(2))


def f_array_with_python_items(x, n):
    outs = [1.0]
    i = 0
    while i < n:
        outs.append(x)
        i += 1
    return outs


def test_list_with_python_items_before_a_tensor_loop_is_refused():
    with pytest.raises(ConversionError, match="holds non-tensor items"):
        fw.jit.to_static(f_array_with_python_items, full_graph=True)(T(1.0), T(2))


def test_tensor_array_repr_and_symbolic_iterables_outside_loops():
    from fw.jit._cflow import SymbolicEnumerate, SymbolicRange

    r = SymbolicRange(0, 5, 1)
    assert repr(r) == "range(0, 5, 1)"
    with pytest.raises(ConversionError, match="range whose bounds are symbolic"):
        iter(r)
    with pytest.raises(ConversionError, match="enumerate"):
        iter(SymbolicEnumerate(r))


def f_iterate_empty(x):
    acc = x[0] * 0 if x.shape[0] else fw.zeros([3])
    for row in x:
        acc = acc + row
    return acc


def test_loop_over_a_tensor_with_a_static_empty_first_dim():
    sf = fw.jit.to_static(f_iterate_empty, full_graph=True)
    assert_same(sf(fw.zeros([0, 3])), fw.zeros([3]))
    # a static first dimension (0 included) is a constant trip bound, not a shape op
    assert "shape" not in ops_of(sf)


def test_as_bool_value_of_python_values_and_concrete_tensors():
    from fw.core.ir.builder import Builder
    from fw.jit._cflow import as_bool_value

    with Builder() as b:
        v = as_bool_value(b, True, "`while`")
        assert v.owner.name == "full" and v.owner.attrs["fill_value"] is True
        assert v.type.dtype is fw.bool
        w = as_bool_value(b, T([3]), "`while`")  # a concrete tensor: captured, cast, reshaped
        assert w.type.shape == () and w.type.dtype is fw.bool
        assert [op.name for op in b.program.block.ops][-2:] == ["cast", "reshape"]


def f_two_asserts(x):
    for i in range(2):  # the same assert twice: one check
        assert x.sum() > -100 + i, "first"
    assert x.min() > 0, "second"
    assert (x < 50).all()
    return x


def test_each_assert_keeps_its_own_check_and_message():
    sf = fw.jit.to_static(f_two_asserts, full_graph=True)
    assert_same(sf(T([1.0, 2.0])), T([1.0, 2.0]))
    with pytest.raises(AssertionError, match="second"):
        sf(T([-1.0, 2.0]))
    with pytest.raises(AssertionError, match="first"):
        sf(T([-200.0, 2.0]))
    with pytest.raises(AssertionError, match="assertion failed"):  # no message
        sf(T([60.0, 2.0]))
    assert len(sf.concrete_program.asserts) == 3


def f_concat_scalars(x, n):
    outs = []
    for _ in range(n):
        outs.append(x.sum())
    return fw.concat(outs)


def test_concat_of_scalars_built_in_a_tensor_loop_is_refused():
    with pytest.raises(ConversionError, match="concat of a list of 0-D tensors"):
        fw.jit.to_static(f_concat_scalars, full_graph=True)(T([1.0]), T(2))


def f_range_of_one_element_tensors(x, a, b, s):
    acc = x * 0
    last = fw.zeros([])
    for i in range(a, b, s):  # the index is a 0-D tensor, as Python's is a number
        last = fw.cast(i, "float32")
        acc = acc + last
    return acc, last


def f_range_static_negative_step(x, a, b):
    acc = x * 0
    k = fw.zeros([], "int64")
    for i in range(a, b, -1):
        acc = acc * 2 + fw.cast(i, "float32")
        k = k + 1
    return acc, k


def test_range_bounds_of_shape_one_and_a_static_negative_step():
    _agree(f_range_of_one_element_tensors, [(T([1.0]), T([1]), T([8]), T([2]))],
           expect_ops=["while"])
    _agree(f_range_static_negative_step, [(T([1.0]), T(a), T(b)) for a, b in
                                          ((5, 0), (3, 2), (0, 3), (2, -1))],
           expect_ops=["while"])


def f_array_concat_axes(x, n):
    outs = []
    for _ in range(n):
        outs.append(x)
        x = x + 1
    return (fw.concat(outs), fw.concat(outs, axis=-2), fw.concat(outs, axis=1),
            fw.concat(outs, axis=-1))


def test_tensor_array_concat_along_each_axis():
    x = fw.arange(6, dtype="float32").reshape([2, 3])
    eager = f_array_concat_axes(x, 3)
    static = fw.jit.to_static(f_array_concat_axes, full_graph=True)(x, T(3))
    assert_same(list(eager), list(static))


def f_enumerate_start(m):
    acc = m[0] * 0
    for i, row in enumerate(m, 2):
        acc = acc + row * fw.cast(i, "float32")
    return acc


def test_enumerate_of_a_tensor_with_a_start():
    _agree(f_enumerate_start, [(fw.arange(6, dtype="float32").reshape([3, 2]),)],
           expect_ops=["while"])


def f_dynamic_condition(x):
    if x > 0:  # shape [-1]: one value is checked when the program runs
        y = x + 1
    else:
        y = x - 1
    return y


def test_condition_with_a_dynamic_number_of_values():
    from fw.jit import InputSpec

    sf = fw.jit.to_static(f_dynamic_condition, input_spec=[InputSpec([-1], "float32")],
                          full_graph=True)
    assert_same(sf(T([2.0])), T([3.0]))
    assert_same(sf(T([-2.0])), T([-3.0]))


def f_len_static(x):
    return len(x)


def test_len_of_a_static_dim_is_a_python_int_even_zero():
    sf = fw.jit.to_static(f_len_static, full_graph=True)
    for n in (0, 2):
        got = sf(fw.zeros([n, 3]))
        assert got == n and isinstance(got, int)


def f_falls_off_after_statements(x):
    y = x * 2
    if x.sum() > 0:
        return y


def test_falling_off_the_end_is_reported_at_the_last_statement():
    import inspect

    lines, first = inspect.getsourcelines(f_falls_off_after_statements)
    line = first + next(i for i, t in enumerate(lines) if "if x.sum() > 0" in t)
    with pytest.raises(ConversionError, match="returns None on one path") as ei:
        fw.jit.to_static(f_falls_off_after_statements, full_graph=True)(T([1.0]))
    assert ei.value.lineno == line


def f_returns_int_or_tensor(x):
    if x.sum() > 0:
        return 5
    y = x * 2
    return y


def f_carried_tensor_changes_dtype(x, n):
    i = 0
    while i < n:
        x = fw.cast(x, "int64")
        i += 1
    return x


@pytest.mark.parametrize("fn,args,words", [
    (f_returns_int_or_tensor, (T([1.0]),), "returns a value on one path"),
    (f_carried_tensor_changes_dtype, (T([1.0]), T(2)), "changes dtype in its body"),
])
def test_values_that_cannot_be_matched_across_paths(fn, args, words):
    with pytest.raises(ConversionError, match=words):
        fw.jit.to_static(fn, full_graph=True)(*args)


def f_exit_with_dynamic_dims(x):
    if x.sum() > 0:
        return x * 2
    else:
        y = x - 1
    return y * 3


def test_stand_in_for_an_exiting_branch_with_a_dynamic_dim():
    from fw.jit import InputSpec

    sf = fw.jit.to_static(f_exit_with_dynamic_dims, input_spec=[InputSpec([-1], "float32")],
                          full_graph=True)
    for v in ([1.0, 2.0, 3.0], [-1.0, -2.0]):
        assert_same(sf(T(v)), f_exit_with_dynamic_dims(T(v)))


def test_each_operand_of_and_or_is_evaluated_once():
    calls = []

    def cond(x):
        calls.append(1)
        return x.sum() > 0

    def f(x):
        if cond(x) and x.mean() < 10:
            x = x + 1
        return x

    fw.jit.to_static(f, full_graph=True)(T([1.0]))
    assert len(calls) == 1  # traced once, each operand once


def f_returns_a_variable_one_branch_left_unset(x):
    if x.sum() > 0:
        y = x * 2
    if x.mean() > 100:
        return x
    return y  # no value when x.sum() <= 0: Python raises there


def f_returns_after_an_exit_in_the_other_branch(x):
    if x.sum() > 0:
        x = x + 1
    else:
        y = x * 2
        if y.mean() < -100:
            return y
    return y  # no value on the true path


@pytest.mark.parametrize("fn,where", [
    (f_returns_a_variable_one_branch_left_unset, "true"),
    (f_returns_after_an_exit_in_the_other_branch, "false"),
])
def test_returning_a_variable_set_in_one_branch_only_is_an_error_not_zeros(fn, where):
    """The return value's own "no return yet" may be filled on a path that leaves;
    a returned variable with no value is the user's error (eagerly an
    UnboundLocalError on that path), never a tensor of zeros."""
    with pytest.raises(UnboundLocalError):
        fn(T([-1.0]) if where == "true" else T([1.0]))
    with pytest.raises(ConversionError) as ei:
        fw.jit.to_static(fn, full_graph=True)(T([1.0]))
    msg = str(ei.value)
    assert "variable 'y' is returned but has no value" in msg, msg
    assert f"it is assigned only in the {where} branch" in msg, msg


def f_tensor_loop_shrinks_a_list(x, n):
    pair = [x, x]
    i = 0
    while i < n:
        pair = [pair[0] + 1]
        i += 1
    return pair[0]


def f_tensor_loop_replaces_a_list(x, n):
    pair = [x, x]
    i = 0
    while i < n:
        pair = x + 1
        i += 1
    return pair


@pytest.mark.parametrize("fn,got", [(f_tensor_loop_shrinks_a_list, "1"),
                                    (f_tensor_loop_replaces_a_list, "a tensor (f32[1])")])
def test_tensor_loop_refuses_a_list_that_changes_its_length_or_kind(fn, got):
    with pytest.raises(ConversionError) as ei:
        fw.jit.to_static(fn, full_graph=True)(T([1.0]), T(2))
    assert f"list 'pair' has 2 items before the loop and {got} after its body" in \
        str(ei.value), str(ei.value)


def f_tensor_loop_changes_rank(x, n):
    i = 0
    while i < n:
        x = x.unsqueeze(0)
        i += 1
    return x


def test_tensor_loop_changing_a_variables_rank_names_the_loop():
    import inspect

    lines, first = inspect.getsourcelines(f_tensor_loop_changes_rank)
    line = first + next(k for k, ln in enumerate(lines) if "while i < n" in ln)
    from fw.core.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="different rank") as ei:
        fw.jit.to_static(f_tensor_loop_changes_rank, full_graph=True)(T([1.0]), T(2))
    assert f"the loop at {__file__}:{line}:" in str(ei.value), str(ei.value)


def f_tensor_loop_changes_a_tensors_dtype(x, n):
    i = 0
    while i < n:
        x = fw.cast(x, "float64")
        i += 1
    return x


def test_tensor_loop_refuses_a_tensor_that_changes_dtype():
    """Only numbers that were Python values before the loop may be re-typed; a
    tensor keeps its dtype through the body."""
    with pytest.raises(ConversionError, match=r"changes dtype in its body \(float32 -> "
                                              r"float64\)"):
        fw.jit.to_static(f_tensor_loop_changes_a_tensors_dtype, full_graph=True)(T([1.0]), T(2))


def f_tensor_loop_keeps_python_values(x, n):
    tag = "-".join(["a", "b"])
    nothing = None
    i = 0
    while i < n:
        x = x + 1
        tag = "-".join(["a", "b"])  # an equal string, but another object
        nothing = None  # the same object
        i += 1
    return x, tag, nothing


def test_tensor_loop_carries_python_values_the_body_leaves_equal():
    x, tag, nothing = fw.jit.to_static(f_tensor_loop_keeps_python_values,
                                       full_graph=True)(T([1.0]), T(2))
    np.testing.assert_allclose(x.numpy(), [3.0])
    assert tag == "a-b" and nothing is None


def f_tensor_loop_changes_a_string(x, n):
    tag = "a"
    i = 0
    while i < n:
        x = x + 1
        tag = "b"
        i += 1
    return x, tag


def test_tensor_loop_refuses_a_python_value_changed_in_its_body():
    with pytest.raises(ConversionError, match="variable 'tag' changes from str 'a' to str 'b'"):
        fw.jit.to_static(f_tensor_loop_changes_a_string, full_graph=True)(T([1.0]), T(2))
