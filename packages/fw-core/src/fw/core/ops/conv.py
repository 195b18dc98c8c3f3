"""Convolution ops: one N-d convolution and one N-d transposed convolution.

``conv1d/2d/3d`` and ``conv1d/2d/3d_transpose`` of ``paddle.nn.functional`` are all
these two ops; the number of spatial dimensions is ``x.ndim - 2``.

``conv(x, weight, bias?)``
    x: ``[N, C_in, *S]`` (``[N, *S, C_in]`` with ``channel_last``);
    weight: ``[C_out, C_in / groups, *K]`` in every layout (Paddle's OIHW);
    bias: ``[C_out]`` or None. Result ``[N, C_out, *O]`` (``[N, *O, C_out]``).
    ``out[n, g*Og + o, p] = bias[g*Og + o] + sum_{c, k} x_pad[n, g*Cg + c, p*stride + k*dilation]
    * weight[g*Og + o, c, k]`` with ``Cg = C_in/groups``, ``Og = C_out/groups``.
``conv_transpose(x, weight, bias?)``
    x: ``[N, C_in, *S]``; weight: ``[C_in, C_out / groups, *K]`` (Paddle's IOHW);
    bias: ``[C_out]``. The adjoint of ``conv`` with the same stride, padding, dilation
    and groups: every input element scatters ``x * weight`` into the output at
    ``p*stride + k*dilation - pad_begin``.

Attributes (the same spelling as Paddle's arguments; each per-dimension value is an int
or a sequence with one entry, applied to every spatial dim, or one entry per dim):

- ``stride=1``, ``dilation=1``: ints >= 1.
- ``padding=0``: ``"SAME"`` / ``"VALID"`` (any case), or an int, ``[p_d...]``
  (symmetric, one per spatial dim), ``[b_0, e_0, b_1, e_1, ...]`` (begin/end per spatial
  dim, in spatial order: Paddle's ``[top, bottom, left, right]``), or Paddle's pairs form
  with one ``[b, e]`` per dimension of x in the layout's order, batch and channel pairs
  ``[0, 0]`` (canon flattens it to the begin/end form).
- ``groups=1``; ``channel_last=False`` (``data_format`` ending in ``C``).
- transposed only: ``output_padding=0`` (extra size added at the end of each spatial
  dim, each < max(stride, dilation)), ``output_size=None`` (the spatial output size;
  exclusive with a nonzero output_padding; each entry must lie in
  ``[size without it, that + stride)``).

Output sizes, per spatial dim (i input size, k kernel size, s, d, and b/e the pads):

- conv: ``o = (i + b + e - (d*(k-1) + 1)) // s + 1``; an input smaller than the dilated
  kernel is an error.
- conv_transpose: ``o = (i-1)*s - b - e + d*(k-1) + 1 + output_padding``.
- ``"VALID"`` is zero padding. ``"SAME"`` follows Paddle exactly: ``o_same = ceil(i/s)``,
  ``b + e = max((o_same-1)*s + k - i, 0)`` with ``b = (b+e)//2`` (the extra pixel goes at
  the end), and the dilation is taken as 1 (Paddle ignores ``dilation`` with "SAME").
  For conv_transpose the same pads are computed from the input size.

`conv_geometry` / `conv_transpose_geometry` resolve all this to per-dim numbers; fast
kernels (oneDNN) should call them so they agree with the reference on every form.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import shp
from fw.core.ops._registry import defop
from fw.core.ops.activation import contiguous, down, require_real_float, up

__all__ = ["canon_ints", "canon_padding", "expand", "explicit_pads", "same_pads",
           "conv_geometry", "conv_transpose_geometry", "split_layout", "to_channels_first",
           "from_channels_first"]


# ---------------------------------------------------------------- attribute spellings
def _scalar_int(v, name):
    if hasattr(v, "item") and getattr(v, "size", 1) == 1 and not isinstance(v, (list, tuple)):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise InvalidTypeError(f"'{name}' must contain ints, got {v!r}")
    return int(v)


def canon_ints(v, name, minimum=None, allow_none=False):
    """int / sequence of ints (or of 1-element tensors) -> tuple of ints."""
    if v is None:
        if allow_none:
            return None
        raise InvalidTypeError(f"'{name}' must be an int or a list of ints, got None")
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        v = v.tolist()
    t = (_scalar_int(v, name),) if not isinstance(v, (list, tuple)) else \
        tuple(_scalar_int(e, name) for e in v)
    if minimum is not None:
        for e in t:
            if e < minimum:
                raise InvalidArgumentError(f"'{name}'={list(t)} must be >= {minimum}")
    return t


def canon_padding(padding, channel_last=False):
    """Paddle's padding forms -> "SAME" / "VALID" / a tuple of ints (1, nd or 2*nd long)."""
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise InvalidArgumentError(f"'padding'={padding!r} must be 'SAME', 'VALID', an int "
                                       f"or a list")
        return p
    if hasattr(padding, "tolist") and not isinstance(padding, (list, tuple)):
        padding = padding.tolist()
    if isinstance(padding, (list, tuple)) and padding and all(
            isinstance(e, (list, tuple)) for e in padding):
        # pairs form: one [begin, end] per dimension of x, batch and channel included
        pairs = [canon_ints(e, "padding") for e in padding]
        if len(pairs) < 3 or any(len(p) != 2 for p in pairs):
            raise InvalidArgumentError(f"'padding'={padding!r}: the pairs form needs one "
                                       f"[begin, end] pair per dimension of x")
        ch = len(pairs) - 1 if channel_last else 1
        if any(pairs[0]) or any(pairs[ch]):
            raise InvalidArgumentError(f"'padding'={padding!r} pads the batch or channel "
                                       f"dimension; only spatial dimensions can be padded")
        spatial = [p for i, p in enumerate(pairs) if i not in (0, ch)]
        flat = tuple(v for p in spatial for v in p)
    else:
        flat = canon_ints(padding, "padding")
    if any(v < 0 for v in flat):
        raise InvalidArgumentError(f"'padding'={list(flat)} must not be negative")
    return flat


def expand(v, nd, name):
    """A canonical per-dim attribute (int or 1- or nd-tuple) -> nd-tuple."""
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    v = tuple(v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        raise InvalidArgumentError(f"'{name}'={list(v)} must have 1 or {nd} entries for an "
                                   f"input with {nd} spatial dimension(s)")
    return v


def explicit_pads(padding, nd):
    """A canonical int padding -> [(begin, end)] per spatial dim."""
    p = (padding,) if isinstance(padding, (int, np.integer)) else tuple(padding)
    if len(p) == 1:
        return [(p[0], p[0])] * nd
    if len(p) == nd:
        return [(v, v) for v in p]
    if len(p) == 2 * nd:
        return [(p[2 * i], p[2 * i + 1]) for i in range(nd)]
    raise InvalidArgumentError(f"'padding'={list(p)} must have 1, {nd} or {2 * nd} entries for "
                               f"an input with {nd} spatial dimension(s)")


def same_pads(in_sizes, strides, ksizes):
    """Paddle's "SAME" pads: ceil(i/s) outputs, the extra pixel at the end."""
    pads = []
    for i, s, k in zip(in_sizes, strides, ksizes):
        if i == DYN:
            pads.append((DYN, DYN))
            continue
        o = -(-i // s)
        tot = max((o - 1) * s + k - i, 0)
        pads.append((tot // 2, tot - tot // 2))
    return pads


def _resolve_pads(padding, in_sizes, strides, ksizes):
    """-> (pads, same) where same says dilation must be taken as 1 (Paddle's rule)."""
    nd = len(in_sizes)
    if padding == "SAME":
        return same_pads(in_sizes, strides, ksizes), True
    if padding == "VALID":
        return [(0, 0)] * nd, False
    return explicit_pads(padding, nd), False


def conv_geometry(in_sizes, ksizes, stride=1, padding=0, dilation=1):
    """Resolve conv attributes for spatial input sizes `in_sizes` and kernel sizes
    `ksizes` (-1 = dynamic). Returns (strides, pads [(b, e)], dilations, out_sizes)."""
    nd = len(in_sizes)
    strides = expand(stride, nd, "stride")
    dils = expand(dilation, nd, "dilation")
    pads, same = _resolve_pads(padding, in_sizes, strides, ksizes)
    if same:
        dils = (1,) * nd
    outs = []
    for i, k, s, d, (b, e) in zip(in_sizes, ksizes, strides, dils, pads):
        if i == DYN or k == DYN or b == DYN:
            outs.append(DYN)
            continue
        ek = d * (k - 1) + 1
        if i + b + e < ek:
            raise InvalidArgumentError(
                f"the padded input size {i + b + e} (size {i}, padding {b}+{e}) is smaller than "
                f"the dilated kernel size {ek} (kernel {k}, dilation {d})")
        outs.append((i + b + e - ek) // s + 1)
    return strides, pads, dils, tuple(outs)


def conv_transpose_geometry(in_sizes, ksizes, stride=1, padding=0, output_padding=0,
                            dilation=1, output_size=None):
    """Resolve conv_transpose attributes; returns (strides, pads, dilations, out_sizes)."""
    nd = len(in_sizes)
    strides = expand(stride, nd, "stride")
    dils = expand(dilation, nd, "dilation")
    opad = expand(output_padding, nd, "output_padding")
    pads, same = _resolve_pads(padding, in_sizes, strides, ksizes)
    if same:
        dils = (1,) * nd
    want = None
    if output_size is not None:
        want = tuple(output_size)[-nd:] if len(output_size) >= nd else \
            expand(output_size, nd, "output_size")
        if any(opad):
            raise InvalidArgumentError(f"'output_size'={list(output_size)} and "
                                       f"'output_padding'={list(opad)} are mutually exclusive")
    outs = []
    for j, (i, k, s, d, (b, e), op) in enumerate(zip(in_sizes, ksizes, strides, dils, pads,
                                                        opad)):
        if op >= max(s, d):
            raise InvalidArgumentError(f"'output_padding'={list(opad)} must be smaller than "
                                       f"max(stride, dilation) = {max(s, d)} in each dimension")
        if i == DYN or k == DYN or b == DYN:
            outs.append(DYN if want is None else want[j])
            continue
        base = (i - 1) * s - b - e + d * (k - 1) + 1
        if want is not None:
            if not base <= want[j] < base + s:
                raise InvalidArgumentError(
                    f"'output_size'={list(want)}: entry {j} must be in [{base}, {base + s}) "
                    f"for input size {i}, kernel {k}, stride {s}, padding {b}+{e}, "
                    f"dilation {d}")
            o = want[j]
        else:
            o = base + op
        if o < 1:
            raise InvalidArgumentError(f"the output size {o} of spatial dim {j} is not positive "
                                       f"(input size {i}, kernel {k}, stride {s}, padding "
                                       f"{b}+{e}, dilation {d})")
        outs.append(o)
    return strides, pads, dils, tuple(outs)


# ---------------------------------------------------------------- layouts
def split_layout(shape, channel_last):
    """(N, C, spatial sizes) of a [N, C, *S] or [N, *S, C] shape."""
    if channel_last:
        return shape[0], shape[-1], tuple(shape[1:-1])
    return shape[0], shape[1], tuple(shape[2:])


def join_layout(n, c, spatial, channel_last):
    return (n,) + tuple(spatial) + (c,) if channel_last else (n, c) + tuple(spatial)


def to_channels_first(x, channel_last):
    return np.moveaxis(x, -1, 1) if channel_last else x


def from_channels_first(x, channel_last):
    return contiguous(np.moveaxis(x, 1, -1)) if channel_last else x


# ---------------------------------------------------------------- shape checks
def _known(*ds):
    return all(d != DYN for d in ds)


def _check_conv(xs, ws, bs, groups, channel_last, transpose, min_nd=1):
    """Validate x/weight/bias shapes; -> (N, C_in, in_sizes, C_out, ksizes)."""
    if len(xs) < 2 + min_nd:
        raise InvalidArgumentError(f"x must be [N, C, spatial...] with at least {min_nd} "
                                   f"spatial dimension(s), got shape {shp(xs)}")
    if len(ws) != len(xs):
        raise InvalidArgumentError(f"weight {shp(ws)} must have the rank of x {shp(xs)}")
    n, c, sp = split_layout(xs, channel_last)
    ks = tuple(ws[2:])
    if any(k == 0 for k in ks):
        raise InvalidArgumentError(f"weight {shp(ws)} has an empty kernel dimension")
    if groups < 1:
        raise InvalidArgumentError(f"'groups' must be >= 1, got {groups}")
    lay = "channel-last" if channel_last else "channel-first"
    if transpose:
        if _known(c, ws[0]) and c != ws[0]:
            raise InvalidArgumentError(
                f"x has {c} input channels ({lay} shape {shp(xs)}) but weight {shp(ws)} "
                f"(layout [C_in, C_out/groups, *kernel]) expects {ws[0]}")
        if _known(c) and c % groups:
            raise InvalidArgumentError(f"'groups'={groups} does not divide the {c} input "
                                       f"channels of x {shp(xs)}")
        cout = DYN if ws[1] == DYN else ws[1] * groups
    else:
        if _known(c, ws[1]) and c != ws[1] * groups:
            raise InvalidArgumentError(
                f"x has {c} input channels ({lay} shape {shp(xs)}) but weight {shp(ws)} "
                f"(layout [C_out, C_in/groups, *kernel]) with groups={groups} expects "
                f"{ws[1] * groups}")
        if _known(ws[0]) and ws[0] % groups:
            raise InvalidArgumentError(f"'groups'={groups} does not divide the {ws[0]} output "
                                       f"channels of weight {shp(ws)}")
        cout = ws[0]
    if bs is not None:
        if len(bs) != 1 or (_known(bs[0], cout) and bs[0] != cout):
            raise InvalidArgumentError(f"bias {shp(bs)} must be 1-D with {cout} entries (one "
                                       f"per output channel)")
    return n, c, sp, cout, ks


def _conv_canon(attrs, transpose=False):
    a = dict(attrs)
    a["channel_last"] = bool(a["channel_last"])
    a["stride"] = canon_ints(a["stride"], "stride", 1)
    a["dilation"] = canon_ints(a["dilation"], "dilation", 1)
    a["padding"] = canon_padding(a["padding"], a["channel_last"])
    g = a["groups"]
    a["groups"] = _scalar_int(g, "groups")
    if transpose:
        a["output_padding"] = canon_ints(a["output_padding"], "output_padding", 0)
        a["output_size"] = canon_ints(a["output_size"], "output_size", 1, allow_none=True)
    return a


def _float_types(x, weight, bias):
    require_real_float(x)
    require_real_float(weight, "weight")
    if bias is not None:
        require_real_float(bias, "bias")


# ---------------------------------------------------------------- conv
def _conv_infer(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                channel_last=False):
    _float_types(x, weight, bias)
    n, _, sp, cout, ks = _check_conv(x.shape, weight.shape, None if bias is None else
                                     bias.shape, groups, channel_last, False)
    _, _, _, outs = conv_geometry(sp, ks, stride, padding, dilation)
    return TensorType(join_layout(n, cout, outs, channel_last), x.dtype)


def _conv_ref(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
              channel_last=False):
    n, c, sp, cout, ks = _check_conv(x.shape, weight.shape, None if bias is None else
                                     bias.shape, groups, channel_last, False)
    strides, pads, dils, outs = conv_geometry(sp, ks, stride, padding, dilation)
    nd = len(sp)
    xt = to_channels_first(up(x), channel_last)
    w = up(weight)
    if any(b or e for b, e in pads):
        xt = np.pad(xt, [(0, 0), (0, 0)] + list(pads))
    eff = tuple(d * (k - 1) + 1 for k, d in zip(ks, dils))
    # im2col as a strided view: [N, C, *positions, *window], then stride/dilation slicing
    win = sliding_window_view(xt, eff, axis=tuple(range(2, 2 + nd)))
    win = win[(slice(None), slice(None))
              + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(outs, strides))
              + tuple(slice(None, None, d) for d in dils)]
    g, cg, og = groups, c // groups, cout // groups
    kk = int(np.prod(ks))
    npos = int(np.prod(outs))
    win = win.reshape((n, g, cg) + outs + ks)  # splitting C keeps it a view
    perm = (1, 0) + tuple(range(3, 3 + nd)) + (2,) + tuple(range(3 + nd, 3 + 2 * nd))
    cols = win.transpose(perm).reshape(g, n * npos, cg * kk)  # the one copy
    wg = w.reshape(g, og, cg * kk)
    out = np.matmul(cols, wg.transpose(0, 2, 1))  # [G, N*P, Og]
    out = out.reshape((g, n) + outs + (og,))
    out = out.transpose((1, 0, 2 + nd) + tuple(range(2, 2 + nd))).reshape((n, cout) + outs)
    if bias is not None:
        out = out + up(bias).reshape((1, cout) + (1,) * nd)
    return down(contiguous(from_channels_first(out, channel_last)), x.dtype)


defop("conv", ("x", "weight", "bias?"),
      {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, "channel_last": False},
      infer=_conv_infer, reference=_conv_ref, canon=_conv_canon, to_float=True,
      family="conv", api=False, method=False,
      doc="N-d convolution (cross-correlation) of x [N, C_in, *S] with weight "
          "[C_out, C_in/groups, *K], plus bias [C_out]; see fw.core.ops.conv.")


# ---------------------------------------------------------------- conv_transpose
def _conv_t_infer(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1,
                  groups=1, output_size=None, channel_last=False):
    _float_types(x, weight, bias)
    n, _, sp, cout, ks = _check_conv(x.shape, weight.shape, None if bias is None else
                                     bias.shape, groups, channel_last, True)
    _, _, _, outs = conv_transpose_geometry(sp, ks, stride, padding, output_padding, dilation,
                                            output_size)
    return TensorType(join_layout(n, cout, outs, channel_last), x.dtype)


def _conv_t_ref(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1,
                groups=1, output_size=None, channel_last=False):
    n, c, sp, cout, ks = _check_conv(x.shape, weight.shape, None if bias is None else
                                     bias.shape, groups, channel_last, True)
    strides, pads, dils, outs = conv_transpose_geometry(sp, ks, stride, padding, output_padding,
                                                        dilation, output_size)
    nd = len(sp)
    xt = to_channels_first(up(x), channel_last)
    w = up(weight)
    g, cg, og = groups, c // groups, cout // groups
    npos = int(np.prod(sp))
    kk = int(np.prod(ks))
    xs = xt.reshape(n, g, cg, npos).transpose(1, 0, 3, 2)  # [G, N, P, Cg]
    cols = np.matmul(xs.reshape(g, n * npos, cg), w.reshape(g, cg, og * kk))
    cols = cols.reshape((g, n) + sp + (og,) + ks)
    # the un-cropped output: every input position p writes to p*s + k*d
    full = tuple(max((i - 1) * s + d * (k - 1) + 1, b + o)
                 for i, s, d, k, (b, _), o in zip(sp, strides, dils, ks, pads, outs))
    buf = np.zeros_like(cols, shape=(n, g, og) + full)
    view = buf.transpose((1, 0) + tuple(range(3, 3 + nd)) + (2,))  # [G, N, *full, Og]
    lead = (slice(None), slice(None))
    for k in np.ndindex(*ks):  # a loop over kernel offsets, vectorised over everything else
        dst = lead + tuple(slice(kj * d, kj * d + (i - 1) * s + 1, s)
                           for kj, d, i, s in zip(k, dils, sp, strides))
        view[dst] += cols[lead + (slice(None),) * nd + (slice(None),) + k]
    out = buf.reshape((n, cout) + full)
    out = out[lead + tuple(slice(b, b + o) for (b, _), o in zip(pads, outs))]
    if bias is not None:
        out = out + up(bias).reshape((1, cout) + (1,) * nd)
    return down(contiguous(from_channels_first(out, channel_last)), x.dtype)


defop("conv_transpose", ("x", "weight", "bias?"),
      {"stride": 1, "padding": 0, "output_padding": 0, "dilation": 1, "groups": 1,
       "output_size": None, "channel_last": False},
      infer=_conv_t_infer, reference=_conv_t_ref,
      canon=lambda a: _conv_canon(a, transpose=True), to_float=True, family="conv", api=False,
      method=False,
      doc="N-d transposed convolution of x [N, C_in, *S] with weight [C_in, C_out/groups, *K], "
          "plus bias [C_out]; see fw.core.ops.conv.")

