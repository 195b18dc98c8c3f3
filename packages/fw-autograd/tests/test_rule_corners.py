"""Corners of single VJP rules that the table-driven tests do not reach: an input
that alone requires grad, values exactly on a clamp's boundary, weights that sum
below one, a loss whose every label is ignored, the statistics outputs of the
normalisations taken as the loss in a static program, and which backward a
first-order batch_norm records. References: finite differences of NumPy, or values
derived by hand (in each test's comment)."""

import numpy as np
import pytest

import fw
import fw.nn.functional as F
from fw.core.internal import bump_version
from fw.core.ir import DYN, TensorType, building, run
from fw.core.ops import call


def _fd(fun, x, eps=1e-6):
    """Central differences of a scalar NumPy function."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (fun(xp) - fun(xm)) / (2 * eps)
    return g


def _leaf(a):
    return fw.to_tensor(np.asarray(a, dtype=np.float64), stop_gradient=False)


def test_heaviside_gives_x_a_zero_gradient_not_none():
    # heaviside is piecewise constant in x: d/dx = 0 everywhere (Paddle's rule)
    x = _leaf([-1.0, 0.0, 2.0])
    y = fw.to_tensor(np.array([0.5, 0.25, 0.75]))
    fw.heaviside(x, y).sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))


def test_swiglu_with_two_operands_when_only_x_requires_grad():
    # swiglu(a, b) = silu(a) * b: d/da = b * s * (1 + a * (1 - s)), s = sigmoid(a)
    a = np.array([[0.3, -1.2, 2.0]])
    b = np.array([[0.7, 2.0, -0.5]])
    x = _leaf(a)
    F.swiglu(x, fw.to_tensor(b)).sum().backward()
    s = 1 / (1 + np.exp(-a))
    np.testing.assert_allclose(x.grad.numpy(), b * s * (1 + a * (1 - s)), rtol=1e-12)


def test_logit_gradient_on_the_eps_boundary_is_the_inner_one():
    # Paddle's logit_grad: 0 where x < eps or x > 1 - eps, else 1 / (x (1 - x)); the
    # boundary points themselves keep the inner derivative
    x = _leaf([0.25, 0.75, 0.1, 0.9, 0.5])
    fw.logit(x, eps=0.25).sum().backward()
    v = np.array([0.25, 0.75, 0.1, 0.9, 0.5])
    want = np.where((v < 0.25) | (v > 0.75), 0.0, 1 / (v * (1 - v)))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_matrix_norm_fro_gradient_is_x_over_the_norm():
    a = np.arange(6.0).reshape(2, 3) - 2.0
    x = _leaf(a)
    fw.linalg.matrix_norm(x, p="fro").backward()
    np.testing.assert_allclose(x.grad.numpy(), a / np.sqrt((a * a).sum()), rtol=1e-12)


@pytest.mark.parametrize("ddof", [False, True])
def test_cov_gradient_with_aweights_summing_below_one(ddof):
    # fact = sum(w) (ddof 0) or sum(w) - sum(w^2)/sum(w) (ddof 1): both below 1 here
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4))
    aw = np.array([0.05, 0.1, 0.2, 0.15])
    u = rng.standard_normal((2, 2))
    x = _leaf(a)
    (fw.linalg.cov(x, aweights=fw.to_tensor(aw), ddof=ddof) * fw.to_tensor(u)).sum().backward()
    want = _fd(lambda v: (np.cov(v, aweights=aw, ddof=int(ddof)) * u).sum(), a)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("create_graph", [False, True])  # explicit op / re-expression
def test_cross_entropy_mean_with_every_label_ignored_has_a_zero_gradient(create_graph):
    # no label counts: the mean over zero labels is 0 (divided by 1, not by 0)
    xv = np.random.default_rng(0).standard_normal((3, 4))
    label = fw.to_tensor(np.array([1, 1, 1]))
    w = fw.to_tensor(np.array([1.0, 0.0, 2.0, 3.0]))  # with weights the den is their sum
    for kw in ({"ignore_index": 1}, {"weight": w}):
        x = _leaf(xv)
        loss = F.cross_entropy(x, label, **kw)
        (g,) = fw.grad(loss, x, create_graph=create_graph)
        np.testing.assert_array_equal(g.numpy(), np.zeros((3, 4)))


def test_meshgrid_does_not_keep_its_inputs():
    # meshgrid's gradient is a sum of g over the other axes: it never reads the
    # inputs, so writing them in place after the forward pass is allowed
    a0, b0 = _leaf([1.0, 2.0]), _leaf([3.0, 4.0, 5.0])
    a, b = a0 * 1, b0 * 1
    gx, gy = fw.meshgrid(a, b)
    bump_version(a)
    bump_version(b)
    (gx * 2 + gy).sum().backward()
    np.testing.assert_array_equal(a0.grad.numpy(), [6.0, 6.0])  # 2 * len(b)
    np.testing.assert_array_equal(b0.grad.numpy(), [2.0, 2.0, 2.0])  # len(a)


def test_static_gradient_of_the_normalisation_statistics_alone():
    # layer_norm over every axis, its mean and inv_std outputs as the losses: their seed
    # gradients are full_like(1), which are not absent gradients
    xv = np.random.default_rng(0).standard_normal((2, 3))
    with building() as b:
        x = b.add_input(TensorType([2, 3], "float64"), "x")
        _, mean, inv_std = call("layer_norm", x, None, None, epsilon=1e-5, begin_norm_axis=0)
        (g,) = fw.grad([mean, inv_std], x)
        b.set_outputs([g])
    want = _fd(lambda v: v.mean() + 1 / np.sqrt(v.var() + 1e-5), xv)
    np.testing.assert_allclose(run(b.program, xv).numpy(), want, rtol=1e-6, atol=1e-8)


def _bn_program(create_graph):
    with building() as b:
        x = b.add_input(TensorType([4, 3], "float64"), "x")
        y = F.batch_norm(x, fw.zeros([3], dtype="float64"), fw.ones([3], dtype="float64"),
                         training=True)
        (g,) = fw.grad((y * y * y).sum(), x, create_graph=create_graph)
        b.set_outputs([g])
    return b.program


def test_batch_norm_first_order_backward_uses_the_explicit_op():
    first, recorded = _bn_program(False), _bn_program(True)
    assert [op.name for op in first.walk()].count("batch_norm_grad") == 1
    assert "batch_norm_grad" not in [op.name for op in recorded.walk()]
    xv = np.random.default_rng(1).standard_normal((4, 3))

    def loss(v):  # training batch norm (biased variance, eps 1e-5), then sum(y^3)
        y = (v - v.mean(0)) / np.sqrt(v.var(0) + 1e-5)
        return (y ** 3).sum()

    want = _fd(loss, xv)
    for p in (first, recorded):
        np.testing.assert_allclose(run(p, xv).numpy(), want, rtol=1e-5, atol=1e-6)


def test_reshape_dyn_gradient_with_two_run_time_sizes():
    # x [DYN, DYN] reshaped to a run-time shape: the gradient takes x's run-time shape
    with building() as b:
        x = b.add_input(TensorType([DYN, DYN], "float64"), "x")
        s = b.add_input(TensorType([2], "int64"), "s")
        w = b.add_input(TensorType([DYN, DYN], "float64"), "w")
        y = call("reshape_dyn", x, s, static_shape=(-1, -1))
        (g,) = fw.grad((y * w).sum(), x)
        b.set_outputs([g])
    wv = np.arange(6.0).reshape(3, 2) + 1
    got = run(b.program, np.zeros((2, 3)), np.array([3, 2]), wv).numpy()
    np.testing.assert_array_equal(got, wv.reshape(2, 3))


def _fd_fw(fun, arrays, i, u, eps=1e-6):
    """Central differences of the real loss sum(Re(conj(u) * fun(*arrays))) in
    arrays[i], evaluated with fw's forward kernels; complex inputs get dL/dRe + i dL/dIm
    (fw's convention for the gradient of a real loss)."""
    def loss(xs):
        out = fun(*[fw.to_tensor(a) for a in xs]).numpy()
        return float(np.real(np.conj(u) * out).sum())

    x = arrays[i]
    g = np.zeros_like(x)
    steps = (1, 1j) if np.iscomplexobj(x) else (1,)
    for idx in np.ndindex(x.shape):
        for s in steps:
            xp, xm = list(arrays), list(arrays)
            xp[i], xm[i] = x.copy(), x.copy()
            xp[i][idx] += s * eps
            xm[i][idx] -= s * eps
            g[idx] += s * (loss(xp) - loss(xm)) / (2 * eps)
    return g


def _grads(fun, arrays, needs, u):
    ts = [fw.to_tensor(a, stop_gradient=not n) for a, n in zip(arrays, needs)]
    out = fun(*ts)
    wrt = [t for t, n in zip(ts, needs) if n]
    return [g.numpy() for g in fw.grad(out, wrt, fw.to_tensor(u))]


def test_copysign_gives_y_a_zero_gradient_not_none():
    x = _leaf([1.5, -2.0, 3.0])
    y = _leaf([-1.0, 2.0, 0.5])
    fw.copysign(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-1.0, -1.0, 1.0])  # sign(x) sign(y)
    assert y.grad is not None
    np.testing.assert_array_equal(y.grad.numpy(), np.zeros(3))


def test_matmul_of_a_matrix_and_a_vector():
    rng = np.random.default_rng(4)
    a, v, u = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal(2)
    ga, gv = _grads(fw.matmul, [a, v], [True, True], u)
    np.testing.assert_allclose(ga, np.outer(u, v), rtol=1e-12)  # d(u.Av)/dA = u v^T
    np.testing.assert_allclose(gv, a.T @ u, rtol=1e-12)


def test_pairwise_distance_gradient_includes_epsilon():
    rng = np.random.default_rng(5)
    x, y, u = rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), rng.standard_normal(2)

    def f(a, b):
        return F.pairwise_distance(a, b, p=2.0, epsilon=0.3)

    gx, gy = _grads(f, [x, y], [True, True], u)
    np.testing.assert_allclose(gx, _fd_fw(f, [x, y], 0, u), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, _fd_fw(f, [x, y], 1, u), rtol=1e-6, atol=1e-8)


def test_cross_entropy_gradient_of_a_weight_that_requires_grad():
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((4, 3)), np.array([0.5, 1.5, 2.0])
    label = fw.to_tensor(np.array([0, 2, 1, 2]))

    def f(a, b):
        return F.cross_entropy(a, label, weight=b, reduction="sum")

    gx, gw = _grads(f, [x, w], [True, True], np.array(1.0))
    np.testing.assert_allclose(gx, _fd_fw(f, [x, w], 0, 1.0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, _fd_fw(f, [x, w], 1, 1.0), rtol=1e-6, atol=1e-8)


def test_eval_batch_norm_gradient_of_the_running_mean_alone():
    # eval mode: y = (x - rm) / sqrt(rv + eps) * w; d/d rm = -sum_n g * w / sqrt(rv + eps)
    rng = np.random.default_rng(7)
    x, u = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    rm, rv, w = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, 0.5]), np.array([2.0, 1.0, 3.0])

    def f(xx, m):
        return F.batch_norm(xx, m, fw.to_tensor(rv), weight=fw.to_tensor(w), training=False)

    gx, gm = _grads(f, [x, rm], [True, True], u)
    inv = 1 / np.sqrt(rv + 1e-5)
    np.testing.assert_allclose(gm, -(u * w * inv).sum(0), rtol=1e-10)
    np.testing.assert_allclose(gx, u * w * inv, rtol=1e-10)


def test_hsigmoid_loss_custom_tree_with_paths_of_different_lengths():
    # path_table rows end at their first -1: row 0 has one node, row 1 three
    rng = np.random.default_rng(8)
    x, wt, u = rng.standard_normal((2, 3)), rng.standard_normal((3, 3)), rng.standard_normal((2, 1))
    table = fw.to_tensor(np.array([[0, -1, -1], [0, 1, 2]]))
    code = fw.to_tensor(np.array([[1, 0, 0], [0, 1, 1]]))
    label = fw.to_tensor(np.array([0, 1]))

    def f(a, b):
        return F.hsigmoid_loss(a, label, 4, b, path_table=table, path_code=code)

    gx, gw = _grads(f, [x, wt], [True, True], u)
    np.testing.assert_allclose(gx, _fd_fw(f, [x, wt], 0, u), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, _fd_fw(f, [x, wt], 1, u), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("left", [True, False])
def test_complex_ormqr_gradients(left):
    # the adjoint reflectors take conj(tau): visible on complex inputs only
    rng = np.random.default_rng(9)

    def c(*s):
        return rng.standard_normal(s) + 1j * rng.standard_normal(s)

    x, tau = c(3, 2), c(2)
    y = c(3, 2) if left else c(2, 3)
    u = c(*y.shape)
    for transpose in (False, True):
        def f(a, t, b, transpose=transpose):
            return fw.linalg.ormqr(a, t, b, left=left, transpose=transpose)

        got = _grads(f, [x, tau, y], [True, True, True], u)
        for i in range(3):
            np.testing.assert_allclose(got[i], _fd_fw(f, [x, tau, y], i, u),
                                       rtol=1e-5, atol=1e-7)


def test_static_layer_norm_with_a_given_gradient_for_every_output():
    # the output gradients are program inputs (no defining op): none is known zero
    rng = np.random.default_rng(10)
    xv, gy, gm, gi = (rng.standard_normal(s) for s in ((2, 3), (2, 3), (2,), (2,)))
    with building() as b:
        x = b.add_input(TensorType([2, 3], "float64"), "x")
        seeds = [b.add_input(TensorType(list(s), "float64"), n)
                 for s, n in (((2, 3), "gy"), ((2,), "gm"), ((2,), "gi"))]
        outs = call("layer_norm", x, None, None, epsilon=1e-5, begin_norm_axis=1)
        (g,) = fw.grad(list(outs), x, seeds)
        b.set_outputs([g])

    def loss(v):
        m, var = v.mean(1, keepdims=True), v.var(1, keepdims=True)
        inv = 1 / np.sqrt(var + 1e-5)
        return (gy * (v - m) * inv).sum() + (gm * m[:, 0]).sum() + (gi * inv[:, 0]).sum()

    np.testing.assert_allclose(run(b.program, xv, gy, gm, gi).numpy(), _fd(loss, xv),
                               rtol=1e-6, atol=1e-8)


def test_training_batch_norm_weight_and_bias_gradients():
    # first order (explicit op): d/d bias = sum_n g, d/d weight = sum_n g * xhat
    rng = np.random.default_rng(12)
    xv, u = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    wv, bv = np.array([2.0, 1.0, 3.0]), np.array([0.1, 0.2, 0.3])

    def f(xx, w, b):
        return F.batch_norm(xx, fw.zeros([3], dtype="float64"), fw.ones([3], dtype="float64"),
                            weight=w, bias=b, training=True)

    _, gw, gb = _grads(f, [xv, wv, bv], [True, True, True], u)
    xhat = (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-5)
    np.testing.assert_allclose(gb, u.sum(0), rtol=1e-12)
    np.testing.assert_allclose(gw, (u * xhat).sum(0), rtol=1e-10)


def test_qr_complete_of_a_square_matrix_has_a_gradient():
    # square: 'complete' is 'reduced' (Q unique up to the signs LAPACK fixes locally)
    rng = np.random.default_rng(13)
    av = rng.standard_normal((3, 3))
    uq, ur = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))

    def f(a):
        q, r = fw.linalg.qr(a, mode="complete")
        return (q * fw.to_tensor(uq)).sum() + (r * fw.to_tensor(ur)).sum()

    a = _leaf(av)
    (g,) = fw.grad(f(a), a)
    np.testing.assert_allclose(g.numpy(), _fd_fw(f, [av], 0, 1.0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)], ids=["tall", "wide"])
def test_svd_gradients_of_gauge_invariant_losses(shape):
    # singular vectors are defined up to sign: U**2, Vh**2, S and U diag(S) Vh are not
    rng = np.random.default_rng(14)
    m, n = shape
    k = min(m, n)
    av = rng.standard_normal(shape)
    wu, ws, wv, wa = (rng.standard_normal(s) for s in ((m, k), (k,), (k, n), (m, n)))

    def f(a):
        u, s, vh = fw.linalg.svd(a, full_matrices=False)
        rec = fw.matmul(u * fw.unsqueeze(s, 0), vh)
        return ((u * u * fw.to_tensor(wu)).sum() + (s * fw.to_tensor(ws)).sum()
                + (vh * vh * fw.to_tensor(wv)).sum() + (rec * fw.to_tensor(wa)).sum())

    a = _leaf(av)
    (g,) = fw.grad(f(a), a)
    np.testing.assert_allclose(g.numpy(), _fd_fw(f, [av], 0, 1.0), rtol=1e-6, atol=1e-7)
    a = _leaf(av)  # the nuclear norm: d sum(S) / dA = U Vh
    (g,) = fw.grad(fw.linalg.svd(a, full_matrices=False)[1].sum(), a)
    u, _, vh = np.linalg.svd(av, full_matrices=False)
    np.testing.assert_allclose(g.numpy(), u @ vh, rtol=1e-10, atol=1e-12)
