"""Records for the explicit backward ops (fw.core.ops.nn_grad). Each sample is drawn like
the forward op's record (the same geometries: groups, dilation, strides, every padding
form, both layouts, empty batches) and the statistics / masks / softmax inputs are the
forward reference's outputs, so the backward kernels see what the rules give them."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ops import OPS
from fw.core.ops.conv import conv_geometry, join_layout, split_layout
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record, shapes
from fw.core.testing.records.conv import _conv_case
from fw.core.testing.records.norm import _batch_norm, _layer_norm
from fw.core.testing.records.pool import _avg_pool, _window_case

F32 = np.float32
ALL_F = FLOATS + FLOATS_LOW
LOW_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (6e-2, 6e-2)}


def _ref(name, *args, **attrs):
    op = OPS[name]
    attrs = dict(op.attrs, **attrs)
    return op.reference(*args, **(op.canon(attrs) if op.canon else attrs))


# ---------------------------------------------------------------- conv_grad_weight
def _conv_grad_weight(draw, dtype):
    (x, w, _), attrs, _ = _conv_case(draw, dtype, False)
    cl = attrs["channel_last"]
    n, _, sp = split_layout(x.shape, cl)
    ks = tuple(w.shape[2:])
    canon = OPS["conv"].canon(dict(OPS["conv"].attrs, **attrs))
    _, _, _, outs = conv_geometry(sp, ks, canon["stride"], canon["padding"], canon["dilation"])
    g = arrays(draw, dtype, join_layout(n, w.shape[0], outs, cl))
    attrs["kernel_size"] = ks[0] if len(set(ks)) == 1 and draw(st.booleans()) else list(ks)
    return Sample([x, g], attrs)


XC = np.ones((1, 2, 5, 5), F32)
GC = np.ones((1, 3, 3, 3), F32)
record("conv_grad_weight", _conv_grad_weight, dtypes=ALL_F, grad_order=0,
       tol={"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)},
       errors=[([XC, GC], {}, InvalidArgumentError, "'kernel_size' is required"),
               ([XC, np.ones((1, 3, 4, 4), F32)], {"kernel_size": 3}, InvalidArgumentError,
                "'grad_out' \\[1, 3, 4, 4\\] must be \\[1, 3, 3, 3\\]"),
               ([XC, GC], {"kernel_size": 3, "groups": 2}, InvalidArgumentError,
                "'groups'=2 must divide"),
               ([XC, GC.astype(np.float64)], {"kernel_size": 3}, InvalidTypeError,
                "dtype of 'x'"),
               ([XC, GC], {"kernel_size": [3, 3, 3]}, InvalidArgumentError, "1 or 2 entries")])


# ---------------------------------------------------------------- pooling
def _max_pool_grad(draw, dtype):
    x, attrs = _window_case(draw, dtype, unique=True)
    out, mask = _ref("max_pool_with_index", x, **attrs)
    if draw(st.booleans()):
        mask = mask.astype(np.int64)
    cl = attrs["channel_last"]
    _, _, sp = split_layout(x.shape, cl)
    return Sample([arrays(draw, dtype, out.shape), mask],
                  {"input_size": list(sp), "channel_last": cl})


GP = np.ones((1, 2, 2, 2), F32)
MP = np.zeros((1, 2, 2, 2), np.int32)
record("max_pool_grad", _max_pool_grad, dtypes=ALL_F, grad_order=0,
       errors=[([GP, MP], {}, InvalidArgumentError, "'input_size' is required"),
               ([GP, MP + 16], {"input_size": [4, 4]}, InvalidArgumentError,
                "mask values must lie in \\[0, 16\\)"),
               ([GP, MP.astype(F32)], {"input_size": [4, 4]}, InvalidTypeError,
                "'mask' must be an integer tensor"),
               ([GP, MP[..., :1]], {"input_size": [4, 4]}, InvalidArgumentError,
                "the shape of grad_out"),
               ([GP, MP], {"input_size": [4]}, InvalidArgumentError, "one entry per spatial")])


def _avg_pool_grad(draw, dtype):
    s = _avg_pool(draw, dtype)
    (x,) = s.args
    out = _ref("avg_pool", x, **s.attrs)
    _, _, sp = split_layout(x.shape, s.attrs["channel_last"])
    return Sample([arrays(draw, dtype, out.shape)], dict(s.attrs, input_size=list(sp)))


record("avg_pool_grad", _avg_pool_grad, dtypes=ALL_F, grad_order=0,
       tol={"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)},
       errors=[([GP], {"kernel_size": 2}, InvalidArgumentError, "'input_size' is required"),
               ([GP], {"kernel_size": 2, "input_size": [7, 7]}, InvalidArgumentError,
                "the shape of avg_pool's result"),
               ([GP], {"kernel_size": 2, "input_size": [4, 4], "divisor_override": 0},
                InvalidArgumentError, "must not be 0")])


# ---------------------------------------------------------------- normalization
def _batch_norm_grad(draw, dtype):
    s = _batch_norm(draw, dtype)
    x, rm, rv, w, b = s.args
    outs = _ref("batch_norm", x, rm, rv, w, b, **s.attrs)
    a = s.attrs
    batch = bool(a["training"] and not a["use_global_stats"])
    return Sample([x, w, outs[3], outs[4], arrays(draw, dtype, x.shape)],
                  {"epsilon": a["epsilon"], "channel_last": a["channel_last"],
                   "batch_stats": batch})


XB = np.ones((2, 3, 4), F32)
V3 = np.ones(3, F32)
record("batch_norm_grad", _batch_norm_grad, dtypes=ALL_F, grad_order=0, tol=LOW_TOL,
       errors=[([XB, None, V3, V3, XB[:1]], {}, InvalidArgumentError, "the shape of x"),
               ([XB, None, np.ones(2, F32), V3, XB], {}, InvalidArgumentError,
                "'saved_mean' \\[2\\] must be \\[3\\]"),
               ([XB, None, V3, V3, XB.astype(np.float64)], {}, InvalidTypeError,
                "dtype of 'x'"),
               ([np.ones(3, F32), None, V3, V3, np.ones(3, F32)], {}, InvalidArgumentError,
                "at least 2 dimensions")])


def _layer_norm_grad(draw, dtype):
    s = _layer_norm(draw, dtype)
    x, w, b = s.args
    _, mean, inv = _ref("layer_norm", x, w, b, **s.attrs)
    return Sample([x, w, mean, inv, arrays(draw, dtype, x.shape)], dict(s.attrs))


M2 = np.zeros(2, F32)
record("layer_norm_grad", _layer_norm_grad, dtypes=ALL_F, grad_order=0, tol=LOW_TOL,
       errors=[([XB, None, M2, M2, XB], {"begin_norm_axis": 3}, InvalidArgumentError,
                "out of range"),
               ([XB, np.ones(5, F32), M2, M2, XB], {}, InvalidArgumentError,
                "must have 12 elements"),
               ([XB, None, np.zeros(3, F32), M2, XB], {}, InvalidArgumentError,
                "'mean' \\[3\\] must be \\[2\\]")])


# ---------------------------------------------------------------- softmax
def _softmax_grad(name):
    def sample(draw, dtype):
        shape = shapes(draw, min_dims=1)
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        x = arrays(draw, dtype, shape, -10, 10, special=True)
        out = _ref(name, x, axis=axis)
        return Sample([out, arrays(draw, dtype, shape)], {"axis": axis})

    return sample


X23 = np.ones((2, 3), F32)
SM_ERRORS = [([X23, X23], {"axis": 2}, InvalidArgumentError, "out of range"),
             ([X23, X23[:1]], {}, InvalidArgumentError, "the shape of out"),
             ([X23, X23.astype(np.float64)], {}, InvalidTypeError, "dtype of 'out'")]
record("softmax_grad", _softmax_grad("softmax"), dtypes=ALL_F, grad_order=0, errors=SM_ERRORS)
record("log_softmax_grad", _softmax_grad("log_softmax"), dtypes=ALL_F, grad_order=0,
       errors=SM_ERRORS)


# ---------------------------------------------------------------- cross entropy
def _ce_grad(draw, dtype):
    nd = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 4)) for _ in range(nd)]
    ax = draw(st.integers(-nd, nd - 1))
    axn = ax % nd
    if nd > 1 and draw(st.booleans()):  # an empty batch
        shape[(axn + 1) % nd] = 0
    shape = tuple(shape)
    c = shape[axn]
    soft = draw(st.booleans())
    reduction = draw(st.sampled_from(["mean", "sum", "none"]))
    ignore = draw(st.sampled_from([-100, 0, 1]))
    logits = arrays(draw, dtype, shape)
    if soft:
        label = arrays(draw, dtype, shape, 0, 1)
    else:
        lshape = shape[:axn] + (1,) + shape[axn + 1:] if draw(st.booleans()) else \
            shape[:axn] + shape[axn + 1:]
        label = arrays(draw, _dt.int64, lshape, 0, c - 1)
    weight = arrays(draw, dtype, (c,), 0.5, 2.0) if draw(st.booleans()) else None
    attrs = {"soft_label": soft, "ignore_index": ignore, "reduction": reduction, "axis": ax}
    loss, sm = _ref("cross_entropy_with_softmax", logits, label, weight, **attrs)
    return Sample([sm, label, weight, arrays(draw, dtype, np.shape(loss))], attrs)


SMX = np.full((2, 3), 1 / 3, F32)
LAB = np.array([0, 2])
record("cross_entropy_with_softmax_grad", _ce_grad, dtypes=FLOATS, grad_order=0,
       errors=[([SMX, LAB, None, np.ones(2, F32)], {}, InvalidArgumentError, "0-D"),
               ([SMX, LAB, None, np.ones((), F32)], {"reduction": "max"}, InvalidArgumentError,
                "'reduction' must be one of"),
               ([SMX, np.array([0, 5]), None, np.ones((), F32)], {}, InvalidArgumentError,
                "out of range for 3 classes"),
               ([SMX, LAB, np.ones(2, F32), np.ones((), F32)], {}, InvalidArgumentError,
                "weight \\[2\\] must be \\[3\\]")])


# ---------------------------------------------------------------- relu, dropout
def _relu_grad(draw, dtype):
    shape = shapes(draw)
    x = arrays(draw, dtype, shape, special=True)
    out = np.where(x > 0, x, np.zeros_like(x))
    return Sample([out, arrays(draw, dtype, shape)], {})


def _activation_grad(fn):
    def sample(draw, dtype):
        shape = shapes(draw)
        x = arrays(draw, dtype, shape, special=True)
        with np.errstate(over="ignore"):
            out = np.asarray(fn(np.asarray(x, np.float64)), dtype=x.dtype)
        return Sample([out, arrays(draw, dtype, shape)], {})
    return sample


def _dropout_grad(draw, dtype):
    shape = shapes(draw)
    mask = arrays(draw, _dt.bool_, shape)
    scale = draw(st.sampled_from([1.0, 2.0, 1 / 0.7]))
    return Sample([mask, arrays(draw, dtype, shape)], {"scale": scale})


record("relu_grad", _relu_grad, dtypes=ALL_F, grad_order=0,
       errors=[([X23, X23[:1]], {}, InvalidArgumentError, "the shape of out"),
               ([X23, X23.astype(np.float64)], {}, InvalidTypeError, "dtype of 'out'")])
for _name, _fn in (("tanh_grad", np.tanh), ("sigmoid_grad", lambda x: 1 / (1 + np.exp(-x)))):
    record(_name, _activation_grad(_fn), dtypes=ALL_F, grad_order=0,
           errors=[([X23, X23[:1]], {}, InvalidArgumentError, "the shape of out"),
                   ([X23, X23.astype(np.float64)], {}, InvalidTypeError, "dtype of 'out'")])
record("dropout_grad", _dropout_grad, dtypes=ALL_F, grad_order=0,
       errors=[([X23, X23], {}, InvalidTypeError, "'mask' must be bool"),
               ([X23 > 0, X23[:1]], {}, InvalidArgumentError, "the shape of grad_out")])
