"""Average pooling's divisor, forward and backward, where windows hang over the
padding (Paddle's ``exclusive``: divide by the valid elements, else by the window
size) and where ``ceil_mode`` adds windows that reach past the input. Checked
against a plain-loop oracle on every window, including windows with a single valid
element and windows of padding alone (fw: 0)."""

import itertools

import numpy as np
import pytest

import fw


def _oracle(x, k, s, p, exclusive, ceil_mode):
    n, c, h, w = x.shape

    def out_size(i):
        span = i + 2 * p - k
        # Paddle's rule: no PyTorch-style dropping of a last window that starts in the
        # padding, so ceil_mode can add a window of padding alone
        return (-(-span // s) if ceil_mode else span // s) + 1

    oh, ow = out_size(h), out_size(w)
    out = np.zeros((n, c, oh, ow))
    div = np.zeros((oh, ow))
    cells = {}
    for i, j in itertools.product(range(oh), range(ow)):
        rows = [r for r in range(i * s - p, i * s - p + k)]
        cols = [q for q in range(j * s - p, j * s - p + k)]
        valid = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < w]
        # the window size Paddle divides by without `exclusive`: clipped to the padded input
        inside = [(r, q) for r in rows for q in cols if -p <= r < h + p and -p <= q < w + p]
        d = len(valid) if exclusive else len(inside)
        div[i, j] = d
        cells[i, j] = valid
        if valid and d:
            out[:, :, i, j] = sum(x[:, :, r, q] for r, q in valid) / d
    return out, div, cells


@pytest.mark.parametrize("h,w,k,s,p", [(3, 3, 2, 2, 1), (5, 4, 3, 2, 1), (4, 4, 2, 3, 1),
                                       (2, 3, 3, 1, 1)])
@pytest.mark.parametrize("exclusive", [True, False])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_avg_pool2d_divisors_forward_and_backward(h, w, k, s, p, exclusive, ceil_mode):
    rng = np.random.default_rng(h * 100 + w * 10 + k)
    x = rng.standard_normal((1, 2, h, w))
    want, div, cells = _oracle(x, k, s, p, exclusive, ceil_mode)
    xt = fw.to_tensor(x, stop_gradient=False)
    out = fw.nn.functional.avg_pool2d(xt, k, s, p, ceil_mode=ceil_mode, exclusive=exclusive)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(want.shape)
    (out * fw.to_tensor(g)).sum().backward()
    grad = np.zeros_like(x)
    for (i, j), valid in cells.items():
        for r, q in valid:
            grad[:, :, r, q] += g[:, :, i, j] / div[i, j]
    np.testing.assert_allclose(xt.grad.numpy(), grad, rtol=1e-12, atol=1e-12)
