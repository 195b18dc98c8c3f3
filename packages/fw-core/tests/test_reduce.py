"""Focused tests of the reduction family: Paddle's dtype rules and argument forms,
and values against NumPy formulas (the generic record tests check infer and the
executor; these check the semantics)."""

import numpy as np
import pytest

import fw
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ir import TensorType, trace
from fw.core.ops import OPS

RNG = np.random.default_rng(0)


def t(a, dtype=None):
    return fw.to_tensor(np.asarray(a), dtype=dtype)


def close(got, want, **kw):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), equal_nan=True,
                               **kw)


# ---------------------------------------------------------------- dtype rules
@pytest.mark.parametrize("src,want", [("int32", fw.int64), ("bool", fw.int64),
                                      ("int8", fw.int64), ("float32", fw.float32),
                                      ("float16", fw.float16)])
def test_sum_dtype_rules(src, want):
    assert fw.sum(t([1, 2, 3], src)).dtype == want
    assert fw.nansum(t([1, 2, 3], src)).dtype == want


def test_sum_dtype_argument_and_axis_forms():
    x = t(np.arange(24).reshape(2, 3, 4), "int32")
    r = fw.sum(x, axis=[0, -1], dtype="float64", keepdim=True)
    assert r.dtype == fw.float64 and r.shape == [1, 3, 1]
    close(r, np.arange(24).reshape(2, 3, 4).sum(axis=(0, 2), keepdims=True))
    close(fw.sum(x, axis=(2, 0)), np.arange(24).reshape(2, 3, 4).sum(axis=(0, 2)))
    close(x.sum(axis=t([1])), np.arange(24).reshape(2, 3, 4).sum(axis=1))
    assert fw.sum(x, axis=[]).shape == []  # an empty axis list reduces everything
    # Paddle lets a 0-D tensor be reduced over axis 0 / -1
    assert fw.sum(t(5.0), axis=0).shape == [] and fw.max(t(5.0), axis=-1).item() == 5.0


def test_float16_sum_accumulates_in_float32():
    x = t(np.full(4096, 0.1, np.float16))
    r = fw.sum(x)
    assert r.dtype == fw.float16
    assert abs(float(r.item()) - 409.6) < 0.5  # float16 accumulation would stall near 256


def test_prod_keeps_dtype_and_mean_promotes_ints():
    assert fw.prod(t([2, 3], "int32")).dtype == fw.int32
    assert fw.prod(t([2, 3], "int32"), dtype="int64").dtype == fw.int64
    m = fw.mean(t([1, 2], "int64"))
    assert m.dtype == fw.get_default_dtype() and m.item() == 1.5


def test_mean_of_nothing_is_nan_without_warning():
    r = fw.mean(t(np.zeros((0, 3), np.float32)), axis=0)
    assert r.shape == [3] and np.isnan(r.numpy()).all()


def test_nanmean_and_nansum():
    a = np.array([[np.nan, 0.3, 0.5, 0.9], [0.1, 0.2, np.nan, 0.7]], np.float32)
    close(fw.nansum(t(a), axis=1), np.nansum(a, axis=1), rtol=1e-6)
    close(fw.nanmean(t(a), axis=0), np.array([0.1, 0.25, 0.5, 0.8]), rtol=1e-6)
    assert np.isnan(fw.nanmean(t([np.nan, np.nan])).item())


# ---------------------------------------------------------------- extremes and arg-reductions
def test_max_and_amax_agree_and_propagate_nan():
    a = np.array([[0.1, 0.9, 0.9], [np.nan, 0.2, 0.3]], np.float64)
    for f in (fw.max, fw.amax):
        close(f(t(a), axis=1), [0.9, np.nan])
        close(f(t(a), axis=0, keepdim=True), [[np.nan, 0.9, 0.9]])
    for f in (fw.min, fw.amin):
        close(f(t(a), axis=[0, 1]), np.nan)
    assert "gradient" in fw.amax.__doc__ and "gradient" in fw.max.__doc__


def test_max_over_nothing_is_an_error():
    with pytest.raises(InvalidArgumentError, match="max.*zero elements"):
        fw.max(t(np.zeros((2, 0), np.float32)), axis=1)
    assert fw.max(t(np.zeros((0, 2), np.float32)), axis=1).shape == [0]


def test_argmax_forms():
    a = np.array([[1, 7, 7], [9, 2, 9]])
    assert fw.argmax(t(a)).item() == 3 and fw.argmax(t(a)).shape == []
    assert fw.argmax(t(a), keepdim=True).shape == [1, 1]
    close(fw.argmax(t(a), axis=1), [1, 0])  # the first among ties
    r = fw.argmin(t(a), axis=0, keepdim=True, dtype="int32")
    assert r.dtype == fw.int32 and r.shape == [1, 3]
    close(r, [[0, 1, 0]])


def test_all_any_count_nonzero():
    a = np.array([[0.0, 1.5], [2.0, np.nan]])
    close(fw.all(t(a), axis=1), [False, True])
    close(fw.any(t(a), axis=0), [True, True])
    assert fw.any(t(np.zeros((0,), bool))).item() is False
    assert fw.all(t(np.zeros((0,), bool))).item() is True
    r = fw.count_nonzero(t(a), axis=0, keepdim=True)
    assert r.dtype == fw.int64
    close(r, [[1, 2]])


# ---------------------------------------------------------------- moments
@pytest.mark.parametrize("unbiased", [True, False])
def test_std_var_match_numpy(unbiased):
    a = RNG.standard_normal((4, 5))
    ddof = 1 if unbiased else 0
    close(fw.var(t(a), axis=1, unbiased=unbiased), a.var(axis=1, ddof=ddof), rtol=1e-12)
    close(fw.std(t(a), axis=[0, 1], unbiased=unbiased), a.std(ddof=ddof), rtol=1e-12)
    assert fw.std(t([1, 2, 3, 4], "int64")).dtype == fw.get_default_dtype()


def test_logsumexp_is_stable():
    a = np.array([[1000.0, 1000.0], [-np.inf, -np.inf], [0.0, np.log(3.0)]])
    close(fw.logsumexp(t(a), axis=1), [1000.0 + np.log(2.0), -np.inf, np.log(4.0)], rtol=1e-12)
    x = np.array([[-1.5, 0.0, 2.0], [3.0, 1.2, -2.4]], np.float32)
    close(fw.logsumexp(t(x), 1, keepdim=True), np.log(np.exp(x).sum(1, keepdims=True)),
          rtol=1e-6)
    assert fw.logsumexp(t(np.zeros((2, 0), np.float32)), axis=1).numpy().tolist() == \
        [-np.inf, -np.inf]


# ---------------------------------------------------------------- cumulative ops
def test_cumsum_cumprod():
    a = np.arange(12).reshape(3, 4)
    close(fw.cumsum(t(a)), np.cumsum(a))  # axis None flattens
    close(fw.cumsum(t(a), axis=0), np.cumsum(a, 0))
    assert fw.cumsum(t(a), dtype="float64").dtype == fw.float64
    assert fw.cumsum(t(a, "int32"), axis=1).dtype == fw.int32
    assert fw.cumsum(t([True, True])).dtype == fw.int64
    close(fw.cumprod(t(a + 1.0), dim=1), np.cumprod(a + 1.0, 1))
    close(fw.logcumsumexp(t(a * 1.0), axis=1), np.logaddexp.accumulate(a * 1.0, 1))
    x = t(a * 1.0)
    x.cumsum_(axis=0)
    close(x, np.cumsum(a, 0))


def test_cummax_cummin_indices():
    d = np.array([-1, 5, 0, -2, -3, 2]).reshape(2, 3)
    v, i = fw.cummax(t(d))
    close(v, [-1, 5, 5, 5, 5, 5])
    close(i, [0, 1, 1, 1, 1, 1])
    v, i = fw.cummax(t(d), axis=-1)
    close(v, [[-1, 5, 5], [-2, -2, 2]])
    close(i, [[0, 1, 1], [0, 0, 2]])
    v, i = fw.cummin(t(d), axis=0, dtype="int32")
    assert i.dtype == fw.int32
    close(i, [[0, 0, 0], [1, 1, 0]])
    # ties move the index to the later element; NaN propagates and keeps its index
    v, i = fw.cummax(t([1.0, 3.0, 3.0, np.nan, 5.0]))
    close(v, [1.0, 3.0, 3.0, np.nan, np.nan])
    close(i, [0, 1, 2, 3, 3])


# ---------------------------------------------------------------- order statistics
def test_median_modes_and_dtypes():
    x = t(np.arange(12).reshape(3, 4))
    r = fw.median(x)
    assert r.dtype == fw.float32 and r.item() == 5.5
    close(fw.median(x, axis=1), [1.5, 5.5, 9.5])
    v, i = fw.median(x, axis=1, mode="min")
    assert v.dtype == fw.int64
    close(v, [1, 5, 9])
    close(i, [1, 1, 1])
    assert fw.median(t([1.0, 2.0], "float64")).dtype == fw.float64
    assert np.isnan(fw.median(t([1.0, np.nan, 2.0])).item())
    assert not isinstance(fw.median(x, mode="min"), tuple)  # axis None: values only


def test_nanmedian_matches_numpy():
    a = np.array([[np.nan, 2.0, 3.0], [0.0, 1.0, 2.0]])
    close(fw.nanmedian(t(a)), np.nanmedian(a))
    close(fw.nanmedian(t(a), 0), np.nanmedian(a, 0))
    close(fw.nanmedian(t(a), (0, 1)), np.nanmedian(a))
    v, i = fw.nanmedian(t(a), 0, mode="min")
    close(v, [0.0, 1.0, 2.0])
    close(i, [1, 1, 1])
    v, i = fw.nanmedian(t(a), 1, mode="min")
    close(v, [2.0, 1.0])
    close(i, [1, 1])


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint"])
def test_quantile_matches_numpy(method):
    a = RNG.standard_normal((4, 7))
    for q in (0.0, 0.3, 0.5, 1.0, [0.25, 0.8]):
        close(fw.quantile(t(a), q, axis=1, interpolation=method),
              np.quantile(a, q, axis=1, method=method), rtol=1e-12)
    a[0, 0] = np.nan
    close(fw.nanquantile(t(a), [0.3, 0.5], axis=[0, 1], keepdim=True, interpolation=method),
          np.nanquantile(a, [0.3, 0.5], axis=(0, 1), keepdims=True, method=method),
          rtol=1e-12)
    assert np.isnan(fw.quantile(t(a), 0.5, axis=1).numpy()[0])


def test_quantile_nearest_rounds_halves_up_and_ints_become_float():
    r = fw.quantile(t([0.0, 1.0, 2.0, 3.0]), 0.5, interpolation="nearest")  # position 1.5
    assert r.item() == 2.0
    q = fw.quantile(t([1, 2, 3, 4]), 0.5)
    assert q.dtype == fw.get_default_dtype() and q.item() == 2.5
    y5 = fw.nanquantile(t(np.full((2, 3), np.nan, np.float32)), q=0.8, axis=1, keepdim=True)
    assert y5.shape == [2, 1] and np.isnan(y5.numpy()).all()


# ---------------------------------------------------------------- reduce_as / diff / trapezoid
def test_reduce_as():
    x = RNG.standard_normal((2, 3, 4))
    close(fw.reduce_as(t(x), t(np.zeros((3, 1)))), x.sum(axis=(0, 2)).reshape(3, 1),
          rtol=1e-12)
    r = fw.reduce_as(t([[1, 2, 3, 4], [5, 6, 7, 8]], "int32"), t([1, 2, 3, 4]))
    assert r.dtype == fw.int32
    close(r, [6, 8, 10, 12])
    with pytest.raises(InvalidArgumentError, match="must broadcast"):
        fw.reduce_as(t(x), t(np.zeros(5)))


def test_diff_matches_numpy():
    x = np.array([1, 4, 5, 2])
    y = np.array([7, 9])
    close(fw.diff(t(x)), np.diff(x))
    close(fw.diff(t(x), n=2), np.diff(x, 2))
    close(fw.diff(t(x), n=3, append=t(y)), np.diff(np.r_[x, y], 3))
    close(fw.diff(t(x), prepend=t(y), append=t(y)), np.diff(np.r_[y, x, y]))
    z = np.array([[1, 2, 3], [4, 5, 6]])
    close(fw.diff(t(z), axis=0), np.diff(z, axis=0))
    close(fw.diff(t([True, True, False])), [False, True])
    assert fw.diff(t(x), n=6).shape == [0]


def test_trapezoid():
    y = np.array([4.0, 5.0, 6.0], np.float32)
    assert fw.trapezoid(t(y)).item() == 10.0
    assert fw.trapezoid(t(y), dx=2.0).item() == 20.0
    close(fw.trapezoid(t([1.0, 2.0, 3.0], "float64"), t([8.0, 6.0, 4.0], "float64")), -8.0)
    yy = np.arange(6, dtype=np.float32).reshape(2, 3)
    close(fw.trapezoid(t(yy), axis=0), np.trapezoid(yy, axis=0))
    xx = np.array([[0.0, 1.0, 3.0], [0.0, 2.0, 3.0]], np.float32)
    close(fw.trapezoid(t(yy), t(xx), axis=1), np.trapezoid(yy, xx, axis=1))
    c = fw.cumulative_trapezoid(t(yy), t([0.0, 1.0, 3.0]), axis=1)
    close(c, [[0.5, 3.5], [3.5, 12.5]])
    with pytest.raises(InvalidArgumentError, match="not both"):
        fw.trapezoid(t(y), t(y), dx=1.0)


# ---------------------------------------------------------------- counting
def test_bincount_and_histograms():
    x = np.array([1, 2, 1, 4, 5])
    close(fw.bincount(t(x)), np.bincount(x))
    w = np.array([2.1, 0.4, 0.1, 0.5, 0.5], np.float32)
    r = fw.bincount(t(x), weights=t(w), minlength=8)
    assert r.dtype == fw.float32 and r.shape == [8]
    close(r, np.bincount(x, w, 8), rtol=1e-6)
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        fw.bincount(t([1, -1]))
    h = fw.histogram(t([1, 2, 1]), bins=4, min=0, max=3)
    assert h.dtype == fw.int64
    close(h, [0, 2, 1, 0])
    d = np.array([0.5, 1.5, 1.7, 9.0, -3.0], np.float32)
    hd = fw.histogram(t(d), bins=3, min=0.0, max=2.0, density=True)
    close(hd, np.histogram(d, 3, (0.0, 2.0), density=True)[0], rtol=1e-6)
    close(fw.histogram_bin_edges(t(d), bins=2), [-3.0, 3.0, 9.0])


def test_histogramdd():
    x = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]], np.float32)
    w = np.array([1.0, 2.0, 4.0, 8.0], np.float32)
    hist, edges = fw.histogramdd(t(x), bins=[3, 3], weights=t(w))
    want, wedges = np.histogramdd(x, bins=[3, 3], weights=w)
    close(hist, want)
    assert len(edges) == 2 and edges[0].dtype == fw.float32
    close(edges[1], wedges[1], rtol=1e-6)
    y = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], np.float32)
    hist, _ = fw.histogramdd(t(y), bins=[2, 2], ranges=[0.0, 1.0, 0.0, 1.0], density=True)
    close(hist, np.histogramdd(y, [2, 2], [(0, 1), (0, 1)], density=True)[0])
    e = [t([0.0, 1.0, 3.0]), t([0.0, 2.0])]
    hist, edges = fw.histogramdd(t(x), bins=e)
    assert hist.shape == [2, 1] and edges is not e and edges[0] is e[0]
    close(hist, np.histogramdd(x, bins=[[0, 1, 3], [0, 2]])[0])
    # the same in a program: the declared shape is one bin fewer than each edge tensor
    prog = trace(lambda x, e0, e1: fw.histogramdd(x, bins=[e0, e1])[0],
                 [TensorType([4, 2], "float32"), TensorType([3], "float32"),
                  TensorType([2], "float32")])
    assert [list(v.type.shape) for v in prog.outputs] == [[2, 1]]
    # ranges are (min, max) per dimension; a min above its max is refused
    with pytest.raises(InvalidArgumentError, match="'ranges' has min"):
        fw.histogramdd(t(y), bins=[2, 2], ranges=[0.0, 1.0, 1.0, 0.5])
    with pytest.raises(InvalidArgumentError, match="'ranges' has min"):
        fw.histogramdd(t(y), bins=[2, 2], ranges=[2.0, 1.0, 0.0, 1.0])


# ---------------------------------------------------------------- program building and hot path
def test_reductions_trace_with_dynamic_dims():
    def fn(x):
        v, i = fw.cummax(x, axis=1)
        return fw.sum(x, axis=1), fw.median(x, axis=0), v, fw.quantile(x, [0.5, 0.9], axis=1)

    prog = trace(fn, [TensorType([-1, 4], _dt.float32)])
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    got = fw.core.ir.run(prog, t(a))
    want = fn(t(a))
    for g, w in zip(got, want):
        close(g, w.numpy())


def test_axis_canon_leaves_common_attrs_untouched():
    attrs = {"axis": 1, "dtype": None, "keepdim": False}
    assert OPS["sum"].canon.raw(attrs) is attrs
    attrs = {"axis": None, "keepdim": True}
    assert OPS["max"].canon.raw(attrs) is attrs
    assert OPS["sum"].canon.raw({"axis": [1, 0], "dtype": "int64", "keepdim": False}) == \
        {"axis": (1, 0), "dtype": fw.int64, "keepdim": False}


def test_methods_exist():
    x = t(np.arange(6.0).reshape(2, 3))
    assert x.sum().item() == 15.0 and x.max(axis=0).shape == [3]
    assert x.median(axis=1).shape == [2] and x.logsumexp().shape == []
    assert x.quantile(0.5).item() == 2.5 and x.nanmedian().item() == 2.5
