"""vjp, jvp, jacobian and hessian."""

import numpy as np
import pytest

import fw
from fw.autograd import GradientError


def test_vjp_and_jvp_of_a_nonlinear_map():
    a = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])

    def f(x):
        return fw.tanh(fw.matmul(fw.to_tensor(a), x))

    xv = np.array([0.3, -0.2])
    jac = (1 - np.tanh(a @ xv) ** 2)[:, None] * a  # [3, 2]
    v_out = np.array([1.0, -2.0, 0.5])
    out, g = fw.autograd.vjp(f, fw.to_tensor(xv), fw.to_tensor(v_out))
    np.testing.assert_allclose(out.numpy(), np.tanh(a @ xv))
    np.testing.assert_allclose(g.numpy(), v_out @ jac)
    v_in = np.array([0.7, 1.1])
    out, t = fw.autograd.jvp(f, fw.to_tensor(xv), fw.to_tensor(v_in))
    np.testing.assert_allclose(t.numpy(), jac @ v_in)
    # defaults: ones
    _, t1 = fw.autograd.jvp(f, fw.to_tensor(xv))
    np.testing.assert_allclose(t1.numpy(), jac @ np.ones(2))


def test_vjp_jvp_several_inputs():
    def f(x, y):
        return x * y, x + y

    x, y = fw.to_tensor([1.0, 2.0]), fw.to_tensor([3.0, 4.0])
    (o1, o2), (gx, gy) = fw.autograd.vjp(f, [x, y])
    np.testing.assert_allclose(gx.numpy(), [4.0, 5.0])
    np.testing.assert_allclose(gy.numpy(), [2.0, 3.0])
    _, (t1, t2) = fw.autograd.jvp(f, [x, y], [fw.to_tensor([1.0, 0.0]), fw.to_tensor([0.0, 1.0])])
    np.testing.assert_allclose(t1.numpy(), [3.0, 2.0])
    np.testing.assert_allclose(t2.numpy(), [1.0, 1.0])


def test_jacobian_lazy_indexing_and_shapes():
    x = fw.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    y = x * x
    J = fw.autograd.jacobian(y, x)
    assert J.shape == [3, 3]
    np.testing.assert_allclose(J[:].numpy(), np.diag([2.0, 4.0, 6.0]))
    np.testing.assert_allclose(J[1].numpy(), [0.0, 4.0, 0.0])
    np.testing.assert_allclose(J[0:2, 2].numpy(), [0.0, 0.0])
    assert set(J._rows.cache) == {0, 1, 2}
    # a tuple of inputs gives a tuple of Jacobians
    x2 = fw.to_tensor([1.0, -1.0], stop_gradient=False)
    x3 = fw.to_tensor([2.0, 0.5], stop_gradient=False)
    J1, J2 = fw.autograd.jacobian(x2 * x3, (x2, x3))
    np.testing.assert_allclose(J1[:].numpy(), np.diag([2.0, 0.5]))
    np.testing.assert_allclose(J2[:].numpy(), np.diag([1.0, -1.0]))
    # scalar output
    s = (x * x).sum()
    Js = fw.autograd.jacobian(s, x)
    assert Js.shape == [3]
    np.testing.assert_allclose(Js[:].numpy(), [2.0, 4.0, 6.0])


def test_jacobian_of_a_function_and_batched():
    xs = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x = fw.to_tensor(xs, stop_gradient=False)
    J = fw.autograd.jacobian(lambda t: t * t * fw.to_tensor([1.0, 2.0]), x, batch_axis=0)
    assert J.shape == [3, 2, 2]
    full = J[:].numpy()
    for b in range(3):
        np.testing.assert_allclose(full[b], np.diag(2 * xs[b] * np.array([1.0, 2.0])))
    with pytest.raises(GradientError, match="batch_axis"):
        fw.autograd.jacobian(x * x, x, batch_axis=1)


def test_hessian_single_and_several_inputs():
    x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    H = fw.autograd.hessian((x * x * x).sum(), x)
    np.testing.assert_allclose(H[:].numpy(), np.diag([6.0, 12.0]))
    a = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    b = fw.to_tensor([3.0], stop_gradient=False)
    y = (a * a).sum() * b.sum()
    (haa, hab), (hba, hbb) = fw.autograd.hessian(y, (a, b))
    np.testing.assert_allclose(haa[:].numpy(), 2 * 3.0 * np.eye(2))
    np.testing.assert_allclose(hab[:].numpy(), [[2.0], [4.0]])
    np.testing.assert_allclose(hba[:].numpy(), [[2.0, 4.0]])
    np.testing.assert_allclose(hbb[:].numpy(), [[0.0]])
    with pytest.raises(GradientError, match="scalar"):
        fw.autograd.hessian(a * a, a)


def test_batched_hessian():
    xs = np.array([[1.0, 2.0], [0.5, -1.0]])
    x = fw.to_tensor(xs, stop_gradient=False)
    y = (x * x * x).sum(axis=1)  # [B]
    H = fw.autograd.hessian(y, x, batch_axis=0)
    assert H.shape == [2, 2, 2]
    full = H[:].numpy()
    for b in range(2):
        np.testing.assert_allclose(full[b], np.diag(6 * xs[b]))
