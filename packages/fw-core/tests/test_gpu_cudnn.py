"""The cuDNN convolutions (fw.core.kernels.gpu.cudnn).

- Everywhere: the switch, the library search, inertness without cuDNN, the specs
  (cuDNN's dimensions, pads and strides) against the reference's shapes, and the
  fallback wiring.
- Where ``libcudnn.so.9`` loads (``FW_CUDNN_LIBRARY``, or the nvidia-cudnn pip package;
  cuDNN's descriptor calls need no GPU): the descriptors of every spec, checked with
  cuDNN's own output-size and descriptor queries, and the error messages.
- With ``FW_TEST_DEVICE=gpu``: every kernel against the reference in the four float
  dtypes, both layouts, strides, dilations, groups and depthwise, 1-D to 3-D.
"""

from __future__ import annotations

import ctypes
import warnings

import ml_dtypes
import numpy as np
import pytest

from fw.core.kernels.gpu import cudnn
from fw.core.ops import OPS
from fw.core.testing import assert_close, tolerance
from fw.core.testing import device as _dev
from fw.core.testing.fake_device import FakeArray

GPU = _dev.is_real_gpu()
BF16 = np.dtype(ml_dtypes.bfloat16)
ALL_DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]


def canon(name, **kw):
    op = OPS[name]
    a = dict(op.attrs)
    a.update(kw)
    return op.canon(a) if op.canon is not None else a


# (N, C, spatial, C_out, kernel, stride, padding, dilation, groups, channel_last)
CASES = [
    (2, 3, (7, 9), 4, (3, 3), 1, 1, 1, 1, False),
    (2, 4, (8, 7), 6, (3, 2), 2, [1, 0, 2, 1], 1, 2, False),  # asymmetric pads
    (1, 3, (9, 10), 5, (3, 3), (2, 3), "SAME", 1, 1, True),
    (3, 2, (11, 6), 4, (2, 3), 1, "VALID", (2, 1), 1, False),
    (2, 6, (7, 7), 6, (3, 3), 2, 1, 1, 6, False),  # depthwise
    (2, 4, (6, 9), 4, (5, 3), 1, [2, 1], 1, 4, True),  # depthwise, channel-last
    (2, 6, (5, 8), 9, (1, 1), 1, 0, 1, 3, True),
    (2, 8, (9, 9), 8, (3, 3), 1, 2, 2, 2, True),  # dilation, groups, NHWC
    (2, 3, (13,), 4, (3,), 2, [1, 2], 1, 1, False),  # 1-D
    (1, 4, (10,), 2, (4,), 1, 2, 2, 2, True),
    (2, 2, (5, 6, 4), 3, (3, 2, 2), (1, 2, 1), 1, 1, 1, False),  # 3-D
    (1, 4, (4, 5, 6), 4, (2, 3, 3), 1, [1, 0, 1], 1, 2, True),
]
IDS = [f"case{i}" for i in range(len(CASES))]


def conv_args(case, dtype, rng, bias=True):
    n, c, sp, cout, ks, stride, padding, dilation, groups, cl = case
    xs = (n,) + sp + (c,) if cl else (n, c) + sp
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal((cout, c // groups) + ks).astype(dtype)
    b = rng.standard_normal((cout,)).astype(dtype) if bias else None
    attrs = canon("conv", stride=stride, padding=padding, dilation=dilation, groups=groups,
                  channel_last=cl)
    return x, w, b, attrs


def grad_attrs(case, x_shape, w_shape):
    """conv_transpose / conv_grad_weight attributes of conv's backward (the VJP's)."""
    from fw.core.ops.conv import conv_geometry, split_layout

    n, c, sp, cout, ks, stride, padding, dilation, groups, cl = case
    a = canon("conv", stride=stride, padding=padding, dilation=dilation, groups=groups,
              channel_last=cl)
    strides, pads, dils, _ = conv_geometry(split_layout(x_shape, cl)[2], w_shape[2:],
                                           a["stride"], a["padding"], a["dilation"])
    geo = {"stride": list(strides), "padding": [v for p in pads for v in p],
           "dilation": list(dils), "groups": groups, "channel_last": cl}
    sp = list(x_shape[1:-1] if cl else x_shape[2:])
    return (canon("conv_transpose", output_size=sp, **geo),
            canon("conv_grad_weight", kernel_size=list(w_shape[2:]), **geo))


def _out_shape(x, w, a):
    return tuple(OPS["conv"].reference(x, w, None, **a).shape)


def _lib_or_skip():
    lib = cudnn.library()
    if lib is None:
        pytest.skip("libcudnn.so.9 not found (set FW_CUDNN_LIBRARY or install nvidia-cudnn)")
    return lib


def _unlift(dims, spec):
    return tuple(dims[:2]) + tuple(dims[3:]) if spec.lifted else tuple(dims)


# ---------------------------------------------------------------- everywhere
def test_switch():
    assert cudnn.enabled({}) is cudnn.DEFAULT_ON
    assert cudnn.enabled({"FW_GPU_CUDNN": "1"})
    assert not cudnn.enabled({"FW_GPU_CUDNN": "0"})
    assert not cudnn.enabled({"FW_GPU_CUDNN": "1", "FW_GPU_RAW": "0"})
    assert not cudnn.enabled({"FW_GPU_CUDNN": "1", "FW_GPU_DISABLE": "pool, cudnn"})
    assert cudnn.enabled({"FW_GPU_CUDNN": "on", "FW_GPU_DISABLE": "conv_transpose"})


def test_library_candidates(tmp_path):
    assert cudnn.library_candidates({"FW_CUDNN_LIBRARY": str(tmp_path)}) == \
        [str(tmp_path / "libcudnn.so.9")]
    assert cudnn.library_candidates({"FW_CUDNN_LIBRARY": "/x/libcudnn.so.9.1"}) == \
        ["/x/libcudnn.so.9.1"]
    found = cudnn.library_candidates({})
    assert "libcudnn.so.9" in found  # the system loader comes after the pip packages
    assert all(c == "libcudnn.so.9" or c.endswith("libcudnn.so.9") or "cudnn" in c
               for c in found)


def test_without_cudnn_everything_is_inert(monkeypatch, tmp_path):
    monkeypatch.setenv("FW_CUDNN_LIBRARY", str(tmp_path / "missing.so"))
    monkeypatch.setenv("FW_GPU_CUDNN", "1")
    monkeypatch.setattr(cudnn, "_LIB", [])
    assert cudnn.library() is None
    assert cudnn.kernels(object(), {"conv": lambda *a, **k: None}) == {}
    assert cudnn.kernels(None, {"conv": lambda *a, **k: None}) == {}
    monkeypatch.setenv("FW_GPU_CUDNN", "0")
    monkeypatch.setattr(cudnn, "_LIB", [])
    assert cudnn.kernels(object(), {"conv": lambda *a, **k: None}) == {}


def test_packed_strides():
    assert cudnn.packed_strides((2, 3, 4, 5), False) == (60, 20, 5, 1)
    assert cudnn.packed_strides((2, 3, 4, 5), True) == (60, 1, 15, 3)
    assert cudnn.packed_strides((2, 3, 4, 5, 6), True) == (360, 1, 90, 18, 3)


def test_math_types():
    assert cudnn.math_type(np.float16) == 1 and cudnn.math_type(BF16) == 1
    assert cudnn.math_type(np.float32) == 3  # FMA: no TF32 unless asked for
    assert cudnn.math_type(np.float32, tf32=True) == 0
    assert cudnn.math_type(np.float64) == 0


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_specs_match_the_reference_geometry(case):
    x, w, _, a = conv_args(case, np.float32, np.random.default_rng(0), bias=False)
    nd = len(case[2])
    spec = cudnn.conv_spec(x.shape, w.shape, x.dtype, **a)
    assert spec is not None and spec.lifted == (nd == 1)
    out = _out_shape(x, w, a)
    cl = case[9]
    want_y = (out[0], out[-1]) + out[1:-1] if cl else out
    assert _unlift(spec.y_dims, spec) == want_y
    # cuDNN's forward size of the (explicitly padded) x with the symmetric pads
    for xi, k, p, s, d, yi in zip(spec.x_dims[2:], spec.w_dims[2:], spec.pads, spec.strides,
                                  spec.dilations, spec.y_dims[2:]):
        assert (xi + 2 * p - (d * (k - 1) + 1)) // s + 1 == yi
    from fw.core.ops.conv import conv_geometry, split_layout

    pads = conv_geometry(split_layout(x.shape, cl)[2], w.shape[2:], a["stride"], a["padding"],
                         a["dilation"])[1]
    symmetric = all(b == e for b, e in pads)
    assert (spec.pre_pad is None) == symmetric
    ta, wa = grad_attrs(case, x.shape, w.shape)
    g = np.zeros(out, np.float32)
    tspec = cudnn.conv_transpose_spec(g.shape, w.shape, g.dtype, **ta)
    assert tspec is not None or not symmetric  # only asymmetric pads may be refused
    if tspec is not None:  # cuDNN's dx is the op's output (x's shape), its dy the input
        n, c, sp = split_layout(x.shape, cl)
        assert _unlift(tspec.x_dims, tspec) == (n, c) + tuple(sp)
        assert tspec.y_dims == spec.y_dims and tspec.w_dims == spec.w_dims
    wspec = cudnn.grad_weight_spec(x.shape, g.shape, x.dtype, **wa)
    assert wspec == spec


def test_specs_refuse_what_cudnn_does_not_take():
    f32 = np.dtype(np.float32)
    a = canon("conv", padding=1)
    assert cudnn.conv_spec((1, 2, 3, 3), (2, 2, 3, 3), np.dtype(np.int32), **a) is None
    assert cudnn.conv_spec((1, 2, 3, 3, 3, 3), (2, 2, 1, 1, 1, 1), f32, **a) is None  # 4-D
    assert cudnn.conv_spec((1, 2, 70000, 70000), (2, 2, 1, 1), f32, **a) is None  # > int32
    # a transposed convolution whose end pad exceeds its begin pad
    ta = canon("conv_transpose", padding=[0, 1, 0, 1])
    assert cudnn.conv_transpose_spec((1, 2, 5, 5), (2, 3, 3, 3), f32, **ta) is None
    # grad_out of the wrong size
    wa = canon("conv_grad_weight", kernel_size=[3, 3], padding=1)
    assert cudnn.grad_weight_spec((1, 2, 5, 5), (1, 3, 4, 5), f32, **wa) is None
    assert cudnn.grad_weight_spec((1, 2, 5, 5), (1, 3, 5, 5), f32, **wa) is not None


class _FakeCp:
    """Just enough of CuPy for the wrappers' decisions (no GPU work is reached)."""
    ndarray = FakeArray

    class cuda:
        class Device:
            id = 0

        @staticmethod
        def get_current_stream():
            raise AssertionError("no cuDNN call may run in this test")


def _recorder(calls, name):
    def fallback(*args, **kwargs):
        calls.append((name, args, kwargs))
        return name
    return fallback


def test_calls_cudnn_does_not_take_run_the_fallback(monkeypatch):
    _lib_or_skip()
    monkeypatch.setenv("FW_GPU_CUDNN", "1")
    calls = []
    names = ("conv", "conv_transpose", "conv_grad_weight")
    k = cudnn.kernels(_FakeCp, {n: _recorder(calls, n) for n in names})
    assert set(k) == set(names)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32).view(FakeArray)
    w64 = rng.standard_normal((3, 2, 3, 3)).view(FakeArray)
    a = canon("conv", padding=1)
    assert k["conv"](x, w64, None, **a) == "conv"  # mixed dtypes
    assert calls[-1][1][0] is x and calls[-1][2]["padding"] == a["padding"]
    host = np.zeros((1, 2, 5, 5), np.float32)  # not a device array
    assert k["conv"](host, host[:, :, :3, :3], None, **a) == "conv"
    empty = np.zeros((0, 2, 5, 5), np.float32).view(FakeArray)
    wt = np.zeros((2, 3, 3, 3), np.float32).view(FakeArray)
    assert k["conv_transpose"](empty, wt, None, **canon("conv_transpose")) == \
        "conv_transpose"
    assert k["conv_grad_weight"](x, x, **canon("conv_grad_weight", kernel_size=[7, 7])) \
        == "conv_grad_weight"  # grad_out does not have conv's shape: the fallback raises
    assert len(calls) == 4


def test_a_refused_plan_falls_back_once_and_is_recorded(monkeypatch):
    _lib_or_skip()
    monkeypatch.setenv("FW_GPU_CUDNN", "1")

    def refuse(lib, handle, op, descs, what):
        raise cudnn.CudnnError(f"no algorithm in {what}")

    monkeypatch.setattr(cudnn, "_choose", refuse)
    monkeypatch.setattr(cudnn, "_handle", lambda lib, cp: None)
    calls = []
    k = cudnn.kernels(_FakeCp, {"conv": _recorder(calls, "conv")})
    x = np.ones((1, 2, 5, 5), np.float32).view(FakeArray)
    w = np.ones((3, 2, 3, 3), np.float32).view(FakeArray)
    a = canon("conv", padding=1)
    with pytest.warns(RuntimeWarning, match="conv.*x \\[1, 2, 5, 5\\] float32"):
        assert k["conv"](x, w, None, **a) == "conv"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per op
        assert k["conv"](x, w, None, **a) == "conv"
    assert len(calls) == 2
    assert any("no algorithm in conv(x [1, 2, 5, 5] float32" in v
               for v in cudnn.FAILURES.values())


# ---------------------------------------------------------------- with libcudnn (no GPU)
def _tensor_nd(lib, desc):
    dt, nb = ctypes.c_int(), ctypes.c_int()
    dims, st = (ctypes.c_int * 8)(), (ctypes.c_int * 8)()
    lib.call("cudnnGetTensorNdDescriptor", desc, 8, ctypes.byref(dt), ctypes.byref(nb), dims,
             st)
    return dt.value, tuple(dims[:nb.value]), tuple(st[:nb.value])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_descriptors_agree_with_cudnn(case, dtype):
    lib = _lib_or_skip()
    x, w, _, a = conv_args(case, np.float32, np.random.default_rng(0), bias=False)
    spec = cudnn.conv_spec(x.shape, w.shape, dtype, **a)
    d = cudnn._Descs(lib, "conv", spec, False, "test")
    assert d.forward_output_dims() == spec.y_dims
    assert _tensor_nd(lib, d.x) == (spec.data_type, spec.x_dims, spec.x_strides())
    assert _tensor_nd(lib, d.y) == (spec.data_type, spec.y_dims, spec.y_strides())
    g = ctypes.c_int()
    lib.call("cudnnGetConvolutionGroupCount", d.conv, ctypes.byref(g))
    assert g.value == case[8]
    lib.call("cudnnGetConvolutionMathType", d.conv, ctypes.byref(g))
    assert g.value == cudnn.math_type(dtype)
    assert (d.bias is None) == (dtype == BF16)
    ta, wa = grad_attrs(case, x.shape, w.shape)
    out = _out_shape(x, w, a)
    tspec = cudnn.conv_transpose_spec(out, w.shape, dtype, **ta)
    if tspec is not None:  # conv(dx) must have dy's size, as cuDNN checks
        td = cudnn._Descs(lib, "conv_transpose", tspec, False, "test")
        assert td.forward_output_dims() == tspec.y_dims
        assert td.out is td.x


def test_cudnn_errors_name_the_call_and_cudnn_message():
    lib = _lib_or_skip()
    d = ctypes.c_void_p()
    lib.call("cudnnCreateTensorDescriptor", ctypes.byref(d))
    dims = (ctypes.c_int * 4)(1, -2, 3, 3)
    st = (ctypes.c_int * 4)(18, 9, 3, 1)
    with pytest.raises(cudnn.CudnnError, match=r"cudnnSetTensorNdDescriptor failed in "
                                               r"conv\(x \[1, -2\]\): CUDNN_STATUS_BAD_PARAM"):
        lib.call("cudnnSetTensorNdDescriptor", d, 0, 4, dims, st, what="conv(x [1, -2])")
    assert lib.version >= 90000


# ---------------------------------------------------------------- on the GPU
@pytest.fixture(scope="module")
def cupy():
    if not GPU:
        pytest.skip("needs FW_TEST_DEVICE=gpu and a GPU")
    _dev.place()
    import cupy

    if cudnn.library() is None:
        pytest.skip("libcudnn.so.9 not found")
    return cupy


def _strict_kernels(cp, monkeypatch, refused):
    """The cuDNN kernels with fallbacks that record what cuDNN did not take."""
    monkeypatch.setenv("FW_GPU_CUDNN", "1")

    def fb(name):
        ref = OPS[name].reference

        def run(*args, **kw):
            refused.append(name)
            return ref(*args, **kw)
        return run
    return cudnn.kernels(cp, {n: fb(n) for n in ("conv", "conv_transpose",
                                                 "conv_grad_weight")})


def _gpu_close(cp, got, want, dtype, what, scale=1.0):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    r, a = tolerance(np.dtype(dtype))
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = cp.asnumpy(g), cp.asnumpy(w)
        s = scale * (10.0 if np.dtype(dtype).itemsize < 4 else 20.0)
        assert_close(g, w, w.dtype, r * s, a * s, what=f"{what}[{i}]")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gpu_cudnn_matches_the_reference(cupy, monkeypatch, case, dtype):
    cp = cupy
    refused = []
    k = _strict_kernels(cp, monkeypatch, refused)
    rng = np.random.default_rng()
    x, w, b, a = conv_args(case, dtype, rng)
    x, w, b = (cp.asarray(v) for v in (x, w, b))
    want = OPS["conv"].reference(x, w, b, **a)
    _gpu_close(cp, k["conv"](x, w, b, **a), want, dtype, "conv", scale=len(case[2]))
    g = cp.asarray(rng.standard_normal(want.shape).astype(dtype))
    ta, wa = grad_attrs(case, x.shape, w.shape)
    bt = cp.asarray(rng.standard_normal((case[1],)).astype(dtype))  # C_out of the transpose
    _gpu_close(cp, k["conv_transpose"](g, w, bt, **ta),
               OPS["conv_transpose"].reference(g, w, bt, **ta), dtype, "conv_transpose",
               scale=len(case[2]))
    _gpu_close(cp, k["conv_grad_weight"](x, g, **wa),
               OPS["conv_grad_weight"].reference(x, g, **wa), dtype, "conv_grad_weight", 5)
    spec = cudnn.conv_spec(x.shape, w.shape, x.dtype, **a)
    # cuDNN takes every call but a transposed one with asymmetric pads
    assert refused == ([] if spec.pre_pad is None or cudnn.conv_transpose_spec(
        g.shape, w.shape, g.dtype, **ta) is not None else ["conv_transpose"]), \
        (refused, cudnn.FAILURES)


def test_gpu_backend_puts_cudnn_first(cupy):
    from fw.core.kernels.gpu import conv as gconv

    k = OPS["conv"].kernels.get("gpu")
    if cudnn.enabled():
        assert k is not None and k.__module__ == cudnn.__name__
    else:
        assert k is None or k.__module__ == gconv.__name__
