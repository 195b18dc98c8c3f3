"""The optimizer update ops of fw-core (family "optimizer"): the reference kernels
against the textbook formulas of the records' oracles, the fast kernels' in-place
(``out=``) form against their functional form, and several steps chained."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.ops import OPS
from fw.core.ops.optimizer import UPDATE_OPS
from fw.core.testing import load_all, reference_call

RECORDS = {name: recs for name, recs in load_all().items()
           if name in OPS and OPS[name].family == "optimizer"}
NAMES = sorted(RECORDS)


def test_every_update_op_has_an_oracle():
    assert set(NAMES) == set(UPDATE_OPS)
    for name in NAMES:
        assert all(r.oracle is not None for r in RECORDS[name]), name


def _tol(dtype):
    return {"float64": (1e-9, 1e-11), "float32": (2e-4, 2e-5),
            "float16": (3e-2, 3e-2), "bfloat16": (8e-2, 8e-2)}[dtype.name]


def _draw(rec, data):
    dtype = data.draw(st.sampled_from(rec.dtypes), label="dtype")
    return dtype, rec.sample(data.draw, dtype)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_reference_matches_textbook_formula(name, data):
    rec = RECORDS[name][0]
    dtype, s = _draw(rec, data)
    got, attrs = reference_call(OPS[name], s.args, dict(s.attrs))
    got = got if isinstance(got, tuple) else (got,)
    want = rec.oracle(*s.args, **{**OPS[name].attrs, **s.attrs})
    r, a = _tol(dtype)
    # low-precision state computes in float32 but rounds param and state: compare loosely
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g).astype(np.float64)
        w = np.asarray(w, dtype=np.float64)
        assert g.size == w.size, f"{name} output {k}: {g.shape} vs {w.shape}"
        np.testing.assert_allclose(g.reshape(-1), w.reshape(-1), rtol=r, atol=a,
                                   err_msg=f"{name} output {k} ({dtype.name})")


def _copy(a):
    return None if a is None else np.array(a, copy=True)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_fast_kernel_in_place_equals_functional(name, data):
    """``out=`` aliasing every param-shaped input updates in place and gives the
    functional results; without ``out`` nothing is written into the inputs."""
    op = OPS[name]
    rec = RECORDS[name][0]
    dtype, s = _draw(rec, data)
    kern = op.kernels["cpu"]
    attrs = op.canon({**op.attrs, **s.attrs}) if op.canon else {**op.attrs, **s.attrs}
    args = [_copy(a) if isinstance(a, np.ndarray) else a for a in s.args]
    before = [_copy(a) if isinstance(a, np.ndarray) else a for a in args]
    want = kern(*args, **attrs)
    want = want if isinstance(want, tuple) else (want,)
    for a, b in zip(args, before):  # functional: inputs untouched
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    ins = [_copy(a) if isinstance(a, np.ndarray) else a for a in s.args]
    names = op.input_names
    out = []
    for o in op.outputs:
        src = o[:-len("_out")]
        i = names.index(src)
        a = ins[i]
        same_shape = isinstance(a, np.ndarray) and a.shape == ins[0].shape and src != "y"
        out.append(a if same_shape else None)
    got = kern(*ins, **attrs, out=tuple(out))
    got = got if isinstance(got, tuple) else (got,)
    for k, (g, w) in enumerate(zip(got, want)):
        if out[k] is not None:
            assert g is out[k], f"{name}: output {k} was not written into its out array"
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w),
                                      err_msg=f"{name} output {k} in place")


def _chain(name, state, steps, attrs):
    """Run `steps` updates feeding the outputs back (grad fixed per step)."""
    op = OPS[name]
    names = op.input_names
    for g in steps:
        args = [state.get(n) for n in names]
        args[1] = g
        res = op.reference(*args, **attrs)
        res = res if isinstance(res, tuple) else (res,)
        for o, v in zip(op.outputs, res):
            src = o[:-len("_out")]
            if src in state and not (isinstance(v, np.ndarray) and v.size == 0 and
                                     state[src] is None):
                state[src] = v
    return state


def test_adam_five_steps_match_the_paper():
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal(6)
    grads = [rng.standard_normal(6) for _ in range(5)]
    st_ = {"param": p0.copy(), "learning_rate": np.array([0.01]), "moment1": np.zeros(6),
           "moment2": np.zeros(6), "beta1_pow": np.array([0.9]), "beta2_pow": np.array([0.999]),
           "moment2_max": None}
    out = _chain("adam", st_, grads, {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8,
                                      "amsgrad": False})
    p, m, v = p0.copy(), np.zeros(6), np.zeros(6)
    for t, g in enumerate(grads, 1):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        p -= 0.01 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    np.testing.assert_allclose(out["param"], p, rtol=1e-12)
    np.testing.assert_allclose(out["beta1_pow"], [0.9 ** 6], rtol=1e-12)


def test_asgd_averages_the_last_batch_num_gradients():
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal(4)
    grads = [rng.standard_normal(4) for _ in range(5)]
    n = 3
    p, d, ys = p0.copy(), np.zeros(4), np.zeros((n, 4))
    for m, g in enumerate(grads):
        i = m % n
        res = OPS["asgd"].reference(p, g, np.array([0.1]), d, ys[i],
                                    np.array([min(m + 1, n)], np.int64))
        p, d, ys[i] = res
    # textbook SAG: the step uses the mean of the last min(m+1, n) gradients
    q = p0.copy()
    for m in range(len(grads)):
        window = grads[max(0, m - n + 1):m + 1]
        q -= 0.1 * np.sum(window, axis=0) / min(m + 1, n)
    np.testing.assert_allclose(p, q, rtol=1e-12)


def test_lamb_segments_give_each_parameter_its_own_trust_ratio():
    rng = np.random.default_rng(2)
    sizes = [5, 3, 7]
    ps = [rng.standard_normal(s) for s in sizes]
    gs = [rng.standard_normal(s) for s in sizes]
    attrs = dict(beta1=0.9, beta2=0.999, epsilon=1e-6, weight_decay=0.1, always_adapt=False)
    lr, b1, b2 = np.array([0.1]), np.array([0.9]), np.array([0.999])
    want = [OPS["lamb"].reference(p, g, lr, np.zeros_like(p), np.zeros_like(p), b1, b2,
                                  **attrs)[0] for p, g in zip(ps, gs)]
    P, G = np.concatenate(ps), np.concatenate(gs)
    m, v = np.zeros_like(P), np.zeros_like(P)
    OPS["lamb"].kernels["cpu"](P, G, lr, m, v, b1, b2, **attrs, out=(P, m, v, None, None),
                               segments=np.array([0, 5, 8]))
    np.testing.assert_allclose(P, np.concatenate(want), rtol=1e-12)


def test_low_precision_param_with_float32_state_rounds_only_the_param():
    p = np.array([1.0, -2.0, 3.0], dtype=_dt.bfloat16.np)
    g = np.array([0.5, 0.5, -0.5], dtype=_dt.bfloat16.np)
    m = np.zeros(3, np.float32)
    out = OPS["momentum"].reference(p, g, np.array([0.1], np.float32), m, mu=0.9)
    assert out[0].dtype == _dt.bfloat16.np and out[1].dtype == np.float32
    np.testing.assert_allclose(out[1], [0.5, 0.5, -0.5])
