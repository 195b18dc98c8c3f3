"""Each argument's gradient alone equals its share of the all-arguments gradient.

A rule computes only the gradients its node needs (``ctx.needs(i)``); the
finite-difference checks always differentiate every argument at once, so a rule
that tests the wrong slot (``needs(0)`` for ``needs(1)``) passes there. Driven by
fw-core's op records: for every sample with several differentiable arguments,
differentiate each one alone (the others constants) and compare.
"""

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import fw
from fw.autograd._registry import RULES
from fw.autograd.testing import GRAD_ARGS, PARTIAL_RULES, GradCase, _rand_like, grad_dtypes
from fw.core.errors import UnsupportedError
from fw.core.testing import load_all

RECORDS = load_all()
NOT_CHECKED = {"ctc_loss": "its second output is its own gradient (not differentiated)"}


def _cases():
    return [pytest.param(r, id=f"{name}-{i}") for name, recs in sorted(RECORDS.items())
            if name in RULES and name not in NOT_CHECKED
            for i, r in enumerate(recs) if not r.nondeterministic]


def _grads(case, vs, which):
    outs, ins = case.call(case.primals(), requires_grad=True)
    for k, t in enumerate(ins):
        t.stop_gradient = k not in which
    outs, ins = case.call(ins, requires_grad=False)
    total = None
    for o, v in zip(outs, vs):
        if v is None or o.stop_gradient:
            continue
        vt = fw.to_tensor(v)
        term = fw.sum(fw.real(o * fw.conj(vt))) if o.dtype.is_complex else fw.sum(o * vt)
        total = term if total is None else total + term
    if total is None:
        return [None] * len(which)
    return fw.grad([total], [ins[k] for k in which], allow_unused=True)


@pytest.mark.parametrize("rec", _cases())
@settings(max_examples=2, phases=[Phase.explicit, Phase.reuse, Phase.generate], deadline=None)
@given(data=st.data())
def test_each_argument_alone(rec, data):
    dtype = data.draw(st.sampled_from(grad_dtypes(rec)), label="dtype")
    case = GradCase(rec.op, rec.sample(data.draw, dtype))
    if rec.op in GRAD_ARGS:
        case.pos = [p for p in case.pos if p[0] in GRAD_ARGS[rec.op]]
    if len(case.pos) < 2:
        return
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="seed"))
    try:
        outs, _ = case.call(case.primals())
    except Exception:  # the forward rejects this sample (fw-core's tests see it)
        return
    vs = [_rand_like(rng, o.numpy()) if o.dtype.is_inexact else None for o in outs]
    n = len(case.pos)
    try:
        every = _grads(case, vs, list(range(n)))
    except UnsupportedError:
        if rec.op in PARTIAL_RULES:
            return
        raise
    for k in range(n):
        (alone,) = _grads(case, vs, [k])
        want = None if every[k] is None else every[k].numpy()
        got = None if alone is None else alone.numpy()
        if want is None or got is None:
            assert want is None or not np.any(want), f"{rec.op}: argument {k} alone got none"
            assert got is None or not np.any(got), f"{rec.op}: argument {k} alone got one"
            continue
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12,
                                   err_msg=f"{rec.op}: argument {case.pos[k]} alone")
