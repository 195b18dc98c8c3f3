"""Complex autodiff (the conjugate convention of PyTorch and Paddle) and the
gradients of the FFTs, including the one-sided transforms' edge bins."""

import numpy as np
import pytest

import fw
from fw.autograd.testing import GradCase, check_vjp, prepare
from fw.core.testing import Sample


def _fd_complex(loss, zv, eps=1e-6):
    """dL/dRe(z) + i dL/dIm(z) by central differences."""
    g = np.zeros(zv.shape, dtype=np.complex128)
    for idx in np.ndindex(zv.shape):
        for part, unit in ((1.0, 1.0), (1j, 1j)):
            d = np.zeros(zv.shape, dtype=np.complex128)
            d[idx] = unit * eps
            df = (loss(zv + d) - loss(zv - d)) / (2 * eps)
            g[idx] += df * part
    return g


@pytest.mark.parametrize("name,f,fnp", [
    ("abs2", lambda z: (z * fw.conj(z)).real().sum(), lambda z: np.sum(np.abs(z) ** 2)),
    ("re_cube", lambda z: (z * z * z).real().sum(), lambda z: np.sum((z ** 3).real)),
    ("abs", lambda z: fw.abs(z).sum(), lambda z: np.sum(np.abs(z))),
    ("im_exp", lambda z: fw.exp(z).imag().sum(), lambda z: np.sum(np.exp(z).imag)),
    ("angle", lambda z: fw.angle(z).sum(), lambda z: np.sum(np.angle(z))),
    ("log_sq", lambda z: fw.abs(fw.log(z) * z).sum(), lambda z: np.sum(np.abs(np.log(z) * z))),
    ("matmul", lambda z: fw.abs(fw.matmul(z, fw.conj(z))).sum(),
     lambda z: np.sum(np.abs(z @ np.conj(z)))),
])
def test_complex_gradient_is_conjugate_wirtinger(name, f, fnp):
    rng = np.random.default_rng(1)
    zv = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    z = fw.to_tensor(zv, stop_gradient=False)
    f(z).backward()
    np.testing.assert_allclose(z.grad.numpy(), _fd_complex(fnp, zv), rtol=1e-6, atol=1e-8)


def test_abs_squared_gradient_is_2z():
    # PyTorch's documented example: d|z|^2 -> 2z
    z = fw.to_tensor([1 + 1j], stop_gradient=False)
    (fw.abs(z) ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2 + 2j])


def test_real_parameter_through_complex_ops_gets_real_gradient():
    w = fw.to_tensor([0.5, 1.5], dtype="float64", stop_gradient=False)
    z = fw.complex(w, w * 2.0) * fw.to_tensor([1 - 2j, 3j])
    fw.abs(z).sum().backward()
    assert w.grad.dtype == fw.float64

    def loss(wv):
        return np.sum(np.abs((wv + 2j * wv) * np.array([1 - 2j, 3j])))

    e = 1e-6
    fd = [(loss(np.array([0.5, 1.5]) + e * u) - loss(np.array([0.5, 1.5]) - e * u)) / (2 * e)
          for u in np.eye(2)]
    np.testing.assert_allclose(w.grad.numpy(), fd, rtol=1e-7)


def _check(op, args, attrs, seed=0):
    case = GradCase(op, Sample(args, attrs))
    us, vs = prepare(case, np.random.default_rng(seed))
    assert check_vjp(case, us, vs) is None


RNG = np.random.default_rng(7)
REAL = RNG.standard_normal((3, 8))
CPLX = RNG.standard_normal((3, 5)) + 1j * RNG.standard_normal((3, 5))


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("s", [None, (6,), (11,)])
def test_fft_c2c(norm, forward, s):
    _check("fft_c2c", [CPLX], {"axes": (-1,), "norm": norm, "forward": forward, "s": s})


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("s", [None, (5,), (8,), (11,)])
def test_fft_r2c_one_sided(norm, forward, s):
    _check("fft_r2c", [REAL], {"axes": (-1,), "norm": norm, "forward": forward, "s": s})


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("s", [None, (7,), (8,), (12,), (3,)])
def test_fft_c2r_edge_bins(norm, forward, s):
    # odd and even output lengths, cropping and zero-padding of the half spectrum
    _check("fft_c2r", [CPLX], {"axes": (-1,), "norm": norm, "forward": forward, "s": s})


def test_fft_multi_axis_and_public_functions():
    _check("fft_c2c", [CPLX.reshape(3, 5)], {"axes": (0, 1), "norm": "ortho", "forward": True,
                                             "s": (4, 6)})
    _check("fft_r2c", [REAL], {"axes": (0, 1), "norm": "backward", "forward": True, "s": None})
    _check("fft_c2r", [CPLX], {"axes": (0, 1), "norm": "backward", "forward": False,
                               "s": (3, 8)})
    x = fw.to_tensor(REAL[0], stop_gradient=False)
    y = fw.fft.irfft(fw.fft.rfft(x), n=8)  # the round trip is the identity
    (y * fw.to_tensor(np.arange(8.0))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.arange(8.0), atol=1e-12)


def test_fftshift_gradient():
    _check("fftshift", [REAL], {"axes": None, "inverse": False})
    _check("fftshift", [REAL], {"axes": (1,), "inverse": True})
