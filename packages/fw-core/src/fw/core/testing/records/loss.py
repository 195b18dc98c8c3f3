"""Records for the loss ops (fw.core.ops.loss)."""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record, shapes

F32 = np.float32
ALL_F = FLOATS + FLOATS_LOW
LOW_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (6e-2, 6e-2)}
RED = st.sampled_from(["none", "mean", "sum"])


def _rng(draw):
    return np.random.default_rng(draw(st.integers(0, 2**31 - 1)))


def _labels(draw, shape, c, ignore_index=None):
    lab = _rng(draw).integers(0, max(c, 1), size=shape)
    if ignore_index is not None and lab.size and draw(st.booleans()):
        lab.reshape(-1)[0] = ignore_index
    return lab.astype(draw(st.sampled_from([np.int32, np.int64])))


# ---------------------------------------------------------------- cross entropy
def _ce(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3, max_side=4)
    nd = len(shape)
    ax = draw(st.integers(0, nd - 1))
    shape = list(shape)
    shape[ax] = draw(st.integers(1, 4))
    shape = tuple(shape)
    c = shape[ax]
    soft = draw(st.booleans())
    ignore = draw(st.sampled_from([-100, 0, 1]))
    if soft:
        lab = _rng(draw).random(shape)
        lab = (lab / lab.sum(axis=ax, keepdims=True)).astype(dtype.np)
    else:
        keep = draw(st.booleans())
        lshape = shape[:ax] + ((1,) if keep else ()) + shape[ax + 1:]
        lab = _labels(draw, lshape, c, ignore)
    use_softmax = draw(st.booleans())
    logits = arrays(draw, dtype, shape, -4, 4) if use_softmax else \
        arrays(draw, dtype, shape, 0.05, 1.0)
    weight = arrays(draw, dtype, (c,), 0.1, 2) if draw(st.booleans()) else None
    return Sample([logits, lab, weight],
                  {"soft_label": soft, "ignore_index": ignore, "reduction": draw(RED),
                   "axis": ax if draw(st.booleans()) else ax - nd, "use_softmax": use_softmax},
                  grad_args=(0,))


L23 = np.zeros((2, 3), F32)
record("cross_entropy_with_softmax", _ce, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([L23, np.array([[0], [3]]), None], {}, InvalidArgumentError,
                "label value 3 is out of range for 3 classes"),
               ([L23, np.array([0, 1, 2]), None], {}, InvalidArgumentError,
                "hard label \\[3\\] must have"),
               ([L23, np.array([0, 1]), np.ones(2, F32)], {}, InvalidArgumentError,
                "one per class"),
               ([L23, np.array([0.5, 1.0]), None], {}, InvalidTypeError, "integer"),
               ([L23, np.array([0, 1]), None], {"reduction": "avg"}, InvalidArgumentError,
                "'reduction' must be one of")])


def _nll(draw, dtype):
    n, c = draw(st.integers(0, 3)), draw(st.integers(1, 4))
    extra = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2))))
    ignore = draw(st.sampled_from([-100, 0]))
    return Sample([arrays(draw, dtype, (n, c) + extra, -3, 0),
                   _labels(draw, (n,) + extra, c, ignore),
                   arrays(draw, dtype, (c,), 0.1, 2) if draw(st.booleans()) else None],
                  {"ignore_index": ignore, "reduction": draw(RED)}, grad_args=(0,))


record("nll_loss", _nll, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([L23, np.array([0, 5]), None], {}, InvalidArgumentError, "out of range"),
               ([L23, np.array([0, 1, 1]), None], {}, InvalidArgumentError,
                "label \\[3\\] must be \\[2\\]"),
               ([np.zeros(3, F32), np.array([0]), None], {}, InvalidArgumentError,
                "input must be \\[N, C")])


# ---------------------------------------------------------------- bce family
def _bce(draw, dtype):
    shape = shapes(draw, max_dims=3)
    wshape = shape[len(shape) - draw(st.integers(0, len(shape))):]
    return Sample([arrays(draw, dtype, shape, 0.01, 0.99), arrays(draw, dtype, shape, 0, 1),
                   arrays(draw, dtype, wshape, 0.1, 2) if draw(st.booleans()) else None],
                  {"reduction": draw(RED)})


record("binary_cross_entropy", _bce, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([np.array([0.5, 1.5], F32), np.array([0, 1], F32), None], {},
                InvalidArgumentError, "probabilities in \\[0, 1\\]"),
               ([np.array([0.5], F32), np.array([0, 1], F32), None], {}, InvalidArgumentError,
                "one shape")])


def _bcel(draw, dtype):
    shape = shapes(draw, max_dims=3)
    tail = shape[len(shape) - draw(st.integers(0, len(shape))):]
    return Sample([arrays(draw, dtype, shape, -30, 30), arrays(draw, dtype, shape, 0, 1),
                   arrays(draw, dtype, tail, 0.1, 2) if draw(st.booleans()) else None,
                   arrays(draw, dtype, tail, 0.1, 3) if draw(st.booleans()) else None],
                  {"reduction": draw(RED)})


record("binary_cross_entropy_with_logits", _bcel, dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([np.zeros((2, 3), F32), np.zeros((2, 3), F32), None, np.ones(4, F32)], {},
                InvalidArgumentError, "cannot broadcast")])


def _focal(draw, dtype):
    shape = shapes(draw, max_dims=3)
    return Sample([arrays(draw, dtype, shape, -5, 5),
                   _rng(draw).integers(0, 2, size=shape).astype(dtype.np),
                   arrays(draw, dtype, (1,), 0.5, 4) if draw(st.booleans()) else None],
                  {"alpha": draw(st.sampled_from([0.25, 0.5])),
                   "gamma": draw(st.sampled_from([0.0, 2.0, 1.5])), "reduction": draw(RED)})


record("sigmoid_focal_loss", _focal, dtypes=ALL_F, grad_order=1, tol=LOW_TOL,
       errors=[([np.zeros(2, F32), np.zeros(2, F32), np.ones(2, F32)], {},
                InvalidArgumentError, "one value")])


# ---------------------------------------------------------------- elementwise losses
def _pair(lo=-3.0, hi=3.0, label_lo=None, label_hi=None, red=RED, **extra):
    def sample(draw, dtype):
        attrs = {"reduction": draw(red)}
        shape = shapes(draw, min_dims=int(attrs["reduction"] == "batchmean"), max_dims=3)
        attrs.update({k: draw(s) for k, s in extra.items()})
        return Sample([arrays(draw, dtype, shape, lo, hi),
                       arrays(draw, dtype, shape, lo if label_lo is None else label_lo,
                              hi if label_hi is None else label_hi)], attrs)

    return sample


record("kl_div", _pair(-3, 0, -1, 2, red=st.sampled_from(["none", "mean", "sum", "batchmean"]),
                       log_target=st.booleans()),
       dtypes=ALL_F, grad_order=2, tol=LOW_TOL,
       errors=[([np.zeros(3, F32), np.zeros(3, F32)], {"reduction": "batch"},
                InvalidArgumentError, "'reduction' must be one of"),
               ([np.zeros((), F32), np.zeros((), F32)], {"reduction": "batchmean"},
                InvalidArgumentError, "batch dimension")])
record("smooth_l1_loss", _pair(delta=st.sampled_from([1.0, 0.5, 2.0])), dtypes=ALL_F,
       grad_order=1, tol=LOW_TOL,
       errors=[([np.zeros(3, F32), np.zeros(2, F32)], {}, InvalidArgumentError,
                "cannot broadcast")])


def _ranking(draw, dtype):
    shape = shapes(draw, max_dims=3)
    return Sample([arrays(draw, dtype, shape), arrays(draw, dtype, shape),
                   (_rng(draw).integers(0, 2, size=shape) * 2 - 1).astype(dtype.np)],
                  {"margin": draw(st.sampled_from([0.0, 0.5])), "reduction": draw(RED)})


record("margin_ranking_loss", _ranking, dtypes=ALL_F, grad_order=1, tol=LOW_TOL,
       errors=[([np.zeros(3, F32), np.zeros(2, F32), np.ones(3, F32)], {},
                InvalidArgumentError, "cannot broadcast")])


# ---------------------------------------------------------------- CTC
def _ctc(draw, dtype):
    t, b, c = draw(st.integers(1, 6)), draw(st.integers(1, 3)), draw(st.integers(2, 4))
    lmax = draw(st.integers(0, 3))
    blank = draw(st.integers(0, c - 1))
    rng = _rng(draw)
    labels = rng.integers(0, c - 1, size=(b, lmax))
    labels = labels + (labels >= blank)  # never the blank
    tl = rng.integers(0, t + 1, size=b)
    ll = rng.integers(0, lmax + 1, size=b)
    return Sample([arrays(draw, dtype, (t, b, c), -2, 2), labels.astype(np.int32),
                   tl.astype(np.int64), ll.astype(np.int64)],
                  {"blank": blank, "norm_by_times": draw(st.booleans())}, grad_args=(0,))


Z3 = np.zeros((4, 2, 3), F32)
record("ctc_loss", _ctc, dtypes=FLOATS, grad_order=1,
       errors=[([Z3, np.array([[1, 2], [0, 1]], np.int32), np.array([4, 4]), np.array([2, 2])],
                {}, InvalidArgumentError, "differ from blank=0"),
               ([Z3, np.array([[1, 2], [1, 1]], np.int32), np.array([5, 4]), np.array([2, 2])],
                {}, InvalidArgumentError, "input_lengths must lie in \\[0, 4\\]"),
               ([Z3, np.array([[1, 2]], np.int32), np.array([4, 4]), np.array([2, 2])], {},
                InvalidArgumentError, "batch size 2"),
               ([Z3, np.array([[1], [1]], np.int32), np.array([4, 4]), np.array([1, 1])],
                {"blank": 3}, InvalidArgumentError, "'blank'=3 must be in")])


def _hsigmoid(draw, dtype):
    n, d = draw(st.integers(0, 3)), draw(st.integers(1, 3))
    nc = draw(st.integers(2, 7))
    rng = _rng(draw)
    args = [arrays(draw, dtype, (n, d)), rng.integers(0, nc, size=(n,)).astype(np.int64),
            arrays(draw, dtype, (nc - 1, d)),
            arrays(draw, dtype, (nc - 1, 1)) if draw(st.booleans()) else None, None, None]
    if draw(st.booleans()):
        width = draw(st.integers(1, 3))
        table = rng.integers(0, nc - 1, size=(n, width))
        lens = rng.integers(1, width + 1, size=n)
        table[np.arange(width)[None, :] >= lens[:, None]] = -1
        args[4] = table.astype(np.int64)
        args[5] = rng.integers(0, 2, size=(n, width)).astype(np.int64)
    return Sample(args, {"num_classes": nc}, grad_args=(0, 2, 3))


record("hsigmoid_loss", _hsigmoid, dtypes=FLOATS, grad_order=2,
       errors=[([np.zeros((2, 3), F32), np.array([0, 1]), np.zeros((3, 4), F32), None, None,
                 None], {"num_classes": 4}, InvalidArgumentError, "one feature size"),
               ([np.zeros((2, 3), F32), np.array([0, 5]), np.zeros((3, 3), F32), None, None,
                 None], {"num_classes": 4}, InvalidArgumentError, "labels must lie"),
               ([np.zeros((2, 3), F32), np.array([0, 1]), np.zeros((3, 3), F32), None, None,
                 None], {"num_classes": 1}, InvalidArgumentError, "'num_classes' must be")])
