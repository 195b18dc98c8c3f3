"""fw.core._native / fw.core._C: the oneDNN matmul against a float64 NumPy reference."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fw.core import _native

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float32), BF16]
ACTS = ["none", "relu", "gelu_tanh", "gelu_erf", "sigmoid", "tanh", "swish"]

requires_native = pytest.mark.skipif(not _native.available, reason="FW_DISABLE_NATIVE=1")


# -- reference ---------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def ref_act(v: np.ndarray, act: str) -> np.ndarray:
    return {
        "none": lambda: v,
        "relu": lambda: np.maximum(v, 0.0),
        "gelu_tanh": lambda: (
            0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))
        ),
        "gelu_erf": lambda: 0.5 * v * (1 + _erf(v / math.sqrt(2))),
        "sigmoid": lambda: 1 / (1 + np.exp(-v)),
        "tanh": lambda: np.tanh(v),
        "swish": lambda: v / (1 + np.exp(-v)),
    }[act]()


def reference(x, y, tx=False, ty=False, bias=None, act="none", residual=None, residual_first=False):
    """The fused matmul in float64."""
    x64, y64 = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if tx:
        x64 = np.swapaxes(x64, -1, -2)
    if ty:
        y64 = np.swapaxes(y64, -1, -2)
    r = np.matmul(x64, y64)
    if bias is not None:
        r = r + np.asarray(bias, np.float64)
    res = None if residual is None else np.asarray(residual, np.float64)
    if res is not None and residual_first:
        r = r + res
    r = ref_act(r, act)
    if res is not None and not residual_first:
        r = r + res
    return r


def assert_close(got, want, dtype, k):
    """Shape, then dtype, then values; tolerance grows with the contraction length."""
    assert got.shape == want.shape
    assert got.dtype == dtype
    if dtype == BF16:
        rtol, atol = 1e-2, 1e-2 * max(1.0, math.sqrt(k))
    else:
        rtol, atol = 1e-5, 1e-5 * max(1, k)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol)


def rand(rng, shape, dtype):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


# -- shapes ------------------------------------------------------------------

dims = st.integers(1, 17)


@st.composite
def batched_shapes(draw):
    """(x_shape, y_shape) whose batch dims broadcast, matrix dims (M, K) @ (K, N)."""
    m, k, n = draw(dims), draw(dims), draw(dims)
    out_batch = draw(st.lists(st.integers(1, 3), max_size=3))

    def operand_batch():
        b = [d if draw(st.booleans()) else 1 for d in out_batch]
        return b[draw(st.integers(0, len(b))) :]  # may drop leading dims

    return (*operand_batch(), m, k), (*operand_batch(), k, n)


# -- matmul vs reference -----------------------------------------------------


@settings(deadline=None)  # example count: the hypothesis profile (conftest.py)
@given(
    shapes=batched_shapes(),
    tx=st.booleans(),
    ty=st.booleans(),
    dtype=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**16),
)
def test_matmul_matches_reference(shapes, tx, ty, dtype, seed):
    rng = np.random.default_rng(seed)
    (xs, ys) = shapes
    if tx:
        xs = (*xs[:-2], xs[-1], xs[-2])
    if ty:
        ys = (*ys[:-2], ys[-1], ys[-2])
    x, y = rand(rng, xs, dtype), rand(rng, ys, dtype)
    got = _native.matmul(x, y, tx, ty)
    assert_close(got, reference(x, y, tx, ty), dtype, shapes[0][-1])


BROADCAST_CASES = [
    ((5, 7), (7, 3)),
    ((4, 5, 7), (7, 3)),  # linear layer: folded into one GEMM
    ((2, 3, 5, 7), (7, 3)),
    ((4, 5, 7), (4, 7, 3)),
    ((5, 7), (4, 7, 3)),  # broadcast x
    ((2, 1, 5, 7), (1, 3, 7, 3)),  # broadcast both ways
    ((3, 1, 5, 7), (4, 7, 3)),
    ((1, 1, 5, 7), (7, 3)),
]


@pytest.mark.parametrize("xs, ys", BROADCAST_CASES, ids=str)
@pytest.mark.parametrize("tx, ty", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_broadcast_patterns(xs, ys, tx, ty, dtype):
    rng = np.random.default_rng(len(xs) * 7 + len(ys))
    x = rand(rng, (*xs[:-2], xs[-1], xs[-2]) if tx else xs, dtype)
    y = rand(rng, (*ys[:-2], ys[-1], ys[-2]) if ty else ys, dtype)
    assert_close(_native.matmul(x, y, tx, ty), reference(x, y, tx, ty), dtype, xs[-1])


@settings(deadline=None)
@given(
    m=dims, k=dims, n=dims,
    batch=st.sampled_from([(), (3,), (2, 2)]),
    act=st.sampled_from(ACTS),
    with_bias=st.booleans(),
    residual=st.sampled_from(["none", "after", "before"]),
    dtype=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**16),
)  # fmt: skip
def test_fused_epilogue_matches_reference(m, k, n, batch, act, with_bias, residual, dtype, seed):
    rng = np.random.default_rng(seed)
    x, y = rand(rng, (*batch, m, k), dtype), rand(rng, (k, n), dtype)
    bias = rand(rng, (n,), dtype) if with_bias else None
    res = rand(rng, (*batch, m, n), dtype) if residual != "none" else None
    first = residual == "before"
    got = _native.matmul(
        x, y, bias=bias, activation=act, residual=res, residual_before_activation=first
    )
    assert_close(got, reference(x, y, False, False, bias, act, res, first), dtype, k)


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_each_activation(act, dtype):
    rng = np.random.default_rng(0)
    x, y, b = rand(rng, (5, 7), dtype), rand(rng, (7, 3), dtype) * 3, rand(rng, (3,), dtype)
    assert_close(
        _native.matmul(x, y, bias=b, activation=act), reference(x, y, bias=b, act=act), dtype, 7
    )


def test_activation_aliases():
    rng = np.random.default_rng(1)
    x, y = rand(rng, (4, 6), np.float32), rand(rng, (6, 5), np.float32)
    np.testing.assert_array_equal(
        _native.matmul(x, y, activation="silu"), _native.matmul(x, y, activation="swish")
    )
    np.testing.assert_array_equal(
        _native.matmul(x, y, activation="gelu"), _native.matmul(x, y, activation="gelu_erf")
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_residual_is_out_accumulates_in_place(dtype):
    rng = np.random.default_rng(2)
    x, y = rand(rng, (2, 4, 6), dtype), rand(rng, (6, 5), dtype)
    out = rand(rng, (2, 4, 5), dtype)
    want = reference(x, y, residual=out.copy(), act="relu", residual_first=True)
    got = _native.matmul(
        x, y, activation="relu", residual=out, residual_before_activation=True, out=out
    )
    assert got is out
    assert_close(out, want, dtype, 6)


def test_non_contiguous_inputs():
    rng = np.random.default_rng(3)
    a = rand(rng, (8, 12), np.float32)
    w = rand(rng, (10, 8), np.float32)
    for x, y in [(a.T, w.T), (a[:, ::2], w[:6]), (a[::2], a.T[:, ::3])]:
        assert_close(_native.matmul(x, y), reference(x, y), np.float32, x.shape[-1])
    # an F-ordered operand is read transposed (no copy), also with the flag set
    w2 = rand(rng, (12, 5), np.float32)
    assert_close(
        _native.matmul(a.T, w2.T, True, True), reference(a.T, w2.T, True, True), np.float32, 12
    )


@requires_native
@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 3), h=st.integers(1, 4), m=dims, k=dims, n=dims,
       tx=st.booleans(), ty=st.booleans(), step=st.integers(1, 2), seed=st.integers(0, 99))
def test_strided_views_are_read_in_place(b, h, m, k, n, tx, ty, step, seed):
    """Views like attention heads ([B, S, H, D] transposed to [B, H, S, D]), possibly
    with a stepped row dim, go to oneDNN with their strides; the result is the
    product of the views."""
    rng = np.random.default_rng(seed)

    def heads(rows, cols):  # a [b, h, rows, cols] view of a [b, rows*step, h, cols] array
        base = rand(rng, (b, rows * step, h, cols), np.float32)
        return base.transpose(0, 2, 1, 3)[:, :, ::step]

    x = heads(k, m) if tx else heads(m, k)
    y = heads(n, k) if ty else heads(k, n)
    got = _native.matmul(x, y, tx, ty)
    assert_close(got, reference(x, y, tx, ty), np.float32, k)
    assert _native.C.matmul(x, y, None, tx, ty).tobytes() == got.tobytes()


@requires_native
@settings(max_examples=40, deadline=None)
@given(batch=st.lists(st.integers(1, 3), min_size=1, max_size=3), m=dims, k=dims, n=dims,
       tx=st.booleans(), ty=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_views_with_permuted_and_stepped_dims(batch, m, k, n, tx, ty, seed):
    """Any view (dims permuted, every dim stepped): strided to oneDNN when it can read
    it, copied otherwise; always the product of the views."""
    rng = np.random.default_rng(seed)

    def view(rows, cols):
        shape = (*batch, rows, cols)
        perm = rng.permutation(len(shape))
        steps = rng.integers(1, 3, len(shape))
        base = rand(rng, [shape[p] * steps[p] for p in perm], np.float32)
        v = base.transpose(np.argsort(perm))[tuple(slice(None, None, int(s)) for s in steps)]
        assert v.shape == shape
        return v

    x = view(k, m) if tx else view(m, k)
    y = view(n, k) if ty else view(k, n)
    assert_close(_native.matmul(x, y, tx, ty), reference(x, y, tx, ty), np.float32, k)


def test_vectors_follow_numpy():
    rng = np.random.default_rng(4)
    v, m, b = (
        rand(rng, (5,), np.float32),
        rand(rng, (5, 3), np.float32),
        rand(rng, (2, 3, 5), np.float32),
    )
    for x, y in [(v, m), (m.T, v), (v, v), (b, v), (v, b.swapaxes(-1, -2))]:
        got = _native.matmul(x, y)
        want = np.matmul(x.astype(np.float64), y.astype(np.float64))
        assert_close(got, np.asarray(want), np.float32, 5)


def test_out_argument_variants():
    rng = np.random.default_rng(8)
    x, y, v = (
        rand(rng, (3, 5), np.float32),
        rand(rng, (5, 4), np.float32),
        rand(rng, (5,), np.float32),
    )
    out64 = np.empty((3, 4), np.float64)  # not the kernel's dtype: computed, then copied
    assert _native.matmul(x, y, out=out64) is out64
    np.testing.assert_allclose(out64, reference(x, y), rtol=1e-5, atol=1e-5)
    outv = np.empty(4, np.float32)
    assert _native.matmul(v, y, out=outv) is outv
    np.testing.assert_allclose(outv, reference(v[None], y)[0], rtol=1e-5, atol=1e-5)
    sq = rand(rng, (4, 4), np.float32)
    want = reference(sq, sq)
    assert _native.matmul(sq, sq, out=sq) is sq  # out aliases the inputs
    np.testing.assert_allclose(sq, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(
        ValueError, match=r"matmul: out float32\[3\] does not have the result shape"
    ):
        _native.matmul(v, y, out=np.empty(3, np.float32))


def test_vector_with_epilogue():
    rng = np.random.default_rng(5)
    v, m = rand(rng, (5,), np.float32), rand(rng, (5, 3), np.float32)
    bias, res = rand(rng, (3,), np.float32), rand(rng, (3,), np.float32)
    got = _native.matmul(v, m, bias=bias, activation="tanh", residual=res)
    assert_close(got, reference(v[None], m, bias=bias, act="tanh", residual=res)[0], np.float32, 5)


@pytest.mark.parametrize(
    "xs, ys", [((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0, 2, 3), (3, 4)), ((2, 3), (3, 0))], ids=str
)
def test_zero_size_dims(xs, ys):
    x, y = np.ones(xs, np.float32), np.ones(ys, np.float32)
    bias = np.full(ys[-1], 2.0, np.float32)
    got = _native.matmul(x, y, bias=bias, activation="relu")
    assert_close(got, reference(x, y, bias=bias, act="relu"), np.float32, 1)


def test_other_dtypes_fall_back_to_numpy():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    y = np.arange(12, dtype=np.int64).reshape(3, 4)
    got = _native.matmul(x, y)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, x @ y)
    xf, yf = x.astype(np.float64) / 7, y.astype(np.float64) / 3
    got = _native.matmul(xf, yf, transpose_y=False, bias=np.ones(4), activation="gelu_erf")
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, reference(xf, yf, bias=np.ones(4), act="gelu_erf"), rtol=1e-12)
    mixed = _native.matmul(x.astype(np.float32), yf.astype(BF16))
    assert mixed.dtype == np.float32


@requires_native
def test_bf16_inputs_with_f32_output():
    rng = np.random.default_rng(6)
    x, y = rand(rng, (3, 9), BF16), rand(rng, (9, 4), BF16)
    out = np.empty((3, 4), np.float32)
    _native.C.matmul(x.view(np.uint16), y.view(np.uint16), out)
    np.testing.assert_allclose(out, reference(x, y), rtol=1e-5, atol=1e-5)
    assert _native.matmul(x, y, out=out) is out


@requires_native
def test_raw_extension_allocates_result():
    x, y = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    r = _native.C.matmul(x, y)
    assert isinstance(r, np.ndarray) and r.shape == (2, 4) and r.dtype == np.float32
    np.testing.assert_array_equal(r, np.full((2, 4), 3.0, np.float32))
    rb = _native.C.matmul(x.astype(BF16).view(np.uint16), y.astype(BF16).view(np.uint16))
    assert rb.dtype == np.uint16
    np.testing.assert_array_equal(rb.view(BF16).astype(np.float32), r)


# -- errors ------------------------------------------------------------------


@requires_native
def test_extension_rejects_unsupported_dtype():
    x, y = np.ones((4, 3), np.float64), np.ones((3, 2), np.float32)
    with pytest.raises(TypeError, match=r"matmul.*float64\[4, 3\].*float32\[3, 2\]"):
        _native.C.matmul(x, y)
    with pytest.raises(TypeError, match="matmul"):
        _native.C.matmul(np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))


def test_wrapper_rejects_non_numeric_dtype():
    with pytest.raises(TypeError, match=r"matmul: unsupported dtypes x=<U1\[2, 2\]"):
        _native.matmul(np.full((2, 2), "a"), np.ones((2, 2), np.float32))


@pytest.mark.parametrize("dtype", DTYPES + [np.dtype(np.float64)], ids=str)
def test_contraction_mismatch_names_shapes(dtype):
    x, y = np.ones((2, 3), dtype), np.ones((4, 5), dtype)
    with pytest.raises(ValueError, match=r"matmul.*K=3.*K=4") as info:
        _native.matmul(x, y)
    assert "[2, 3]" in str(info.value) and "[4, 5]" in str(info.value)


@requires_native
def test_batch_mismatch_names_shapes():
    with pytest.raises(
        ValueError, match=r"matmul: batch dims are not broadcastable.*float32\[2, 3, 4\]"
    ):
        _native.matmul(np.ones((2, 3, 4), np.float32), np.ones((3, 4, 5), np.float32))


@requires_native
def test_bad_epilogue_arguments():
    x, y = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="matmul: unknown activation 'softmax'"):
        _native.matmul(x, y, activation="softmax")
    with pytest.raises(ValueError, match=r"matmul: bias float32\[3\] must have shape \[4\]"):
        _native.matmul(x, y, bias=np.ones(3, np.float32))
    with pytest.raises(
        ValueError, match=r"matmul: residual float32\[4, 2\] must have the result shape \[2, 4\]"
    ):
        _native.matmul(x, y, residual=np.ones((4, 2), np.float32))
    with pytest.raises(
        ValueError, match=r"matmul: out float32\[4, 2\] does not have the result shape \[2, 4\]"
    ):
        _native.C.matmul(x, y, np.empty((4, 2), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):  # bias, out, residual: dense only
        _native.C.matmul(x, y, None, False, False, np.ones(8, np.float32)[::2])
    with pytest.raises(ValueError, match="non-contiguous operands must be float32"):
        _native.C.matmul(np.ones((3, 2), np.uint16).T, np.ones((3, 4), np.uint16))
    with pytest.raises(ValueError, match="negative or zero stride"):
        _native.C.matmul(np.ones((2, 3), np.float32)[::-1], y)
    with pytest.raises(ValueError, match="equal batch dims"):
        _native.C.matmul(np.ones((2, 3, 2), np.float32).transpose(0, 2, 1), np.ones((1, 3, 4),
                                                                                  np.float32))
    read_only = np.empty((2, 4), np.float32)
    read_only.setflags(write=False)
    with pytest.raises(TypeError, match="matmul: out must be a writable"):
        _native.C.matmul(x, y, read_only)


# -- loader: version pin, libdnnl lookup, disabling ----------------------------


def test_version_mismatch_raises(monkeypatch):
    with pytest.raises(ImportError) as info:
        _native._check_version("0.0.9", "0.1.0")
    assert str(info.value) == (
        "fw-core native extension version 0.0.9 does not match Python package version 0.1.0; "
        "rebuild with pip install -e packages/fw-core"
    )
    if _native.available:
        monkeypatch.setattr(_native.C, "__version__", "9.9.9")
        with pytest.raises(
            ImportError, match="version 9.9.9 does not match Python package version"
        ):
            _native._load()


@requires_native
def test_versions_agree():
    import fw.core

    assert _native.C.__version__ == fw.core.__version__


def test_missing_onednn_is_a_clear_import_error(monkeypatch):
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(
        ImportError, match=r"libdnnl\.so\.3.*pip install onednn-cpu-gomp==2023\.2\.0"
    ):
        _native._find_libdnnl()


def test_disable_native_falls_back_to_numpy():
    code = (
        "import numpy as np; from fw.core import _native as n; "
        "assert n.C is None and not n.available; "
        "x, y = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32); "
        "r = n.matmul(x, y, activation='relu'); "
        "assert r.dtype == np.float32 and (r == 3).all(); print('ok')"
    )
    env = dict(os.environ, FW_DISABLE_NATIVE="1")
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@requires_native
def test_forked_child_does_not_hang():
    # GNU OpenMP's pool does not survive fork; _C drops forked children to 1 thread.
    code = (
        "import os, numpy as np; from fw.core import _native as n; "
        "a = np.ones((256, 256), np.float32); n.set_num_threads(2); n.matmul(a, a); "
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    ok = n.get_num_threads() == 1 and n.matmul(a, a)[0, 0] == 256\n"
        "    os._exit(0 if ok else 3)\n"
        "_, status = os.waitpid(pid, 0); print(os.waitstatus_to_exitcode(status))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"


# -- cache and threads ---------------------------------------------------------


@requires_native
def test_cache_reports_hits_and_evicts():
    _native.clear_cache()
    x, y = np.ones((3, 5), np.float32), np.ones((5, 7), np.float32)
    _native.matmul(x, y)
    _native.matmul(x, y)
    _native.matmul(x, y, activation="relu")  # a different primitive
    info = _native.cache_info()
    assert (info["hits"], info["misses"], info["size"]) == (1, 2, 2)
    try:
        _native.set_cache_capacity(1)
        assert _native.cache_info()["size"] == 1
        assert _native.cache_info()["evictions"] == 1
        _native.set_cache_capacity(0)  # disabled: still computes
        np.testing.assert_array_equal(_native.matmul(x, y), np.full((3, 7), 5.0, np.float32))
        assert _native.cache_info()["size"] == 0
    finally:
        _native.set_cache_capacity(256)
    with pytest.raises(ValueError):
        _native.set_cache_capacity(-1)


@requires_native
def test_threads_setting_and_concurrent_calls():
    before = _native.get_num_threads()
    try:
        _native.set_num_threads(1)
        assert _native.get_num_threads() == 1
        rng = np.random.default_rng(7)
        x, y = rand(rng, (64, 48), np.float32), rand(rng, (48, 32), np.float32)
        want = reference(x, y)
        _native.set_num_threads(before)
        errors = []

        def work():
            try:
                for _ in range(50):
                    np.testing.assert_allclose(_native.matmul(x, y), want, rtol=1e-5, atol=1e-4)
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
    finally:
        _native.set_num_threads(before)
    with pytest.raises(ValueError):
        _native.set_num_threads(0)
