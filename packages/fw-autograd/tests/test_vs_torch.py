"""Differential tests: gradients agree with PyTorch's for a broad sample of ops
(skipped when PyTorch is not installed)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fw  # noqa: E402
from fw.core.ops import call  # noqa: E402

RNG = np.random.default_rng(42)


def rand(*shape, lo=-2.0, hi=2.0, spd=False, cplx=False):
    a = RNG.uniform(lo, hi, size=shape)
    if cplx:
        a = a + 1j * RNG.uniform(lo, hi, size=shape)
    if spd:
        a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    return a


def compare(fw_fn, torch_fn, arrays, rtol=1e-7, atol=1e-9, grad_idx=None):
    """grad of sum(out * v) (real part for complex outputs) in fw and in PyTorch."""
    grad_idx = range(len(arrays)) if grad_idx is None else grad_idx
    fx = [fw.to_tensor(a, stop_gradient=i not in grad_idx) for i, a in enumerate(arrays)]
    tx = [torch.tensor(a, requires_grad=i in grad_idx) for i, a in enumerate(arrays)]
    fo = fw_fn(*fx)
    to = torch_fn(*tx)
    fo = fo if isinstance(fo, (tuple, list)) else [fo]
    to = to if isinstance(to, (tuple, list)) else [to]
    floss = None
    tloss = 0
    for f, t in zip(fo, to):
        if f is None:
            continue
        v = RNG.standard_normal(tuple(t.shape))
        np.testing.assert_allclose(f.numpy(), t.detach().resolve_conj().numpy(), rtol=1e-7,
                                   atol=1e-9,
                                   err_msg="forward")
        if t.is_complex():
            term = fw.sum(fw.real(f) * fw.to_tensor(v))
            tloss = tloss + (t.real * torch.tensor(v)).sum()
        else:
            term = fw.sum(f * fw.to_tensor(v))
            tloss = tloss + (t * torch.tensor(v)).sum()
        floss = term if floss is None else floss + term
    tloss.backward()
    fg = fw.grad(floss, [fx[i] for i in grad_idx], allow_unused=True)
    for i, g in zip(grad_idx, fg):
        tg = tx[i].grad
        if tg is None:
            assert g is None or not np.any(g.numpy())
            continue
        np.testing.assert_allclose(g.numpy(), tg.resolve_conj().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i}")


UNARY = [
    ("exp", fw.exp, torch.exp, {}), ("log", fw.log, torch.log, {"lo": 0.2}),
    ("sqrt", fw.sqrt, torch.sqrt, {"lo": 0.2}), ("sin", fw.sin, torch.sin, {}),
    ("tanh", fw.tanh, torch.tanh, {}), ("sigmoid", fw.sigmoid, torch.sigmoid, {}),
    ("asin", fw.asin, torch.asin, {"lo": -0.9, "hi": 0.9}),
    ("erf", fw.erf, torch.erf, {}), ("lgamma", fw.lgamma, torch.lgamma, {"lo": 0.5}),
    ("digamma", fw.digamma, torch.digamma, {"lo": 0.5}),
    ("expm1", fw.expm1, torch.expm1, {}), ("log1p", fw.log1p, torch.log1p, {"lo": -0.5}),
    ("rsqrt", fw.rsqrt, torch.rsqrt, {"lo": 0.2}), ("abs", fw.abs, torch.abs, {}),
    ("atanh", fw.atanh, torch.atanh, {"lo": -0.9, "hi": 0.9}),
    ("relu", lambda x: call("relu", x), torch.relu, {}),
    ("gelu", lambda x: call("gelu", x), torch.nn.functional.gelu, {}),
    ("gelu_tanh", lambda x: call("gelu", x, approximate=True),
     lambda x: torch.nn.functional.gelu(x, approximate="tanh"), {}),
    ("silu", lambda x: call("silu", x), torch.nn.functional.silu, {}),
    ("mish", lambda x: call("mish", x), torch.nn.functional.mish, {}),
    ("softplus", lambda x: call("softplus", x), torch.nn.functional.softplus, {}),
    ("elu", lambda x: call("elu", x), torch.nn.functional.elu, {}),
    ("selu", lambda x: call("selu", x), torch.nn.functional.selu, {}),
    ("hardswish", lambda x: call("hardswish", x), torch.nn.functional.hardswish, {}),
    ("log_sigmoid", lambda x: call("log_sigmoid", x), torch.nn.functional.logsigmoid, {}),
    ("softmax", lambda x: call("softmax", x, axis=-1), lambda x: torch.softmax(x, -1), {}),
    ("log_softmax", lambda x: call("log_softmax", x, axis=0),
     lambda x: torch.log_softmax(x, 0), {}),
]


@pytest.mark.parametrize("name,f,t,dom", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, f, t, dom):
    compare(f, t, [rand(3, 4, **dom)])


BINARY = [
    ("add", fw.add, torch.add), ("mul", fw.multiply, torch.mul),
    ("div", fw.divide, torch.div), ("pow", fw.pow, torch.pow),
    ("atan2", fw.atan2, torch.atan2), ("hypot", fw.hypot, torch.hypot),
    ("maximum", fw.maximum, torch.maximum), ("logaddexp", fw.logaddexp, torch.logaddexp),
]


@pytest.mark.parametrize("name,f,t", BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcast(name, f, t):
    compare(f, t, [rand(3, 4, lo=0.3), rand(1, 4, lo=0.3)])


@pytest.mark.parametrize("name,f,t", [
    ("sum", lambda x: fw.sum(x, axis=1), lambda x: x.sum(1)),
    ("mean", lambda x: fw.mean(x, axis=[0, 2], keepdim=True),
     lambda x: x.mean((0, 2), keepdim=True)),
    ("var", lambda x: fw.var(x, axis=1), lambda x: x.var(1)),
    ("std", lambda x: fw.std(x, axis=2, unbiased=False), lambda x: x.std(2, unbiased=False)),
    ("prod", lambda x: fw.prod(x, axis=1), lambda x: x.prod(1)),
    ("logsumexp", lambda x: fw.logsumexp(x, axis=-1), lambda x: torch.logsumexp(x, -1)),
    ("amax", lambda x: fw.amax(x, axis=1), lambda x: x.amax(1)),
    ("cumsum", lambda x: fw.cumsum(x, axis=1), lambda x: x.cumsum(1)),
    ("cumprod", lambda x: fw.cumprod(x, dim=2), lambda x: x.cumprod(2)),
    ("norm", lambda x: fw.linalg.vector_norm(x, 3.0, axis=1),
     lambda x: torch.linalg.vector_norm(x, 3.0, dim=1)),
    ("topk", lambda x: fw.topk(x, 2, axis=1)[0], lambda x: x.topk(2, 1)[0]),
    ("sort", lambda x: fw.sort(x, axis=2), lambda x: x.sort(2)[0]),
])
def test_reductions_and_scans(name, f, t):
    compare(f, t, [rand(2, 3, 4)])


@pytest.mark.parametrize("name,f,t,arrays", [
    ("matmul", fw.matmul, torch.matmul, lambda: [rand(2, 3, 4), rand(4, 5)]),
    ("inv", fw.linalg.inv, torch.linalg.inv, lambda: [rand(3, 3, spd=True)]),
    ("det", fw.linalg.det, torch.linalg.det, lambda: [rand(2, 3, 3)]),
    ("solve", fw.linalg.solve, torch.linalg.solve, lambda: [rand(3, 3, spd=True), rand(3, 2)]),
    ("cholesky", fw.linalg.cholesky, torch.linalg.cholesky, lambda: [rand(3, 3, spd=True)]),
    ("qr", lambda x: fw.linalg.qr(x), lambda x: torch.linalg.qr(x), lambda: [rand(4, 3)]),
    ("svdvals", lambda x: fw.linalg.svd(x)[1], lambda x: torch.linalg.svdvals(x),
     lambda: [rand(4, 3)]),
    ("eigvalsh", lambda x: fw.linalg.eigh(x)[0], lambda x: torch.linalg.eigvalsh(x),
     lambda: [rand(3, 3, spd=True)]),
    ("pinv", fw.linalg.pinv, torch.linalg.pinv, lambda: [rand(4, 3)]),
    ("matrix_exp", fw.linalg.matrix_exp, torch.linalg.matrix_exp,
     lambda: [rand(3, 3, lo=-0.5, hi=0.5)]),
    ("cdist", fw.cdist, torch.cdist, lambda: [rand(3, 4), rand(5, 4)]),
    ("einsum", lambda a, b: fw.einsum("ij,jk->ik", a, b),
     lambda a, b: torch.einsum("ij,jk->ik", a, b), lambda: [rand(2, 3), rand(3, 4)]),
    ("complex_matmul", fw.matmul, torch.matmul, lambda: [rand(2, 3, cplx=True),
                                                         rand(3, 2, cplx=True)]),
])
def test_linalg(name, f, t, arrays):
    compare(f, t, arrays(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,f,t,arrays", [
    ("rfft", lambda x: fw.fft.rfft(x), lambda x: torch.fft.rfft(x), lambda: [rand(3, 8)]),
    ("irfft_odd", lambda x: fw.fft.irfft(x, n=7), lambda x: torch.fft.irfft(x, n=7),
     lambda: [rand(2, 4, cplx=True)]),
    ("irfft_even", lambda x: fw.fft.irfft(x), lambda x: torch.fft.irfft(x),
     lambda: [rand(2, 5, cplx=True)]),
    ("fft2_ortho", lambda x: fw.fft.fft2(x, norm="ortho"),
     lambda x: torch.fft.fft2(x, norm="ortho"), lambda: [rand(3, 4, cplx=True)]),
    ("hfft", lambda x: fw.fft.hfft(x, n=6), lambda x: torch.fft.hfft(x, n=6),
     lambda: [rand(4, cplx=True)]),
    ("ihfft", lambda x: fw.fft.ihfft(x), lambda x: torch.fft.ihfft(x), lambda: [rand(6)]),
])
def test_fft(name, f, t, arrays):
    compare(f, t, arrays(), rtol=1e-6, atol=1e-8)


def test_conv2d_and_pools():
    x, w, b = rand(2, 3, 7, 6), rand(4, 3, 3, 2), rand(4)
    compare(lambda x, w, b: call("conv", x, w, b, stride=2, padding=1, dilation=1),
            lambda x, w, b: torch.nn.functional.conv2d(x, w, b, stride=2, padding=1),
            [x, w, b], rtol=1e-6)
    compare(lambda x, w: call("conv", x, w, None, groups=3, padding=[1, 0]),
            lambda x, w: torch.nn.functional.conv2d(x, w, groups=3, padding=(1, 0)),
            [x, rand(6, 1, 2, 2)], rtol=1e-6)
    compare(lambda x, w: call("conv_transpose", x, w, None, stride=2, padding=1),
            lambda x, w: torch.nn.functional.conv_transpose2d(x, w, stride=2, padding=1),
            [x, rand(3, 2, 3, 3)], rtol=1e-6)
    compare(lambda x: call("max_pool", x, kernel_size=2, stride=2),
            lambda x: torch.nn.functional.max_pool2d(x, 2, 2), [x])
    compare(lambda x: call("avg_pool", x, kernel_size=3, stride=2, padding=1),
            lambda x: torch.nn.functional.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
            [x])
    compare(lambda x: call("adaptive_avg_pool", x, output_size=[3, 2]),
            lambda x: torch.nn.functional.adaptive_avg_pool2d(x, (3, 2)), [x])


def test_norms_losses_and_layers():
    x = rand(4, 5)
    compare(lambda x, w, b: call("layer_norm", x, w, b, begin_norm_axis=1)[0],
            lambda x, w, b: torch.nn.functional.layer_norm(x, (5,), w, b), [x, rand(5), rand(5)])
    xb = rand(4, 3, 2)
    compare(lambda x, w, b: call("batch_norm", x, fw.zeros([3], dtype="float64"),
                                 fw.ones([3], dtype="float64"), w, b, training=True)[0],
            lambda x, w, b: torch.nn.functional.batch_norm(x, torch.zeros(3, dtype=torch.float64),
                                                           torch.ones(3, dtype=torch.float64),
                                                           w, b, training=True),
            [xb, rand(3), rand(3)])
    lab = np.array([1, 0, 4, 2])
    compare(lambda x: call("cross_entropy_with_softmax", x, fw.to_tensor(lab))[0],
            lambda x: torch.nn.functional.cross_entropy(x, torch.tensor(lab)), [x])
    ids = np.array([[0, 2], [3, 3]])
    compare(lambda w: call("embedding", fw.to_tensor(ids), w),
            lambda w: torch.nn.functional.embedding(torch.tensor(ids), w), [rand(4, 3)])
    xi = rand(1, 2, 3, 4)
    compare(lambda x: call("interpolate", x, size=[5, 7], mode="bilinear", align_corners=True),
            lambda x: torch.nn.functional.interpolate(x, size=(5, 7), mode="bilinear",
                                                      align_corners=True), [xi])
    q, k, v = rand(2, 5, 2, 4), rand(2, 6, 2, 4), rand(2, 6, 2, 4)
    compare(lambda q, k, v: call("scaled_dot_product_attention", q, k, v),
            lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2),
            [q, k, v], rtol=1e-6)
