"""Normalization ops of ``paddle.nn.functional``.

Statistics are computed in float32 for float16/bfloat16 inputs (in the input's dtype
otherwise); variances are biased (divided by the count), as Paddle's kernels do. The
ops that normalise return the statistics they used (``mean``, ``inv_std`` =
``1 / sqrt(var + epsilon)``) as extra outputs, so their backward needs no recomputation;
fw-nn returns only ``out`` to users.

``batch_norm(x, running_mean, running_var, weight?, bias?)
-> (out, mean_out, variance_out, saved_mean, saved_inv_std)``
    Attributes ``training=False, momentum=0.9, epsilon=1e-5, channel_last=False,
    use_global_stats=None``. x is ``[N, C, *S]`` (``[N, *S, C]`` when channel_last; a 2-D
    x is ``[N, C]``); the other inputs are ``[C]``. Batch statistics (mean and biased
    variance over every axis but C) are used when ``training and not use_global_stats``;
    otherwise the running statistics. ``out = (x - mean) * inv_std * weight + bias``.

    **Running statistics are not mutated.** With batch statistics,
    ``mean_out = momentum * running_mean + (1 - momentum) * batch_mean`` and likewise
    ``variance_out`` with the biased batch variance (Paddle's update rule); with running
    statistics they are copies of the inputs. fw-nn writes them back into the layer's
    buffers. ``saved_mean``/``saved_inv_std`` are the statistics used for ``out`` (batch or
    running), in the dtype of running_mean; mean_out/variance_out keep the running dtypes.
``layer_norm(x, weight?, bias?) -> (out, mean, inv_std)``
    ``epsilon=1e-5, begin_norm_axis=1``: normalises over axes ``begin_norm_axis..`` (a
    negative value counts from the end: Paddle's ``normalized_shape`` of length L is
    ``begin_norm_axis = x.ndim - L``). weight/bias have shape ``x.shape[begin:]`` or are
    its flattening; mean/inv_std have shape ``x.shape[:begin]``.
``rms_norm(x, weight?, bias?) -> (out, inv_rms)``
    ``epsilon=1e-5, begin_norm_axis=-1``: ``out = x / sqrt(mean(x^2) + epsilon) * weight
    + bias`` over axes ``begin_norm_axis..``; ``inv_rms`` has shape ``x.shape[:begin]``.
``group_norm(x, weight?, bias?) -> (out, mean, inv_std)``
    ``num_groups`` (required), ``epsilon=1e-5, channel_last=False``: channels split in
    ``num_groups`` consecutive groups, each normalised over its channels and the spatial
    axes per sample; weight/bias ``[C]``; mean/inv_std ``[N, num_groups]``.
``instance_norm(x, weight?, bias?) -> (out, mean, inv_std)``
    ``epsilon=1e-5, channel_last=False``: every (sample, channel) normalised over its
    spatial axes; weight/bias ``[C]``; mean/inv_std ``[N, C]``. (Paddle's
    ``use_input_stats=False`` is an affine map with running statistics: fw-nn composes it.)
``local_response_norm(x)``
    ``size`` (required), ``alpha=1e-4, beta=0.75, k=1.0, channel_last=False``:
    ``out = x / (k + alpha / size * s)^beta`` with ``s`` the sum of ``x^2`` over channels
    ``c - size//2 .. c + (size-1)//2`` (clipped to the valid channels).
``normalize(x)``
    ``p=2.0, axis=1, epsilon=1e-12``: ``x / max(||x||_p, epsilon)`` along axis
    (``p=inf``: the max norm).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import norm_axis, shp
from fw.core.ops._infer import numel as _numel
from fw.core.ops._registry import defop
from fw.core.ops._xp import reduce_initial
from fw.core.ops.activation import arr, channel_axis, contiguous, down, require_real_float, up

__all__ = []

_F32 = np.dtype(np.float32)


def _stat_dtype(d):
    """Statistics of float16/bfloat16 data are float32 (Paddle's rule)."""
    return _dt.float32 if d.itemsize < 4 else d


def _np_stat_dtype(x):
    return _F32 if x.dtype.itemsize < 4 else x.dtype



def _mean_var(xf, axes):
    """Mean and biased variance over `axes` (keepdims), warning-free on empty input."""
    cnt = 1
    for a in axes:
        cnt *= xf.shape[a]
    c = xf.dtype.type(cnt)
    mean = np.add.reduce(xf, axis=axes, keepdims=True) / c
    dev = xf - mean
    var = np.add.reduce(dev * dev, axis=axes, keepdims=True) / c
    return mean, var


def _floats(a, *names):
    for k in names:
        v = a[k]
        a[k] = float(v.item() if hasattr(v, "item") else v)
    return a


def _check_param(t, arg, n, what):
    if t is None:
        return
    require_real_float(t, arg)
    m = _numel(t.shape)
    if m != DYN and n != DYN and m != n:
        raise InvalidArgumentError(f"'{arg}' {shp(t.shape)} must have {n} elements ({what})")


def _vec(a, shape):
    return None if a is None else up(a).reshape(shape)


# ---------------------------------------------------------------- batch_norm
def _bn_canon(attrs):
    a = _floats(dict(attrs), "momentum", "epsilon")
    a["training"] = bool(a["training"])
    a["channel_last"] = bool(a["channel_last"])
    u = a["use_global_stats"]
    a["use_global_stats"] = None if u is None else bool(u)
    return a


def _bn_infer(x, running_mean, running_var, weight=None, bias=None, training=False,
              momentum=0.9, epsilon=1e-5, channel_last=False, use_global_stats=None):
    require_real_float(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions [N, C, ...], got "
                                   f"{shp(x.shape)}")
    c = x.shape[channel_axis(len(x.shape), channel_last)]
    for t, arg in ((running_mean, "running_mean"), (running_var, "running_var"),
                   (weight, "weight"), (bias, "bias")):
        _check_param(t, arg, c, f"one per channel of x {shp(x.shape)}")
    sd = running_mean.dtype
    return (x, running_mean, running_var, TensorType((c,), sd), TensorType((c,), sd))


def _bn_ref(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.9,
            epsilon=1e-5, channel_last=False, use_global_stats=None):
    _bn_infer(*(TensorType(a.shape, _dt.from_numpy(a.dtype)) if a is not None else None
                for a in (x, running_mean, running_var, weight, bias)),
              channel_last=channel_last)
    ax = channel_axis(x.ndim, channel_last)
    c = x.shape[ax]
    xf = up(x)
    ct = np.result_type(xf.dtype, up(running_mean).dtype, up(running_var).dtype)
    xf = xf.astype(ct, copy=False)
    bshape = [1] * x.ndim
    bshape[ax] = c
    rm = running_mean.astype(ct).reshape(bshape)
    rv = running_var.astype(ct).reshape(bshape)
    if training and not use_global_stats:
        axes = tuple(i for i in range(x.ndim) if i != ax)
        mean, var = _mean_var(xf, axes)
        mean_out = momentum * rm + (1.0 - momentum) * mean
        var_out = momentum * rv + (1.0 - momentum) * var
    else:
        mean, var = rm, rv
        mean_out, var_out = rm, rv
    inv_std = 1.0 / np.sqrt(var + epsilon)
    y = (xf - mean) * inv_std
    if weight is not None:
        y = y * _vec(weight, bshape)
    if bias is not None:
        y = y + _vec(bias, bshape)
    rd = running_mean.dtype
    return (down(y, x.dtype), down(mean_out.reshape(running_mean.shape), rd),
            down(var_out.reshape(running_var.shape), running_var.dtype),
            down(arr(mean).reshape(c), rd), down(arr(inv_std).reshape(c), rd))


defop("batch_norm", ("x", "running_mean", "running_var", "weight?", "bias?"),
      {"training": False, "momentum": 0.9, "epsilon": 1e-5, "channel_last": False,
       "use_global_stats": None},
      outputs=("out", "mean_out", "variance_out", "saved_mean", "saved_inv_std"),
      infer=_bn_infer, reference=_bn_ref, canon=_bn_canon, promote=(0,), to_float=True,
      family="norm", api=False, method=False,
      doc="Batch normalization; returns the updated running statistics instead of mutating "
          "them (see fw.core.ops.norm).")


# ---------------------------------------------------------------- layer_norm / rms_norm
def _begin(b, nd):
    if not -nd <= b <= nd:
        raise InvalidArgumentError(f"'begin_norm_axis'={b} is out of range for a tensor of "
                                   f"rank {nd}")
    return b % nd if b < 0 else b


def _ln_canon(attrs):
    a = _floats(dict(attrs), "epsilon")
    b = a["begin_norm_axis"]
    a["begin_norm_axis"] = int(b.item() if hasattr(b, "item") else b)
    return a


def _ln_types(x, weight, bias, begin_norm_axis):
    require_real_float(x)
    nd = len(x.shape)
    b = _begin(begin_norm_axis, nd)
    if b == nd:
        raise InvalidArgumentError(f"'begin_norm_axis'={begin_norm_axis} leaves no axis to "
                                   f"normalise in x {shp(x.shape)}")
    n = _numel(x.shape[b:])
    for t, arg in ((weight, "weight"), (bias, "bias")):
        _check_param(t, arg, n, f"the normalized shape {shp(x.shape[b:])}")
    return b, TensorType(x.shape[:b], _stat_dtype(x.dtype))


def _ln_infer(x, weight=None, bias=None, epsilon=1e-5, begin_norm_axis=1):
    _, st = _ln_types(x, weight, bias, begin_norm_axis)
    return x, st, st


def _types_of(*arrays):
    return [None if a is None else TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]


def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * _vec(weight, shape)
    if bias is not None:
        y = y + _vec(bias, shape)
    return y


def _ln_ref(x, weight=None, bias=None, epsilon=1e-5, begin_norm_axis=1):
    b, _ = _ln_types(*_types_of(x, weight, bias), begin_norm_axis)
    xf = up(x)
    axes = tuple(range(b, x.ndim))
    mean, var = _mean_var(xf, axes)
    inv_std = 1.0 / np.sqrt(var + epsilon)
    y = _affine((xf - mean) * inv_std, weight, bias, x.shape[b:])
    sd = _np_stat_dtype(x)
    return (down(y, x.dtype), down(mean.reshape(x.shape[:b]), sd),
            down(inv_std.reshape(x.shape[:b]), sd))


defop("layer_norm", ("x", "weight?", "bias?"), {"epsilon": 1e-5, "begin_norm_axis": 1},
      outputs=("out", "mean", "inv_std"), infer=_ln_infer, reference=_ln_ref, canon=_ln_canon,
      promote=(0,), to_float=True, family="norm", api=False, method=False,
      doc="Layer normalization over axes begin_norm_axis.. with optional affine weight/bias.")


def _rms_infer(x, weight=None, bias=None, epsilon=1e-5, begin_norm_axis=-1):
    _, st = _ln_types(x, weight, bias, begin_norm_axis)
    return x, st


def _rms_ref(x, weight=None, bias=None, epsilon=1e-5, begin_norm_axis=-1):
    b, _ = _ln_types(*_types_of(x, weight, bias), begin_norm_axis)
    xf = up(x)
    axes = tuple(range(b, x.ndim))
    cnt = xf.dtype.type(int(np.prod(x.shape[b:])))
    ms = np.add.reduce(xf * xf, axis=axes, keepdims=True) / cnt
    inv = 1.0 / np.sqrt(ms + epsilon)
    y = _affine(xf * inv, weight, bias, x.shape[b:])
    return down(y, x.dtype), down(inv.reshape(x.shape[:b]), _np_stat_dtype(x))


defop("rms_norm", ("x", "weight?", "bias?"), {"epsilon": 1e-5, "begin_norm_axis": -1},
      outputs=("out", "inv_rms"), infer=_rms_infer, reference=_rms_ref, canon=_ln_canon,
      promote=(0,), to_float=True, family="norm", api=False, method=False,
      doc="RMS normalization: x / sqrt(mean(x^2) + epsilon) * weight + bias over the last "
          "axes.")


# ---------------------------------------------------------------- group_norm / instance_norm
def _gn_canon(attrs):
    a = _floats(dict(attrs), "epsilon")
    a["channel_last"] = bool(a["channel_last"])
    if "num_groups" in a:
        g = a["num_groups"]
        if g is None:
            raise InvalidArgumentError("'num_groups' is required")
        a["num_groups"] = int(g.item() if hasattr(g, "item") else g)
    return a


def _gn_check(x, weight, bias, num_groups, channel_last):
    require_real_float(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions [N, C, ...], got "
                                   f"{shp(x.shape)}")
    c = x.shape[channel_axis(len(x.shape), channel_last)]
    if num_groups is not None:
        if num_groups < 1 or (c != DYN and c % num_groups):
            raise InvalidArgumentError(f"'num_groups'={num_groups} must be positive and divide "
                                       f"the {c} channels of x {shp(x.shape)}")
    for t, arg in ((weight, "weight"), (bias, "bias")):
        _check_param(t, arg, c, f"one per channel of x {shp(x.shape)}")
    return c


def _gn_infer(x, weight=None, bias=None, num_groups=None, epsilon=1e-5, channel_last=False):
    _gn_check(x, weight, bias, num_groups, channel_last)
    st = TensorType((x.shape[0], num_groups), _stat_dtype(x.dtype))
    return x, st, st


def _grouped_norm(x, weight, bias, groups, epsilon, channel_last):
    """Normalise channels-first groups: -> (y in x's layout, mean [N, G], inv_std [N, G])."""
    xf = np.moveaxis(up(x), -1, 1) if channel_last else up(x)
    n, c = xf.shape[:2]
    sp = xf.shape[2:]
    xg = xf.reshape((n, groups, c // groups) + sp)
    axes = tuple(range(2, xg.ndim))
    mean, var = _mean_var(xg, axes)
    inv_std = 1.0 / np.sqrt(var + epsilon)
    y = ((xg - mean) * inv_std).reshape(xf.shape)
    y = _affine(y, weight, bias, (1, c) + (1,) * len(sp))
    if channel_last:
        y = np.moveaxis(y, 1, -1)
    sd = _np_stat_dtype(x)
    return (down(contiguous(y), x.dtype), down(mean.reshape(n, groups), sd),
            down(inv_std.reshape(n, groups), sd))


def _gn_ref(x, weight=None, bias=None, num_groups=None, epsilon=1e-5, channel_last=False):
    _gn_check(*_types_of(x, weight, bias), num_groups, channel_last)
    return _grouped_norm(x, weight, bias, num_groups, epsilon, channel_last)


defop("group_norm", ("x", "weight?", "bias?"),
      {"num_groups": None, "epsilon": 1e-5, "channel_last": False},
      outputs=("out", "mean", "inv_std"), infer=_gn_infer, reference=_gn_ref, canon=_gn_canon,
      promote=(0,), to_float=True, family="norm", api=False, method=False,
      doc="Group normalization over groups of channels and the spatial axes, per sample.")


def _in_infer(x, weight=None, bias=None, epsilon=1e-5, channel_last=False):
    c = _gn_check(x, weight, bias, None, channel_last)
    st = TensorType((x.shape[0], c), _stat_dtype(x.dtype))
    return x, st, st


def _in_ref(x, weight=None, bias=None, epsilon=1e-5, channel_last=False):
    c = _gn_check(*_types_of(x, weight, bias), None, channel_last)
    return _grouped_norm(x, weight, bias, c, epsilon, channel_last)


defop("instance_norm", ("x", "weight?", "bias?"), {"epsilon": 1e-5, "channel_last": False},
      outputs=("out", "mean", "inv_std"), infer=_in_infer, reference=_in_ref, canon=_gn_canon,
      promote=(0,), to_float=True, family="norm", api=False, method=False,
      doc="Instance normalization: each (sample, channel) over its spatial axes.")


# ---------------------------------------------------------------- local_response_norm
def _lrn_canon(attrs):
    a = _floats(dict(attrs), "alpha", "beta", "k")
    a["channel_last"] = bool(a["channel_last"])
    s = a["size"]
    if s is None:
        raise InvalidArgumentError("'size' is required")
    a["size"] = int(s.item() if hasattr(s, "item") else s)
    if a["size"] < 1:
        raise InvalidArgumentError(f"'size' must be >= 1, got {a['size']}")
    return a


def _lrn_infer(x, size=None, alpha=1e-4, beta=0.75, k=1.0, channel_last=False):
    require_real_float(x)
    if len(x.shape) < 3:
        raise InvalidArgumentError(f"x must have at least 3 dimensions [N, C, *S], got "
                                   f"{shp(x.shape)}")
    return x


def _lrn_ref(x, size=None, alpha=1e-4, beta=0.75, k=1.0, channel_last=False):
    _lrn_infer(*_types_of(x))
    xf = up(x)
    ax = channel_axis(x.ndim, channel_last)
    sq = np.moveaxis(xf * xf, ax, -1)
    width = [(0, 0)] * (sq.ndim - 1) + [(size // 2, (size - 1) // 2)]
    win = sliding_window_view(np.pad(sq, width), size, axis=-1)
    s = np.moveaxis(np.sum(win, axis=-1), -1, ax)
    return down(xf / np.power(k + (alpha / size) * s, beta), x.dtype)


defop("local_response_norm", ("x",),
      {"size": None, "alpha": 1e-4, "beta": 0.75, "k": 1.0, "channel_last": False},
      infer=_lrn_infer, reference=_lrn_ref, canon=_lrn_canon, to_float=True, family="norm",
      api=False, method=False,
      doc="Local response normalization across neighbouring channels.")


# ---------------------------------------------------------------- normalize
def _normalize_canon(attrs):
    a = _floats(dict(attrs), "p", "epsilon")
    ax = a["axis"]
    a["axis"] = int(ax.item() if hasattr(ax, "item") else ax)
    if not a["p"] > 0:
        raise InvalidArgumentError(f"'p' must be > 0, got {a['p']}")
    return a


def _normalize_infer(x, p=2.0, axis=1, epsilon=1e-12):
    require_real_float(x)
    norm_axis(axis, len(x.shape))
    return x


def _normalize_ref(x, p=2.0, axis=1, epsilon=1e-12):
    ax = norm_axis(axis, x.ndim)
    xf = up(x)
    a = np.abs(xf)
    if math.isinf(p):
        nrm = reduce_initial(np.max, a, axis=ax, keepdims=True, initial=0)
    elif p == 2.0:
        nrm = np.sqrt(np.add.reduce(a * a, axis=ax, keepdims=True))
    else:
        nrm = np.power(np.add.reduce(np.power(a, p), axis=ax, keepdims=True), 1.0 / p)
    return down(xf / np.maximum(nrm, epsilon), x.dtype)


defop("normalize", ("x",), {"p": 2.0, "axis": 1, "epsilon": 1e-12}, infer=_normalize_infer,
      reference=_normalize_ref, canon=_normalize_canon, to_float=True, family="norm",
      api=False, method=False, doc="x / max(||x||_p, epsilon) along axis.")
