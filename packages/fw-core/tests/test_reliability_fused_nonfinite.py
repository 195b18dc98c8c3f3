"""Fused == unfused eager, NaN/Inf included (docs/reliability.md, "Fused kernels"): every
fused op with a native kernel x every epilogue activation of fw.core._epilogue, with
NaN/+Inf/-Inf placed in each operand, against the unfused ops called eagerly. Exact
comparison (assert_array_equal treats NaNs as equal)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
from fw.core import _epilogue
from fw.core.ops import call

F = fw.nn.functional
SPECIALS = [np.nan, np.inf, -np.inf]


def _act(v, name):
    a = _epilogue.BY_NAME[name]
    if a.op is None:
        return v
    f = getattr(fw, a.op, None) or getattr(F, a.op)
    return f(v, **dict(a.attrs))


def _poison(draw, arrays, names):
    which = draw(st.sampled_from(names))
    a = arrays[which]
    for _ in range(draw(st.integers(1, 3))):
        a.flat[draw(st.integers(0, a.size - 1))] = draw(st.sampled_from(SPECIALS))
    return which


@pytest.mark.parametrize("activation", _epilogue.NAMES)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_fused_conv_keeps_eager_nonfinite_semantics(activation, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    groups = data.draw(st.sampled_from([1, 4, 8]))
    arrays = {"x": rng.standard_normal((2, 8, 6, 6)).astype(np.float32),
              "w": rng.standard_normal((8, 8 // groups, 3, 3)).astype(np.float32),
              "b": rng.standard_normal(8).astype(np.float32),
              "r": rng.standard_normal((2, 8, 6, 6)).astype(np.float32)}
    res, bias = data.draw(st.booleans()), data.draw(st.booleans())
    # (finite data is within a few ulp, not bit-exact: test_native_fused.py covers it)
    _poison(data.draw, arrays, ["x", "w"] + ["b"] * bias + ["r"] * res)
    x, w, b, r = (fw.to_tensor(arrays[k]) for k in "xwbr")
    b = b if bias else None
    got = call("fused_conv", x, w, b, r if res else None, padding=1, groups=groups,
               activation=activation).numpy()
    v = _act(F.conv2d(x, w, b, padding=1, groups=groups), activation)
    np.testing.assert_array_equal(got, (v + r if res else v).numpy())


@pytest.mark.parametrize("activation", _epilogue.NAMES)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_fused_matmul_keeps_eager_nonfinite_semantics(activation, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    arrays = {"x": rng.standard_normal((64, 64)).astype(np.float32),
              "y": rng.standard_normal((64, 64)).astype(np.float32),
              "b": rng.standard_normal(64).astype(np.float32),
              "r": rng.standard_normal((64, 64)).astype(np.float32)}
    res = data.draw(st.booleans())
    _poison(data.draw, arrays, ["x", "y", "b"] + ["r"] * res)
    x, y, b, r = (fw.to_tensor(arrays[k]) for k in "xybr")
    got = call("fused_matmul", x, y, b, r if res else None, activation=activation).numpy()
    v = _act(fw.matmul(x, y) + b, activation)
    np.testing.assert_array_equal(got, (v + r if res else v).numpy())


@pytest.mark.parametrize("special", SPECIALS)
def test_conv_relu_nan_is_nan_like_eager(special):
    # the case: oneDNN's relu post-op turned NaN into 0 where eager keeps NaN
    x = np.ones((1, 4, 5, 5), np.float32)
    x[0, 0, 2, 2] = special
    w = np.ones((4, 4, 3, 3), np.float32)
    X, W = fw.to_tensor(x), fw.to_tensor(w)
    got = call("fused_conv", X, W, None, None, padding=1, activation="relu").numpy()
    np.testing.assert_array_equal(got, F.relu(F.conv2d(X, W, padding=1)).numpy())


@pytest.mark.parametrize("name", ["relu", "gelu", "silu", "sigmoid", "tanh"])
def test_fused_elementwise_chain_keeps_eager_nonfinite_semantics(name):
    from fw.core.ir import TensorType, run, trace
    from fw.core.ir.passes import PassManager

    x = np.array([np.nan, np.inf, -np.inf, -1.0, 0.0, 2.0] * 700, np.float32)
    fn = getattr(fw, name, None) or getattr(F, name)

    def chain(t):
        return fn(t * 2.0 + 1.0)

    want = chain(fw.to_tensor(x)).numpy()
    p = trace(chain, [TensorType([x.size], "float32")])
    PassManager(["fuse_elementwise"]).run(p)
    assert "fused_elementwise" in str(p)
    got = run(p, fw.to_tensor(x)).numpy()
    # own C++ vector math: finite values within an ulp or two; NaN/Inf/0 exactly as eager
    special = ~np.isfinite(want) | ~np.isfinite(got) | (want == 0)
    np.testing.assert_array_equal(got[special], want[special])
    np.testing.assert_allclose(got[~special], want[~special], rtol=1e-6, atol=0)


@pytest.mark.parametrize("activation", ["gelu_erf", "silu"])
def test_weights_remembered_as_finite_are_scanned_again_after_an_in_place_write(activation):
    # a Predictor's weights are scanned once and remembered (kernels/cpu/fused.py); an
    # in-place write through fw (which bumps the version counter) makes the next call
    # scan them again, so a NaN written into the weights is not hidden by the epilogue
    from fw.core.ops import OPS
    from fw.core.tensor import bump_version, wrap

    kernel = OPS["fused_matmul"].kernels["cpu"]
    rng = np.random.default_rng(0)
    # x > 0, so a row of -inf weights makes the product -inf (not inf - inf = NaN),
    # which oneDNN's gelu/silu epilogues map to 0 where the unfused chain gives NaN
    x = np.abs(rng.standard_normal((4, 256))).astype(np.float32) + 0.1
    w = rng.standard_normal((256, 128)).astype(np.float32)  # above the remembered size
    assert np.isfinite(kernel(x, w, activation=activation)).all()
    w[3, :] = -np.inf
    bump_version(wrap(w))
    expected = _act(fw.matmul(fw.to_tensor(x), fw.to_tensor(w)), activation).numpy()
    assert not np.isfinite(expected).all()
    np.testing.assert_array_equal(kernel(x, w, activation=activation), expected)
    # a different array with the same contents is scanned on its own
    np.testing.assert_array_equal(kernel(x, w.copy(), activation=activation), expected)


def test_the_finiteness_memo_follows_the_version_counter():
    # the memo itself: remembered per array object, forgotten when fw's version
    # counter of its memory moves (the epilogues of this machine's oneDNN may not hide
    # a NaN at all, so the test above alone could pass without the memo being right)
    from fw.core.kernels.cpu.fused import _REMEMBER_FROM, _finite_operand, _known_finite
    from fw.core.tensor import bump_version, wrap

    w = np.ones(_REMEMBER_FROM, np.float32)
    assert _finite_operand(w) and id(w) in _known_finite
    w[7] = np.nan
    assert _finite_operand(w)  # a raw NumPy write is not seen (the documented limit)
    bump_version(wrap(w[10:]))  # a write through fw, here through a view of it
    assert not _finite_operand(w)
    small = np.ones(8, np.float32)
    assert _finite_operand(small) and id(small) not in _known_finite
    small[0] = np.inf
    assert not _finite_operand(small)
    key = id(w)
    del w
    assert key not in _known_finite  # entries die with their array


def test_the_last_checked_result_is_trusted_only_unchanged_and_within_a_run():
    # the previous fused call's result, passed as the next call's operand, is not scanned
    # again (fw.core.kernels.checked): only while fw's version counter of its memory
    # stands still, in the thread that checked it, and until a program run returns it
    import threading

    from fw.core.ir import TensorType, run, trace
    from fw.core.kernels import checked
    from fw.core.kernels.cpu.fused import _finite_operand
    from fw.core.ops import OPS
    from fw.core.tensor import bump_version, wrap

    kernel = OPS["fused_matmul"].kernels["cpu"]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = kernel(x, rng.standard_normal((64, 64)).astype(np.float32))
    assert checked.is_remembered(y)
    y[0, 0] = np.nan  # a raw write without a version bump is not seen: the documented limit
    assert _finite_operand(y)
    bump_version(wrap(y))  # a write through fw is
    assert not checked.is_remembered(y) and not _finite_operand(y)
    z = kernel(x, x)
    seen = []
    t = threading.Thread(target=lambda: seen.append(checked.is_remembered(z)))
    t.start()
    t.join()
    assert seen == [False] and checked.is_remembered(z)  # per thread
    # a run's outputs are forgotten when it returns (the caller may write into them)
    w = fw.to_tensor(rng.standard_normal((64, 64)).astype(np.float32))
    p = trace(lambda a: F.relu(fw.matmul(a, w)), [TensorType([-1, 64], "float32")])
    out = run(p, fw.to_tensor(x))
    assert not checked.is_remembered(getattr(out, "_data", out))
    # and a relu after a NaN written into the last result is still eager's NaN
    r = kernel(x, x)
    r[1, 2] = np.nan
    bump_version(wrap(r))
    got = kernel(r, x, activation="relu")
    want = F.relu(fw.matmul(fw.to_tensor(r), fw.to_tensor(x))).numpy()
    np.testing.assert_array_equal(got, want)
