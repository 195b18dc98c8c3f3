"""Records for the miscellaneous nn ops (fw.core.ops.nn_misc)."""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record, shapes

F32 = np.float32
ALL_F = FLOATS + FLOATS_LOW
LOW_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (6e-2, 6e-2)}


def _maybe(draw, dtype, shape):
    return arrays(draw, dtype, shape) if draw(st.booleans()) else None


# ---------------------------------------------------------------- linear / bilinear
def _linear(draw, dtype):
    lead = shapes(draw, max_dims=2, max_side=3)
    k, o = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    return Sample([arrays(draw, dtype, lead + (k,)), arrays(draw, dtype, (k, o)),
                   _maybe(draw, dtype, (o,))])


record("linear", _linear, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([np.ones((2, 3), F32), np.ones((4, 5), F32), None], {}, InvalidArgumentError,
                "layout \\[in, out\\]"),
               ([np.ones((2, 3), F32), np.ones((3, 5), F32), np.ones(4, F32)], {},
                InvalidArgumentError, "bias"),
               ([np.ones((2, 3), F32), np.ones((3, 5), F32), np.ones((2, 5), F32)], {},
                InvalidArgumentError, r"bias \[2, 5\] must be \[5\]")])


def _bilinear(draw, dtype):
    n, i1, i2, o = (draw(st.integers(0, 3)) for _ in range(4))
    bias = None
    if draw(st.booleans()):
        bias = arrays(draw, dtype, draw(st.sampled_from([(o,), (1, o)])))
    return Sample([arrays(draw, dtype, (n, i1)), arrays(draw, dtype, (n, i2)),
                   arrays(draw, dtype, (o, i1, i2)), bias])


record("bilinear", _bilinear, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([np.ones((2, 3), F32), np.ones((2, 4), F32), np.ones((5, 3, 3), F32), None],
                {}, InvalidArgumentError, "do not match weight")])


# ---------------------------------------------------------------- embedding
def _embedding(draw, dtype):
    v, d = draw(st.integers(1, 5)), draw(st.integers(0, 3))
    ids_shape = shapes(draw, max_dims=3)
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    ids = rng.integers(0, v, size=ids_shape).astype(draw(st.sampled_from([np.int32,
                                                                          np.int64])))
    pad = draw(st.one_of(st.none(), st.integers(-v, v - 1)))
    return Sample([ids, arrays(draw, dtype, (v, d))], {"padding_idx": pad}, grad_args=(1,))


record("embedding", _embedding, dtypes=ALL_F, grad_order=2,
       errors=[([np.array([0, 4]), np.ones((4, 2), F32)], {}, InvalidArgumentError,
                "ids must lie in \\[0, 4\\)"),
               ([np.array([0.5]), np.ones((4, 2), F32)], {}, InvalidTypeError, "integer"),
               ([np.array([0]), np.ones((4, 2), F32)], {"padding_idx": 4}, InvalidArgumentError,
                "'padding_idx'=4 is out of range")])


# ---------------------------------------------------------------- dropout
def _dropout(draw, dtype, mode=True):
    shape = shapes(draw)
    nd = len(shape)
    axis = None
    if nd and draw(st.booleans()):
        axis = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
    attrs = {"p": draw(st.sampled_from([0.0, 0.3, 0.5, 1.0])), "axis": axis,
             "training": draw(st.booleans())}
    if mode:
        attrs["mode"] = draw(st.sampled_from(["upscale_in_train", "downscale_in_infer"]))
    return Sample([arrays(draw, dtype, shape)], attrs)


DROP_ERRORS = [([np.ones(3, F32)], {"p": 1.5}, InvalidArgumentError, "'p' must be in \\[0, 1\\]"),
               ([np.ones(3, F32)], {"axis": 2}, InvalidArgumentError, "out of range")]
record("dropout", _dropout, dtypes=FLOATS, grad_order=0, nondeterministic=True,
       errors=DROP_ERRORS + [([np.ones(3, F32)], {"mode": "up"}, InvalidArgumentError,
                              "'mode' must be")])
record("alpha_dropout", lambda draw, d: _dropout(draw, d, False), dtypes=FLOATS, grad_order=0,
       nondeterministic=True, errors=DROP_ERRORS)


# ---------------------------------------------------------------- interpolate
_MODE_ND = {"nearest": (1, 2, 3), "area": (1, 2, 3), "linear": (1,), "bilinear": (2,),
            "bicubic": (2,), "trilinear": (3,)}


def _interpolate(draw, dtype):
    mode = draw(st.sampled_from(sorted(_MODE_ND)))
    nd = draw(st.sampled_from(_MODE_ND[mode]))
    n, c, cl = draw(st.integers(0, 2)), draw(st.integers(1, 3)), draw(st.booleans())
    sizes = [draw(st.integers(1, 5)) for _ in range(nd)]
    shape = (n,) + tuple(sizes) + (c,) if cl else (n, c) + tuple(sizes)
    attrs = {"size": None, "scale_factor": None, "mode": mode, "channel_last": cl,
             "align_corners": mode != "area" and draw(st.booleans()),
             "align_mode": draw(st.sampled_from([0, 1]))}
    if draw(st.booleans()):
        attrs["size"] = [draw(st.integers(1, 7)) for _ in range(nd)]
    else:
        attrs["scale_factor"] = [draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])) for _ in
                                 range(nd)] if draw(st.booleans()) else \
            draw(st.sampled_from([1.0, 2.0, 2.5]))
        for i, s in zip(sizes, attrs["scale_factor"] if isinstance(
                attrs["scale_factor"], list) else [attrs["scale_factor"]] * nd):
            if int(i * s) < 1:
                attrs["scale_factor"] = 2.0
    return Sample([arrays(draw, dtype, shape)], attrs)


XI = np.ones((1, 2, 3, 3), F32)
record("interpolate", _interpolate, dtypes=ALL_F, grad_order=2, tol=LOW_TOL, dynamic_ok=False,
       errors=[([XI], {"size": [4, 4], "scale_factor": 2.0}, InvalidArgumentError,
                "exactly one of"),
               ([XI], {"size": [4, 4], "mode": "linear"}, InvalidArgumentError,
                "needs 1 spatial"),
               ([XI], {"size": [4, 4], "mode": "cubic"}, InvalidArgumentError, "'mode' must be"),
               ([XI], {"scale_factor": 0.1}, InvalidArgumentError, "empty output")])


# ---------------------------------------------------------------- shuffles
def _nchw(draw, dtype, c, h=None, w=None):
    n = draw(st.integers(0, 2))
    h = draw(st.integers(0, 3)) if h is None else h
    w = draw(st.integers(0, 3)) if w is None else w
    cl = draw(st.booleans())
    return arrays(draw, dtype, (n, h, w, c) if cl else (n, c, h, w)), cl


def _pixel_shuffle(draw, dtype):
    r = draw(st.integers(1, 3))
    x, cl = _nchw(draw, dtype, r * r * draw(st.integers(1, 2)))
    return Sample([x], {"upscale_factor": r, "channel_last": cl})


def _pixel_unshuffle(draw, dtype):
    r = draw(st.integers(1, 3))
    x, cl = _nchw(draw, dtype, draw(st.integers(1, 3)), r * draw(st.integers(0, 2)),
                  r * draw(st.integers(0, 2)))
    return Sample([x], {"downscale_factor": r, "channel_last": cl})


def _channel_shuffle(draw, dtype):
    g = draw(st.integers(1, 3))
    x, cl = _nchw(draw, dtype, g * draw(st.integers(1, 2)))
    return Sample([x], {"groups": g, "channel_last": cl})


X4 = np.ones((1, 6, 2, 2), F32)
record("pixel_shuffle", _pixel_shuffle, dtypes=ALL_F, grad_order=2,
       errors=[([X4], {"upscale_factor": 2}, InvalidArgumentError, "not divisible"),
               ([np.ones((6, 2, 2), F32)], {"upscale_factor": 1}, InvalidArgumentError, "4-D")])
record("pixel_unshuffle", _pixel_unshuffle, dtypes=ALL_F, grad_order=2,
       errors=[([X4], {"downscale_factor": 3}, InvalidArgumentError, "not divisible")])
record("channel_shuffle", _channel_shuffle, dtypes=ALL_F, grad_order=2,
       errors=[([X4], {"groups": 4}, InvalidArgumentError, "does not divide"),
               ([X4], {"groups": 0}, InvalidArgumentError, "must be >= 1")])


# ---------------------------------------------------------------- unfold / fold
def _fold_attrs(draw):
    ks = [draw(st.integers(1, 3)) for _ in range(2)]
    strides = [draw(st.integers(1, 2)) for _ in range(2)]
    dil = [draw(st.integers(1, 2)) for _ in range(2)]
    form = draw(st.sampled_from(["int", "two", "four"]))
    if form == "int":
        p = draw(st.integers(0, 1))
        pads, padding = ((p, p), (p, p)), p
    elif form == "two":
        ph, pw = draw(st.integers(0, 1)), draw(st.integers(0, 1))
        pads, padding = ((ph, ph), (pw, pw)), [ph, pw]
    else:
        t, left, b, r = (draw(st.integers(0, 1)) for _ in range(4))
        pads, padding = ((t, b), (left, r)), [t, left, b, r]
    sizes = [draw(st.integers(max(1, d * (k - 1) + 1 - p[0] - p[1]), 5))
             for k, d, p in zip(ks, dil, pads)]
    blocks = [(i + p[0] + p[1] - d * (k - 1) - 1) // s + 1
              for i, k, s, d, p in zip(sizes, ks, strides, dil, pads)]
    return {"kernel_sizes": ks, "strides": strides, "paddings": padding, "dilations": dil}, \
        sizes, blocks


def _unfold(draw, dtype):
    attrs, sizes, _ = _fold_attrs(draw)
    n, c = draw(st.integers(0, 2)), draw(st.integers(1, 3))
    return Sample([arrays(draw, dtype, (n, c) + tuple(sizes))], attrs)


def _fold(draw, dtype):
    attrs, sizes, blocks = _fold_attrs(draw)
    n, c = draw(st.integers(0, 2)), draw(st.integers(1, 3))
    kk = attrs["kernel_sizes"][0] * attrs["kernel_sizes"][1]
    attrs = {"output_sizes": sizes, **attrs}
    return Sample([arrays(draw, dtype, (n, c * kk, blocks[0] * blocks[1]))], attrs)


record("unfold", _unfold, dtypes=ALL_F, grad_order=2,
       errors=[([np.ones((1, 1, 2, 2), F32)], {"kernel_sizes": 3}, InvalidArgumentError,
                "smaller than the dilated"),
               ([np.ones((1, 1, 4, 4), F32)], {"kernel_sizes": 2, "paddings": [1, 1, 1]},
                InvalidArgumentError, "1, 2 or 4 entries")])
record("fold", _fold, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([np.ones((1, 4, 5), F32)], {"output_sizes": [3, 3], "kernel_sizes": 2},
                InvalidArgumentError, "number of blocks 2\\*2 = 4"),
               ([np.ones((1, 5, 4), F32)], {"output_sizes": [3, 3], "kernel_sizes": 2},
                InvalidArgumentError, "multiple of kh\\*kw")])


# ---------------------------------------------------------------- attention
def _sdpa(draw, dtype):
    b, sq, sk = draw(st.integers(1, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    hk = draw(st.integers(1, 2))
    h = hk * draw(st.integers(1, 2))
    d, dv = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    three = draw(st.booleans())
    lead = () if three else (b,)
    q = arrays(draw, dtype, lead + (sq, h, d))
    k = arrays(draw, dtype, lead + (sk, hk, d))
    v = arrays(draw, dtype, lead + (sk, hk, dv))
    mask = None
    kind = draw(st.sampled_from(["none", "bool", "float"]))
    mshape = draw(st.sampled_from([(sq, sk), (1, h, sq, sk), (b if not three else 1, 1, 1, sk)]))
    if kind == "bool":
        rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
        mask = rng.random(mshape) < 0.8
        mask[..., 0] = True  # every query keeps a key: no all-masked rows
    elif kind == "float":
        mask = arrays(draw, dtype, mshape, -2, 2)
    causal = draw(st.booleans()) and kind != "bool"
    return Sample([q, k, v, mask], {"is_causal": causal,
                                    "scale": draw(st.sampled_from([None, 0.5]))})


QKV = np.ones((1, 2, 2, 4), F32)
record("scaled_dot_product_attention", _sdpa, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([QKV, np.ones((1, 2, 2, 3), F32), QKV, None], {}, InvalidArgumentError,
                "head_dim differ"),
               ([QKV, np.ones((1, 2, 3, 4), F32), np.ones((1, 2, 3, 4), F32), None], {},
                InvalidArgumentError, "must divide the query head count"),
               ([QKV, QKV, QKV, np.ones((3, 3), F32)], {}, InvalidArgumentError,
                "cannot broadcast"),
               ([QKV, QKV, QKV, np.ones((2, 2), np.int32)], {}, InvalidTypeError,
                "bool or floating")])


# ---------------------------------------------------------------- distances / label_smooth
def _cosine(draw, dtype):
    from fw.core.testing import broadcast_pair

    sx, sy = broadcast_pair(draw, max_dims=3, min_side=1)
    nd = max(len(sx), len(sy))
    if nd == 0:
        sx, nd = (2,), 1
    return Sample([arrays(draw, dtype, sx), arrays(draw, dtype, sy)],
                  {"axis": draw(st.integers(-nd, nd - 1)), "eps": 1e-8})


record("cosine_similarity", _cosine, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([np.ones((2, 3), F32), np.ones((4, 3), F32)], {}, InvalidArgumentError,
                "cannot broadcast"),
               ([np.ones((2, 3), F32), np.ones((2, 3), F32)], {"axis": 2}, InvalidArgumentError,
                "out of range")])


def _pairwise(draw, dtype):
    from fw.core.testing import broadcast_pair

    sx, sy = broadcast_pair(draw, max_dims=3, min_side=0)
    if not sx and not sy:
        sx = (3,)
    return Sample([arrays(draw, dtype, sx), arrays(draw, dtype, sy)],
                  {"p": draw(st.sampled_from([2.0, 1.0, 3.0, 0.0, float("inf"),
                                              float("-inf")])),
                   "epsilon": draw(st.sampled_from([1e-6, 0.0])),
                   "keepdim": draw(st.booleans())})


record("pairwise_distance", _pairwise, dtypes=ALL_F, grad_order=1, tol=LOW_TOL,
       errors=[([np.ones((2, 3), F32), np.ones((2, 4), F32)], {}, InvalidArgumentError,
                "cannot broadcast")])


def _label_smooth(draw, dtype):
    shape = shapes(draw, min_dims=1)
    prior = None
    if draw(st.booleans()):
        nc = shape[-1]
        prior = arrays(draw, dtype, draw(st.sampled_from([(nc,), (1, nc)])), 0, 1)
    return Sample([arrays(draw, dtype, shape, 0, 1), prior],
                  {"epsilon": draw(st.sampled_from([0.0, 0.1, 0.5]))})


record("label_smooth", _label_smooth, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([np.ones((2, 3), F32), np.ones(2, F32)], {}, InvalidArgumentError,
                "one entry per class"),
               ([np.ones((2, 3), F32), None], {"epsilon": 2.0}, InvalidArgumentError,
                "'epsilon' must be in")])
