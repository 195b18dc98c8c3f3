"""softmax, log_softmax, their backward ops and softmax cross entropy on the GPU.

The reference is five to eight CuPy launches per call (max, subtract, exp, sum,
divide, and for cross entropy a gather and the label checks). Here a row along the
last axis is one warp (eight rows per 256-thread block): the max and the sum are warp
shuffles, in float32 for float16/bfloat16 as the reference widens them. Along another
axis each thread walks one column (consecutive threads read consecutive columns).

The formulas are the reference's (`fw.core.ops.activation.softmax_np`,
``log_softmax_np``): the max of a row that is not finite shifts by 0,
``softmax = exp(x - m) / sum``, ``log_softmax = (x - m) - log(sum)``; cross entropy's
softmax output is ``exp(log_softmax)``, as the reference computes it.

Cross entropy runs here for hard labels along the last axis with ``use_softmax``.
A label that is neither a class nor ``ignore_index`` gives that sample a NaN loss and
a NaN gradient row instead of the reference's error: raising needs the labels on the
host, a wait for the GPU on every step (and no CUDA-graph capture around it).
"""

from __future__ import annotations

import numpy as np

from fw.core.kernels.gpu._raw import available, blocks, ctype, enabled, module
from fw.core.ops._infer import norm_axis

__all__ = ["split_axis", "kernels"]

_SRC = r"""
__device__ __forceinline__ A warp_sum(A v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ A warp_max(A v) {
    for (int o = 16; o > 0; o >>= 1) {
        const A u = __shfl_xor_sync(0xffffffffu, v, o);
        v = (u > v || u != u) ? u : v;  /* NaN propagates, as np.max */
    }
    return v;
}
__device__ __forceinline__ A finite_or_zero(A m) { return (m - m == (A)0) ? m : (A)0; }

/* rows [rows, D] contiguous; one warp per row */
extern "C" __global__ void softmax_rows(const T* __restrict__ x, T* __restrict__ out,
        i64 rows, int D, int log_mode) {
    const int lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 r = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += nw) {
        const T* xr = x + r * D;
        A m = fw_ninf((A)0);
        for (int j = lane; j < D; j += 32) {
            const A v = (A)fw_ld(xr, j);
            m = (v > m || v != v) ? v : m;
        }
        m = finite_or_zero(warp_max(m));
        A s = (A)0;
        for (int j = lane; j < D; j += 32) s += fw_exp((A)fw_ld(xr, j) - m);
        s = warp_sum(s);
        if (log_mode) {
            const A ls = fw_log(s);
            for (int j = lane; j < D; j += 32) {
                fw_st(out, r * D + j, ((A)fw_ld(xr, j) - m) - ls);
            }
        } else {
            for (int j = lane; j < D; j += 32) {
                fw_st(out, r * D + j, fw_exp((A)fw_ld(xr, j) - m) / s);
            }
        }
    }
}

/* [outer, D, inner] contiguous, inner > 1: one thread per (outer, inner) column */
extern "C" __global__ void softmax_cols(const T* __restrict__ x, T* __restrict__ out,
        i64 outer, int D, i64 inner, int log_mode) {
    const i64 total = outer * inner;
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (i64)gridDim.x * blockDim.x) {
        const i64 o = t / inner;
        const i64 base = o * D * inner + (t - o * inner);
        A m = fw_ninf((A)0);
        for (int j = 0; j < D; ++j) {
            const A v = (A)fw_ld(x, base + j * inner);
            m = (v > m || v != v) ? v : m;
        }
        m = finite_or_zero(m);
        A s = (A)0;
        for (int j = 0; j < D; ++j) s += fw_exp((A)fw_ld(x, base + j * inner) - m);
        if (log_mode) {
            const A ls = fw_log(s);
            for (int j = 0; j < D; ++j) {
                const i64 k = base + j * inner;
                fw_st(out, k, ((A)fw_ld(x, k) - m) - ls);
            }
        } else {
            for (int j = 0; j < D; ++j) {
                const i64 k = base + j * inner;
                fw_st(out, k, fw_exp((A)fw_ld(x, k) - m) / s);
            }
        }
    }
}

/* softmax_grad: y * (g - sum(g * y)); log_softmax_grad: g - exp(y) * sum(g) */
extern "C" __global__ void softmax_grad_rows(const T* __restrict__ y, const T* __restrict__ g,
        T* __restrict__ out, i64 rows, int D, int log_mode) {
    const int lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 r = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += nw) {
        const i64 b = r * D;
        A s = (A)0;
        for (int j = lane; j < D; j += 32) {
            const A gv = (A)fw_ld(g, b + j);
            s += log_mode ? gv : gv * (A)fw_ld(y, b + j);
        }
        s = warp_sum(s);
        for (int j = lane; j < D; j += 32) {
            const A gv = (A)fw_ld(g, b + j);
            const A yv = (A)fw_ld(y, b + j);
            fw_st(out, b + j, log_mode ? gv - fw_exp(yv) * s : yv * (gv - s));
        }
    }
}

extern "C" __global__ void softmax_grad_cols(const T* __restrict__ y, const T* __restrict__ g,
        T* __restrict__ out, i64 outer, int D, i64 inner, int log_mode) {
    const i64 total = outer * inner;
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (i64)gridDim.x * blockDim.x) {
        const i64 o = t / inner;
        const i64 base = o * D * inner + (t - o * inner);
        A s = (A)0;
        for (int j = 0; j < D; ++j) {
            const A gv = (A)fw_ld(g, base + j * inner);
            s += log_mode ? gv : gv * (A)fw_ld(y, base + j * inner);
        }
        for (int j = 0; j < D; ++j) {
            const i64 k = base + j * inner;
            const A gv = (A)fw_ld(g, k);
            const A yv = (A)fw_ld(y, k);
            fw_st(out, k, log_mode ? gv - fw_exp(yv) * s : yv * (gv - s));
        }
    }
}

/* softmax cross entropy, hard labels along the last axis, one warp per row:
   sm = exp(log_softmax(x)); loss[r] = -log_softmax(x)[label] (* w[label]), 0 where
   ignored, NaN for a label out of range; pw[r] = w[label] (0 where ignored, w[0] for
   a label out of range, as the reference gathers it) */
extern "C" __global__ void ce_rows(const T* __restrict__ x, const long long* __restrict__ label,
        const T* __restrict__ w, int has_w, T* __restrict__ sm, A* __restrict__ loss,
        A* __restrict__ pw, i64 rows, int D, long long ignore_index) {
    const int lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 r = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += nw) {
        const T* xr = x + r * D;
        A m = fw_ninf((A)0);
        for (int j = lane; j < D; j += 32) {
            const A v = (A)fw_ld(xr, j);
            m = (v > m || v != v) ? v : m;
        }
        m = finite_or_zero(warp_max(m));
        A s = (A)0;
        for (int j = lane; j < D; j += 32) s += fw_exp((A)fw_ld(xr, j) - m);
        s = warp_sum(s);
        const A ls = fw_log(s);
        for (int j = lane; j < D; j += 32) {
            fw_st(sm, r * D + j, fw_exp(((A)fw_ld(xr, j) - m) - ls));
        }
        if (lane == 0) {
            const long long lab = label[r];
            const bool ignored = lab == ignore_index;
            const bool out_of_range = !ignored && (lab < 0 || lab >= D);
            A l = (A)0;
            A wt = (A)0;
            if (out_of_range) {
                l = fw_ninf((A)0) - fw_ninf((A)0);  /* NaN */
                wt = has_w ? (A)fw_ld(w, 0) : (A)1;
            } else if (!ignored) {
                l = -(((A)fw_ld(xr, lab) - m) - ls);
                wt = has_w ? (A)fw_ld(w, lab) : (A)1;
                if (has_w) l = l * wt;
            }
            loss[r] = l;
            pw[r] = wt;
        }
    }
}

/* its gradient: (sm - onehot(label)) * f, f = gl (per row or one) * w[label] / den */
extern "C" __global__ void ce_grad(const T* __restrict__ sm, const long long* __restrict__ label,
        const T* __restrict__ w, int has_w, const A* __restrict__ gl, int gl_rows,
        const A* __restrict__ den, int has_den, T* __restrict__ out, i64 rows, int D,
        long long ignore_index) {
    const i64 total = rows * D;
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (i64)gridDim.x * blockDim.x) {
        const i64 r = t / D;
        const int j = (int)(t - r * D);
        const long long lab = label[r];
        A v = (A)0;
        if (lab != ignore_index && (lab < 0 || lab >= D)) {
            v = fw_ninf((A)0) - fw_ninf((A)0);  /* NaN: a label out of range */
        } else if (lab != ignore_index) {
            A f = gl[gl_rows ? r : 0];
            if (has_w) f = f * (A)fw_ld(w, lab);
            if (has_den) {
                const A d = den[0];
                f = f / (d != (A)0 ? d : (A)1);
            }
            v = ((A)fw_ld(sm, t) - (j == lab ? (A)1 : (A)0)) * f;
        }
        fw_st(out, t, v);
    }
}
"""

_THREADS = 256


def split_axis(shape, axis):
    """(outer, D, inner) of `shape` around `axis` (normalised)."""
    ax = norm_axis(axis, len(shape))
    outer = int(np.prod(shape[:ax], dtype=np.int64))
    inner = int(np.prod(shape[ax + 1:], dtype=np.int64))
    return outer, int(shape[ax]), inner


def _warp_blocks(rows):
    return blocks(rows * 32, _THREADS)


def kernels(cp):
    from fw.core.ops._registry import OPS

    def fast(*arrays):
        d = arrays[0].dtype
        return ctype(d) is not None and all(a.dtype == d for a in arrays) and \
            available(cp, "softmax", d, _SRC) and \
            arrays[0].ndim >= 1 and arrays[0].size > 0 and arrays[0].size < 2 ** 62

    def run(name_rows, name_cols, arrays, axis, log_mode):
        x = arrays[0]
        outer, d, inner = split_axis(x.shape, axis)
        if d >= 2 ** 31:
            return None
        arrays = [cp.ascontiguousarray(a) for a in arrays]
        out = cp.empty(x.shape, x.dtype)
        mod = module(cp, "softmax", x.dtype, _SRC)
        if inner == 1:
            mod.get_function(name_rows)((_warp_blocks(outer),), (_THREADS,),
                                        (*arrays, out, np.int64(outer), np.int32(d),
                                         np.int32(log_mode)))
        else:
            mod.get_function(name_cols)((blocks(outer * inner, _THREADS),), (_THREADS,),
                                        (*arrays, out, np.int64(outer), np.int32(d),
                                         np.int64(inner), np.int32(log_mode)))
        return out

    def forward(name, log_mode):
        ref = OPS[name].reference

        def k(x, axis=-1):
            r = run("softmax_rows", "softmax_cols", [x], axis, log_mode) if fast(x) else None
            return ref(x, axis=axis) if r is None else r

        return k

    def backward(name, log_mode):
        ref = OPS[name].reference

        def k(out, grad_out, axis=-1):
            r = None
            if fast(out, grad_out) and out.shape == grad_out.shape:
                r = run("softmax_grad_rows", "softmax_grad_cols", [out, grad_out], axis,
                        log_mode)
            return ref(out, grad_out, axis=axis) if r is None else r

        return k

    ce_ref = OPS["cross_entropy_with_softmax"].reference

    def hard_last(logits, label, weight, soft_label, axis):
        """(rows, classes, label as int64 rows) when the fast path takes the call."""
        if soft_label or logits.ndim < 1 or logits.size == 0 or \
                ctype(logits.dtype) is None or label.dtype.kind not in "iu" or \
                not available(cp, "softmax", logits.dtype, _SRC) or \
                (weight is not None and (weight.dtype != logits.dtype or weight.ndim != 1 or
                                         weight.shape[0] != logits.shape[-1])):
            return None
        if norm_axis(axis, logits.ndim) != logits.ndim - 1:
            return None
        c = int(logits.shape[-1])
        rows = logits.size // c
        lead = tuple(logits.shape[:-1])
        if tuple(label.shape) not in (lead, lead + (1,)) or c >= 2 ** 31:
            return None
        return rows, c, cp.ascontiguousarray(label.reshape(rows).astype(np.int64, copy=False))

    def cross_entropy_with_softmax(logits, label, weight=None, soft_label=False,
                                   ignore_index=-100, reduction="mean", axis=-1,
                                   use_softmax=True):
        def ref():
            return ce_ref(logits, label, weight, soft_label=soft_label,
                          ignore_index=ignore_index, reduction=reduction, axis=axis,
                          use_softmax=use_softmax)

        got = hard_last(logits, label, weight, soft_label, axis) if use_softmax else None
        if got is None:
            return ref()
        rows, c, lab = got
        d = logits.dtype
        acc = np.dtype(np.float64) if d == np.float64 else np.dtype(np.float32)
        x = cp.ascontiguousarray(logits)
        w = x if weight is None else cp.ascontiguousarray(weight)
        sm = cp.empty(logits.shape, d)
        loss = cp.empty((rows,), acc)
        pw = cp.empty((rows,), acc)
        module(cp, "softmax", d, _SRC).get_function("ce_rows")(
            (_warp_blocks(rows),), (_THREADS,),
            (x, lab, w, np.int32(weight is not None), sm, loss, pw, np.int64(rows),
             np.int32(c), np.int64(ignore_index)))
        if reduction == "none":
            out = loss.reshape(label.shape)
        elif reduction == "sum":
            out = loss.sum()
        else:
            total = loss.sum()
            if weight is not None:
                den = pw.sum()
            elif ignore_index >= 0:
                den = (lab != ignore_index).sum(dtype=acc)
            else:
                den = cp.asarray(rows, dtype=acc)
            out = total / cp.where(den != 0, den, acc.type(1))
        return out.astype(d, copy=False), sm

    ceg_ref = OPS["cross_entropy_with_softmax_grad"].reference

    def cross_entropy_with_softmax_grad(softmax, label, weight, grad_loss, soft_label=False,
                                        ignore_index=-100, reduction="mean", axis=-1):
        def ref():
            return ceg_ref(softmax, label, weight, grad_loss, soft_label=soft_label,
                           ignore_index=ignore_index, reduction=reduction, axis=axis)

        got = hard_last(softmax, label, weight, soft_label, axis)
        if got is None or grad_loss.dtype != softmax.dtype:
            return ref()
        rows, c, lab = got
        if (reduction == "none" and grad_loss.size != rows) or \
                (reduction != "none" and grad_loss.size != 1):
            return ref()
        d = softmax.dtype
        acc = np.dtype(np.float64) if d == np.float64 else np.dtype(np.float32)
        gl = cp.ascontiguousarray(grad_loss.reshape(-1).astype(acc, copy=False))
        sm = cp.ascontiguousarray(softmax)
        w = sm if weight is None else cp.ascontiguousarray(weight)
        den = gl
        if reduction == "mean":
            if weight is not None:
                keep = lab != ignore_index
                den = cp.where(keep, w.astype(acc)[cp.where(keep, lab, 0)], 0).sum()
            elif ignore_index >= 0:
                den = (lab != ignore_index).sum(dtype=acc)
            else:
                den = cp.asarray(rows, dtype=acc)
            den = cp.ascontiguousarray(den.reshape(1).astype(acc, copy=False))
        out = cp.empty(softmax.shape, d)
        module(cp, "softmax", d, _SRC).get_function("ce_grad")(
            (blocks(rows * c, _THREADS),), (_THREADS,),
            (sm, lab, w, np.int32(weight is not None), gl, np.int32(reduction == "none"), den,
             np.int32(reduction == "mean"), out, np.int64(rows), np.int32(c),
             np.int64(ignore_index)))
        return out

    table = {"softmax": forward("softmax", 0), "log_softmax": forward("log_softmax", 1),
             "softmax_grad": backward("softmax_grad", 0),
             "log_softmax_grad": backward("log_softmax_grad", 1),
             "cross_entropy_with_softmax": cross_entropy_with_softmax,
             "cross_entropy_with_softmax_grad": cross_entropy_with_softmax_grad}
    return {k: v for k, v in table.items() if enabled(k, "softmax")}
