"""Which callables converted code converts, and what it calls instead
(`fw.jit._convert_call`): `not_to_static` in its forms, `ignore_module` by
prefix, functions without source, callable objects, builtins bound to
unhashable objects, layers whose forward is already static or overridden on the
instance, and optimizers subclassed outside fw."""

import copy
import functools
import types

import numpy as np
import pytest
from jit_testutil import assert_same, check

import fw
from fw.jit._convert_call import conversion_of, enable_conversion_of_fw_module

T = fw.to_tensor
SEEN: list = []


def _runs_unconverted(fn):
    """Calling `fn` from a converted function fails the way unconverted code does."""
    def f(x):
        return fn(x) + 1

    with pytest.raises(Exception, match="bool|condition|symbolic"):
        fw.jit.to_static(f, full_graph=True)(T([1.0]))


def test_not_to_static_with_parentheses_and_on_a_bound_method():
    deco = fw.jit.not_to_static()
    assert deco is fw.jit.not_to_static

    class Holder:
        def n(self, x):
            if x.sum() > 0:
                return x * 2
            return -x

    h = Holder()
    assert fw.jit.not_to_static(h.n) is not None
    assert getattr(Holder.n, "__fw_not_to_static__", False)  # marked through __func__
    _runs_unconverted(h.n)


def test_ignore_module_matches_submodules_not_prefixes():
    def make(modname):
        def g(x):
            return x + 1

        g.__module__ = modname
        return g

    fw.jit.ignore_module("my_pkg_ignored")
    fw.jit.ignore_module(["my_pkg_ignored"])  # again: no duplicate
    assert conversion_of(make("my_pkg_ignored")) is None
    assert conversion_of(make("my_pkg_ignored.sub")) is None
    assert conversion_of(make("my_pkg_ignored_not")) is not None


def test_functions_without_source_run_as_written():
    ns: dict = {}
    code = compile("def h(x):\n    return x * 3\n", "/nonexistent/fw_jit_no_source.py", "exec")
    exec(code, {"fw": fw}, ns)  # noqa: S102 - a function whose file does not exist
    h = ns["h"]
    assert conversion_of(h) is None
    assert conversion_of(h) is None  # (cached)
    exec(compile("def k(x):\n    return x * 3\n", "<generated>", "exec"), {}, ns)  # noqa: S102
    assert conversion_of(ns["k"]) is None

    def f(x):
        return h(x) + ns["k"](x)

    check(f, T([1.0]))


def test_lambdas_and_generators_are_not_converted():
    def gen(x):
        yield x

    assert conversion_of(lambda x: x) is None
    assert conversion_of(gen) is None


def test_fw_modules_are_converted_only_when_enabled():
    def g(x):
        if x.sum() > 0:
            return x
        return -x

    g.__module__ = "fw.my_test_extension"
    assert conversion_of(g) is None
    enable_conversion_of_fw_module("fw.my_test_extension")
    assert conversion_of(g) is not None


def test_callable_objects_and_builtins_of_unhashable_objects():
    scale = functools.partial(pow, 2)

    def f(x):
        SEEN.append(len(SEEN))  # list.append bound to an unhashable list
        return x * scale(3)

    SEEN.clear()
    sf = fw.jit.to_static(f, full_graph=True)
    assert_same(sf(T([1.0])), T([8.0]))
    assert SEEN == [0]  # ran once, while tracing


class Inner(fw.nn.Layer):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


class Outer(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x) + 1


def test_sublayer_with_a_static_forward():
    net = Outer()
    fw.jit.to_static(net.inner, full_graph=True)
    fw.jit.to_static(net, full_graph=True)
    assert_same(net(T([1.0])), T([3.0]))
    assert_same(net(T([-1.0])), T([-1.0]))


def test_forward_overridden_on_the_instance_is_kept():
    net = Outer()

    def other_forward(self, x):
        if x.sum() > 0:
            return x * 10
        return x

    bound = types.MethodType(other_forward, net.inner)
    net.inner.forward = bound
    sf = fw.jit.to_static(Outer.forward, full_graph=True)
    assert_same(sf(net, T([1.0])), T([11.0]))
    assert_same(sf(net, T([-1.0])), T([0.0]))
    assert net.inner.__dict__["forward"] is bound  # put back after the call


class MySGD(fw.optimizer.SGD):
    """An optimizer defined outside fw.optimizer: its step is still intercepted."""


def test_optimizer_subclass_step_is_part_of_the_program():
    fw.seed(0)
    a = fw.nn.Linear(3, 2)
    b = copy.deepcopy(a)
    opts = [MySGD(0.1, parameters=m.parameters()) for m in (a, b)]

    def step_of(model, opt):
        def step(x):
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return step

    eager, static = step_of(a, opts[0]), fw.jit.to_static(step_of(b, opts[1]), full_graph=True)
    x = T(np.random.RandomState(0).rand(4, 3).astype("float32"))
    for _ in range(3):
        assert_same(eager(x), static(x), rtol=1e-5, atol=1e-6)
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6)
    # the update is in the program: parameters are state updates of it
    assert len(static.concrete_program.main_program.updates) == 2


class ClampSGD(fw.optimizer.SGD):
    """Overrides step: the override is the user's code and must run."""

    def step(self):
        super().step()
        for p in self._parameter_list:
            p.set_value(fw.clip(p, -0.05, 0.05))


def test_optimizer_subclass_overriding_step_runs_its_override():
    fw.seed(0)
    a = fw.nn.Linear(3, 2)
    b = copy.deepcopy(a)
    opts = [ClampSGD(0.5, parameters=m.parameters()) for m in (a, b)]

    def step_of(model, opt):
        def step(x):
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return step

    eager, static = step_of(a, opts[0]), fw.jit.to_static(step_of(b, opts[1]), full_graph=True)
    x = T(np.random.RandomState(0).rand(4, 3).astype("float32"))
    for _ in range(3):
        assert_same(eager(x), static(x), rtol=1e-5, atol=1e-6)
    assert np.abs(b.weight.numpy()).max() <= 0.05 + 1e-7  # the clamp ran
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6)


def test_ignore_module_of_an_object_without_a_name_changes_nothing():
    from fw.jit import _convert_call

    before = list(_convert_call._IGNORED)
    fw.jit.ignore_module(object())
    assert _convert_call._IGNORED == before

    def g(x):
        return x + 1

    assert conversion_of(g) is not None  # (an ignored None would break the prefix test)


def test_lr_scheduler_step_in_converted_code_is_not_an_optimizer_step():
    sched = fw.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)

    def f(x):
        sched.step()  # plain Python: runs while tracing
        return x * 2

    assert_same(fw.jit.to_static(f, full_graph=True)(T([1.0])), T([2.0]))
    assert sched.last_epoch == 1 and abs(sched() - 0.05) < 1e-9


def test_standard_library_functions_are_not_converted():
    import textwrap

    assert conversion_of(textwrap.dedent) is None
    assert conversion_of(copy.deepcopy) is None


def test_a_python_for_loop_stops_taking_items_at_its_break():
    taken = []

    def items():
        for k in range(10):
            taken.append(k)
            yield k

    def f(x):
        acc = x
        for k in items():
            if k == 2:
                break
            acc = acc + k
        return acc

    assert_same(f(T([1.0])), T([2.0]))
    n_eager = len(taken)
    taken.clear()
    assert_same(fw.jit.to_static(f, full_graph=True)(T([1.0])), T([2.0]))
    assert len(taken) == n_eager == 3  # the converted loop did not go on iterating


def test_library_directories_are_skipped_by_path_not_by_name_prefix(tmp_path, monkeypatch):
    """Functions under an installation directory (site-packages, the stdlib) run as
    written; a directory whose name merely starts with one's name is user code."""
    import sysconfig

    from jit_testutil import load_source

    from fw.jit import _convert_call

    lib, beside = tmp_path / "lib", tmp_path / "lib_user"
    lib.mkdir()
    beside.mkdir()
    paths = dict(sysconfig.get_paths(), purelib=str(lib))
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: paths)
    monkeypatch.setattr(_convert_call, "_SKIP_DIRS", ())  # recomputed from the paths
    src = "def g(x):\n    if x.sum() > 0:\n        return x * 2\n    return -x\n"
    user_g = load_source(src, beside).g
    library_g = load_source(src, lib).g

    def call_user(x):
        return user_g(x) + 0

    def call_library(x):
        return library_g(x) + 0

    sf = fw.jit.to_static(call_user, full_graph=True)
    np.testing.assert_allclose(sf(fw.to_tensor([1.0])).numpy(), [2.0])
    np.testing.assert_allclose(sf(fw.to_tensor([-1.0])).numpy(), [1.0])
    # the library's copy is not converted: its Python `if` meets a symbolic tensor
    with pytest.raises(fw.jit.ConversionError, match="symbolic tensor as a Python bool"):
        fw.jit.to_static(call_library, full_graph=True)(fw.to_tensor([1.0]))
