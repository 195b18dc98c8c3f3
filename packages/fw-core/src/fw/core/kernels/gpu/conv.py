"""Convolutions on the GPU: ``conv``, ``conv_transpose`` (the input gradient of
``conv``) and ``conv_grad_weight``, for 1-D and 2-D inputs in both layouts, every
padding form, stride, dilation and group count.

The reference builds its im2col matrix from a strided window view that CuPy copies
with one gather per window axis, and scatters conv_transpose one kernel offset at a
time (7.7x PyTorch for ResNet-18 inference on an H200, docs/gpu.md). Here:

- ``conv``: one launch writes the im2col matrix ``[G, Cg*K, N*P]`` (zeros where a
  tap falls in the padding), one cuBLAS GEMM per batch of groups multiplies it by the
  weight, and one launch moves ``[C_out, N, P]`` into the output's layout adding the
  bias (the layout of Caffe's and cuDNN's GEMM convolution);
- ``conv_transpose``: one GEMM makes the column matrix ``W^T x`` and one launch folds
  it into the output by gathering: each output element sums the (kernel offset, input
  position) pairs that land on it, in the reference's kernel-offset order, so no
  atomics and the same float32 sum;
- ``conv_grad_weight``: im2col of x and one GEMM with the output gradient, whose
  row sums are the bias gradient;
- depthwise convolutions (``groups == C_in == C_out``) skip the GEMM: one direct
  launch each way (forward and transposed).

float16 products run on cuBLAS's float16 GEMM with float32 accumulation, bfloat16
ones too when they are 2-D (one group; CuPy 14 has no batched bfloat16 product) and in
float32 otherwise; the transposed convolution forms its column matrix in float32
(each output sums several of its entries). The column matrix is made for a slice of
the batch at a time so that it stays under `COLS_BUDGET` bytes. Anything else (3-D,
mixed dtypes, empty tensors, sizes past int32 within one plane) runs the reference.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from fw.core.kernels.gpu._raw import available, blocks, ctype, enabled, memo, module
from fw.core.ops.conv import _check_conv, conv_geometry, conv_transpose_geometry, join_layout

__all__ = ["ConvPlan", "conv_plan", "conv_transpose_plan", "logical_strides", "batch_slice",
           "gemm_dtype", "COLS_BUDGET", "TF32", "kernels"]

# bytes of im2col/column matrix made at once (the batch is sliced to stay under it)
COLS_BUDGET = 1 << 30
# FW_GPU_CONV_TF32=1: float32 convolution GEMMs on TF32 tensor cores (10-bit mantissa
# products, float32 sums), as PyTorch's cuDNN convolutions do by default; off by
# default, since the reference multiplies in full float32. Read per call.
TF32 = os.environ.get("FW_GPU_CONV_TF32", "0").strip().lower() in ("1", "true", "yes", "on")
_I32 = 2 ** 31 - 1
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F32 = np.dtype(np.float32)

_SRC = r"""
extern "C" __global__ void im2col(const T* __restrict__ x, T* __restrict__ cols,
        int C, int H, int W, int KH, int KW, int OH, int OW, int nb, i64 NP,
        i64 sn, i64 sc, i64 sy, i64 sx, int str_h, int str_w, int pad_t, int pad_l,
        int dil_h, int dil_w) {
    const int P = OH * OW;
    const int rows = C * KH * KW;
    for (int n = blockIdx.z; n < nb; n += gridDim.z) {
        for (int row = blockIdx.y; row < rows; row += gridDim.y) {
            const int kx = row % KW;
            const int t = row / KW;
            const int ky = t % KH;
            const int c = t / KH;
            const T* xc = x + (i64)n * sn + (i64)c * sc;
            T* dst = cols + (i64)row * NP + (i64)n * P;
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                const int oy = p / OW;
                const int ox = p - oy * OW;
                const int iy = oy * str_h - pad_t + ky * dil_h;
                const int ix = ox * str_w - pad_l + kx * dil_w;
                T v = T();
                if (iy >= 0 && iy < H && ix >= 0 && ix < W) v = xc[(i64)iy * sy + (i64)ix * sx];
                dst[p] = v;
            }
        }
    }
}

/* r: [C, nb, P] (the GEMM's result) -> out (strides on, oc, op) + bias */
template <typename R>
__device__ void finish_body(const R* __restrict__ r, const T* __restrict__ bias, int has_bias,
        T* __restrict__ out, int C, int nb, int P, i64 on, i64 oc, i64 op) {
    for (int n = blockIdx.z; n < nb; n += gridDim.z) {
        for (int c = blockIdx.y; c < C; c += gridDim.y) {
            const A b = has_bias ? (A)fw_ld(bias, c) : (A)0;
            const i64 src = ((i64)c * nb + n) * P;
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                fw_st(out, (i64)n * on + (i64)c * oc + (i64)p * op, (A)fw_ld(r, src + p) + b);
            }
        }
    }
}
extern "C" __global__ void finish(const T* r, const T* bias, int has_bias, T* out, int C,
        int nb, int P, i64 on, i64 oc, i64 op) {
    finish_body<T>(r, bias, has_bias, out, C, nb, P, on, oc, op);
}
extern "C" __global__ void finish_f(const float* r, const T* bias, int has_bias, T* out,
        int C, int nb, int P, i64 on, i64 oc, i64 op) {
    finish_body<float>(r, bias, has_bias, out, C, nb, P, on, oc, op);
}

/* transposed convolution: cols [C*KH*KW, nb*H*W] (row (c*KH + ky)*KW + kx) folded into
   out [nb, C, OH, OW] (strides on, oc, oy_s, ox_s): every output element gathers the
   entries whose position iy*str - pad + ky*dil lands on it */
template <typename R>
__device__ void col2im_body(const R* __restrict__ cols, const T* __restrict__ bias,
        int has_bias, T* __restrict__ out, int C, int H, int W, int KH, int KW, int OH, int OW,
        int nb, i64 NP, i64 on, i64 oc, i64 oy_s, i64 ox_s, int str_h, int str_w, int pad_t,
        int pad_l, int dil_h, int dil_w) {
    const int P = OH * OW;
    const int Pin = H * W;
    for (int n = blockIdx.z; n < nb; n += gridDim.z) {
        for (int c = blockIdx.y; c < C; c += gridDim.y) {
            const A b = has_bias ? (A)fw_ld(bias, c) : (A)0;
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                const int y = p / OW;
                const int x = p - y * OW;
                A acc = (A)0;
                for (int ky = 0; ky < KH; ++ky) {
                    const int Y = y + pad_t - ky * dil_h;
                    if (Y < 0) break;
                    if (Y % str_h) continue;
                    const int iy = Y / str_h;
                    if (iy >= H) continue;
                    for (int kx = 0; kx < KW; ++kx) {
                        const int X = x + pad_l - kx * dil_w;
                        if (X < 0) break;
                        if (X % str_w) continue;
                        const int ix = X / str_w;
                        if (ix >= W) continue;
                        const i64 row = ((i64)c * KH + ky) * KW + kx;
                        acc += (A)fw_ld(cols, row * NP + (i64)n * Pin + (i64)iy * W + ix);
                    }
                }
                fw_st(out, (i64)n * on + (i64)c * oc + (i64)y * oy_s + (i64)x * ox_s, acc + b);
            }
        }
    }
}
extern "C" __global__ void col2im(const T* cols, const T* bias, int has_bias, T* out, int C,
        int H, int W, int KH, int KW, int OH, int OW, int nb, i64 NP, i64 on, i64 oc,
        i64 oy_s, i64 ox_s, int str_h, int str_w, int pad_t, int pad_l, int dil_h,
        int dil_w) {
    col2im_body<T>(cols, bias, has_bias, out, C, H, W, KH, KW, OH, OW, nb, NP, on, oc, oy_s,
                   ox_s, str_h, str_w, pad_t, pad_l, dil_h, dil_w);
}
extern "C" __global__ void col2im_f(const float* cols, const T* bias, int has_bias, T* out,
        int C, int H, int W, int KH, int KW, int OH, int OW, int nb, i64 NP, i64 on, i64 oc,
        i64 oy_s, i64 ox_s, int str_h, int str_w, int pad_t, int pad_l, int dil_h,
        int dil_w) {
    col2im_body<float>(cols, bias, has_bias, out, C, H, W, KH, KW, OH, OW, nb, NP, on, oc,
                       oy_s, ox_s, str_h, str_w, pad_t, pad_l, dil_h, dil_w);
}

/* depthwise convolution, one output element per thread: w [C, 1, KH, KW] */
extern "C" __global__ void dw_fwd(const T* __restrict__ x, const T* __restrict__ w,
        const T* __restrict__ bias, int has_bias, T* __restrict__ out, int C, int H, int W,
        int KH, int KW, int OH, int OW, int N, i64 sn, i64 sc, i64 sy, i64 sx, i64 on, i64 oc,
        i64 oy_s, i64 ox_s, int str_h, int str_w, int pad_t, int pad_l, int dil_h,
        int dil_w) {
    const int P = OH * OW;
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        for (int c = blockIdx.y; c < C; c += gridDim.y) {
            const T* xc = x + (i64)n * sn + (i64)c * sc;
            const T* wc = w + (i64)c * KH * KW;
            const A b = has_bias ? (A)fw_ld(bias, c) : (A)0;
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                const int oy = p / OW;
                const int ox = p - oy * OW;
                A acc = (A)0;
                for (int ky = 0; ky < KH; ++ky) {
                    const int iy = oy * str_h - pad_t + ky * dil_h;
                    if (iy < 0 || iy >= H) continue;
                    for (int kx = 0; kx < KW; ++kx) {
                        const int ix = ox * str_w - pad_l + kx * dil_w;
                        if (ix < 0 || ix >= W) continue;
                        acc += (A)fw_ld(xc, (i64)iy * sy + (i64)ix * sx) *
                               (A)fw_ld(wc, ky * KW + kx);
                    }
                }
                fw_st(out, (i64)n * on + (i64)c * oc + (i64)oy * oy_s + (i64)ox * ox_s, acc + b);
            }
        }
    }
}

/* depthwise transposed convolution (the input gradient of dw_fwd): x [N, C, H, W],
   w [C, 1, KH, KW], out [N, C, OH, OW]; gathers like col2im */
extern "C" __global__ void dw_tr(const T* __restrict__ x, const T* __restrict__ w,
        const T* __restrict__ bias, int has_bias, T* __restrict__ out, int C, int H, int W,
        int KH, int KW, int OH, int OW, int N, i64 sn, i64 sc, i64 sy, i64 sx, i64 on, i64 oc,
        i64 oy_s, i64 ox_s, int str_h, int str_w, int pad_t, int pad_l, int dil_h,
        int dil_w) {
    const int P = OH * OW;
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        for (int c = blockIdx.y; c < C; c += gridDim.y) {
            const T* xc = x + (i64)n * sn + (i64)c * sc;
            const T* wc = w + (i64)c * KH * KW;
            const A b = has_bias ? (A)fw_ld(bias, c) : (A)0;
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                const int y = p / OW;
                const int xo = p - y * OW;
                A acc = (A)0;
                for (int ky = 0; ky < KH; ++ky) {
                    const int Y = y + pad_t - ky * dil_h;
                    if (Y < 0) break;
                    if (Y % str_h) continue;
                    const int iy = Y / str_h;
                    if (iy >= H) continue;
                    for (int kx = 0; kx < KW; ++kx) {
                        const int X = xo + pad_l - kx * dil_w;
                        if (X < 0) break;
                        if (X % str_w) continue;
                        const int ix = X / str_w;
                        if (ix >= W) continue;
                        acc += (A)fw_ld(xc, (i64)iy * sy + (i64)ix * sx) *
                               (A)fw_ld(wc, ky * KW + kx);
                    }
                }
                fw_st(out, (i64)n * on + (i64)c * oc + (i64)y * oy_s + (i64)xo * ox_s, acc + b);
            }
        }
    }
}
"""

_GRID_YZ = 65535


@dataclass(frozen=True)
class ConvPlan:
    """A 1-D or 2-D (transposed) convolution resolved to the kernels' 2-D numbers
    (a 1-D one is 2-D with height 1). For conv_transpose ``h, w`` are its input sizes
    and ``oh, ow`` its output sizes, as in the kernels."""
    n: int
    c: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    oh: int
    ow: int
    sh: int
    sw: int
    pt: int
    pl: int
    dh: int
    dw: int
    groups: int
    nd: int
    channel_last: bool
    out_shape: tuple

    @property
    def depthwise(self) -> bool:
        return self.groups > 1 and self.groups == self.c == self.cout

    @property
    def geo(self) -> tuple:
        """(stride_h, stride_w, pad_top, pad_left, dil_h, dil_w) as kernel arguments."""
        return tuple(np.int32(v) for v in (self.sh, self.sw, self.pt, self.pl, self.dh,
                                           self.dw))


def _plan(n, c, sp, cout, ks, strides, pads, dils, outs, groups, channel_last):
    nd = len(sp)
    if nd not in (1, 2) or 0 in (n, c, cout) or 0 in tuple(sp) or 0 in tuple(outs):
        return None
    lift = (lambda v, one: (one,) + tuple(v)) if nd == 1 else (lambda v, one: tuple(v))
    h, w = lift(sp, 1)
    kh, kw = lift(ks, 1)
    oh, ow = lift(outs, 1)
    sh, sw = lift(strides, 1)
    dh, dw = lift(dils, 1)
    pt, pl = lift([b for b, _ in pads], 0)
    big = max(h * w, oh * ow, c * kh * kw, cout * kh * kw, n, c, cout)
    if big > _I32:
        return None
    return ConvPlan(n, c, h, w, cout, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw, groups, nd,
                    bool(channel_last), join_layout(n, cout, tuple(outs), channel_last))


@memo
def conv_plan(x_shape, w_shape, bias_shape, stride=1, padding=0, dilation=1, groups=1,
              channel_last=False):
    """The plan of ``conv`` for these shapes and canonical attributes, or None when the
    kernels do not take it (the reference runs; it also raises the errors)."""
    n, c, sp, cout, ks = _check_conv(x_shape, w_shape, bias_shape, groups, channel_last,
                                     False)
    strides, pads, dils, outs = conv_geometry(sp, ks, stride, padding, dilation)
    return _plan(n, c, sp, cout, ks, strides, pads, dils, outs, groups, channel_last)


@memo
def conv_transpose_plan(x_shape, w_shape, bias_shape, stride=1, padding=0, output_padding=0,
                        dilation=1, groups=1, output_size=None, channel_last=False):
    """The plan of ``conv_transpose`` (x's sizes are ``h, w``; the output's ``oh, ow``)."""
    n, c, sp, cout, ks = _check_conv(x_shape, w_shape, bias_shape, groups, channel_last, True)
    strides, pads, dils, outs = conv_transpose_geometry(sp, ks, stride, padding,
                                                        output_padding, dilation, output_size)
    return _plan(n, c, sp, cout, ks, strides, pads, dils, outs, groups, channel_last)


def logical_strides(strides, itemsize, nd, channel_last):
    """Element strides (n, c, y, x) of a [N, C, *S] / [N, *S, C] array with byte
    `strides` and `nd` (1 or 2) spatial dims; a 1-D input has y stride 0."""
    st = [int(s) // itemsize for s in strides]
    if channel_last:
        sn, sc, spatial = st[0], st[-1], st[1:-1]
    else:
        sn, sc, spatial = st[0], st[1], st[2:]
    sy, sx = (0, spatial[0]) if nd == 1 else (spatial[0], spatial[1])
    return sn, sc, sy, sx


def batch_slice(n, per_sample_bytes, budget=None):
    """How many samples one column matrix holds: all, or as many as fit `budget`
    (at least one)."""
    budget = COLS_BUDGET if budget is None else budget
    return max(1, min(n, budget // max(per_sample_bytes, 1)))


def gemm_dtype(dtype, groups):
    """The dtype the GEMM runs in: the data's, but float32 for grouped bfloat16
    (CuPy 14 multiplies bfloat16 in 2-D only)."""
    d = np.dtype(dtype)
    return _F32 if d == _BF16 and groups > 1 else d


def _i64(*vs):
    return tuple(np.int64(v) for v in vs)


@contextlib.contextmanager
def _gemm_mode(cp, dtype):
    """TF32 for float32 GEMMs inside the block when `TF32` is set (CuPy's per-dtype
    compute type, restored after)."""
    lin = getattr(getattr(cp, "_core", None), "_routines_linalg", None)
    if not TF32 or np.dtype(dtype) != np.float32 or lin is None:
        yield
        return
    prev = lin.get_compute_type(np.float32)
    lin.set_compute_type(np.float32, lin.COMPUTE_TYPE_TF32)
    try:
        yield
    finally:
        lin.set_compute_type(np.float32, prev)


def _grid(p, rows, n):
    return (blocks(p), min(rows, _GRID_YZ), min(n, _GRID_YZ))


def kernels(cp):
    from fw.core.ops._registry import OPS

    def same_float(*arrays):
        d = arrays[0].dtype
        return ctype(d) is not None and all(a is None or a.dtype == d for a in arrays) \
            and available(cp, "conv", d, _SRC)

    def im2col(mod, p, xs, nb):
        """Columns [C*K, nb*P] of the batch slice `xs` (a view of x)."""
        P = p.oh * p.ow
        cols = cp.empty((p.c * p.kh * p.kw, nb * P), xs.dtype)
        sn, sc, sy, sx = logical_strides(xs.strides, xs.itemsize, p.nd, p.channel_last)
        mod.get_function("im2col")(
            _grid(P, p.c * p.kh * p.kw, nb), (256, 1, 1),
            (xs, cols, np.int32(p.c), np.int32(p.h), np.int32(p.w), np.int32(p.kh),
             np.int32(p.kw), np.int32(p.oh), np.int32(p.ow), np.int32(nb), np.int64(nb * P),
             *_i64(sn, sc, sy, sx), *p.geo))
        return cols

    def out_strides(out, p):
        sn, sc, sy, sx = logical_strides(out.strides, out.itemsize, p.nd, p.channel_last)
        return sn, sc, sy, sx

    def direct(name, p, x, weight, bias, out):
        mod = module(cp, "conv", x.dtype, _SRC)
        sn, sc, sy, sx = logical_strides(x.strides, x.itemsize, p.nd, p.channel_last)
        on, oc, oy, ox = out_strides(out, p)
        w = cp.ascontiguousarray(weight)
        mod.get_function(name)(
            _grid(p.oh * p.ow, p.c, p.n), (256, 1, 1),
            (x, w, bias if bias is not None else w, np.int32(bias is not None), out,
             np.int32(p.c), np.int32(p.h), np.int32(p.w), np.int32(p.kh), np.int32(p.kw),
             np.int32(p.oh), np.int32(p.ow), np.int32(p.n), *_i64(sn, sc, sy, sx),
             *_i64(on, oc, oy, ox), *p.geo))
        return out

    conv_ref = OPS["conv"].reference

    def conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
             channel_last=False):
        p = None
        if same_float(x, weight, bias):
            p = conv_plan(x.shape, weight.shape, None if bias is None else bias.shape,
                          stride, padding, dilation, groups, channel_last)
        if p is None:
            return conv_ref(x, weight, bias, stride=stride, padding=padding,
                            dilation=dilation, groups=groups, channel_last=channel_last)
        d = x.dtype
        bias = None if bias is None else cp.ascontiguousarray(bias)
        out = cp.empty(p.out_shape, d)
        if p.depthwise:
            return direct("dw_fwd", p, x, weight, bias, out)
        mod = module(cp, "conv", d, _SRC)
        g, cg, og = groups, p.c // groups, p.cout // groups
        kk, P = p.kh * p.kw, p.oh * p.ow
        gd = gemm_dtype(d, g)
        w2 = weight.reshape(g, og, cg * kk)
        w2 = (w2[0] if g == 1 else w2).astype(gd, copy=False)
        nb = batch_slice(p.n, p.c * kk * P * x.itemsize)
        fin = mod.get_function("finish" if gd == d else "finish_f")
        for n0 in range(0, p.n, nb):
            m = min(nb, p.n - n0)
            cols = im2col(mod, p, x[n0:n0 + m], m).astype(gd, copy=False)
            with _gemm_mode(cp, gd):
                if g == 1:
                    r = cp.matmul(w2, cols)  # [C_out, m*P]
                else:
                    r = cp.matmul(w2, cols.reshape(g, cg * kk, m * P))  # [G, Og, m*P]
            r = cp.ascontiguousarray(r.astype(gd, copy=False))
            o = out[n0:n0 + m]
            on, oc, oy, ox = out_strides(o, p)
            fin(_grid(P, p.cout, m), (256, 1, 1),
                (r, bias if bias is not None else o, np.int32(bias is not None), o,
                 np.int32(p.cout), np.int32(m), np.int32(P), *_i64(on, oc, ox)))
        return out

    convt_ref = OPS["conv_transpose"].reference

    def conv_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                       dilation=1, groups=1, output_size=None, channel_last=False):
        p = None
        if same_float(x, weight, bias):
            p = conv_transpose_plan(x.shape, weight.shape, None if bias is None else
                                    bias.shape, stride, padding, output_padding, dilation,
                                    groups, output_size, channel_last)
        if p is None:
            return convt_ref(x, weight, bias, stride=stride, padding=padding,
                             output_padding=output_padding, dilation=dilation, groups=groups,
                             output_size=output_size, channel_last=channel_last)
        d = x.dtype
        bias = None if bias is None else cp.ascontiguousarray(bias)
        out = cp.empty(p.out_shape, d)
        if p.depthwise:
            return direct("dw_tr", p, x, weight, bias, out)
        mod = module(cp, "conv", d, _SRC)
        g, cg, og = groups, p.c // groups, p.cout // groups
        kk, pin = p.kh * p.kw, p.h * p.w
        # the column matrix in float32 for float16/bfloat16: each output sums several
        # of its entries, as the reference sums in float32
        gd = d if d.itemsize >= 4 else _F32
        wt = weight.reshape(g, cg, og * kk).astype(gd, copy=False).transpose(0, 2, 1)
        wt = wt[0] if g == 1 else wt  # [G, Og*K, Cg]
        nb = batch_slice(p.n, p.cout * kk * pin * gd.itemsize)
        fold = mod.get_function("col2im" if gd == d else "col2im_f")
        for n0 in range(0, p.n, nb):
            m = min(nb, p.n - n0)
            xs = x[n0:n0 + m]
            if p.channel_last:  # [m*Pin, G, Cg] -> [G, Cg, m*Pin]
                xs = xs.reshape(m * pin, g, cg).transpose(1, 2, 0)
            else:  # [m, G, Cg, Pin] -> [G, Cg, m, Pin]
                xs = xs.reshape(m, g, cg, pin).transpose(1, 2, 0, 3)
            xs = cp.ascontiguousarray(xs.astype(gd, copy=False)).reshape(g, cg, m * pin)
            with _gemm_mode(cp, gd):
                cols = cp.matmul(wt, xs[0] if g == 1 else xs)
            cols = cp.ascontiguousarray(cols.astype(gd, copy=False))
            o = out[n0:n0 + m]
            on, oc, oy, ox = out_strides(o, p)
            fold(_grid(p.oh * p.ow, p.cout, m), (256, 1, 1),
                 (cols, bias if bias is not None else o, np.int32(bias is not None), o,
                  np.int32(p.cout), np.int32(p.h), np.int32(p.w), np.int32(p.kh),
                  np.int32(p.kw), np.int32(p.oh), np.int32(p.ow), np.int32(m),
                  np.int64(m * pin), *_i64(on, oc, oy, ox), *p.geo))
        return out

    cgw_ref = OPS["conv_grad_weight"].reference

    def conv_grad_weight(x, grad_out, kernel_size=None, stride=1, padding=0, dilation=1,
                         groups=1, channel_last=False):
        def ref():
            return cgw_ref(x, grad_out, kernel_size=kernel_size, stride=stride,
                           padding=padding, dilation=dilation, groups=groups,
                           channel_last=channel_last)

        if not same_float(x, grad_out) or x.ndim not in (3, 4) or groups < 1:
            return ref()
        c = x.shape[-1] if channel_last else x.shape[1]
        ks = tuple(kernel_size) * (x.ndim - 2) if len(kernel_size) == 1 else tuple(kernel_size)
        cout = grad_out.shape[-1] if channel_last else grad_out.shape[1]
        if c % groups or cout % groups or len(ks) != x.ndim - 2:
            return ref()
        try:
            p = conv_plan(x.shape, (cout, c // groups) + ks, None, stride, padding, dilation,
                          groups, channel_last)
        except Exception:  # the reference raises the error with its own message
            return ref()
        if p is None or tuple(grad_out.shape) != tuple(p.out_shape):
            return ref()
        d = x.dtype
        mod = module(cp, "conv", d, _SRC)
        g, cg, og = groups, p.c // groups, p.cout // groups
        kk, P = p.kh * p.kw, p.oh * p.ow
        nb = batch_slice(p.n, p.c * kk * P * x.itemsize)
        chunked = nb < p.n
        # several slices add up: in float32 for float16/bfloat16, as the reference does;
        # bfloat16 always in float32 (the output gradient's transposing copy below would
        # be a bfloat16 elementwise copy, which CuPy 14 does not promise)
        gd = gemm_dtype(d, g) if not chunked else (d if d.itemsize >= 4 else _F32)
        gd = _F32 if d == _BF16 else gd
        gw = gb = None
        for n0 in range(0, p.n, nb):
            m = min(nb, p.n - n0)
            cols = im2col(mod, p, x[n0:n0 + m], m).astype(gd, copy=False)
            go = grad_out[n0:n0 + m]
            if channel_last:  # [m*P, C_out] -> [C_out, m*P]
                gt = go.reshape(m * P, p.cout).T
            else:  # [m, C_out, P] -> [C_out, m, P]
                gt = go.reshape(m, p.cout, P).transpose(1, 0, 2)
            gt = cp.ascontiguousarray(gt.astype(gd, copy=False)).reshape(p.cout, m * P)
            with _gemm_mode(cp, gd):
                if g == 1:
                    part = cp.matmul(gt, cols.T)  # [C_out, Cg*K]
                else:
                    part = cp.matmul(gt.reshape(g, og, m * P),
                                     cols.reshape(g, cg * kk, m * P).transpose(0, 2, 1))
            part = part.astype(gd, copy=False)
            bsum = (gt if gt.dtype.itemsize >= 4 else gt.astype(_F32)).sum(axis=1)
            gw = part if gw is None else gw + part
            gb = bsum if gb is None else gb + bsum
        gw = gw.reshape((p.cout, cg) + ks).astype(d, copy=False)
        return cp.ascontiguousarray(gw), gb.astype(d, copy=False)

    table = {"conv": conv, "conv_transpose": conv_transpose,
             "conv_grad_weight": conv_grad_weight}
    return {k: v for k, v in table.items() if enabled(k, "conv")}
