"""fold_qdq's guards, one program per condition: the layers it must leave float (each
guard's negative case: no int8 op, and the program computes exactly what the QDQ
program computes), the cost threshold on both sides of `min_macs`, and the epilogue /
requantization stages it must stop at. The positive cases (a layer that folds) are
checked against the QDQ program within one quantization step, as in test_int8_pass."""

import numpy as np
import pytest

import fw
from fw.core.ir import TensorType, run, trace, verify
from fw.core.ir.passes import PassManager, get_pass
from fw.core.ops import call

pytest.importorskip("fw.core.ops.quant")

T = TensorType
F32 = np.float32
_QOPS = ("quantized_conv2d", "quantized_matmul", "quantized_max_pool")


def _buf(a, name):
    t = fw.to_tensor(np.asarray(a))
    t.name = name
    t.persistable = True
    return t


_RNG = np.random.default_rng(20)
ZERO = _buf(np.zeros(1, np.int32), "g.zero")
S_X = _buf(np.array([0.05], F32), "g.sx")
S_Y = _buf(np.array([0.04], F32), "g.sy")


def _wq(shape, axis, name, per_channel=True, zp=0, dtype=np.int8):
    """Symmetric int8 codes of a random weight, with per-channel (or per-tensor) scales."""
    q = _RNG.integers(-127, 128, size=shape).astype(dtype)
    n = shape[axis] if per_channel else 1
    s = (_RNG.uniform(0.5, 1.5, n) / (127 * np.sqrt(np.prod(shape) / shape[axis]))).astype(F32)
    z = np.full(n, zp, np.int32)
    return _buf(q, name), _buf(s, name + ".s"), _buf(z, name + ".z"), axis


def dq_w(w):
    q, s, z, axis = w
    return call("dequantize_linear", q, s, z, axis=axis)


def qdq(x, s=S_X, zero=ZERO, qmin=-128, qmax=127):
    return call("dequantize_linear", call("quantize_linear", x, s, zero, qmin=qmin, qmax=qmax),
                s, zero)


W_CONV = _wq((8, 4, 3, 3), 0, "g.wc")
W_LIN = _wq((12, 10), 1, "g.wl")
W_SQ = _wq((12, 12), 1, "g.wsq")


def _names(p):
    return [op.name for op in p.walk()]


def _fold(p, **kw):
    kw.setdefault("signed_inputs", True)
    kw.setdefault("min_macs", 0)
    kw.setdefault("min_channel_pairs", 0)  # small convs: the guards, not the cost rules
    q = p.clone()
    changed = get_pass("fold_qdq", **kw).run(q)
    PassManager(["dce"]).run(q)
    verify(q)
    return q, changed


def _outs(p, xs):
    out = run(p, *[fw.to_tensor(x) for x in xs])
    return [o.numpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


def _x(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(F32)


def _stays_float(p, xs, **kw):
    """The pass converts no product, and the program computes what it computed."""
    q, _ = _fold(p, **kw)
    names = _names(q)
    assert not any(n in _QOPS for n in names), q
    for a, b in zip(_outs(p, xs), _outs(q, xs)):
        np.testing.assert_array_equal(a, b)
    return q


def _close(p, q, xs, step=0.05):
    for a, b in zip(_outs(p, xs), _outs(q, xs)):
        assert a.shape == b.shape and a.dtype == b.dtype
        tol = step + 1e-5 * np.abs(a).max()
        assert np.abs(a.astype(np.float64) - b).max(initial=0) <= tol


# ------------------------------------------------------------- the cost threshold
# MACs per sample: conv out [N, 8, 6, 6] x C_in*kh*kw = 4*3*3; a dynamic batch counts 1
_CONV_MACS = 8 * 6 * 6 * 4 * 3 * 3
_LIN_MACS = 5 * 10 * 12  # x [N, 5, 12] @ W [12, 10]


@pytest.mark.parametrize("batch", [-1, 2])
@pytest.mark.parametrize("kind", ["conv", "linear", "matmul"])
def test_min_macs_is_the_smallest_product_converted(kind, batch):
    if kind == "conv":
        shape, macs = [batch, 4, 6, 6], _CONV_MACS

        def f(x):
            return call("conv", qdq(x), dq_w(W_CONV), None, padding=1)
    else:
        shape, macs = [batch, 5, 12], _LIN_MACS

        def f(x):
            if kind == "linear":
                return call("linear", qdq(x), dq_w(W_LIN), None)
            return call("matmul", qdq(x), dq_w(W_LIN))

    macs *= max(batch, 1)
    p = trace(f, [T(shape, "float32")], ["x"])
    xs = [_x(2, *shape[1:], seed=1)]
    q, changed = _fold(p, min_macs=macs)
    assert changed and sum(n in _QOPS for n in _names(q)) == 1, q
    _close(p, q, xs, step=0.5)  # a float output: the product of quantized operands
    _stays_float(p, xs, min_macs=macs + 1)


# ------------------------------------------------------------- products left float
def _lin_case(name):
    """(function, input types) of a linear/matmul/conv the pass must leave float."""
    x12 = T([3, 12], "float32")
    if name == "float activation":
        return (lambda x: call("linear", x, dq_w(W_LIN), None)), [x12]
    if name == "activation scale is an input":
        return (lambda x, s: call("linear", call("dequantize_linear",
                                                 call("quantize_linear", x, s, ZERO), s, ZERO),
                                  dq_w(W_LIN), None)), [x12, T([1], "float32")]
    if name == "activation zero point is an input":
        return (lambda x, z: call("linear", call("dequantize_linear",
                                                 call("quantize_linear", x, S_X, z), S_X, z),
                                  dq_w(W_LIN), None)), [x12, T([1], "int32")]
    if name == "per-channel activation":
        s = _buf(np.full(12, 0.05, F32), "g.sx12")
        z = _buf(np.zeros(12, np.int32), "g.z12")
        return (lambda x: call("linear", qdq(x, s, z), dq_w(W_LIN), None)), [x12]
    if name == "int32 activation codes":
        return (lambda i: call("linear", call("dequantize_linear", i, S_X, ZERO),
                               dq_w(W_LIN), None)), [T([3, 12], "int32")]
    if name == "float weight":
        w = _buf(_x(12, 10, seed=3), "g.wf")
        return (lambda x: call("linear", qdq(x), w, None)), [x12]
    if name == "weight codes are an input":
        _, s, z, _ = W_LIN
        return (lambda x, wq: call("linear", qdq(x), call("dequantize_linear", wq, s, z, axis=1),
                                   None)), [x12, T([12, 10], "int8")]
    if name == "weight scale is an input":
        wq, _, z, _ = W_LIN
        return (lambda x, s: call("linear", qdq(x), call("dequantize_linear", wq, s, z, axis=1),
                                  None)), [x12, T([10], "float32")]
    if name == "uint8 weight":
        w = _wq((12, 10), 1, "g.wu8", dtype=np.uint8)
        return (lambda x: call("linear", qdq(x), dq_w(w), None)), [x12]
    if name == "weight zero point":
        w = _wq((12, 10), 1, "g.wzp", zp=3)
        return (lambda x: call("linear", qdq(x), dq_w(w), None)), [x12]
    if name == "weight scales on the input axis":
        w = _wq((12, 12), 0, "g.wax0")  # per channel of axis 0: the product's K
        return (lambda x: call("linear", qdq(x), dq_w(w), None)), [x12]
    if name == "bias is an input":
        return (lambda x, b: call("linear", qdq(x), dq_w(W_LIN), b)), [x12, T([10], "float32")]
    if name == "matmul transpose_x":
        return (lambda x: call("matmul", qdq(x), dq_w(W_SQ), transpose_x=True)), [
            T([12, 12], "float32")]
    if name == "matmul transpose_y":
        return (lambda x: call("matmul", qdq(x), dq_w(W_SQ), transpose_y=True)), [x12]
    if name == "batched matmul weight":
        w = _wq((2, 12, 10), 2, "g.w3")
        return (lambda x: call("matmul", qdq(x), dq_w(w))), [T([2, 3, 12], "float32")]
    if name == "1-d conv":
        w = _wq((8, 4, 3), 0, "g.wc1")
        return (lambda x: call("conv", qdq(x), dq_w(w), None, padding=1)), [
            T([2, 4, 9], "float32")]
    raise AssertionError(name)


FLOAT_CASES = ["float activation", "activation scale is an input",
               "activation zero point is an input", "per-channel activation",
               "int32 activation codes", "float weight", "weight codes are an input",
               "weight scale is an input", "uint8 weight", "weight zero point",
               "weight scales on the input axis", "bias is an input", "matmul transpose_x",
               "matmul transpose_y", "batched matmul weight", "1-d conv"]


@pytest.mark.parametrize("name", FLOAT_CASES)
def test_products_the_pass_leaves_float(name):
    f, types = _lin_case(name)
    p = trace(f, types)
    xs = []
    for i, t in enumerate(types):
        if t.dtype.name == "int32" and t.shape == (1,):
            xs.append(np.zeros(1, np.int32))
        elif t.dtype.name in ("int32", "int8"):
            xs.append(np.random.default_rng(i).integers(-20, 20, t.shape).astype(t.dtype.np))
        elif t.shape in ((1,), (10,)) and i > 0:
            xs.append(np.full(t.shape, 0.05 if t.shape == (1,) else 0.01, F32))
        else:
            xs.append(_x(*t.shape, seed=i))
    _stays_float(p, xs)


def test_the_same_products_fold_when_their_operands_are_quantized():
    """The positive twin of the cases above: a linear of a quantized activation and a
    per-output-channel int8 weight folds, with a constant bias."""
    b = _buf(_x(10, seed=5, scale=0.1), "g.b10")
    p = trace(lambda x: call("linear", qdq(x), dq_w(W_LIN), b), [T([3, 12], "float32")])
    q, changed = _fold(p)
    assert changed and _names(q).count("quantized_matmul") == 1 and "linear" not in _names(q)
    _close(p, q, [_x(3, 12, seed=6)], step=0.5)


# ------------------------------------------------------------- signed inputs
@pytest.mark.parametrize("act,qmin,qmax,folds", [
    ("relu", 0, 127, True), ("relu", 0, 255, False),
    ("relu", -128, 127, True),  # a relu's symmetric int8 codes are requantized as uint8 first
    ("relu", -127, 127, True), ("relu", 1, 127, True), (None, 0, 128, False),
    (None, -128, 127, False)])
def test_without_vnni_only_uint8_codes_up_to_127_fold(act, qmin, qmax, folds):
    p = trace(lambda x: call("linear", qdq(call(act, x) if act else x, qmin=qmin, qmax=qmax),
                             dq_w(W_LIN), None), [T([3, 12], "float32")])
    xs = [_x(3, 12, seed=7)]
    if folds:
        q, _ = _fold(p, signed_inputs=False)
        assert "quantized_matmul" in _names(q)
        _close(p, q, xs, step=0.5)
    else:
        _stays_float(p, xs, signed_inputs=False)


def test_without_vnni_a_uint8_input_of_the_program_stays_float():
    p = trace(lambda u: call("linear", call("dequantize_linear", u, S_X, ZERO), dq_w(W_LIN),
                             None), [T([3, 12], "uint8")])
    _stays_float(p, [np.random.default_rng(8).integers(0, 100, (3, 12)).astype(np.uint8)],
                 signed_inputs=False)


# ------------------------------------------------------------- the epilogue
def _conv_prog(tail):
    def f(x, *rest):
        h = call("conv", qdq(x), dq_w(W_CONV), None, padding=1)
        return tail(h, *rest)

    return f


C_BIAS = _buf(_x(1, 8, 1, 1, seed=9, scale=0.1), "g.cb")


def _bn_stats(prefix):
    r = np.random.default_rng(10)
    return [_buf(a, f"{prefix}.{i}") for i, a in enumerate(
        (_x(8, seed=11, scale=0.1), (np.abs(r.standard_normal(8)) + 0.5).astype(F32),
         (r.uniform(0.5, 1.5, 8) * r.choice([-1, 1], 8)).astype(F32), _x(8, seed=12)))]


BN = _bn_stats("g.bn")
EPILOGUES = {
    # name: (tail, extra input types, ops absorbed into the int8 op, ops left after it)
    "bias, bn, relu": (lambda h: call("relu", call("batch_norm", h + C_BIAS, *BN)[0]), [],
                       set(), ()),
    "bias as an input": (lambda h, b: call("relu", h + b), [T([1, 8, 1, 1], "float32")],
                         set(), ("add", "relu")),
    "row bias on a conv": (lambda h: h + _buf(_x(6, seed=13), "g.rowb"), [], set(), ("add",)),
    "bn in training": (lambda h: call("batch_norm", h, *BN, training=True)[0], [], set(),
                       ("batch_norm",)),
    "bn after the activation": (lambda h: call("batch_norm", call("relu", h), *BN)[0], [],
                                set(), ("batch_norm",)),
    "bn channel_last on NCHW": (lambda h: call("batch_norm", h.transpose([0, 2, 3, 1]),
                                               *_bn_stats("g.bnl"), channel_last=True)[0],
                                [], set(), ("transpose", "batch_norm")),
    "two activations": (lambda h: call("relu6", call("relu", h)), [], set(), ("relu6",)),
    "residual before and after": (lambda h, r: call("relu", h + r) + r,
                                  [T([2, 8, 6, 6], "float32")], set(), ("add",)),
    "residual after the activation": (lambda h, r: call("relu", h + C_BIAS) + r,
                                      [T([2, 8, 6, 6], "float32")], set(), ()),
    "two residuals before": (lambda h, r: (h + r) + r, [T([2, 8, 6, 6], "float32")], set(),
                             ("add",)),
    "a shared intermediate": (lambda h: (call("relu", h + C_BIAS), h + C_BIAS), [], set(),
                              None),
}


@pytest.mark.parametrize("name", list(EPILOGUES))
def test_epilogue_stages_fold_in_order_and_stop_where_they_must(name):
    tail, extra, _, left = EPILOGUES[name]
    p = trace(_conv_prog(tail), [T([2, 4, 6, 6], "float32"), *extra])
    q, _ = _fold(p)
    names = _names(q)
    assert names.count("quantized_conv2d") == 1 and "conv" not in names, q
    after = [n for n in names if n not in ("quantize_linear", "quantized_conv2d")]
    if left is not None:
        assert tuple(after) == left, q
    xs = [_x(2, 4, 6, 6, seed=14)] + [_x(*t.shape, seed=15 + i) for i, t in enumerate(extra)]
    _close(p, q, xs, step=0.5)


def test_a_bn_whose_statistics_outputs_are_read_stays():
    def f(x):
        h = call("conv", qdq(x), dq_w(W_CONV), None, padding=1)
        out = call("batch_norm", h, *BN)
        return out[0], out[1]

    p = trace(f, [T([2, 4, 6, 6], "float32")])
    q, _ = _fold(p)
    assert "batch_norm" in _names(q) and "quantized_conv2d" in _names(q), q
    _close(p, q, [_x(2, 4, 6, 6, seed=16)], step=0.5)


# ------------------------------------------------------------- requantization
def _requant_prog(tail, act="relu"):
    return lambda: _requant_trace(tail, act)


def _requant_trace(tail, act):
    def f(x):
        h = call("conv", qdq(x), dq_w(W_CONV), None, padding=1)
        if act:
            h = call(act, h)
        return tail(h)

    return trace(f, [T([2, 4, 6, 6], "float32")])


def _conv_op(q):
    (op,) = [o for o in q.walk() if o.name == "quantized_conv2d"]
    return op


S_Y2 = _buf(np.array([0.03], F32), "g.sy2")
Z_Y = _buf(np.array([5], np.int32), "g.zy")
S_C8 = _buf(np.full(8, 0.04, F32), "g.sc8")
Z_C8 = _buf(np.zeros(8, np.int32), "g.zc8")
REQUANT = {
    # name: (program, out_dtype of the int8 op, qmax)
    "relu, symmetric int8: uint8 0..127": (_requant_prog(lambda h: qdq(h, S_Y)), "uint8", 127),
    "no activation: int8": (_requant_prog(lambda h: qdq(h, S_Y), act=None), "int8", 127),
    "sigmoid: int8": (_requant_prog(lambda h: qdq(h, S_Y), act="sigmoid"), "int8", 127),
    "zero point: int8": (_requant_prog(lambda h: qdq(h, S_Y, Z_Y)), "int8", 127),
    "uint8 range kept": (_requant_prog(lambda h: qdq(h, S_Y, qmin=0, qmax=255)), "uint8", 255),
    "narrow int8 range: uint8": (_requant_prog(lambda h: qdq(h, S_Y, qmin=-100, qmax=100)),
                                 "uint8", 100),
    "quantize read by a float op: int8": (_requant_prog(
        lambda h: fw.cast(call("quantize_linear", h, S_Y, ZERO), "float32")), "int8", 127),
    "two equal quantizes": (_requant_prog(lambda h: (qdq(h, S_Y), qdq(h, S_Y))), "uint8", 127),
    "two quantizes, other scales": (_requant_prog(lambda h: (qdq(h, S_Y), qdq(h, S_Y2))),
                                    "float32", None),
    "two quantizes, other ranges": (_requant_prog(
        lambda h: (qdq(h, S_Y), qdq(h, S_Y, qmin=-100, qmax=100))), "float32", None),
    "a quantize and a float reader": (_requant_prog(lambda h: (qdq(h, S_Y), h * 2.0)),
                                      "float32", None),
    "per-channel quantize": (_requant_prog(lambda h: call(
        "dequantize_linear", call("quantize_linear", h, S_C8, Z_C8, axis=1), S_C8, Z_C8,
        axis=1)), "float32", None),
    "scale an input of the quantize": (None, "float32", None),
    "pool then quantize": (_requant_prog(lambda h: qdq(call("max_pool", h, kernel_size=2),
                                                       S_Y)), "uint8", 127),
    "avg pool then quantize": (_requant_prog(lambda h: qdq(call("avg_pool", h, kernel_size=2),
                                                           S_Y)), "float32", None),
    "flatten then quantize": (_requant_prog(lambda h: qdq(call("flatten", h, start_axis=1),
                                                          S_Y)), "uint8", 127),
}


@pytest.mark.parametrize("name", list(REQUANT))
def test_requantization_into_the_readers(name):
    make, dt, qmax = REQUANT[name]
    p = None if make is None else make()
    if p is None:  # the quantize's scale is a program input: not a constant
        p = trace(lambda x, s: call("dequantize_linear", call("quantize_linear", call(
            "relu", call("conv", qdq(x), dq_w(W_CONV), None, padding=1)), s, ZERO), s, ZERO),
            [T([2, 4, 6, 6], "float32"), T([1], "float32")])
        xs = [_x(2, 4, 6, 6, seed=17), np.array([0.04], F32)]
    else:
        xs = [_x(2, 4, 6, 6, seed=17)]
    q, _ = _fold(p)
    op = _conv_op(q)
    assert op.attrs["out_dtype"] == dt, q
    assert op.results[0].type.dtype.name == dt
    if qmax is not None:
        assert op.attrs["qmax"] == qmax
        assert "quantize_linear" not in [n for n in _names(q)[1:]], q  # taken in
    else:
        assert _names(q).count("quantize_linear") >= 2, q  # the readers stay
    # one quantization step of the output (the codes of a value lying on a rounding tie
    # may move), or the float output within its rounding
    _close(p, q, xs, step=0.05)


def test_the_byte_chain_is_moved_only_up_to_the_quantize():
    """relu -> max_pool -> flatten -> quantize: the pool and flatten run on the bytes;
    a 3-D (1-d) max_pool, or a reshape with a shape tensor, ends the chain."""
    p = _requant_prog(lambda h: qdq(call("flatten", call("max_pool", h, kernel_size=2),
                                         start_axis=1), S_Y))()
    q, _ = _fold(p)
    assert [n for n in _names(q)] == ["quantize_linear", "quantized_conv2d",
                                      "quantized_max_pool", "flatten", "dequantize_linear"], q
    _close(p, q, [_x(2, 4, 6, 6, seed=18)], step=0.05)

    p2 = _requant_prog(lambda h: qdq(call("max_pool", h.reshape([2, 8, 36]), kernel_size=2),
                                     S_Y))()
    q2, _ = _fold(p2)
    assert _conv_op(q2).attrs["out_dtype"] == "float32", q2
    assert "quantized_max_pool" not in _names(q2) and "max_pool" in _names(q2)
    _close(p2, q2, [_x(2, 4, 6, 6, seed=19)], step=0.05)


# ------------------------------------------------------------- fake quantization
@pytest.mark.parametrize("case,drops", [("same", True), ("other scale", False),
                                        ("other zero point", False),
                                        ("float64 input", False)])
def test_dropping_the_fake_quantization_of_a_float_layer(case, drops):
    """keep_fp32_qdq=False removes quantize -> dequantize only when the dequantize undoes
    the quantize's scale and zero point and gives back the value's own type."""
    w = _buf(_x(12, 10, seed=20), "g.wfq")
    sd = S_Y if case == "other scale" else S_X
    zd = Z_Y if case == "other zero point" else ZERO
    dt = "float64" if case == "float64 input" else "float32"

    def f(x):
        d = call("dequantize_linear", call("quantize_linear", x, S_X, ZERO), sd, zd)
        return call("linear", d, w, None), d

    p = trace(f, [T([3, 12], dt)])
    q, _ = _fold(p, keep_fp32_qdq=False)
    names = _names(q)
    assert ("quantize_linear" not in names) is drops, q
    x = _x(3, 12, seed=21).astype(dt)
    got, want = _outs(q, [x]), _outs(p, [x])
    if drops:  # the float model: the linear of x itself
        np.testing.assert_array_equal(got[1], x)
        np.testing.assert_allclose(got[0], x @ w.numpy(), rtol=1e-5, atol=1e-6)
    else:
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_a_program_without_dequantize_is_left_alone():
    w = _buf(_x(12, 10, seed=22), "g.wnone")
    p = trace(lambda x: call("linear", call("relu", x), w, None), [T([3, 12], "float32")])
    q = p.clone()
    assert get_pass("fold_qdq", min_macs=0, signed_inputs=True).run(q) is False
    assert str(q) == str(p)


def test_layers_inside_a_branch_stay_float():
    def f(x, flag):
        return fw.static.nn.cond(flag, lambda: call("linear", qdq(x), dq_w(W_LIN), None),
                                 lambda: call("linear", x, dq_w(W_LIN), None))

    try:
        p = trace(f, [T([3, 12], "float32"), T([], "bool")])
    except Exception as e:  # noqa: BLE001 -- cond needs fw-jit's builder
        pytest.skip(f"cond cannot be traced here: {e}")
    q, _ = _fold(p)
    assert not any(n in _QOPS for n in _names(q)), q
    x = _x(3, 12, seed=23)
    for flag in (True, False):
        np.testing.assert_array_equal(_outs(q, [x, np.array(flag)])[0],
                                      _outs(p, [x, np.array(flag)])[0])


@pytest.mark.parametrize("kind,axis", [("conv", None), ("conv", 1), ("linear", None),
                                       ("linear", 0)])
def test_per_tensor_weight_scales_fold_whatever_the_axis(kind, axis):
    """One scale for the whole weight (its axis attribute does not matter then)."""
    shape = (8, 4, 3, 3) if kind == "conv" else (12, 10)
    q_, s, z, _ = _wq(shape, 0, f"g.pt{kind}{axis}", per_channel=False)

    def f(x):
        w = call("dequantize_linear", q_, s, z) if axis is None else \
            call("dequantize_linear", q_, s, z, axis=axis)
        if kind == "conv":
            return call("conv", qdq(x), w, None, padding=1)
        return call("linear", qdq(x), w, None)

    p = trace(f, [T([2, 4, 6, 6] if kind == "conv" else [3, 12], "float32")])
    q, changed = _fold(p)
    assert changed and sum(n in _QOPS for n in _names(q)) == 1, q
    _close(p, q, [_x(2, 4, 6, 6, seed=24) if kind == "conv" else _x(3, 12, seed=24)], step=0.5)


@pytest.mark.parametrize("act,zero", [(None, ZERO), ("sigmoid", ZERO), ("relu", "zp")])
def test_nothing_to_fold_reports_no_change(act, zero):
    """A quantized activation that is no relu's (or is quantized with a zero point) keeps
    its int8 codes, and with a float weight nothing folds: the pass reports no change."""
    zp = _buf(np.array([3], np.int32), "g.zp3") if zero == "zp" else ZERO
    w = _buf(_x(12, 10, seed=25), "g.wf2")
    p = trace(lambda x: call("linear", qdq(call(act, x) if act else x, zero=zp), w, None),
              [T([3, 12], "float32")])
    q = p.clone()
    assert get_pass("fold_qdq", min_macs=0, signed_inputs=True).run(q) is False
    assert str(q) == str(p)


def test_fake_quantization_with_a_runtime_scale_is_kept():
    """keep_fp32_qdq=False drops quantize -> dequantize only when both scales are known
    constants that match; a quantize whose scale is an input stays."""
    w = _buf(_x(12, 10, seed=26), "g.wf3")

    def f(x, s):
        d = call("dequantize_linear", call("quantize_linear", x, s, ZERO), S_X, ZERO)
        return call("linear", d, w, None)

    p = trace(f, [T([3, 12], "float32"), T([1], "float32")])
    q, changed = _fold(p, keep_fp32_qdq=False)
    assert changed is False  # nothing to fold, nothing dropped
    assert "quantize_linear" in _names(q) and "dequantize_linear" in _names(q), q
    xs = [_x(3, 12, seed=27), np.array([0.05], F32)]
    for a, b in zip(_outs(p, xs), _outs(q, xs)):
        np.testing.assert_array_equal(a, b)


def test_per_channel_weight_scales_on_a_negative_axis_fold():
    """axis=-1 of a [in, out] weight is its output axis: per-channel scales there fold."""
    q_, s, z, _ = _wq((12, 10), 1, "g.wneg")
    p = trace(lambda x: call("linear", qdq(x), call("dequantize_linear", q_, s, z, axis=-1),
                             None), [T([3, 12], "float32")])
    q, changed = _fold(p)
    assert changed and "quantized_matmul" in _names(q), q
    _close(p, q, [_x(3, 12, seed=28)], step=0.5)


def test_channel_last_conv_batch_norm_folds_into_the_scales():
    stats = _bn_stats("g.bncl")

    def f(x):
        h = call("conv", call("dequantize_linear", call("quantize_linear", x, S_X, ZERO), S_X,
                              ZERO), dq_w(W_CONV), None, padding=1, channel_last=True)
        return call("relu", call("batch_norm", h, *stats, channel_last=True)[0])

    p = trace(f, [T([2, 6, 6, 4], "float32")])
    q, _ = _fold(p)
    names = _names(q)
    assert "batch_norm" not in names and names.count("quantized_conv2d") == 1, q
    _close(p, q, [_x(2, 6, 6, 4, seed=29)], step=0.5)


# ------------------------------------------------------------- uint8 outputs
# A non-negative activation lets the requantized output be uint8 0..127 (the same codes
# as symmetric int8), unless a residual is added AFTER the activation: the sum may be
# negative, and uint8 codes would clamp it to 0.
R_IN = T([2, 8, 6, 6], "float32")
UINT8_OUT = {
    # name: (tail, extra input types, out_dtype of the int8 op)
    "relu": (lambda h: qdq(call("relu", h), S_Y), [], "uint8"),
    "residual before relu": (lambda h, r: qdq(call("relu", h + r), S_Y), [R_IN], "uint8"),
    "residual after relu": (lambda h, r: qdq(call("relu", h + C_BIAS) + r, S_Y), [R_IN],
                            "int8"),
}


@pytest.mark.parametrize("name", list(UINT8_OUT))
def test_requantized_output_is_uint8_only_when_it_cannot_be_negative(name):
    tail, extra, dt = UINT8_OUT[name]
    p = trace(_conv_prog(tail), [T([2, 4, 6, 6], "float32"), *extra])
    q, _ = _fold(p)
    op = _conv_op(q)
    assert op.attrs["out_dtype"] == dt and op.attrs["qmin"] == (0 if dt == "uint8" else -128), q
    xs = [_x(2, 4, 6, 6, seed=18)] + [_x(*t.shape, seed=19 + i) for i, t in enumerate(extra)]
    out = _outs(p, xs)
    if dt == "int8":
        assert (out[0] < 0).any()  # the program does produce negative outputs to keep
    _close(p, q, xs, step=0.05)
