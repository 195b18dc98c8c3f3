"""A converted training step is ONE program: backward, optimizer update and
running statistics are in it, and it leaves parameters, optimizer state and
gradients exactly as the eager step does."""

import copy

import numpy as np
import pytest
from jit_testutil import assert_same

import fw

T = fw.to_tensor


class MLP(fw.nn.Layer):
    def __init__(self, bn=False):
        super().__init__()
        self.fc1 = fw.nn.Linear(6, 8)
        self.bn = fw.nn.BatchNorm1D(8) if bn else None
        self.fc2 = fw.nn.Linear(8, 3)

    def forward(self, x):
        h = self.fc1(x)
        if self.bn is not None:
            h = self.bn(h)
        h = fw.nn.functional.relu(h)
        if h.mean() > 0.5:
            h = h * 0.5
        return self.fc2(h)


def _pair(opt_fn, bn=False, seed=0):
    fw.seed(seed)
    a = MLP(bn)
    b = copy.deepcopy(a)
    return a, opt_fn(a.parameters()), b, opt_fn(b.parameters())


def _step_fn(model, opt, clear=True):
    def step(x, y):
        loss = fw.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if clear:
            opt.clear_grad()
        return loss
    return step


OPTS = {
    "sgd": lambda ps: fw.optimizer.SGD(0.1, parameters=ps),
    "momentum": lambda ps: fw.optimizer.Momentum(0.05, 0.9, parameters=ps, use_nesterov=True),
    "adam": lambda ps: fw.optimizer.Adam(0.01, parameters=ps),
    "adamw": lambda ps: fw.optimizer.AdamW(0.01, parameters=ps, weight_decay=0.1),
    "adam_l2_clip": lambda ps: fw.optimizer.Adam(
        0.01, parameters=ps, weight_decay=0.01, grad_clip=fw.nn.ClipGradByGlobalNorm(0.5)),
    "sgd_clip_value": lambda ps: fw.optimizer.SGD(
        0.1, parameters=ps, grad_clip=fw.nn.ClipGradByValue(0.05)),
    "sgd_clip_norm": lambda ps: fw.optimizer.SGD(
        0.1, parameters=ps, grad_clip=fw.nn.ClipGradByNorm(0.1)),
}


def _data(seed=0, n=8):
    rng = np.random.RandomState(seed)
    return T(rng.randn(n, 6).astype("float32")), T(rng.randint(0, 3, n))


@pytest.mark.parametrize("name", list(OPTS))
@pytest.mark.parametrize("bn", [False, True])
def test_static_step_equals_eager_step(name, bn):
    a, oa, b, ob = _pair(OPTS[name], bn)
    eager = _step_fn(a, oa)
    static = fw.jit.to_static(_step_fn(b, ob), full_graph=True)
    for i in range(4):
        x, y = _data(i)
        le, ls = eager(x, y), static(x, y)
        np.testing.assert_allclose(float(le), float(ls), rtol=1e-6)
        for (n, p), q in zip(a.named_parameters(), b.parameters()):
            if bn and n == "fc1.bias":
                # batch norm removes fc1's bias: its true gradient is exactly 0 and
                # what remains is float32 rounding noise, which Adam's normalised
                # update amplifies to full-size steps of either sign
                continue
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} step {i} {n}")
    if bn:
        assert_same(a.bn._mean, b.bn._mean)
    # after warm-up (first call: no gradients yet) one program serves every step
    assert len(static.program_cache) <= 2
    prog = static.program_cache.last().main_program
    assert prog.updates and any(op.opdef.family == "optimizer" for op in prog.walk())
    # the optimizer state is shared: state_dict sees the static steps
    sa, sb = oa.state_dict(), ob.state_dict()
    assert sorted(sa) == sorted(sb)
    for k in sa:
        if isinstance(sa[k], fw.Tensor):
            np.testing.assert_allclose(sa[k].numpy(), sb[k].numpy(), rtol=1e-5, atol=1e-7,
                                       err_msg=k)


def test_gradients_after_the_step_match_eager():
    for clear in (True, False):
        a, oa, b, ob = _pair(OPTS["sgd"])
        eager = _step_fn(a, oa, clear)
        static = fw.jit.to_static(_step_fn(b, ob, clear), full_graph=True)
        for i in range(3):  # without clear_grad, gradients accumulate over steps
            x, y = _data(i)
            eager(x, y)
            static(x, y)
            for p, q in zip(a.parameters(), b.parameters()):
                assert_same(p, q, rtol=1e-5, atol=1e-6)
                if p.grad is None:
                    assert q.grad is None
                else:
                    assert_same(p.grad, q.grad, rtol=1e-5, atol=1e-6)


def test_eager_and_static_steps_interleave():
    a, oa, b, ob = _pair(OPTS["adam"])
    eager_a = _step_fn(a, oa)
    eager_b = _step_fn(b, ob)
    static_b = fw.jit.to_static(_step_fn(b, ob), full_graph=True)
    for i in range(4):
        x, y = _data(i)
        eager_a(x, y)
        (static_b if i % 2 else eager_b)(x, y)
    for p, q in zip(a.parameters(), b.parameters()):
        assert_same(p, q, rtol=1e-5, atol=1e-6)


def test_learning_rate_scheduler_is_read_each_run():
    fw.seed(0)
    a = MLP()
    b = copy.deepcopy(a)
    sa = fw.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    sb = fw.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    oa = fw.optimizer.SGD(sa, parameters=a.parameters())
    ob = fw.optimizer.SGD(sb, parameters=b.parameters())
    eager, static = _step_fn(a, oa), fw.jit.to_static(_step_fn(b, ob), full_graph=True)
    for i in range(4):
        x, y = _data(i)
        eager(x, y)
        static(x, y)
        sa.step()
        sb.step()
    for p, q in zip(a.parameters(), b.parameters()):
        assert_same(p, q, rtol=1e-5, atol=1e-6)


def test_step_in_the_program_text():
    a, oa, b, ob = _pair(OPTS["adam"])
    static = fw.jit.to_static(_step_fn(b, ob), full_graph=True)
    x, y = _data(0)
    static(x, y)
    static(x, y)
    text = str(static.program_cache.last().main_program)
    assert "adam(" in text and "update %p0 = " in text
    assert "moment1_0" in text  # the optimizer's state, labelled like its state_dict


def test_minimize_in_a_converted_step():
    a, oa, b, ob = _pair(OPTS["sgd"])

    def eager(x, y):
        loss = fw.nn.functional.cross_entropy(a(x), y)
        loss.backward()
        oa.minimize(loss)
        oa.clear_grad()
        return loss

    @fw.jit.to_static(full_graph=True)
    def static(x, y):
        loss = fw.nn.functional.cross_entropy(b(x), y)
        loss.backward()
        ob.minimize(loss)
        ob.clear_grad()
        return loss

    for i in range(2):
        x, y = _data(i)
        eager(x, y)
        static(x, y)
    for p, q in zip(a.parameters(), b.parameters()):
        assert_same(p, q, rtol=1e-5, atol=1e-6)


def test_state_update_inside_a_tensor_branch():
    fw.seed(0)
    counter = T(0.0)
    counter.persistable = True
    counter.name = "counter"

    @fw.jit.to_static(full_graph=True)
    def f(x):
        if x.sum() > 0:
            counter.set_value(counter + 1)
        return x * 2

    f(T([1.0]))
    f(T([-1.0]))
    f(T([2.0]))
    assert float(counter) == 2.0
    assert "update" in str(f.program_cache.last().main_program)


def test_optimizer_step_in_unconverted_code_is_traced():
    """Code fw.jit does not convert (here: compiled from a string, so there is no
    source) still puts opt.step() into the program: the optimizer calls fw-core's
    ``value_hooks.optimizer_call`` while a program is being built."""
    fw.seed(0)
    a = fw.nn.Sequential(fw.nn.Linear(6, 5), fw.nn.ReLU(), fw.nn.Linear(5, 3))
    b = copy.deepcopy(a)  # (no tensor control flow: the model is not converted either)
    oa, ob = OPTS["adam"](a.parameters()), OPTS["adam"](b.parameters())
    ns = {"fw": fw, "model": b, "opt": ob}
    exec("def step(x, y):\n"
         "    loss = fw.nn.functional.cross_entropy(model(x), y)\n"
         "    loss.backward()\n"
         "    opt.step()\n"
         "    opt.clear_grad()\n"
         "    return loss\n", ns)
    eager, static = _step_fn(a, oa), fw.jit.to_static(ns["step"], full_graph=True)
    for i in range(3):
        x, y = _data(i)
        eager(x, y)
        static(x, y)
    for p, q in zip(a.parameters(), b.parameters()):
        assert_same(p, q, rtol=1e-5, atol=1e-6)


class LoopRNN(fw.nn.Layer):
    """A recurrent cell applied while a data-dependent condition holds: the loop
    becomes a while op inside the training program, with a trip count that varies
    from batch to batch."""

    def __init__(self):
        super().__init__()
        self.inp = fw.nn.Linear(6, 8)
        self.cell = fw.nn.Linear(8, 8)
        self.out = fw.nn.Linear(8, 3)

    def forward(self, x):
        h = fw.tanh(self.inp(x))
        i = fw.zeros([], dtype="int64")
        while i < 6 and h.abs().mean() > 0.26 * i.astype("float32"):
            h = fw.tanh(self.cell(h)) + h * 0.5
            i = i + 1
        return self.out(h)


def test_static_step_with_a_while_loop_equals_eager_step():
    fw.seed(0)
    a = LoopRNN()
    b = copy.deepcopy(a)
    oa, ob = OPTS["adam"](a.parameters()), OPTS["adam"](b.parameters())
    eager, static = _step_fn(a, oa), fw.jit.to_static(_step_fn(b, ob), full_graph=True)
    for i in range(4):
        x, y = _data(i)
        le, ls = eager(x, y), static(x, y)
        np.testing.assert_allclose(float(le), float(ls), rtol=1e-5)
        for (name, p), q in zip(a.named_parameters(), b.parameters()):
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    # after warm-up one program serves every trip count; its loops: forward, recording, reverse
    assert len(static.program_cache) <= 2
    prog = static.program_cache.last().main_program
    assert sum(1 for op in prog.walk() if op.name == "while") == 3


def test_fw_jit_tensors_that_died_do_not_shadow_new_parameters():
    """fw.jit's own captured tensors (learning rates) are never trained; that mark must
    die with them: a new parameter allocated where one of them lived still trains."""
    import gc

    from fw.core.tensor import wrap
    from fw.jit import _context

    for _ in range(20):
        lin = fw.nn.Linear(6, 3)
        opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
        step = fw.jit.to_static(_step_fn(lin, opt), full_graph=True)
        x, y = _data(0)
        before = [p.numpy().copy() for p in lin.parameters()]
        step(x, y)
        step(x, y)
        for p, b in zip(lin.parameters(), before):
            assert not np.array_equal(p.numpy(), b), p.name  # every parameter trained
        del lin, opt, step
        gc.collect()
    t = wrap(np.zeros(1))
    _context.mark_aux(t)
    address = id(t)
    del t
    fresh = [wrap(np.zeros(1)) for _ in range(50)]  # one of them may reuse the address
    assert not any(_context.is_aux(u) for u in fresh if id(u) == address)


def test_a_clip_without_static_form_is_a_conversion_error():
    a, oa, _, _ = _pair(lambda ps: fw.optimizer.SGD(0.1, parameters=ps,
                                                    grad_clip=lambda pg: pg))
    step = fw.jit.to_static(_step_fn(a, oa), full_graph=True)
    x, y = _data(0)
    with pytest.raises(fw.jit.ConversionError, match="has no static form"):
        step(x, y)


def test_rebuilt_optimizer_state_traces_again():
    a, oa, b, ob = _pair(OPTS["adam"])
    eager, static = _step_fn(a, oa), fw.jit.to_static(_step_fn(b, ob), full_graph=True)
    for i in range(2):
        eager(*_data(i)), static(*_data(i))
    traced = len(static.program_cache)
    extra = [fw.nn.Parameter(fw.ones([3])) for _ in range(2)]
    oa.add_param_group({"params": [extra[0]]})  # the flat state is rebuilt: new generation
    ob.add_param_group({"params": [extra[1]]})
    for i in range(2, 4):
        eager(*_data(i)), static(*_data(i))
    assert len(static.program_cache) > traced
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
