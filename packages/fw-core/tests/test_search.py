"""Focused tests of search and sort ops: ordering of ties and NaN, Paddle's
argument forms and multi-result wrappers, values against NumPy."""

import numpy as np
import pytest

import fw
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ir import TensorType, trace

RNG = np.random.default_rng(1)


def t(a, dtype=None):
    return fw.to_tensor(np.asarray(a), dtype=dtype)


def eq(got, want):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def test_sort_directions_nan_and_stability():
    a = np.array([3.0, np.nan, 1.0, 3.0, 2.0])
    eq(fw.sort(t(a)), [1.0, 2.0, 3.0, 3.0, np.nan])
    eq(fw.sort(t(a), descending=True), [np.nan, 3.0, 3.0, 2.0, 1.0])
    eq(fw.argsort(t(a), descending=True, stable=True), [1, 0, 3, 4, 2])  # ties keep order
    eq(fw.argsort(t(a)), [2, 4, 0, 3, 1])
    x = RNG.integers(0, 4, (3, 5, 2))
    for ax in (0, 1, -1):
        eq(fw.sort(t(x), axis=ax), np.sort(x, axis=ax))
        eq(fw.argsort(t(x), axis=ax, stable=True), np.argsort(x, axis=ax, kind="stable"))
    eq(fw.sort(t(np.float16([2, 1]))), np.float16([1, 2]))


def test_msort_and_out():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    eq(fw.msort(t(x)), np.sort(x, axis=0))
    out = fw.to_tensor(np.zeros_like(x))
    r = fw.msort(input=t(x), out=out)
    assert r is out
    eq(out, np.sort(x, axis=0))


def test_topk():
    x = np.array([[1.0, 4.0, 5.0, 7.0], [2.0, 6.0, 2.0, 5.0]])
    v, i = fw.topk(t(x), k=2)
    eq(v, [[7.0, 5.0], [6.0, 5.0]])
    eq(i, [[3, 2], [1, 3]])
    v, i = fw.topk(t(x), k=1, axis=0, largest=False)
    eq(v, [[1.0, 4.0, 2.0, 5.0]])
    eq(i, [[0, 0, 1, 1]])
    v, i = fw.topk(t(x[1]), k=2, largest=False)  # ties: the lower index first
    eq(i, [0, 2])
    v, _ = fw.topk(t(x), k=t(np.int64(3)))
    assert v.shape == [2, 3]
    with pytest.raises(InvalidArgumentError, match="'k'=5"):
        fw.topk(t(x), k=5)


def test_kthvalue_and_mode():
    x = RNG.standard_normal((3, 6))
    v, i = fw.kthvalue(t(x), k=2)
    eq(v, np.sort(x, axis=-1)[:, 1])
    eq(np.take_along_axis(x, i.numpy()[:, None], 1)[:, 0], v.numpy())
    v, i = fw.kthvalue(t(x), k=3, axis=0, keepdim=True)
    assert v.shape == [1, 6] and i.dtype == fw.int64
    m = np.array([[[1, 2, 2], [2, 3, 3]], [[0, 5, 5], [9, 9, 0]]], np.float32)
    v, i = fw.mode(t(m), 2)
    eq(v, [[2.0, 3.0], [5.0, 9.0]])
    eq(i, [[2, 2], [2, 1]])  # the last occurrence
    v, i = fw.mode(t([3, 1, 3, 1]), keepdim=True)  # equally frequent: the smallest value
    eq(v, [1])
    eq(i, [3])


def test_unique_results_and_inverse():
    x = np.array([2, 3, 3, 1, 5, 3])
    eq(fw.unique(t(x)), [1, 2, 3, 5])
    out, index, inverse, counts = fw.unique(t(x), return_index=True, return_inverse=True,
                                            return_counts=True)
    eq(index, [3, 0, 1, 4])
    eq(inverse, [1, 2, 2, 0, 3, 2])
    eq(counts, [1, 1, 3, 1])
    out, counts = fw.unique(t(x), return_counts=True, dtype="int32")
    assert counts.dtype == fw.int32
    m = np.array([[2, 1, 3], [3, 0, 1], [2, 1, 3]])
    eq(fw.unique(t(m)), [0, 1, 2, 3])
    u, inv = fw.unique(t(m), axis=0, return_inverse=True)
    eq(u, [[2, 1, 3], [3, 0, 1]])
    eq(inv, [0, 1, 0])
    u, inv = fw.unique(t(m), return_inverse=True)
    eq(u.numpy()[inv.numpy()], m.reshape(-1))  # inverse is over the flattened input


def test_unique_consecutive():
    x = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    eq(fw.unique_consecutive(t(x)), [1, 2, 3, 1, 2])
    _, inverse, counts = fw.unique_consecutive(t(x), return_inverse=True, return_counts=True)
    eq(inverse, [0, 0, 1, 1, 2, 3, 3, 4])
    eq(counts, [2, 2, 1, 2, 1])
    m = np.array([[2, 1, 3], [3, 0, 1], [2, 1, 3], [2, 1, 3]])
    eq(fw.unique_consecutive(t(m), axis=0), m[:3])
    eq(fw.unique_consecutive(t(m), axis=1), m)


def test_searchsorted_and_bucketize():
    seq = np.array([1, 3, 5, 7, 9])
    vals = np.array([[3, 6, 9], [3, 6, 10]])
    eq(fw.searchsorted(t(seq), t(vals)), np.searchsorted(seq, vals))
    r = fw.searchsorted(t(seq), t(vals), out_int32=True, right=True)
    assert r.dtype == fw.int32
    eq(r, np.searchsorted(seq, vals, side="right"))
    seq2 = np.array([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
    eq(fw.searchsorted(t(seq2), t(vals)), [[1, 3, 4], [1, 2, 4]])
    eq(fw.bucketize(t(vals), t(seq)), np.searchsorted(seq, vals))
    eq(t(vals).bucketize(t(seq), right=True), np.searchsorted(seq, vals, side="right"))
    with pytest.raises(InvalidArgumentError, match="1-D"):
        fw.bucketize(t(vals), t(seq2))
    with pytest.raises(InvalidArgumentError, match="leading dimensions"):
        fw.searchsorted(t(seq2), t(np.zeros((3, 2))))


def test_nonzero_and_argwhere():
    x = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
    eq(fw.nonzero(t(x)), [[0, 0], [1, 1], [2, 2]])
    parts = fw.nonzero(t(x), as_tuple=True)
    # Paddle 3.3.1 gives 1-D [z] tensors (checked against the real paddle.nonzero)
    assert len(parts) == 2 and parts[0].shape == [3]
    eq(parts[1], [0, 1, 2])
    rows, cols = fw.where(t(x) > 1.5)
    assert rows.tolist() == [1, 2] and cols.tolist() == [1, 2]
    eq(fw.argwhere(t([0.0, 1.0, 0.0, 3.0])), [[1], [3]])
    assert fw.nonzero(t(np.zeros((2, 0)))).shape == [0, 2]


def test_search_ops_trace_with_dynamic_sizes():
    def fn(x):
        return fw.unique(x), fw.nonzero(x), fw.sort(x, descending=True)

    prog = trace(fn, [TensorType([-1], _dt.int64)])
    texts = str(prog)
    assert "unique" in texts and "nonzero" in texts
    x = np.array([0, 3, 3, 1])
    got = fw.core.ir.run(prog, t(x))
    eq(got[0], [0, 1, 3])
    eq(got[1], [[1], [2], [3]])
    eq(got[2], [3, 3, 1, 0])
