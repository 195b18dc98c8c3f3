"""Pooling on the GPU, one launch per op: ``max_pool``, ``max_pool_with_index``,
``avg_pool``, ``adaptive_avg_pool`` and the backward ops ``max_pool_grad`` and
``avg_pool_grad``, for 1-D and 2-D inputs in both layouts.

The reference runs one strided NumPy op per window tap (9 launches for a 3x3 window,
49 for global 7x7 averages). Each kernel here computes one output element per thread
with the reference's semantics (`fw.core.ops.pool`):

- max: padding is -inf, ties keep the first tap in row-major order, a NaN wins once
  and then stays; the mask is the flat in-plane index of the winning tap, clipped into
  the input as the reference clips it (a window of padding alone points at its first
  tap's clipped position);
- avg: the window sum in the reference's tap order, divided in double precision by
  ``divisor_override`` or the exclusive / inclusive count, as the reference divides by
  an int64 array;
- avg_pool_grad gathers: each input element sums ``grad / count`` of the windows that
  hold it (no atomics);
- max_pool_grad has only the mask (its windows may come from any pooling), so it
  scatters with atomic adds, into a float32 buffer for float16/bfloat16;
- adaptive average: each output averages its window the separable way the reference
  does (column means first, in double).

3-D pooling, lp_pool, adaptive max pooling and max_unpool run the reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fw.core.kernels.gpu._raw import available, blocks, ctype, enabled, memo, module
from fw.core.kernels.gpu.conv import logical_strides
from fw.core.ops.conv import expand, join_layout, split_layout
from fw.core.ops.pool import pool_geometry

__all__ = ["PoolPlan", "pool_plan", "adaptive_plan", "kernels"]

_I32 = 2 ** 31 - 1
_F32 = np.dtype(np.float32)

_SRC = r"""
__device__ __forceinline__ bool fw_isnan(A v) { return v != v; }

extern "C" __global__ void max_pool(const T* __restrict__ x, T* __restrict__ out,
        int* __restrict__ mask, int want_mask, int N, int C, int H, int W, int KH, int KW,
        int OH, int OW, i64 sn, i64 sc, i64 sy, i64 sx, i64 on, i64 oc, i64 oy_s, i64 ox_s,
        int str_h, int str_w, int pad_t, int pad_l) {
    const int P = OH * OW;
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        for (int c = blockIdx.y; c < C; c += gridDim.y) {
            const T* xc = x + (i64)n * sn + (i64)c * sc;
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                const int oy = p / OW;
                const int ox = p - oy * OW;
                const int y0 = oy * str_h - pad_t;
                const int x0 = ox * str_w - pad_l;
                const A ninf = fw_ninf((A)0);
                A best = ninf;
                int arg = 0;
                for (int ky = 0; ky < KH; ++ky) {
                    const int iy = y0 + ky;
                    for (int kx = 0; kx < KW; ++kx) {
                        const int ix = x0 + kx;
                        const A v = (iy >= 0 && iy < H && ix >= 0 && ix < W)
                            ? (A)fw_ld(xc, (i64)iy * sy + (i64)ix * sx) : ninf;
                        if (ky == 0 && kx == 0) {
                            best = v;
                        } else if (v > best || (fw_isnan(v) && !fw_isnan(best))) {
                            best = v;
                            arg = ky * KW + kx;
                        }
                    }
                }
                const i64 o = (i64)n * on + (i64)c * oc + (i64)oy * oy_s + (i64)ox * ox_s;
                fw_st(out, o, best);
                if (want_mask) {
                    int ay = y0 + arg / KW;
                    int ax = x0 + arg % KW;
                    ay = ay < 0 ? 0 : (ay > H - 1 ? H - 1 : ay);
                    ax = ax < 0 ? 0 : (ax > W - 1 ? W - 1 : ax);
                    mask[o] = ay * W + ax;
                }
            }
        }
    }
}

__device__ __forceinline__ int fw_count(int start, int k, int size, int end_pad,
                                        int exclusive) {
    int c;
    if (exclusive) {
        const int lo = start > 0 ? start : 0;
        const int hi = start + k < size ? start + k : size;
        c = hi - lo;
    } else {
        const int hi = start + k < size + end_pad ? start + k : size + end_pad;
        c = hi - start;
    }
    return c > 0 ? c : 0;
}

extern "C" __global__ void avg_pool(const T* __restrict__ x, T* __restrict__ out, int N, int C,
        int H, int W, int KH, int KW, int OH, int OW, i64 sn, i64 sc, i64 sy, i64 sx, i64 on,
        i64 oc, i64 oy_s, i64 ox_s, int str_h, int str_w, int pad_t, int pad_l, int pad_b,
        int pad_r, int exclusive, int has_div, double div) {
    const int P = OH * OW;
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        for (int c = blockIdx.y; c < C; c += gridDim.y) {
            const T* xc = x + (i64)n * sn + (i64)c * sc;
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                const int oy = p / OW;
                const int ox = p - oy * OW;
                const int y0 = oy * str_h - pad_t;
                const int x0 = ox * str_w - pad_l;
                A acc = (A)0;
                for (int ky = 0; ky < KH; ++ky) {
                    const int iy = y0 + ky;
                    if (iy < 0 || iy >= H) continue;
                    for (int kx = 0; kx < KW; ++kx) {
                        const int ix = x0 + kx;
                        if (ix < 0 || ix >= W) continue;
                        acc += (A)fw_ld(xc, (i64)iy * sy + (i64)ix * sx);
                    }
                }
                A r;
                if (has_div) {
                    r = acc / (A)div;
                } else {
                    int cnt = fw_count(y0, KH, H, pad_b, exclusive) *
                              fw_count(x0, KW, W, pad_r, exclusive);
                    cnt = cnt > 1 ? cnt : 1;
                    r = (A)((double)acc / (double)cnt);
                }
                fw_st(out, (i64)n * on + (i64)c * oc + (i64)oy * oy_s + (i64)ox * ox_s, r);
            }
        }
    }
}

/* the adjoint of avg_pool: g [N, C, OH, OW] -> out [N, C, H, W], gathered */
extern "C" __global__ void avg_pool_grad(const T* __restrict__ g, T* __restrict__ out, int N,
        int C, int H, int W, int KH, int KW, int OH, int OW, i64 sn, i64 sc, i64 sy, i64 sx,
        i64 on, i64 oc, i64 oy_s, i64 ox_s, int str_h, int str_w, int pad_t, int pad_l,
        int pad_b, int pad_r, int exclusive, int has_div, double div) {
    const int P = H * W;
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        for (int c = blockIdx.y; c < C; c += gridDim.y) {
            const T* gc = g + (i64)n * sn + (i64)c * sc;
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                const int iy = p / W;
                const int ix = p - iy * W;
                /* windows oy with oy*str_h - pad_t <= iy < oy*str_h - pad_t + KH */
                const int ly = iy + pad_t - KH + 1;
                int oy0 = ly <= 0 ? 0 : (ly + str_h - 1) / str_h;
                int oy1 = (iy + pad_t) / str_h;
                if (oy1 > OH - 1) oy1 = OH - 1;
                const int lx = ix + pad_l - KW + 1;
                int ox0 = lx <= 0 ? 0 : (lx + str_w - 1) / str_w;
                int ox1 = (ix + pad_l) / str_w;
                if (ox1 > OW - 1) ox1 = OW - 1;
                A acc = (A)0;
                for (int oy = oy0; oy <= oy1; ++oy) {
                    const int y0 = oy * str_h - pad_t;
                    const int cy = fw_count(y0, KH, H, pad_b, exclusive);
                    for (int ox = ox0; ox <= ox1; ++ox) {
                        const A v = (A)fw_ld(gc, (i64)oy * sy + (i64)ox * sx);
                        if (has_div) {
                            acc += v / (A)div;
                        } else {
                            const int x0 = ox * str_w - pad_l;
                            int cnt = cy * fw_count(x0, KW, W, pad_r, exclusive);
                            cnt = cnt > 1 ? cnt : 1;
                            acc += (A)((double)v / (double)cnt);
                        }
                    }
                }
                fw_st(out, (i64)n * on + (i64)c * oc + (i64)iy * oy_s + (i64)ix * ox_s, acc);
            }
        }
    }
}

/* grad_out scattered to the mask positions: buf [.., H, W] of type B (atomics) */
template <typename B>
__device__ void max_grad_body(const T* __restrict__ g, const int* __restrict__ mask,
        B* __restrict__ buf, int N, int C, int H, int W, int OH, int OW, i64 sn, i64 sc,
        i64 sy, i64 sx, i64 bn, i64 bc, i64 by, i64 bx) {
    const int P = OH * OW;
    const int plane = H * W;
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        for (int c = blockIdx.y; c < C; c += gridDim.y) {
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                const int oy = p / OW;
                const int ox = p - oy * OW;
                const i64 s = (i64)n * sn + (i64)c * sc + (i64)oy * sy + (i64)ox * sx;
                const int m = mask[s];
                if (m < 0 || m >= plane) continue;
                const int iy = m / W;
                const int ix = m - iy * W;
                atomicAdd(buf + (i64)n * bn + (i64)c * bc + (i64)iy * by + (i64)ix * bx,
                          (B)fw_ld(g, s));
            }
        }
    }
}
extern "C" __global__ void max_pool_grad(const T* g, const int* mask, A* buf, int N, int C,
        int H, int W, int OH, int OW, i64 sn, i64 sc, i64 sy, i64 sx, i64 bn, i64 bc, i64 by,
        i64 bx) {
    max_grad_body<A>(g, mask, buf, N, C, H, W, OH, OW, sn, sc, sy, sx, bn, bc, by, bx);
}

/* adaptive average: window [floor(o*i/out), ceil((o+1)*i/out)) per dim */
extern "C" __global__ void adaptive_avg(const T* __restrict__ x, T* __restrict__ out, int N,
        int C, int H, int W, int OH, int OW, i64 sn, i64 sc, i64 sy, i64 sx, i64 on, i64 oc,
        i64 oy_s, i64 ox_s) {
    const int P = OH * OW;
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        for (int c = blockIdx.y; c < C; c += gridDim.y) {
            const T* xc = x + (i64)n * sn + (i64)c * sc;
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < P;
                 p += blockDim.x * gridDim.x) {
                const int oy = p / OW;
                const int ox = p - oy * OW;
                const int hs = (int)(((i64)oy * H) / OH);
                const int he = (int)(((i64)(oy + 1) * H + OH - 1) / OH);
                const int ws = (int)(((i64)ox * W) / OW);
                const int we = (int)(((i64)(ox + 1) * W + OW - 1) / OW);
                double tot = 0.0;
                for (int ix = ws; ix < we; ++ix) {
                    A col = (A)0;
                    for (int iy = hs; iy < he; ++iy) {
                        col += (A)fw_ld(xc, (i64)iy * sy + (i64)ix * sx);
                    }
                    tot += (double)col / (double)(he - hs);
                }
                fw_st(out, (i64)n * on + (i64)c * oc + (i64)oy * oy_s + (i64)ox * ox_s,
                      (A)(tot / (double)(we - ws)));
            }
        }
    }
}
"""

_GRID_YZ = 65535


@dataclass(frozen=True)
class PoolPlan:
    """A 1-D or 2-D pooling resolved to the kernels' 2-D numbers (height 1 for 1-D)."""
    n: int
    c: int
    h: int
    w: int
    kh: int
    kw: int
    oh: int
    ow: int
    sh: int
    sw: int
    pt: int
    pl: int
    pb: int
    pr: int
    nd: int
    channel_last: bool
    out_shape: tuple

    def args(self):
        return tuple(np.int32(v) for v in (self.sh, self.sw, self.pt, self.pl))


def _lift(v, one, nd):
    return (one,) + tuple(v) if nd == 1 else tuple(v)


@memo
def pool_plan(x_shape, kernel_size, stride=None, padding=0, ceil_mode=False,
              channel_last=False):
    """The plan of a (max/avg) pooling of an x of `x_shape` with canonical attributes,
    or None when the kernels do not take it."""
    if len(x_shape) not in (3, 4):
        return None
    n, c, sp = split_layout(tuple(x_shape), channel_last)
    nd = len(sp)
    ks, strides, pads, outs = pool_geometry(sp, kernel_size, stride, padding, ceil_mode)
    if 0 in (n, c) or 0 in tuple(sp) or 0 in tuple(outs):
        return None
    h, w = _lift(sp, 1, nd)
    kh, kw = _lift(ks, 1, nd)
    oh, ow = _lift(outs, 1, nd)
    sh, sw = _lift(strides, 1, nd)
    pt, pl = _lift([b for b, _ in pads], 0, nd)
    pb, pr = _lift([e for _, e in pads], 0, nd)
    if max(h * w, oh * ow, kh * kw, n, c) > _I32:
        return None
    return PoolPlan(n, c, h, w, kh, kw, oh, ow, sh, sw, pt, pl, pb, pr, nd, bool(channel_last),
                    join_layout(n, c, tuple(outs), channel_last))


@memo
def adaptive_plan(x_shape, output_size, channel_last=False):
    """(n, c, h, w, oh, ow, nd, out_shape) of an adaptive pooling, or None."""
    if len(x_shape) not in (3, 4):
        return None
    n, c, sp = split_layout(tuple(x_shape), channel_last)
    nd = len(sp)
    outs = tuple(i if o is None else o for i, o in zip(sp, expand(output_size, nd,
                                                                  "output_size")))
    if 0 in (n, c) or 0 in tuple(sp) or 0 in outs or max(int(np.prod(sp)), n, c) > _I32:
        return None
    h, w = _lift(sp, 1, nd)
    oh, ow = _lift(outs, 1, nd)
    return n, c, h, w, oh, ow, nd, join_layout(n, c, outs, channel_last)


def _grid(p, c, n):
    return (blocks(p), min(c, _GRID_YZ), min(n, _GRID_YZ))


def _i64(*vs):
    return tuple(np.int64(v) for v in vs)


def kernels(cp):
    from fw.core.ops._registry import OPS

    def ok(x):
        return ctype(x.dtype) is not None and available(cp, "pool", x.dtype, _SRC)

    def strides_of(a, nd, cl):
        return _i64(*logical_strides(a.strides, a.itemsize, nd, cl))

    def max_common(x, kernel_size, stride, padding, ceil_mode, channel_last, want_mask):
        p = pool_plan(x.shape, kernel_size, stride, padding, ceil_mode, channel_last) \
            if ok(x) else None
        if p is None:
            return None
        out = cp.empty(p.out_shape, x.dtype)
        mask = cp.empty(p.out_shape, np.int32) if want_mask else out
        mod = module(cp, "pool", x.dtype, _SRC)
        mod.get_function("max_pool")(
            _grid(p.oh * p.ow, p.c, p.n), (256, 1, 1),
            (x, out, mask, np.int32(want_mask), np.int32(p.n), np.int32(p.c), np.int32(p.h),
             np.int32(p.w), np.int32(p.kh), np.int32(p.kw), np.int32(p.oh), np.int32(p.ow),
             *strides_of(x, p.nd, channel_last), *strides_of(out, p.nd, channel_last),
             *p.args()))
        return (out, mask) if want_mask else out

    mp_ref = OPS["max_pool"].reference
    mpi_ref = OPS["max_pool_with_index"].reference

    def max_pool(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                 channel_last=False):
        r = max_common(x, kernel_size, stride, padding, ceil_mode, channel_last, False)
        return r if r is not None else mp_ref(x, kernel_size, stride, padding, ceil_mode,
                                              channel_last)

    def max_pool_with_index(x, kernel_size=None, stride=None, padding=0, ceil_mode=False,
                            channel_last=False):
        r = max_common(x, kernel_size, stride, padding, ceil_mode, channel_last, True)
        return r if r is not None else mpi_ref(x, kernel_size, stride, padding, ceil_mode,
                                               channel_last)

    ap_ref = OPS["avg_pool"].reference

    def avg_pool(x, kernel_size=None, stride=None, padding=0, ceil_mode=False, exclusive=True,
                 divisor_override=None, channel_last=False):
        p = pool_plan(x.shape, kernel_size, stride, padding, ceil_mode, channel_last) \
            if ok(x) else None
        if p is None:
            return ap_ref(x, kernel_size, stride, padding, ceil_mode, exclusive,
                          divisor_override, channel_last)
        out = cp.empty(p.out_shape, x.dtype)
        module(cp, "pool", x.dtype, _SRC).get_function("avg_pool")(
            _grid(p.oh * p.ow, p.c, p.n), (256, 1, 1),
            (x, out, np.int32(p.n), np.int32(p.c), np.int32(p.h), np.int32(p.w),
             np.int32(p.kh), np.int32(p.kw), np.int32(p.oh), np.int32(p.ow),
             *strides_of(x, p.nd, channel_last), *strides_of(out, p.nd, channel_last),
             *p.args(), np.int32(p.pb), np.int32(p.pr), np.int32(bool(exclusive)),
             np.int32(divisor_override is not None),
             np.float64(0.0 if divisor_override is None else divisor_override)))
        return out

    apg_ref = OPS["avg_pool_grad"].reference

    def avg_pool_grad(grad_out, input_size=None, kernel_size=None, stride=None, padding=0,
                      ceil_mode=False, exclusive=True, divisor_override=None,
                      channel_last=False):
        def ref():
            return apg_ref(grad_out, input_size=input_size, kernel_size=kernel_size,
                           stride=stride, padding=padding, ceil_mode=ceil_mode,
                           exclusive=exclusive, divisor_override=divisor_override,
                           channel_last=channel_last)

        if not ok(grad_out) or grad_out.ndim not in (3, 4) or \
                len(input_size) != grad_out.ndim - 2:
            return ref()
        n, c, _ = split_layout(grad_out.shape, channel_last)
        xshape = join_layout(n, c, tuple(input_size), channel_last)
        try:
            p = pool_plan(xshape, kernel_size, stride, padding, ceil_mode, channel_last)
        except Exception:  # the reference raises with its own message
            return ref()
        if p is None or tuple(p.out_shape) != tuple(grad_out.shape):
            return ref()
        out = cp.empty(xshape, grad_out.dtype)
        module(cp, "pool", grad_out.dtype, _SRC).get_function("avg_pool_grad")(
            _grid(p.h * p.w, p.c, p.n), (256, 1, 1),
            (grad_out, out, np.int32(p.n), np.int32(p.c), np.int32(p.h), np.int32(p.w),
             np.int32(p.kh), np.int32(p.kw), np.int32(p.oh), np.int32(p.ow),
             *strides_of(grad_out, p.nd, channel_last), *strides_of(out, p.nd, channel_last),
             *p.args(), np.int32(p.pb), np.int32(p.pr), np.int32(bool(exclusive)),
             np.int32(divisor_override is not None),
             np.float64(0.0 if divisor_override is None else divisor_override)))
        return out

    mpg_ref = OPS["max_pool_grad"].reference

    def max_pool_grad(grad_out, mask, input_size=None, channel_last=False):
        def ref():
            return mpg_ref(grad_out, mask, input_size=input_size, channel_last=channel_last)

        if not ok(grad_out) or grad_out.ndim not in (3, 4) or mask.shape != grad_out.shape \
                or mask.dtype.kind not in "iu" or len(input_size) != grad_out.ndim - 2:
            return ref()
        n, c, osp = split_layout(grad_out.shape, channel_last)
        nd = len(osp)
        if 0 in (n, c) or 0 in tuple(osp) or 0 in tuple(input_size) or \
                int(np.prod(input_size)) > _I32:
            return ref()
        h, w = _lift(input_size, 1, nd)
        oh, ow = _lift(osp, 1, nd)
        d = grad_out.dtype
        xshape = join_layout(n, c, tuple(input_size), channel_last)
        acc = np.dtype(np.float64) if d == np.float64 else _F32
        buf = cp.zeros(xshape, acc)
        # both C-contiguous with one shape: the kernel reads them at one offset
        grad_out = cp.ascontiguousarray(grad_out)
        m32 = cp.ascontiguousarray(mask if mask.dtype == np.int32 else mask.astype(np.int32))
        module(cp, "pool", d, _SRC).get_function("max_pool_grad")(
            _grid(oh * ow, c, n), (256, 1, 1),
            (grad_out, m32, buf, np.int32(n), np.int32(c), np.int32(h), np.int32(w),
             np.int32(oh), np.int32(ow), *strides_of(grad_out, nd, channel_last),
             *strides_of(buf, nd, channel_last)))
        return buf if buf.dtype == d else buf.astype(d)

    aap_ref = OPS["adaptive_avg_pool"].reference

    def adaptive_avg_pool(x, output_size=None, channel_last=False):
        p = adaptive_plan(x.shape, output_size, channel_last) if ok(x) else None
        if p is None:
            return aap_ref(x, output_size=output_size, channel_last=channel_last)
        n, c, h, w, oh, ow, nd, shape = p
        out = cp.empty(shape, x.dtype)
        module(cp, "pool", x.dtype, _SRC).get_function("adaptive_avg")(
            _grid(oh * ow, c, n), (256, 1, 1),
            (x, out, np.int32(n), np.int32(c), np.int32(h), np.int32(w), np.int32(oh),
             np.int32(ow), *strides_of(x, nd, channel_last), *strides_of(out, nd,
                                                                           channel_last)))
        return out

    table = {"max_pool": max_pool, "max_pool_with_index": max_pool_with_index,
             "avg_pool": avg_pool, "avg_pool_grad": avg_pool_grad,
             "max_pool_grad": max_pool_grad, "adaptive_avg_pool": adaptive_avg_pool}
    return {k: v for k, v in table.items() if enabled(k, "pool")}
