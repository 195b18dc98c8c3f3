"""Explicit backward ops of the nn families (``nn_grad``): what fw-autograd's VJP rules of
conv, pooling, normalization, softmax and softmax cross entropy call for a first-order
backward pass, so that one native kernel (oneDNN's backward primitives, see
``fw.core.kernels.cpu.nn_grad``) replaces the re-expression of the forward op in dozens of
small differentiable ops that the rules otherwise go through.

The set is chosen so that every gradient of those ops is one call here or an existing
forward op:

- the input gradient of ``conv`` is ``conv_transpose`` of the output gradient (with
  explicit pads and ``output_size``), and that of ``conv_transpose`` is ``conv``: both
  already have native kernels;
- the weight gradients of both are ``conv_grad_weight`` (for ``conv_transpose`` with the
  roles of its input and output gradient swapped);
- max pooling (with or without mask, adaptive or not) scatters through the mask;
- the others have one op each.

These ops are not differentiable: a backward that is itself recorded
(``create_graph=True``, or a static program) keeps the differentiable re-expressions.
No public API (``api=False, method=False``).

``conv_grad_weight(x, grad_out) -> (grad_weight, grad_bias)``
    Attributes ``kernel_size`` (required, one entry per spatial dim or one for all),
    ``stride=1, padding=0, dilation=1, groups=1, channel_last=False`` as for ``conv``
    (every padding form, resolved by `conv_geometry` with x's spatial sizes). ``grad_out``
    has the shape ``conv(x, weight)`` would have, ``[N, C_out, *O]`` (or channel-last);
    ``grad_weight[o, c, k] = sum_{n, p} x_pad[n, g*Cg + c, p*stride + k*dilation] *
    grad_out[n, o, p]`` (``g`` the group of ``o``) is ``[C_out, C_in/groups, *K]`` and
    ``grad_bias = sum_{n, p} grad_out[n, o, p]`` is ``[C_out]``, both in x's dtype.
``max_pool_grad(grad_out, mask) -> grad_x``
    Attributes ``input_size`` (required: x's spatial sizes), ``channel_last=False``.
    ``grad_x`` (``[N, C, *input_size]`` in grad_out's layout and dtype) is zero but for
    ``grad_x[n, c, mask[n, c, q]] += grad_out[n, c, q]`` (flat spatial positions, the
    mask of ``max_pool_with_index`` / ``adaptive_max_pool``; int32 or int64 values in
    ``[0, prod(input_size))``, else an error).
``avg_pool_grad(grad_out) -> grad_x``
    Attributes ``input_size`` (required) and the attributes of ``avg_pool``
    (``kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
    channel_last``): the adjoint of avg_pool, ``grad_out / divisor`` added to every real
    (non-padding) element of each window.
``batch_norm_grad(x, weight?, saved_mean, saved_inv_std, grad_out)
-> (grad_x, grad_weight, grad_bias)``
    Attributes ``epsilon=1e-5, channel_last=False, batch_stats=True``: the gradients of
    batch_norm's ``out`` with the statistics it returned (``xhat = (x - saved_mean) *
    saved_inv_std``, ``w`` = weight or 1): ``grad_bias = sum(grad_out)`` and
    ``grad_weight = sum(grad_out * xhat)`` over every axis but the channel one; with
    ``batch_stats`` (the forward used batch statistics, which depend on x) ``grad_x =
    w * inv_std * (grad_out - grad_bias/M - xhat * grad_weight/M)`` (M elements per
    channel), else ``grad_x = grad_out * w * inv_std``. ``epsilon`` is the forward's: a
    native kernel rebuilds the variance from inv_std with it. grad_x has x's dtype,
    grad_weight/grad_bias ``[C]`` the statistics' dtype.
``layer_norm_grad(x, weight?, mean, inv_std, grad_out) -> (grad_x, grad_weight, grad_bias)``
    Attributes ``epsilon=1e-5, begin_norm_axis=1``: the same for layer_norm's ``out``
    (statistics per row of ``x`` viewed as ``[M, D]``, D the size of axes
    ``begin_norm_axis..``); grad_weight/grad_bias are ``[D]`` (flattened) in x's dtype.
``softmax_grad(out, grad_out) -> grad_x`` / ``log_softmax_grad(out, grad_out) -> grad_x``
    Attribute ``axis=-1``; ``out`` is the forward result: ``out * (grad_out -
    sum(grad_out * out))`` resp. ``grad_out - exp(out) * sum(grad_out)`` along axis.
``relu_grad(out, grad_out) -> grad_x``
    ``grad_out`` where relu's result ``out`` is positive, else 0 (one pass instead of a
    compare, a cast and a multiply).
``tanh_grad(out, grad_out) -> grad_x`` / ``sigmoid_grad(out, grad_out) -> grad_x``
    From the forward result: ``grad_out - grad_out * out * out`` resp. ``grad_out * (out
    - out * out)``, the arithmetic (and so the bits) of the differentiable rules. One
    dispatch instead of three: on small tensors the backward of these activations is
    all dispatch (the chain benchmark of asv_bench/benchmarks/bench_autograd.py).
``dropout_grad(mask, grad_out) -> grad_x``
    Attribute ``scale=1.0``: ``grad_out * mask * scale`` with dropout's bool keep mask.
``cross_entropy_with_softmax_grad(softmax, label, weight?, grad_loss) -> grad_logits``
    Attributes ``soft_label, ignore_index, reduction, axis`` of
    ``cross_entropy_with_softmax`` (its ``use_softmax=True`` form; softmax is its second
    output, grad_loss the gradient of its first, shaped like it). With ``f`` the
    gradient of each sample's loss (grad_loss, divided by the "mean" denominator,
    times the sample's weight): hard labels ``grad = f * (softmax - onehot(label))``
    (0 for ignored samples), soft labels ``grad = f * (softmax * sum(label) - label)``.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import norm_axis, require_int, shp
from fw.core.ops._registry import defop
from fw.core.ops._xp import xp_of
from fw.core.ops.activation import arr, channel_axis, contiguous, down, require_real_float, up
from fw.core.ops.conv import (
    _conv_canon,
    canon_ints,
    conv_geometry,
    from_channels_first,
    join_layout,
    split_layout,
    to_channels_first,
)
from fw.core.ops.loss import _ce_layout, _reduction_canon, hard_labels, poison_bad_labels
from fw.core.ops.pool import _padded, _pool_canon, _taps, _window_counts, pool_geometry

__all__ = ["conv_transpose_pads"]


def _known(*ds):
    return all(d != DYN for d in ds)


def _types(*arrays):
    return [None if a is None else TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]


def _same_float(t, ref, arg, ref_arg):
    require_real_float(t, arg)
    if t.dtype is not ref.dtype:
        raise InvalidTypeError(f"'{arg}' must have the dtype of '{ref_arg}' ({ref.dtype.name}), "
                               f"got {t.dtype.name}{shp(t.shape)}")


def _check_shape(t, want, arg, why):
    if len(t.shape) != len(want) or any(a != b and _known(a, b) for a, b in zip(t.shape, want)):
        raise InvalidArgumentError(f"'{arg}' {shp(t.shape)} must be {shp(want)} ({why})")


def _input_size_canon(a, name="input_size"):
    v = a.get(name)
    if v is None:
        raise InvalidArgumentError(f"'{name}' is required")
    a[name] = canon_ints(v, name, 1)
    return a


def _spatial_sizes(input_size, nd):
    if len(input_size) != nd:
        raise InvalidArgumentError(f"'input_size'={list(input_size)} must have one entry per "
                                   f"spatial dimension of grad_out ({nd})")
    return tuple(input_size)


def conv_transpose_pads(in_sizes, out_sizes, ks, strides, dils, pads):
    """Explicit (begin, end) pads of the convolution mapping a transposed convolution's
    output (`out_sizes`) back onto its input (`in_sizes`): the begin pads are the
    transposed op's; an end pad is any value in ``[e - extra, e - extra + s - 1]`` (extra:
    the output_padding / output_size excess), the smallest non-negative one is taken.
    Returns None when every candidate is negative."""
    res = []
    for i, o, k, s, d, (b, e) in zip(in_sizes, out_sizes, ks, strides, dils, pads):
        ek = d * (k - 1) + 1
        extra = o - ((i - 1) * s - b - e + ek)
        lo = e - extra
        er = max(lo, 0)
        if er > lo + s - 1:
            return None
        res.append((b, er))
    return res


# ---------------------------------------------------------------- conv_grad_weight
def _cgw_canon(attrs):
    a = dict(attrs)
    if a.get("kernel_size") is None:
        raise InvalidArgumentError("'kernel_size' is required")
    a["kernel_size"] = canon_ints(a["kernel_size"], "kernel_size", 1)
    return _conv_canon(a)


def _cgw_shapes(x, grad_out, kernel_size, stride, padding, dilation, groups, channel_last):
    """-> (grad_weight shape, C_out, resolved geometry) after checking the shapes."""
    if len(x.shape) < 3:
        raise InvalidArgumentError(f"x must be [N, C, spatial...] with at least 1 spatial "
                                   f"dimension, got shape {shp(x.shape)}")
    n, c, sp = split_layout(x.shape, channel_last)
    nd = len(sp)
    ks = tuple(kernel_size) * nd if len(kernel_size) == 1 else tuple(kernel_size)
    if len(ks) != nd:
        raise InvalidArgumentError(f"'kernel_size'={list(kernel_size)} must have 1 or {nd} "
                                   f"entries")
    if len(grad_out.shape) != len(x.shape):
        raise InvalidArgumentError(f"grad_out {shp(grad_out.shape)} must have the rank of x "
                                   f"{shp(x.shape)}")
    go_n, cout, _ = split_layout(grad_out.shape, channel_last)
    if groups < 1 or (_known(c) and c % groups) or (_known(cout) and cout % groups):
        raise InvalidArgumentError(f"'groups'={groups} must divide the {c} channels of x "
                                   f"{shp(x.shape)} and the {cout} channels of grad_out "
                                   f"{shp(grad_out.shape)}")
    geo = conv_geometry(sp, ks, stride, padding, dilation)
    _check_shape(grad_out, join_layout(n, cout, geo[3], channel_last), "grad_out",
                 "the shape of conv(x, weight)")
    cg = DYN if not _known(c) else c // groups
    return (cout, cg) + ks, cout, geo


def _cgw_infer(x, grad_out, kernel_size=None, stride=1, padding=0, dilation=1, groups=1,
               channel_last=False):
    require_real_float(x)
    _same_float(grad_out, x, "grad_out", "x")
    ws, cout, _ = _cgw_shapes(x, grad_out, kernel_size, stride, padding, dilation, groups,
                              channel_last)
    return TensorType(ws, x.dtype), TensorType((cout,), x.dtype)


def _cgw_ref(x, grad_out, kernel_size=None, stride=1, padding=0, dilation=1, groups=1,
             channel_last=False):
    types = _types(x, grad_out)
    _cgw_infer(*types, kernel_size=kernel_size, stride=stride, padding=padding,
               dilation=dilation, groups=groups, channel_last=channel_last)
    ws, cout, (strides, pads, dils, outs) = _cgw_shapes(
        *types, kernel_size, stride, padding, dilation, groups, channel_last)
    n, c, sp = split_layout(x.shape, channel_last)
    ks = ws[2:]
    nd = len(sp)
    xt = to_channels_first(up(x), channel_last)
    gt = to_channels_first(up(grad_out), channel_last)
    g, cg, og = groups, c // groups, cout // groups
    kk = int(np.prod(ks))
    npos = int(np.prod(outs))
    if n * npos == 0 or cg * kk == 0:
        gw = np.zeros_like(xt, shape=(cout, cg * kk))
    else:
        if any(b or e for b, e in pads):
            xt = np.pad(xt, [(0, 0), (0, 0)] + list(pads))
        from numpy.lib.stride_tricks import sliding_window_view

        eff = tuple(d * (k - 1) + 1 for k, d in zip(ks, dils))
        win = sliding_window_view(xt, eff, axis=tuple(range(2, 2 + nd)))
        win = win[(slice(None), slice(None))
                  + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(outs, strides))
                  + tuple(slice(None, None, d) for d in dils)]
        win = win.reshape((n, g, cg) + tuple(outs) + tuple(ks))
        perm = (1, 0) + tuple(range(3, 3 + nd)) + (2,) + tuple(range(3 + nd, 3 + 2 * nd))
        cols = win.transpose(perm).reshape(g, n * npos, cg * kk)  # [G, N*P, Cg*K]
        gg = gt.reshape(n, g, og, npos).transpose(1, 2, 0, 3).reshape(g, og, n * npos)
        gw = np.matmul(gg, cols).reshape(cout, cg * kk)  # [G, Og, Cg*K]
    gb = np.add.reduce(gt.reshape(n, cout, npos), axis=(0, 2)) if n * npos else \
        np.zeros_like(gt, shape=(cout,))
    return down(gw.reshape(ws), x.dtype), down(arr(gb), x.dtype)


defop("conv_grad_weight", ("x", "grad_out"),
      {"kernel_size": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1,
       "channel_last": False},
      outputs=("grad_weight", "grad_bias"), infer=_cgw_infer, reference=_cgw_ref,
      canon=_cgw_canon, promote=None, differentiable=False, family="nn_grad", api=False,
      method=False, doc="Weight and bias gradients of conv; see fw.core.ops.nn_grad.")


# ---------------------------------------------------------------- max_pool_grad
def _mpg_canon(attrs):
    a = _input_size_canon(dict(attrs))
    a["channel_last"] = bool(a["channel_last"])
    return a


def _mpg_infer(grad_out, mask, input_size=None, channel_last=False):
    require_real_float(grad_out, "grad_out")
    require_int(mask, "mask")
    if len(grad_out.shape) < 3:
        raise InvalidArgumentError(f"grad_out must be [N, C, spatial...], got "
                                   f"{shp(grad_out.shape)}")
    _check_shape(mask, grad_out.shape, "mask", "the shape of grad_out")
    n, c, sp = split_layout(grad_out.shape, channel_last)
    size = _spatial_sizes(input_size, len(sp))
    return TensorType(join_layout(n, c, size, channel_last), grad_out.dtype)


def _mpg_ref(grad_out, mask, input_size=None, channel_last=False):
    _mpg_infer(*_types(grad_out, mask), input_size=input_size, channel_last=channel_last)
    n, c, sp = split_layout(grad_out.shape, channel_last)
    size = tuple(input_size)
    plane = int(np.prod(size))
    npos = int(np.prod(sp))
    gt = to_channels_first(up(grad_out), channel_last).reshape(n * c, npos)
    mt = to_channels_first(mask, channel_last).reshape(n * c, npos).astype(np.int64)
    # (checked on the host only: on a device the check would wait for all queued work,
    # and the mask comes from the forward pass, which made it in range)
    if type(mt) is np.ndarray and mt.size and (int(mt.min()) < 0 or int(mt.max()) >= plane):
        raise InvalidArgumentError(f"mask values must lie in [0, {plane}) for the input spatial "
                                   f"size {list(size)}, got values in [{int(mt.min())}, "
                                   f"{int(mt.max())}]")
    flat = (mt + (xp_of(mt).arange(n * c, dtype=np.int64) * plane)[:, None]).reshape(-1)
    g = np.bincount(flat, weights=gt.reshape(-1), minlength=n * c * plane)
    g = g.reshape((n, c) + size).astype(gt.dtype, copy=False)
    return down(contiguous(from_channels_first(g, channel_last)), grad_out.dtype)


defop("max_pool_grad", ("grad_out", "mask"), {"input_size": None, "channel_last": False},
      infer=_mpg_infer, reference=_mpg_ref, canon=_mpg_canon, promote=None,
      differentiable=False, family="nn_grad", api=False, method=False,
      doc="Gradient of max pooling: grad_out scattered to the flat spatial mask positions.")


# ---------------------------------------------------------------- avg_pool_grad
def _apg_canon(attrs):
    return _input_size_canon(_pool_canon(attrs))


def _apg_infer(grad_out, input_size=None, kernel_size=None, stride=None, padding=0,
               ceil_mode=False, exclusive=True, divisor_override=None, channel_last=False):
    require_real_float(grad_out, "grad_out")
    if len(grad_out.shape) < 3:
        raise InvalidArgumentError(f"grad_out must be [N, C, spatial...], got "
                                   f"{shp(grad_out.shape)}")
    n, c, sp = split_layout(grad_out.shape, channel_last)
    size = _spatial_sizes(input_size, len(sp))
    _, _, _, outs = pool_geometry(size, kernel_size, stride, padding, ceil_mode)
    _check_shape(grad_out, join_layout(n, c, outs, channel_last), "grad_out",
                 "the shape of avg_pool's result for input_size")
    return TensorType(join_layout(n, c, size, channel_last), grad_out.dtype)


def _apg_ref(grad_out, input_size=None, kernel_size=None, stride=None, padding=0,
             ceil_mode=False, exclusive=True, divisor_override=None, channel_last=False):
    _apg_infer(*_types(grad_out), input_size=input_size, kernel_size=kernel_size, stride=stride,
               padding=padding, ceil_mode=ceil_mode, channel_last=channel_last)
    n, c, _ = split_layout(grad_out.shape, channel_last)
    size = tuple(input_size)
    ks, strides, pads, outs = pool_geometry(size, kernel_size, stride, padding, ceil_mode)
    gt = to_channels_first(up(grad_out), channel_last)
    if divisor_override is not None:
        v = gt / gt.dtype.type(divisor_override)
    else:
        cnt = _window_counts(size, ks, strides, pads, outs, exclusive)
        v = (gt / xp_of(gt).asarray(np.maximum(cnt, 1))).astype(gt.dtype, copy=False)
    buf = _padded(np.zeros_like(gt, shape=(n, c) + size), ks, strides, pads, outs, 0)
    for _, view in _taps(buf, ks, strides, outs):
        view += v  # a strided view into buf: padding positions absorb what is dropped below
    crop = (slice(None), slice(None)) + tuple(slice(b, b + i) for (b, _), i in zip(pads, size))
    return down(contiguous(from_channels_first(buf[crop], channel_last)), grad_out.dtype)


defop("avg_pool_grad", ("grad_out",),
      {"input_size": None, "kernel_size": None, "stride": None, "padding": 0, "ceil_mode": False,
       "exclusive": True, "divisor_override": None, "channel_last": False},
      infer=_apg_infer, reference=_apg_ref, canon=_apg_canon, promote=None,
      differentiable=False, family="nn_grad", api=False, method=False,
      doc="Gradient of avg_pool: grad_out / divisor spread over each window's real elements.")


# ---------------------------------------------------------------- batch_norm_grad
def _floats(a, *names):
    for k in names:
        v = a[k]
        a[k] = float(v.item() if hasattr(v, "item") else v)
    return a


def _bng_canon(attrs):
    a = _floats(dict(attrs), "epsilon")
    a["channel_last"] = bool(a["channel_last"])
    a["batch_stats"] = bool(a["batch_stats"])
    return a


def _vec_check(t, arg, n, what):
    if t is None:
        return
    require_real_float(t, arg)
    if len(t.shape) != 1 or (_known(t.shape[0], n) and t.shape[0] != n):
        raise InvalidArgumentError(f"'{arg}' {shp(t.shape)} must be [{n}] ({what})")


def _bng_infer(x, weight, saved_mean, saved_inv_std, grad_out, epsilon=1e-5, channel_last=False,
               batch_stats=True):
    require_real_float(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"x must have at least 2 dimensions [N, C, ...], got "
                                   f"{shp(x.shape)}")
    _same_float(grad_out, x, "grad_out", "x")
    _check_shape(grad_out, x.shape, "grad_out", "the shape of x")
    c = x.shape[channel_axis(len(x.shape), channel_last)]
    for t, arg in ((weight, "weight"), (saved_mean, "saved_mean"),
                   (saved_inv_std, "saved_inv_std")):
        _vec_check(t, arg, c, f"one per channel of x {shp(x.shape)}")
    sd = saved_mean.dtype
    return x, TensorType((c,), sd), TensorType((c,), sd)


def _bng_ref(x, weight, saved_mean, saved_inv_std, grad_out, epsilon=1e-5, channel_last=False,
             batch_stats=True):
    _bng_infer(*_types(x, weight, saved_mean, saved_inv_std, grad_out),
               channel_last=channel_last)
    ax = channel_axis(x.ndim, channel_last)
    c = x.shape[ax]
    ct = np.result_type(up(x).dtype, up(saved_mean).dtype, up(saved_inv_std).dtype)
    bshape = [1] * x.ndim
    bshape[ax] = c
    axes = tuple(i for i in range(x.ndim) if i != ax)
    xf = up(x).astype(ct, copy=False)
    g = up(grad_out).astype(ct, copy=False)
    mean = up(saved_mean).astype(ct).reshape(bshape)
    inv = up(saved_inv_std).astype(ct).reshape(bshape)
    xhat = (xf - mean) * inv
    gb = np.add.reduce(g, axis=axes, keepdims=True)
    gw = np.add.reduce(g * xhat, axis=axes, keepdims=True)
    scale = inv if weight is None else inv * up(weight).astype(ct).reshape(bshape)
    if batch_stats:
        m = ct.type(max(x.size // max(c, 1), 1))
        gx = scale * (g - gb / m - xhat * (gw / m))
    else:
        gx = g * scale
    sd = saved_mean.dtype
    return down(arr(gx), x.dtype), down(gw.reshape(c), sd), down(gb.reshape(c), sd)


defop("batch_norm_grad", ("x", "weight?", "saved_mean", "saved_inv_std", "grad_out"),
      {"epsilon": 1e-5, "channel_last": False, "batch_stats": True},
      outputs=("grad_x", "grad_weight", "grad_bias"), infer=_bng_infer, reference=_bng_ref,
      canon=_bng_canon, promote=None, differentiable=False, family="nn_grad", api=False,
      method=False, doc="Gradients of batch_norm's out w.r.t. x, weight and bias.")


# ---------------------------------------------------------------- layer_norm_grad
def _lng_canon(attrs):
    a = _floats(dict(attrs), "epsilon")
    b = a["begin_norm_axis"]
    a["begin_norm_axis"] = int(b.item() if hasattr(b, "item") else b)
    return a


def _lng_split(x, begin_norm_axis):
    nd = len(x.shape)
    if not -nd <= begin_norm_axis < nd or nd == 0:
        raise InvalidArgumentError(f"'begin_norm_axis'={begin_norm_axis} is out of range for x "
                                   f"{shp(x.shape)} (it must leave an axis to normalise)")
    b = begin_norm_axis % nd
    d = 1
    for s in x.shape[b:]:
        d = DYN if DYN in (d, s) else d * s
    return b, d


def _lng_infer(x, weight, mean, inv_std, grad_out, epsilon=1e-5, begin_norm_axis=1):
    require_real_float(x)
    _same_float(grad_out, x, "grad_out", "x")
    _check_shape(grad_out, x.shape, "grad_out", "the shape of x")
    b, d = _lng_split(x, begin_norm_axis)
    if weight is not None:
        require_real_float(weight, "weight")
        n = 1
        for s in weight.shape:
            n = DYN if DYN in (n, s) else n * s
        if _known(n, d) and n != d:
            raise InvalidArgumentError(f"'weight' {shp(weight.shape)} must have {d} elements "
                                       f"(the normalized shape {shp(x.shape[b:])})")
    for t, arg in ((mean, "mean"), (inv_std, "inv_std")):
        require_real_float(t, arg)
        _check_shape(t, x.shape[:b], arg, "the leading shape of x")
    return x, TensorType((d,), x.dtype), TensorType((d,), x.dtype)


def _lng_ref(x, weight, mean, inv_std, grad_out, epsilon=1e-5, begin_norm_axis=1):
    _lng_infer(*_types(x, weight, mean, inv_std, grad_out), begin_norm_axis=begin_norm_axis)
    b, d = _lng_split(x, begin_norm_axis)
    m = int(np.prod(x.shape[:b]))
    ct = np.result_type(up(x).dtype, up(mean).dtype, up(inv_std).dtype)
    xf = up(x).astype(ct, copy=False).reshape(m, d)
    g = up(grad_out).astype(ct, copy=False).reshape(m, d)
    mu = up(mean).astype(ct).reshape(m, 1)
    inv = up(inv_std).astype(ct).reshape(m, 1)
    xhat = (xf - mu) * inv
    gb = np.add.reduce(g, axis=0)
    gw = np.add.reduce(g * xhat, axis=0)
    gs = g if weight is None else g * up(weight).astype(ct).reshape(1, d)
    dt = ct.type(max(d, 1))
    gx = inv * (gs - np.add.reduce(gs, axis=1, keepdims=True) / dt
                - xhat * (np.add.reduce(gs * xhat, axis=1, keepdims=True) / dt))
    return down(arr(gx).reshape(x.shape), x.dtype), down(gw, x.dtype), down(gb, x.dtype)


defop("layer_norm_grad", ("x", "weight?", "mean", "inv_std", "grad_out"),
      {"epsilon": 1e-5, "begin_norm_axis": 1},
      outputs=("grad_x", "grad_weight", "grad_bias"), infer=_lng_infer, reference=_lng_ref,
      canon=_lng_canon, promote=None, differentiable=False, family="nn_grad", api=False,
      method=False, doc="Gradients of layer_norm's out w.r.t. x, weight and bias.")


# ---------------------------------------------------------------- softmax_grad
def _axis_canon(attrs):
    a = dict(attrs)
    v = a["axis"]
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise InvalidTypeError(f"'axis' must be an int, got {v!r}")
    a["axis"] = int(v)
    return a


def _smg_infer(out, grad_out, axis=-1):
    require_real_float(out, "out")
    _same_float(grad_out, out, "grad_out", "out")
    _check_shape(grad_out, out.shape, "grad_out", "the shape of out")
    norm_axis(axis, len(out.shape))
    return out


def _smg_ref(out, grad_out, axis=-1):
    _smg_infer(*_types(out, grad_out), axis=axis)
    ax = norm_axis(axis, out.ndim)
    y, g = up(out), up(grad_out)
    return down(y * (g - np.add.reduce(g * y, axis=ax, keepdims=True)), out.dtype)


def _lsmg_ref(out, grad_out, axis=-1):
    _smg_infer(*_types(out, grad_out), axis=axis)
    ax = norm_axis(axis, out.ndim)
    y, g = up(out), up(grad_out)
    return down(g - np.exp(y) * np.add.reduce(g, axis=ax, keepdims=True), out.dtype)


defop("softmax_grad", ("out", "grad_out"), {"axis": -1}, infer=_smg_infer, reference=_smg_ref,
      canon=_axis_canon, promote=None, differentiable=False, family="nn_grad", api=False,
      method=False, doc="Gradient of softmax from its result: out * (g - sum(g * out)).")
defop("log_softmax_grad", ("out", "grad_out"), {"axis": -1}, infer=_smg_infer,
      reference=_lsmg_ref, canon=_axis_canon, promote=None, differentiable=False,
      family="nn_grad", api=False, method=False,
      doc="Gradient of log_softmax from its result: g - exp(out) * sum(g).")


def _relug_infer(out, grad_out):
    require_real_float(out, "out")
    _same_float(grad_out, out, "grad_out", "out")
    _check_shape(grad_out, out.shape, "grad_out", "the shape of out")
    return out


def _relu_grad_ref(out, grad_out):
    _relug_infer(*_types(out, grad_out))
    # bool -> float multiplication in one ufunc pass (where() would be two)
    return np.multiply(grad_out, out > 0, dtype=grad_out.dtype)


_REAL_FLOAT_NP = frozenset(d.np for d in (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64))


def _check_activation_grad(out, grad_out):
    # checked in full only when the cheap test fails: these run once per node of a
    # backward pass, mostly on small tensors
    if not (out.dtype is grad_out.dtype and out.shape == grad_out.shape and
            out.dtype in _REAL_FLOAT_NP):
        _relug_infer(*_types(out, grad_out))


# in place into the one fresh array, in the rules' order of operations (same bits);
# 0-d operands give NumPy scalars, which cannot be written in place
def _tanh_grad_ref(out, grad_out):
    _check_activation_grad(out, grad_out)
    if not out.ndim:
        return grad_out - grad_out * out * out
    r = grad_out * out
    r *= out
    return np.subtract(grad_out, r, out=r)


def _sigmoid_grad_ref(out, grad_out):
    _check_activation_grad(out, grad_out)
    if not out.ndim:
        return grad_out * (out - out * out)
    r = out * out
    np.subtract(out, r, out=r)
    r *= grad_out
    return r


def _dropg_infer(mask, grad_out, scale=1.0):
    require_real_float(grad_out, "grad_out")
    if mask.dtype != _dt.bool_:
        raise InvalidTypeError(f"'mask' must be bool, got {mask.dtype}")
    _check_shape(mask, grad_out.shape, "mask", "the shape of grad_out")
    return grad_out


def _dropg_ref(mask, grad_out, scale=1.0):
    _dropg_infer(*_types(mask, grad_out), scale=scale)
    g = np.multiply(grad_out, mask, dtype=grad_out.dtype)
    if scale != 1.0:
        g *= g.dtype.type(scale)
    return g


defop("relu_grad", ("out", "grad_out"), infer=_relug_infer,
      reference=_relu_grad_ref, promote=None, differentiable=False, family="nn_grad",
      api=False, method=False, doc="Gradient of relu from its result: grad_out * (out > 0).")
for _name, _ref, _doc in (("tanh_grad", _tanh_grad_ref, "grad_out * (1 - out^2)"),
                          ("sigmoid_grad", _sigmoid_grad_ref, "grad_out * out * (1 - out)")):
    defop(_name, ("out", "grad_out"), infer=_relug_infer, reference=_ref, promote=None,
          differentiable=False, family="nn_grad", api=False, method=False, fast="binary",
          doc=f"Gradient of {_name[:-5]} from its result: {_doc}.")
defop("dropout_grad", ("mask", "grad_out"), {"scale": 1.0}, infer=_dropg_infer,
      reference=_dropg_ref, promote=None, differentiable=False, family="nn_grad", api=False,
      method=False, doc="Gradient of dropout from its keep mask: grad_out * mask * scale.")


# ---------------------------------------------------------------- cross entropy
def _ceg_infer(softmax, label, weight, grad_loss, soft_label=False, ignore_index=-100,
               reduction="mean", axis=-1):
    require_real_float(softmax, "softmax")
    ax, _ = _ce_layout(softmax, label, soft_label, axis)
    if weight is not None:
        _same_float(weight, softmax, "weight", "softmax")
        c = softmax.shape[ax]
        if len(weight.shape) != 1 or (_known(c, weight.shape[0]) and weight.shape[0] != c):
            raise InvalidArgumentError(f"weight {shp(weight.shape)} must be [{c}] (one per "
                                       f"class)")
    _same_float(grad_loss, softmax, "grad_loss", "softmax")
    if reduction == "none":
        per = tuple(softmax.shape[:ax]) + (1,) + tuple(softmax.shape[ax + 1:]) if soft_label \
            else tuple(label.shape)
        _check_shape(grad_loss, per, "grad_loss", "the shape of the unreduced loss")
    else:
        _check_shape(grad_loss, (), "grad_loss", "the reduced loss is 0-D")
    return softmax


def _ceg_ref(softmax, label, weight, grad_loss, soft_label=False, ignore_index=-100,
             reduction="mean", axis=-1):
    _ceg_infer(*_types(softmax, label, weight, grad_loss), soft_label=soft_label,
               reduction=reduction, axis=axis)
    ax, keep = _ce_layout(*_types(softmax, label), soft_label, axis)
    sm = up(softmax)
    ct = sm.dtype
    c = softmax.shape[ax]
    w = None if weight is None else up(weight).astype(ct)
    wshape = [1] * sm.ndim
    wshape[ax] = c
    gl = up(grad_loss).astype(ct)
    if soft_label:
        lab = up(label).astype(ct)
        per_w = None if w is None else np.add.reduce(lab * w.reshape(wshape), axis=ax,
                                                     keepdims=True)
        base = sm * np.add.reduce(lab, axis=ax, keepdims=True) - lab
        ignored = None
        gl_k = gl if reduction == "none" else gl.reshape((1,) * sm.ndim)
    else:
        ignored, safe, bad = hard_labels(label, keep, ax, c, ignore_index)
        onehot = np.zeros_like(sm)
        np.put_along_axis(onehot, safe, 1, axis=ax)
        base = poison_bad_labels(np.where(ignored, 0, sm - onehot), bad)
        per_w = None if w is None else np.where(ignored, 0, w[safe])
        if reduction == "none":
            gl_k = gl if keep else np.expand_dims(gl, ax)
        else:
            gl_k = gl.reshape((1,) * sm.ndim)
    f = gl_k
    if per_w is not None:
        f = f * per_w
    if reduction == "mean":
        if per_w is not None:
            den = np.add.reduce(per_w, axis=None)
        elif not soft_label and ignore_index >= 0:
            den = np.sum(~ignored, dtype=ct)  # (a 0-d array on a device, not a host int)
        else:
            n_loss = sm.size // max(c, 1) if c else 0
            den = ct.type(n_loss)
        f = f / (den if den != 0 else ct.type(1))
    return down(arr(base * f, ct), softmax.dtype)


defop("cross_entropy_with_softmax_grad", ("softmax", "label", "weight?", "grad_loss"),
      {"soft_label": False, "ignore_index": -100, "reduction": "mean", "axis": -1},
      infer=_ceg_infer, reference=_ceg_ref,
      canon=_reduction_canon(ints=("ignore_index", "axis"), bools=("soft_label",)),
      promote=None, differentiable=False, family="nn_grad", api=False, method=False,
      doc="Gradient of cross_entropy_with_softmax's loss w.r.t. the logits, from its softmax.")
