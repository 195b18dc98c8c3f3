"""layer_norm and layer_norm_grad on the GPU.

The reference is about ten CuPy launches forward and fifteen backward. Here the
forward is one launch (a warp per row: the mean, then the biased variance of the
deviations, two passes as the reference's `_mean_var` does, in float32 for
float16/bfloat16), and it saves ``mean`` and ``inv_std = 1 / sqrt(var + eps)`` in the
statistics dtype the op declares. The backward is one launch for ``grad_x`` (a warp
per row) and one for ``grad_weight``/``grad_bias`` (column sums: blocks of 32 columns
x 8 row lanes write per-slice partial sums, which one CuPy reduction adds up).

The fast path takes weight and bias of x's dtype (or none) and statistics of the
accumulation dtype; anything else runs the reference.
"""

from __future__ import annotations

import numpy as np

from fw.core.kernels.gpu._raw import blocks, ctype, enabled, module

__all__ = ["rows_cols", "kernels"]

_SRC = r"""
__device__ __forceinline__ A warp_sum(A v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void ln_fwd(const T* __restrict__ x, const T* __restrict__ w,
        const T* __restrict__ b, int has_w, int has_b, T* __restrict__ out,
        A* __restrict__ mean, A* __restrict__ inv_std, i64 rows, int D, double eps) {
    const int lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 r = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += nw) {
        const i64 base = r * D;
        A s = (A)0;
        for (int j = lane; j < D; j += 32) s += (A)fw_ld(x, base + j);
        const A mu = warp_sum(s) / (A)D;
        A v = (A)0;
        for (int j = lane; j < D; j += 32) {
            const A dv = (A)fw_ld(x, base + j) - mu;
            v += dv * dv;
        }
        const A var = warp_sum(v) / (A)D;
        const A inv = (A)1 / fw_sqrt(var + (A)eps);
        for (int j = lane; j < D; j += 32) {
            A y = ((A)fw_ld(x, base + j) - mu) * inv;
            if (has_w) y = y * (A)fw_ld(w, j);
            if (has_b) y = y + (A)fw_ld(b, j);
            fw_st(out, base + j, y);
        }
        if (lane == 0) {
            mean[r] = mu;
            inv_std[r] = inv;
        }
    }
}

/* grad_x = inv * (gs - sum(gs)/D - xhat * sum(gs * xhat)/D), gs = g * w */
extern "C" __global__ void ln_bwd_x(const T* __restrict__ x, const T* __restrict__ w,
        int has_w, const A* __restrict__ mean, const A* __restrict__ inv_std,
        const T* __restrict__ g, T* __restrict__ gx, i64 rows, int D) {
    const int lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 r = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += nw) {
        const i64 base = r * D;
        const A mu = mean[r];
        const A inv = inv_std[r];
        A s1 = (A)0;
        A s2 = (A)0;
        for (int j = lane; j < D; j += 32) {
            A gs = (A)fw_ld(g, base + j);
            if (has_w) gs = gs * (A)fw_ld(w, j);
            const A xh = ((A)fw_ld(x, base + j) - mu) * inv;
            s1 += gs;
            s2 += gs * xh;
        }
        s1 = warp_sum(s1) / (A)D;
        s2 = warp_sum(s2) / (A)D;
        for (int j = lane; j < D; j += 32) {
            A gs = (A)fw_ld(g, base + j);
            if (has_w) gs = gs * (A)fw_ld(w, j);
            const A xh = ((A)fw_ld(x, base + j) - mu) * inv;
            fw_st(gx, base + j, inv * (gs - s1 - xh * s2));
        }
    }
}

/* partial column sums: a block (32, 8) sums 32 columns over the rows of one slice
   (slice s holds rows s*8 + ty + k*slices*8); pw/pb [slices, D]. Any grid covers
   every (column block, slice) pair. */
extern "C" __global__ void ln_bwd_wb(const T* __restrict__ x, const A* __restrict__ mean,
        const A* __restrict__ inv_std, const T* __restrict__ g, A* __restrict__ pw,
        A* __restrict__ pb, i64 rows, int D, int slices) {
    __shared__ A sw[8][33];
    __shared__ A sb[8][33];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    for (int s = blockIdx.y; s < slices; s += gridDim.y) {
        for (int c0 = blockIdx.x * 32; c0 < D; c0 += gridDim.x * 32) {
            const int j = c0 + tx;
            A aw = (A)0;
            A ab = (A)0;
            if (j < D) {
                for (i64 r = (i64)s * 8 + ty; r < rows; r += (i64)slices * 8) {
                    const A gv = (A)fw_ld(g, r * D + j);
                    aw += gv * (((A)fw_ld(x, r * D + j) - mean[r]) * inv_std[r]);
                    ab += gv;
                }
            }
            sw[ty][tx] = aw;
            sb[ty][tx] = ab;
            __syncthreads();
            if (ty == 0 && j < D) {
                A tw = (A)0;
                A tb = (A)0;
                for (int k = 0; k < 8; ++k) {
                    tw += sw[k][tx];
                    tb += sb[k][tx];
                }
                pw[(i64)s * D + j] = tw;
                pb[(i64)s * D + j] = tb;
            }
            __syncthreads();  /* sw/sb are written again by the next column block */
        }
    }
}
"""

_THREADS = 256


def rows_cols(shape, begin_norm_axis):
    """(rows M, row length D) of layer_norm over axes begin_norm_axis.. of `shape`."""
    nd = len(shape)
    b = begin_norm_axis % nd if begin_norm_axis < 0 else begin_norm_axis
    m = int(np.prod(shape[:b], dtype=np.int64))
    d = int(np.prod(shape[b:], dtype=np.int64))
    return m, d


def _acc(dtype):
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def kernels(cp):
    from fw.core.ops._registry import OPS

    ln_ref = OPS["layer_norm"].reference

    def vec(a, d, dtype):
        return a is None or (a.dtype == dtype and a.size == d)

    def layer_norm(x, weight=None, bias=None, epsilon=1e-5, begin_norm_axis=1):
        nd = x.ndim
        ok = ctype(x.dtype) is not None and nd >= 1 and x.size > 0 and \
            -nd <= begin_norm_axis < nd
        if ok:
            m, d = rows_cols(x.shape, begin_norm_axis)
            ok = d < 2 ** 31 and vec(weight, d, x.dtype) and vec(bias, d, x.dtype)
        if not ok:
            return ln_ref(x, weight, bias, epsilon=epsilon, begin_norm_axis=begin_norm_axis)
        b = begin_norm_axis % nd
        acc = _acc(x.dtype)
        xc = cp.ascontiguousarray(x)
        w = xc if weight is None else cp.ascontiguousarray(weight).reshape(-1)
        bb = xc if bias is None else cp.ascontiguousarray(bias).reshape(-1)
        out = cp.empty(x.shape, x.dtype)
        mean = cp.empty(x.shape[:b], acc)
        inv = cp.empty(x.shape[:b], acc)
        module(cp, "norm", x.dtype, _SRC).get_function("ln_fwd")(
            (blocks(m * 32, _THREADS),), (_THREADS,),
            (xc, w, bb, np.int32(weight is not None), np.int32(bias is not None), out, mean,
             inv, np.int64(m), np.int32(d), np.float64(epsilon)))
        return out, mean, inv

    lng_ref = OPS["layer_norm_grad"].reference

    def layer_norm_grad(x, weight, mean, inv_std, grad_out, epsilon=1e-5, begin_norm_axis=1):
        nd = x.ndim
        acc = _acc(x.dtype) if ctype(x.dtype) is not None else None
        ok = acc is not None and nd >= 1 and x.size > 0 and -nd <= begin_norm_axis < nd and \
            grad_out.dtype == x.dtype and grad_out.shape == x.shape and \
            mean.dtype == acc and inv_std.dtype == acc
        if ok:
            m, d = rows_cols(x.shape, begin_norm_axis)
            ok = d < 2 ** 31 and vec(weight, d, x.dtype) and mean.size == m and \
                inv_std.size == m
        if not ok:
            return lng_ref(x, weight, mean, inv_std, grad_out, epsilon=epsilon,
                           begin_norm_axis=begin_norm_axis)
        xc = cp.ascontiguousarray(x)
        gc = cp.ascontiguousarray(grad_out)
        mu = cp.ascontiguousarray(mean).reshape(-1)
        iv = cp.ascontiguousarray(inv_std).reshape(-1)
        w = xc if weight is None else cp.ascontiguousarray(weight).reshape(-1)
        mod = module(cp, "norm", x.dtype, _SRC)
        gx = cp.empty(x.shape, x.dtype)
        mod.get_function("ln_bwd_x")(
            (blocks(m * 32, _THREADS),), (_THREADS,),
            (xc, w, np.int32(weight is not None), mu, iv, gc, gx, np.int64(m), np.int32(d)))
        slices = max(1, min((m + 7) // 8, 64))
        pw = cp.empty((slices, d), acc)
        pb = cp.empty((slices, d), acc)
        mod.get_function("ln_bwd_wb")(
            (min((d + 31) // 32, 65535), slices), (32, 8),
            (xc, mu, iv, gc, pw, pb, np.int64(m), np.int32(d), np.int32(slices)))
        gw = pw.sum(axis=0).astype(x.dtype, copy=False)
        gb = pb.sum(axis=0).astype(x.dtype, copy=False)
        return gx, gw, gb

    table = {"layer_norm": layer_norm, "layer_norm_grad": layer_norm_grad}
    return {k: v for k, v in table.items() if enabled(k, "norm")}
