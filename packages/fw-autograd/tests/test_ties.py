"""Gradients at ties and repeated indices, where finite differences cannot look.

`test_grad_records.py` checks every rule against finite differences, but those
need a smooth neighbourhood: the checker moves NaN/Inf away from ties and skips a
point where two step sizes disagree, and the records draw distinct values. So a
rule that mishandles a tie (gives every tied maximum the whole gradient where it
should split it, or the reverse) or a repeated scatter index (gives an
overwritten update a gradient) passes there. Each test here builds exact ties
or duplicate indices and states the expected gradient by hand (or with a few
lines of NumPy that do not use the rule).

The semantics follow Paddle's kernels: ``max``/``min`` give the whole gradient to
every tied extremum and ``amax``/``amin`` split it evenly (Paddle's ``amax``
docs); ``maxout`` and max pooling give it to the first maximum; a scatter that
overwrites gives it to the last update written; the selection ops give it to the
index they return.

Every case runs three ways: the eager first-order backward (which may use the
native ``*_grad`` kernels), the eager backward with ``create_graph=True`` (the
differentiable re-expressions) and the backward emitted into an IR program.
"""

import numpy as np
import pytest

import fw
from fw.core.ir import TensorType, building, run
from fw.core.ops import call

MODES = ["eager", "create_graph", "static"]


def _t(a):
    return fw.to_tensor(np.asarray(a))


def grads(fn, xs, cot, mode):
    """Gradients of sum(fn(*xs) * cot) with respect to each array in xs."""
    xs = [np.asarray(x, dtype=np.float64) for x in xs]
    cot = np.asarray(cot, dtype=np.float64)
    if mode == "static":
        with building() as b:
            vals = [b.add_input(TensorType(list(x.shape), "float64"), f"x{i}")
                    for i, x in enumerate(xs)]
            loss = fw.sum(fn(*vals) * _t(cot))
            gs = fw.grad([loss], vals, allow_unused=True)
            b.set_outputs([g if g is not None else fw.zeros_like(v) for g, v in zip(gs, vals)])
        out = run(b.program, *[_t(x) for x in xs])
        out = out if isinstance(out, tuple) else (out,)
        return [o.numpy() for o in out]
    ts = [fw.to_tensor(x, stop_gradient=False) for x in xs]
    loss = fw.sum(fn(*ts) * _t(cot))
    gs = fw.grad([loss], ts, allow_unused=True, create_graph=(mode == "create_graph"))
    return [np.zeros_like(x) if g is None else g.numpy() for g, x in zip(gs, xs)]


def check(fn, xs, cot, expected, mode):
    got = grads(fn, xs, cot, mode)
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, np.asarray(e, dtype=np.float64), rtol=1e-12, atol=1e-12,
                                   err_msg=f"gradient of input {k} ({mode})")


# ---------------------------------------------------------------- reductions
X = [[1.0, 3.0, 3.0, 2.0],
     [2.0, 2.0, 0.0, 2.0]]
G_ROW = [10.0, 100.0]  # one cotangent per row (axis=1 reductions)


@pytest.mark.parametrize("mode", MODES)
def test_max_min_give_every_tied_extremum_the_whole_gradient(mode):
    check(lambda x: fw.max(x, axis=1), [X], G_ROW,
          [[[0, 10, 10, 0], [100, 100, 0, 100]]], mode)
    check(lambda x: fw.min(x, axis=1, keepdim=True), [X], [[10.0], [100.0]],
          [[[10, 0, 0, 0], [0, 0, 100, 0]]], mode)
    check(lambda x: fw.max(x), [X], 7.0, [[[0, 7, 7, 0], [0, 0, 0, 0]]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_amax_ties(mode):
    # Paddle's amax docs: the gradient is split evenly among the tied maxima
    check(lambda x: fw.amax(x, axis=1), [X], G_ROW,
          [[[0, 5, 5, 0], [100 / 3, 100 / 3, 0, 100 / 3]]], mode)
    x = [[0.1, 0.9, 0.9, 0.9], [0.9, 0.9, 0.6, 0.7]]  # the docs' example: 5 maxima
    check(lambda x: fw.amax(x), [x], 1.0, [[[0, .2, .2, .2], [.2, .2, 0, 0]]], mode)
    check(lambda x: fw.amax(x, axis=0, keepdim=True), [x], [[1.0, 2.0, 3.0, 4.0]],
          [[[0, 1, 3, 4], [1, 1, 0, 0]]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_amin_ties(mode):
    check(lambda x: fw.amin(x, axis=1), [X], G_ROW, [[[10, 0, 0, 0], [0, 0, 100, 0]]], mode)
    x3 = np.array([[[1.0, 1.0], [2.0, 1.0]], [[1.0, 5.0], [1.0, 1.0]]])
    # over axes (1, 2): three minima in the first block, three in the second
    check(lambda x: fw.amin(x, axis=[1, 2]), [x3], [6.0, 30.0],
          [[[[2, 2], [0, 2]], [[10, 0], [10, 10]]]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_inf_norm_ties_split_with_the_sign(mode):
    # |x| ties (3 and -3): Paddle's p_norm_grad divides by the number of them
    x = [[3.0, -3.0, 1.0], [-2.0, 0.5, 2.0]]
    check(lambda x: fw.linalg.vector_norm(x, p=float("inf"), axis=1), [x], [4.0, 10.0],
          [[[2, -2, 0], [-5, 0, 5]]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_clip_gives_no_gradient_at_a_bound(mode):
    # Paddle's clip_grad: the gradient passes strictly inside (min, max) only
    x = [-1.0, 2.0, 0.5, -3.0, 5.0]
    cot = [1.0, 10.0, 100.0, 1000.0, 10000.0]
    check(lambda x: fw.clip(x, -1.0, 2.0), [x], cot, [[0, 0, 100, 0, 0]], mode)
    check(lambda x: fw.clip(x, min=-1.0), [x], cot, [[0, 10, 100, 0, 10000]], mode)
    check(lambda x: fw.clip(x, max=2.0), [x], cot, [[1, 0, 100, 1000, 0]], mode)


# (op, attrs, three points at and around its kinks, the gradient there): the values
# Paddle 3.3.1 gives (paddle.grad of the sum, float64), except selu's, which Paddle
# computes with float32 constants (its 1.7580993175... is scale * alpha rounded)
KINKS = [
    ("relu", {}, [-1.0, 0.0, 1.0], [0.0, 0.0, 1.0]),
    ("relu6", {}, [0.0, 3.0, 6.0], [0.0, 1.0, 0.0]),
    ("leaky_relu", {"negative_slope": 0.1}, [-1.0, 0.0, 1.0], [0.1, 1.0, 1.0]),
    ("elu", {"alpha": 0.5}, [-1.0, 0.0, 1.0], [0.5 * np.exp(-1.0), 0.5, 1.0]),
    ("celu", {"alpha": 0.5}, [-1.0, 0.0, 1.0], [np.exp(-2.0), 1.0, 1.0]),
    ("selu", {}, [-1.0, 0.0, 1.0], [1.0507009873554805 * 1.6732632423543772 * np.exp(-1.0),
                                    1.0507009873554805 * 1.6732632423543772,
                                    1.0507009873554805]),
    ("hardswish", {}, [-3.0, 0.0, 3.0], [0.0, 0.5, 1.0]),
    ("hardsigmoid", {"slope": 0.25, "offset": 0.5}, [-2.0, 0.0, 2.0], [0.0, 0.25, 0.0]),
    ("hardtanh", {"min": -1.0, "max": 2.0}, [-1.0, 0.0, 2.0], [0.0, 1.0, 0.0]),
    ("softshrink", {"threshold": 0.5}, [-0.5, 0.0, 0.5], [0.0, 0.0, 0.0]),
    ("softplus", {"beta": 2.0, "threshold": 4.0}, [1.0, 2.0, 3.0],
     [1 / (1 + np.exp(-2.0)), 1 / (1 + np.exp(-4.0)), 1.0]),
    ("thresholded_relu", {"threshold": 1.0}, [0.0, 1.0, 2.0], [0.0, 0.0, 1.0]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,attrs,x,want", KINKS, ids=[k[0] for k in KINKS])
def test_activation_gradients_at_their_kinks(name, attrs, x, want, mode):
    got = grads(lambda v: call(name, v, **attrs), [x], [1.0, 1.0, 1.0], mode)[0]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=mode)


@pytest.mark.parametrize("mode", MODES)
def test_maximum_minimum_split_an_exact_tie_in_half(mode):
    a, b = [1.0, 2.0, 3.0], [1.0, 5.0, 0.0]
    check(fw.maximum, [a, b], [4.0, 4.0, 4.0], [[2, 0, 4], [2, 4, 0]], mode)
    check(fw.minimum, [a, b], [4.0, 4.0, 4.0], [[2, 4, 0], [2, 0, 4]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_maxout_ties_go_to_the_first_maximum(mode):
    # groups=2 takes the max of channels 0-1, 2-3, 4-5: (5, 5 | 1, 2 | 4, 4)
    x = np.array([5.0, 5.0, 1.0, 2.0, 4.0, 4.0]).reshape(1, 6, 1, 1)
    y = call("maxout", _t(x), groups=2, axis=1)
    np.testing.assert_array_equal(y.numpy().ravel(), [5.0, 2.0, 4.0])  # the grouping
    check(lambda x: call("maxout", x, groups=2, axis=1), [x],
          np.array([10.0, 20.0, 30.0]).reshape(1, 3, 1, 1),
          [np.array([10.0, 0, 0, 20, 30, 0]).reshape(1, 6, 1, 1)], mode)
    x3 = np.array([7.0, 7.0, 7.0, 1.0, 9.0, 9.0]).reshape(1, 1, 6)
    check(lambda x: call("maxout", x, groups=3, axis=-1), [x3],
          np.array([2.0, 3.0]).reshape(1, 1, 2),
          [np.array([2.0, 0, 0, 0, 3, 0]).reshape(1, 1, 6)], mode)


# ---------------------------------------------------------------- selection
@pytest.mark.parametrize("mode", MODES)
def test_topk_ties_one_gradient_per_returned_index(mode):
    x = np.array([[3.0, 1.0, 3.0, 3.0], [2.0, 2.0, 2.0, 2.0]])
    vals, idx = fw.topk(_t(x), 2, axis=1)
    idx = idx.numpy()
    for r in range(2):  # the forward picks two distinct maxima
        assert len(set(idx[r])) == 2 and np.all(x[r, idx[r]] == x[r].max())
    cot = np.array([[1.0, 10.0], [100.0, 1000.0]])
    want = np.zeros_like(x)
    for r in range(2):
        for k in range(2):
            want[r, idx[r, k]] = cot[r, k]
    check(lambda x: fw.topk(x, 2, axis=1)[0], [x], cot, [want], mode)


@pytest.mark.parametrize("mode", MODES)
def test_sort_ties_are_a_permutation_of_the_gradient(mode):
    x = np.array([2.0, 1.0, 2.0, 1.0, 2.0])
    cot = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    # stable ascending: the ones (positions 1, 3) come first, then the twos (0, 2, 4)
    check(lambda x: fw.sort(x, stable=True), [x], cot, [[30, 10, 40, 20, 50]], mode)
    # stable descending keeps the original order among equal values
    check(lambda x: fw.sort(x, descending=True, stable=True), [x], cot,
          [[10, 40, 20, 50, 30]], mode)
    # unstable: some permutation within each group of equal values
    g = grads(lambda x: fw.sort(x), [x], cot, mode)[0]
    assert sorted(g[[1, 3]]) == [10, 20] and sorted(g[[0, 2, 4]]) == [30, 40, 50]


def _one_hot_at(x, idx, axis, cot):
    want = np.zeros_like(x)
    np.put_along_axis(want, np.expand_dims(idx, axis), np.expand_dims(cot, axis), axis)
    return want


@pytest.mark.parametrize("mode", MODES)
def test_kthvalue_and_mode_ties_give_the_returned_index_the_gradient(mode):
    x = np.array([[3.0, 1.0, 3.0, 0.0, 2.0], [4.0, 4.0, 4.0, 0.0, 0.0]])
    cot = np.array([10.0, 100.0])
    v, i = fw.kthvalue(_t(x), 2, axis=1)
    i = i.numpy()
    np.testing.assert_array_equal(v.numpy(), [1.0, 0.0])
    assert x[0, i[0]] == 1.0 and x[1, i[1]] == 0.0
    check(lambda x: fw.kthvalue(x, 2, axis=1)[0], [x], cot, [_one_hot_at(x, i, 1, cot)], mode)
    check(lambda x: fw.kthvalue(x, 2, axis=1, keepdim=True)[0], [x], cot[:, None],
          [_one_hot_at(x, i, 1, cot)], mode)
    v, i = fw.mode(_t(x), axis=1)
    i = i.numpy()
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])
    assert x[0, i[0]] == 3.0 and x[1, i[1]] == 4.0
    check(lambda x: fw.mode(x, axis=1)[0], [x], cot, [_one_hot_at(x, i, 1, cot)], mode)
    check(lambda x: fw.mode(x, axis=1, keepdim=True)[0], [x], cot[:, None],
          [_one_hot_at(x, i, 1, cot)], mode)


@pytest.mark.parametrize("mode", MODES)
def test_median_ties(mode):
    # an even count: the mean of the two middle values, each tied 2 gets half
    check(lambda x: fw.median(x), [[3.0, 2.0, 1.0, 2.0]], 8.0, [[0, 4, 0, 4]], mode)
    # the middle values differ: half to one of the 1s, half to one of the 4s
    x = np.array([4.0, 1.0, 4.0, 1.0])
    g = grads(lambda x: fw.median(x), [x], 8.0, mode)[0]
    assert sorted(g[[1, 3]]) == [0, 4] and sorted(g[[0, 2]]) == [0, 4]
    # an odd count with three tied middle values: exactly one of them gets it all
    x = np.array([2.0, 1.0, 2.0, 2.0, 5.0])
    g = grads(lambda x: fw.median(x), [x], 8.0, mode)[0]
    assert sorted(g[[0, 2, 3]]) == [0, 0, 8] and g[1] == g[4] == 0
    g = grads(lambda x: fw.median(x, mode="min"), [[3.0, 2.0, 1.0, 2.0]], 8.0, mode)[0]
    assert sorted(g[[1, 3]]) == [0, 8] and g[0] == g[2] == 0
    g = grads(lambda x: fw.nanmedian(x), [[2.0, np.nan, 2.0, 1.0, 2.0]], 8.0, mode)[0]
    assert g[1] == g[3] == 0 and sorted(g[[0, 2, 4]]) in ([0, 4, 4], [0, 0, 8])
    assert np.sum(g) == 8


@pytest.mark.parametrize("mode", MODES)
def test_quantile_ties(mode):
    # sorted [1, 2, 2, 4]: q=0.5 is halfway between the two 2s, q=0.25 three quarters of
    # the way from the 1 to a 2; q=0.75 with 'lower' is the second 2
    x = np.array([2.0, 4.0, 1.0, 2.0])
    check(lambda x: fw.quantile(x, 0.5), [x], 8.0, [[4, 0, 0, 4]], mode)
    g = grads(lambda x: fw.quantile(x, 0.25), [x], 8.0, mode)[0]
    assert g[2] == 2 and sorted(g[[0, 3]]) == [0, 6] and g[1] == 0
    g = grads(lambda x: fw.quantile(x, 0.75, interpolation="lower"), [x], 8.0, mode)[0]
    assert sorted(g[[0, 3]]) == [0, 8] and g[1] == g[2] == 0
    g = grads(lambda x: fw.nanquantile(x, 0.5), [[2.0, np.nan, 1.0, 2.0, 2.0]], 8.0, mode)[0]
    assert g[1] == g[2] == 0 and sorted(g[[0, 3, 4]]) in ([0, 4, 4], [0, 0, 8])
    assert np.sum(g) == 8


@pytest.mark.parametrize("mode", MODES)
def test_cummax_cummin_ties_follow_the_returned_indices(mode):
    x = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [2.0, 2.0, 0.0, 0.0, 2.0]])
    cot = np.array([[1.0, 10.0, 100.0, 1000.0, 10000.0]] * 2)
    for op in (fw.cummax, fw.cummin):
        vals, idx = op(_t(x), axis=1)
        idx = idx.numpy()
        rows = np.arange(2)[:, None]
        assert np.all(x[rows, idx] == vals.numpy()) and np.all(idx <= np.arange(5))
        want = np.zeros_like(x)
        np.add.at(want, (np.broadcast_to(rows, idx.shape), idx), cot)
        check(lambda x, op=op: op(x, axis=1)[0], [x], cot, [want], mode)


# ---------------------------------------------------------------- pooling
@pytest.mark.parametrize("mode", MODES)
def test_max_pool_ties_go_to_the_first_maximum_of_each_window(mode):
    x = np.ones((1, 1, 3, 3))
    # overlapping 2x2 windows (stride 1), all values equal: each window's first
    # (top-left) element gets that window's gradient
    cot = np.array([[1.0, 10.0], [100.0, 1000.0]]).reshape(1, 1, 2, 2)
    want = np.array([[1.0, 10, 0], [100, 1000, 0], [0, 0, 0]]).reshape(1, 1, 3, 3)
    check(lambda x: call("max_pool", x, kernel_size=2, stride=1), [x], cot, [want], mode)
    check(lambda x: call("max_pool_with_index", x, kernel_size=2, stride=1)[0], [x], cot,
          [want], mode)
    x2 = np.array([[0.0, 5.0, 5.0, 1.0], [5.0, 2.0, 5.0, 5.0]]).reshape(1, 1, 2, 4)
    check(lambda x: call("max_pool", x, kernel_size=2, stride=2), [x2],
          np.array([3.0, 7.0]).reshape(1, 1, 1, 2),
          [np.array([[0.0, 3, 7, 0], [0, 0, 0, 0]]).reshape(1, 1, 2, 4)], mode)
    check(lambda x: call("adaptive_max_pool", x, output_size=[1, 2])[0], [x2],
          np.array([3.0, 7.0]).reshape(1, 1, 1, 2),
          [np.array([[0.0, 3, 7, 0], [0, 0, 0, 0]]).reshape(1, 1, 2, 4)], mode)


@pytest.mark.parametrize("mode", MODES)
def test_max_unpool_repeated_indices_last_write_wins(mode):
    x = np.array([1.0, 2.0, 3.0]).reshape(1, 1, 1, 3)
    idx = _t(np.array([1, 1, 2]).reshape(1, 1, 1, 3).astype(np.int32))
    out = call("max_unpool", _t(x), idx, kernel_size=[1, 2], output_size=[1, 4])
    np.testing.assert_array_equal(out.numpy().ravel(), [0, 2, 3, 0])
    check(lambda x: call("max_unpool", x, idx, kernel_size=[1, 2], output_size=[1, 4]), [x],
          np.array([1.0, 10, 100, 1000]).reshape(1, 1, 1, 4),
          [np.array([0.0, 10, 100]).reshape(1, 1, 1, 3)], mode)


# ---------------------------------------------------------------- scatters (repeated indices)
U = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
X4 = np.arange(8.0).reshape(4, 2)
COT4 = np.array([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0], [1000.0, 2000.0]])


@pytest.mark.parametrize("mode", MODES)
def test_scatter_overwrite_only_the_last_update_written_gets_gradient(mode):
    idx = _t(np.array([1, 1, 3]))
    out = fw.scatter(_t(X4), idx, _t(U))
    np.testing.assert_array_equal(out.numpy()[1], U[1])  # the last update stayed
    # rows 1 and 3 were overwritten: x gets nothing there; update 0 was overwritten by 1
    check(lambda x, u: fw.scatter(x, idx, u, overwrite=True), [X4, U], COT4,
          [[[1, 2], [0, 0], [100, 200], [0, 0]], [[0, 0], [10, 20], [1000, 2000]]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_scatter_accumulate_every_repeated_update_gets_gradient(mode):
    idx = _t(np.array([1, 1, 3]))
    out = fw.scatter(_t(X4), idx, _t(U), overwrite=False)
    # Paddle: the indexed rows are zeroed, then the updates are added
    np.testing.assert_array_equal(out.numpy()[1], U[0] + U[1])
    check(lambda x, u: fw.scatter(x, idx, u, overwrite=False), [X4, U], COT4,
          [[[1, 2], [0, 0], [100, 200], [0, 0]], [[10, 20], [10, 20], [1000, 2000]]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_scatter_nd_add_and_index_add_with_repeated_indices(mode):
    idx = _t(np.array([[1], [1], [3]]))
    check(lambda x, u: fw.scatter_nd_add(x, idx, u), [X4, U], COT4,
          [COT4, [[10, 20], [10, 20], [1000, 2000]]], mode)
    check(lambda u: fw.scatter_nd(idx, u, [4, 2]), [U], COT4,
          [[[10, 20], [10, 20], [1000, 2000]]], mode)
    check(lambda x, u: fw.index_add(x, _t(np.array([3, 1, 3])), 0, u), [X4, U], COT4,
          [COT4, [[1000, 2000], [10, 20], [1000, 2000]]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_index_put_with_repeated_positions(mode):
    x = np.zeros(4)
    v = np.array([1.0, 2.0, 3.0])
    pos = (_t(np.array([2, 0, 2])),)
    cot = np.array([1.0, 10.0, 100.0, 1000.0])
    out = fw.index_put(_t(x), pos, _t(v))
    assert out.numpy()[2] == 3.0  # the last write stayed
    check(lambda x, v: fw.index_put(x, pos, v), [x, v], cot,
          [[0, 10, 0, 1000], [0, 1, 100]], mode)
    check(lambda x, v: fw.index_put(x, pos, v, accumulate=True), [x, v], cot,
          [cot, [100, 1, 100]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_put_along_axis_repeated_indices(mode):
    a = np.array([[1.0, 4.0, 2.0], [3.0, 3.0, 0.0]])
    idx = _t(np.array([[1, 1], [0, 0]]))
    cot = np.array([[1.0, 10.0, 100.0], [1000.0, 10000.0, 100000.0]])

    def put(how, include_self=True):
        return lambda a, v: fw.put_along_axis(a, idx, v, 1, reduce=how,
                                              include_self=include_self)

    v = np.array([[5.0, 6.0], [7.0, 8.0]])
    # assign: the second value written to each place stays
    check(put("assign"), [a, v], cot, [[[1, 0, 100], [0, 10000, 100000]],
                                       [[0, 10], [0, 1000]]], mode)
    check(put("add"), [a, v], cot, [cot, [[10, 10], [1000, 1000]]], mode)
    # mean with self: (a + v0 + v1) / 3 at the place
    check(put("mean"), [a, v], cot, [[[1, 10 / 3, 100], [1000 / 3, 10000, 100000]],
                                     [[10 / 3, 10 / 3], [1000 / 3, 1000 / 3]]], mode)
    # amax with ties: row 0 place 1 holds a=4 and both values 4: three-way split;
    # row 1 place 0: a=3, values 3 and 1: a and the first value share it
    vt = np.array([[4.0, 4.0], [3.0, 1.0]])
    check(put("amax"), [a, vt], cot, [[[1, 10 / 3, 100], [500, 10000, 100000]],
                                      [[10 / 3, 10 / 3], [500, 0]]], mode)
    # without self: only the two tied values share it
    check(put("amax", include_self=False), [a, vt], cot,
          [[[1, 0, 100], [0, 10000, 100000]], [[5, 5], [1000, 0]]], mode)
    # mul with self: arr * v0 * v1 at a place; d/dv0 = g arr v1
    vp = np.array([[2.0, 3.0], [0.5, 4.0]])
    check(put("mul"), [a, vp], cot, [[[1, 60, 100], [2000, 10000, 100000]],
                                     [[120, 80], [12000, 1500]]], mode)
    vm = np.array([[4.0, 9.0], [0.0, 0.0]])
    check(put("amin"), [a, vm], cot, [[[1, 5, 100], [0, 10000, 100000]],
                                      [[5, 0], [500, 500]]], mode)


# ---------------------------------------------------------------- gathers (repeated indices)
@pytest.mark.parametrize("mode", MODES)
def test_gathers_sum_the_gradient_of_repeated_indices(mode):
    x = np.arange(8.0).reshape(4, 2)
    cot = np.array([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0], [1000.0, 2000.0]])
    rep = _t(np.array([0, 2, 0, 0]))
    check(lambda x: fw.gather(x, rep, axis=0), [x], cot,
          [[[1101, 2202], [0, 0], [10, 20], [0, 0]]], mode)
    check(lambda x: fw.gather_nd(x, _t(np.array([[0], [2], [0], [0]]))), [x], cot,
          [[[1101, 2202], [0, 0], [10, 20], [0, 0]]], mode)
    check(lambda x: x[rep], [x], cot, [[[1101, 2202], [0, 0], [10, 20], [0, 0]]], mode)
    check(lambda x: fw.take_along_axis(x, _t(np.array([[1, 1], [0, 0], [1, 0], [1, 1]])), 1),
          [x], cot, [[[0, 3], [30, 0], [200, 100], [0, 3000]]], mode)
    check(lambda x: fw.take(x, _t(np.array([[7, 7], [0, 7]]))), [x], cot[:2],
          [[[10, 0], [0, 0], [0, 0], [0, 23]]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_setitem_with_repeated_advanced_index_last_write_wins(mode):
    idx = _t(np.array([1, 3, 1]))

    def f(x, v):  # x[idx] = v, out of place
        return call("setitem", x, v, [idx], index=("t",))

    check(f, [np.zeros(4), [1.0, 2.0, 3.0]], [1.0, 10.0, 100.0, 1000.0],
          [[1, 0, 100, 0], [0, 1000, 10]], mode)


# ---------------------------------------------------------------- one tensor in several slots
def _fd_grad(f, x, eps=1e-6):  # central differences, one element at a time
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


SLOTS = {
    "sdpa": (lambda q: call("scaled_dot_product_attention", q, q, q), (1, 2, 3, 4)),
    "kl_div": (lambda y: call("kl_div", y, y, reduction="none"), (3, 4)),
    "bce": (lambda p: call("binary_cross_entropy", p, p, None, reduction="none"), (3, 4)),
}


def _slots_case(op):
    fn, shape = SLOTS[op]
    x = np.random.default_rng(3).uniform(0.2, 0.8, shape)
    out = fn(_t(x)).numpy()
    cot = np.cos(np.arange(out.size) * 1.3).reshape(out.shape)
    return fn, x, cot


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", sorted(SLOTS))
def test_a_tensor_in_several_slots_of_a_re_expressed_rule(op, mode):
    # rules written as re-expressions (`composite`) differentiate each slot on its own:
    # a tensor passed in two slots must get the sum of both slots' gradients, once
    fn, x, cot = _slots_case(op)
    want = _fd_grad(lambda a: float(np.sum(fn(_t(a)).numpy() * cot)), x)
    np.testing.assert_allclose(grads(fn, [x], cot, mode)[0], want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", sorted(SLOTS))
def test_second_order_through_a_tensor_in_several_slots(op):
    fn, x, cot = _slots_case(op)
    w = np.sin(np.arange(x.size) * 0.7).reshape(x.shape)

    def h(a):  # <w, gradient at a>, as a differentiable tensor
        t = fw.to_tensor(a, stop_gradient=False)
        (g,) = fw.grad([fw.sum(fn(t) * _t(cot))], [t], create_graph=True)
        return fw.sum(g * _t(w)), t

    val, t = h(x)
    (got,) = fw.grad([val], [t])
    want = _fd_grad(lambda a: float(h(a)[0].numpy()), x, eps=1e-5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- exact special points
# Rules that special-case one input value (a removable singularity, 0 ** y, a zero
# norm): the records draw random floats and never hit the value exactly.
@pytest.mark.parametrize("mode", MODES)
def test_gradients_at_removable_singularities(mode):
    x = np.array([0.0, 1.0])
    # I1'(x) = I0(x) - I1(x)/x -> 1/2 at 0; I1e'(0) = 1/2 too; sinc'(0) = 0
    g = grads(fw.i1, [x], [1.0, 0.0], mode)[0]
    assert g[0] == 0.5 and g[1] == 0
    g = grads(fw.i1e, [x], [1.0, 0.0], mode)[0]
    assert g[0] == 0.5 and g[1] == 0
    check(fw.sinc, [x], [3.0, 0.0], [[0.0, 0.0]], mode)
    g = grads(fw.sinc, [x], [0.0, 1.0], mode)[0]
    np.testing.assert_allclose(g, [0.0, -1.0], atol=1e-12)  # (cos(pi) - 0) / 1


@pytest.mark.parametrize("mode", MODES)
def test_pow_at_zero(mode):
    x = np.array([0.0, 0.0, 0.0, 2.0])
    y = np.array([2.0, 1.0, 0.0, 3.0])
    # d/dx x**y = y x**(y-1): 0, 1, 0 (0 ** 0 is constant 1), 12; d/dy = x**y log x,
    # 0 at x = 0 for y >= 0
    check(fw.pow, [x, y], [1.0, 1.0, 1.0, 1.0], [[0, 1, 0, 12], [0, 0, 0, 8 * np.log(2)]],
          mode)
    check(lambda x: fw.pow(x, 0.0), [x], [1.0] * 4, [[0, 0, 0, 0]], mode)
    check(lambda x: fw.pow(x, 1.0), [x], [1.0] * 4, [[1, 1, 1, 1]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_copysign_at_zero(mode):
    # d/dx copysign(x, y) = sign(x) sign(y): 0 at x = 0; y gets none
    check(fw.copysign, [[0.0, 2.0, -3.0], [1.0, -1.0, -2.0]], [1.0, 10.0, 100.0],
          [[0, -10, 100], [0, 0, 0]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_heaviside_gradient_goes_to_y_where_x_is_zero(mode):
    check(fw.heaviside, [[0.0, -1.0, 2.0, 0.0], [0.5, 0.5, 0.5, 0.25]], [1.0, 2.0, 3.0, 4.0],
          [[0, 0, 0, 0], [1, 0, 0, 4]], mode)


@pytest.mark.parametrize("mode", MODES)
def test_norms_and_std_at_zero_spread(mode):
    z = np.zeros((2, 3))
    z[1] = [3.0, 0.0, -4.0]
    # a zero vector: 0 is the (sub)gradient; elsewhere x / |x|
    for p in (2.0, 3.0):
        g = grads(lambda x, p=p: fw.linalg.vector_norm(x, p=p, axis=1), [z], [1.0, 1.0],
                  mode)[0]
        assert np.all(g[0] == 0) and np.all(np.isfinite(g))
    check(lambda x: fw.linalg.vector_norm(x, p=2.0, axis=1), [z], [1.0, 5.0],
          [[[0, 0, 0], [3, 0, -4]]], mode)
    # std of equal values: 0 (d std would be 0/0)
    g = grads(lambda x: fw.std(x, axis=1), [[[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]]], [1.0, 1.0],
              mode)[0]
    np.testing.assert_allclose(g, [[0, 0, 0], [-0.5, 0, 0.5]], atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_nanmedian_and_nanquantile_skip_the_nans_of_each_row(mode):
    # rows with different NaN counts: each row's valid count is its own
    x = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 5.0, np.nan, np.nan]])
    cot = np.array([10.0, 100.0])
    # row 0: median of 1, 2, 3 is the 2; row 1: the mean of 4 and 5
    want = [[0.0, 0.0, 0.0, 10.0], [50.0, 50.0, 0.0, 0.0]]
    check(lambda x: fw.nanmedian(x, axis=1), [x], cot, [want], mode)
    check(lambda x: fw.nanquantile(x, 0.5, axis=1), [x], cot, [want], mode)
    # q = 0.75: row 0 at position 1.5 of [1, 2, 3] (2 and 3 half each), row 1 at 0.75
    want = [[0.0, 0.0, 5.0, 5.0], [25.0, 75.0, 0.0, 0.0]]
    check(lambda x: fw.nanquantile(x, 0.75, axis=1), [x], cot, [want], mode)
