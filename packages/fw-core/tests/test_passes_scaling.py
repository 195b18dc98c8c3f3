"""Passes and the verifier are near-linear in program size (issue 10, item 9).

No timed assertions: the tests count what made them quadratic (list searches of
the op lists, producer look-ups while growing a fusion group) or run 5k/20k-op
programs through the whole ``inference`` pipeline and check they complete.
"""

import numpy as np

import fw
from fw.core.ir import TensorType, run, trace, verify
from fw.core.ir.control import cond
from fw.core.ir.passes import PassManager, get_pass
from fw.core.ir.passes.rewrite import Rewriter

T = TensorType


def _chain(n):
    """n elementwise ops: the shape the issue's Predictor was slow on."""
    def f(x):
        y = x
        for _ in range(n // 4):
            y = fw.tanh((y * 1.0 + 0.5) * 0.9)
        return y
    return trace(f, [T([-1, 8], "float32")])


class _CountingList(list):
    """An op list that counts the O(length) searches a rewriter makes in it."""
    searches = 0

    def remove(self, x):
        _CountingList.searches += 1
        super().remove(x)

    def index(self, *a):
        _CountingList.searches += 1
        return super().index(*a)


def test_pattern_rewrites_do_not_search_the_op_list():
    p = _chain(2000)
    p.block.ops = _CountingList(p.block.ops)
    _CountingList.searches = 0
    for name in ("constant_folding", "algebraic_simplify", "fuse_elementwise", "dce"):
        get_pass(name).run(p)
    verify(p)
    assert _CountingList.searches == 0  # one list.remove per erased op before
    assert [op.name for op in p.block.ops] == ["fused_elementwise"]


def test_fusion_group_growth_is_linear(monkeypatch):
    p = _chain(2000)
    n = sum(1 for _ in p.walk())
    calls = [0]
    real = Rewriter.producer

    def counting(v):
        calls[0] += 1
        return real(v)

    monkeypatch.setattr(Rewriter, "producer", staticmethod(counting))
    assert get_pass("fuse_elementwise").run(p)
    assert calls[0] <= 4 * n  # each member's operands once; ~n^2/2 before


def test_deferred_edits_give_the_immediate_order():
    def f(x):
        return fw.exp(fw.tanh(fw.sin(x)))

    progs = [trace(f, [T([3], "float32")]) for _ in range(2)]
    for p, deferred in zip(progs, (False, True)):
        rw = Rewriter(p, deferred=deferred)
        sin, tanh, exp = p.block.ops
        x = p.block.args[0]
        a = rw.create("neg", [x], before=tanh)
        b = rw.create("abs", [x], before=tanh)
        c = rw.create("cos", [x], before=a)  # anchored on a pending op
        rw.insert_after(exp, rw.create("sqrt", [x]))
        rw.insert_after(exp, rw.create("floor", [x]))
        rw.set_operand(exp, 0, b.results[0])
        rw.erase(tanh)
        if deferred:
            assert tanh.parent is None and a.parent is p.block
            rw.flush()
        verify(p)
        del sin, c
    assert str(progs[0]) == str(progs[1])
    assert [op.name for op in progs[1].block.ops] == ["sin", "cos", "neg", "abs", "exp",
                                                      "floor", "sqrt"]


def test_long_chains_through_the_inference_pipeline():
    for n in (5000, 20000):
        p = _chain(n)
        pm = PassManager("inference")  # verifies before and after every pass
        pm.run(p)
        assert [op.name for op in p.block.ops] == ["fused_elementwise"]
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    small = _chain(40)
    want = run(small, x)[0]
    PassManager("inference").run(small)
    np.testing.assert_allclose(run(small, x)[0], want, rtol=1e-6)


def test_many_readers_of_one_value():
    def f(x):
        return [fw.tanh(x * float(i)) for i in range(5000)][0]

    p = trace(f, [T([4], "float32")])
    assert len(p.block.ops) > 10000
    PassManager("inference").run(p)  # 5000 dead readers of x go one by one
    rw = Rewriter(p)
    assert rw.num_uses(p.block.args[0]) == 1


def test_many_conds_verify_and_scope():
    def f(x, c):
        y = x
        for _ in range(2500):
            y = cond(c, lambda y=y: y + 1.0, lambda y=y: y - 1.0)
        return y

    p = trace(f, [T([4], "float32"), T([], "bool")])
    PassManager(["cse", "dce"]).run(p)
    verify(p)
    # a value defined inside a nested block is not visible after it
    inner = p.block.ops[-1].blocks[0].ops[0].results[0]
    p.block.outputs[0] = inner
    try:
        verify(p)
    except fw.core.errors.InvalidArgumentError as e:
        assert "not defined before it" in str(e)
    else:
        raise AssertionError("a value of a nested block used after it passed the verifier")
