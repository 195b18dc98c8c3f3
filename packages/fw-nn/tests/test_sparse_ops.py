"""fw.sparse against dense NumPy / SciPy on hypothesis-drawn shapes and densities,
gradient checks against central differences, and the errors of bad input (dense ops
refuse sparse tensors)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fw
import fw.sparse as S

SETTINGS = settings(deadline=None,  # example counts come from the profile (conftest.py)
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def sparse_arrays(draw, ndim=2, min_side=1, max_side=6):
    shape = [draw(st.integers(min_side, max_side)) for _ in range(ndim)]
    density = draw(st.floats(0.0, 1.0))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, shape)
    a[rng.random(shape) >= density] = 0
    return a


def coo_of(a, stop_gradient=True):
    idx = np.array(np.nonzero(a), np.int64).reshape(a.ndim, -1)
    return S.sparse_coo_tensor(idx, a[tuple(idx)], list(a.shape), stop_gradient=stop_gradient)


def csr_of(a, stop_gradient=True):
    m = sp.csr_matrix(a)
    m.sort_indices()
    return S.sparse_csr_tensor(m.indptr, m.indices, m.data, list(a.shape),
                               stop_gradient=stop_gradient)


FORMATS = {"coo": coo_of, "csr": csr_of}


# ---------------------------------------------------------------- layout
@SETTINGS
@given(a=sparse_arrays())
def test_roundtrip_and_scipy_layout(a):
    x, c = coo_of(a), csr_of(a)
    np.testing.assert_array_equal(x.to_dense().numpy(), a)
    np.testing.assert_array_equal(c.to_dense().numpy(), a)
    m = sp.csr_matrix(a)
    conv = x.to_sparse_csr()
    np.testing.assert_array_equal(conv.crows().numpy(), m.indptr)
    np.testing.assert_array_equal(conv.cols().numpy(), m.indices)
    np.testing.assert_array_equal(conv.values().numpy(), m.data)
    assert conv.nnz() == m.nnz and c.is_sparse_csr() and x.is_sparse_coo()
    back = c.to_sparse_coo()
    np.testing.assert_array_equal(back.indices().numpy(), np.array(np.nonzero(a)))
    d = fw.to_tensor(a).to_sparse_coo(2)
    np.testing.assert_array_equal(d.indices().numpy(), np.array(np.nonzero(a)))


@SETTINGS
@given(a=sparse_arrays(ndim=3, max_side=4))
def test_batched_csr(a):
    c = fw.to_tensor(a).to_sparse_csr()
    np.testing.assert_array_equal(c.to_dense().numpy(), a)
    for b in range(a.shape[0]):
        m = sp.csr_matrix(a[b])
        crows = c.crows().numpy().reshape(a.shape[0], -1)[b]
        np.testing.assert_array_equal(crows, m.indptr)


def test_coalesce_adds_duplicates():
    # to_dense of an uncoalesced tensor keeps the last duplicate (Paddle's kernel);
    # coalesce adds them up
    x = S.sparse_coo_tensor([[2, 0, 2, 1], [1, 0, 1, 3]], [1.0, 2.0, 3.0, 4.0], [3, 4])
    y = S.coalesce(x)
    assert y.indices().numpy().tolist() == [[0, 1, 2], [0, 3, 1]]
    assert y.values().numpy().tolist() == [2.0, 4.0, 4.0]
    assert x.to_dense().numpy()[2, 1] == 3.0 and y.to_dense().numpy()[2, 1] == 4.0


# ---------------------------------------------------------------- elementwise
UNARY = {
    "abs": np.abs, "sin": np.sin, "tan": np.tan, "asin": np.arcsin, "atan": np.arctan,
    "sinh": np.sinh, "tanh": np.tanh, "asinh": np.arcsinh, "atanh": np.arctanh,
    "sqrt": np.sqrt, "square": np.square, "log1p": np.log1p, "expm1": np.expm1,
    "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "neg": np.negative,
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_numpy(name, fmt):
    rng = np.random.default_rng(3)
    a = rng.uniform(0.05, 0.95, (4, 5)) * (rng.random((4, 5)) < 0.5)
    x = FORMATS[fmt](a)
    y = getattr(S, name)(x)
    assert y.is_sparse_coo() == (fmt == "coo")
    want = np.where(a != 0, UNARY[name](a), 0)
    np.testing.assert_allclose(y.to_dense().numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("op,npop", [("add", np.add), ("subtract", np.subtract),
                                     ("multiply", np.multiply)])
@SETTINGS
@given(data=st.data())
def test_binary_matches_numpy(op, npop, fmt, data):
    a = data.draw(sparse_arrays())
    b = data.draw(sparse_arrays(min_side=1)).ravel()
    b = np.resize(b, a.shape) * (np.random.default_rng(a.size).random(a.shape) < 0.5)
    x, y = FORMATS[fmt](a), FORMATS[fmt](b)
    r = getattr(S, op)(x, y)
    np.testing.assert_allclose(r.to_dense().numpy(), npop(a, b), rtol=1e-12)
    assert r.nnz() == np.count_nonzero((a != 0) | (b != 0))


def test_divide_fills_every_position():
    a = np.array([[1.0, 0.0], [0.0, 2.0]])
    b = np.array([[4.0, 0.0], [3.0, 0.0]])
    r = S.divide(coo_of(a), coo_of(b))
    assert r.nnz() == 4
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(r.to_dense().numpy(), a / b)


# ---------------------------------------------------------------- products
@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(a=sparse_arrays(), n=st.integers(1, 4))
def test_matmul_sparse_dense_matches_scipy(a, n, fmt):
    b = np.random.default_rng(n).standard_normal((a.shape[1], n))
    got = S.matmul(FORMATS[fmt](a), fw.to_tensor(b))
    assert isinstance(got, fw.Tensor)
    np.testing.assert_allclose(got.numpy(), sp.csr_matrix(a) @ b, rtol=1e-10, atol=1e-12)
    v = fw.to_tensor(b[:, 0])
    np.testing.assert_allclose(S.mv(FORMATS[fmt](a), v).numpy(), a @ b[:, 0], atol=1e-12)


@SETTINGS
@given(a=sparse_arrays(ndim=3, max_side=4))
def test_matmul_batched(a):
    b = np.random.default_rng(1).standard_normal((a.shape[0], a.shape[2], 3))
    for x in (coo_of(a), fw.to_tensor(a).to_sparse_csr()):
        np.testing.assert_allclose(S.matmul(x, fw.to_tensor(b)).numpy(), a @ b, atol=1e-12)


@SETTINGS
@given(a=sparse_arrays(), data=st.data())
def test_matmul_sparse_sparse_matches_scipy(a, data):
    b = data.draw(sparse_arrays()).ravel()
    b = np.resize(b, (a.shape[1], 3))
    for fmt in FORMATS:
        r = S.matmul(FORMATS[fmt](a), FORMATS[fmt](b))
        want = sp.csr_matrix(a) @ sp.csr_matrix(b)
        assert r.is_sparse_coo() == (fmt == "coo")
        np.testing.assert_allclose(r.to_dense().numpy(), want.toarray(), atol=1e-12)


def test_addmm_and_masked_matmul():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 3)) * (rng.random((4, 3)) < 0.5)
    b, inp = rng.standard_normal((3, 2)), rng.standard_normal((4, 2))
    got = S.addmm(fw.to_tensor(inp), csr_of(a), fw.to_tensor(b), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(got.numpy(), 0.5 * inp + 2.0 * a @ b, atol=1e-12)
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((5, 3))
    mask = (rng.random((4, 3)) < 0.5).astype(float)
    for fmt in FORMATS:
        r = S.masked_matmul(fw.to_tensor(x), fw.to_tensor(y), FORMATS[fmt](mask))
        np.testing.assert_allclose(r.to_dense().numpy(), (x @ y) * mask, atol=1e-12)
    xb, yb = rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 5, 3))
    mb = (rng.random((2, 4, 3)) < 0.5).astype(float)
    r = S.masked_matmul(fw.to_tensor(xb), fw.to_tensor(yb), fw.to_tensor(mb).to_sparse_csr())
    np.testing.assert_allclose(r.to_dense().numpy(), (xb @ yb) * mb, atol=1e-12)


# ---------------------------------------------------------------- shape ops
@SETTINGS
@given(a=sparse_arrays(ndim=3, max_side=4), axis=st.sampled_from([None, 0, 1, 2, -1]),
       keepdim=st.booleans())
def test_sum_matches_numpy(a, axis, keepdim):
    r = S.sum(coo_of(a), axis=axis, keepdim=keepdim).to_dense().numpy()
    want = np.sum(a, axis=axis, keepdims=keepdim)
    np.testing.assert_allclose(r, want.reshape(r.shape) if axis is None else want, atol=1e-12)
    if axis is None:
        assert r.shape == ((1,) * 3 if keepdim else (1,))
    c = S.sum(fw.to_tensor(a).to_sparse_csr(), axis=-1)
    assert c.is_sparse_csr() and c.shape == [*a.shape[:2], 1]
    np.testing.assert_allclose(c.to_dense().numpy(), a.sum(-1, keepdims=True), atol=1e-12)


@SETTINGS
@given(a=sparse_arrays(ndim=3, max_side=4), perm=st.permutations([0, 1, 2]))
def test_transpose_reshape_slice(a, perm):
    x = coo_of(a)
    np.testing.assert_array_equal(S.transpose(x, perm).to_dense().numpy(),
                                  a.transpose(perm))
    c = fw.to_tensor(a).to_sparse_csr()
    np.testing.assert_array_equal(S.transpose(c, [0, 2, 1]).to_dense().numpy(),
                                  a.transpose(0, 2, 1))
    np.testing.assert_array_equal(S.reshape(x, [-1, a.shape[-1]]).to_dense().numpy(),
                                  a.reshape(-1, a.shape[-1]))
    s = S.slice(x, [0, 2], [1, -2], [3, 10])
    np.testing.assert_array_equal(s.to_dense().numpy(), a[1:3, :, -2:10])


def test_softmax_rows_over_stored_entries():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((5, 6)) * (rng.random((5, 6)) < 0.6)
    for fmt in FORMATS:
        r = S.nn.functional.softmax(FORMATS[fmt](a)).to_dense().numpy()
        for i in range(5):
            nz = a[i] != 0
            if nz.any():
                e = np.exp(a[i][nz] - a[i][nz].max())
                np.testing.assert_allclose(r[i][nz], e / e.sum(), rtol=1e-12)
            assert np.all(r[i][~nz] == 0)


# ---------------------------------------------------------------- gradients
def numeric_grad(f, v, eps=1e-6):
    g = np.zeros_like(v)
    for i in range(v.size):
        d = np.zeros_like(v)
        d.flat[i] = eps
        g.flat[i] = (f(v + d) - f(v - d)) / (2 * eps)
    return g


IDX = np.array([[0, 0, 1, 2, 2], [1, 3, 0, 2, 3]])
W = np.random.default_rng(11).standard_normal((3, 4))
B = np.random.default_rng(12).standard_normal((4, 2))
LOSSES = {
    "to_dense": lambda x: (x.to_dense() * fw.to_tensor(W)).sum(),
    "matmul": lambda x: (S.matmul(x, fw.to_tensor(B)) ** 2).sum(),
    "mv": lambda x: (S.mv(x, fw.to_tensor(B[:, 0])) ** 2).sum(),
    "softmax": lambda x: (S.nn.functional.softmax(x).to_dense() * fw.to_tensor(W)).sum(),
    "multiply": lambda x: (S.multiply(x, S.sin(x)).to_dense() * fw.to_tensor(W)).sum(),
    "add_sum": lambda x: S.sum(S.add(x, S.square(x)), axis=1).to_dense().sum(),
    "sparse_sparse": lambda x: (S.matmul(x, S.transpose(x, [1, 0])).to_dense()
                                * fw.to_tensor(W[:, :3])).sum(),
    "tanh_transpose": lambda x: (S.transpose(S.tanh(x), [1, 0]).to_dense()
                                 * fw.to_tensor(W.T)).sum(),
}


@pytest.mark.parametrize("fmt", ["coo", "csr"])
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_value_gradients(loss, fmt):
    v0 = np.random.default_rng(2).uniform(-1, 1, IDX.shape[1])

    def make(v, stop_gradient=True):
        x = S.sparse_coo_tensor(IDX, v, [3, 4], stop_gradient=stop_gradient)
        return x if fmt == "coo" else x.to_sparse_csr()

    x = make(v0, stop_gradient=False)
    LOSSES[loss](x).backward()
    assert x.grad.is_sparse() and x.grad.nnz() == IDX.shape[1]
    want = numeric_grad(lambda v: float(LOSSES[loss](make(v)).numpy()), v0)
    np.testing.assert_allclose(x.grad.values().numpy(), want, rtol=1e-6, atol=1e-8)


def test_dense_operand_gradients():
    rng = np.random.default_rng(4)
    mask = coo_of((rng.random((3, 4)) < 0.5).astype(float))
    x0, y0 = rng.standard_normal((3, 5)), rng.standard_normal((5, 4))

    def loss(x, y):
        r = S.masked_matmul(x, y, mask)
        return (r.values() ** 2).sum()

    x, y = fw.to_tensor(x0, stop_gradient=False), fw.to_tensor(y0, stop_gradient=False)
    loss(x, y).backward()
    gx = numeric_grad(lambda v: float(loss(fw.to_tensor(v), fw.to_tensor(y0)).numpy()), x0)
    gy = numeric_grad(lambda v: float(loss(fw.to_tensor(x0), fw.to_tensor(v)).numpy()), y0)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(y.grad.numpy(), gy, rtol=1e-6, atol=1e-8)
    # and the dense factor of sparse @ dense
    a = coo_of(rng.standard_normal((3, 4)) * (rng.random((3, 4)) < 0.5))
    b = fw.to_tensor(B, stop_gradient=False)
    (S.matmul(a, b) ** 2).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), 2 * a.to_dense().numpy().T
                               @ (a.to_dense().numpy() @ B), rtol=1e-10)


# ---------------------------------------------------------------- refusals and errors
def test_dense_ops_refuse_sparse():
    x = coo_of(np.eye(3))
    with pytest.raises(Exception, match="SparseCooTensor"):
        fw.matmul(x, fw.ones([3, 3], dtype="float64"))
    with pytest.raises(Exception, match="SparseCsrTensor"):
        fw.sin(x.to_sparse_csr())
    with pytest.raises(TypeError, match="to_dense"):
        np.asarray(x)
    with pytest.raises(TypeError, match="to_dense"):
        x.numpy()
    with pytest.raises(TypeError, match="sparse.add.*`y`.*Tensor of shape"):
        x + fw.ones([3, 3])


def test_bad_input_errors():
    with pytest.raises(ValueError, match="sparse_coo_tensor.*nnz=2"):
        S.sparse_coo_tensor([[0, 1]], [1.0, 2.0, 3.0], [3])
    with pytest.raises(ValueError, match="out of range"):
        S.sparse_coo_tensor([[0, 5]], [1.0, 2.0], [3])
    with pytest.raises(TypeError, match="integers"):
        S.sparse_coo_tensor([[0.5, 1.0]], [1.0, 2.0], [3])
    with pytest.raises(ValueError, match="crows.*length 3"):
        S.sparse_csr_tensor([0, 1], [0], [1.0], [2, 2])
    a, b = coo_of(np.eye(3)), coo_of(np.eye(2))
    with pytest.raises(ValueError, match=r"add.*same shape.*\[3, 3\].*\[2, 2\]"):
        S.add(a, b)
    with pytest.raises(TypeError, match="same sparse format"):
        S.add(a, a.to_sparse_csr())
    with pytest.raises(ValueError, match=r"matmul.*\[3, 3\].*\[2, 2\]"):
        S.matmul(a, fw.ones([2, 2], dtype="float64"))
    with pytest.raises(ValueError, match="CSR.*axis"):
        S.sum(a.to_sparse_csr(), axis=0)
    with pytest.raises(ValueError, match="transpose.*perm"):
        S.transpose(a, [0, 0])
    with pytest.raises(ValueError, match="reshape.*\\[4, 4\\]"):
        S.reshape(a, [4, 4])
    with pytest.raises(TypeError, match="backward"):
        a.backward()


# ---------------------------------------------------------------- pca_lowrank
@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("fmt", FORMATS)
def test_pca_lowrank_recovers_low_rank(center, fmt):
    # Paddle 3.3 runs pca_lowrank on CUDA 11 only: checked against NumPy's exact SVD on
    # a rank-3 matrix, which the randomized algorithm must recover to rounding
    rng = np.random.default_rng(9)
    a = rng.standard_normal((9, 3)) @ rng.standard_normal((3, 7))
    a[[1, 4, 5]] = 0  # zero rows and columns: sparse, and the rank stays <= 3 (+1 centred)
    a[:, [0, 2]] = 0
    fw.seed(3)
    q = 4
    u, s, v = S.pca_lowrank(FORMATS[fmt](a), q=q, center=center, niter=4)
    c = a - a.mean(0) if center else a
    want = np.linalg.svd(c, compute_uv=False)[:q]
    np.testing.assert_allclose(s.numpy(), want, rtol=1e-8, atol=1e-8 * want[0])
    np.testing.assert_allclose(u.numpy().T @ u.numpy(), np.eye(q), atol=1e-10)
    np.testing.assert_allclose(v.numpy().T @ v.numpy(), np.eye(q), atol=1e-10)
    approx = u.numpy() @ np.diag(s.numpy()) @ v.numpy().T
    exact = np.linalg.svd(c)
    best = exact[0][:, :q] @ np.diag(exact[1][:q]) @ exact[2][:q]
    np.testing.assert_allclose(approx, best, atol=1e-8 * exact[1][0])


def test_pca_lowrank_errors():
    x = coo_of(np.eye(3))
    with pytest.raises(ValueError, match="pca_lowrank.*q=5"):
        S.pca_lowrank(x, q=5)
    with pytest.raises(TypeError, match="pca_lowrank"):
        S.pca_lowrank(fw.ones([3, 3]))


# ---------------------------------------------------------------- sparse conv
@pytest.mark.parametrize("subm", [False, True])
def test_conv3d_gradients(subm):
    rng = np.random.default_rng(8)
    idx = np.array([[0, 0, 0, 1], [0, 1, 2, 1], [1, 1, 0, 2], [0, 1, 1, 0]])
    v0, w0 = rng.standard_normal((4, 2)), rng.standard_normal((3, 3, 3, 2, 2))
    f = S.nn.functional.subm_conv3d if subm else S.nn.functional.conv3d
    wts = None

    def loss(v, w):
        nonlocal wts
        x = S.sparse_coo_tensor(idx, v, [2, 3, 3, 2, 2], stop_gradient=isinstance(v, np.ndarray))
        y = f(x, w if isinstance(w, fw.Tensor) else fw.to_tensor(w), padding=1).values()
        if wts is None:
            wts = rng.standard_normal(y.shape)
        return (y * fw.to_tensor(wts)).sum()

    v = fw.to_tensor(v0, stop_gradient=False)
    x = S.sparse_coo_tensor(idx, v, [2, 3, 3, 2, 2])
    w = fw.to_tensor(w0, stop_gradient=False)
    loss(v, w).backward()
    assert x.grad is not None
    gv = numeric_grad(lambda a: float(loss(a, w0).numpy()), v0)
    gw = numeric_grad(lambda a: float(loss(v0, a).numpy()), w0)
    np.testing.assert_allclose(v.grad.numpy(), gv, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-6, atol=1e-8)


def test_conv3d_errors():
    x = S.sparse_coo_tensor([[0], [0], [0], [0]], [[1.0, 2.0]], [1, 2, 2, 2, 2])
    with pytest.raises(ValueError, match=r"conv3d.*C_in=2"):
        S.nn.functional.conv3d(x, fw.ones([3, 3, 3, 3, 1]))
    with pytest.raises(ValueError, match="subm_conv3d.*stride"):
        S.nn.functional.subm_conv3d(x, fw.ones([3, 3, 3, 2, 1]), stride=2)
    with pytest.raises(ValueError, match="conv3d.*empty"):
        S.nn.functional.conv3d(x, fw.ones([3, 3, 3, 2, 1]))
    layer = S.nn.SubmConv3D(2, 4, 3, padding=1)
    assert list(layer.weight.shape) == [3, 3, 3, 2, 4] and list(layer.bias.shape) == [4]
    assert layer(x).shape == [1, 2, 2, 2, 4]


def test_max_pool3d_gradient_goes_to_winners():
    idx = np.array([[0, 0, 0], [0, 1, 1], [0, 0, 1], [0, 1, 1]])
    v0 = np.array([[1.0, -5.0], [3.0, -1.0], [2.0, -2.0]])
    v = fw.to_tensor(v0, stop_gradient=False)
    x = S.sparse_coo_tensor(idx, v, [1, 2, 2, 2, 2])
    y = S.nn.functional.max_pool3d(x, 2)
    assert y.values().numpy().tolist() == [[3.0, -1.0]]
    y.values().sum().backward()
    assert v.grad.numpy().tolist() == [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]


# ---------------------------------------------------------------- attention
def _attention_reference(q, k, v, layout, kp=None, am=None):
    b, h, m, d = q.shape
    s = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(d)
    allowed = layout.reshape(b, h, m, m) != 0
    if kp is not None:
        allowed &= (kp != 0)[:, None, None, :]
    if am is not None:
        allowed &= (am != 0)[None, None]
    s = np.where(allowed, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def test_attention_matches_dense_reference_and_gradients():
    rng = np.random.default_rng(13)
    b, h, m, d = 2, 2, 5, 3
    q0, k0, v0 = (rng.standard_normal((b, h, m, d)) for _ in range(3))
    layout = (rng.random((b * h, m, m)) < 0.6).astype(float)
    layout[:, np.arange(m), np.arange(m)] = 1  # every row keeps its diagonal
    kp = np.ones((b, m))
    kp[1, 4] = 0
    am = np.tril(np.ones((m, m)))
    mask = fw.to_tensor(layout).to_sparse_csr()
    f = S.nn.functional.attention
    for args in ((None, None), (kp, am)):
        t = [None if a is None else fw.to_tensor(a) for a in args]
        got = f(fw.to_tensor(q0), fw.to_tensor(k0), fw.to_tensor(v0), mask, *t)
        np.testing.assert_allclose(got.numpy(), _attention_reference(q0, k0, v0, layout, *args),
                                   rtol=1e-10, atol=1e-12)
    wts = rng.standard_normal((b, h, m, d))

    def loss(q):
        out = f(q, fw.to_tensor(k0), fw.to_tensor(v0), mask, fw.to_tensor(kp), fw.to_tensor(am))
        return (out * fw.to_tensor(wts)).sum()

    q = fw.to_tensor(q0, stop_gradient=False)
    loss(q).backward()
    want = numeric_grad(lambda a: float(loss(fw.to_tensor(a)).numpy()), q0)
    np.testing.assert_allclose(q.grad.numpy(), want, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match=r"attention.*sparse_mask.*\[4, 5, 5\]"):
        f(fw.to_tensor(q0), fw.to_tensor(k0), fw.to_tensor(v0),
          fw.to_tensor(layout[:2]).to_sparse_csr())
