"""Records for the pooling ops (fw.core.ops.pool)."""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record

F32 = np.float32
X = np.arange(50, dtype=F32).reshape(1, 2, 5, 5)


def _layout(draw, nd, cmax=3):
    n = draw(st.integers(0, 2))
    c = draw(st.integers(1, cmax))
    cl = draw(st.booleans())
    return n, c, cl


def _shape(n, c, sizes, cl):
    return (n,) + tuple(sizes) + (c,) if cl else (n, c) + tuple(sizes)


def _window_case(draw, dtype, lo=-3.0, hi=3.0, unique=False, same_ok=True):
    nd = draw(st.integers(1, 3))
    side = {1: 7, 2: 6, 3: 4}[nd]
    n, c, cl = _layout(draw, nd)
    ks = [draw(st.integers(1, 3)) for _ in range(nd)]
    stride = None if draw(st.booleans()) else [draw(st.integers(1, 3)) for _ in range(nd)]
    kind = draw(st.sampled_from(["int", "per_dim", "begin_end"] +
                                (["SAME", "VALID"] if same_ok else [])))
    if kind in ("SAME", "VALID"):
        padding, pairs = kind, [(0, 0)] * nd
    elif kind == "int":
        p = draw(st.integers(0, min(ks) // 2))
        padding, pairs = p, [(p, p)] * nd
    elif kind == "per_dim":
        pairs = [(p, p) for p in (draw(st.integers(0, k // 2)) for k in ks)]
        padding = [p for p, _ in pairs]
    else:
        pairs = [(draw(st.integers(0, k // 2)), draw(st.integers(0, k // 2))) for k in ks]
        padding = [v for p in pairs for v in p]
    sizes = [draw(st.integers(max(1, k - b - e), max(1, k - b - e, side)))
             for k, (b, e) in zip(ks, pairs)]
    x = arrays(draw, dtype, _shape(n, c, sizes, cl), lo, hi, unique=unique)
    attrs = {"kernel_size": ks if draw(st.booleans()) or len(set(ks)) > 1 else ks[0],
             "stride": stride, "padding": padding, "ceil_mode": draw(st.booleans()),
             "channel_last": cl}
    return x, attrs


def _max_pool(draw, dtype):
    x, attrs = _window_case(draw, dtype, unique=True)
    return Sample([x], attrs)


POOL_ERRORS = [
    ([X], {"kernel_size": 7}, InvalidArgumentError, "smaller than the kernel size"),
    ([X], {"kernel_size": None}, InvalidArgumentError, "'kernel_size' is required"),
    ([X], {"kernel_size": [2, 2, 2]}, InvalidArgumentError, "1 or 2 entries"),
    ([np.ones((2, 3), F32)], {"kernel_size": 1}, InvalidArgumentError, "at least 1 spatial"),
    ([X.astype(np.complex64)], {"kernel_size": 2}, InvalidTypeError, "real floating"),
]
# Paddle and PyTorch: padding at most half the kernel on each side
PAD_ERRORS = [
    ([X], {"kernel_size": 3, "padding": 2}, InvalidArgumentError, "at most half of the kernel"),
    ([X], {"kernel_size": [2, 4], "padding": [0, 0, 0, 3]}, InvalidArgumentError,
     r"padding 0\+3 of spatial dim 1 is more than half the kernel size 4"),
]
ALL_F = FLOATS + FLOATS_LOW
record("max_pool", _max_pool, dtypes=ALL_F, grad_order=1, errors=POOL_ERRORS + PAD_ERRORS)
record("max_pool_with_index", _max_pool, dtypes=ALL_F, grad_order=1,
       errors=POOL_ERRORS[:2] + PAD_ERRORS)


def _avg_pool(draw, dtype):
    x, attrs = _window_case(draw, dtype)
    attrs["exclusive"] = draw(st.booleans())
    attrs["divisor_override"] = draw(st.sampled_from([None, None, 2, 3.5]))
    return Sample([x], attrs)


record("avg_pool", _avg_pool, dtypes=ALL_F, grad_order=2,
       tol={"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)},
       errors=POOL_ERRORS[:2] + PAD_ERRORS + [([X], {"kernel_size": 2, "divisor_override": 0},
                                               InvalidArgumentError, "must not be 0")])


def _lp_pool(draw, dtype):
    p = draw(st.sampled_from([1.0, 2.0, 3.0, 1.5, float("inf")]))
    x, attrs = _window_case(draw, dtype, 0.1, 3.0, unique=p == float("inf"))
    attrs["norm_type"] = p
    return Sample([x], attrs)


record("lp_pool", _lp_pool, dtypes=FLOATS, grad_order=1,
       errors=[([X], {"kernel_size": 3, "padding": 2, "norm_type": 2.0}, InvalidArgumentError,
                "at most half of the kernel"),
               ([X], {"kernel_size": 2, "norm_type": 0.0}, InvalidArgumentError,
                "'norm_type' must be > 0")])


def _adaptive(unique):
    def sample(draw, dtype):
        nd = draw(st.integers(1, 3))
        side = {1: 7, 2: 6, 3: 4}[nd]
        n, c, cl = _layout(draw, nd)
        sizes = [draw(st.integers(1, side)) for _ in range(nd)]
        outs = [draw(st.one_of(st.integers(1, side), st.none())) for _ in range(nd)]
        if draw(st.booleans()):
            outs = draw(st.integers(1, side))
        x = arrays(draw, dtype, _shape(n, c, sizes, cl), unique=unique)
        return Sample([x], {"output_size": outs, "channel_last": cl})

    return sample


ADAPTIVE_ERRORS = [([X], {"output_size": [0, 2]}, InvalidArgumentError, "must be positive"),
                   ([X], {"output_size": [1, 2, 3]}, InvalidArgumentError, "1 or 2 entries")]
record("adaptive_avg_pool", _adaptive(False), dtypes=ALL_F, grad_order=2,
       tol={"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)}, errors=ADAPTIVE_ERRORS)
record("adaptive_max_pool", _adaptive(True), dtypes=ALL_F, grad_order=1,
       errors=ADAPTIVE_ERRORS)


def _unpool(draw, dtype):
    nd = draw(st.integers(1, 3))
    side = {1: 7, 2: 6, 3: 4}[nd]
    n, c, cl = _layout(draw, nd)
    ks = [draw(st.integers(1, 3)) for _ in range(nd)]
    stride = ks if draw(st.booleans()) else [draw(st.integers(1, 3)) for _ in range(nd)]
    sizes = [draw(st.integers(1, side)) for _ in range(nd)]
    outs = [(i - 1) * s + k for i, s, k in zip(sizes, stride, ks)]
    if draw(st.booleans()):
        outs = [o + draw(st.integers(0, 1)) for o in outs]
        out_attr = outs
    else:
        out_attr = None
    shape = _shape(n, c, sizes, cl)
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    idx = rng.integers(0, int(np.prod(outs)), size=shape).astype(
        draw(st.sampled_from([np.int32, np.int64])))
    return Sample([arrays(draw, dtype, shape), idx],
                  {"kernel_size": ks, "stride": stride, "padding": 0, "output_size": out_attr,
                   "channel_last": cl})


record("max_unpool", _unpool, dtypes=FLOATS, grad_order=1,
       errors=[([np.ones((1, 1, 2, 2), F32), np.full((1, 1, 2, 2), 99, np.int32)],
                {"kernel_size": 2}, InvalidArgumentError, "indices must lie in \\[0, 16\\)"),
               ([np.ones((1, 1, 2, 2), F32), np.zeros((1, 1, 2), np.int32)],
                {"kernel_size": 2}, InvalidArgumentError, "must have the shape of x"),
               ([np.ones((1, 1, 2, 2), F32), np.zeros((1, 1, 2, 2), F32)],
                {"kernel_size": 2}, InvalidTypeError, "integer"),
               ([np.ones((1, 1, 2, 2), F32), np.zeros((1, 1, 2, 2), np.int32)],
                {"kernel_size": 2, "padding": "SAME"}, InvalidArgumentError, "explicit")])
