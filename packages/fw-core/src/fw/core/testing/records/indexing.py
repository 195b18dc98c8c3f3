"""Records for indexing ops: getitem/setitem over random NumPy keys, gather/scatter,
slices, masks and diagonals. Index inputs are drawn in range (negative values
included where the op allows them); error cases cover out-of-range indices."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import ALL_NUMERIC, FLOATS, Sample, arrays, record, shapes
from fw.core.testing.records import _ties

MOVE = ALL_NUMERIC + (_dt.bool_, _dt.float16, _dt.complex64)
I64 = np.int64
F32 = np.float32


def _ints(draw, shape, lo, hi):
    """An int64 array of `shape` with values in [lo, hi]."""
    return arrays(draw, _dt.int64, tuple(shape), lo, hi) if hi >= lo else \
        np.zeros(shape, I64)


def _unique_ints(draw, n, hi):
    """n distinct ints from [0, hi) (n <= hi)."""
    return np.asarray(draw(st.permutations(list(range(hi))))[:n], I64)


# ---------------------------------------------------------------- keys
def _key(draw, shape):
    """A random NumPy key for an array of `shape` -> (encoded index, index arrays).

    Mixes ints, slices (any step), None, Python bools, integer arrays (one shared
    shape, so they broadcast), boolean masks and at most one Ellipsis, which sits
    between items indexing the leading dims and items indexing the trailing dims."""
    nd = len(shape)
    state = {"adv": None, "mode": None}
    head, head_arrs, j = _key_items(draw, shape, 0, nd, state)
    if not draw(st.booleans()):
        return tuple(head), head_arrs
    # the items after the Ellipsis index the last dims of x
    start = draw(st.integers(j, nd))
    tail, tail_arrs, _ = _key_items(draw, shape, start, nd, state, exact=True)
    return tuple(head) + ("...",) + tuple(tail), head_arrs + tail_arrs


def _key_items(draw, shape, j, stop, state, exact=False):
    """Items indexing dims j.. of x; with `exact` they index exactly up to `stop`."""
    enc, arrs = [], []
    n = 0
    while j < stop and (exact or draw(st.integers(0, 3))):
        d = shape[j]
        n += 1
        kind = "slice" if n > 6 else draw(st.sampled_from(["int", "slice", "slice", "new",
                                                           "arr", "mask", "bool"]))
        if kind == "int" and d > 0:
            enc.append(draw(st.integers(-d, d - 1)))
            j += 1
        elif kind == "new":
            enc.append(None)
        elif kind == "bool" and state["mode"] is None:  # x[True] / x[False]: a 0-D mask
            state["mode"] = "mask"
            enc.append("t")
            arrs.append(np.asarray(draw(st.booleans())))
        elif kind == "arr" and d > 0 and state["mode"] != "mask":
            state["mode"] = "arr"  # index arrays share one shape; masks do not mix in
            if state["adv"] is None:
                state["adv"] = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
            enc.append("t")
            arrs.append(_ints(draw, state["adv"], -d, d - 1))
            j += 1
        elif kind == "mask" and state["mode"] is None:
            state["mode"] = "mask"
            m = min(draw(st.integers(0, 2)), stop - j)
            enc.append("t")
            arrs.append(arrays(draw, _dt.bool_, tuple(shape[j:j + m])))
            j += m
        else:
            b = st.one_of(st.none(), st.integers(-d - 2, d + 2))
            enc.append((draw(b), draw(b), draw(st.sampled_from([None, 1, 2, -1, -2, 3]))))
            j += 1
    return enc, arrs, j


def _region(x, index, arrs):
    from fw.core.ops._index_key import numpy_key

    return x[numpy_key(index, arrs)]


def _getitem(draw, dtype):
    shape = shapes(draw, max_dims=4)
    index, arrs = _key(draw, shape)
    return Sample([arrays(draw, dtype, shape, special=True), arrs], {"index": index})


_BAD_KEYS = [
    ([np.ones((2, 3), F32), ()], {"index": (5,)}, InvalidArgumentError,
     r"index 5 is out of range for axis 0.*\[-2, 1\]"),
    # the first index past the end, and the first before the start
    ([np.ones((2, 3), F32), ()], {"index": (0, 3)}, InvalidArgumentError,
     r"index 3 is out of range for axis 1.*\[-3, 2\]"),
    ([np.ones((2, 3), F32), ()], {"index": (-3,)}, InvalidArgumentError,
     r"index -3 is out of range for axis 0.*\[-2, 1\]"),
    ([np.ones((2, 3), F32), ()], {"index": (0, 0, 0)}, InvalidArgumentError, "too many indices"),
    ([np.ones((2, 3), F32), ()], {"index": ("...", "...")}, InvalidArgumentError,
     "single ellipsis"),
    ([np.ones((2, 3), F32), (np.asarray([0, 7]),)], {"index": ("t",)}, InvalidArgumentError,
     r"values in \[0, 7\].*size 2 \(valid range \[-2, 1\]\)"),
    ([np.ones((2, 3), F32), (np.asarray([True, False, True]),)], {"index": ("t",)},
     InvalidArgumentError, "does not match"),
    ([np.ones((2, 3), F32), (np.asarray([0.5]),)], {"index": ("t",)}, InvalidTypeError,
     "integer or bool"),
    ([np.ones((2, 3), F32), ()], {"index": ((None, None, 0),)}, InvalidArgumentError,
     "step cannot be zero"),
]

record("getitem", _getitem, dtypes=MOVE, grad_order=2, errors=_BAD_KEYS)


def _setitem(draw, dtype):
    shape = shapes(draw, max_dims=4)
    index, arrs = _key(draw, shape)
    x = arrays(draw, dtype, shape, special=True)
    region = _region(x, index, arrs).shape
    vshape = list(region)
    # broadcast the value: drop leading dims, or set some to 1
    vshape = vshape[draw(st.integers(0, len(vshape))):]
    vshape = [1 if draw(st.integers(0, 3)) == 0 else d for d in vshape]
    vdtype = draw(st.sampled_from([dtype, dtype, _dt.float64 if dtype.kind != _dt._COMPLEX
                                   else dtype]))
    return Sample([x, arrays(draw, vdtype, tuple(vshape)), arrs], {"index": index},
                  grad_args=(0, 1))


record("setitem", _setitem, dtypes=MOVE, grad_order=1,
       errors=[
           ([np.ones((2, 3), F32), np.ones((), F32), ()], {"index": (5,)},
            InvalidArgumentError, r"index 5 is out of range for axis 0.*\[-2, 1\]"),
           ([np.ones((2, 3), F32), np.ones((), F32), (np.asarray([0, 9]),)], {"index": ("t",)},
            InvalidArgumentError, r"setitem: index tensor 0 .*values in \[0, 9\]"),
           ([np.ones((2, 3), F32), np.ones((), F32), ()], {"index": (0, 0, 0)},
            InvalidArgumentError, "too many indices"),
           ([np.ones((2, 3), F32), np.ones((4,), F32), ()], {"index": (0,)},
            InvalidArgumentError, "cannot be broadcast"),
           ([np.ones((2, 3), F32), np.ones((), np.complex64), ()], {"index": (0,)},
            InvalidTypeError, "complex")])


# ---------------------------------------------------------------- gather family
def _axis_and_index(draw, shape, max_rank=1, min_rank=0):
    nd = len(shape)
    a = draw(st.integers(-nd, nd - 1))
    d = shape[a]
    ishape = tuple(draw(st.lists(st.integers(0, 4), min_size=min_rank, max_size=max_rank)))
    return a, _ints(draw, ishape, -d, d - 1) if d else np.zeros(
        tuple(0 for _ in ishape) if ishape else (0,), I64)


def _gather(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3)
    a, idx = _axis_and_index(draw, shape, max_rank=2)
    return Sample([arrays(draw, dtype, shape, special=True), idx],
                  {"axis": draw(st.sampled_from([a, None])) if a == 0 else a})


record("gather", _gather, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((3, 2), F32), np.asarray([0, 3])], {"axis": 0}, InvalidArgumentError,
                r"gather: 'index' holds values in \[0, 3\].*size 3 \(valid range \[-3, 2\]\)"),
               ([np.ones((3, 2), F32), np.asarray([0.0])], {"axis": 0}, InvalidTypeError,
                "integer tensor"),
               ([np.ones((3, 2), F32), np.asarray([0])], {"axis": 2}, InvalidArgumentError,
                "out of range")])


def _gather_nd(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    k = draw(st.integers(0, len(shape)))
    batch = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    idx = np.stack([_ints(draw, batch, -shape[i], shape[i] - 1) for i in range(k)], -1) if k \
        else np.zeros(batch + (0,), I64)
    return Sample([arrays(draw, dtype, shape), idx.astype(I64)], {})


record("gather_nd", _gather_nd, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((3, 2), F32), np.asarray([[0, 2]])], {}, InvalidArgumentError,
                r"values in \[2, 2\].*axis 1 of x has size 2"),
               ([np.ones((3,), F32), np.asarray([[0, 0]])], {}, InvalidArgumentError,
                "indexes 2 dimensions")])


def _along(draw, dtype, with_values=False):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1, max_side=4)
    nd = len(shape)
    a = draw(st.integers(-nd, nd - 1))
    broadcast = draw(st.booleans())
    if broadcast:
        ishape = [draw(st.sampled_from([1, d])) for d in shape]
    else:
        ishape = [draw(st.integers(1, d)) for d in shape]
    ishape[a] = draw(st.integers(0, 4))
    d = shape[a]
    idx = _ints(draw, ishape, -d, d - 1)
    return shape, a, broadcast, idx


def _take_along_axis(draw, dtype):
    shape, a, broadcast, idx = _along(draw, dtype)
    return Sample([arrays(draw, dtype, shape, special=True), idx],
                  {"axis": a, "broadcast": broadcast})


record("take_along_axis", _take_along_axis, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((3, 2), F32), np.asarray([[3]])], {"axis": 0, "broadcast": True},
                InvalidArgumentError, r"'indices' holds values in \[3, 3\]"),
               ([np.ones((3, 2), F32), np.asarray([0])], {"axis": 0, "broadcast": True},
                InvalidArgumentError, "same number of dimensions")])


def _take(draw, dtype):
    shape = shapes(draw, min_side=1, max_dims=3)
    n = int(np.prod(shape))
    mode = draw(st.sampled_from(["raise", "wrap", "clip"]))
    lo, hi = (-n, n - 1) if mode == "raise" else (-3 * n, 3 * n)
    idx = _ints(draw, shapes(draw, max_dims=2), lo, hi)
    return Sample([arrays(draw, dtype, shape), idx], {"mode": mode})


record("take", _take, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((2, 2), F32), np.asarray([4])], {"mode": "raise"},
                InvalidArgumentError, r"\[-4, 3\]"),
               ([np.ones((2, 2), F32), np.asarray([0])], {"mode": "bogus"},
                InvalidArgumentError, "'mode'")])


def _multiplex(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3)
    k = draw(st.integers(1, 3))
    idx = _ints(draw, (shape[0], 1), 0, k - 1)
    return Sample([[arrays(draw, dtype, shape) for _ in range(k)], idx.astype(np.int32)], {})


record("multiplex", _multiplex, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[(((np.ones((2, 2), F32), np.ones((2, 2), F32)), np.asarray([[0], [2]])), {},
                InvalidArgumentError, r"values in \[0, 2\] but the list of inputs has size 2"),
               (((np.ones((2, 2), F32),), np.asarray([0, 0])), {}, InvalidArgumentError,
                "must have shape")])


# ---------------------------------------------------------------- scatter family
def _scatter(unique):
    def sample(draw, dtype):
        shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
        n = shape[0]
        if unique:
            idx = _unique_ints(draw, draw(st.integers(0, n)), n)
        else:
            idx = _ints(draw, (draw(st.integers(0, 5)),), -n, n - 1)
        upd = arrays(draw, dtype, (len(idx),) + tuple(shape[1:]))
        return Sample([arrays(draw, dtype, shape), idx, upd],
                      {"overwrite": draw(st.booleans())})
    return sample


_BAD_SCATTER = [([np.ones((3, 2), F32), np.asarray([3]), np.ones((1, 2), F32)],
                 {"overwrite": True}, InvalidArgumentError,
                 r"scatter: 'index' holds values in \[3, 3\].*valid range \[-3, 2\]"),
                ([np.ones((3, 2), F32), np.asarray([0]), np.ones((2, 2), F32)],
                 {"overwrite": True}, InvalidArgumentError, "'updates' must have shape")]
record("scatter", _scatter(True), dtypes=MOVE, grad_order=2, errors=_BAD_SCATTER)
record("scatter", _scatter(False), dtypes=ALL_NUMERIC, grad_order=0,
       note="duplicate indices: the last update wins (overwrite) or they add up")


def _scatter_nd_add(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    k = draw(st.integers(1, len(shape)))
    batch = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    idx = np.stack([_ints(draw, batch, -shape[i], shape[i] - 1) for i in range(k)], -1)
    upd = arrays(draw, dtype, batch + tuple(shape[k:]))
    return Sample([arrays(draw, dtype, shape), idx.astype(I64), upd], {})


record("scatter_nd_add", _scatter_nd_add, dtypes=ALL_NUMERIC, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((3, 2), F32), np.asarray([[5]]), np.ones((1, 2), F32)], {},
                InvalidArgumentError, r"values in \[5, 5\].*axis 0 of x has size 3"),
               ([np.ones((3, 2), F32), np.asarray([[1]]), np.ones((1, 3), F32)], {},
                InvalidArgumentError, "'updates' must have shape")])


def _put_along(reduces, unique):
    def sample(draw, dtype):
        shape, a, broadcast, idx = _along(draw, dtype)
        if unique:  # distinct targets along the axis: a smooth function of values
            d = shape[a]
            ishape = list(idx.shape)
            ishape[a] = draw(st.integers(0, d))
            perm = _unique_ints(draw, ishape[a], d)
            view = [1] * len(ishape)
            view[a] = ishape[a]
            idx = np.broadcast_to(perm.reshape(view), ishape).copy()
        vshape = idx.shape if not broadcast or draw(st.booleans()) else ()
        return Sample([arrays(draw, dtype, shape), idx, arrays(draw, dtype, vshape)],
                      {"axis": a, "reduce": draw(st.sampled_from(reduces)),
                       "include_self": draw(st.booleans()), "broadcast": broadcast})
    return sample


record("put_along_axis", _put_along(["assign", "add", "mul", "multiply", "mean", "amin",
                                     "amax"], False),
       dtypes=ALL_NUMERIC, grad_order=0, dynamic_ok=False,
       errors=[([np.ones((3, 2), F32), np.asarray([[3]]), np.ones((1, 1), F32)],
                {"axis": 0}, InvalidArgumentError, r"'indices' holds values in \[3, 3\]"),
               ([np.ones((3, 2), F32), np.asarray([[0]]), np.ones((1, 1), F32)],
                {"axis": 0, "reduce": "max"}, InvalidArgumentError, "'reduce'")])
record("put_along_axis", _put_along(["assign", "add"], True), dtypes=FLOATS, grad_order=2,
       dynamic_ok=False)


def _index_axis(draw, dtype, unique=False):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    nd = len(shape)
    a = draw(st.integers(-nd, nd - 1))
    d = shape[a]
    idx = _unique_ints(draw, draw(st.integers(0, d)), d) if unique else \
        _ints(draw, (draw(st.integers(0, 4)),), -d, d - 1)
    return shape, a, idx


def _index_add(draw, dtype):
    shape, a, idx = _index_axis(draw, dtype)
    vshape = list(shape)
    vshape[a] = len(idx)
    return Sample([arrays(draw, dtype, shape), idx, arrays(draw, dtype, tuple(vshape))],
                  {"axis": a})


record("index_add", _index_add, dtypes=ALL_NUMERIC, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((3, 2), F32), np.asarray([3]), np.ones((1, 2), F32)], {"axis": 0},
                InvalidArgumentError, r"'index' holds values in \[3, 3\]"),
               ([np.ones((3, 2), F32), np.asarray([0]), np.ones((2, 2), F32)], {"axis": 0},
                InvalidArgumentError, "'value' must have shape")])


def _index_fill(draw, dtype):
    shape, a, idx = _index_axis(draw, dtype)
    return Sample([arrays(draw, dtype, shape), idx, arrays(draw, dtype, ())], {"axis": a})


record("index_fill", _index_fill, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((3, 2), F32), np.asarray([-4]), np.ones((), F32)], {"axis": 0},
                InvalidArgumentError, r"values in \[-4, -4\]"),
               ([np.ones((3, 2), F32), np.asarray([0]), np.ones((2,), F32)], {"axis": 0},
                InvalidArgumentError, "one element")])


def _index_put(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    k = draw(st.integers(1, len(shape)))
    accumulate = draw(st.booleans())
    if draw(st.booleans()) and not accumulate:
        idx = [arrays(draw, _dt.bool_, tuple(shape[:k]))]
    else:
        b = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        idx = [_ints(draw, b, -shape[i], shape[i] - 1) for i in range(k)]
    x = arrays(draw, dtype, shape)
    region = x[tuple(idx)].shape
    vshape = region[draw(st.integers(0, len(region))):]
    return Sample([x, idx, arrays(draw, dtype, vshape)], {"accumulate": accumulate},
                  grad_args=(0,) if accumulate else None)


record("index_put", _index_put, dtypes=ALL_NUMERIC, grad_order=1, dynamic_ok=False,
       errors=[([np.ones((3, 2), F32), (np.asarray([3]),), np.ones((), F32)], {},
                InvalidArgumentError, r"index tensor 0 .*values in \[3, 3\]"),
               ([np.ones((3, 2), F32), (np.asarray([0]),), np.ones((3,), F32)], {},
                InvalidArgumentError, "cannot be broadcast")])


# ---------------------------------------------------------------- masks
def _mask_pair(draw, dtype, special=True):
    from fw.core.testing import broadcast_pair

    sx, sm = broadcast_pair(draw, max_dims=3)
    return arrays(draw, dtype, sx, special=special), arrays(draw, _dt.bool_, sm)


def _masked_fill(draw, dtype):
    x, m = _mask_pair(draw, dtype)
    return Sample([x, m, arrays(draw, dtype, draw(st.sampled_from([(), (1,)])))], {})


_BAD_MASK = ([np.ones((2, 3), F32), np.ones((2, 3), F32), np.ones((), F32)], {},
             InvalidTypeError, "bool tensor")
record("masked_fill", _masked_fill, dtypes=MOVE, grad_order=2,
       errors=[_BAD_MASK, ([np.ones((2, 3), F32), np.ones((4,), bool), np.ones((), F32)], {},
                           InvalidArgumentError, "cannot broadcast")])


def _masked_select(draw, dtype):
    x, m = _mask_pair(draw, dtype)
    return Sample([x, m], {})


record("masked_select", _masked_select, dtypes=MOVE, grad_order=2,
       errors=[(_BAD_MASK[0][:2], {}, InvalidTypeError, "bool tensor")])


def _masked_scatter(draw, dtype):
    x, m = _mask_pair(draw, dtype)
    n = int(np.count_nonzero(np.broadcast_arrays(x, m)[1]))
    return Sample([x, m, arrays(draw, dtype, (n + draw(st.integers(0, 2)),))], {})


record("masked_scatter", _masked_scatter, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((3,), F32), np.ones((3,), bool), np.ones((2,), F32)], {},
                InvalidArgumentError, "selects 3 elements"),
               ([np.ones((3,), F32), np.ones((3,), bool), np.ones((3,), np.float64)], {},
                InvalidTypeError, "must have x's dtype")])


# ---------------------------------------------------------------- slices
def _slice_attrs(draw, shape):
    nd = len(shape)
    axes = draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd)) if nd else []
    starts, ends, strides = [], [], []
    for a in axes:
        d = shape[a]
        starts.append(draw(st.integers(-d - 3, d + 3)))
        ends.append(draw(st.sampled_from([draw(st.integers(-d - 3, d + 3)), 2**63 - 1,
                                          -2**63])))
        strides.append(draw(st.sampled_from([1, 1, 2, -1, -2, 3])))
    axes = [a - nd * draw(st.integers(0, 1)) for a in axes]
    return {"axes": axes, "starts": starts, "ends": ends, "strides": strides}


def _strided_slice(draw, dtype):
    shape = shapes(draw)
    return Sample([arrays(draw, dtype, shape, special=True)], _slice_attrs(draw, shape))


_BAD_SLICE = [([np.ones((2, 3), F32)], {"axes": [0], "starts": [0], "ends": [1],
                                         "strides": [0]}, InvalidArgumentError, "must not "
                                                                                  "contain 0"),
              ([np.ones((2, 3), F32)], {"axes": [0, 0], "starts": [0, 0], "ends": [1, 1],
                                        "strides": [1, 1]}, InvalidArgumentError, "repeats"),
              ([np.ones((2, 3), F32)], {"axes": [0], "starts": [0, 1], "ends": [1],
                                        "strides": [1]}, InvalidArgumentError, "same length")]
record("strided_slice", _strided_slice, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=_BAD_SLICE)


def _slice_scatter(draw, dtype):
    shape = shapes(draw)
    attrs = _slice_attrs(draw, shape)
    x = arrays(draw, dtype, shape)
    from fw.core.ops.indexing import _runtime_slices

    region = x[_runtime_slices(shape, attrs["axes"], attrs["starts"], attrs["ends"],
                               attrs["strides"])].shape
    vshape = [1 if draw(st.integers(0, 3)) == 0 else d for d in region]
    return Sample([x, arrays(draw, dtype, tuple(vshape))], attrs)


record("slice_scatter", _slice_scatter, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3), F32), np.ones((2, 2), F32)],
                {"axes": [1], "starts": [0], "ends": [1], "strides": [1]},
                InvalidArgumentError, "cannot be broadcast")])


# ---------------------------------------------------------------- diagonals
def _diag_attrs(draw, shape):
    nd = len(shape)
    a1, a2 = draw(st.lists(st.integers(0, nd - 1), min_size=2, max_size=2, unique=True))
    return {"offset": draw(st.integers(-4, 4)), "axis1": a1 - nd * draw(st.integers(0, 1)),
            "axis2": a2}


def _diagonal(draw, dtype):
    shape = shapes(draw, min_dims=2, max_dims=4)
    return Sample([arrays(draw, dtype, shape, special=True)], _diag_attrs(draw, shape))


record("diagonal", _diagonal, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3), F32)], {"axis1": 0, "axis2": 0}, InvalidArgumentError,
                "must differ"),
               ([np.ones((3,), F32)], {}, InvalidArgumentError, "at least 2")])


def _diagonal_scatter(draw, dtype):
    shape = shapes(draw, min_dims=2, max_dims=4)
    attrs = _diag_attrs(draw, shape)
    x = arrays(draw, dtype, shape)
    ys = np.diagonal(x, attrs["offset"], attrs["axis1"], attrs["axis2"]).shape
    return Sample([x, arrays(draw, dtype, ys)], attrs)


record("diagonal_scatter", _diagonal_scatter, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3), F32), np.ones((3,), F32)], {}, InvalidArgumentError,
                "'y' must have shape")])


# ---------------------------------------------------------------- one_hot / shard_index
def _one_hot(draw, dtype):
    n = draw(st.integers(1, 5))
    return Sample([_ints(draw, shapes(draw, max_dims=3), 0, n - 1).astype(dtype.np)],
                  {"num_classes": n})


record("one_hot", _one_hot, dtypes=(_dt.int32, _dt.int64), grad_order=0,
       errors=[([np.asarray([0, 3])], {"num_classes": 3}, InvalidArgumentError,
                r"values in \[0, 3\].*\[0, 2\]"),
               ([np.asarray([0.0])], {"num_classes": 3}, InvalidTypeError, "integer")])


def _shard_index(draw, dtype):
    index_num = draw(st.integers(1, 20))
    nshards = draw(st.integers(1, 4))
    x = _ints(draw, shapes(draw, max_dims=2), 0, index_num - 1).astype(dtype.np)
    return Sample([x], {"index_num": index_num, "nshards": nshards,
                        "shard_id": draw(st.integers(0, nshards - 1)),
                        "ignore_value": draw(st.sampled_from([-1, 0, 99]))})


record("shard_index", _shard_index, dtypes=(_dt.int32, _dt.int64), grad_order=0,
       errors=[([np.asarray([[25]])], {"index_num": 20, "nshards": 2}, InvalidArgumentError,
                r"'input' holds values in \[25, 25\]"),
               ([np.asarray([[1]])], {"index_num": 20, "nshards": 2, "shard_id": 2},
                InvalidArgumentError, "shard_id")])


# ---------------------------------------------------------------- duplicates (issue 18)
# repeated indices, checked against the loop oracles of _ties.py: the last write wins
# (scatter overwrite), every update counts (the accumulating forms)
def _scatter_dups(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    idx = _ties.dup_indices(draw, shape[0])
    return Sample([arrays(draw, dtype, shape), idx,
                   arrays(draw, dtype, (len(idx),) + tuple(shape[1:]))],
                  {"overwrite": draw(st.booleans())})


record("scatter", _scatter_dups, dtypes=ALL_NUMERIC, grad_order=0, kind="duplicates",
       oracle=_ties.scatter_oracle)


def _index_add_dups(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    a = draw(st.integers(-len(shape), len(shape) - 1))
    idx = _ties.dup_indices(draw, shape[a])
    vshape = list(shape)
    vshape[a] = len(idx)
    return Sample([arrays(draw, dtype, shape), idx, arrays(draw, dtype, tuple(vshape))],
                  {"axis": a})


record("index_add", _index_add_dups, dtypes=ALL_NUMERIC, grad_order=0, dynamic_ok=False,
       kind="duplicates", oracle=_ties.index_add_oracle)


def _scatter_nd_dups(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    k = draw(st.integers(1, len(shape)))
    point = [draw(st.integers(-d, d - 1)) for d in shape[:k]]
    other = [draw(st.integers(-d, d - 1)) for d in shape[:k]]
    rows = [draw(st.sampled_from([point, other])) for _ in range(draw(st.integers(1, 5)))]
    idx = np.asarray(rows, I64)
    return Sample([arrays(draw, dtype, shape), idx,
                   arrays(draw, dtype, (len(rows),) + tuple(shape[k:]))], {})


record("scatter_nd_add", _scatter_nd_dups, dtypes=ALL_NUMERIC, grad_order=0, dynamic_ok=False,
       kind="duplicates", oracle=_ties.scatter_nd_add_oracle)


def _put_along_dups(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    nd = len(shape)
    a = draw(st.integers(0, nd - 1))
    ishape = list(shape)
    ishape[a] = draw(st.integers(1, 4))
    # every slice along `a` aims at one or two targets: repeated indices
    pool = [draw(st.integers(-shape[a], shape[a] - 1)) for _ in range(2)]
    idx = np.asarray(draw(st.lists(st.sampled_from(pool), min_size=int(np.prod(ishape)),
                                   max_size=int(np.prod(ishape)))), I64).reshape(ishape)
    vals = arrays(draw, dtype, tuple(ishape), -3, 3)
    return Sample([arrays(draw, dtype, shape, -3, 3), idx, vals],
                  {"axis": a, "reduce": draw(st.sampled_from(["add", "mul", "mean", "amin",
                                                              "amax", "multiply"])),
                   "include_self": draw(st.booleans()), "broadcast": False})


record("put_along_axis", _put_along_dups, dtypes=ALL_NUMERIC, grad_order=0, dynamic_ok=False,
       kind="duplicates", oracle=_ties.put_along_axis_oracle,
       note="no 'assign': which duplicate write lands is unspecified there")


def _index_put_dups(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3, min_side=1)
    k = draw(st.integers(1, len(shape)))
    n = draw(st.integers(1, 5))
    idx = [_ties.dup_indices(draw, shape[i], n)[:1].repeat(n) if draw(st.booleans())
           else _ints(draw, (n,), -shape[i], shape[i] - 1) for i in range(k)]
    return Sample([arrays(draw, dtype, shape), idx, arrays(draw, dtype, (n,) + tuple(shape[k:]))],
                  {"accumulate": True})


def _index_put_oracle(x, indices, value, accumulate=True):
    out = np.array(x, copy=True)
    n = len(indices[0])
    v = np.broadcast_to(np.asarray(value), (n,) + x.shape[len(indices):])
    for j in range(n):  # one point at a time: duplicates add up
        key = tuple(int(ix[j]) for ix in indices)
        out[key] += v[j]
    return out


record("index_put", _index_put_dups, dtypes=ALL_NUMERIC, grad_order=0, dynamic_ok=False,
       kind="duplicates", oracle=_index_put_oracle)
