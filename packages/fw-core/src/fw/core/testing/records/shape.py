"""Records for shape ops."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import ALL_NUMERIC, Sample, arrays, broadcast_pair, record, shapes

MOVE = ALL_NUMERIC + (_dt.bool_, _dt.float16, _dt.complex64)  # data movement: any dtype
F32 = np.float32


def _axis(draw, nd):
    return draw(st.integers(-nd, nd - 1))


def _axes_subset(draw, nd):
    return draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd)) if nd else []


# ---------------------------------------------------------------- reshape & views
def _reshape(draw, dtype):
    shape = shapes(draw, min_side=1)
    n = int(np.prod(shape))
    # a factorisation of n, with maybe one -1 (and maybe a 0 copying x's dim)
    dims = []
    rest = n
    for f in (2, 3, 5):
        while rest % f == 0 and draw(st.booleans()):
            dims.append(f)
            rest //= f
    dims.append(rest)
    draw(st.randoms()).shuffle(dims)
    if draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return Sample([arrays(draw, dtype, shape, special=True)], {"shape": dims})


def _reshape_dyn(draw, dtype):
    s = _reshape(draw, dtype)
    dims = s.attrs["shape"]
    static = [d if d == -1 or draw(st.booleans()) else -1 for d in dims]
    return Sample([s.args[0], np.array(dims, np.int64)], {"static_shape": static})


record("reshape_dyn", _reshape_dyn, dtypes=ALL_NUMERIC, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3)), np.array([4, 2])], {"static_shape": [-1, -1]},
                InvalidArgumentError, "cannot reshape"),
               ([np.ones((2, 3)), np.array([3, 2])], {"static_shape": [2, 3]},
                InvalidArgumentError, "does not match")])
def _expand_dyn(draw, dtype):
    shape = shapes(draw, max_dims=3)
    lead = draw(st.lists(st.integers(1, 3), max_size=2))
    target = lead + [d if d != 1 else draw(st.integers(1, 3)) for d in shape]
    sizes = [t if i < len(lead) or draw(st.booleans()) else -1 for i, t in enumerate(target)]
    static = [s if s == -1 or draw(st.booleans()) else -2 for s in sizes]
    return Sample([arrays(draw, dtype, shape), np.array(sizes, np.int64)],
                  {"static_shape": static})


record("expand_dyn", _expand_dyn, dtypes=ALL_NUMERIC, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3)), np.array([4, 3])], {"static_shape": [-2, -2]},
                InvalidArgumentError, "cannot be expanded"),
               ([np.ones((2, 3)), np.array([2, 3])], {"static_shape": [2, 4]},
                InvalidArgumentError, "does not match")])
record("reshape", _reshape, dtypes=ALL_NUMERIC, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3))], {"shape": [4, 2]}, InvalidArgumentError, "cannot reshape"),
               ([np.ones((2, 3))], {"shape": [-1, -1]}, InvalidArgumentError, "more than one"),
               ([np.ones((2, 3))], {"shape": [2, 0, 0]}, InvalidArgumentError, "uses 0"),
               ([np.ones((2, 3))], {"shape": [-2, 3]}, InvalidArgumentError,
                "negative dimension -2"),
               ([np.ones((2, 3))], {"shape": [3, -3]}, InvalidArgumentError,
                "negative dimension -3")])


def _view_dtype(draw, dtype):
    shape = list(shapes(draw, min_dims=1, max_dims=3))
    shape[-1] = 8 * draw(st.integers(0, 2))
    target = draw(st.sampled_from([_dt.uint8, _dt.int16, _dt.int32, _dt.float32, _dt.int64,
                                   _dt.float64]))
    return Sample([arrays(draw, dtype, tuple(shape))], {"dtype": target})


record("view_dtype", _view_dtype, dtypes=ALL_NUMERIC, grad_order=0, dynamic_ok=False,
       errors=[([np.ones((2, 3), F32)], {"dtype": "float64"}, InvalidArgumentError,
                "not a multiple"),
               ([np.ones((), F32)], {"dtype": "int16"}, InvalidArgumentError, "0-D")])


def _transpose(draw, dtype):
    shape = shapes(draw)
    perm = list(range(len(shape)))
    draw(st.randoms()).shuffle(perm)
    if perm and draw(st.booleans()):
        perm[0] -= len(shape)  # negative axes are allowed
    return Sample([arrays(draw, dtype, shape)], {"perm": draw(st.sampled_from([perm, None]))})


record("transpose", _transpose, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((2, 3))], {"perm": [0, 0]}, InvalidArgumentError, "not a permutation"),
               ([np.ones((2, 3))], {"perm": [0]}, InvalidArgumentError, "not a permutation")])


def _squeeze(draw, dtype):
    shape = shapes(draw, max_side=2)
    nd = len(shape)
    axis = draw(st.one_of(st.none(), st.just(_axes_subset(draw, nd)),
                          st.integers(-nd, nd - 1) if nd else st.none()))
    return Sample([arrays(draw, dtype, shape)], {"axis": axis})


record("squeeze", _squeeze, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((1, 3))], {"axis": 2}, InvalidArgumentError, "out of range")])


def _unsqueeze(draw, dtype):
    shape = shapes(draw, max_dims=3)
    axes = []
    n = len(shape)
    for _ in range(draw(st.integers(1, 3))):
        axes.append(draw(st.integers(-(n + 1), n)))
        n += 1
    return Sample([arrays(draw, dtype, shape)], {"axis": draw(st.sampled_from([axes,
                                                                               axes[0]]))})


record("unsqueeze", _unsqueeze, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((2, 3))], {"axis": [3, 5]}, InvalidArgumentError, "out of range")])


def _flatten(draw, dtype):
    shape = shapes(draw)
    nd = len(shape)
    if nd == 0:
        s = e = draw(st.sampled_from([0, -1]))
    else:
        s = draw(st.integers(0, nd - 1))
        e = draw(st.integers(s, nd - 1))
        s, e = s - nd * draw(st.integers(0, 1)), e - nd * draw(st.integers(0, 1))
    return Sample([arrays(draw, dtype, shape, special=True)], {"start_axis": s, "stop_axis": e})


record("flatten", _flatten, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((2, 3, 4))], {"start_axis": 2, "stop_axis": 1}, InvalidArgumentError,
                "must not come after")])


def _unflatten(draw, dtype):
    shape = shapes(draw, min_dims=1, min_side=1)
    nd = len(shape)
    a = draw(st.integers(0, nd - 1))
    d = shape[a]
    f = draw(st.sampled_from([k for k in range(1, d + 1) if d % k == 0]))
    sizes = [f, d // f]
    if draw(st.booleans()):
        sizes[draw(st.integers(0, 1))] = -1
    return Sample([arrays(draw, dtype, shape)], {"axis": a - nd * draw(st.integers(0, 1)),
                                                 "shape": sizes})


record("unflatten", _unflatten, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((6, 2))], {"axis": 0, "shape": [4, 2]}, InvalidArgumentError,
                "has size 6"),
               ([np.ones((6, 2))], {"axis": 0, "shape": [-1, -1]}, InvalidArgumentError,
                "one -1")])


# ---------------------------------------------------------------- join / split
def _concat(draw, dtype):
    shape = list(shapes(draw, min_dims=1, max_dims=3))
    nd = len(shape)
    a = draw(st.integers(0, nd - 1))
    xs = []
    for _ in range(draw(st.integers(1, 3))):
        s = list(shape)
        s[a] = draw(st.integers(0, 3))
        xs.append(arrays(draw, dtype, tuple(s), special=True))
    return Sample([xs], {"axis": a - nd * draw(st.integers(0, 1))})


record("concat", _concat, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[(((np.ones((2, 3)), np.ones((3, 3))),), {"axis": 1}, InvalidArgumentError,
                "must agree"),
               (((np.ones(()), np.ones(())),), {"axis": 0}, InvalidArgumentError, "0-D")])


def _stack(draw, dtype):
    shape = shapes(draw, max_dims=3)
    n = draw(st.integers(1, 3))
    nd = len(shape) + 1
    return Sample([[arrays(draw, dtype, shape) for _ in range(n)]],
                  {"axis": draw(st.integers(-nd, nd - 1))})


record("stack", _stack, dtypes=MOVE, grad_order=2,
       errors=[(((np.ones((2,)), np.ones((3,))),), {"axis": 0}, InvalidArgumentError,
                "one shape")])


def _split(draw, dtype):
    shape = list(shapes(draw, min_dims=1, max_dims=3))
    nd = len(shape)
    a = draw(st.integers(0, nd - 1))
    d = shape[a]
    if draw(st.booleans()) and d > 0:
        ns = draw(st.sampled_from([k for k in range(1, d + 1) if d % k == 0]))
    else:
        secs = []
        rest = d
        while rest > 0 and len(secs) < 3:
            s = draw(st.integers(0, rest))
            secs.append(s)
            rest -= s
        secs.append(rest)
        if draw(st.booleans()):
            secs[draw(st.integers(0, len(secs) - 1))] = -1
        ns = secs
    return Sample([arrays(draw, dtype, tuple(shape))], {"num_or_sections": ns,
                                                        "axis": a - nd * draw(st.integers(0, 1))})


record("split", _split, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((5, 2))], {"num_or_sections": 2, "axis": 0}, InvalidArgumentError,
                "equal parts"),
               ([np.ones((5, 2))], {"num_or_sections": [2, 2], "axis": 0}, InvalidArgumentError,
                "add up to"),
               ([np.ones((5, 2))], {"num_or_sections": [-1, -1], "axis": 0},
                InvalidArgumentError, "one -1")])


def _unbind(draw, dtype):
    shape = shapes(draw, min_dims=1, max_dims=3)
    nd = len(shape)
    return Sample([arrays(draw, dtype, shape)], {"axis": _axis(draw, nd)})


record("unbind", _unbind, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones(())], {"axis": 0}, InvalidArgumentError, "0-D")])


# ---------------------------------------------------------------- broadcasting
def _expand(draw, dtype):
    shape = shapes(draw, max_dims=3, max_side=3)
    target = []
    for d in shape:
        if d == 1:
            target.append(draw(st.integers(0, 3)))
        else:
            target.append(draw(st.sampled_from([d, -1])))
    lead = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2)))]
    return Sample([arrays(draw, dtype, shape, special=True)], {"shape": lead + target})


record("expand", _expand, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3))], {"shape": [2, 4]}, InvalidArgumentError, "not 1"),
               ([np.ones((2, 3))], {"shape": [3]}, InvalidArgumentError, "fewer dimensions"),
               ([np.ones((3,))], {"shape": [-1, 3]}, InvalidArgumentError, "new leading")])


def _expand_as(draw, dtype):
    sx, sy = broadcast_pair(draw, max_dims=3)
    out = np.broadcast_shapes(sx, sy)
    return Sample([arrays(draw, dtype, sx), arrays(draw, dtype, out)], {}, grad_args=(0,))


record("expand_as", _expand_as, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((2, 3)), np.ones((2, 4))], {}, InvalidArgumentError, "not 1")])


def _broadcast_tensors(draw, dtype):
    ss = broadcast_pair(draw, max_dims=3, num=draw(st.integers(1, 3)))
    return Sample([[arrays(draw, dtype, s, special=True) for s in ss]], {})


record("broadcast_tensors", _broadcast_tensors, dtypes=MOVE, grad_order=2,
       errors=[(((np.ones((2,)), np.ones((3,))),), {}, InvalidArgumentError, "cannot broadcast")])


def _tile(draw, dtype):
    shape = shapes(draw, max_dims=3, max_side=3)
    reps = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, len(shape) + 1)))]
    return Sample([arrays(draw, dtype, shape)], {"repeat_times": reps})


record("tile", _tile, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((2,))], {"repeat_times": [-1]}, InvalidArgumentError,
                "must not be negative")])


def _repeat_interleave(draw, dtype):
    shape = shapes(draw, max_dims=3, max_side=4)
    nd = len(shape)
    axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1))) if nd else None
    n = int(np.prod(shape)) if axis is None else shape[axis]
    if draw(st.booleans()):
        rep = np.asarray([draw(st.integers(0, 3)) for _ in range(n)], np.int64)
        return Sample([arrays(draw, dtype, shape), rep], {"repeats": 1, "axis": axis},
                      grad_args=(0,))
    return Sample([arrays(draw, dtype, shape), None], {"repeats": draw(st.integers(0, 3)),
                                                       "axis": axis})


record("repeat_interleave", _repeat_interleave, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2,)), np.asarray([1, 2, 3])], {"repeats": 1, "axis": 0},
                InvalidArgumentError, "3 entries"),
               ([np.ones((2,)), None], {"repeats": -1, "axis": 0}, InvalidArgumentError,
                "negative"),
               ([np.ones((2,)), np.asarray([1.0, 2.0])], {"repeats": 1, "axis": 0},
                InvalidTypeError, "integer tensor")])


# ---------------------------------------------------------------- reorder
def _flip(draw, dtype):
    shape = shapes(draw)
    axes = _axes_subset(draw, len(shape))
    return Sample([arrays(draw, dtype, shape, special=True)],
                  {"axis": draw(st.sampled_from([axes, axes[0]])) if axes else axes})


record("flip", _flip, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((2, 3))], {"axis": [0, 0]}, InvalidArgumentError, "repeats"),
               ([np.ones((2, 3))], {"axis": [2]}, InvalidArgumentError, "out of range")])


def _rot90(draw, dtype):
    shape = shapes(draw, min_dims=2, max_dims=3)
    nd = len(shape)
    a, b = draw(st.lists(st.integers(0, nd - 1), min_size=2, max_size=2, unique=True))
    return Sample([arrays(draw, dtype, shape)], {"k": draw(st.integers(-5, 5)),
                                                 "axes": [a, b - nd * draw(st.integers(0, 1))]})


record("rot90", _rot90, dtypes=MOVE, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3))], {"axes": [0, 0]}, InvalidArgumentError, "same axis"),
               ([np.ones((3,))], {"axes": [0, 1]}, InvalidArgumentError, "at least 2")])


def _roll(draw, dtype):
    shape = shapes(draw)
    nd = len(shape)
    if nd == 0 or draw(st.booleans()):
        return Sample([arrays(draw, dtype, shape)], {"shifts": draw(st.integers(-7, 7)),
                                                     "axis": None})
    axes = draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=3))
    return Sample([arrays(draw, dtype, shape)],
                  {"shifts": [draw(st.integers(-7, 7)) for _ in axes], "axis": axes})


record("roll", _roll, dtypes=MOVE, grad_order=2,
       errors=[([np.ones((2, 3))], {"shifts": [1, 2], "axis": [0]}, InvalidArgumentError,
                "same length")])


# ---------------------------------------------------------------- pad
def _pad(draw, dtype):
    shape = shapes(draw, max_dims=3, max_side=4)
    mode = draw(st.sampled_from(["constant", "reflect", "replicate", "circular"]))
    pads = []
    for d in shape:
        for _ in range(2):
            if mode == "constant":
                pads.append(draw(st.integers(-(d // 2), 3)))
            elif mode == "reflect":
                pads.append(draw(st.integers(0, max(d - 1, 0))))
            else:
                pads.append(draw(st.integers(0, d)) if d else 0)
    value = draw(st.sampled_from([0.0, 1.5, -2.0])) if dtype.kind >= _dt._FLOAT else 3
    return Sample([arrays(draw, dtype, shape)], {"paddings": pads, "mode": mode,
                                                 "value": value})


record("pad", _pad, dtypes=ALL_NUMERIC, grad_order=2, dynamic_ok=False,
       errors=[([np.ones((2, 3))], {"paddings": [1, 1]}, InvalidArgumentError, "per axis"),
               ([np.ones((2, 3))], {"paddings": [0, 0, 3, 0], "mode": "reflect"},
                InvalidArgumentError, "smaller than"),
               ([np.ones((2, 3))], {"paddings": [0, 0, -1, 0], "mode": "replicate"},
                InvalidArgumentError, "negative padding"),
               ([np.ones((2, 3))], {"paddings": [0, 0, 0, 0], "mode": "wrap"},
                InvalidArgumentError, "mode")])


# ---------------------------------------------------------------- products
def _kron(draw, dtype):
    sx = shapes(draw, max_dims=3, max_side=3)
    sy = shapes(draw, max_dims=3, max_side=3)
    return Sample([arrays(draw, dtype, sx), arrays(draw, dtype, sy)], {})


record("kron", _kron, dtypes=ALL_NUMERIC, grad_order=2, dynamic_ok=False)


def _as_strided(draw, dtype):
    shape = shapes(draw, min_side=1, max_dims=3)
    n = int(np.prod(shape))
    out_nd = draw(st.integers(0, 3))
    out = [draw(st.integers(0, 3)) for _ in range(out_nd)]
    stride = [draw(st.integers(0, 3)) for _ in range(out_nd)]
    reach = sum((a - 1) * s for a, s in zip(out, stride)) if 0 not in out else 0
    if reach >= n:
        out, stride = [n], [1]
        reach = n - 1
    offset = draw(st.integers(0, n - 1 - reach))
    return Sample([arrays(draw, dtype, shape)], {"shape": out, "stride": stride,
                                                 "offset": offset})


record("as_strided", _as_strided, dtypes=MOVE, grad_order=1, dynamic_ok=False,
       errors=[([np.ones((2, 3))], {"shape": [2, 2], "stride": [3, 3], "offset": 0},
                InvalidArgumentError, "only 6 elements"),
               ([np.ones((2, 3))], {"shape": [2], "stride": [1, 1], "offset": 0},
                InvalidArgumentError, "same length")])
