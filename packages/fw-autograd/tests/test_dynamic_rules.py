"""The dynamic-shape branches of VJP rules, case by case.

`test_ir_grads.py` sweeps every rule with the op records' samples; the cases here
pin down the branches a rule takes only when a size is known at run time alone
(each one was wrong once): the gradient from a program with dynamic dims must
equal the eager gradient on the same arrays; where a rule cannot work without a
static size it must refuse with `UnsupportedError` (a gradient silently computed
from a -1 size is the bug this file guards against).
"""

import numpy as np
import pytest

import fw
from fw.core.errors import UnsupportedError
from fw.core.ir import TensorType, building, run
from fw.core.ops import call

RNG = np.random.default_rng(7)


def _cot(out):
    # a fixed, non-uniform cotangent: a uniform one hides scaling and permutation bugs
    n = int(np.prod(out.shape))
    return np.cos(np.arange(n) * 1.7 + 0.3).reshape(out.shape)


def eager_grads(fn, arrays, wrt):
    ts = [fw.to_tensor(a, stop_gradient=i not in wrt) for i, a in enumerate(arrays)]
    out = fn(*ts)
    cot = _cot(out)
    loss = fw.sum(out * fw.to_tensor(cot))
    gs = fw.grad([loss], [ts[i] for i in wrt])
    return [g.numpy() for g in gs], cot


def ir_grads(fn, arrays, dims, wrt, cot):
    with building() as b:
        vals = [b.add_input(TensorType(d, str(np.asarray(a).dtype)), f"x{i}")
                for i, (a, d) in enumerate(zip(arrays, dims))]
        loss = fw.sum(fn(*vals) * fw.to_tensor(cot))
        gs = fw.grad([loss], [vals[i] for i in wrt])
        b.set_outputs(list(gs))
    out = run(b.program, *[fw.to_tensor(a) for a in arrays])
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def assert_ir_equals_eager(fn, arrays, dims, wrt=(0,)):
    want, cot = eager_grads(fn, arrays, list(wrt))
    got = ir_grads(fn, arrays, dims, list(wrt), cot)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"input {wrt[k]}: shape {g.shape} vs eager {w.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"input {wrt[k]}")


def _r(*shape):
    return RNG.standard_normal(shape)


CASES = {
    # a dynamic dim may hide a broadcast in any op of two tensors, not only elementwise
    "masked_select_broadcast": (lambda x, m: fw.masked_select(x, m),
                                [_r(1, 3), np.array([[True, False, True]] * 4)],
                                [[-1, -1], [-1, -1]]),
    "masked_fill_broadcast": (lambda x, m: fw.masked_fill(x, m, 2.0),
                              [_r(1, 3), np.array([[True, False, True]] * 4)],
                              [[-1, -1], [-1, -1]]),
    "vecdot_broadcast": (lambda x, y: fw.linalg.vecdot(x, y), [_r(2, 3), _r(2, 1)],
                         [[-1, -1], [-1, -1]], (0, 1)),
    # 'batchmean' divides by the run-time batch size
    "kl_div_batchmean": (lambda x, y: call("kl_div", x, y, reduction="batchmean"),
                         [_r(3, 4), np.abs(_r(3, 4))], [[-1, 4], [-1, 4]]),
    # the recomputed product must keep the reduced dims
    "prod_keepdim": (lambda x: fw.prod(x, axis=1, keepdim=True), [_r(2, 3, 4)],
                     [[-1, -1, -1]]),
    "prod_axes": (lambda x: fw.prod(x, axis=[0, 2]), [_r(2, 3, 4)], [[-1, -1, -1]]),
    # the run-time count of elements reduced into each result
    "mean_dynamic": (lambda x: fw.mean(x, axis=0), [_r(5, 2)], [[-1, 2]]),
    "var_dynamic": (lambda x: fw.var(x, axis=0), [_r(5, 2)], [[-1, -1]]),
    "std_dynamic": (lambda x: fw.std(x, axis=[0, 1], unbiased=False), [_r(5, 2)], [[-1, -1]]),
    "mean_of_empty": (lambda x: fw.mean(x, axis=1), [np.zeros((0, 3))], [[-1, -1]]),
    "var_of_empty": (lambda x: fw.var(x, axis=1), [np.zeros((0, 3))], [[-1, -1]]),
    # slices to the end of a run-time size
    "trapezoid": (lambda y: fw.trapezoid(y, dx=0.5), [_r(2, 5)], [[-1, -1]]),
    "trapezoid_x": (lambda y, x: fw.trapezoid(y, x=x), [_r(2, 5), np.cumsum(np.abs(_r(5)))],
                    [[-1, -1], [-1]], (0, 1)),
    "trapezoid_long": (lambda y: fw.trapezoid(y), [_r(1, 300)], [[1, -1]]),  # no end cap
    "cumulative_trapezoid": (lambda y: fw.cumulative_trapezoid(y), [_r(3, 4)], [[-1, -1]]),
    "diff": (lambda x: fw.diff(x, n=2, axis=0), [_r(5, 3)], [[-1, -1]]),
    # a letter summed within one operand is broadcast back to its run-time size
    "einsum_summed_letter": (lambda x: fw.einsum("ij->j", x), [_r(3, 2)], [[-1, -1]]),
    # the top-right block of a doubled matrix
    "matrix_exp": (lambda a: fw.linalg.matrix_exp(a), [_r(2, 3, 3) * 0.5], [[-1, -1, -1]]),
    # the scale reads the run-time head size; the mask the run-time lengths
    "sdpa_dynamic_sizes": (lambda q, k, v: call("scaled_dot_product_attention", q, k, v,
                                                is_causal=True),
                           [_r(2, 3, 2, 4), _r(2, 3, 2, 4), _r(2, 3, 2, 4)],
                           [[-1, -1, 2, -1]] * 3, (0, 1, 2)),
    # scans with axis=None flatten and restore the input's run-time shape
    "cumsum_flat": (lambda x: fw.cumsum(x), [_r(2, 3)], [[-1, -1]]),
    "cumprod_flat": (lambda x: fw.cumprod(x, dim=None), [_r(2, 3)], [[-1, -1]]),
    "logcumsumexp_flat": (lambda x: fw.logcumsumexp(x), [_r(2, 3)], [[-1, -1]]),
    # a boolean index writes a run-time number of values: the last write wins
    "index_put_bool": (lambda x, v: fw.index_put(x, (fw.to_tensor(np.array(
        [True, False, True, True])),), v), [_r(4), _r(3)], [[-1], [-1]], (0, 1)),
    "setitem_repeated": (lambda x, v: call("setitem", x, v, [fw.to_tensor(np.array([1, 3, 1]))],
                                           index=("t",)),
                         [_r(4, 2), _r(3, 2)], [[-1, -1], [-1, -1]], (0, 1)),
    "scatter_repeated": (lambda x, u: fw.scatter(x, fw.to_tensor(np.array([1, 3, 1])), u),
                         [_r(4, 2), _r(3, 2)], [[-1, 2], [-1, 2]], (0, 1)),
    "put_along_axis_repeated": (lambda a, v: fw.put_along_axis(
        a, fw.to_tensor(np.array([[1, 1], [0, 2]])), v, 1), [_r(2, 3), _r(2, 2)],
        [[-1, -1], [-1, -1]], (0, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dynamic_gradient_equals_eager(name):
    fn, arrays, dims, *wrt = CASES[name]
    assert_ir_equals_eager(fn, arrays, dims, wrt[0] if wrt else (0,))


def test_masked_scatter_value_gradient_on_ir():
    # how many values were picked is known at run time only, even with static shapes
    x, m, v = _r(2, 3), np.array([[True, False, True], [False, True, False]]), _r(5)
    for dims in ([[2, 3], [2, 3], [5]], [[-1, -1], [-1, -1], [5]]):
        assert_ir_equals_eager(lambda x, m, v: fw.masked_scatter(x, m, v), [x, m, v], dims,
                               (0, 2))


def test_ctc_loss_static_backward():
    # a static backward without create_graph may use the op's own gradient
    logits = _r(4, 1, 3)
    labels = np.array([[1, 2]], dtype=np.int32)
    lens = [np.array([4], dtype=np.int64), np.array([2], dtype=np.int64)]
    assert_ir_equals_eager(lambda x, y, a, b: call("ctc_loss", x, y, a, b)[0],
                           [logits, labels] + lens, [[4, 1, 3], [1, 2], [1], [1]])


REFUSED = {
    # cropping or padding to `s` along a run-time size
    "fft_c2c_resize": (lambda x: fw.fft.fft(x, n=3), [_r(2, 5)], [[-1, -1]]),
    "fft_r2c_bins": (lambda x: fw.abs(fw.fft.rfft(x)), [_r(2, 5)], [[2, -1]]),
    "fft_c2r_bins": (lambda x: fw.fft.irfft(fw.complex(x, x * 0.5)), [_r(2, 5)], [[2, -1]]),
    # which factor is padded depends on the sizes
    "lu_unpack": (lambda x: call("lu_unpack", x, fw.to_tensor(np.array([1, 2], dtype=np.int32)),
                                 unpack_pivots=False)[1], [_r(2, 2)], [[-1, -1]]),
    # the re-expression loops over the reflectors
    "ormqr": (lambda x, tau=_r(2), y=_r(3, 2): call("ormqr", x, fw.to_tensor(tau),
                                                    fw.to_tensor(y)),
              [_r(3, 2)], [[-1, -1]]),
    # the head grouping reads the numbers of heads
    "sdpa_dynamic_heads": (lambda q, kv=_r(1, 2, 2, 4): call(
        "scaled_dot_product_attention", q, fw.to_tensor(kv), fw.to_tensor(kv)),
        [_r(1, 2, 2, 4)], [[1, 2, -1, 4]]),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_rule_refuses_a_size_it_cannot_know(name):
    fn, arrays, dims = REFUSED[name]
    with pytest.raises(UnsupportedError, match="static"):
        ir_grads(fn, arrays, dims, [0], _cot(fn(*[fw.to_tensor(a) for a in arrays])))
    # and with static shapes it works
    assert_ir_equals_eager(fn, arrays, [list(np.shape(a)) for a in arrays])
