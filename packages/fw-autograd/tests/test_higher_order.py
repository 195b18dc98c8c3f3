"""create_graph=True records the backward, so derivatives of any order work."""

import numpy as np

import fw


def nth_derivative(f, x, n):
    """[f'(x), f''(x), ...] up to order n, by repeated fw.grad."""
    y = f(x)
    out = []
    for _ in range(n):
        (y,) = fw.grad(y.sum(), x, create_graph=True)
        out.append(y)
    return out


def test_sin_to_fourth_order():
    xs = np.linspace(-2, 2, 7)
    x = fw.to_tensor(xs, stop_gradient=False)
    d1, d2, d3, d4 = nth_derivative(fw.sin, x, 4)
    np.testing.assert_allclose(d1.numpy(), np.cos(xs), atol=1e-12)
    np.testing.assert_allclose(d2.numpy(), -np.sin(xs), atol=1e-12)
    np.testing.assert_allclose(d3.numpy(), -np.cos(xs), atol=1e-12)
    np.testing.assert_allclose(d4.numpy(), np.sin(xs), atol=1e-12)


def test_x_to_the_fourth():
    xs = np.array([-1.5, 0.5, 2.0])
    x = fw.to_tensor(xs, stop_gradient=False)
    d1, d2, d3, d4, d5 = nth_derivative(lambda t: t ** 4, x, 5)
    np.testing.assert_allclose(d1.numpy(), 4 * xs ** 3)
    np.testing.assert_allclose(d2.numpy(), 12 * xs ** 2)
    np.testing.assert_allclose(d3.numpy(), 24 * xs)
    np.testing.assert_allclose(d4.numpy(), np.full(3, 24.0))
    np.testing.assert_allclose(d5.numpy(), np.zeros(3))


def test_tiny_mlp_third_derivative_vs_finite_differences():
    rng = np.random.default_rng(0)
    w1 = fw.to_tensor(rng.standard_normal((1, 6)), stop_gradient=False)
    b1 = fw.to_tensor(rng.standard_normal(6), stop_gradient=False)
    w2 = fw.to_tensor(rng.standard_normal((6, 1)), stop_gradient=False)

    def mlp(t):
        return fw.matmul(fw.tanh(fw.matmul(t, w1) + b1), w2)

    xs = np.array([[0.3], [-0.7]])
    x = fw.to_tensor(xs, stop_gradient=False)
    d1, d2, d3 = nth_derivative(mlp, x, 3)

    def d2_value(v):
        t = fw.to_tensor(v, stop_gradient=False)
        return nth_derivative(mlp, t, 2)[1].numpy()

    eps = 1e-4
    fd3 = (d2_value(xs + eps) - d2_value(xs - eps)) / (2 * eps)
    np.testing.assert_allclose(d3.numpy(), fd3, rtol=1e-6, atol=1e-8)
    # and the third derivative still reaches the weights
    (gw,) = fw.grad(d3.sum(), w1)
    assert gw.shape == [1, 6] and np.isfinite(gw.numpy()).all()


def test_grad_of_grad_with_respect_to_parameters():
    # d/dw of ||d f / d x||^2 (the gradient-penalty pattern)
    w = fw.to_tensor([1.5, -0.5], dtype="float64", stop_gradient=False)
    x = fw.to_tensor([0.2, 0.4], dtype="float64", stop_gradient=False)
    y = (fw.tanh(x * w)).sum()
    (gx,) = fw.grad(y, x, create_graph=True)
    penalty = (gx * gx).sum()
    penalty.backward()
    wv, xv = np.array([1.5, -0.5]), np.array([0.2, 0.4])
    t = np.tanh(xv * wv)
    # gx = w (1 - t^2); d/dw gx^2 = 2 gx (1 - t^2 - 2 w t (1 - t^2) x)
    gxv = wv * (1 - t * t)
    want = 2 * gxv * ((1 - t * t) - 2 * wv * t * (1 - t * t) * xv)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-12)
