"""Conversion across calls: user functions, nested functions, closures and globals,
layers (decorated forward, to_static on an instance, sublayers, containers),
methods, super(), and the switches not_to_static / ignore_module /
enable_to_static."""

import functools

import pytest
from jit_testutil import assert_same, check, ops_of

import fw

T = fw.to_tensor
SCALE = 3.0


# ------------------------------------------------------------------ functions
def helper(x):
    if x.sum() > 0:  # tensor control flow in a callee: converted too
        return x * 2
    return x * -1


def f_calls_helper(x):
    return helper(x) + helper(-x)


def test_called_user_functions_are_converted():
    check(f_calls_helper, T([1.0, 2.0]), expect_ops=["cond"])


def test_nested_function_and_closure():
    k = T([10.0])

    def f(x):
        def inner(y):
            if y.mean() > 0:
                return y + k
            return y - k
        return inner(x) * 2

    check(f, T([1.0]), expect_ops=["cond"])
    check(f, T([-1.0]))


def test_closure_cells_are_shared_with_the_original():
    state = {"calls": 0}
    counter = [0]

    def make():
        total = 0

        def f(x):
            nonlocal total
            total += 1
            counter[0] += 1
            if x.sum() > 0:
                x = x + total
            return x

        return f, lambda: total

    f, read = make()
    sf = fw.jit.to_static(f, full_graph=True)
    sf(T([1.0]))
    assert read() == 1  # the converted function wrote the original's cell
    del state


def f_global(x):
    return x * SCALE


def test_globals_are_the_functions_own():
    global SCALE
    sf = fw.jit.to_static(f_global, full_graph=True)
    assert_same(sf(T([1.0])), T([3.0]))
    old = SCALE
    SCALE = 5.0  # a Python global is read while tracing: a new trace sees the new value
    try:
        assert_same(sf(T([1.0, 1.0])), T([5.0, 5.0]))
    finally:
        SCALE = old


def test_decorated_function_keeps_its_decorator_working():
    calls = []

    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*a):
            calls.append(1)
            return fn(*a)
        return wrapper

    @fw.jit.to_static(full_graph=True)
    @logged
    def f(x):
        return x + 1

    assert_same(f(T([1.0])), T([2.0]))
    assert calls  # the wrapper ran (it was traced as it is)


def test_not_to_static_function_runs_as_written():
    @fw.jit.not_to_static
    def plain(x):
        return x * 2

    def f(x):
        return plain(x) + 1

    check(f, T([1.0]))
    from fw.jit._convert_call import conversion_of

    assert conversion_of(plain) is None


def test_ignore_module():
    import types

    mod = types.ModuleType("my_ignored_mod")

    def g(x):
        return x + 1

    g.__module__ = "my_ignored_mod"
    fw.jit.ignore_module(mod)
    from fw.jit._convert_call import conversion_of

    assert conversion_of(g) is None


def test_enable_to_static_off_runs_eagerly():
    calls = []

    @fw.jit.to_static(full_graph=True)
    def f(x):
        calls.append(type(x).__name__)
        return x + 1

    fw.jit.enable_to_static(False)
    try:
        f(T([1.0]))
    finally:
        fw.jit.enable_to_static(True)
    assert calls == ["Tensor"]
    f(T([1.0]))
    assert calls[-1] == "Value"
    with pytest.raises(TypeError):
        fw.jit.enable_to_static(1)


# ------------------------------------------------------------------ layers
class Block(fw.nn.Layer):
    def __init__(self, n):
        super().__init__()
        self.fc = fw.nn.Linear(n, n)
        self.__hidden = 2.0  # private name: mangled

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            h = fw.nn.functional.relu(h) * self.__hidden
        return h


class Net(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.b1 = Block(4)
        self.seq = fw.nn.Sequential(Block(4), fw.nn.Tanh())
        self.head = fw.nn.Linear(4, 2)

    @fw.jit.to_static(full_graph=True)
    def forward(self, x, scale=1.0):
        return self.head(self.seq(self.b1(x))) * scale


class Derived(Block):
    def forward(self, x):
        y = super().forward(x)
        if y.sum() < 0:
            y = -y
        return y


def test_decorated_forward_and_nested_layers():
    fw.seed(0)
    net = Net()
    x = fw.randn([3, 4])
    out = net(x)
    eager = net.forward.dygraph_function(x)
    assert_same(out, eager)
    names = ops_of(net.forward)
    assert names.count("cond") == 2  # b1 and the Block inside the Sequential
    assert_same(net(x, 2.0), net.forward.dygraph_function(x, 2.0))


def test_forward_programs_are_per_instance():
    fw.seed(1)
    a, b = Net(), Net()
    x = fw.randn([2, 4])
    a(x)
    b(x)
    assert a.forward is not b.forward
    assert a.forward.program_cache.last() is not b.forward.program_cache.last()


def test_to_static_on_a_layer_instance_and_rollback():
    fw.seed(2)
    m = Block(4)
    x = fw.randn([2, 4])
    eager = m(x)
    m2 = fw.jit.to_static(m, full_graph=True)
    assert m2 is m
    assert isinstance(m.forward, fw.jit.StaticFunction)
    assert_same(m(x), eager)
    orig = m.forward.rollback()
    assert not isinstance(m.forward, fw.jit.StaticFunction)
    assert_same(orig(x), eager)


def test_super_call_in_forward():
    fw.seed(3)
    m = Derived(4)
    x = fw.randn([2, 4])
    eager = m(x)
    fw.jit.to_static(m, full_graph=True)
    assert_same(m(x), eager)


def test_training_flag_is_part_of_the_signature():
    class Drop(fw.nn.Layer):
        def forward(self, x):
            if self.training:
                return x * 0
            return x

    m = fw.jit.to_static(Drop(), full_graph=True)
    x = T([1.0, 2.0])
    assert_same(m(x), T([0.0, 0.0]))
    m.eval()
    assert_same(m(x), x)
    assert len(m.forward.program_cache) == 2


def test_static_function_called_inside_another_trace_is_inlined():
    @fw.jit.to_static(full_graph=True)
    def inner(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    @fw.jit.to_static(full_graph=True)
    def outer(x):
        return inner(x) * 2

    assert_same(outer(T([1.0])), T([4.0]))
    assert "cond" in ops_of(outer)
    assert len(inner.program_cache) == 0  # no program of its own


def test_code_shows_the_converted_source():
    sf = fw.jit.to_static(helper, full_graph=True)
    code = sf.code
    assert "convert_ifelse" in code and "def helper" in code
