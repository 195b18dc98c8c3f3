"""layer_norm, batch_norm and their backward ops on the GPU.

The reference is about ten CuPy launches forward and fifteen backward. Here the
forward is one launch (a warp per row: the mean, then the biased variance of the
deviations, two passes as the reference's `_mean_var` does, in float32 for
float16/bfloat16), and it saves ``mean`` and ``inv_std = 1 / sqrt(var + eps)`` in the
statistics dtype the op declares. The backward is one launch for ``grad_x`` (a warp
per row) and one for ``grad_weight``/``grad_bias`` (column sums: blocks of 32 columns
x 8 row lanes write per-slice partial sums, which one CuPy reduction adds up).

batch_norm is two launches in training (per-channel mean and biased variance of the
deviations, one block per channel; then the normalisation) and one in inference;
batch_norm_grad is two (the per-channel sums, then grad_x). The running statistics'
momentum update and ``inv_std`` are CuPy expressions on the C-element vectors, in the
reference's order.

The fast paths take statistics of the accumulation dtype (float32, float64 for
float64 data) and, for layer_norm, weight and bias of x's dtype (or none); anything
else runs the reference.
"""

from __future__ import annotations

import numpy as np

from fw.core.kernels.gpu._raw import available, blocks, ctype, enabled, module

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

/* the sum of v over the block (every thread gets it); sh: 32 slots of shared memory */
__device__ A block_sum(A v, A* sh) {
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();  /* sh may still be read by the previous call */
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    A t = (A)0;
    if (threadIdx.x < 32) {
        t = threadIdx.x < (blockDim.x >> 5) ? sh[threadIdx.x] : (A)0;
        t = warp_sum(t);
    }
    __syncthreads();
    if (threadIdx.x == 0) sh[0] = t;
    __syncthreads();
    return sh[0];
}

/* batch_norm: element (n, c, p) of a contiguous x is at n*sn + c*sc + p*sp (p: the
   flattened spatial position); one block per channel */
extern "C" __global__ void bn_stats(const T* __restrict__ x, A* __restrict__ mean,
        A* __restrict__ var, int N, int C, i64 P, i64 sn, i64 sc, i64 sp) {
    __shared__ A sh[32];
    const i64 M = (i64)N * P;
    for (int c = blockIdx.x; c < C; c += gridDim.x) {
        A s = (A)0;
        for (i64 i = threadIdx.x; i < M; i += blockDim.x) {
            const i64 n = i / P;
            s += (A)fw_ld(x, n * sn + (i64)c * sc + (i - n * P) * sp);
        }
        const A mu = block_sum(s, sh) / (A)M;
        A v = (A)0;
        for (i64 i = threadIdx.x; i < M; i += blockDim.x) {
            const i64 n = i / P;
            const A d = (A)fw_ld(x, n * sn + (i64)c * sc + (i - n * P) * sp) - mu;
            v += d * d;
        }
        const A vr = block_sum(v, sh) / (A)M;
        if (threadIdx.x == 0) {
            mean[c] = mu;
            var[c] = vr;
        }
    }
}

/* y = ((x - mean) * inv_std) * w + b over a contiguous x */
extern "C" __global__ void bn_apply(const T* __restrict__ x, const A* __restrict__ mean,
        const A* __restrict__ inv, const A* __restrict__ w, const A* __restrict__ b,
        int has_w, int has_b, T* __restrict__ y, i64 total, int C, i64 P, int channel_last) {
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (i64)gridDim.x * blockDim.x) {
        const int c = channel_last ? (int)(i % C) : (int)((i / P) % C);
        A v = ((A)fw_ld(x, i) - mean[c]) * inv[c];
        if (has_w) v = v * w[c];
        if (has_b) v = v + b[c];
        fw_st(y, i, v);
    }
}

/* batch_norm_grad's sums per channel: gb = sum(g), gw = sum(g * xhat) */
extern "C" __global__ void bn_grad_sums(const T* __restrict__ x, const T* __restrict__ g,
        const A* __restrict__ mean, const A* __restrict__ inv, A* __restrict__ gw,
        A* __restrict__ gb, int N, int C, i64 P, i64 sn, i64 sc, i64 sp) {
    __shared__ A sh[32];
    const i64 M = (i64)N * P;
    for (int c = blockIdx.x; c < C; c += gridDim.x) {
        const A mu = mean[c];
        const A iv = inv[c];
        A sb = (A)0;
        A sw = (A)0;
        for (i64 i = threadIdx.x; i < M; i += blockDim.x) {
            const i64 n = i / P;
            const i64 k = n * sn + (i64)c * sc + (i - n * P) * sp;
            const A gv = (A)fw_ld(g, k);
            sb += gv;
            sw += gv * (((A)fw_ld(x, k) - mu) * iv);
        }
        sb = block_sum(sb, sh);
        sw = block_sum(sw, sh);
        if (threadIdx.x == 0) {
            gb[c] = sb;
            gw[c] = sw;
        }
    }
}

/* grad_x = scale * (g - gb/M - xhat * (gw/M)) with batch statistics, else g * scale;
   scale = inv_std * w */
extern "C" __global__ void bn_grad_x(const T* __restrict__ x, const T* __restrict__ g,
        const A* __restrict__ mean, const A* __restrict__ inv, const A* __restrict__ w,
        int has_w, const A* __restrict__ gw, const A* __restrict__ gb, int batch_stats,
        T* __restrict__ gx, i64 total, int C, i64 P, int channel_last, A m) {
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (i64)gridDim.x * blockDim.x) {
        const int c = channel_last ? (int)(i % C) : (int)((i / P) % C);
        const A scale = has_w ? inv[c] * w[c] : inv[c];
        const A gv = (A)fw_ld(g, i);
        A r;
        if (batch_stats) {
            const A xh = ((A)fw_ld(x, i) - mean[c]) * inv[c];
            r = scale * (gv - gb[c] / m - xh * (gw[c] / m));
        } else {
            r = gv * scale;
        }
        fw_st(gx, i, r);
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

    def ready(d):
        return ctype(d) is not None and available(cp, "norm", d, _SRC)

    ln_ref = OPS["layer_norm"].reference

    def vec(a, d, dtype):
        return a is None or (a.dtype == dtype and a.size == d)

    def layer_norm(x, weight=None, bias=None, epsilon=1e-5, begin_norm_axis=1):
        nd = x.ndim
        ok = ctype(x.dtype) is not None and available(cp, "norm", x.dtype, _SRC) and \
            nd >= 1 and x.size > 0 and \
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
        acc = _acc(x.dtype) if ready(x.dtype) else None
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

    def bn_layout(x, channel_last):
        """(N, C, P, sn, sc, sp) of a contiguous [N, C, *S] / [N, *S, C] x."""
        n = x.shape[0]
        c = x.shape[-1] if channel_last else x.shape[1]
        p = x.size // max(n * c, 1)
        return (n, c, p) + ((p * c, 1, c) if channel_last else (c * p, p, 1))

    def as_acc(a, acc):
        return None if a is None else cp.ascontiguousarray(a.reshape(-1).astype(acc,
                                                                             copy=False))

    bn_ref = OPS["batch_norm"].reference

    def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
                   momentum=0.9, epsilon=1e-5, channel_last=False, use_global_stats=None):
        acc = _acc(x.dtype) if ready(x.dtype) else None
        ok = acc is not None and x.ndim >= 2 and x.size > 0 and \
            running_mean.dtype == acc and running_var.dtype == acc
        if ok:
            n, c, p, sn, sc, sp = bn_layout(x, channel_last)
            ok = running_mean.size == c and running_var.size == c and \
                all(a is None or (a.size == c and ctype(a.dtype) is not None and
                                  a.dtype.itemsize <= acc.itemsize)
                    for a in (weight, bias)) and c < 2 ** 31 and n < 2 ** 31
        if not ok:
            return bn_ref(x, running_mean, running_var, weight, bias, training=training,
                          momentum=momentum, epsilon=epsilon, channel_last=channel_last,
                          use_global_stats=use_global_stats)
        mod = module(cp, "norm", x.dtype, _SRC)
        xc = cp.ascontiguousarray(x)
        rm = running_mean.reshape(-1).astype(acc)  # copies, as the reference returns
        rv = running_var.reshape(-1).astype(acc)
        if training and not use_global_stats:
            mean = cp.empty((c,), acc)
            var = cp.empty((c,), acc)
            mod.get_function("bn_stats")(
                (min(c, 65535),), (_THREADS,),
                (xc, mean, var, np.int32(n), np.int32(c), *(np.int64(v) for v in (p, sn, sc,
                                                                                sp))))
            mean_out = momentum * rm + (1.0 - momentum) * mean
            var_out = momentum * rv + (1.0 - momentum) * var
        else:
            mean, var = rm, rv
            mean_out, var_out = rm, rv.copy()
        inv = 1.0 / cp.sqrt(var + epsilon)
        w, b = as_acc(weight, acc), as_acc(bias, acc)
        y = cp.empty(x.shape, x.dtype)
        mod.get_function("bn_apply")(
            (blocks(x.size, _THREADS),), (_THREADS,),
            (xc, mean, inv, w if w is not None else inv, b if b is not None else inv,
             np.int32(w is not None), np.int32(b is not None), y, np.int64(x.size),
             np.int32(c), np.int64(p), np.int32(bool(channel_last))))
        return (y, mean_out.reshape(running_mean.shape), var_out.reshape(running_var.shape),
                mean.copy() if mean is rm else mean, inv)

    bng_ref = OPS["batch_norm_grad"].reference

    def batch_norm_grad(x, weight, saved_mean, saved_inv_std, grad_out, epsilon=1e-5,
                        channel_last=False, batch_stats=True):
        acc = _acc(x.dtype) if ready(x.dtype) else None
        ok = acc is not None and x.ndim >= 2 and x.size > 0 and \
            grad_out.dtype == x.dtype and grad_out.shape == x.shape and \
            saved_mean.dtype == acc and saved_inv_std.dtype == acc
        if ok:
            n, c, p, sn, sc, sp = bn_layout(x, channel_last)
            ok = saved_mean.size == c and saved_inv_std.size == c and c < 2 ** 31 and \
                n < 2 ** 31 and (weight is None or (weight.size == c and
                                                    ctype(weight.dtype) is not None and
                                                    weight.dtype.itemsize <= acc.itemsize))
        if not ok:
            return bng_ref(x, weight, saved_mean, saved_inv_std, grad_out, epsilon=epsilon,
                           channel_last=channel_last, batch_stats=batch_stats)
        mod = module(cp, "norm", x.dtype, _SRC)
        xc, gc = cp.ascontiguousarray(x), cp.ascontiguousarray(grad_out)
        mean, inv = as_acc(saved_mean, acc), as_acc(saved_inv_std, acc)
        w = as_acc(weight, acc)
        gw = cp.empty((c,), acc)
        gb = cp.empty((c,), acc)
        mod.get_function("bn_grad_sums")(
            (min(c, 65535),), (_THREADS,),
            (xc, gc, mean, inv, gw, gb, np.int32(n), np.int32(c),
             *(np.int64(v) for v in (p, sn, sc, sp))))
        gx = cp.empty(x.shape, x.dtype)
        mod.get_function("bn_grad_x")(
            (blocks(x.size, _THREADS),), (_THREADS,),
            (xc, gc, mean, inv, w if w is not None else inv, np.int32(w is not None), gw, gb,
             np.int32(bool(batch_stats)), gx, np.int64(x.size), np.int32(c), np.int64(p),
             np.int32(bool(channel_last)), acc.type(max(x.size // max(c, 1), 1))))
        return gx, gw, gb

    table = {"layer_norm": layer_norm, "layer_norm_grad": layer_norm_grad,
             "batch_norm": batch_norm, "batch_norm_grad": batch_norm_grad}
    return {k: v for k, v in table.items() if enabled(k, "norm")}
