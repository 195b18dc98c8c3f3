"""Issue 16's last Paddle names of ``paddle`` and ``paddle.Tensor``: in-place dtype and
shape changes, random fills, diagonal fills, storage views, float8 and the wider uint
dtypes, MmapStorage, top_p_sampling, fp8 GEMM and the descriptive members. Values
against real Paddle 3.3.1 (fixtures/paddle_tensor_methods.json, written by
gen_tensor_methods_fixture.py) or NumPy; gradients of the in-place ops checked."""

import json
import pathlib

import numpy as np
import pytest

import fw
from fw.core.dtypes import promote_types
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError

FIX = json.loads((pathlib.Path(__file__).resolve().parent / "fixtures" /
                  "paddle_tensor_methods.json").read_text())
C = FIX["cases"]


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
def test_float8_casts_match_paddle(name):
    d = getattr(fw, name)
    a = fw.to_tensor(np.array(FIX["float8_in"], np.float32)).astype(d)
    assert a.dtype == d and a.numpy().dtype == d.np
    assert a.astype("float32").tolist() == FIX[name]
    # float8 -> float8 and float8 -> float16 go through exact values
    assert a.astype("float16").astype("float32").tolist() == FIX[name]
    assert fw.finfo(d).bits == 8
    assert promote_types(d, fw.float16) == fw.float16
    assert promote_types(fw.float8_e4m3fn, fw.float8_e5m2) == fw.float32


def test_uint_dtypes_and_tags():
    assert fw.uint16 is fw.bfloat16  # Paddle 3.3: paddle.uint16 is paddle.bfloat16
    t = fw.to_tensor(np.array([1, 2**32 - 1], np.uint32))
    assert t.dtype == fw.uint32 and t.tolist() == [1, 2**32 - 1]
    assert promote_types(fw.uint32, fw.int32) == fw.int64
    assert promote_types(fw.uint64, fw.uint8) == fw.uint64
    assert fw.iinfo(fw.uint64).max == 2**64 - 1
    assert repr(fw.pstring) == "fw.pstring" and fw.raw != fw.pstring
    with pytest.raises(TypeError, match="pstring"):
        fw.zeros([2], dtype=fw.pstring)


def test_cast__and_transpose__match_paddle_and_keep_gradients():
    x = fw.to_tensor([1.5, 2.7, -3.2])
    assert x.cast_("int32") is x
    assert [x.tolist(), str(x.dtype).replace("fw.", "paddle.")] == C["cast_"]
    y = fw.to_tensor(np.arange(6, dtype="float32").reshape(1, 2, 3))
    assert fw.transpose_(y, [2, 0, 1]) is y
    assert [y.tolist(), y.shape] == C["transpose_"]
    # a non-leaf rebound in place keeps its history: d/dx sum(cast(2x, f64)) = 2
    a = fw.to_tensor([1.0, 2.0])
    a.stop_gradient = False
    b = a * 2.0
    b.transpose_([0]).cast_("float64")
    assert b.dtype == fw.float64
    (b * b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 8.0 * np.array([1.0, 2.0]))
    leaf = fw.to_tensor([1.0])
    leaf.stop_gradient = False
    with pytest.raises(InvalidArgumentError, match="cast_: x is a leaf"):
        leaf.cast_("float64")


def test_resize_set_copy_match_paddle():
    for shape, fz in (([2, 3], True), ([3], False), ([2, 2], False)):
        x = fw.to_tensor([1.0, 2.0, 3.0, 4.0])
        assert x.resize_(shape, fill_zero=fz) is x
        assert x.tolist() == C[f"resize_{shape}_{fz}"]
    src = fw.to_tensor([[11.0, 22.0, 33.0], [1.0, 2.0, 3.0]])
    x = fw.to_tensor([1.0])
    assert x.set_(src, [2, 2], [1, 2], 4).tolist() == C["set_strided"]
    x = fw.to_tensor([1.0])
    x.set_(src, [3])
    assert x.tolist() == C["set_shape"]
    src[0, 0] = 99.0  # x shares src's storage
    assert x.tolist()[0] == 99.0
    assert fw.to_tensor([1.0]).set_().shape == [0]
    with pytest.raises(InvalidArgumentError, match="reach outside"):
        fw.to_tensor([1.0]).set_(src, [4], [2])
    with pytest.raises(InvalidArgumentError, match="multiple of the element size"):
        fw.to_tensor([1.0]).set_(src, [2], None, 3)
    y = fw.to_tensor([1.0, 2.0])
    assert y.copy_(fw.to_tensor([5.0, 6.0]), False).tolist() == C["copy_"]
    y.copy_(fw.to_tensor(3))  # broadcast and cast
    assert y.tolist() == [3.0, 3.0]


def test_fill_diagonal_match_paddle():
    x = fw.to_tensor(np.arange(12, dtype="float32").reshape(3, 4))
    assert x.fill_diagonal_(-1.0, offset=-1).tolist() == C["fill_diag_offset_neg"]
    assert fw.zeros([3, 4]).fill_diagonal_(5.0, offset=1).tolist() == C["fill_diag_offset_pos"]
    for wrap in (True, False):
        assert fw.zeros([7, 3]).fill_diagonal_(5.0, wrap=wrap).tolist() == \
            C[f"fill_diag_wrap_{wrap}"]
    assert fw.zeros([3, 3, 3]).fill_diagonal_(2.0).tolist() == C["fill_diag_3d"]
    out = fw.ones([2, 3, 4]).fill_diagonal_tensor(fw.full([3, 2], 7.0), offset=1, dim1=0,
                                                  dim2=2)
    assert out.tolist() == C["fill_diag_tensor"]
    z = fw.zeros([2, 2])
    z.fill_diagonal_tensor_(fw.to_tensor([7.0, 8.0]))
    assert z.tolist() == C["fill_diag_tensor_"]
    with pytest.raises(InvalidArgumentError, match="all sizes equal"):
        fw.zeros([2, 3, 4]).fill_diagonal_(1.0)
    # gradient of the out-of-place form wrt the diagonal values
    y = fw.to_tensor([1.0, 2.0])
    y.stop_gradient = False
    (fw.zeros([2, 2]).fill_diagonal_tensor(y) * fw.to_tensor([[3.0, 0], [0, 5.0]])).sum() \
        .backward()
    assert y.grad.tolist() == [3.0, 5.0]


def test_random_fills_distributions():
    fw.seed(11)
    c = fw.zeros([40000], "float64").cauchy_(loc=1.0, scale=2.0).numpy()
    # Cauchy quartiles: loc -+ scale
    np.testing.assert_allclose(np.percentile(c, [25, 50, 75]), [-1.0, 1.0, 3.0], atol=0.08)
    g = fw.zeros([40000], "float64").geometric_(0.25).numpy()
    assert g.min() > 0
    # floor(g) ~ failures before success: mean (1-p)/p = 3
    assert abs(np.floor(g).mean() - 3.0) < 0.1
    r = fw.zeros([5000], "int32").random_(3, 7).numpy()
    assert set(np.unique(r).tolist()) == {3, 4, 5, 6} and r.dtype == np.int32
    r = fw.zeros([1000]).random_(5).numpy()
    assert r.min() >= 0 and r.max() <= 4
    f = fw.zeros([1000]).random_().numpy()
    assert f.max() < 2**24 and f.max() > 2**20 and np.all(f == np.floor(f))
    fw.seed(3)
    a = fw.zeros([4]).cauchy_().numpy()
    fw.seed(3)
    np.testing.assert_array_equal(fw.cauchy_(fw.zeros([4])).numpy(), a)
    with pytest.raises(InvalidArgumentError, match="random_ expects"):
        fw.zeros([2]).random_(5, 5)
    with pytest.raises(InvalidArgumentError, match="geometric_: probs"):
        fw.zeros([2]).geometric_(1.5)


def test_top_p_sampling_against_numpy():
    p = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25], [0.05, 0.05, 0.9]], np.float32)
    ps = fw.to_tensor([0.5, 0.7, 0.95])
    counts = np.zeros((3, 3))
    for s in range(300):
        scores, ids = fw.top_p_sampling(fw.to_tensor(p), ps, seed=s)
        assert ids.dtype == fw.int64 and ids.shape == [3, 1]
        np.testing.assert_array_equal(scores.numpy(), np.take_along_axis(p, ids.numpy(), 1))
        counts[np.arange(3), ids.numpy()[:, 0]] += 1
    # row 0: nucleus {1}; row 1: {0, 1} (0.5 < 0.7), drawn 2:1; row 2: {2, 0 or 1}
    assert counts[0].tolist() == [0, 300, 0]
    assert counts[1, 2] == 0 and 160 < counts[1, 0] < 240
    assert counts[2, 2] > 250
    th_scores, th_ids = fw.top_p_sampling(fw.to_tensor(p), fw.to_tensor([1.0, 1.0, 1.0]),
                                          threshold=fw.to_tensor([0.2, 0.3, 0.1]), seed=0)
    assert th_ids.tolist()[0] in ([1], [2]) and th_ids.tolist()[1] == [0]
    *_, top_s, top_i = fw.top_p_sampling(fw.to_tensor(p), ps, seed=0, k=2, return_top=True)
    assert top_i.tolist() == [[1, 2], [0, 1], [2, 0]]


def test_mmap_storage(tmp_path):
    path = tmp_path / "w.bin"
    a = np.arange(20, dtype=np.float32)
    a.tofile(path)
    st = fw.MmapStorage(str(path), a.nbytes)
    t = st.get_slice(dtype=fw.float32, start=2, stop=10, step=3)
    assert t.tolist() == [2.0, 5.0, 8.0]
    assert st.get_slice().shape == [80]  # uint8 bytes by default
    with pytest.raises(InvalidArgumentError, match="in-place|read-only"):
        t.copy_(fw.zeros([3]))
    with pytest.raises(InvalidArgumentError, match="nbytes"):
        fw.MmapStorage(str(path), 81)
    with pytest.raises(InvalidArgumentError, match="get_slice"):
        st.get_slice(fw.float32, 0, 21)


def test_fp8_gemm_against_numpy():
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((3, 5)).astype(np.float32)
    ya = rng.standard_normal((4, 5)).astype(np.float32)
    x = fw.to_tensor(xa).astype(fw.float8_e4m3fn)
    y = fw.to_tensor(ya).astype(fw.float8_e5m2)
    bias = fw.to_tensor(rng.standard_normal(4).astype(np.float32))
    out = fw.linalg.fp8_fp8_half_gemm_fused(x, y, transpose_y=True, bias=bias, scale=0.5,
                                            act="relu", output_dtype="bfloat16")
    xf, yf = x.astype("float32").numpy(), y.astype("float32").numpy()
    ref = np.maximum(0.5 * xf @ yf.T + bias.numpy(), 0)
    assert out.dtype == fw.bfloat16
    np.testing.assert_allclose(out.astype("float32").numpy(), ref, rtol=1e-2, atol=1e-2)
    with pytest.raises(InvalidArgumentError, match="x must be float8"):
        fw.linalg.fp8_fp8_half_gemm_fused(fw.ones([2, 2]), y)
    assert fw.linalg.matmul is fw.matmul


def test_members_match_paddle():
    t = fw.ones([2, 3])
    m = C["members"]
    got = {"get_device": t.get_device(), "is_dist": t.is_dist(), "sparse_dim": t.sparse_dim(),
           "dense_dim": t.dense_dim(), "is_selected_rows": t.is_selected_rows(),
           "layout": t.layout, "inplace_version": t.inplace_version, "device": t.device}
    assert got == m
    assert t.data is t and t.value() is t and t.get_tensor() is t and t.to_dense() is t
    t.data = fw.zeros([2, 3])
    assert t.tolist() == [[0.0] * 3] * 2
    before = t.inplace_version
    t.fill_diagonal_(1.0)
    assert t.inplace_version == before + 1
    assert t.placements is None and t.process_mesh is None and t.grad_fn is None
    a = fw.ones([2])
    a.stop_gradient = False
    assert (a * 2).grad_fn is not None
    for name in ("indices", "values", "nnz", "crows", "cols", "coalesce", "rows"):
        with pytest.raises(InvalidTypeError, match=f"Tensor.{name}: this method is only"):
            getattr(t, name)()
    with pytest.raises(UnsupportedError, match="string tensors"):
        t.set_vocab({"a": 1})
    assert fw.Tensor.create_tensor("int32").shape == [0]
    np.testing.assert_allclose(t.histogramdd(bins=2)[0].numpy(),
                               fw.histogramdd(t, bins=2)[0].numpy())
    sig = fw.to_tensor(np.sin(np.arange(64) / 3.0).astype(np.float32))
    np.testing.assert_allclose(sig.stft(16).numpy(), fw.signal.stft(sig, 16).numpy())


def test_check_shape_static_only():
    from fw.core import ir

    for bad in ([2, 3.5], [2, -1], "23"):  # Paddle 3.3 does not check in dynamic mode
        assert fw.check_shape(bad, "fill_constant") is None
        assert C["check_shape_errors"][repr(bad)] is None

    def f(x):
        fw.check_shape([2, 3.5], "fill_constant")
        return x

    with pytest.raises(TypeError, match="element in 'shape' in fill_constant"):
        ir.trace(f, [ir.TensorType((2,), fw.float32)])


@pytest.mark.parametrize("mod", ["fw.core.api.tensor_methods", "fw.core.api.fp8",
                                 "fw.core.mmap_storage"])
def test_docstring_examples_run(mod, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
