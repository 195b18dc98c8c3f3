"""Records for the fused ops (fw.core.ops.fused): every activation, optional bias and
residual (also broadcast), transposes and batches for fused_matmul, every conv form for
fused_conv, and random elementwise programs (casts, comparisons, where, constants) over
inputs that broadcast into one shape for fused_elementwise.

Each record's ``oracle`` is the chain of unfused ops the fused op replaces, run with
those ops' reference kernels (tests/test_fusion_passes.py checks the fused reference
against it)."""

import numpy as np
from hypothesis import strategies as st

from fw.core import _epilogue
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ops import OPS
from fw.core.ops.fused import _ARITH, _COMPARE, _MATH, ACTIVATIONS
from fw.core.ops.linalg import _mm_shapes
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record, shapes
from fw.core.testing.records.conv import _conv_case

F32 = np.float32
ALL_F = FLOATS + FLOATS_LOW
LOW_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)}
_SPELLINGS = ACTIVATIONS + tuple(_epilogue.ALIASES) + ("ReLU",)


# ---------------------------------------------------------------- oracles: the unfused chains
def _act_oracle(v, activation):
    """The activation as its unfused op's reference computes it (the op the table names)."""
    a = _epilogue.BY_NAME[_epilogue.canonical(activation)]
    return v if a.op is None else OPS[a.op].reference(v, **dict(a.attrs))


def fused_matmul_oracle(x, y, bias=None, residual=None, transpose_x=False, transpose_y=False,
                        activation="none", alpha=1.0):
    # (NumPy's matmul of bfloat16 arrays gives float32: keep the chain in x's dtype)
    v = OPS["matmul"].reference(x, y, transpose_x, transpose_y).astype(x.dtype, copy=False)
    if alpha != 1.0:
        v = OPS["multiply"].reference(v, np.full((), alpha, v.dtype))
    if bias is not None:
        v = OPS["add"].reference(v, bias)
    v = _act_oracle(v, activation)
    return v if residual is None else OPS["add"].reference(v, residual)


def fused_conv_oracle(x, weight, bias=None, residual=None, activation="none", **conv):
    v = _act_oracle(OPS["conv"].reference(x, weight, bias, **OPS["conv"].canon(
        {**OPS["conv"].attrs, **conv})), activation)
    return v if residual is None else OPS["add"].reference(v, residual)


# ---------------------------------------------------------------- fused_matmul
def _fused_matmul(draw, dtype):
    m, k, n = draw(st.integers(0, 5)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
    batch = draw(st.sampled_from([(), (2,), (3, 1)]))
    tx, ty = draw(st.booleans()), draw(st.booleans())
    xs = batch + ((k, m) if tx else (m, k))
    ys = draw(st.sampled_from([(), batch])) + ((n, k) if ty else (k, n))
    if draw(st.integers(0, 5)) == 0:  # a vector x
        xs, tx = (k,), False
    prod = _mm_shapes(xs, ys, tx, ty)
    bias = None
    if draw(st.booleans()):
        bias = arrays(draw, dtype, draw(st.sampled_from([(n,), (1,) * (len(prod) - 1) + (n,)])))
    residual = None
    if draw(st.booleans()):
        rs = draw(st.sampled_from([prod, prod[-1:], (1,) + prod if len(prod) < 4 else prod]))
        residual = arrays(draw, dtype, rs)
    attrs = {"transpose_x": tx, "transpose_y": ty,
             "activation": draw(st.sampled_from(_SPELLINGS)),
             "alpha": draw(st.sampled_from([1.0, 1.0, 0.5, -2.0]))}
    return Sample([arrays(draw, dtype, xs, special=True), arrays(draw, dtype, ys, -1, 1), bias,
                   residual], attrs)


X23, W34 = np.ones((2, 3), F32), np.ones((3, 4), F32)
record("fused_matmul", _fused_matmul, dtypes=ALL_F, grad_order=0, tol=LOW_TOL,
       oracle=fused_matmul_oracle,
       errors=[([X23, W34, None, None], {"activation": "mish"}, InvalidArgumentError,
                "unknown activation 'mish'"),
               ([X23, W34, np.ones(5, F32), None], {}, InvalidArgumentError, r"bias \[5\]"),
               ([X23, W34, np.ones(1, F32), None], {}, InvalidArgumentError, r"bias \[1\]"),
               ([X23, W34, np.ones((2, 4), F32), None], {}, InvalidArgumentError,
                r"\[1, \.\.\., 1, 4\]"),
               ([X23, np.ones((4, 5), F32), None, None], {}, InvalidArgumentError,
                "contracted dimensions differ"),
               ([X23, np.ones(3, F32), None, None], {}, InvalidArgumentError,
                "at least 2 dimensions"),
               ([X23, W34.astype(np.float64), None, None], {}, InvalidTypeError,
                "'y' must have x's dtype float32"),
               ([X23, W34, None, np.ones((3, 4), F32)], {}, InvalidArgumentError,
                "cannot broadcast"),
               ([X23.astype(np.int64), W34.astype(np.int64), None, None], {}, InvalidTypeError,
                "real floating")])


# ---------------------------------------------------------------- fused_conv
def _fused_conv(draw, dtype):
    args, attrs, _ = _conv_case(draw, dtype, False)
    residual = None
    if draw(st.booleans()):
        conv = OPS["conv"]
        out = conv.reference(*args, **conv.canon({**conv.attrs, **attrs}))
        residual = arrays(draw, dtype, out.shape)
    attrs["activation"] = draw(st.sampled_from(_SPELLINGS))
    args[0] = arrays(draw, dtype, args[0].shape, special=True)
    return Sample(args + [residual], attrs)


XC, WC = np.ones((1, 2, 5, 5), F32), np.ones((3, 2, 3, 3), F32)
record("fused_conv", _fused_conv, dtypes=ALL_F, grad_order=0, tol=LOW_TOL,
       oracle=fused_conv_oracle,
       errors=[([XC, WC, None, None], {"activation": "elu"}, InvalidArgumentError,
                "unknown activation"),
               ([XC, np.ones((3, 4, 3, 3), F32), None, None], {}, InvalidArgumentError,
                "input channels"),
               ([XC, WC, np.ones(4, F32), None], {}, InvalidArgumentError, "bias"),
               ([XC, WC, None, np.ones((1, 3, 4, 4), F32)], {}, InvalidArgumentError,
                "cannot broadcast"),
               ([XC, WC.astype(np.float64), None, None], {}, InvalidTypeError,
                "'weight' must have x's dtype")])


# ---------------------------------------------------------------- fused_elementwise
_UNARY = _MATH + ("gelu", "pow")


def elementwise_program(draw, dtype, n_inputs, steps):
    """A random valid program over `n_inputs` inputs of `dtype` (a DType): a chain
    through the current value that also draws in the inputs, constants, comparisons
    with ``where``, and casts to another float dtype and back."""
    prog = []
    nvals = [n_inputs]

    def emit(opcode, d, operands, scalars=()):
        prog.append((opcode, d, tuple(operands), tuple(scalars)))
        nvals[0] += 1
        return nvals[0] - 1

    def const(d):
        return emit("const", d, (), (draw(st.sampled_from([0.5, -1.0, 2.0, 0.0])),))

    pending = list(range(1, n_inputs))
    cur = 0
    for _ in range(steps):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "where", "cast"]))
        if kind == "unary":
            op = draw(st.sampled_from(_UNARY))
            scal = (draw(st.booleans()),) if op == "gelu" else \
                (draw(st.sampled_from([2.0, 0.5, -1.0, 3.0])),) if op == "pow" else ()
            cur = emit(op, dtype, (cur,), scal)
        elif kind == "binary":
            other = pending.pop(0) if pending else const(dtype)
            pair = (cur, other) if draw(st.booleans()) else (other, cur)
            cur = emit(draw(st.sampled_from(_ARITH)), dtype, pair)
        elif kind == "where":
            other = pending.pop(0) if pending else const(dtype)
            c = emit(draw(st.sampled_from(_COMPARE)), _dt.bool_, (cur, other))
            alt = const(dtype)
            cur = emit("where", dtype, (c, cur, alt) if draw(st.booleans()) else (c, alt, cur))
        else:
            d2 = draw(st.sampled_from([d for d in ALL_F if d is not dtype]))
            cur = emit("cast", d2, (cur,))
            cur = emit(draw(st.sampled_from(("relu", "tanh", "abs", "neg"))), d2, (cur,))
            cur = emit("cast", dtype, (cur,))
    for p in pending:
        cur = emit("add", dtype, (cur, p))
    return tuple(prog)


def _fused_elementwise(draw, dtype):
    shape = shapes(draw, max_dims=3)
    n = draw(st.integers(1, 3))
    in_shapes = [shape] + [draw(st.sampled_from([shape, (), shape[-1:], (1,) * len(shape)]))
                           for _ in range(n - 1)]
    if draw(st.booleans()):  # the full-shape input need not come first
        in_shapes.reverse()
    prog = elementwise_program(draw, dtype, n, draw(st.integers(1, 6)))
    return Sample([[arrays(draw, dtype, s, special=True) for s in in_shapes]],
                  {"program": prog, "out_dtype": prog[-1][1]})


XE = np.ones((2, 3), F32)
_ADD = ("add", _dt.float32, (0, 1), ())
record("fused_elementwise", _fused_elementwise, dtypes=ALL_F, grad_order=0, tol=LOW_TOL,
       errors=[([(XE, XE)], {"program": (("mod", "f32", (0, 1), ()),), "out_dtype": "f32"},
                InvalidArgumentError, "unknown opcode 'mod'"),
               ([(XE, XE)], {"program": (("add", "f32", (0, 2), ()),), "out_dtype": "f32"},
                InvalidArgumentError, "operand 2 is not defined"),
               ([(XE, XE, XE)], {"program": (_ADD,), "out_dtype": "f32"},
                InvalidArgumentError, r"values \[2\] are never used"),
               ([(XE, XE)], {"program": (_ADD,), "out_dtype": "f64"},
                InvalidTypeError, "'out_dtype' is float64"),
               ([(XE, XE.astype(np.float64))], {"program": (_ADD,), "out_dtype": "f32"},
                InvalidTypeError, "computes on values of its own floating dtype"),
               ([(XE,)], {"program": (("exp", "f32", (0,), (1.0,)),), "out_dtype": "f32"},
                InvalidArgumentError, "takes the scalars"),
               ([(XE, XE)], {"program": (("less_than", "f32", (0, 1), ()),),
                             "out_dtype": "f32"}, InvalidTypeError, "into bool"),
               ([(XE.astype(np.int32),)], {"program": (("exp", "f32", (0,), ()),),
                                           "out_dtype": "f32"}, InvalidTypeError,
                "input 0 is int32"),
               ([(XE, np.ones((4, 3), F32))], {"program": (_ADD,), "out_dtype": "f32"},
                InvalidArgumentError, "cannot broadcast")])
