"""The RawKernel families of fw.core.kernels.gpu (conv, pool, softmax, norm) against
the NumPy reference of their ops.

Three layers, so that most of what can go wrong is caught without a GPU:

- the pure-Python planning (geometry, strides, batch slicing, dtype choice, the
  switches) against the reference's own geometry and output shapes;
- on any machine with g++: the grid-stride kernels (conv, pooling) compiled for the
  host by a small emulator that stands in for CuPy (``blockDim = gridDim = 1``, so each
  launch is a serial loop over every element; atomics are plain adds) and run through
  the kernels' own Python orchestration on NumPy arrays, float32 and float64;
- with ``FW_TEST_DEVICE=gpu`` (ci/gpu/run.sh): every kernel, the warp-per-row ones
  included, on CuPy against the reference run on the same CuPy arrays, in float32,
  float64, float16 and bfloat16, on fresh random inputs.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import zlib

import ml_dtypes
import numpy as np
import pytest

from fw.core.kernels.gpu import _raw
from fw.core.kernels.gpu import conv as gconv
from fw.core.kernels.gpu import norm as gnorm
from fw.core.kernels.gpu import pool as gpool
from fw.core.kernels.gpu import softmax as gsoftmax
from fw.core.ops import OPS
from fw.core.testing import assert_close, tolerance
from fw.core.testing import device as _dev

GPU = _dev.is_real_gpu()
BF16 = np.dtype(ml_dtypes.bfloat16)
ALL_DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]
gpu_only = pytest.mark.skipif(not GPU, reason="needs FW_TEST_DEVICE=gpu and a GPU")


def canon(name, **kw):
    op = OPS[name]
    a = dict(op.attrs)
    a.update(kw)
    return op.canon(a) if op.canon is not None else a


# ---------------------------------------------------------------- the cases
# (N, C, spatial, C_out, kernel, stride, padding, dilation, groups, channel_last)
CONV_CASES = [
    (2, 3, (7, 9), 4, (3, 3), 1, 1, 1, 1, False),
    (2, 4, (8, 7), 6, (3, 2), 2, [1, 0, 2, 1], 1, 2, False),
    (1, 3, (9, 10), 5, (3, 3), (2, 3), "SAME", 1, 1, True),
    (3, 2, (11, 6), 4, (2, 3), 1, "VALID", (2, 1), 1, False),
    (2, 6, (7, 7), 6, (3, 3), 2, 1, 1, 6, False),  # depthwise
    (2, 4, (6, 9), 4, (5, 3), 1, [2, 1], 1, 4, True),  # depthwise, channel-last
    (2, 6, (5, 8), 9, (1, 1), 1, 0, 1, 3, True),
    (2, 3, (13,), 4, (3,), 2, [1, 2], 1, 1, False),  # 1-D
    (1, 4, (10,), 2, (4,), 1, 2, 2, 2, True),
    (4, 1, (5, 5), 1, (5, 5), 1, 2, 1, 1, False),
]
CONV_IDS = [f"conv{i}" for i in range(len(CONV_CASES))]

# (N, C, spatial, kernel, stride, padding, ceil_mode, channel_last)
POOL_CASES = [
    (2, 3, (7, 9), 3, 2, 1, False, False),
    (2, 3, (8, 8), 2, None, 0, False, True),
    (1, 2, (9, 7), (3, 2), (2, 3), [1, 0, 1, 1], True, False),
    (2, 4, (5, 6), 3, 1, "SAME", False, True),
    (3, 2, (11,), 4, 3, 2, True, False),
    (2, 2, (6, 5), (2, 3), 2, [1, 1], True, True),
]
POOL_IDS = [f"pool{i}" for i in range(len(POOL_CASES))]


def conv_args(case, dtype, rng, bias=True):
    n, c, sp, cout, ks, stride, padding, dilation, groups, cl = case
    xs = (n,) + sp + (c,) if cl else (n, c) + sp
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal((cout, c // groups) + ks).astype(dtype)
    b = rng.standard_normal((cout,)).astype(dtype) if bias else None
    attrs = canon("conv", stride=stride, padding=padding, dilation=dilation, groups=groups,
                  channel_last=cl)
    return x, w, b, attrs


def grad_geo(case, x_shape, w_shape):
    """conv_transpose / conv_grad_weight attributes of conv's backward (the VJP's)."""
    from fw.core.ops.conv import conv_geometry, split_layout

    n, c, sp, cout, ks, stride, padding, dilation, groups, cl = case
    a = canon("conv", stride=stride, padding=padding, dilation=dilation, groups=groups,
              channel_last=cl)
    strides, pads, dils, _ = conv_geometry(split_layout(x_shape, cl)[2], w_shape[2:],
                                           a["stride"], a["padding"], a["dilation"])
    return {"stride": list(strides), "padding": [v for p in pads for v in p],
            "dilation": list(dils), "groups": groups, "channel_last": cl}


def pool_x(case, dtype, rng):
    n, c, sp, k, s, p, ceil, cl = case
    xs = (n,) + sp + (c,) if cl else (n, c) + sp
    return rng.standard_normal(xs).astype(dtype)


def pool_attrs(name, case, **extra):
    n, c, sp, k, s, p, ceil, cl = case
    return canon(name, kernel_size=k, stride=s, padding=p, ceil_mode=ceil, channel_last=cl,
                 **extra)


# ---------------------------------------------------------------- planning (no GPU)
def test_switches():
    assert _raw.enabled("conv", "conv", env={})
    assert not _raw.enabled("conv", "conv", env={"FW_GPU_RAW": "0"})
    assert not _raw.enabled("conv", "conv", env={"FW_GPU_RAW": "off"})
    assert not _raw.enabled("conv_grad_weight", "conv", env={"FW_GPU_DISABLE": "conv"})
    assert not _raw.enabled("max_pool", "pool", env={"FW_GPU_DISABLE": " softmax, max_pool"})
    assert _raw.enabled("avg_pool", "pool", env={"FW_GPU_DISABLE": "softmax,max_pool"})


def test_default_off_needs_enable(monkeypatch):
    monkeypatch.setattr(_raw, "DEFAULT_OFF", frozenset({"conv"}))
    assert not _raw.enabled("conv", "conv", env={})
    assert _raw.enabled("conv", "conv", env={"FW_GPU_ENABLE": "conv"})
    assert _raw.enabled("conv", "conv", env={"FW_GPU_ENABLE": "pool,conv"})
    assert _raw.enabled("conv_transpose", "conv", env={})


def test_ctype_covers_the_float_dtypes_only():
    assert _raw.ctype(np.float32) == ("float", "float")
    assert _raw.ctype(np.float64) == ("double", "double")
    assert _raw.ctype(np.float16) == ("fw_h16", "float")
    assert _raw.ctype(BF16) == ("fw_b16", "float")
    assert _raw.ctype(np.int32) is None and _raw.ctype(np.complex64) is None


def test_blocks():
    assert _raw.blocks(0) == 1 and _raw.blocks(1) == 1 and _raw.blocks(256) == 1
    assert _raw.blocks(257) == 2 and _raw.blocks(10 ** 12) == 65536


@pytest.mark.parametrize("case", CONV_CASES, ids=CONV_IDS)
def test_conv_plan_matches_the_reference_geometry(case):
    rng = np.random.default_rng(0)
    x, w, b, a = conv_args(case, np.float64, rng)
    p = gconv.conv_plan(x.shape, w.shape, b.shape, a["stride"], a["padding"], a["dilation"],
                        a["groups"], a["channel_last"])
    want = OPS["conv"].reference(x, w, b, **a)
    assert p.out_shape == want.shape
    assert p.depthwise == (case[8] > 1 and case[8] == case[1] == case[3])
    assert p.nd == len(case[2])
    if p.nd == 1:
        assert (p.h, p.kh, p.oh, p.sh, p.dh, p.pt) == (1, 1, 1, 1, 1, 0)


def test_plans_are_cached_and_take_unhashable_attributes():
    a = gconv.conv_plan((2, 3, 8, 8), (4, 3, 3, 3), None, (2,), (1,), (1,), 1, False)
    assert gconv.conv_plan((2, 3, 8, 8), (4, 3, 3, 3), None, (2,), (1,), (1,), 1, False) is a
    b = gconv.conv_plan((2, 3, 8, 8), (4, 3, 3, 3), None, [2], [1], [1], 1, False)
    assert b == a and b is not a
    assert gpool.pool_plan((1, 2, 6, 6), [3], [2], [1]) == gpool.pool_plan((1, 2, 6, 6), (3,),
                                                                            (2,), (1,))


def test_conv_plan_refuses_what_the_kernels_do_not_take():
    assert gconv.conv_plan((1, 2, 4, 4, 4), (3, 2, 1, 1, 1), None) is None  # 3-D
    assert gconv.conv_plan((0, 2, 4, 4), (3, 2, 1, 1), None) is None  # empty batch


def test_conv_transpose_plan_shapes():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 5, 6))
    w = rng.standard_normal((4, 3, 3, 2))
    a = canon("conv_transpose", stride=2, padding=[1, 0, 0, 1], output_padding=1, groups=2)
    p = gconv.conv_transpose_plan(x.shape, w.shape, None, a["stride"], a["padding"],
                                  a["output_padding"], a["dilation"], a["groups"],
                                  a["output_size"], a["channel_last"])
    assert p.out_shape == OPS["conv_transpose"].reference(x, w, None, **a).shape
    assert (p.h, p.w, p.cout) == (5, 6, 6)


def test_logical_strides():
    a = np.zeros((2, 3, 4, 5), np.float32)
    assert gconv.logical_strides(a.strides, 4, 2, False) == (60, 20, 5, 1)
    assert gconv.logical_strides(a.strides, 4, 2, True) == (60, 1, 20, 5)  # [N, H, W, C]
    b = np.zeros((2, 3, 7))
    assert gconv.logical_strides(b.strides, 8, 1, False) == (21, 7, 0, 1)
    assert gconv.logical_strides(b.strides, 8, 1, True) == (21, 1, 0, 7)  # [N, L, C]


def test_tf32_is_a_no_op_off_the_gpu(monkeypatch):
    monkeypatch.setattr(gconv, "TF32", True)
    with gconv._gemm_mode(HostCuPy(), np.float32):  # no CuPy linalg module: nothing to set
        pass


def test_batch_slice_and_gemm_dtype():
    assert gconv.batch_slice(64, 10, budget=1000) == 64
    assert gconv.batch_slice(64, 100, budget=1000) == 10
    assert gconv.batch_slice(64, 10 ** 9, budget=1000) == 1
    assert gconv.gemm_dtype(BF16, 1) == BF16
    assert gconv.gemm_dtype(BF16, 2) == np.float32
    assert gconv.gemm_dtype(np.float16, 4) == np.float16


@pytest.mark.parametrize("case", POOL_CASES, ids=POOL_IDS)
def test_pool_plan_matches_the_reference_shape(case):
    x = pool_x(case, np.float64, np.random.default_rng(2))
    a = pool_attrs("max_pool", case)
    p = gpool.pool_plan(x.shape, a["kernel_size"], a["stride"], a["padding"], a["ceil_mode"],
                        a["channel_last"])
    assert p.out_shape == OPS["max_pool"].reference(x, **a).shape


def test_split_axis_and_rows_cols():
    assert gsoftmax.split_axis((2, 3, 4), -1) == (6, 4, 1)
    assert gsoftmax.split_axis((2, 3, 4), 1) == (2, 3, 4)
    assert gsoftmax.split_axis((5,), 0) == (1, 5, 1)
    assert gnorm.rows_cols((2, 3, 4), 1) == (2, 12)
    assert gnorm.rows_cols((2, 3, 4), -1) == (6, 4)


# ---------------------------------------------------------------- the host emulator
_HOST_PREAMBLE = r"""
#include <cmath>
#include <cstring>
#include <mutex>
#include <condition_variable>
struct fw_dim3 { unsigned x, y, z; };
static const fw_dim3 blockIdx = {0, 0, 0}, gridDim = {1, 1, 1};
static fw_dim3 blockDim = {1, 1, 1};
static thread_local fw_dim3 threadIdx = {0, 0, 0};
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
typedef long long i64;

/* a reusable barrier over `n` threads */
struct fw_barrier_t {
    std::mutex m; std::condition_variable cv; int n = 0, waiting = 0; long gen = 0;
    void wait() {
        std::unique_lock<std::mutex> l(m);
        long g = gen;
        if (++waiting == n) { waiting = 0; ++gen; cv.notify_all(); return; }
        cv.wait(l, [&] { return gen != g; });
    }
};
static fw_barrier_t fw_block_bar;
static fw_barrier_t fw_warp_bar[64];
static double fw_lanes[2048];
static std::mutex fw_atomic_mutex;

extern "C" void fw_set_block(unsigned bx, unsigned by) {
    blockDim.x = bx; blockDim.y = by; blockDim.z = 1;
    fw_block_bar.n = (int)(bx * by);
    for (int w = 0; w < 64; ++w) fw_warp_bar[w].n = 32;
}
extern "C" void fw_set_thread(unsigned tx, unsigned ty) { threadIdx.x = tx; threadIdx.y = ty; }

inline void __syncthreads() { fw_block_bar.wait(); }
template <class V> inline V __shfl_xor_sync(unsigned, V v, int o) {
    const int id = (int)(threadIdx.y * blockDim.x + threadIdx.x);
    fw_lanes[id] = (double)v;
    fw_warp_bar[id >> 5].wait();
    const V r = (V)fw_lanes[(id & ~31) | ((id & 31) ^ o)];
    fw_warp_bar[id >> 5].wait();
    return r;
}
template <class B> inline B atomicAdd(B* p, B v) {
    std::lock_guard<std::mutex> l(fw_atomic_mutex);
    B o = *p; *p = o + v; return o;
}
struct fw_h16 { unsigned short x; };
struct fw_b16 { unsigned short x; };
inline float fw_ld(const fw_h16* p, i64 i) {
    _Float16 h; std::memcpy(&h, &p[i].x, 2); return (float)h;
}
inline void fw_st(fw_h16* p, i64 i, float v) {
    _Float16 h = (_Float16)v; std::memcpy(&p[i].x, &h, 2);
}
inline float fw_ld(const fw_b16* p, i64 i) {
    unsigned u = ((unsigned)p[i].x) << 16; float f; std::memcpy(&f, &u, 4); return f;
}
inline void fw_st(fw_b16* p, i64 i, float v) {  /* the device code's rounding */
    unsigned u; std::memcpy(&u, &v, 4);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    p[i].x = nan ? (unsigned short)((u >> 16) | 0x40u)
                 : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float fw_ld(const float* p, i64 i) { return p[i]; }
inline double fw_ld(const double* p, i64 i) { return p[i]; }
inline void fw_st(float* p, i64 i, float v) { p[i] = v; }
inline void fw_st(double* p, i64 i, double v) { p[i] = v; }
inline float fw_exp(float v) { return std::exp(v); }
inline double fw_exp(double v) { return std::exp(v); }
inline float fw_log(float v) { return std::log(v); }
inline double fw_log(double v) { return std::log(v); }
inline float fw_sqrt(float v) { return std::sqrt(v); }
inline double fw_sqrt(double v) { return std::sqrt(v); }
inline float fw_ninf(float) { return -INFINITY; }
inline double fw_ninf(double) { return -(double)INFINITY; }
"""


class _HostFunction:
    """A launch: one block (grid-stride loops cover the grid). A kernel whose threads
    cooperate runs as real threads, at most 32 along x (so a 1-D block is one warp)
    and the block's y size, so that warp shuffles and __syncthreads run as on a GPU;
    any other kernel runs as one thread."""

    def __init__(self, lib, fn, cooperative):
        self.lib, self.fn, self.cooperative = lib, fn, cooperative

    def __call__(self, grid, block, args):
        conv = []
        for a in args:
            if isinstance(a, np.ndarray):
                conv.append(ctypes.c_void_p(a.ctypes.data))
            elif isinstance(a, np.int32):
                conv.append(ctypes.c_int(int(a)))
            elif isinstance(a, np.int64):
                conv.append(ctypes.c_longlong(int(a)))
            elif isinstance(a, np.float64):
                conv.append(ctypes.c_double(float(a)))
            elif isinstance(a, np.float32):
                conv.append(ctypes.c_float(float(a)))
            else:
                raise TypeError(f"kernel argument {a!r} has no exact C type")
        if not self.cooperative:  # grid-stride loops, no shuffles or barriers: one thread
            self.fn.restype = None
            self.lib.fw_set_block(1, 1)
            self.lib.fw_set_thread(0, 0)
            self.fn(*conv)
            return
        bx = min(int(block[0]), 32)
        by = int(block[1]) if len(block) > 1 else 1
        assert bx * by <= 2048 and (bx * by) % 32 == 0
        self.fn.restype = None
        self.lib.fw_set_block(bx, by)
        errors = []

        def run(tx, ty):
            try:
                self.lib.fw_set_thread(tx, ty)
                self.fn(*conv)
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=run, args=(tx, ty))
                   for ty in range(by) for tx in range(bx)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
            assert not t.is_alive(), "an emulated kernel hung (a barrier not all reach)"
        assert not errors, errors


class _HostModule:
    def __init__(self, code):
        assert code.startswith(_raw.PREAMBLE)
        src = _HOST_PREAMBLE + code[len(_raw.PREAMBLE):]
        # compiled once per source text (a few seconds each): kept in the temp dir
        tag = hashlib.sha1(src.encode()).hexdigest()[:20]
        so = os.path.join(tempfile.gettempdir(), f"fw_gpuk_emu_{tag}.so")
        if not os.path.exists(so):
            d = tempfile.mkdtemp(prefix="fw_gpuk_")
            cpp, tmp = os.path.join(d, "k.cpp"), os.path.join(d, "k.so")
            with open(cpp, "w") as f:
                f.write(src)
            r = subprocess.run(["g++", "-O0", "-shared", "-fPIC", "-w", "-pthread", "-o", tmp,
                                cpp], capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr[:4000]
            os.replace(tmp, so)  # atomic: concurrent test workers never load half a file
            shutil.rmtree(d, ignore_errors=True)
        self.lib = ctypes.CDLL(so)
        # kernels whose threads cooperate (warp shuffles, barriers) run as real threads
        self.cooperative = set()
        for part in code.split('extern "C" __global__ void ')[1:]:
            name = part.split("(", 1)[0]
            if any(t in part.split('extern "C"', 1)[0] for t in
                   ("warp_sum", "warp_max", "block_sum", "__syncthreads", "__shfl")):
                self.cooperative.add(name)

    def get_function(self, name):
        return _HostFunction(self.lib, getattr(self.lib, name), name in self.cooperative)


class HostCuPy:
    """Enough of CuPy's module for the kernels' orchestration, on NumPy arrays."""
    __name__ = "fw_host_emulator"
    RawModule = staticmethod(lambda code: _HostModule(code))
    asnumpy = staticmethod(np.asarray)

    @staticmethod
    def matmul(a, b):
        """cuBLAS keeps float16/bfloat16 products in their dtype (NumPy's bfloat16
        product is float32)."""
        return np.matmul(a, b).astype(np.result_type(a.dtype, b.dtype), copy=False)

    def __getattr__(self, name):
        return getattr(np, name)


# (on the GPU run the real kernels are tested below: the emulator is for machines
# without one)
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None or GPU,
                               reason="needs g++, and no GPU (which runs the real kernels)")


@pytest.fixture(scope="module")
def host():
    return HostCuPy()


def _close(got, want, dtype, what, scale=1.0):
    r, a = tolerance(np.dtype(dtype))
    assert_close(got, want, np.dtype(dtype), r * scale, a * scale, what=what)


@needs_gxx
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case", CONV_CASES, ids=CONV_IDS)
def test_emulated_conv_family_matches_the_reference(host, case, dtype):
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    k = gconv.kernels(host)
    x, w, b, a = conv_args(case, dtype, rng)
    want = OPS["conv"].reference(x, w, b, **a)
    _close(k["conv"](x, w, b, **a), want, dtype, "conv")
    g = rng.standard_normal(want.shape).astype(dtype)
    geo = grad_geo(case, x.shape, w.shape)
    sp = list(x.shape[1:-1] if case[9] else x.shape[2:])
    ta = canon("conv_transpose", output_size=sp, **geo)
    _close(k["conv_transpose"](g, w, None, **ta),
           OPS["conv_transpose"].reference(g, w, None, **ta), dtype, "conv_transpose")
    wa = canon("conv_grad_weight", kernel_size=list(w.shape[2:]), **geo)
    got = k["conv_grad_weight"](x, g, **wa)
    ref = OPS["conv_grad_weight"].reference(x, g, **wa)
    _close(got[0], ref[0], dtype, "conv_grad_weight", 10)
    _close(got[1], ref[1], dtype, "conv_grad_bias", 10)


@needs_gxx
def test_emulated_conv_slices_the_batch(host, monkeypatch):
    monkeypatch.setattr(gconv, "COLS_BUDGET", 1)  # one sample per column matrix
    rng = np.random.default_rng(5)
    k = gconv.kernels(host)
    case = CONV_CASES[1]
    x, w, b, a = conv_args(case, np.float64, rng)
    want = OPS["conv"].reference(x, w, b, **a)
    _close(k["conv"](x, w, b, **a), want, np.float64, "conv")
    g = rng.standard_normal(want.shape)
    geo = grad_geo(case, x.shape, w.shape)
    wa = canon("conv_grad_weight", kernel_size=list(w.shape[2:]), **geo)
    got, ref = k["conv_grad_weight"](x, g, **wa), OPS["conv_grad_weight"].reference(x, g, **wa)
    _close(got[0], ref[0], np.float64, "conv_grad_weight")
    ta = canon("conv_transpose", output_size=list(x.shape[2:]), **geo)
    _close(k["conv_transpose"](g, w, None, **ta),
           OPS["conv_transpose"].reference(g, w, None, **ta), np.float64, "conv_transpose")


@needs_gxx
@pytest.mark.parametrize("groups,opad", [(1, 1), (2, 0), (3, 1)])
def test_emulated_conv_transpose_forward(host, groups, opad):
    """conv_transpose as a layer (output_padding, bias, strided non-contiguous x)."""
    rng = np.random.default_rng(groups)
    k = gconv.kernels(host)
    x = rng.standard_normal((2, 3 * groups, 9, 5))[:, :, ::2]  # a strided view
    w = rng.standard_normal((3 * groups, 2, 3, 2))
    b = rng.standard_normal((2 * groups,))
    a = canon("conv_transpose", stride=2, padding=[1, 0], output_padding=opad,
              dilation=[1, 2] if opad == 0 else 1, groups=groups)
    _close(k["conv_transpose"](x, w, b, **a), OPS["conv_transpose"].reference(x, w, b, **a),
           np.float64, "conv_transpose")


@needs_gxx
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case", POOL_CASES, ids=POOL_IDS)
def test_emulated_pooling_matches_the_reference(host, case, dtype):
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    k = gpool.kernels(host)
    x = pool_x(case, dtype, rng)
    x.reshape(-1)[::7] = x.reshape(-1)[::5][:x.reshape(-1)[::7].size]  # some ties
    ma = pool_attrs("max_pool", case)
    _close(k["max_pool"](x, **ma), OPS["max_pool"].reference(x, **ma), dtype, "max_pool")
    out, mask = k["max_pool_with_index"](x, **ma)
    wout, wmask = OPS["max_pool_with_index"].reference(x, **ma)
    _close(out, wout, dtype, "max_pool_with_index")
    np.testing.assert_array_equal(mask, wmask)
    g = rng.standard_normal(out.shape).astype(dtype)
    cl = case[7]
    size = list(x.shape[1:-1] if cl else x.shape[2:])
    _close(k["max_pool_grad"](g, mask, input_size=size, channel_last=cl),
           OPS["max_pool_grad"].reference(g, mask, input_size=size, channel_last=cl), dtype,
           "max_pool_grad")
    for exclusive, div in ((True, None), (False, None), (True, 3.0)):
        aa = pool_attrs("avg_pool", case, exclusive=exclusive, divisor_override=div)
        got = k["avg_pool"](x, **aa)
        _close(got, OPS["avg_pool"].reference(x, **aa), dtype, f"avg_pool {exclusive} {div}")
        ga = pool_attrs("avg_pool_grad", case, exclusive=exclusive, divisor_override=div,
                        input_size=size)
        g = rng.standard_normal(got.shape).astype(dtype)
        _close(k["avg_pool_grad"](g, **ga), OPS["avg_pool_grad"].reference(g, **ga), dtype,
               f"avg_pool_grad {exclusive} {div}")


@needs_gxx
def test_emulated_max_pool_nan_and_padding_only_windows(host):
    k = gpool.kernels(host)
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 5)).astype(np.float32)
    x[0, 0, 1, 1] = np.nan
    x[0, 1] = -np.inf
    a = canon("max_pool_with_index", kernel_size=2, stride=2, padding=1, ceil_mode=True)
    out, mask = k["max_pool_with_index"](x, **a)
    wout, wmask = OPS["max_pool_with_index"].reference(x, **a)
    _close(out, wout, np.float32, "max_pool_with_index")
    np.testing.assert_array_equal(mask, wmask)


@needs_gxx
@pytest.mark.parametrize("shape,out_size,cl", [((2, 3, 7, 7), 1, False),
                                               ((2, 3, 9, 5), (4, 3), False),
                                               ((1, 5, 6, 4), (None, 3), True),
                                               ((2, 3, 11), 4, False)])
def test_emulated_adaptive_avg_pool(host, shape, out_size, cl):
    k = gpool.kernels(host)
    x = np.random.default_rng(4).standard_normal(shape)
    a = canon("adaptive_avg_pool", output_size=out_size, channel_last=cl)
    _close(k["adaptive_avg_pool"](x, **a), OPS["adaptive_avg_pool"].reference(x, **a),
           np.float64, "adaptive_avg_pool")


class _BrokenCompiler(HostCuPy):
    __name__ = "fw_broken_compiler"

    @staticmethod
    def RawModule(code):  # noqa: N802 - CuPy's name
        class M:
            def get_function(self, name):
                raise RuntimeError("nvrtc: error: a deliberately broken compile")
        return M()


def test_a_module_that_does_not_compile_runs_the_reference(monkeypatch):
    """A compile failure is recorded and warned about, and the ops run the reference
    (the GPU test below fails on any recorded failure)."""
    monkeypatch.setattr(_raw, "FAILURES", {})
    k = gpool.kernels(_BrokenCompiler())
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5))
    a = canon("max_pool", kernel_size=2)
    with pytest.warns(RuntimeWarning, match="pool kernels did not compile for float64"):
        got = k["max_pool"](x, **a)
    np.testing.assert_array_equal(got, OPS["max_pool"].reference(x, **a))
    assert list(_raw.FAILURES) == [("fw_broken_compiler", "pool", "<f8")]
    assert "deliberately broken" in _raw.FAILURES[("fw_broken_compiler", "pool", "<f8")]
    k["max_pool"](x, **a)  # no second compile, no second warning
    assert len(_raw.FAILURES) == 1


@gpu_only
@pytest.mark.parametrize("family", ["conv", "pool", "softmax", "norm"])
def test_gpu_every_module_compiles(cupy, family):
    mod = {"conv": gconv, "pool": gpool, "softmax": gsoftmax, "norm": gnorm}[family]
    for d in ALL_DTYPES:
        assert _raw.available(cupy, family, d, mod._SRC), _raw.FAILURES
    assert not {k: v for k, v in _raw.FAILURES.items() if k[0] == "cupy"}


@needs_gxx
def test_emulated_kernels_fall_back_to_the_reference(host):
    """Mixed dtypes, 3-D and integer masks out of the fast path take the reference."""
    k = gconv.kernels(host)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 3, 4, 4))
    w = rng.standard_normal((2, 2, 1, 2, 2))
    a = canon("conv")
    _close(k["conv"](x, w, None, **a), OPS["conv"].reference(x, w, None, **a), np.float64,
           "conv 3-D")
    x2 = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    w2 = rng.standard_normal((2, 2, 2, 2))
    got = k["conv"](x2, w2, None, **a)
    want = OPS["conv"].reference(x2, w2, None, **a)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.dtype == want.dtype


# ---------------------------------------------------------------- on the GPU


@pytest.fixture(scope="module")
def cupy():
    if not GPU:
        pytest.skip("needs FW_TEST_DEVICE=gpu and a GPU")
    _dev.place()  # makes the gpu backend (or says why there is none)
    import cupy

    return cupy


@pytest.fixture(scope="module")
def xp():
    """CuPy on a GPU, else the host emulator (float32/float64 only)."""
    if GPU:
        _dev.place()
        import cupy

        return cupy
    if shutil.which("g++") is None:
        pytest.skip("needs a GPU or g++")
    return HostCuPy()


def _dtype_on(xp, dtype):
    """(every dtype runs on both: the emulator converts float16 through the host's
    _Float16 and bfloat16 through its bits, as the device code does)"""


def _on(cp, *arrays):
    return [None if a is None else cp.asarray(a) for a in arrays]


def _gpu_close(cp, got, want, dtype, what, scale=1.0):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want), what
    r, a = tolerance(np.dtype(dtype))
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = cp.asnumpy(g), cp.asnumpy(w)
        if g.dtype.kind in "iu":
            np.testing.assert_array_equal(g, w, err_msg=f"{what}[{i}]")
            continue
        s = scale * (10.0 if np.dtype(dtype).itemsize < 4 else 20.0)
        assert_close(g, w, w.dtype, r * s, a * s, what=f"{what}[{i}]")


def _data(dtype, shape, rng):
    return rng.standard_normal(shape).astype(np.dtype(dtype))


@gpu_only
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case", CONV_CASES, ids=CONV_IDS)
def test_gpu_conv_family(cupy, case, dtype):
    cp = cupy
    rng = np.random.default_rng()
    k = gconv.kernels(cp)
    x, w, b, a = conv_args(case, dtype, rng)
    x, w, b = _on(cp, x, w, b)
    want = OPS["conv"].reference(x, w, b, **a)
    _gpu_close(cp, k["conv"](x, w, b, **a), want, dtype, "conv", scale=len(case[2]))
    g = cp.asarray(_data(dtype, want.shape, rng))
    geo = grad_geo(case, x.shape, w.shape)
    sp = list(x.shape[1:-1] if case[9] else x.shape[2:])
    ta = canon("conv_transpose", output_size=sp, **geo)
    _gpu_close(cp, k["conv_transpose"](g, w, None, **ta),
               OPS["conv_transpose"].reference(g, w, None, **ta), dtype, "conv_transpose")
    wa = canon("conv_grad_weight", kernel_size=list(w.shape[2:]), **geo)
    _gpu_close(cp, k["conv_grad_weight"](x, g, **wa),
               OPS["conv_grad_weight"].reference(x, g, **wa), dtype, "conv_grad_weight", 5)


@gpu_only
def test_gpu_conv_slices_the_batch(cupy, monkeypatch):
    cp = cupy
    monkeypatch.setattr(gconv, "COLS_BUDGET", 1)
    rng = np.random.default_rng()
    k = gconv.kernels(cp)
    for dtype in (np.float32, np.float16):
        x, w, b, a = conv_args(CONV_CASES[1], dtype, rng)
        x, w, b = _on(cp, x, w, b)
        want = OPS["conv"].reference(x, w, b, **a)
        _gpu_close(cp, k["conv"](x, w, b, **a), want, dtype, "conv")
        g = cp.asarray(_data(dtype, want.shape, rng))
        geo = grad_geo(CONV_CASES[1], x.shape, w.shape)
        wa = canon("conv_grad_weight", kernel_size=list(w.shape[2:]), **geo)
        _gpu_close(cp, k["conv_grad_weight"](x, g, **wa),
                   OPS["conv_grad_weight"].reference(x, g, **wa), dtype, "conv_grad_weight")


@gpu_only
def test_gpu_conv_tf32_switch(cupy, monkeypatch):
    """FW_GPU_CONV_TF32: TF32 products (about 1e-3 relative), and the GEMM mode is
    restored after each call (fw.matmul keeps full float32)."""
    from cupy._core import _routines_linalg as lin

    cp = cupy
    before = lin.get_compute_type(np.float32)
    monkeypatch.setattr(gconv, "TF32", True)
    rng = np.random.default_rng()
    k = gconv.kernels(cp)
    x, w, b, a = conv_args(CONV_CASES[0], np.float32, rng)
    x, w, b = _on(cp, x, w, b)
    got = cp.asnumpy(k["conv"](x, w, b, **a))
    want = cp.asnumpy(OPS["conv"].reference(x, w, b, **a))
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)
    assert lin.get_compute_type(np.float32) == before


@gpu_only
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case", POOL_CASES, ids=POOL_IDS)
def test_gpu_pooling(cupy, case, dtype):
    cp = cupy
    rng = np.random.default_rng()
    k = gpool.kernels(cp)
    x = cp.asarray(pool_x(case, dtype, rng))
    ma = pool_attrs("max_pool", case)
    _gpu_close(cp, k["max_pool"](x, **ma), OPS["max_pool"].reference(x, **ma), dtype,
               "max_pool")
    got = k["max_pool_with_index"](x, **ma)
    want = OPS["max_pool_with_index"].reference(x, **ma)
    _gpu_close(cp, got, want, dtype, "max_pool_with_index")
    cl = case[7]
    size = list(x.shape[1:-1] if cl else x.shape[2:])
    g = cp.asarray(_data(dtype, got[0].shape, rng))
    _gpu_close(cp, k["max_pool_grad"](g, got[1], input_size=size, channel_last=cl),
               OPS["max_pool_grad"].reference(g, got[1], input_size=size, channel_last=cl),
               dtype, "max_pool_grad")
    for exclusive, div in ((True, None), (False, None), (True, 3.0)):
        aa = pool_attrs("avg_pool", case, exclusive=exclusive, divisor_override=div)
        out = k["avg_pool"](x, **aa)
        _gpu_close(cp, out, OPS["avg_pool"].reference(x, **aa), dtype, "avg_pool")
        ga = pool_attrs("avg_pool_grad", case, exclusive=exclusive, divisor_override=div,
                        input_size=size)
        g = cp.asarray(_data(dtype, out.shape, rng))
        _gpu_close(cp, k["avg_pool_grad"](g, **ga), OPS["avg_pool_grad"].reference(g, **ga),
                   dtype, "avg_pool_grad")
    for osz in (1, 3):
        a = canon("adaptive_avg_pool", output_size=osz, channel_last=cl)
        _gpu_close(cp, k["adaptive_avg_pool"](x, **a),
                   OPS["adaptive_avg_pool"].reference(x, **a), dtype, "adaptive_avg_pool")


SOFTMAX_SHAPES = [((7, 10), -1), ((3, 5, 33), -1), ((4, 1000), 1), ((2, 6, 5), 1),
                  ((5, 3, 2, 4), 0), ((9,), 0)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape,axis", SOFTMAX_SHAPES, ids=[str(s) for s in SOFTMAX_SHAPES])
def test_softmax_family(xp, shape, axis, dtype):
    _dtype_on(xp, dtype)
    cp = xp
    rng = np.random.default_rng()
    k = gsoftmax.kernels(cp)
    x = cp.asarray(_data(dtype, shape, rng) * 3)
    g = cp.asarray(_data(dtype, shape, rng))
    for fwd, bwd in (("softmax", "softmax_grad"), ("log_softmax", "log_softmax_grad")):
        y = k[fwd](x, axis=axis)
        _gpu_close(cp, y, OPS[fwd].reference(x, axis=axis), dtype, fwd)
        _gpu_close(cp, k[bwd](y, g, axis=axis), OPS[bwd].reference(y, g, axis=axis), dtype,
                   bwd)


def test_softmax_rows_with_infinities_and_nan(xp):
    cp = xp
    k = gsoftmax.kernels(cp)
    x = np.random.default_rng().standard_normal((4, 40)).astype(np.float32)
    x[0] = -np.inf
    x[1, 3] = np.inf
    x[2, 7] = np.nan
    x = cp.asarray(x)
    for name in ("softmax", "log_softmax"):
        _gpu_close(cp, k[name](x), OPS[name].reference(x, axis=-1), np.float32, name)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted,ignore,keep", [(False, -100, False), (True, -100, True),
                                                  (False, 2, False), (True, 1, False)])
def test_cross_entropy(xp, dtype, reduction, weighted, ignore, keep):
    _dtype_on(xp, dtype)
    cp = xp
    rng = np.random.default_rng()
    k = gsoftmax.kernels(cp)
    n, c = 37, 11
    x = cp.asarray(_data(dtype, (n, c), rng) * 2)
    lab = rng.integers(0, c, (n, 1) if keep else (n,))
    lab.reshape(-1)[::5] = ignore if ignore >= 0 else lab.reshape(-1)[::5]
    lab = cp.asarray(lab)
    w = cp.asarray(rng.random(c).astype(np.dtype(dtype))) if weighted else None
    a = canon("cross_entropy_with_softmax", ignore_index=ignore, reduction=reduction)
    got = k["cross_entropy_with_softmax"](x, lab, w, **a)
    want = OPS["cross_entropy_with_softmax"].reference(x, lab, w, **a)
    _gpu_close(cp, got, want, dtype, "cross_entropy_with_softmax")
    gl = cp.asarray(_data(dtype, want[0].shape, rng))
    ga = canon("cross_entropy_with_softmax_grad", ignore_index=ignore, reduction=reduction)
    _gpu_close(cp, k["cross_entropy_with_softmax_grad"](got[1], lab, w, gl, **ga),
               OPS["cross_entropy_with_softmax_grad"].reference(got[1], lab, w, gl, **ga),
               dtype, "cross_entropy_with_softmax_grad")


def test_cross_entropy_bad_label_is_nan_not_a_device_read(xp):
    """A label out of range makes its sample's loss and gradient row NaN (no host
    check, which would wait for the GPU); the other samples are unaffected."""
    cp = xp
    k = gsoftmax.kernels(cp)
    x = cp.asarray(np.random.default_rng().standard_normal((3, 4)).astype(np.float32))
    lab = cp.asarray(np.array([0, 7, 1]))
    a = canon("cross_entropy_with_softmax", reduction="none")
    loss, sm = k["cross_entropy_with_softmax"](x, lab, None, **a)
    loss = cp.asnumpy(loss)
    assert np.isnan(loss[1]) and np.isfinite(loss[[0, 2]]).all()
    good = cp.asarray(np.array([0, 1]))
    _gpu_close(cp, loss[[0, 2]], OPS["cross_entropy_with_softmax"].reference(
        x[cp.asarray([0, 2])], good, None, **a)[0], np.float32, "cross entropy")
    ga = canon("cross_entropy_with_softmax_grad", reduction="none")
    g = cp.asnumpy(k["cross_entropy_with_softmax_grad"](sm, lab, None, cp.ones((3,),
                                                                             np.float32), **ga))
    assert np.isnan(g[1]).all() and np.isfinite(g[[0, 2]]).all()


# (the emulator's warps synchronise through OS barriers: fewer rows there)
LN_SHAPES = [((6, 10), 1), ((3, 4, 130), 2), ((2, 3, 4, 5), 1), ((700 if GPU else 20, 64), -1),
             ((5,), 0)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,axis", LN_SHAPES, ids=[str(s) for s in LN_SHAPES])
def test_layer_norm(xp, shape, axis, affine, dtype):
    _dtype_on(xp, dtype)
    cp = xp
    rng = np.random.default_rng()
    k = gnorm.kernels(cp)
    x = cp.asarray(_data(dtype, shape, rng) * 2 + 1)
    _, d = gnorm.rows_cols(shape, axis)
    w = cp.asarray(_data(dtype, (d,), rng)) if affine else None
    b = cp.asarray(_data(dtype, (d,), rng)) if affine else None
    a = canon("layer_norm", epsilon=1e-5, begin_norm_axis=axis)
    got = k["layer_norm"](x, w, b, **a)
    want = OPS["layer_norm"].reference(x, w, b, **a)
    _gpu_close(cp, got, want, dtype, "layer_norm")
    g = cp.asarray(_data(dtype, shape, rng))
    ga = canon("layer_norm_grad", epsilon=1e-5, begin_norm_axis=axis)
    _gpu_close(cp, k["layer_norm_grad"](x, w, got[1], got[2], g, **ga),
               OPS["layer_norm_grad"].reference(x, w, got[1], got[2], g, **ga), dtype,
               "layer_norm_grad", 5)


BN_CASES = [((4, 3, 5, 6), False), ((3, 7, 11), True), ((6, 5), False), ((2, 4, 3, 3), True)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape,cl", BN_CASES, ids=[str(c) for c in BN_CASES])
def test_batch_norm(xp, shape, cl, training, dtype):
    _dtype_on(xp, dtype)
    cp = xp
    rng = np.random.default_rng()
    k = gnorm.kernels(cp)
    acc = np.float64 if np.dtype(dtype) == np.float64 else np.float32
    c = shape[-1] if cl else shape[1]
    x = cp.asarray((_data(np.float32, shape, rng) * 2 + 0.5).astype(dtype))
    rm = cp.asarray(rng.standard_normal(c).astype(acc))
    rv = cp.asarray(rng.random(c).astype(acc) + 0.5)
    w = cp.asarray(_data(dtype, (c,), rng))
    b = cp.asarray(rng.standard_normal(c).astype(acc))
    a = canon("batch_norm", training=training, momentum=0.8, epsilon=1e-4, channel_last=cl)
    for wb in ((w, b), (None, None)):
        got = k["batch_norm"](x, rm, rv, *wb, **a)
        want = OPS["batch_norm"].reference(x, rm, rv, *wb, **a)
        _gpu_close(cp, got, want, dtype, f"batch_norm {training}")
        g = cp.asarray(_data(dtype, shape, rng))
        ga = canon("batch_norm_grad", epsilon=1e-4, channel_last=cl, batch_stats=training)
        _gpu_close(cp, k["batch_norm_grad"](x, wb[0], got[3], got[4], g, **ga),
                   OPS["batch_norm_grad"].reference(x, wb[0], got[3], got[4], g, **ga), dtype,
                   "batch_norm_grad", 5)


FAMILIES = {
    "conv": ("conv", "conv_transpose", "conv_grad_weight"),
    "pool": ("max_pool", "max_pool_with_index", "avg_pool", "avg_pool_grad", "max_pool_grad",
             "adaptive_avg_pool"),
    "softmax": ("softmax", "log_softmax", "softmax_grad", "log_softmax_grad",
                "cross_entropy_with_softmax", "cross_entropy_with_softmax_grad"),
    "norm": ("layer_norm", "layer_norm_grad", "batch_norm", "batch_norm_grad"),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_lists_its_kernels(family, monkeypatch):
    """kernels(cp) gives exactly the family's ops, less those the switch turns off (no
    CUDA needed: nothing compiles until a kernel runs)."""
    mod = {"conv": gconv, "pool": gpool, "softmax": gsoftmax, "norm": gnorm}[family]
    for v in ("FW_GPU_RAW", "FW_GPU_DISABLE", "FW_GPU_ENABLE"):
        monkeypatch.delenv(v, raising=False)
    assert sorted(mod.kernels(HostCuPy())) == sorted(FAMILIES[family])
    off = FAMILIES[family][-1]  # (not the first: "conv" and "softmax" name families too)
    monkeypatch.setenv("FW_GPU_DISABLE", off)
    assert sorted(mod.kernels(HostCuPy())) == sorted(FAMILIES[family][:-1])
    monkeypatch.setenv("FW_GPU_DISABLE", family)
    assert mod.kernels(HostCuPy()) == {}


@gpu_only
def test_gpu_kernels_are_attached(cupy):
    """The backend attached every kernel its switch leaves on."""
    for fam, names in FAMILIES.items():
        for name in names:
            assert ("gpu" in OPS[name].kernels) == _raw.enabled(name, fam), name
