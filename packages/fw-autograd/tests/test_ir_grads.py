"""Every VJP rule on the IR path, with dynamic dims, against the eager backward.

A rule runs on two kinds of inputs: Tensors (eager) and IR Values (the backward
emitted into a program by `static.gradients`). On Values a dim may be dynamic
(-1, known only at run time), and rules take other branches there (a run-time
element count instead of a static one, ``expand_as`` instead of
``broadcast_to``, ...). Those branches are not reached by the finite-difference
checks of `test_grad_records.py`, which run eagerly: a planted bug in ``var``'s
dynamic branch (a factor 2 dropped) went unnoticed.

So, for every op with a rule, driven by fw-core's op records (a new op with a
record is covered without writing a test here): draw a sample, compute the
gradient of ``<v, op(x)>`` eagerly, trace the op into a program whose inputs have
every dim dynamic, emit its backward with ``fw.grad`` on the Values, run the
program on the same arrays and compare. Ops whose rules need static shapes are
listed in `STATIC_ONLY`: they may refuse dynamic dims, loudly (an error at build
or run time), never with a wrong gradient, and are compared with static shapes
too. Ops not checked on IR at all are in `NOT_ON_IR`. Each entry says why.
"""

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import fw
from fw.autograd._registry import RULES
from fw.autograd.testing import (
    CONSTANT_OUTPUTS,
    GRAD_ARGS,
    PARTIAL_RULES,
    GradCase,
    _rand_like,
    grad_dtypes,
)
from fw.core import dtypes as _dt
from fw.core.dispatch import invoke
from fw.core.errors import UnsupportedError
from fw.core.ir import TensorType, building, run
from fw.core.ops import OPS
from fw.core.testing import load_all

RECORDS = load_all()

# Rules that need static shapes (they raise, by design or for now, when a dim the
# gradient depends on is only known at run time). Their IR backward is still
# checked, with the sample's static shapes.
_RESHAPE = "the gradient reshapes to the input's shape, which has several dynamic dims"
_WINDOW = "the gradient needs the static spatial sizes (window geometry, explicit *_grad ops)"
_INDEX = "the gradient runs the op on element indices (gather_transpose): static shape"
_EYE = "the gradient builds identity / zeros of the matrix size (static sizes)"
STATIC_ONLY = {
    # pooling, convolution, windows
    "adaptive_avg_pool": _WINDOW, "adaptive_max_pool": _WINDOW, "avg_pool": _WINDOW,
    "max_pool": _WINDOW, "max_pool_with_index": _WINDOW, "max_unpool": _WINDOW,
    "lp_pool": _WINDOW, "conv": _WINDOW, "conv_transpose": _WINDOW, "unfold": _WINDOW,
    # element-index gradients
    "channel_shuffle": _INDEX, "getitem": _INDEX, "pixel_shuffle": _INDEX,
    "pixel_unshuffle": _INDEX, "take": _INDEX, "tile": _INDEX,
    "cross_entropy_with_softmax": _INDEX, "median": _INDEX, "quantile": _INDEX,
    "local_response_norm": _INDEX,
    # reshapes to several dynamic dims
    "cdist": _RESHAPE, "diagflat": _RESHAPE, "flatten": _RESHAPE, "gather": _RESHAPE,
    "group_norm": _RESHAPE, "instance_norm": _RESHAPE, "label_smooth": _RESHAPE,
    "layer_norm": _RESHAPE, "matrix_norm": _RESHAPE, "maxout": _RESHAPE,
    "nanmedian": _RESHAPE, "nanquantile": _RESHAPE, "nll_loss": _RESHAPE,
    "unsqueeze": _RESHAPE, "vector_norm": _RESHAPE, "normalize": _RESHAPE,
    "prelu": _RESHAPE, "linear": _RESHAPE, "vecdot": _RESHAPE, "rms_norm": _RESHAPE,
    "pairwise_distance": _RESHAPE, "bilinear": _RESHAPE,
    # zeros / identities of the input's size
    "cummax": _EYE, "cummin": _EYE, "diag": _EYE, "embedding": _EYE, "trace": _EYE,
    "lu_unpack": _EYE, "eig": _EYE, "eigh": _EYE, "householder_product": _EYE,
    "matrix_power": _EYE, "pinv": _EYE, "svd": _EYE, "qr": _EYE, "scatter": _EYE,
    "setitem": _EYE,
    # the sizes along the transformed / differenced axes
    "fft_c2c": "resizing to `s` and the one-sided bins need static sizes along the axes",
    "fft_r2c": "resizing to `s` and the one-sided bins need static sizes along the axes",
    "fft_c2r": "resizing to `s` and the one-sided bins need static sizes along the axes",
    "diff": "the gradient splits a concat of several dynamic sizes",
    "lu_solve": "its re-expression unpacks the LU factors (lu_unpack: static sizes)",
    "einsum": "a repeated subscript ('ii') embeds the gradient on diagonals of static size",
    "ormqr": "the re-expression loops over the (static) number of reflectors",
    "scaled_dot_product_attention": "the head grouping reads the numbers of heads",
    "masked_scatter": "the gradient pads the selected values to the value's size",
}
# Ops whose IR backward is not compared with the eager one, and why.
NOT_ON_IR = {
    "dropout": "random: the program draws anew", "alpha_dropout": "random: the program draws anew",
    "rrelu": "random: the program draws anew", "gumbel_softmax": "random: the program draws anew",
    "hsigmoid_loss": "its rule reads the values of the path table (run-time data) while building",
}


def _cases():
    out = []
    for name, recs in sorted(RECORDS.items()):
        if name not in RULES or name in NOT_ON_IR:
            continue
        for i, r in enumerate(recs):
            if r.ir and not r.nondeterministic:
                out.append(pytest.param(r, id=f"{name}-{i}"))
    return out


CASES = _cases()


def _arrays(args):
    """(i, j, array) for every array argument (item j of a list argument)."""
    flat = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            flat.append((i, None, a))
        elif isinstance(a, list) and a and all(isinstance(x, np.ndarray) for x in a):
            flat.extend((i, j, x) for j, x in enumerate(a))
    return flat


def _loss(outs, vs):
    total = None
    for o, v in zip(outs, vs):
        if v is None:
            continue
        vt = fw.to_tensor(v)
        term = fw.sum(fw.real(o * fw.conj(vt))) if o.dtype.is_complex else fw.sum(o * vt)
        total = term if total is None else total + term
    return total


def _tol(dtype):
    return (1e-4, 1e-5) if dtype.name in ("float32", "complex64") else (1e-8, 1e-10)


def check_ir_against_eager(rec, draw):
    name = rec.op
    dtype = draw(st.sampled_from(grad_dtypes(rec)), label="dtype")
    case = GradCase(rec.op, rec.sample(draw, dtype))
    if name in GRAD_ARGS:
        case.pos = [p for p in case.pos if p[0] in GRAD_ARGS[name]]
    if not case.pos:
        return "nothing to differentiate"
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1), label="cotangent seed"))
    try:
        outs, ins = case.call(case.primals(), requires_grad=True)
    except Exception as e:  # the forward rejects this sample (fw-core's tests see it)
        return f"forward failed: {type(e).__name__}"
    skip = CONSTANT_OUTPUTS.get(name, ())
    vs = [_rand_like(rng, o.numpy()) if o.dtype.is_inexact and not o.stop_gradient
          and k not in skip else None for k, o in enumerate(outs)]
    if all(v is None for v in vs):
        return "no differentiable output"
    try:
        eager = fw.grad([_loss(outs, vs)], ins, allow_unused=True)
    except UnsupportedError:
        if name in PARTIAL_RULES:
            return "unsupported by design"
        raise

    def compare(got, dynamic):
        rtol, atol = _tol(dtype)
        for p, e, g in zip(case.pos, eager, got):
            want = None if e is None else e.numpy()
            if g is None:
                assert want is None or not np.any(want), \
                    f"{name}: no IR gradient for argument {p}, the eager one is {want}"
                continue
            if want is None:
                want = np.zeros_like(g)
            kind = "dynamic" if dynamic else "static"
            assert g.shape == want.shape, \
                f"{name}: IR ({kind} dims) gradient of argument {p} has shape {g.shape}, " \
                f"eager {want.shape}"
            np.testing.assert_allclose(
                g, want, rtol=rtol, atol=atol,
                err_msg=f"{name}: IR ({kind} dims) vs eager gradient of argument {p}, "
                        f"attrs {case.attrs}")

    if not rec.dynamic_ok:  # the record's attrs depend on its shapes
        compare(ir_gradients(case, vs, dynamic=False), False)
    elif name not in STATIC_ONLY:
        compare(ir_gradients(case, vs, dynamic=True), True)
    else:
        # a listed rule may refuse dynamic dims, loudly; a wrong gradient is never fine
        try:
            got = ir_gradients(case, vs, dynamic=True)
        except AssertionError:
            raise
        except Exception:
            got = None
        if got is not None:
            compare(got, True)
        compare(ir_gradients(case, vs, dynamic=False), False)
    return None


def ir_gradients(case, vs, dynamic):
    """The gradients of <vs, op(args)> from a program with the args as inputs (every
    dim dynamic, or the static shapes), one array (or None) per differentiated arg."""
    flat = _arrays(case.args)
    where = [(i, j) for i, j, _ in flat]
    with building() as b:
        vals = [b.add_input(TensorType([-1] * a.ndim if dynamic else list(a.shape),
                                       _dt.from_numpy(a.dtype)), f"in{k}")
                for k, (_, _, a) in enumerate(flat)]
        args = [list(a) if isinstance(a, list) else a for a in case.args]
        for v, (i, j, _) in zip(vals, flat):
            if j is None:
                args[i] = v
            else:
                args[i][j] = v
        o = invoke(case.op, args, dict(case.attrs))
        wrt = [vals[where.index(p)] for p in case.pos]
        # the inputs keep stop_gradient=True (as paddle.static.data): fw.grad on
        # Values differentiates with respect to them anyway
        gs = fw.grad([_loss(o if isinstance(o, tuple) else (o,), vs)], wrt, allow_unused=True)
        b.set_outputs([g for g in gs if g is not None])
    res = run(b.program, *[fw.to_tensor(a) for _, _, a in flat])
    res = iter(res if isinstance(res, tuple) else (res,))
    return [None if g is None else next(res).numpy() for g in gs]


_FAST = dict(phases=[Phase.explicit, Phase.reuse, Phase.generate], deadline=None)


@pytest.mark.parametrize("rec", CASES)
@settings(max_examples=3, **_FAST)
@given(data=st.data())
def test_ir_gradient_matches_eager(rec, data):
    check_ir_against_eager(rec, data.draw)


def test_every_rule_is_checked_on_ir_or_listed():
    covered = {p.values[0].op for p in CASES}
    missing = sorted(set(RULES) - covered - set(NOT_ON_IR))
    assert not missing, f"rules with no IR check (add an OpRecord, or list them): {missing}"


@pytest.mark.parametrize("table", [STATIC_ONLY, NOT_ON_IR], ids=["STATIC_ONLY", "NOT_ON_IR"])
def test_skip_lists_name_ops_with_rules(table):
    stale = sorted(n for n in table if n not in OPS or n not in RULES)
    assert not stale, f"listed but no such op with a VJP rule: {stale}"
    assert all(isinstance(r, str) and r for r in table.values())
    assert not set(STATIC_ONLY) & set(NOT_ON_IR)


def _static_grad(fn, x, dims):
    with building() as b:
        v = b.add_input(TensorType(dims, "float64"), "x")
        (g,) = fw.grad([fn(v)], [v])
        b.set_outputs([g])
    return run(b.program, fw.to_tensor(x)).numpy()


@pytest.mark.parametrize("dims", [[-1, -1], [3, -1], [-1, 4], [3, 4]])
def test_var_std_mean_gradients_by_hand(dims):
    """The dynamic branches of var/std/mean divide by the run-time count."""
    x = np.arange(12.0).reshape(3, 4) ** 1.5
    n = 4
    c = x - x.mean(axis=1, keepdims=True)
    w = np.array([1.0, -2.0, 0.5])
    wt = fw.to_tensor(w)
    got = _static_grad(lambda v: fw.sum(fw.var(v, axis=1) * wt), x, dims)
    np.testing.assert_allclose(got, 2 * c / (n - 1) * w[:, None], rtol=1e-12)
    got = _static_grad(lambda v: fw.sum(fw.var(v, axis=1, unbiased=False) * wt), x, dims)
    np.testing.assert_allclose(got, 2 * c / n * w[:, None], rtol=1e-12)
    std = x.std(axis=1, ddof=1)
    got = _static_grad(lambda v: fw.sum(fw.std(v, axis=1) * wt), x, dims)
    np.testing.assert_allclose(got, c / ((n - 1) * std[:, None]) * w[:, None], rtol=1e-12)
    got = _static_grad(lambda v: fw.sum(fw.mean(v, axis=1) * wt), x, dims)
    np.testing.assert_allclose(got, np.broadcast_to(w[:, None] / n, x.shape), rtol=1e-12)
    got = _static_grad(lambda v: fw.var(v), x, dims)
    np.testing.assert_allclose(got, 2 * (x - x.mean()) / 11, rtol=1e-12)
