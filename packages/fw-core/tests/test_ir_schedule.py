"""Executor hazards: the schedule `Compiled` makes of a program (frees, buffer reuse,
optimizer updates written into the parameters in place) must never read a buffer
after its value is gone. Checked three ways: `verify_schedule` on every schedule,
outputs and updated parameters equal to the unoptimized executor's on random
programs, in every topological order of their ops, and on hand-made hazards the
schedule verifier must name."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.core.ir import TensorType, building, trace, verify
from fw.core.ir.control import cond, while_loop
from fw.core.ir.core import Program
from fw.core.ir.executor import Compiled, Step
from fw.core.ir.passes import PASSES, PassManager
from fw.core.ir.verifier import VerificationError, schedule_problems, verify_schedule
from fw.core.ops import call

T = TensorType
UNARY = ("relu", "sigmoid", "tanh", "silu", "gelu", "neg", "abs")
BINARY = ("add", "subtract", "multiply", "maximum")
KINDS = ("unary", "activations", "binary", "scalar", "transpose", "transposes", "reshape",
         "dense", "dense", "update", "update", "cast", "const", "concat", "batch_norm", "cond",
         "while")


def _tensor(array, name, trainable=True):
    t = fw.to_tensor(np.asarray(array))
    t.name = name
    t.persistable = True
    t.trainable = trainable
    t.stop_gradient = not trainable
    return t


class _Case:
    """A random program and the data to run it (params are copied for every run)."""

    def __init__(self, program, inputs):
        self.program = program
        self.inputs = inputs

    def run(self, program=None, memory_optimize=True, check_schedule=True):
        """(outputs, {label: array after the run}) on fresh copies of the params."""
        p = program or self.program
        params = {k: np.array(getattr(t, "_data", t), copy=True) for k, t in p.captured.items()}
        c = Compiled(p, memory_optimize=memory_optimize)
        if check_schedule:
            verify_schedule(c)
        outs = c([x.copy() for x in self.inputs], params=params)
        return [np.asarray(o).copy() for o in outs], params


def draw_case(draw, max_ops=12) -> _Case:
    """A random program over float64 values: elementwise ops, activations (stacked
    too), scalar constants (0, -0, 1: the simplifier's identities) and captured
    constants (uniform or not, alone or in constant expressions), transposes with
    any permutation (dims of equal size, so a wrong permutation still type-checks),
    reshapes, concat, matmul/linear with weights, biases, scales, activations and
    residuals, inference batch norms after a linear, casts, cond/while, and state
    updates (plain, or through ``sgd``/``momentum``, which the executor runs in
    place) of params that other ops may still read."""
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    dims = draw(st.lists(st.sampled_from([2, 3]), min_size=1, max_size=3), label="dims")
    p = Program()
    n_param = [0]
    updated: set = set()

    def param(shape, trainable=True):
        n_param[0] += 1
        t = _tensor(rng.standard_normal(shape) * 0.7, f"w{n_param[0]}", trainable)
        return b.capture(t)  # (`b`: the builder below)

    with building(p) as b:
        x = b.add_input(T(dims, "float64"), "x")
        params = [param(dims) for _ in range(draw(st.integers(1, 2), label="params"))]
        pool = [x, *params]
        n_ops = draw(st.integers(1, max_ops), label="ops")
        for _ in range(n_ops):
            kind = draw(st.sampled_from(KINDS))
            v = draw(st.sampled_from(pool[::-1]))  # the recent values first: longer chains
            shape = list(v.type.shape)
            if kind == "unary":
                r = call(draw(st.sampled_from(UNARY)), v)
            elif kind == "activations":  # stacked: what an epilogue may absorb only once
                a1, a2 = draw(st.lists(st.sampled_from(UNARY[:5]), min_size=2, max_size=2,
                                       unique=True))
                r = call(a2, call(a1, v))
            elif kind == "binary":
                same = [w for w in pool if list(w.type.shape) == shape]
                if shape and draw(st.booleans()):
                    w = param(shape[-1:])  # a bias
                else:
                    w = draw(st.sampled_from(same))
                a, c = (v, w) if draw(st.booleans()) else (w, v)
                r = call(draw(st.sampled_from(BINARY)), a, c)
            elif kind == "scalar":
                c = call("full", shape=[], fill_value=draw(st.sampled_from(
                    [0.0, -0.0, 1.0, 2.0, 0.5])), dtype="float64")
                name = draw(st.sampled_from(["add", "subtract", "multiply", "divide"]))
                if name == "divide" or draw(st.booleans()):
                    r = call(name, v, c if name != "divide" else call("add", c, 1.0))
                else:
                    r = call(name, c, v)
            elif kind in ("transpose", "transposes"):
                if len(shape) < 2:
                    continue
                r = v
                for _ in range(1 if kind == "transpose" else 2):
                    r = call("transpose", r, perm=draw(st.permutations(range(len(shape)))))
            elif kind == "reshape":
                n = int(np.prod(shape))
                merged = shape[:-2] + [shape[-2] * shape[-1]] if len(shape) >= 2 else [n]
                r = v
                for _ in range(draw(st.integers(1, 2))):
                    r = call("reshape", r, shape=draw(st.sampled_from(
                        [[n], shape[::-1], [1] + shape, merged])))
            elif kind == "dense":  # matmul/linear [* c] [+ bias] [act [act]] [+ residual]
                if not shape:
                    continue
                m = shape[-1] if draw(st.booleans()) else draw(st.sampled_from([2, 3]))
                if draw(st.booleans()):
                    ty = draw(st.booleans())
                    w = param([m, shape[-1]] if ty else [shape[-1], m])
                    r = call("matmul", v, w, transpose_y=ty)
                    if draw(st.booleans()):
                        r = call("multiply", r, call("full", shape=[], fill_value=0.5,
                                                     dtype="float64"))
                else:
                    r = call("linear", v, param([shape[-1], m]),
                             param([m]) if draw(st.booleans()) else None)
                if draw(st.booleans()):
                    r = call("add", r, param([m]))
                for act in draw(st.lists(st.sampled_from(UNARY[:5]), max_size=2)):
                    r = call(act, r)
                if draw(st.booleans()):
                    res = [w for w in pool if w.type == r.type]
                    if res:
                        r = call("add", r, draw(st.sampled_from(res)))
            elif kind == "update":
                free = [a for a in params if a.label not in updated]
                if not free:
                    continue
                a = draw(st.sampled_from(free))
                g = draw(st.sampled_from([w for w in pool if w.type == a.type]))
                how = draw(st.sampled_from(["plain", "sgd", "sgd", "momentum"]))
                updated.add(a.label)
                if how == "plain":
                    r = g
                elif how == "sgd":
                    r = call("sgd", a, g, param([1], trainable=False))
                else:
                    vel = param(list(a.type.shape), trainable=False)
                    r, new_vel = call("momentum", a, g, param([1], trainable=False), vel)
                    b.record_update(vel, new_vel)
                b.record_update(a, r)
                if draw(st.booleans()):  # a read of the OLD value, after the update op
                    pool.append(call(draw(st.sampled_from(UNARY)), a))
            elif kind == "const":  # a captured constant: uniform (an identity?) or not
                fill = draw(st.sampled_from([None, 1.0, -0.0, 0.0, 2.0]))
                a = rng.standard_normal(shape) if fill is None else np.full(shape, fill)
                c = b.capture(_tensor(a, f"k{len(pool)}", trainable=False))
                if draw(st.booleans()):  # a constant expression: folded
                    c = call(draw(st.sampled_from(UNARY)), c)
                name = draw(st.sampled_from(["add", "subtract", "multiply", "maximum"]))
                r = call(name, v, c) if draw(st.booleans()) else call(name, c, v)
            elif kind == "concat":
                same = [w for w in pool if w.type == v.type]
                r = call("concat", [v, draw(st.sampled_from(same))],
                         axis=draw(st.integers(0, max(0, len(shape) - 1))) if shape else 0) \
                    if shape else call("neg", v)
            elif kind == "batch_norm":  # inference batch norm over the last axis of a 2-D
                if len(shape) != 2:
                    continue
                n = shape[1]
                stats = [b.capture(_tensor(a, f"bn{len(pool)}.{i}", trainable=False))
                         for i, a in enumerate((rng.standard_normal(n),
                                                rng.uniform(0.5, 2.0, n),
                                                rng.standard_normal(n),
                                                rng.standard_normal(n)))]
                r = call("batch_norm", call("linear", v, param([shape[1], n]), param([n])),
                         *stats, epsilon=1e-3, channel_last=True)[0]
            elif kind == "cond":
                w = draw(st.sampled_from([w for w in pool if w.type == v.type]))
                u1, u2 = draw(st.sampled_from(UNARY)), draw(st.sampled_from(UNARY))
                r = cond(call("less_than", call("sum", v), 0.0),
                         lambda u1=u1, v=v, w=w: call("multiply", call(u1, v), w),
                         lambda u2=u2, w=w: call(u2, w))
            elif kind == "while":
                w = draw(st.sampled_from([w for w in pool if w.type == v.type]))
                u = draw(st.sampled_from(UNARY))
                i0 = call("full", shape=[], fill_value=0, dtype="int64")
                _, r = while_loop(lambda i, a: call("less_than", i, 2),
                                  lambda i, a, u=u, w=w: (call("add", i, 1),
                                                          call(u, call("add", a, w))),
                                  [i0, v])
            else:
                r = call("cast", v, dtype="float64")
            pool.append(r)
        k = draw(st.integers(1, min(3, len(pool))))
        b.set_outputs(draw(st.lists(st.sampled_from(pool), min_size=k, max_size=k)))
    verify(p)
    return _Case(p, [rng.standard_normal(dims)])


def _reads(op) -> list:
    out = [v for v in op.operands if v is not None]
    for blk in op.blocks:
        for o in blk.ops:
            out.extend(_reads(o))
        out.extend(blk.outputs)
    return out


def reorder(program, rng) -> None:
    """Put the ops of every block in a random topological order (each op after the
    producers of what it reads, in its block or read by its nested blocks): the
    same program, another schedule."""
    for blk in program.all_blocks():
        ops = list(blk.ops)
        where = {r: i for i, op in enumerate(ops) for r in op.results}
        deps = [{where[v] for v in _reads(op) if v in where} for op in ops]
        done: set = set()
        order = []
        while len(order) < len(ops):
            ready = [i for i in range(len(ops)) if i not in done and deps[i] <= done]
            i = ready[rng.integers(len(ready))]
            done.add(i)
            order.append(ops[i])
        blk.ops[:] = order
    program.touch()


def _assert_same(got, want, exact=True):
    (go, gp), (wo, wp) = got, want
    assert len(go) == len(wo)
    for a, b in zip(go, wo):
        assert a.shape == b.shape and a.dtype == b.dtype
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    for label, a in wp.items():
        if label in gp:
            (np.testing.assert_array_equal if exact else np.testing.assert_allclose)(gp[label], a)


# ---------------------------------------------------------------- random programs
@settings(max_examples=60)
@given(data=st.data())
def test_every_topological_order_runs_like_the_unoptimized_program(data):
    case = draw_case(data.draw)
    want = case.run(memory_optimize=False, check_schedule=False)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="order"))
    for _ in range(3):
        q = case.program.clone()
        reorder(q, rng)
        verify(q)
        _assert_same(case.run(q), want)


@pytest.mark.parametrize("pipeline", sorted(PASSES) + ["default", "inference"])
@settings(max_examples=15)
@given(data=st.data())
def test_pass_pipelines_preserve_random_programs(pipeline, data):
    case = draw_case(data.draw)
    want = case.run(memory_optimize=False, check_schedule=False)
    q = case.program.clone()
    PassManager(pipeline).run(q)
    if data.draw(st.booleans(), label="reordered"):
        reorder(q, np.random.default_rng(0))
    _assert_same(case.run(q), want, exact=False)


# ---------------------------------------------------------------- in-place updates
def _sgd_program(build):
    """A program updating ``w <- sgd(w, g, lr)``; ``build(b, g, w, lr, c)`` emits the
    rest (``w``: the argument, i.e. the OLD value) and returns the outputs."""
    w = _tensor(np.array([1.0, 2.0]), "w")
    lr = _tensor(np.array([0.5]), "lr", trainable=False)
    c = _tensor(np.zeros(2), "c", trainable=False)
    p = Program()
    with building(p) as b:
        g = b.add_input(T([2], "float64"), "g")
        vw, vlr, vc = b.capture(w), b.capture(lr), b.capture(c)
        b.set_outputs(build(b, g, vw, vlr, vc))
    return p, w, c


def _sgd(b, w, g, lr):
    b.record_update(w, call("sgd", w, g, lr))


def test_a_read_after_the_update_op_sees_the_old_value():
    def build(b, g, w, lr, c):
        _sgd(b, w, g, lr)
        return [call("multiply", w, w)]

    p, w, _ = _sgd_program(build)
    assert [op.name for op in p.block.ops] == ["sgd", "multiply"]
    c = Compiled(p)
    verify_schedule(c)
    assert "out=(" not in c.source  # w is still read after sgd: no in-place update
    (out,) = c([np.ones(2)])
    np.testing.assert_array_equal(out, [1.0, 4.0])
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])


def test_a_view_taken_before_the_update_op_and_read_after_it():
    def build(b, g, w, lr, c):
        view = call("reshape", w, shape=[2, 1])
        _sgd(b, w, g, lr)
        return [call("exp", view)]

    p, w, _ = _sgd_program(build)
    assert [op.name for op in p.block.ops] == ["reshape", "sgd", "exp"]
    c = Compiled(p)
    verify_schedule(c)
    assert "out=(" not in c.source
    (out,) = c([np.ones(2)])
    np.testing.assert_array_equal(out.reshape(-1), np.exp([1.0, 2.0]))


def test_returning_the_old_value_of_an_updated_param():
    # a bug once: sgd wrote its result into w's array, which was also the output,
    # so the caller saw the new value
    def build(b, g, w, lr, c):
        _sgd(b, w, g, lr)
        return [w]

    p, w, _ = _sgd_program(build)
    c = Compiled(p)
    verify_schedule(c)
    assert "out=(" not in c.source
    (out,) = c([np.ones(2)])
    np.testing.assert_array_equal(out, [1.0, 2.0])
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])


def test_storing_the_old_value_of_an_updated_param_into_another():
    # the same bug through a second update: c <- the old w
    def build(b, g, w, lr, c):
        _sgd(b, w, g, lr)
        b.record_update(c, w)
        return []

    p, w, c_ = _sgd_program(build)
    c = Compiled(p)
    verify_schedule(c)
    c([np.ones(2)])
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])
    np.testing.assert_array_equal(c_.numpy(), [1.0, 2.0])


def test_update_in_place_when_nothing_reads_the_old_value():
    def build(b, g, w, lr, c):
        y = call("multiply", w, g)  # read before the update: fine
        _sgd(b, w, g, lr)
        return [y]

    p, w, _ = _sgd_program(build)
    c = Compiled(p)
    verify_schedule(c)
    assert "out=(" in c.source
    assert [s.writes for s in c.main.steps] == [(), (c.slot[p.block.args[1]],)]
    data = w._data
    (out,) = c([np.ones(2)])
    assert w._data is data  # written in place, not replaced
    np.testing.assert_array_equal(out, [1.0, 2.0])
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])


def test_buffer_reuse_only_into_a_dying_operand():
    # e is read by tanh and then by neg: only neg (its last reader) may take its buffer
    p = trace(lambda x: (lambda e: (e.tanh(), e.neg()))(x.exp()), [T([3], "float64")])
    c = Compiled(p)
    verify_schedule(c)
    assert [s.reuse for s in c.main.steps] == [0, 0, c.slot[p.block.ops[0].results[0]]]
    x = np.array([-1.0, 0.0, 2.0])
    t, n = c([x])
    np.testing.assert_array_equal(t, np.tanh(np.exp(x)))
    np.testing.assert_array_equal(n, -np.exp(x))


def test_updates_written_after_the_run_read_the_old_values_through_views():
    # a <- (a view of c), c <- a: both new values are taken before either is written
    a = _tensor(np.array([1.0, 2.0]), "a")
    c = _tensor(np.array([[3.0, 4.0]]), "c")
    p = Program()
    with building(p) as b:
        va, vc = b.capture(a), b.capture(c)
        b.record_update(va, call("reshape", vc, shape=[2]))
        b.record_update(vc, call("reshape", va, shape=[1, 2]))
        b.set_outputs([va, vc])  # the old values, although both are written after
    for memory_optimize in (True, False):
        c_ = Compiled(p, memory_optimize=memory_optimize)
        verify_schedule(c_)
        old_a, old_c = a.numpy().copy(), c.numpy().copy()
        out_a, out_c = c_([])
        np.testing.assert_array_equal(out_a, old_a)
        np.testing.assert_array_equal(out_c, old_c)
        np.testing.assert_array_equal(a.numpy(), old_c.reshape(2))
        np.testing.assert_array_equal(c.numpy(), old_a.reshape(1, 2))


def test_a_constant_output_is_a_fresh_writable_array_each_run():
    p = trace(lambda x: (call("full", shape=[2], fill_value=3.0, dtype="float64"), x * 2.0),
              [T([2], "float64")])
    c = Compiled(p)
    verify_schedule(c)
    first, _ = c([np.ones(2)])
    assert first.flags.writeable
    first[...] = 0.0  # the caller owns it: the next run is not affected
    again, _ = c([np.ones(2)])
    np.testing.assert_array_equal(again, [3.0, 3.0])


# ---------------------------------------------------------------- the schedule verifier
def _steps(c):
    return c.schedules[0].steps


def _replace(c, i, **kw):
    steps = _steps(c)
    steps[i] = steps[i]._replace(**kw)


def test_schedule_verifier_accepts_what_the_executor_plans():
    p = trace(lambda x: (x.exp() * 2.0).tanh() + x, [T([3], "float64")])
    c = Compiled(p)
    assert any(s.reuse for s in _steps(c)) and any(s.frees for s in _steps(c))
    assert schedule_problems(c) == []
    verify_schedule(Compiled(p, memory_optimize=False))


def test_schedule_verifier_names_a_read_after_free_and_a_freed_output():
    p = trace(lambda x: (lambda e: (e.tanh(), e.neg()))(x.exp()), [T([3], "float64")])
    c = Compiled(p, memory_optimize=False)
    e, t = p.block.ops[0].results[0], p.block.ops[1].results[0]
    _replace(c, 1, frees=(c.slot[e],))  # freed after tanh, but neg reads it next
    with pytest.raises(VerificationError, match=r"step 2 \(neg\) reads v\d+ after step 1 "
                                                r"\(tanh\) freed it"):
        verify_schedule(c)
    c = Compiled(p, memory_optimize=False)
    _replace(c, 2, frees=(c.slot[t],))
    assert schedule_problems(c) == [f"block 0, step 2 (neg): v{c.slot[t]} is a block output "
                                    f"(read after the run) but step 2 (neg) freed it"]


def test_schedule_verifier_names_reuse_of_a_live_or_foreign_buffer():
    p = trace(lambda x: (lambda e: (e.tanh() * e))(x.exp()), [T([3], "float64")])
    c = Compiled(p)
    ops = p.block.ops
    e, t = ops[0].results[0], ops[1].results[0]
    assert _steps(c)[1].op is ops[1]
    _replace(c, 1, reuse=c.slot[e])  # tanh(e) into e's buffer while multiply still reads e
    msgs = schedule_problems(c)
    assert any(f"reads v{c.slot[e]} after step 1 (tanh) wrote its result into its buffer" in m
               for m in msgs), msgs
    c = Compiled(p)
    _replace(c, 0, reuse=c.slot[p.block.args[0]])  # an input's buffer
    assert any("a value it does not own" in m for m in schedule_problems(c))
    c = Compiled(p)
    _replace(c, 1, reuse=c.slot[t])  # not an operand
    assert any("not one of its operands" in m for m in schedule_problems(c))


def test_schedule_verifier_names_a_read_after_an_in_place_update():
    def later_read(b, g, w, lr, c):
        _sgd(b, w, g, lr)
        return [call("multiply", w, w)]

    p, _, _ = _sgd_program(later_read)
    c = Compiled(p)
    w = c.slot[p.block.args[1]]
    assert _steps(c)[0].op.name == "sgd" and not _steps(c)[0].writes
    _replace(c, 0, writes=(w,))  # what a planner ignoring the later read would do
    with pytest.raises(VerificationError, match=r"step 1 \(multiply\) reads v\d+ after step 0 "
                                                r"\(sgd\) updated the param/const"):
        verify_schedule(c)

    def view_read(b, g, w, lr, c):
        view = call("reshape", w, shape=[2, 1])
        _sgd(b, w, g, lr)
        return [call("exp", view)]

    p, _, _ = _sgd_program(view_read)
    c = Compiled(p)
    _replace(c, 1, writes=(c.slot[p.block.args[1]],))
    assert any("step 2 (exp) reads" in m for m in schedule_problems(c)), schedule_problems(c)

    def returned(b, g, w, lr, c):
        _sgd(b, w, g, lr)
        b.record_update(c, call("neg", g))
        return [w]

    p, _, _ = _sgd_program(returned)
    c = Compiled(p)
    assert schedule_problems(c) == []
    _replace(c, 0, writes=(c.slot[p.block.args[1]],))
    assert any("is a block output" in m for m in schedule_problems(c)), schedule_problems(c)
    for bad in (p.block.args[0], p.block.ops[0].results[0]):  # an input, a result
        c = Compiled(p)
        _replace(c, 0, writes=(c.slot[bad],))
        assert any("which is not a param/const" in m for m in schedule_problems(c))


def test_schedule_verifier_checks_nested_blocks():
    from fw.core.ir.control import while_loop

    def f(x):
        _, out = while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, (v * x).tanh()),
                            [call("full", shape=(), fill_value=0, dtype="int64"), x])
        return out

    p = trace(f, [T([3], "float64")])
    c = Compiled(p)
    assert len(c.schedules) == 3 and schedule_problems(c) == []
    body = c.schedules[2]
    x = p.block.args[0]
    body.steps[0] = body.steps[0]._replace(frees=(c.slot[x],))  # frees the outer x
    assert any("a value of an enclosing block" in m for m in schedule_problems(c))
    x = np.full(3, 0.5)
    np.testing.assert_array_equal(Compiled(p)([x])[0], np.tanh(np.tanh(np.tanh(x * x) * x) * x))


def test_step_records_in_place_writes():
    assert Step._fields[-1] == "writes" and Step(None, (), (), (), 0).writes == ()


# ---------------------------------------------------------------- what the executor plans
def _reuse_of(f, types):
    """{op name: True if it writes into an operand's buffer} of the traced program."""
    c = Compiled(trace(f, types))
    verify_schedule(c)
    return {s.op.name: bool(s.reuse) for s in c.main.steps if s.op.name != "full"}


F = "float64"


@pytest.mark.parametrize("f,types,reused", [
    # static and equal shapes
    (lambda x: x.exp() + 1.0, [T([2, 3], F)], {"exp": False, "add": True}),
    # dynamic sizes: a scalar or all-1 operand broadcasts into the dying one
    (lambda x: x.exp() * 2.0, [T([-1, -1], F)], {"exp": False, "multiply": True}),
    (lambda x, y: x.exp() - y, [T([-1, 3], F), T([1, 1], F)], {"subtract": True}),
    # same dynamic shapes: reused, checked at run time
    (lambda x, y: x.exp() + y.exp(), [T([-1, 3], F), T([-1, 3], F)], {"add": True}),
    # the other operand may grow the result: not reused
    (lambda x, y: x.exp() + y, [T([-1, 3], F), T([3], F)], {"add": False}),
    (lambda x, y: x.exp() + y, [T([1, 3], F), T([2, 3], F)], {"add": False}),
    # another dtype, attributes, several results: never
    (lambda x: x.exp() < 1.0, [T([3], F)], {"less_than": False}),
    (lambda x: call("gelu", x.exp(), approximate=True), [T([3], F)], {"gelu": False}),
    (lambda x: x.exp().exp(), [T([3], F)], {"exp": True}),
])
def test_buffer_reuse_plan(f, types, reused):
    got = _reuse_of(f, types)
    for name, want in reused.items():
        assert got[name] is want, (name, got)


def test_buffer_reuse_respects_run_time_shapes():
    p = trace(lambda x, y: x.exp() + y.exp(), [T([-1, 3], F), T([-1, 3], F)])
    c = Compiled(p)
    for xs, ys in (((2, 3), (2, 3)), ((1, 3), (4, 3)), ((4, 3), (1, 3))):
        x, y = np.full(xs, 0.5), np.full(ys, 0.25)
        np.testing.assert_array_equal(c([x, y])[0], np.exp(x) + np.exp(y))


@pytest.mark.parametrize("n,hoisted", [(8192, True), (8193, False)])
def test_constants_up_to_64_kib_are_computed_at_compile_time(n, hoisted):
    calls = []

    def full_counting(**attrs):
        calls.append(1)
        return np.full(attrs["shape"], attrs["fill_value"], attrs["dtype"].np)

    p = trace(lambda x: x + call("full", shape=[n], fill_value=1.0, dtype=F), [T([n], F)])
    c = Compiled(p, kernel_override={"full": full_counting})
    assert len(calls) == int(hoisted)
    for _ in range(2):
        np.testing.assert_array_equal(c([np.zeros(n)])[0], np.ones(n))
    assert len(calls) == (1 if hoisted else 2)


def test_zero_dim_results_are_arrays_not_numpy_scalars():
    # NumPy arithmetic on 0-d arrays gives scalars; the executor keeps arrays (a
    # scalar has no buffer to reuse and is not what eager mode returns)
    p = trace(lambda x: (lambda s: (s * 2.0, (s * 2.0).exp() + x))(x.sum()), [T([3], F)])
    for memory_optimize in (True, False):
        c = Compiled(p, memory_optimize=memory_optimize)
        verify_schedule(c)
        a, b = c([np.ones(3)])
        assert type(a) is np.ndarray and a.shape == () and a == 6.0
        np.testing.assert_allclose(b, np.exp(6.0) + 1.0)


def test_unread_loop_arguments_do_not_pin_their_buffers():
    # the loop's cond block reads only the counter: its copy of the carried tensor is
    # dropped at once (else the tensor's buffer stays referenced and cannot be reused)
    p = trace(lambda x: while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * 2.0),
                                   [call("full", shape=[], fill_value=0, dtype="int64"),
                                    x])[1], [T([2], F)])
    c = Compiled(p)
    verify_schedule(c)
    loop = p.block.ops[-1]
    unread = c.slot[loop.blocks[0].args[1]]
    lines = [ln.strip() for ln in c.source.splitlines()]
    assert f"del v{unread}" in lines
    np.testing.assert_array_equal(c([np.ones(2)])[0], [4.0, 4.0])
    assert f"del v{unread}" not in Compiled(p, memory_optimize=False).source
