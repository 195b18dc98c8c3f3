"""Linear algebra: Paddle-specific semantics, identities on hypothesis-drawn
matrices, and checks against independent oracles (SciPy/LAPACK, NumPy)."""

import types

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given
from hypothesis import strategies as st

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir import TensorType, run, trace

L = fw.linalg
T = fw.to_tensor


def _np(t):
    return t.numpy()


def _matrix(seed, shape, dtype=np.float64, cplx=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if cplx:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype if not cplx else np.complex128)


def _well(seed, batch, n, cplx=False):
    return _matrix(seed, batch + (n, n), cplx=cplx) + (n + 2) * np.eye(n)


seeds = st.integers(0, 2**31 - 1)
batches = st.sampled_from([(), (3,), (2, 1)])
sizes = st.integers(1, 5)


def _eye_like(a):
    return np.broadcast_to(np.eye(a.shape[-1]), a.shape)


def _ct(a):
    return np.conj(np.swapaxes(a, -1, -2))


# ---------------------------------------------------------------- namespaces
def test_facade_modules_and_aliases():
    import fw.fft as ff
    import fw.linalg as lin

    assert lin.inv is fw.linalg.inv and ff.fft is fw.fft.fft
    for name in ("inverse", "norm", "dist", "cross", "trace", "bmm", "mm", "dot", "mv", "outer",
                 "inner", "einsum", "tensordot", "cdist", "eigvalsh", "cholesky", "vecdot"):
        assert callable(getattr(fw, name)), name
    assert fw.inverse is fw.linalg.inv and fw.norm is fw.linalg.norm
    assert isinstance(fw.linalg, types.ModuleType) and isinstance(fw.fft, types.ModuleType)
    assert not any("." in k for k in dir(fw))
    x = T([[2.0, 1.0], [1.0, 3.0]])
    for m in ("inverse", "norm", "cholesky", "qr", "lu", "eigvalsh", "cov", "cond", "pinv",
              "solve", "matrix_power", "householder_product", "trace", "dot", "mm"):
        assert callable(getattr(x, m)), m
    np.testing.assert_allclose(_np(x.inverse()), np.linalg.inv(_np(x)), rtol=1e-6)


# ---------------------------------------------------------------- identities
@given(seeds, batches, sizes, st.booleans())
def test_inverse_identity(seed, batch, n, cplx):
    a = _well(seed, batch, n, cplx)
    inv = _np(L.inv(T(a)))
    np.testing.assert_allclose(inv @ a, _eye_like(a), atol=1e-10)
    np.testing.assert_allclose(_np(L.solve(T(a), T(a))), _eye_like(a), atol=1e-10)


@given(seeds, batches, sizes, sizes, st.sampled_from(["reduced", "complete"]))
def test_qr_identity(seed, batch, m, n, mode):
    a = _matrix(seed, batch + (m, n))
    q, r = (_np(t) for t in L.qr(T(a), mode=mode))
    np.testing.assert_allclose(q @ r, a, atol=1e-10)
    np.testing.assert_allclose(_ct(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2]
                                                           + (q.shape[-1],) * 2), atol=1e-10)
    assert np.allclose(np.tril(r, -1), 0)
    np.testing.assert_allclose(_np(L.qr(T(a), mode="r")), _np(L.qr(T(a))[1]))


@given(seeds, batches, sizes, sizes, st.booleans(), st.booleans())
def test_svd_identity(seed, batch, m, n, full, cplx):
    a = _matrix(seed, batch + (m, n), cplx=cplx)
    u, s, vh = (_np(t) for t in L.svd(T(a), full_matrices=full))
    k = min(m, n)
    assert s.dtype == np.float64 and np.all(np.diff(s, axis=-1) <= 1e-12)
    np.testing.assert_allclose(u[..., :, :k] * s[..., None, :] @ vh[..., :k, :], a, atol=1e-10)
    np.testing.assert_allclose(_np(L.svdvals(T(a))), s, atol=1e-12)


@given(seeds, batches, sizes, st.booleans(), st.sampled_from(["L", "U"]))
def test_eigh_identity(seed, batch, n, cplx, uplo):
    a = _matrix(seed, batch + (n, n), cplx=cplx)
    h = a + _ct(a)
    w, v = (_np(t) for t in L.eigh(T(h), UPLO=uplo))
    np.testing.assert_allclose((v * w[..., None, :]) @ _ct(v), h, atol=1e-10)
    np.testing.assert_allclose(_np(L.eigvalsh(T(h), uplo)), w)


@given(seeds, batches, sizes)
def test_eig_is_complex_and_reconstructs(seed, batch, n):
    a = _matrix(seed, batch + (n, n)).astype(np.float32)
    w, v = L.eig(T(a))
    assert w.dtype == fw.complex64 and v.dtype == fw.complex64
    w, v = _np(w), _np(v)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-3)
    assert L.eigvals(T(a)).dtype == fw.complex64


@given(seeds, batches, sizes, st.booleans())
def test_cholesky_family(seed, batch, n, cplx):
    a = _matrix(seed, batch + (n, n), cplx=cplx)
    spd = a @ _ct(a) + n * np.eye(n)
    low = _np(L.cholesky(T(spd)))
    up = _np(L.cholesky(T(spd), upper=True))
    np.testing.assert_allclose(low @ _ct(low), spd, atol=1e-10)
    np.testing.assert_allclose(_ct(up) @ up, spd, atol=1e-10)
    b = _matrix(seed + 1, batch + (n, 2))
    np.testing.assert_allclose(_np(L.cholesky_solve(T(b), T(low))), np.linalg.solve(spd, b),
                               atol=1e-10)
    np.testing.assert_allclose(_np(L.cholesky_solve(T(b), T(up), upper=True)),
                               np.linalg.solve(spd, b), atol=1e-10)
    np.testing.assert_allclose(_np(L.cholesky_inverse(T(low))), np.linalg.inv(spd), atol=1e-10)
    np.testing.assert_allclose(_np(L.cholesky_inverse(T(up), upper=True)), np.linalg.inv(spd),
                               atol=1e-10)


@given(seeds, batches, sizes, sizes)
def test_lu_matches_lapack_and_unpacks(seed, batch, m, n):
    a = _matrix(seed, batch + (m, n))
    lu, piv, info = L.lu(T(a), get_infos=True)
    assert piv.dtype == fw.int32 and info.dtype == fw.int32 and piv.shape == list(batch) + [
        min(m, n)]
    p, lo, up = (_np(t) for t in L.lu_unpack(lu, piv))
    np.testing.assert_allclose(p @ lo @ up, a, atol=1e-10)
    for idx in np.ndindex(*batch):
        want_lu, want_piv = sla.lu_factor(a[idx], check_finite=False)
        np.testing.assert_allclose(_np(lu)[idx], want_lu, atol=1e-10)
        np.testing.assert_array_equal(_np(piv)[idx], want_piv + 1)


@given(seeds, batches, sizes, st.sampled_from(["N", "T", "C"]), st.booleans())
def test_lu_solve(seed, batch, n, trans, cplx):
    a = _well(seed, batch, n, cplx)
    b = _matrix(seed + 1, batch + (n, 2), cplx=cplx)
    lu, piv = L.lu(T(a))
    op = {"N": a, "T": np.swapaxes(a, -1, -2), "C": _ct(a)}[trans]
    np.testing.assert_allclose(_np(L.lu_solve(T(b), lu, piv, trans=trans)),
                               np.linalg.solve(op, b), atol=1e-10)


@given(seeds, batches, sizes, st.booleans(), st.booleans(), st.booleans())
def test_triangular_solve_matches_lapack(seed, batch, n, upper, transpose, unit):
    a = _well(seed, batch, n)
    b = _matrix(seed + 1, batch + (n, 3))
    got = _np(L.triangular_solve(T(a), T(b), upper=upper, transpose=transpose,
                                 unitriangular=unit))
    for idx in np.ndindex(*batch):
        want = sla.solve_triangular(a[idx], b[idx], lower=not upper, trans=int(transpose),
                                    unit_diagonal=unit)
        np.testing.assert_allclose(got[idx], want, atol=1e-10)


@pytest.mark.parametrize("norm1", [3.0, 5.3, 20.0])
def test_matrix_exp_near_the_pade_limit_matches_scipy(norm1):
    # a 1-norm just below theta_13 = 5.37 runs the degree-13 Pade approximant unscaled,
    # where every coefficient shows at 1e-11 (the result is good to about 1e-13); the
    # others scale and square
    a = np.random.default_rng(0).standard_normal((4, 4))
    a *= norm1 / np.abs(a).sum(0).max()
    want = sla.expm(a)
    got = _np(L.matrix_exp(T(a)))
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11 * np.abs(want).max())


@given(seeds, batches, sizes, st.sampled_from([0.3, 1.0, 4.0]), st.booleans())
def test_matrix_exp_matches_scipy(seed, batch, n, scale, cplx):
    a = _matrix(seed, batch + (n, n), cplx=cplx) * scale
    got = _np(L.matrix_exp(T(a)))
    for idx in np.ndindex(*batch):
        want = sla.expm(a[idx])
        np.testing.assert_allclose(got[idx], want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


@given(seeds, batches, st.integers(2, 5), st.integers(1, 4))
def test_householder_and_ormqr_match_lapack(seed, batch, m, n):
    n = min(m, n)
    x = _matrix(seed, batch + (m, n))
    tau = np.random.default_rng(seed).random(batch + (n,)) + 0.2
    q = _np(L.householder_product(T(x), T(tau)))
    y = _matrix(seed + 1, batch + (m, 2))
    yr = _matrix(seed + 2, batch + (2, m))
    for idx in np.ndindex(*batch):
        np.testing.assert_allclose(q[idx], sla.lapack.dorgqr(x[idx], tau[idx])[0], atol=1e-10)
        for left, trans, c in ((True, False, y), (True, True, y), (False, False, yr),
                               (False, True, yr)):
            want = sla.lapack.dormqr("L" if left else "R", "T" if trans else "N", x[idx],
                                     tau[idx], c[idx], lwork=max(64, m * 4))[0]
            got = _np(L.ormqr(T(x), T(tau), T(c), left=left, transpose=trans))[idx]
            np.testing.assert_allclose(got, want, atol=1e-10)


@given(seeds, batches, st.integers(1, 5), st.integers(1, 4))
def test_pinv_penrose_conditions(seed, batch, m, n):
    a = _matrix(seed, batch + (m, n))
    p = _np(L.pinv(T(a)))
    np.testing.assert_allclose(a @ p @ a, a, atol=1e-9)
    np.testing.assert_allclose(p @ a @ p, p, atol=1e-9)
    h = a @ np.swapaxes(a, -1, -2) + np.eye(m)  # invertible, so pinv is the inverse
    np.testing.assert_allclose(_np(L.pinv(T(h), hermitian=True)), np.linalg.inv(h), atol=1e-9)
    # rcond cuts the small singular values: a cutoff above all but the largest gives rank 1
    cut = _np(L.pinv(T(a), rcond=0.999))
    s = np.linalg.svd(a, compute_uv=False)
    assert np.allclose(np.linalg.matrix_rank(cut, tol=1e-8), (s > 0.999 * s[..., :1]).sum(-1))


@given(seeds, batches, sizes, st.integers(-3, 4))
def test_matrix_power(seed, batch, n, k):
    a = _well(seed, batch, n) / (n + 2)
    np.testing.assert_allclose(_np(L.matrix_power(T(a), k)), np.linalg.matrix_power(a, k),
                               rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- Paddle semantics
def test_slogdet_is_stacked_and_det():
    a = _well(0, (3,), 3)
    a[1] *= -1
    out = _np(L.slogdet(T(a)))
    assert out.shape == (2, 3)
    sign, logabs = np.linalg.slogdet(a)
    np.testing.assert_allclose(out, np.stack([sign, logabs]))
    np.testing.assert_allclose(_np(L.det(T(a))), np.linalg.det(a))
    z = _well(1, (), 3, cplx=True)
    got = _np(L.slogdet(T(z)))
    assert got.dtype == np.complex128 and got.shape == (2,)
    np.testing.assert_allclose(got[0], np.linalg.det(z) / abs(np.linalg.det(z)))


def test_solve_vector_and_left_false():
    a = _well(2, (2,), 3)
    y = np.arange(3.0)
    np.testing.assert_allclose(_np(L.solve(T(a), T(y))), np.linalg.solve(a, y))
    b = _matrix(3, (2, 4, 3))
    np.testing.assert_allclose(_np(L.solve(T(a), T(b), left=False)) @ a, b, atol=1e-10)


def test_singular_and_non_pd_errors_name_the_batch_element():
    a = np.stack([np.eye(2), np.zeros((2, 2)), np.eye(2)])
    with pytest.raises(InvalidArgumentError, match=r"^inv: .*singular \(batch element \[1\]\)"):
        L.inv(T(a))
    with pytest.raises(InvalidArgumentError, match=r"^solve: .*singular \(batch element \[1\]"):
        L.solve(T(a), T(np.ones((3, 2, 1))))
    with pytest.raises(InvalidArgumentError, match=r"^cholesky: .*positive-definite \(batch "
                                                   r"element \[0, 1\]\)"):
        L.cholesky(T(np.stack([np.stack([np.eye(2), -np.eye(2)])])))
    assert L.det(T(a)).tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("fn", [L.inv, L.det, L.cholesky, L.eigh, L.svd, L.qr, L.matrix_exp,
                                lambda x: L.norm(x), L.pinv, L.matrix_rank])
def test_integer_input_is_rejected(fn):
    with pytest.raises(InvalidTypeError, match="floating"):
        fn(T([[1, 2], [3, 4]]))


def test_low_precision_computes_in_float32():
    a = _well(4, (), 3).astype(np.float16)
    out = L.inv(T(a))
    assert out.dtype == fw.float16
    np.testing.assert_allclose(_np(out).astype(np.float64), np.linalg.inv(a.astype(np.float64)),
                               rtol=1e-2, atol=1e-2)


def test_cross_default_axis_is_first_of_size_3():
    x = _matrix(5, (2, 3, 3))
    y = _matrix(6, (2, 3, 3))
    np.testing.assert_allclose(_np(fw.cross(T(x), T(y))), np.cross(x, y, axis=1))
    np.testing.assert_allclose(_np(fw.cross(T(x), T(y), axis=-1)), np.cross(x, y, axis=-1))
    with pytest.raises(InvalidArgumentError, match="size 3"):
        fw.cross(T(np.ones((2, 2))), T(np.ones((2, 2))))


def test_dot_mv_bmm_mm_outer_inner():
    x, y = _matrix(7, (4, 3)), _matrix(8, (4, 3))
    assert fw.dot(T(x), T(y)).shape == [4]
    np.testing.assert_allclose(_np(fw.dot(T(x), T(y))), np.sum(x * y, -1))
    assert fw.dot(T([1, 2, 3]), T([4, 5, 6])).dtype == fw.int64
    assert fw.dot(T([1, 2, 3]), T([4, 5, 6])).item() == 32
    np.testing.assert_allclose(_np(fw.mv(T(x), T(y[0]))), x @ y[0])
    b1, b2 = _matrix(9, (2, 3, 4)), _matrix(10, (2, 4, 5))
    np.testing.assert_allclose(_np(fw.bmm(T(b1), T(b2))), b1 @ b2)
    np.testing.assert_allclose(_np(fw.mm(T(b1), T(b2))), b1 @ b2)
    np.testing.assert_allclose(_np(fw.outer(T(b1), T(x))), np.outer(b1, x))
    np.testing.assert_allclose(_np(fw.inner(T(b1), T(b2[0].T))), np.inner(b1, b2[0].T))
    assert fw.inner(T(2.0), T(x)).shape == [4, 3]
    with pytest.raises(InvalidArgumentError, match="^bmm: .*3-D"):
        fw.bmm(T(x), T(b2))
    with pytest.raises(InvalidArgumentError, match="^dot: .*same shape"):
        fw.dot(T(x), T(y[:, :2]))


def test_vecdot_conjugates_and_broadcasts():
    x = _matrix(11, (2, 3), cplx=True)
    y = _matrix(12, (3,), cplx=True)
    np.testing.assert_allclose(_np(L.vecdot(T(x), T(y))), np.sum(np.conj(x) * y, -1))
    np.testing.assert_allclose(_np(fw.vecdot(T(x), T(x), axis=0)),
                               np.sum(np.conj(x) * x, 0))


def test_einsum_forms():
    a, b = _matrix(13, (2, 3)), _matrix(14, (3, 4))
    np.testing.assert_allclose(_np(fw.einsum("ij, jk -> ik", T(a), T(b))), a @ b)
    np.testing.assert_allclose(_np(fw.einsum("ij,jk", T(a), T(b))), a @ b)  # implicit
    np.testing.assert_allclose(_np(fw.einsum("ba", T(a))), a.T)  # implicit output is sorted
    np.testing.assert_allclose(_np(fw.einsum("ii", T(b[:, :3]))), np.trace(b[:, :3]))
    c = _matrix(15, (5, 2, 3))
    np.testing.assert_allclose(_np(fw.einsum("...ij,jk->...ik", T(c), T(b))), c @ b)
    np.testing.assert_allclose(_np(fw.einsum("ij,jk,kl->il", T(a), T(b), T(b.T))),
                               a @ b @ b.T)
    np.testing.assert_allclose(_np(fw.einsum("i,i->", [T(a[0]), T(a[1])])), a[0] @ a[1])
    # a size-1 dimension broadcasts against its label's size
    np.testing.assert_allclose(_np(fw.einsum("ij,ij->ij", T(a[:1]), T(a))), a[:1] * a)
    with pytest.raises(InvalidArgumentError, match="no '...'"):
        fw.einsum("...ij->ij", T(c))


def test_tensordot_axes_forms():
    x, y = np.arange(24.0).reshape(2, 3, 4), np.arange(36.0).reshape(3, 3, 4)
    np.testing.assert_allclose(_np(fw.tensordot(T(x), T(y), axes=[1, 2])),
                               np.tensordot(x, y, axes=[[1, 2], [1, 2]]))
    np.testing.assert_allclose(_np(fw.tensordot(T(x), T(y.transpose(1, 2, 0)))),
                               np.tensordot(x, y.transpose(1, 2, 0)))
    np.testing.assert_allclose(_np(fw.tensordot(T(x), T(y), axes=0)), np.multiply.outer(x, y))
    # the shorter axes list is extended with the longer one's tail
    a, b = np.arange(720.0).reshape(2, 3, 4, 5, 6), np.arange(720.0).reshape(3, 2, 4, 5, 6)
    np.testing.assert_allclose(_np(fw.tensordot(T(a), T(b), axes=[[0, 1, 3, 4], [1, 0]])),
                               np.tensordot(a, b, axes=[[0, 1, 3, 4], [1, 0, 3, 4]]))
    # contracted sizes of 1 broadcast
    np.testing.assert_allclose(_np(fw.tensordot(T(x[:, :1]), T(y), axes=[[1], [0]])),
                               np.tensordot(x[:, :1].repeat(3, 1), y, axes=[[1], [0]]))


def test_multi_dot_with_vectors_and_order():
    a, b, c = _matrix(16, (10, 100)), _matrix(17, (100, 5)), _matrix(18, (5,))
    np.testing.assert_allclose(_np(L.multi_dot([T(a), T(b), T(c)])), a @ b @ c)
    v = _matrix(19, (10,))
    assert L.multi_dot([T(v), T(a), T(b), T(c)]).shape == []
    np.testing.assert_allclose(_np(L.multi_dot([T(v), T(a), T(b), T(c)])), v @ a @ b @ c)
    with pytest.raises(InvalidArgumentError, match="x\\[1\\]"):
        L.multi_dot([T(a), T(v), T(b)])


def test_norm_dispatch_follows_paddle():
    x = np.arange(24.0).reshape(2, 3, 4) - 12
    t = T(x)
    np.testing.assert_allclose(_np(L.norm(t)), np.linalg.norm(x.ravel()))
    np.testing.assert_allclose(_np(L.norm(t, "fro", axis=-1)), np.linalg.norm(x, axis=-1))
    np.testing.assert_allclose(_np(L.norm(t, 0, axis=1)), np.sum(x != 0, axis=1))
    np.testing.assert_allclose(_np(L.norm(t, np.inf)), 12.0)
    np.testing.assert_allclose(_np(L.norm(t, axis=[0, 1])),
                               np.linalg.norm(np.moveaxis(x, (0, 1), (-2, -1)), axis=(-2, -1)))
    np.testing.assert_allclose(_np(L.norm(t, "nuc", axis=(1, 2), keepdim=True)),
                               np.linalg.norm(x, "nuc", axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(_np(L.vector_norm(t, p=3, axis=[0, 2])),
                               np.sum(np.abs(x) ** 3, axis=(0, 2)) ** (1 / 3))
    for p in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        np.testing.assert_allclose(_np(L.matrix_norm(t, p, axis=[0, 2])),
                                   np.linalg.norm(np.moveaxis(x, (0, 2), (-2, -1)), p,
                                                  axis=(-2, -1)), rtol=1e-10)
    z = T(_matrix(20, (3,), cplx=True))
    assert L.norm(z).dtype == fw.float64
    np.testing.assert_allclose(_np(fw.dist(T(x), T(np.ones(4)), p=1)),
                               np.abs(x - 1).sum())


def test_cond_and_rank():
    a = _well(21, (2,), 4)
    for p in (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf):
        np.testing.assert_allclose(_np(L.cond(T(a), p)), np.linalg.cond(a, p), rtol=1e-9)
    r = L.matrix_rank(T(np.ones((3, 4, 5, 5))), tol=0.01, hermitian=True)
    assert r.dtype == fw.int32 and r.tolist() == [[1] * 4] * 3
    low = _matrix(22, (6, 2)) @ _matrix(23, (2, 5))
    assert L.matrix_rank(T(low)).item() == 2
    assert L.matrix_rank(T(low), atol=1e3).item() == 0
    assert L.matrix_rank(T(np.eye(4)), rtol=0.5).item() == 4


def test_lstsq_outputs_per_driver():
    x, y = _matrix(24, (2, 6, 3)), _matrix(25, (2, 6, 2))
    for drv in (None, "gels", "gelsd", "gelss"):
        sol, res, rank, sv = L.lstsq(T(x), T(y), driver=drv)
        np.testing.assert_allclose(_np(sol), np.linalg.pinv(x) @ y, atol=1e-10)
        np.testing.assert_allclose(_np(res), np.sum((x @ _np(sol) - y) ** 2, axis=-2),
                                   atol=1e-10)
        assert rank.shape == ([0] if drv == "gels" else [2]) and rank.dtype == fw.int32
        assert sv.shape == ([2, 3] if drv in ("gelsd", "gelss") else [0])
    # rank-deficient or under-determined: no residuals
    assert L.lstsq(T(x[0, :2]), T(y[0, :2]))[1].shape == [0]
    deficient = np.concatenate([x[0, :, :1], x[0, :, :1]], axis=1)
    sol, res, rank, _ = L.lstsq(T(deficient), T(y[0]))
    assert rank.item() == 1 and res.shape == [0]


def test_lstsq_default_rcond_is_eps_times_the_larger_size():
    # Paddle/LAPACK/NumPy: singular values at most eps * max(m, n) * s_max are dropped.
    # A singular value of 8e-16 lies between eps (2.2e-16) and 6 * eps (1.3e-15).
    u = np.linalg.qr(_matrix(30, (6, 3)))[0]
    v = np.linalg.qr(_matrix(31, (3, 3)))[0]
    x = u @ np.diag([1.0, 8e-16, 0.5]) @ v.T
    y = _matrix(32, (6, 2))
    want = np.linalg.lstsq(x, y, rcond=None)
    assert want[2] == 2
    for drv in ("gelsy", "gelsd"):
        sol, _, rank, _ = L.lstsq(T(x), T(y), driver=drv)
        assert rank.item() == 2
        np.testing.assert_allclose(_np(sol), want[0], atol=1e-8)
    # all singular values zero: rank 0 (none is above 0 * rcond), solution 0
    sol, _, rank, _ = L.lstsq(T(np.zeros((4, 3))), T(y[:4]))
    assert rank.item() == 0 and not _np(sol).any()


def test_cov_and_corrcoef_match_numpy():
    x = _matrix(26, (3, 7))
    fwts, awts = np.array([1, 2, 1, 3, 1, 1, 2]), np.random.default_rng(0).random(7)
    np.testing.assert_allclose(_np(L.cov(T(x))), np.cov(x))
    np.testing.assert_allclose(_np(L.cov(T(x), rowvar=False)), np.cov(x, rowvar=False))
    np.testing.assert_allclose(_np(L.cov(T(x), ddof=False, fweights=T(fwts), aweights=T(awts))),
                               np.cov(x, ddof=0, fweights=fwts, aweights=awts))
    np.testing.assert_allclose(_np(L.cov(T(x), fweights=T(fwts), aweights=T(awts))),
                               np.cov(x, fweights=fwts, aweights=awts))
    assert L.cov(T(x[0])).shape == [] and L.cov(T(x[:1])).shape == []
    assert L.cov(T([[1, 2, 3], [2, 4, 7]])).dtype == fw.float32  # ints use the default float
    np.testing.assert_allclose(_np(L.corrcoef(T(x))), np.corrcoef(x))
    np.testing.assert_allclose(_np(L.corrcoef(T(x), rowvar=False)), np.corrcoef(x, rowvar=False))
    with pytest.raises(InvalidTypeError, match="fweights"):
        L.cov(T(x), fweights=T(awts))


def test_cdist_matches_scipy_and_trace():
    from scipy.spatial.distance import cdist as sp_cdist

    x, y = _matrix(27, (30, 3)), _matrix(28, (4, 3))
    for p, metric in ((2.0, "euclidean"), (1.0, "cityblock"), (3.0, "minkowski"),
                      (np.inf, "chebyshev")):
        kw = {"p": 3.0} if metric == "minkowski" else {}
        want = sp_cdist(x, y, metric, **kw)
        for mode in ("use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist"):
            np.testing.assert_allclose(_np(fw.cdist(T(x), T(y), p=p, compute_mode=mode)), want,
                                       atol=1e-10)
    np.testing.assert_allclose(_np(fw.cdist(T(x), T(y), p=0.0)), sp_cdist(x, y, "hamming") * 3)
    t = _matrix(29, (2, 4, 5))
    np.testing.assert_allclose(_np(fw.trace(T(t), offset=1, axis1=1, axis2=2)),
                               np.trace(t, 1, 1, 2))
    assert fw.trace(T(np.arange(9, dtype=np.int32).reshape(3, 3))).dtype == fw.int32


# ---------------------------------------------------------------- programs
def test_compositions_build_programs():
    """Composite public functions (norm, tensordot, multi_dot, cond) trace into
    programs made of ops, and the executor reproduces the eager result."""
    a, b = _matrix(30, (3, 4)), _matrix(31, (4, 4))

    def fn(x, y):
        return (fw.linalg.norm(x, axis=[0, 1]) + fw.tensordot(x, y, axes=1).sum()
                + fw.linalg.multi_dot([x, y, y]).sum() + fw.linalg.cond(y)
                + fw.linalg.svdvals(y).sum() + fw.dot(x, x).sum())

    prog = trace(fn, [TensorType([3, 4], "float64"), TensorType([4, 4], "float64")])
    got = run(prog, T(a), T(b))
    got = got[0] if isinstance(got, (tuple, list)) else got
    want = fn(T(a), T(b))
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-10)


def test_lowrank_factorisations():
    low = _matrix(32, (2, 8, 2)) @ _matrix(33, (2, 2, 5))
    u, s, v = L.svd_lowrank(T(low), q=2)
    assert (u.shape, s.shape, v.shape) == ([2, 8, 2], [2, 2], [2, 5, 2])
    np.testing.assert_allclose((_np(u) * _np(s)[..., None, :]) @ np.swapaxes(_np(v), -1, -2),
                               low, atol=1e-10)
    shift = np.ones((8, 5))
    u, s, v = L.svd_lowrank(T(low + shift), q=2, M=T(shift))
    np.testing.assert_allclose(_np(s), np.linalg.svd(low, compute_uv=False)[..., :2])
    u, s, v = L.pca_lowrank(T(low))
    centered = low - low.mean(axis=-2, keepdims=True)
    np.testing.assert_allclose(_np(s), np.linalg.svd(centered, compute_uv=False), atol=1e-10)
    with pytest.raises(InvalidArgumentError, match="q=9"):
        L.svd_lowrank(T(low), q=9)
