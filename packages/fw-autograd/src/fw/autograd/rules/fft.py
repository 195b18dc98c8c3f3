"""VJP rules of the three DFT ops (and fftshift).

A DFT is linear, so its VJP is its adjoint: the inverse transform with the
"swapped" normalisation ('backward' <-> 'forward', 'ortho' stays). The ops
resize their input (zero-pad or crop to ``s``) before transforming; the
adjoint of that resize crops or zero-pads the gradient back.

One-sided transforms need care at the edges:

- ``fft_r2c`` keeps bins 0..n//2 of the last axis; its adjoint zero-fills the
  dropped bins, transforms back and keeps the real part (the input is real);
- ``fft_c2r`` (irfft) reads bin k (0 < k < n/2) twice — as itself and as its
  mirror n-k — and ignores the imaginary part of bin 0 and, for even n, of
  bin n/2: the gradient is the forward one-sided transform of g with the
  middle bins doubled (and, automatically, real edge bins).

The ``forward=False`` r2c (ihfft) and ``forward=True`` c2r (hfft) are the same
transforms with a conjugation, which the rules apply to the gradient.
"""

from __future__ import annotations

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._util import reshape_to
from fw.core.errors import UnsupportedError
from fw.core.ops import call

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _axes(ctx):
    nd = len(ctx.shape(0))
    return [a % nd for a in ctx.attrs["axes"]]


def _resize(t, axes, sizes, op):
    """Crop or zero-pad `t` to `sizes` along `axes` (the adjoint of the op's resize)."""
    for a, n in zip(axes, sizes):
        cur = t.shape[a]
        if cur < 0 or n < 0:  # a dynamic size (IR): how much to crop or pad is unknown
            raise UnsupportedError(f"{op}: the gradient needs static sizes along the "
                                   f"transformed axes when the op resizes, got {cur} and {n}")
        if cur > n:
            t = fw.slice(t, [a], [0], [n])
        elif cur < n:
            pads = [0] * (2 * t.ndim)
            pads[2 * a + 1] = n - cur
            t = call("pad", t, paddings=pads, mode="constant", value=0.0)
    return t


@vjp("fft_c2c", inputs=False)
def _c2c(ctx, g):
    a = ctx.attrs
    axes = _axes(ctx)
    r = call("fft_c2c", g, axes=tuple(axes), norm=_SWAP[a["norm"]], forward=not a["forward"],
             s=None)
    if a["s"] is None:  # no resize: the gradient has the input's sizes
        return r
    return _resize(r, axes, [ctx.shape(0)[x] for x in axes], "fft_c2c")


@vjp("fft_r2c", inputs=False)
def _r2c(ctx, g):
    a = ctx.attrs
    axes = _axes(ctx)
    shape = ctx.shape(0)
    sizes = list(a["s"]) if a["s"] is not None else [shape[x] for x in axes]
    norm = _SWAP[a["norm"]] if a["forward"] else a["norm"]
    if not a["forward"]:  # ihfft = conj(rfft(x, swapped norm))
        g = fw.conj(g)
    # zero-fill the dropped negative frequencies of the last axis, then the adjoint DFT
    full = _resize(g, [axes[-1]], [sizes[-1]], "fft_r2c")
    r = fw.real(call("fft_c2c", full, axes=tuple(axes), norm=norm, forward=False, s=None))
    if a["s"] is None:
        return r
    return _resize(r, axes, [shape[x] for x in axes], "fft_r2c")


@vjp("fft_c2r", inputs=False)
def _c2r(ctx, g):
    a = ctx.attrs
    axes = _axes(ctx)
    shape = ctx.shape(0)
    if a["s"] is not None:
        sizes = list(a["s"])
    else:
        sizes = [shape[x] for x in axes]
        sizes[-1] = 2 * (sizes[-1] - 1)
    n = sizes[-1]
    if n < 0 or shape[axes[-1]] < 0:
        raise UnsupportedError(f"fft_c2r: the gradient needs the static size of the last "
                               f"transformed axis, got {shape[axes[-1]]}")
    # irfft with norm m: grad = rfft(g, swapped m), middle bins doubled
    norm = _SWAP[a["norm"]] if not a["forward"] else a["norm"]
    r = call("fft_r2c", g, axes=tuple(axes), norm=norm, forward=True, s=None)
    m = n // 2 + 1
    w = [1.0] + [2.0] * max(m - 1, 0)
    if n % 2 == 0 and m > 1:
        w[-1] = 1.0
    wshape = [1] * r.ndim
    wshape[axes[-1]] = m
    r = r * reshape_to(fw.to_tensor(w[:m], dtype=r.dtype), wshape)
    if a["forward"]:  # hfft = irfft(conj(x), swapped norm)
        r = fw.conj(r)
    if a["s"] is None:  # r has the input's sizes already
        return r
    return _resize(r, axes, [shape[x] for x in axes], "fft_c2r")


@vjp("fftshift", inputs=False)
def _fftshift(ctx, g):
    return call("fftshift", g, axes=ctx.attrs["axes"], inverse=not ctx.attrs["inverse"])
