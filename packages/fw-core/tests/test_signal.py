"""fw.signal.stft / istft against a NumPy reference (framing, windowing, np.fft), the
round trip, gradients (finite differences) and argument errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
import fw.signal as S
from fw.core.errors import InvalidArgumentError, InvalidTypeError


def np_stft(x, n_fft, hop, win, center, pad_mode, normalized, onesided):
    x = np.atleast_2d(x)
    if center:
        p = n_fft // 2
        x = np.pad(x, ((0, 0), (p, p)), mode="reflect" if pad_mode == "reflect" else "constant")
    T = 1 + (x.shape[1] - n_fft) // hop
    fr = np.stack([x[:, t * hop:t * hop + n_fft] * win for t in range(T)], 1)
    norm = "ortho" if normalized else "backward"
    y = np.fft.rfft(fr, axis=-1, norm=norm) if onesided else np.fft.fft(fr, axis=-1, norm=norm)
    return y.transpose(0, 2, 1)


def _window(n_fft, win_length):
    w = np.hanning(win_length + 2)[1:-1]
    left = (n_fft - win_length) // 2
    return w, np.pad(w, (left, n_fft - win_length - left))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(n_fft=st.sampled_from([4, 8, 15, 16]), hop_div=st.sampled_from([1, 2, 4]),
       win_cut=st.sampled_from([0, 1, 3]), center=st.booleans(),
       pad_mode=st.sampled_from(["reflect", "constant"]), normalized=st.booleans(),
       onesided=st.booleans(), batch=st.booleans(), n=st.integers(20, 40))
def test_stft_matches_numpy(n_fft, hop_div, win_cut, center, pad_mode, normalized, onesided,
                            batch, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, n) if batch else n)
    hop = max(1, n_fft // hop_div)
    wl = max(1, n_fft - win_cut)
    w, wpad = _window(n_fft, wl)
    got = S.stft(fw.to_tensor(x), n_fft, hop_length=hop, win_length=wl,
                 window=fw.to_tensor(w), center=center, pad_mode=pad_mode,
                 normalized=normalized, onesided=onesided)
    want = np_stft(x, n_fft, hop, wpad, center, pad_mode, normalized, onesided)
    if not batch:
        want = want[0]
    assert got.dtype == fw.complex128
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(n_fft=st.sampled_from([8, 9, 16]), hop_div=st.sampled_from([2, 4]),
       center=st.booleans(), normalized=st.booleans(), onesided=st.booleans(),
       n=st.integers(40, 70))
def test_istft_round_trip(n_fft, hop_div, center, normalized, onesided, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, n))
    hop = n_fft // hop_div
    w = fw.to_tensor(np.hanning(n_fft + 2)[1:-1])
    spec = S.stft(fw.to_tensor(x), n_fft, hop_length=hop, window=w, center=center,
                  normalized=normalized, onesided=onesided)
    y = S.istft(spec, n_fft, hop_length=hop, window=w, center=center, normalized=normalized,
                onesided=onesided, length=None if center else None)
    m = y.shape[-1]
    start = 0
    # without centring the first/last n_fft - hop samples see fewer frames but the
    # window envelope divides them out exactly; compare the samples recovered
    np.testing.assert_allclose(y.numpy(), x[:, start:start + m], rtol=1e-9, atol=1e-9)
    z = S.istft(spec, n_fft, hop_length=hop, window=w, center=center, normalized=normalized,
                onesided=onesided, length=n - 3)
    assert z.shape == [2, n - 3]


def test_istft_complex_and_float32():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(np.complex64)
    spec = S.stft(fw.to_tensor(x), 8, onesided=False)
    y = S.istft(spec, 8, onesided=False, return_complex=True, length=32)
    assert y.dtype == fw.complex64
    np.testing.assert_allclose(y.numpy(), x, atol=1e-5)
    r = rng.standard_normal(32).astype(np.float32)
    y = S.istft(S.stft(fw.to_tensor(r), 8), 8, length=32)
    assert y.dtype == fw.float32
    np.testing.assert_allclose(y.numpy(), r, atol=1e-5)


def test_stft_istft_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal(24)
    w0 = np.hanning(10)[1:-1]
    x = fw.to_tensor(x0, stop_gradient=False)
    w = fw.to_tensor(w0, stop_gradient=False)
    f = lambda x, w: (S.stft(x, 8, hop_length=2, window=w).abs() ** 2).sum()  # noqa: E731
    f(x, w).backward()
    for arr, grad, name in ((x0, x.grad, "x"), (w0, w.grad, "window")):
        fd = np.zeros_like(arr)
        for i in range(arr.size):
            e = np.zeros_like(arr)
            e[i] = 1e-6
            args = {"x": x0, "window": w0}
            hi = dict(args, **{name: arr + e})
            lo = dict(args, **{name: arr - e})
            fd[i] = (float(f(fw.to_tensor(hi["x"]), fw.to_tensor(hi["window"])))
                     - float(f(fw.to_tensor(lo["x"]), fw.to_tensor(lo["window"])))) / 2e-6
        np.testing.assert_allclose(grad.numpy(), fd, rtol=1e-5, atol=1e-6, err_msg=name)
    spec = S.stft(fw.to_tensor(x0), 8, hop_length=2, window=fw.to_tensor(w0))
    s = fw.to_tensor(spec.numpy(), stop_gradient=False)
    S.istft(s, 8, hop_length=2, window=fw.to_tensor(w0)).sum().backward()
    assert s.grad.shape == list(spec.shape) and np.isfinite(s.grad.numpy()).all()


def test_errors():
    x = fw.ones([16])
    with pytest.raises(InvalidArgumentError, match="n_fft"):
        S.stft(x, 32)
    with pytest.raises(InvalidArgumentError, match="win_length"):
        S.stft(x, 8, win_length=9)
    with pytest.raises(InvalidArgumentError, match="1-D window"):
        S.stft(x, 8, window=fw.ones([7]))
    with pytest.raises(InvalidArgumentError, match="pad_mode"):
        S.stft(x, 8, pad_mode="edge")
    with pytest.raises(InvalidArgumentError, match="1-D or 2-D"):
        S.stft(fw.ones([2, 2, 16]), 8)
    with pytest.raises(InvalidArgumentError, match="onesided"):
        S.stft(fw.ones([16], dtype="complex64"), 8, onesided=True)
    spec = S.stft(x, 8)
    with pytest.raises(InvalidArgumentError, match="frequencies"):
        S.istft(spec, 8, onesided=False)
    with pytest.raises(InvalidTypeError, match="complex"):
        S.istft(fw.ones([5, 3]), 8)
    with pytest.raises(ValueError, match="NOLA"):
        S.istft(spec, 8, window=fw.zeros([8]))


def test_docstring_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest

    result = doctest.testmod(S, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
