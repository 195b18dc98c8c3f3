"""One program per rewrite of every pass, built so that a wrong rewrite shows: each
test asserts that the rewrite fired (the op kinds/counts changed as the pass
promises) and that the optimized program computes what the original computes on
random inputs (bit for bit where the pass promises it). The inputs are chosen to
tell wrong variants apart: permutations that do not commute, activations that do
not commute, signed zeros, non-symmetric weights."""

import collections
import itertools

import numpy as np
import pytest

import fw
from fw.core.ir import TensorType, building, run, trace, verify
from fw.core.ir.core import Program
from fw.core.ir.passes import PassManager
from fw.core.ops import OPS, call

T = TensorType
F32, F64 = np.float32, np.float64


@pytest.fixture(autouse=True)
def _reference_kernels(monkeypatch):
    """Fusions are bit-exact against the NumPy reference kernels (the native ones
    are checked against those elsewhere)."""
    for n in ("fused_elementwise", "fused_matmul", "relu", "gelu", "silu", "conv", "fused_conv",
              "matmul", "linear"):
        if "cpu" in OPS[n].kernels:
            monkeypatch.delitem(OPS[n].kernels, "cpu")


def _param(a, name, trainable=True):
    t = fw.to_tensor(np.asarray(a))
    t.name = name
    t.persistable = True
    t.trainable = trainable
    t.stop_gradient = not trainable
    return t


def _ops(p) -> collections.Counter:
    return collections.Counter(op.name for op in p.walk())


def _optimized(p, passes):
    """(optimized clone of p, whether the FIRST pass reported a change: a rewrite
    must say it changed the program, or pipelines stop iterating too early)."""
    q = p.clone()
    pm = PassManager(passes)
    pm.run(q)
    verify(q)
    return q, pm.log[0][1]


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind in "fc" else a


def _same(p, q, inputs, exact=True):
    a, b = run(p, *inputs), run(q, *inputs)
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    assert len(a) == len(b)
    for x, y in zip(a, b):
        x, y = x.numpy(), y.numpy()
        assert x.shape == y.shape and x.dtype == y.dtype
        if exact:  # signed zeros and NaN payloads included
            np.testing.assert_array_equal(_bits(x), _bits(y))
        else:
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def _rand(*shape, dtype=F64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ================================================================ algebraic_simplify
PERMS3 = list(itertools.permutations(range(3))) + [None, (-1, 0, 1), (0, -1, -2)]


def _norm(p):
    return tuple(range(3))[::-1] if p is None else tuple(a % 3 for a in p)


@pytest.mark.parametrize("p", PERMS3)
@pytest.mark.parametrize("q", PERMS3)
def test_transpose_compose(p, q):
    # a cube: a wrongly composed permutation still has the right type, only the
    # values show it
    x = _rand(3, 3, 3)
    prog = trace(lambda v: call("transpose", call("transpose", v, perm=p), perm=q),
                 [T([3, 3, 3], "float64")])
    opt, changed = _optimized(prog, ["algebraic_simplify", "dce"])
    assert changed
    out = np.transpose(np.transpose(x, _norm(p)), _norm(q))
    perms = [op.attrs["perm"] for op in opt.walk()]
    if np.array_equal(out, x):  # composed to the identity: no transpose at all
        assert perms == [] and opt.block.outputs[0] is opt.block.args[0]
    else:
        assert len(perms) == 1
        np.testing.assert_array_equal(np.transpose(x, perms[0]), out)
    np.testing.assert_array_equal(run(opt, x).numpy(), out)
    _same(prog, opt, [x])


def test_transpose_compose_changes_shapes():
    x = _rand(2, 3, 4)
    prog = trace(lambda v: fw.transpose(fw.transpose(v, [1, 0, 2]), [0, 2, 1]),
                 [T([2, 3, 4], "float64")])
    opt, _ = _optimized(prog, ["algebraic_simplify", "dce"])
    (op,) = opt.block.ops
    assert op.name == "transpose" and tuple(op.attrs["perm"]) == (1, 2, 0)
    assert op.results[0].type == T([3, 4, 2], "float64")
    _same(prog, opt, [x])


@pytest.mark.parametrize("perm", [(0, 1, 2), (-3, -2, -1)])
def test_transpose_identity(perm):
    prog = trace(lambda v: call("transpose", v, perm=perm).exp(), [T([2, 3, 4], "float64")])
    opt, changed = _optimized(prog, ["algebraic_simplify", "dce"])
    assert changed
    assert _ops(opt) == {"exp": 1}
    _same(prog, opt, [_rand(2, 3, 4)])


def test_transpose_of_a_2d_value_is_not_the_identity():
    prog = trace(lambda v: fw.transpose(v, [1, 0]).exp(), [T([3, 3], "float64")])
    opt, changed = _optimized(prog, ["algebraic_simplify", "dce"])
    assert not changed and _ops(opt) == {"transpose": 1, "exp": 1}


_SPECIAL = np.array([-0.0, 0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], F32)


def _scalar(v, dtype="float32"):
    return call("full", shape=[], fill_value=v, dtype=dtype)


# (expression, whether algebraic_simplify may drop the op); each kept one is not an
# identity on some input of _SPECIAL (signed zeros, infinities)
ARITH = [
    ("x * 1", lambda x: x * _scalar(1.0), True),
    ("1 * x", lambda x: _scalar(1.0) * x, True),
    ("x / 1", lambda x: x / _scalar(1.0), True),
    ("1 / x", lambda x: _scalar(1.0) / x, False),
    ("x + -0", lambda x: x + _scalar(-0.0), True),
    ("-0 + x", lambda x: _scalar(-0.0) + x, True),
    ("x + 0", lambda x: x + _scalar(0.0), False),
    ("0 + x", lambda x: _scalar(0.0) + x, False),
    ("x - 0", lambda x: x - _scalar(0.0), True),
    ("x - -0", lambda x: x - _scalar(-0.0), False),
    ("0 - x", lambda x: _scalar(0.0) - x, False),
    ("-0 - x", lambda x: _scalar(-0.0) - x, False),
    ("x * 2", lambda x: x * _scalar(2.0), False),
    ("x * -1", lambda x: x * _scalar(-1.0), False),
    ("x / 2", lambda x: x / _scalar(2.0), False),
    ("x * 0", lambda x: x * _scalar(0.0), False),
    ("x + 1", lambda x: x + _scalar(1.0), False),
]


@pytest.mark.parametrize("name,f,drops", ARITH, ids=[a[0] for a in ARITH])
def test_arithmetic_identities(name, f, drops):
    prog = trace(f, [T([7], "float32")])
    opt, changed = _optimized(prog, ["algebraic_simplify", "dce"])
    assert (opt.block.outputs[0] is opt.block.args[0]) is drops is changed, str(opt)
    _same(prog, opt, [_SPECIAL])


def test_identities_with_a_constant_tensor_and_broadcasting():
    ones3 = _param(np.ones(3, F32), "ones3", trainable=False)
    ones23 = _param(np.ones((2, 3), F32), "ones23", trainable=False)
    zeros3 = _param(np.full(3, -0.0, F32), "mz3", trainable=False)
    mixed = _param(np.array([1.0, 1.0, 2.0], F32), "mixed", trainable=False)
    w = _param(np.ones(3, F32), "w")  # a parameter: may change between runs

    def f(x, y):
        return (x * ones3,  # [2,3] * [3]: x's type: dropped
                y * ones23,  # [3] * [2,3] grows y: kept
                x + zeros3,  # -0.0 everywhere: dropped
                x * mixed,  # not uniform: kept
                x * w)  # a parameter: kept

    prog = trace(f, [T([2, 3], "float32"), T([3], "float32")])
    opt, _ = _optimized(prog, ["algebraic_simplify", "dce"])
    x, y = opt.block.args[:2]
    outs = opt.block.outputs
    assert outs[0] is x and outs[2] is x
    assert [o.owner.name for o in (outs[1], outs[3], outs[4])] == ["multiply"] * 3
    _same(prog, opt, [np.tile(_SPECIAL[:3], (2, 1)), _SPECIAL[3:6]])


def test_identities_on_integers_and_complex():
    def f(i, z):
        return (i + _scalar(0, "int32"), i - _scalar(0, "int32"), i * _scalar(1, "int32"),
                i / _scalar(1, "int32"),
                z * _scalar(1.0, "complex64"), z + _scalar(complex(-0.0, -0.0), "complex64"),
                z + _scalar(0j, "complex64"), z - _scalar(0j, "complex64"))

    prog = trace(f, [T([3], "int32"), T([3], "complex64")])
    opt, _ = _optimized(prog, ["algebraic_simplify", "dce"])
    i, z = opt.block.args
    outs = opt.block.outputs
    assert outs[0] is i and outs[1] is i and outs[2] is i
    assert outs[3] is not i  # integer division gives floats: not an identity
    assert outs[4] is not z  # (a+bi)(1+0i) makes inf*0 = nan
    assert outs[5] is z and outs[6] is not z and outs[7] is z
    zs = np.array([complex(-0.0, -0.0), complex(np.inf, 1.0), 1 - 2j], np.complex64)
    _same(prog, opt, [np.array([-3, 0, 7], np.int32), zs])


def test_complex_products_and_quotients_are_left_alone():
    prog = trace(lambda z: (z * _scalar(1.0, "complex64"), z / _scalar(1.0, "complex64")),
                 [T([3], "complex64")])
    opt, changed = _optimized(prog, ["algebraic_simplify"])
    assert not changed and str(opt) == str(prog)  # (a+bi)(1+0i) makes inf*0 = nan


def test_double_negation():
    prog = trace(lambda x: (x.neg().neg(), x.neg().neg().neg()), [T([7], "float32")])
    opt, changed = _optimized(prog, ["algebraic_simplify", "dce"])
    assert changed
    assert _ops(opt) == {"neg": 1}
    assert opt.block.outputs[0] is opt.block.args[0]
    _same(prog, opt, [_SPECIAL])


def test_reshape_rewrites():
    def f(x):
        a = fw.reshape(x, [2, 6])  # its own type: dropped
        b = fw.reshape(fw.reshape(x, [3, 4]), [4, 3])  # one reshape of x
        c = fw.reshape(fw.reshape(x, [3, 4]), [0, 2, -1])  # 0 copies a dim of [3, 4]: kept
        return a.exp(), b, c

    prog = trace(f, [T([2, 6], "float64")])
    opt, changed = _optimized(prog, ["algebraic_simplify", "dce"])
    assert changed
    x = opt.block.args[0]
    outs = opt.block.outputs
    assert outs[0].owner.operands[0] is x
    assert outs[1].owner.name == "reshape" and outs[1].owner.operands[0] is x
    assert outs[2].type == T([3, 2, 2], "float64")
    assert outs[2].owner.operands[0].owner.name == "reshape"
    _same(prog, opt, [_rand(2, 6)])


def test_reshape_of_a_dynamic_value_is_kept():
    prog = trace(lambda x: fw.reshape(x, [-1, 3]), [T([-1, 3], "float64")])
    opt, changed = _optimized(prog, ["algebraic_simplify"])
    assert not changed and _ops(opt) == {"reshape": 1}


def test_cast_to_the_same_dtype():
    prog = trace(lambda x: (fw.cast(x, "float32"), fw.cast(x, "float64")), [T([3], "float32")])
    opt, changed = _optimized(prog, ["algebraic_simplify", "dce"])
    assert changed
    assert opt.block.outputs[0] is opt.block.args[0] and _ops(opt) == {"cast": 1}
    _same(prog, opt, [_SPECIAL[:3]])


# ================================================================ cse / dce / constant_folding
def test_cse_merges_equal_ops_only():
    def f(x):
        a, b = x.exp(), x.exp()  # equal
        c = fw.transpose(x, [1, 0])
        d = fw.transpose(x, [0, 1])  # other attribute
        e = fw.sum(x, axis=0)
        g = fw.sum(x, axis=1)
        return a + b, c, d, e, g

    prog = trace(f, [T([3, 3], "float64")])
    opt, changed = _optimized(prog, ["cse", "dce"])
    assert changed and _ops(opt)["exp"] == 1 and _ops(opt)["transpose"] == 2
    assert _ops(opt)["sum"] == 2
    _same(prog, opt, [_rand(3, 3)])


def test_cse_keeps_random_ops():
    prog = trace(lambda x: (call("uniform", shape=[3], dtype="float32", min=-1.0, max=1.0,
                                 seed=0) + x,
                            call("uniform", shape=[3], dtype="float32", min=-1.0, max=1.0,
                                 seed=0) + x), [T([3], "float32")])
    opt, _ = _optimized(prog, ["cse"])
    assert _ops(opt)["uniform"] == 2


def test_cse_renames_state_updates_and_outputs():
    w = _param(np.array([1.0, 2.0]), "w")
    p = Program()
    with building(p) as b:
        x = b.add_input(T([2], "float64"), "x")
        vw = b.capture(w)
        first = call("multiply", vw, x)
        second = call("multiply", vw, x)
        b.record_update(vw, second)
        b.set_outputs([call("exp", second), second])
    opt, _ = _optimized(p, ["cse", "dce"])
    assert _ops(opt) == {"multiply": 1, "exp": 1}
    m = opt.block.ops[0].results[0]
    assert opt.updates.outputs[0] is m and opt.block.outputs[1] is m and first is not m
    out = run(opt, np.array([3.0, 4.0]))
    np.testing.assert_array_equal(out[1].numpy(), [3.0, 8.0])
    np.testing.assert_array_equal(w.numpy(), [3.0, 8.0])


def test_dce_keeps_what_is_observable():
    c_unused = _param(np.ones(2), "unused", trainable=False)
    c_updated = _param(np.ones(2), "counter", trainable=False)
    p = Program()
    with building(p) as b:
        x = b.add_input(T([2], "float64"), "x")
        b.capture(c_unused)
        vc = b.capture(c_updated)
        x.exp()  # dead
        b.record_update(vc, call("add", vc, x))  # only the update reads it
        b.set_outputs([call("tanh", x)])
    opt, changed = _optimized(p, ["dce"])
    assert changed and _ops(opt) == {"add": 1, "tanh": 1}
    assert [a.label for a in opt.params()] == ["counter"]
    run(opt, np.ones(2))
    np.testing.assert_array_equal(c_updated.numpy(), [2.0, 2.0])


def test_constant_folding_folds_consts_but_not_params_or_written_consts():
    k = _param(np.array([1.0, 2.0, 3.0]), "k", trainable=False)
    w = _param(np.array([1.0, 2.0, 3.0]), "w")
    acc = _param(np.array([0.5, 0.5, 0.5]), "acc", trainable=False)
    p = Program()
    with building(p) as b:
        x = b.add_input(T([3], "float64"), "x")
        vk, vw, va = b.capture(k), b.capture(w), b.capture(acc)
        folded = call("exp", call("multiply", vk, _scalar(2.0, "float64")))
        uniform = call("add", _scalar(1.0, "float64"), _scalar(2.0, "float64"))
        b.record_update(va, call("multiply", va, _scalar(2.0, "float64")))
        b.set_outputs([call("add", folded, x), call("multiply", vw, uniform),
                       call("tanh", va)])
    opt, changed = _optimized(p, ["constant_folding", "dce"])
    assert changed
    names = _ops(opt)
    assert "exp" not in names and names["tanh"] == 1 and names["multiply"] == 2
    fulls = [op for op in opt.walk() if op.name == "full" and op.attrs["fill_value"] == 3.0]
    assert len(fulls) == 1  # 1 + 2 with equal bits everywhere: a `full`, not a const
    x = np.array([0.1, -0.2, 0.3])
    before = [o.numpy() for o in run(p, x)]
    acc._data[...] = 0.5  # the run above updated it
    after = [o.numpy() for o in run(opt, x)]
    for a, b_ in zip(before, after):
        np.testing.assert_allclose(a, b_, rtol=1e-12)
    np.testing.assert_array_equal(acc.numpy(), [1.0, 1.0, 1.0])


def test_constant_folding_variadic_multi_result_and_shared_folds():
    a = _param(np.array([1.0, 2.0]), "a", trainable=False)
    c = _param(np.array([3.0, -4.0]), "c", trainable=False)

    def f(x, y):
        cat = call("concat", [a, c, a], axis=0)  # variadic: [1, 2, 3, -4, 1, 2]
        lo, hi = call("split", cat, num_or_sections=2, axis=0)  # two results
        same1, same2 = call("exp", a), call("exp", a)  # equal folds share one const
        return x + lo, x * hi, same1 + y, same2 - y

    prog = trace(f, [T([3], "float64"), T([2], "float64")])
    opt, changed = _optimized(prog, ["constant_folding", "dce"])
    assert changed
    names = _ops(opt)
    assert "concat" not in names and "split" not in names and "exp" not in names
    outs = opt.block.outputs
    assert outs[2].owner.operands[0] is outs[3].owner.operands[0]  # one shared const
    np.testing.assert_array_equal(opt.captured[outs[0].owner.operands[1].label].numpy(),
                                  [1.0, 2.0, 3.0])
    _same(prog, opt, [np.array([0.5, -1.0, 2.0]), np.array([0.25, 4.0])])


# ================================================================ fuse_matmul_bias_act
ACTS = ("relu", "sigmoid", "tanh", "silu", "gelu")
_ACT = {a: a for a in ACTS} | {"gelu": "gelu_erf"}  # the fused ops' names


def _dense(rng, k, n, name):
    return _param(rng.standard_normal((k, n)).astype(F32), name + ".w"), \
        _param(rng.standard_normal(n).astype(F32), name + ".b")


@pytest.mark.parametrize("a1,a2", [(a, b) for a in ACTS for b in ACTS if a != b])
def test_stacked_activations_fuse_only_the_first(a1, a2):
    rng = np.random.default_rng(3)
    w, b = _dense(rng, 4, 3, "fc")
    prog = trace(lambda x: call(a2, call(a1, fw.matmul(x, w) + b)), [T([5, 4], "float32")])
    opt, changed = _optimized(prog, ["fuse_matmul_bias_act"])
    assert changed
    (fused,) = [op for op in opt.walk() if op.name == "fused_matmul"]
    assert fused.attrs["activation"] == _ACT[a1] and fused.operands[2] is opt.block.args[2]
    assert [op.name for op in opt.block.ops] == ["fused_matmul", a2]
    _same(prog, opt, [rng.standard_normal((5, 4)).astype(F32)])


def test_stacked_activations_on_a_conv_fuse_only_the_first():
    rng = np.random.default_rng(4)
    w = _param(rng.standard_normal((3, 2, 3, 3)).astype(F32), "c.w")
    prog = trace(lambda x: call("tanh", call("relu", call("conv", x, w, None))),
                 [T([1, 2, 5, 5], "float32")])
    opt, _ = _optimized(prog, ["fuse_conv_bias_act"])
    assert [op.name for op in opt.block.ops] == ["fused_conv", "tanh"]
    assert opt.block.ops[0].attrs["activation"] == "relu"
    _same(prog, opt, [rng.standard_normal((1, 2, 5, 5)).astype(F32)])


def test_epilogue_stages_in_order():
    rng = np.random.default_rng(5)
    w, b = _dense(rng, 4, 3, "fc")
    r = _param(rng.standard_normal((5, 3)).astype(F32), "r")

    def f(x):
        return call("sigmoid", fw.matmul(x, w) * _scalar(0.5) + b) + r

    prog = trace(f, [T([5, 4], "float32")])
    opt, _ = _optimized(prog, ["fuse_matmul_bias_act", "dce"])
    (op,) = opt.block.ops
    assert op.name == "fused_matmul" and op.attrs["alpha"] == 0.5
    assert op.attrs["activation"] == "sigmoid"
    assert op.operands[2] is opt.block.args[2] and op.operands[3] is opt.block.args[3]
    _same(prog, opt, [rng.standard_normal((5, 4)).astype(F32)])


@pytest.mark.parametrize("order", ["bias-then-alpha", "act-then-alpha", "act-then-bias",
                                   "residual-then-act", "two-residuals", "alpha-twice"])
def test_epilogue_stops_where_the_order_breaks(order):
    rng = np.random.default_rng(6)
    w, b = _dense(rng, 4, 3, "fc")
    r = _param(rng.standard_normal((5, 3)).astype(F32), "r")
    chains = {
        "bias-then-alpha": (lambda p: (p + b) * _scalar(0.5), ["fused_matmul", "full", "multiply"],
                            dict(alpha=1.0, activation="none")),
        "act-then-alpha": (lambda p: call("relu", p) * _scalar(0.5), ["fused_matmul", "full",
                                                             "multiply"],
                           dict(alpha=1.0, activation="relu")),
        "act-then-bias": (lambda p: call("relu", p) + b, ["fused_matmul", "add"],
                          dict(alpha=1.0, activation="relu")),
        "residual-then-act": (lambda p: call("tanh", p + r), ["fused_matmul", "tanh"],
                              dict(alpha=1.0, activation="none")),
        "two-residuals": (lambda p: p + r + r, ["fused_matmul", "add"],
                          dict(alpha=1.0, activation="none")),
        "alpha-twice": (lambda p: p * _scalar(0.5) * _scalar(0.5),
                        ["fused_matmul", "full", "multiply"],
                        dict(alpha=0.5, activation="none")),
    }
    chain, names, attrs = chains[order]
    prog = trace(lambda x: chain(fw.matmul(x, w)), [T([5, 4], "float32")])
    opt, _ = _optimized(prog, ["fuse_matmul_bias_act", "dce"])
    assert sorted(op.name for op in opt.block.ops) == sorted(names), str(opt)
    fused = next(op for op in opt.block.ops if op.name == "fused_matmul")
    for k, v in attrs.items():
        assert fused.attrs[k] == v
    _same(prog, opt, [rng.standard_normal((5, 4)).astype(F32)])


def test_epilogue_only_absorbs_row_biases_and_scalar_alphas():
    rng = np.random.default_rng(7)
    w = _param(rng.standard_normal((4, 3)).astype(F32), "w")
    col = _param(rng.standard_normal((5, 1)).astype(F32), "col")  # broadcasts along rows
    vec = _param(rng.standard_normal(3).astype(F32), "vec")  # per-column factors

    def f(x):
        return fw.matmul(x, w) + col, fw.matmul(x, w) * vec, fw.matmul(x, w) * _scalar(2.0)

    prog = trace(f, [T([5, 4], "float32")])
    opt, _ = _optimized(prog, ["fuse_matmul_bias_act", "dce"])
    assert _ops(opt)["fused_matmul"] == 1 and _ops(opt)["matmul"] == 2
    _same(prog, opt, [rng.standard_normal((5, 4)).astype(F32)])


def test_epilogue_bias_forms_and_vector_products():
    rng = np.random.default_rng(12)
    w = _param(rng.standard_normal((4, 3)).astype(F32), "w")
    b2d = _param(rng.standard_normal((1, 3)).astype(F32), "b2d")  # [1, N]: a row bias
    vec = _param(rng.standard_normal(4).astype(F32), "vec")  # a 1-D right-hand side

    def f(x):
        return call("relu", fw.matmul(x, w) + b2d), call("relu", fw.matmul(x, vec))

    prog = trace(f, [T([5, 4], "float32")])
    opt, _ = _optimized(prog, ["fuse_matmul_bias_act", "dce"])
    (fused,) = [op for op in opt.walk() if op.name == "fused_matmul"]
    assert fused.operands[2] is opt.block.args[2] and fused.attrs["activation"] == "relu"
    assert _ops(opt) == {"fused_matmul": 1, "matmul": 1, "relu": 1}  # x @ vec stays
    _same(prog, opt, [rng.standard_normal((5, 4)).astype(F32)])


def test_epilogue_stops_at_a_shared_value():
    rng = np.random.default_rng(8)
    w, b = _dense(rng, 4, 3, "fc")

    def f(x):
        h = call("relu", fw.matmul(x, w) + b)
        return call("tanh", h), h * _scalar(2.0)  # h read twice: the chain ends at relu

    prog = trace(f, [T([5, 4], "float32")])
    opt, _ = _optimized(prog, ["fuse_matmul_bias_act", "dce"])
    assert opt.block.ops[0].name == "fused_matmul"
    assert opt.block.ops[0].attrs["activation"] == "relu"
    assert _ops(opt)["tanh"] == 1
    _same(prog, opt, [rng.standard_normal((5, 4)).astype(F32)])


def test_linear_bias_and_transposed_operands():
    rng = np.random.default_rng(9)
    w, b = _dense(rng, 4, 3, "fc")
    wt = _param(rng.standard_normal((3, 4)).astype(F32), "wt")
    b2 = _param(rng.standard_normal(3).astype(F32), "b2")

    def f(x, xt):
        return (call("relu", call("linear", x, w, b) + b2),  # a second bias: stays an add
                call("silu", fw.matmul(xt, wt, transpose_x=True, transpose_y=True) + b2))

    prog = trace(f, [T([5, 4], "float32"), T([4, 5], "float32")])
    opt, _ = _optimized(prog, ["fuse_matmul_bias_act", "dce"])
    fused = [op for op in opt.walk() if op.name == "fused_matmul"]
    assert len(fused) == 2 and fused[0].attrs["activation"] == "none"
    assert fused[0].operands[2] is opt.block.args[3]  # the linear's own bias
    assert fused[1].attrs["transpose_x"] and fused[1].attrs["transpose_y"]
    assert fused[1].attrs["activation"] == "silu"
    _same(prog, opt, [rng.standard_normal((5, 4)).astype(F32),
                      rng.standard_normal((4, 5)).astype(F32)])


# ================================================================ fuse_elementwise
def test_fuse_elementwise_keeps_a_shared_value_outside_the_group():
    def f(x, y):
        s = x * y  # read twice: an input of the fused op, computed once
        return (s.exp() - y).tanh(), s

    prog = trace(f, [T([3], "float64"), T([3], "float64")])
    opt, changed = _optimized(prog, ["fuse_elementwise"])
    assert changed and _ops(opt) == {"multiply": 1, "fused_elementwise": 1}
    mul, fused = opt.block.ops
    assert any(v is mul.results[0] for v in fused.operands)  # read, not recomputed
    assert len(fused.attrs["program"]) == 3  # exp, subtract, tanh
    _same(prog, opt, [_rand(3), _rand(3, seed=1)])


def test_fuse_elementwise_respects_operand_order():
    def f(x, y):
        return (x - y.exp()) / (y - x).sigmoid()

    prog = trace(f, [T([4], "float64"), T([4], "float64")])
    opt, _ = _optimized(prog, ["fuse_elementwise"])
    assert _ops(opt) == {"fused_elementwise": 1}
    _same(prog, opt, [_rand(4), _rand(4, seed=1)])


def test_fuse_elementwise_constants_and_pow():
    def f(x):
        return call("pow", x.abs(), _scalar(1.5, "float64")) * _scalar(-0.0, "float64") + x

    prog = trace(f, [T([4], "float64")])
    opt, _ = _optimized(prog, ["fuse_elementwise", "dce"])
    assert _ops(opt) == {"fused_elementwise": 1}
    _same(prog, opt, [np.array([-0.0, 2.0, -3.0, np.inf])])


# ================================================================ fold_batch_norm
def test_fold_batch_norm_into_a_linear():
    rng = np.random.default_rng(10)
    w, b = _dense(rng, 4, 3, "fc")
    stats = [_param(np.abs(rng.standard_normal(3)).astype(F32) + 0.5, f"bn.{n}",
                    trainable=n in ("gamma", "beta")) for n in ("mean", "var", "gamma", "beta")]
    stats[0]._data[...] = rng.standard_normal(3)
    prog = trace(lambda x: call("batch_norm", call("linear", x, w, b), *stats,
                                epsilon=1e-3)[0], [T([5, 3 + 1], "float32")])
    opt, changed = _optimized(prog, ["fold_batch_norm", "dce"])
    assert changed and _ops(opt) == {"linear": 1}
    _same(prog, opt, [rng.standard_normal((5, 4)).astype(F32)], exact=False)


# ================================================================ fuse_conv_bias_act
@pytest.mark.parametrize("layout,bias_shape,absorbed", [
    ("NCHW", (1, 3, 1, 1), True), ("NCHW", (3, 1, 1), True), ("NCHW", (1, 1, 1, 4), False),
    ("NCHW", (1, 1, 5, 1), False), ("NHWC", (3,), True), ("NHWC", (1, 1, 1, 3), True),
    ("NHWC", (1, 1, 4, 1), False)])
def test_conv_bias_on_the_channel_axis_only(layout, bias_shape, absorbed):
    # C=3, H=5, W=4 (after the conv): a bias on any other axis is not a conv bias
    rng = np.random.default_rng(11)
    cl = layout == "NHWC"
    w = _param(rng.standard_normal((3, 2, 2, 2)).astype(F32), "c.w")
    b = _param(rng.standard_normal(bias_shape).astype(F32), "c.b")
    shape = (2, 6, 5, 2) if cl else (2, 2, 6, 5)
    prog = trace(lambda x: call("silu", call("conv", x, w, None, channel_last=cl) + b),
                 [T(list(shape), "float32")])
    opt, changed = _optimized(prog, ["fuse_conv_bias_act", "dce"])
    assert changed is absorbed
    if absorbed:
        (fused,) = [op for op in opt.walk() if op.name == "fused_conv"]
        assert fused.operands[2].type.shape == (3,) and fused.attrs["activation"] == "silu"
        assert fused.attrs["channel_last"] is cl
        assert _ops(opt)["add"] == 0 and _ops(opt)["silu"] == 0
    _same(prog, opt, [rng.standard_normal(shape).astype(F32)])


def test_fold_batch_norm_needs_constant_statistics():
    rng = np.random.default_rng(13)
    w, b = _dense(rng, 4, 3, "fc")
    var = _param(np.ones(3, F32), "bn.var", trainable=False)
    gamma = _param(np.ones(3, F32), "bn.gamma")

    def f(x, mean, g):
        a = call("batch_norm", call("linear", x, w, b), mean, var, gamma, None)[0]  # mean: input
        c = call("batch_norm", call("linear", x, w, b), var, var, g, None)[0]  # gamma: input
        return a, c

    prog = trace(f, [T([5, 4], "float32"), T([3], "float32"), T([3], "float32")])
    opt, changed = _optimized(prog, ["fold_batch_norm"])
    assert not changed and str(opt) == str(prog)


# ================================================================ the Rewriter
def test_rewriter_tracks_uses_inside_inserted_blocks():
    from fw.core.ir.control import cond
    from fw.core.ir.core import Block
    from fw.core.ir.passes.rewrite import Rewriter

    prog = trace(lambda x, y: call("neg", x), [T([2], "float64"), T([2], "float64")])
    x, y = prog.block.args
    rw = Rewriter(prog)
    assert rw.num_uses(x) == 1 and rw.num_uses(y) == 0
    with building(prog) as b:  # ops built by hand, in a scratch block
        scratch = Block(prog)
        b.push(scratch)
        r = cond(call("less_than", call("sum", x), 0.0),
                 lambda: call("multiply", y, y), lambda: call("tanh", x))
        b.pop()
    for op in list(scratch.ops):
        rw.append(prog.block, op)
    # the uses inside the cond's blocks are known: y twice, x by sum and tanh
    assert rw.num_uses(y) == 2 and rw.num_uses(x) == 3
    then_out = scratch.ops[-1].blocks[0].outputs[0]
    assert rw.users(then_out) == [(scratch.ops[-1].blocks[0], 0)]
    rw.replace_all_uses(prog.block.outputs[0], r)
    rw.erase(prog.block.ops[0])  # the neg
    assert rw.num_uses(x) == 2
    verify(prog)
    np.testing.assert_array_equal(run(prog, np.array([-1.0, 0.5]),
                                      np.array([3.0, 2.0])).numpy(), [9.0, 4.0])


# ================================================================ what each pass leaves alone
def test_constant_folding_with_absent_operands_and_random_ops():
    k = _param(np.array([[1.0, 2.0], [3.0, 4.0]]), "k", trainable=False)
    m = _param(np.array([[0.5, -1.0], [2.0, 0.0]]), "m", trainable=False)

    def f(x):
        lin = call("linear", k, m, None)  # an absent optional operand: still constant
        drop = call("dropout", k, p=0.5)[0]  # random: never folded
        return lin + x, drop

    prog = trace(f, [T([2, 2], "float64")])
    opt, changed = _optimized(prog, ["constant_folding", "dce"])
    assert changed and _ops(opt)["linear"] == 0 and _ops(opt)["dropout"] == 1
    x = _rand(2, 2)
    np.testing.assert_array_equal(run(opt, x)[0].numpy(), run(prog, x)[0].numpy())


def test_fold_batch_norm_leaves_what_it_cannot_fold():
    rng = np.random.default_rng(14)
    w, b = _dense(rng, 4, 3, "fc")
    wmm = _param(rng.standard_normal((4, 3)).astype(F32), "mm.w")
    wmm3 = _param(rng.standard_normal((2, 4, 3)).astype(F32), "mm.w3")
    stats = [_param(a, f"bn.{i}", trainable=False) for i, a in enumerate(
        (rng.standard_normal(3).astype(F32), np.ones(3, F32) * 2, np.ones(3, F32),
         np.zeros(3, F32)))]

    def bn(v, **kw):
        return call("batch_norm", v, *stats, **kw)[0]

    def f(x, xt, bias_in, w_in, y):
        shared = call("linear", x, w, b)
        return (bn(shared), shared,  # the product has another reader
                bn(y + bias_in),  # an add without a product
                bn(fw.matmul(xt, wmm, transpose_x=True)),  # transposed x
                bn(fw.matmul(x, wmm3), channel_last=True),  # a batched (3-D) weight
                bn(call("linear", x, w, bias_in)),  # the bias is not a constant
                bn(call("linear", x, w_in, None)),  # the weight is an input
                bn(fw.matmul(x, wmm) + bias_in))  # the added bias is an input

    prog = trace(f, [T([5, 4], "float32"), T([4, 5], "float32"), T([3], "float32"),
                     T([4, 3], "float32"), T([5, 3], "float32")])
    opt, changed = _optimized(prog, ["fold_batch_norm"])
    assert not changed and str(opt) == str(prog)


def test_fold_batch_norm_with_a_uniform_full_weight():
    stats = [_param(a, f"bn.{i}", trainable=False) for i, a in enumerate(
        (np.array([0.5, -1.0], F64), np.array([2.0, 0.5]), np.array([1.5, -1.0]),
         np.array([0.25, 0.0])))]

    def f(x):
        w = call("full", shape=[3, 2], fill_value=0.5, dtype="float64")
        return call("batch_norm", fw.matmul(x, w), *stats)[0]

    prog = trace(f, [T([4, 3], "float64")])
    opt, changed = _optimized(prog, ["fold_batch_norm", "dce"])
    assert changed and _ops(opt) == {"linear": 1}
    _same(prog, opt, [_rand(4, 3)], exact=False)


def test_fold_batch_norm_leaves_a_param_the_program_updates():
    w = _param(np.ones((3, 2)), "w")
    stats = [_param(a, f"bn.{i}", trainable=False) for i, a in enumerate(
        (np.zeros(2), np.ones(2), np.ones(2), np.zeros(2)))]
    p = Program()
    with building(p) as bld:
        x = bld.add_input(T([4, 3], "float64"), "x")
        vw = bld.capture(w)
        out = call("batch_norm", call("matmul", x, vw), *stats)[0]
        bld.record_update(vw, call("multiply", vw, 2.0))
        bld.set_outputs([out])
    opt, changed = _optimized(p, ["fold_batch_norm"])
    assert not changed


def test_fuse_elementwise_needs_a_constant_exponent():
    def f(x, e):
        return call("pow", x.exp(), e).tanh(), call("pow", x.exp(), _scalar(2.0)).tanh()

    prog = trace(f, [T([3], "float32"), T([3], "float32")])
    opt, _ = _optimized(prog, ["fuse_elementwise"])
    assert _ops(opt)["pow"] == 1 and _ops(opt)["fused_elementwise"] == 1
    _same(prog, opt, [_SPECIAL[2:5] / 4, np.array([2.0, 0.5, 3.0], F32)])


def test_fuse_elementwise_skips_ops_it_cannot_express():
    def f(x, i):
        a = call("scale", x.exp(), scale=2.0, bias=1.0)  # not an instruction
        b = call("exp", fw.cast(i, "float32"))  # an int64 operand: not fusable
        return a.tanh(), (b * 2.0).neg()

    prog = trace(f, [T([4], "float32"), T([4], "int64")])
    opt, changed = _optimized(prog, ["fuse_elementwise"])
    names = _ops(opt)
    assert names["scale"] == 1 and names["cast"] == 1
    assert changed and names["fused_elementwise"] == 1  # exp, multiply, neg
    _same(prog, opt, [_SPECIAL[:4], np.array([1, -2, 3, 0])])


def test_rewriter_labels_and_argument_removal():
    from fw.core.ir.passes.rewrite import Rewriter

    k = _param(np.ones(2), "_folded_0", trainable=False)
    prog = trace(lambda x: x + k, [T([2], "float64")])
    rw = Rewriter(prog)
    a = rw.add_const(np.zeros(2))  # "_folded_0" is taken: the next free suffix
    b_ = rw.add_const(np.ones(2), "c")
    c_ = rw.add_const(np.ones(2), "c")  # taken: "c_0"
    assert (a.label, b_.label, c_.label) == ("_folded_1", "c", "c_0")
    cat = rw.create("concat", [prog.block.args[0], a, b_], {"axis": 0},
                    before=prog.block.ops[0])  # variadic: its type inferred
    assert cat.results[0].type == T([6], "float64")
    rw.erase(cat)
    rw.remove_args([a, c_])
    assert [v.label for v in prog.params()] == ["_folded_0", "c"]
    assert [v.index for v in prog.block.args] == [0, 1, 2]
    assert sorted(prog.captured) == ["_folded_0", "c"]
    assert rw.add_const(np.ones(1), "c_0").label == "c_0"  # free again
    verify(prog)


def test_rewriter_infers_ops_with_inputs_after_the_variadic_one():
    """multiplex(inputs*, index) and index_put(x, indices*, value): the operands after
    the variadic list are their own inputs, not more items of it."""
    from fw.core.ir.passes.rewrite import Rewriter

    def f(a, b, idx):
        return a + b

    prog = trace(f, [T([3, 2], "float64"), T([3, 2], "float64"), T([3, 1], "int32")])
    a, b_, idx = prog.block.args
    rw = Rewriter(prog)
    mux = rw.create("multiplex", [a, b_, idx], block=prog.block)
    assert mux.results[0].type == T([3, 2], "float64")
    pos = rw.create("full", [], {"shape": [2], "fill_value": 1, "dtype": "int64"},
                    block=prog.block)
    val = rw.create("full", [], {"shape": [2, 2], "fill_value": 9.0, "dtype": "float64"},
                    block=prog.block)
    put = rw.create("index_put", [a, pos.results[0], val.results[0]], block=prog.block)
    assert put.results[0].type == T([3, 2], "float64")
    prog.block.outputs = [mux.results[0], put.results[0]]
    verify(prog)
    x = np.arange(6.0).reshape(3, 2)
    y = -x
    sel = np.array([[1], [0], [1]], np.int32)
    got_mux, got_put = run(prog, x, y, sel)
    np.testing.assert_array_equal(got_mux.numpy(), np.where(sel == 1, y, x))
    want = x.copy()
    want[[1, 1]] = 9.0
    np.testing.assert_array_equal(got_put.numpy(), want)


@pytest.mark.parametrize("deferred", [False, True])
def test_rewriter_moves_erases_and_appends(deferred):
    from fw.core.ir.control import cond
    from fw.core.ir.passes.rewrite import Rewriter

    def f(x):
        a = x.exp()
        b = x.tanh()
        c = cond(call("less_than", call("sum", x), 0.0), lambda: x.neg(), lambda: x.abs())
        return a + b, c

    prog = trace(f, [T([2], "float64")])
    x = prog.block.args[0]
    rw = Rewriter(prog, deferred=deferred)
    exp, tanh = prog.block.ops[:2]
    if deferred:
        rw.insert_before(exp, tanh)  # moved: listed once, at its new place
    else:  # (immediate mode inserts a second listing: take the old one out first)
        prog.block.ops.remove(tanh)
        rw.insert_before(exp, tanh)
    assert rw.replace_all_uses(x, x) == 0
    cond_op = next(op for op in prog.block.ops if op.name == "cond")
    inner = [o for blk in cond_op.blocks for o in blk.ops]
    rw.replace_all_uses(cond_op.results[0], tanh.results[0])
    rw.erase(cond_op)
    assert all(o.parent is None for o in inner)  # dead for drivers walking a snapshot
    rw.erase(cond_op)  # erasing twice: nothing more to do
    tail = rw.create("sqrt", [tanh.results[0]], block=prog.block)
    rw.flush()
    names = [op.name for op in prog.block.ops]
    assert names[:2] == ["tanh", "exp"] and names[-1] == "sqrt" and "cond" not in names
    assert tail.parent is prog.block and rw.users(tanh.results[0])[-1] == (tail, 0)
    verify(prog)


def test_fold_batch_norm_channel_last_after_a_linear_on_a_sequence():
    rng = np.random.default_rng(15)
    w, b = _dense(rng, 4, 3, "fc")
    stats = [_param(a, f"bn.{i}", trainable=False) for i, a in enumerate(
        (rng.standard_normal(3).astype(F32), rng.uniform(0.5, 2, 3).astype(F32),
         rng.standard_normal(3).astype(F32), rng.standard_normal(3).astype(F32)))]
    prog = trace(lambda x: call("batch_norm", call("linear", x, w, b), *stats,
                                channel_last=True)[0], [T([2, 5, 4], "float32")])
    opt, changed = _optimized(prog, ["fold_batch_norm", "dce"])
    assert changed and _ops(opt) == {"linear": 1}
    _same(prog, opt, [rng.standard_normal((2, 5, 4)).astype(F32)], exact=False)


def test_patterns_see_every_op_although_others_were_erased_before_them():
    # each fusion erases ops the sweep has not reached yet; the sweep must go on past
    # them (12 chains: more than the driver's 10 rounds if each round did one)
    rng = np.random.default_rng(16)
    dense = [_dense(rng, 4, 4, f"fc{i}") for i in range(12)]

    def f(x):
        for w, b in dense:
            x = call("tanh", fw.matmul(x, w) + b)
        return x

    prog = trace(f, [T([2, 4], "float32")])
    opt, changed = _optimized(prog, ["fuse_matmul_bias_act"])
    assert changed and _ops(opt) == {"fused_matmul": 12}
    _same(prog, opt, [rng.standard_normal((2, 4)).astype(F32)])


def test_fuse_elementwise_pow_exponent_must_be_one_element_of_no_higher_rank():
    def f(x):
        grow = call("full", shape=[1, 1], fill_value=2.0, dtype="float32")  # grows x: [1, 3]
        vec = call("full", shape=[3], fill_value=2.0, dtype="float32")  # not one element
        return call("pow", x.exp(), grow).tanh(), call("pow", x.exp(), vec).tanh()

    prog = trace(f, [T([3], "float32")])
    opt, changed = _optimized(prog, ["fuse_elementwise"])
    assert not changed and _ops(opt)["pow"] == 2
    _same(prog, opt, [np.array([0.1, -0.5, 0.3], F32)])


def test_fold_batch_norm_through_a_bias_add_in_either_order_and_not_when_shared():
    rng = np.random.default_rng(17)
    w = _param(rng.standard_normal((4, 3)).astype(F32), "w")
    c = _param(rng.standard_normal(3).astype(F32), "c", trainable=False)
    stats = [_param(a, f"bn.{i}", trainable=False) for i, a in enumerate(
        (rng.standard_normal(3).astype(F32), rng.uniform(0.5, 2, 3).astype(F32),
         rng.standard_normal(3).astype(F32), rng.standard_normal(3).astype(F32)))]

    def bn(v):
        return call("batch_norm", v, *stats)[0]

    folds = trace(lambda x: bn(c + fw.matmul(x, w)), [T([5, 4], "float32")])
    opt, changed = _optimized(folds, ["fold_batch_norm", "dce"])
    assert changed and _ops(opt) == {"linear": 1}
    _same(folds, opt, [rng.standard_normal((5, 4)).astype(F32)], exact=False)

    def shared(x):
        prod = fw.matmul(x, w)
        return bn(prod + c), prod  # the product is also an output

    prog = trace(shared, [T([5, 4], "float32")])
    opt, changed = _optimized(prog, ["fold_batch_norm"])
    assert not changed and str(opt) == str(prog)
