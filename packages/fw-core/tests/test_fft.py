"""fw.fft: every public transform against NumPy, Paddle's dtype rules, the
round-trip and Parseval identities on hypothesis-drawn signals, and errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir import TensorType, run, trace

F = fw.fft
T = fw.to_tensor
NORMS = ("backward", "ortho", "forward")


def _signal(seed, shape, cplx=False, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if cplx:
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype if not cplx else np.complex128)


def _close(got, want, tol=1e-10):
    got = got.numpy()
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


seeds = st.integers(0, 2**31 - 1)


# ---------------------------------------------------------------- against NumPy
@pytest.mark.parametrize("norm", NORMS)
def test_one_dimensional_transforms_match_numpy(norm):
    x = _signal(0, (3, 6))
    z = _signal(1, (3, 6), cplx=True)
    h = np.fft.rfft(x)
    for n in (None, 4, 9):
        _close(F.fft(T(z), n=n, norm=norm), np.fft.fft(z, n=n, norm=norm))
        _close(F.ifft(T(z), n=n, axis=0, norm=norm), np.fft.ifft(z, n=n, axis=0, norm=norm))
        _close(F.rfft(T(x), n=n, norm=norm), np.fft.rfft(x, n=n, norm=norm))
        _close(F.irfft(T(h), n=n, norm=norm), np.fft.irfft(h, n=n, norm=norm))
        _close(F.hfft(T(h), n=n, norm=norm), np.fft.hfft(h, n=n, norm=norm))
        _close(F.ihfft(T(x), n=n, norm=norm), np.fft.ihfft(x, n=n, norm=norm))
    _close(F.fft(T(x)), np.fft.fft(x))  # real input is made complex


@pytest.mark.parametrize("norm", NORMS)
def test_multi_dimensional_transforms_match_numpy(norm):
    x = _signal(2, (2, 4, 6))
    z = _signal(3, (2, 4, 6), cplx=True)
    h = np.fft.rfftn(x)
    _close(F.fft2(T(z), norm=norm), np.fft.fft2(z, norm=norm))
    _close(F.ifft2(T(z), s=(3, 5), axes=(0, 2), norm=norm),
           np.fft.ifft2(z, s=(3, 5), axes=(0, 2), norm=norm))
    _close(F.fftn(T(z), norm=norm), np.fft.fftn(z, norm=norm))
    _close(F.ifftn(T(z), s=(3, 7), norm=norm), np.fft.ifftn(z, s=(3, 7), axes=(-2, -1),
                                                             norm=norm))
    _close(F.rfft2(T(x), norm=norm), np.fft.rfft2(x, norm=norm))
    _close(F.rfftn(T(x), axes=(2, 0), norm=norm), np.fft.rfftn(x, axes=(2, 0), norm=norm))
    _close(F.irfft2(T(h), norm=norm), np.fft.irfft2(h, norm=norm))
    _close(F.irfftn(T(h), s=(2, 4, 7), norm=norm),
           np.fft.irfftn(h, s=(2, 4, 7), axes=(0, 1, 2), norm=norm))
    # hfftn is the forward transform of a Hermitian signal: irfftn of conj, rescaled
    inv_norm = {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]
    _close(F.hfftn(T(h), norm=norm), np.fft.irfftn(np.conj(h), norm=inv_norm))
    _close(F.hfft2(T(h), s=(4, 5), norm=norm),
           np.fft.irfftn(np.conj(h), s=(4, 5), axes=(-2, -1), norm=inv_norm))
    _close(F.ihfftn(T(x), norm=norm), np.conj(np.fft.rfftn(x, norm=inv_norm)))
    _close(F.ihfft2(T(x), norm=norm), np.conj(np.fft.rfft2(x, norm=inv_norm)))


def test_dtypes_follow_paddle():
    x32 = T(_signal(4, (8,), dtype=np.float32))
    assert F.fft(x32).dtype == fw.complex64
    assert F.rfft(x32).dtype == fw.complex64
    assert F.irfft(F.rfft(x32)).dtype == fw.float32
    assert F.hfft(F.rfft(x32)).dtype == fw.float32
    assert F.fft(T(_signal(4, (8,)))).dtype == fw.complex128
    assert F.irfft(F.rfft(T(_signal(4, (8,))))).dtype == fw.float64
    assert F.fft(T([1, 2, 3])).dtype == fw.complex64  # integers use the default float dtype
    assert F.rfft(T([1, 2, 3])).dtype == fw.complex64
    assert F.fftfreq(4).dtype == fw.float32 and F.rfftfreq(4, dtype="float64").dtype == fw.float64


def test_frequencies_and_shifts():
    _close(F.fftfreq(5, d=0.3), np.fft.fftfreq(5, 0.3).astype(np.float32), 1e-6)
    _close(F.rfftfreq(8, d=2.0), np.fft.rfftfreq(8, 2.0).astype(np.float32), 1e-6)
    x = _signal(5, (3, 4, 5))
    _close(F.fftshift(T(x)), np.fft.fftshift(x))
    _close(F.fftshift(T(x), axes=[1]), np.fft.fftshift(x, axes=1))
    _close(F.ifftshift(T(x), axes=(0, -1)), np.fft.ifftshift(x, axes=(0, -1)))
    _close(F.ifftshift(F.fftshift(T(x))), x)


# ---------------------------------------------------------------- identities
@given(seeds, st.integers(1, 9), st.sampled_from(NORMS), st.booleans())
def test_ifft_inverts_fft(seed, n, norm, cplx):
    x = _signal(seed, (2, n), cplx=cplx)
    _close(F.ifft(F.fft(T(x), norm=norm), norm=norm), x.astype(np.complex128))
    _close(F.ifftn(F.fftn(T(x), norm=norm), norm=norm), x.astype(np.complex128))


@given(seeds, st.integers(1, 9), st.sampled_from(NORMS))
def test_irfft_inverts_rfft_for_even_and_odd_n(seed, n, norm):
    x = _signal(seed, (3, n))
    _close(F.irfft(F.rfft(T(x), norm=norm), n=n, norm=norm), x)
    _close(F.hfft(F.ihfft(T(x), norm=norm), n=n, norm=norm), x)
    y = _signal(seed, (n, 4))
    _close(F.irfftn(F.rfftn(T(y), norm=norm), s=(n, 4), norm=norm), y)


@given(seeds, st.integers(1, 9), st.booleans())
def test_parseval_with_ortho(seed, n, cplx):
    x = _signal(seed, (n, 3), cplx=cplx)
    spec = F.fft2(T(x), norm="ortho").numpy()
    np.testing.assert_allclose(np.sum(np.abs(spec) ** 2), np.sum(np.abs(x) ** 2), rtol=1e-10)


# ---------------------------------------------------------------- errors
def test_bad_input_errors_name_the_function():
    z = T(_signal(6, (4,), cplx=True))
    with pytest.raises(InvalidTypeError, match="^fft.rfft: x must be real"):
        F.rfft(z)
    with pytest.raises(InvalidArgumentError, match="^fft.fft: 'norm' must be"):
        F.fft(z, norm="none")
    with pytest.raises(InvalidArgumentError, match="^fft.ifft: 'n' must be positive"):
        F.ifft(z, n=0)
    with pytest.raises(InvalidArgumentError, match="^fft.fft2: 'axes' must name 2 axes"):
        F.fft2(z, axes=(0,))
    with pytest.raises(InvalidArgumentError, match="repeats an axis"):
        F.fftn(T(np.ones((2, 2))), axes=(0, 0))
    with pytest.raises(InvalidArgumentError, match="output length of 0"):
        F.irfft(T(np.ones(1, np.complex64)))
    with pytest.raises(InvalidArgumentError, match="^fft.fftn: 's' .* must have the same length"):
        F.fftn(z, s=(2, 2), axes=(0,))


@pytest.mark.parametrize("rows", [4, -1])
def test_transforms_build_programs(rows):
    """The wrappers (dtype casts, n/s/axes defaults) trace into programs, also
    with a dynamic dimension, and the executor reproduces the eager result."""
    x = _signal(7, (4, 6)).astype(np.float32)

    def fn(v):
        return F.irfft2(F.rfft2(v), s=(4, 6)), F.ihfft(v), F.fftshift(F.fft(v, n=8))

    prog = trace(fn, [TensorType([rows, 6], "float32")])
    for got, want in zip(run(prog, T(x)), fn(T(x))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(fn(T(x))[0].numpy(), x, atol=1e-5)
