"""NumPy reference kernels of the shape ops (fw.core.ops.shape) and the shape
arithmetic they share with the ops' infer rules (split sizes, broadcast targets,
pad pairs, flip/rot90/roll axes, as_strided bounds). The ops themselves are declared
in shape.py, whose family they keep.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN
from fw.core.ops._infer import norm_axis, shp


def _mul(dims):
    """Product of dims, -1 if any is dynamic (0 wins: a 0-size tensor stays empty)."""
    n = 1
    dyn = False
    for d in dims:
        if d == 0:
            return 0
        if d == DYN:
            dyn = True
        else:
            n *= d
    return DYN if dyn else n


def _reshape_ref(x, shape=()):
    tgt = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return np.reshape(x, tgt)


def _view_dtype_shape(shape, src, dst):
    if src.itemsize == dst.itemsize:
        return tuple(shape)
    if len(shape) == 0:
        raise InvalidArgumentError(f"a 0-D tensor of {src.name} cannot be viewed as "
                                   f"{dst.name} (the element sizes differ)")
    last = shape[-1]
    if last == DYN:
        return tuple(shape)
    nbytes = last * src.itemsize
    if nbytes % dst.itemsize:
        raise InvalidArgumentError(
            f"the last dimension of x ({last} x {src.itemsize} bytes of {src.name}) is not a "
            f"multiple of the size of {dst.name} ({dst.itemsize} bytes)")
    return tuple(shape[:-1]) + (nbytes // dst.itemsize,)


def _view_dtype_ref(x, dtype=None):
    src = _dt.from_numpy(x.dtype)
    _view_dtype_shape(x.shape, src, dtype)
    a = x if x.flags.c_contiguous else np.ascontiguousarray(x)
    return a.view(dtype.np)


def _transpose_ref(x, perm=None):
    return np.transpose(x, perm)


def _squeeze_keep(shape, axis):
    """Indices of the dims that stay. Paddle ignores listed axes whose size is not 1.
    A dynamic dim is squeezed only when listed explicitly."""
    nd = len(shape)
    if axis is None:
        return [i for i, d in enumerate(shape) if d != 1]
    if nd == 0:
        for a in axis:
            norm_axis(a, 0)
        return []
    drop = {norm_axis(a, nd) for a in axis}
    return [i for i, d in enumerate(shape) if not (i in drop and d in (1, DYN))]


def _squeeze_ref(x, axis=None):
    keep = _squeeze_keep(x.shape, axis)
    return np.reshape(x, [x.shape[i] for i in keep])


def _unsqueeze_shape(shape, axis):
    # Paddle inserts the axes one after another, each relative to the shape so far
    out = list(shape)
    for a in axis:
        n = len(out)
        if a < -(n + 1) or a > n:
            raise InvalidArgumentError(f"'axis' {a} is out of range for inserting into a shape "
                                       f"of rank {n} (expected {-(n + 1)} <= axis <= {n}) "
                                       f"(x has shape {shp(shape)}, axis={list(axis)})")
        out.insert(a + n + 1 if a < 0 else a, 1)
    return out


def _unsqueeze_ref(x, axis=()):
    return np.reshape(x, _unsqueeze_shape(x.shape, axis))


def _flatten_shape(shape, start_axis, stop_axis):
    nd = len(shape)
    if nd == 0:
        norm_axis(start_axis, 0, "start_axis")
        norm_axis(stop_axis, 0, "stop_axis")
        return [1]
    s = norm_axis(start_axis, nd, "start_axis")
    e = norm_axis(stop_axis, nd, "stop_axis")
    if s > e:
        raise InvalidArgumentError(f"'start_axis' ({start_axis}) must not come after "
                                   f"'stop_axis' ({stop_axis}) for x of shape {shp(shape)}")
    return list(shape[:s]) + [_mul(shape[s:e + 1])] + list(shape[e + 1:])


def _flatten_ref(x, start_axis=0, stop_axis=-1):
    return np.reshape(x, _flatten_shape(x.shape, start_axis, stop_axis))


def _unflatten_shape(shape, axis, sizes):
    nd = len(shape)
    if nd == 0:
        raise InvalidArgumentError("x must have at least one dimension")
    a = norm_axis(axis, nd)
    if len(sizes) == 0:
        raise InvalidArgumentError("'shape' must not be empty")
    if sum(1 for s in sizes if s == -1) > 1 or any(s < -1 for s in sizes):
        raise InvalidArgumentError(f"'shape' {list(sizes)} may hold one -1 and no other "
                                   f"negative size")
    d = shape[a]
    known = _mul([s for s in sizes if s != -1])
    out = list(sizes)
    if -1 in sizes:
        i = sizes.index(-1)
        if d == DYN:
            out[i] = DYN
        elif known == 0 or d % known:
            raise InvalidArgumentError(f"cannot split axis {a} of size {d} into {list(sizes)}")
        else:
            out[i] = d // known
    elif d != DYN and known != d:
        raise InvalidArgumentError(f"'shape' {list(sizes)} has {known} elements but axis {a} "
                                   f"of x (shape {shp(shape)}) has size {d}")
    return list(shape[:a]) + out + list(shape[a + 1:])


def _unflatten_ref(x, axis=0, shape=()):
    return np.reshape(x, _unflatten_shape(x.shape, axis, shape))


def _concat_ref(x, axis=0):
    return np.concatenate(x, axis=axis)


def _stack_ref(x, axis=0):
    return np.stack(x, axis=axis)


def _split_sizes(shape, num_or_sections, axis):
    nd = len(shape)
    if nd == 0:
        raise InvalidArgumentError("a 0-D tensor cannot be split")
    a = norm_axis(axis, nd)
    d = shape[a]
    if isinstance(num_or_sections, int):
        n = num_or_sections
        if n <= 0:
            raise InvalidArgumentError(f"'num_or_sections' must be positive, got {n}")
        if d == DYN:
            return a, [DYN] * n
        if d % n:
            raise InvalidArgumentError(f"axis {a} of x (shape {shp(shape)}) has size {d}, "
                                       f"which cannot be split into {n} equal parts")
        return a, [d // n] * n
    secs = list(num_or_sections)
    if not secs:
        raise InvalidArgumentError("'num_or_sections' must not be an empty list")
    if sum(1 for s in secs if s == -1) > 1 or any(s < -1 for s in secs):
        raise InvalidArgumentError(f"'num_or_sections' {secs} may hold one -1 and no other "
                                   f"negative size")
    known = sum(s for s in secs if s != -1)
    if -1 in secs:
        i = secs.index(-1)
        if d == DYN:
            secs[i] = DYN
        elif known > d:
            raise InvalidArgumentError(f"sections {list(num_or_sections)} need more than the "
                                       f"{d} elements of axis {a}")
        else:
            secs[i] = d - known
    elif d != DYN and known != d:
        raise InvalidArgumentError(f"sections {secs} add up to {known} but axis {a} of x "
                                   f"(shape {shp(shape)}) has size {d}")
    return a, secs


def _split_ref(x, num_or_sections=1, axis=0):
    a, sizes = _split_sizes(x.shape, num_or_sections, axis)
    out = []
    start = 0
    idx = [slice(None)] * x.ndim
    for s in sizes:
        idx[a] = slice(start, start + s)
        out.append(x[tuple(idx)])
        start += s
    return tuple(out)


def _unbind_ref(input, axis=0):
    a = norm_axis(axis, input.ndim)
    return tuple(np.moveaxis(input, a, 0))


def _expand_shape(shape, target, keep=True):
    """The shape x broadcasts to. With `keep`, -1 in target keeps x's dim (expand's
    spelling); without, -1 is a dynamic dim of the target (expand_as on IR values)."""
    nd, nt = len(shape), len(target)
    if nt < nd:
        raise InvalidArgumentError(f"the target shape {list(target)} has fewer dimensions than "
                                   f"x with shape {shp(shape)}")
    out = []
    for i, t in enumerate(target):
        j = i - (nt - nd)
        d = shape[j] if j >= 0 else None
        if t == DYN and not keep:
            out.append(d if d not in (None, 1) else DYN)
        elif t == -1:
            if d is None:
                raise InvalidArgumentError(f"-1 in the target shape {list(target)} at a new "
                                           f"leading dimension {i} (it can only keep an "
                                           f"existing dimension of x)")
            out.append(d)
        elif t < -1:
            raise InvalidArgumentError(f"the target shape {list(target)} has a negative size")
        elif d is None or d == 1 or d == t or d == DYN:
            out.append(t)
        else:
            raise InvalidArgumentError(f"x with shape {shp(shape)} cannot be expanded to "
                                       f"{list(target)}: dimension {j} has size {d}, which is "
                                       f"not 1 and differs from {t}")
    return out


def _expand_ref(x, shape=()):
    return np.broadcast_to(x, _expand_shape(x.shape, shape)).copy()


def _expand_as_ref(x, y):
    return np.broadcast_to(x, y.shape).copy()


def _bcast_ref(input):
    return tuple(a.copy() for a in np.broadcast_arrays(*input))


def _tile_shape(shape, reps):
    if any(r < 0 for r in reps):
        raise InvalidArgumentError(f"'repeat_times' {list(reps)} must not be negative")
    n = max(len(shape), len(reps))
    shape = (1,) * (n - len(shape)) + tuple(shape)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    return [0 if r == 0 else (DYN if d == DYN else d * r) for d, r in zip(shape, reps)]


def _tile_ref(x, repeat_times=()):
    _tile_shape(x.shape, repeat_times)
    return np.tile(x, repeat_times) if repeat_times else x.copy()


def _rep_ref(x, repeats_tensor=None, repeats=1, axis=None):
    r = repeats if repeats_tensor is None else repeats_tensor.reshape(-1)
    if repeats_tensor is not None and r.size and r.min() < 0:
        raise InvalidArgumentError(f"'repeats' must not be negative, got {r.tolist()}")
    if axis is None:
        return np.repeat(x.reshape(-1), r)
    return np.repeat(x.reshape(1) if x.ndim == 0 else x, r, axis=axis)


def _flip_axes(nd, axis):
    axes = tuple(norm_axis(a, nd) for a in axis)
    if len(set(axes)) != len(axes):
        raise InvalidArgumentError(f"'axis' {list(axis)} repeats an axis")
    return axes


def _flip_ref(x, axis=()):
    return np.flip(x, _flip_axes(x.ndim, axis))


def _rot90_axes(nd, axes):
    if nd < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions, got {nd}")
    if len(axes) != 2:
        raise InvalidArgumentError(f"'axes' must name exactly 2 axes, got {list(axes)}")
    a, b = norm_axis(axes[0], nd, "axes"), norm_axis(axes[1], nd, "axes")
    if a == b:
        raise InvalidArgumentError(f"'axes' {list(axes)} names the same axis twice")
    return a, b


def _rot90_ref(x, k=1, axes=(0, 1)):
    return np.rot90(x, k, _rot90_axes(x.ndim, axes))


def _roll_check(nd, shifts, axis):
    if axis is None:
        if len(shifts) != 1:
            raise InvalidArgumentError(f"without 'axis', 'shifts' must be one number, got "
                                       f"{list(shifts)}")
        return None
    if len(axis) != len(shifts):
        raise InvalidArgumentError(f"'shifts' {list(shifts)} and 'axis' {list(axis)} must have "
                                   f"the same length")
    return tuple(norm_axis(a, nd) for a in axis)


def _roll_ref(x, shifts=(), axis=None):
    axes = _roll_check(x.ndim, shifts, axis)
    if axes is None:
        return np.roll(x, shifts[0])
    return np.roll(x, shifts, axes) if axes else x.copy()


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


def _pad_pairs(shape, paddings, mode):
    nd = len(shape)
    if len(paddings) != 2 * nd:
        raise InvalidArgumentError(f"'paddings' must hold 2 numbers (before, after) per axis, "
                                   f"{2 * nd} for x of shape {shp(shape)}; got {list(paddings)}")
    pairs = [(paddings[2 * i], paddings[2 * i + 1]) for i in range(nd)]
    for i, ((b, a), d) in enumerate(zip(pairs, shape)):
        if mode != "constant" and (b < 0 or a < 0):
            raise InvalidArgumentError(f"negative padding {[b, a]} on axis {i} is only allowed "
                                       f"with mode='constant'")
        if d == DYN:
            continue
        if b + a + d < 0:
            raise InvalidArgumentError(f"padding {[b, a]} removes more than the {d} elements of "
                                       f"axis {i}")
        if mode == "reflect" and (b >= d or a >= d) and (b or a):
            raise InvalidArgumentError(f"reflect padding {[b, a]} on axis {i} must be smaller "
                                       f"than its size {d}")
        if mode in ("replicate", "circular") and d == 0 and (b or a):
            raise InvalidArgumentError(f"{mode} padding needs a non-empty axis {i}")
        if mode == "circular" and (b > d or a > d):
            raise InvalidArgumentError(f"circular padding {[b, a]} on axis {i} must not exceed "
                                       f"its size {d}")
    return pairs


def _pad_ref(x, paddings=(), mode="constant", value=0.0):
    pairs = _pad_pairs(x.shape, paddings, mode)
    crop = tuple(slice(max(-b, 0), d - max(-a, 0)) for d, (b, a) in zip(x.shape, pairs))
    if any(b < 0 or a < 0 for b, a in pairs):
        x = x[crop]
    pos = [(max(b, 0), max(a, 0)) for b, a in pairs]
    if not any(b or a for b, a in pos):
        return x.copy()
    if mode == "constant":
        out = np.full_like(x, _pad_value(value, x.dtype),
                           shape=[d + b + a for d, (b, a) in zip(x.shape, pos)])
        out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, pos))] = x
        return out
    return np.pad(x, pos, mode=_PAD_MODES[mode])


def _pad_value(value, dtype):
    if dtype.kind != "c" and isinstance(value, complex):
        raise InvalidTypeError(f"a complex pad value {value} cannot fill a {dtype} tensor")
    return value


def _kron_ref(x, y):
    return np.kron(x, y).astype(np.result_type(x, y), copy=False)


def _as_strided_check(numel, shape, stride, offset):
    if len(shape) != len(stride):
        raise InvalidArgumentError(f"'shape' {list(shape)} and 'stride' {list(stride)} must "
                                   f"have the same length")
    if any(s < 0 for s in shape) or any(s < 0 for s in stride) or offset < 0:
        raise InvalidArgumentError("'shape', 'stride' and 'offset' must not be negative")
    if numel == DYN or 0 in shape:
        return
    last = offset + sum((n - 1) * s for n, s in zip(shape, stride))
    if last >= numel:
        raise InvalidArgumentError(
            f"shape {list(shape)} with stride {list(stride)} and offset {offset} reaches "
            f"element {last}, but x has only {numel} elements")


def _as_strided_ref(x, shape=(), stride=(), offset=0):
    _as_strided_check(x.size, shape, stride, offset)
    if 0 in shape:
        return np.zeros(shape, dtype=x.dtype)
    flat = np.ascontiguousarray(x).reshape(-1)[offset:]
    it = flat.itemsize
    out = np.lib.stride_tricks.as_strided(flat, shape, [s * it for s in stride],
                                          writeable=False)
    return out.copy()


def _reshape_dims(shape):
    """Paddle: 0 copies the input's dimension, one -1 is inferred from the rest; no other
    size may be negative (NumPy would read any negative size as -1). Checked in
    reshape's canon, so eager calls (whose kernel NumPy would accept -2) and programs
    both refuse it, and on the run-time sizes of reshape_dyn."""
    if shape.count(-1) > 1:
        raise InvalidArgumentError(f"shape {list(shape)} has more than one -1")
    for d in shape:
        if d < -1:
            raise InvalidArgumentError(f"shape {list(shape)} has a negative dimension {d}: "
                                       f"only one -1 (inferred) and 0 (x's dimension) are "
                                       f"allowed")
    return shape
