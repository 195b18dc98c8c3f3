"""Every VJP rule on the test device (`fw.core.testing.device`): the gradient of a
random projection of the op's outputs, computed with every tensor on the device,
equals the cpu gradient and stays on the device. The rules themselves are checked
against finite differences on cpu (test_grad_records.py); this checks that they,
and the engine's accumulation, run on a device's arrays."""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import fw
from fw.autograd.testing import (
    CONSTANT_OUTPUTS,
    GRAD_ARGS,
    GradCase,
    _scalar_loss,
    grad_dtypes,
    prepare,
)
from fw.core.ops import OPS
from fw.core.testing import device as _dev
from fw.core.testing import load_all

RECORDS = load_all()
DEVICE = _dev.name()
# to_device's output is on the device its attribute names: its cotangent is not
MOVES = {"to_device"}
CASES = [pytest.param(r, id=f"{name}-{i}") for name, recs in sorted(RECORDS.items())
         if name in OPS and OPS[name].differentiable and name not in MOVES
         for i, r in enumerate(recs) if r.grad_order >= 1 and not r.nondeterministic]


def _grads(case, xs, vs):
    outs, ins = case.call(xs, requires_grad=True)
    loss = _scalar_loss(outs, vs)
    if loss is None:
        return None
    return fw.grad([loss], ins, allow_unused=True)


@pytest.mark.parametrize("rec", CASES)
@settings(max_examples=3 if DEVICE == "gpu" else 1, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])  # no shrinking: the draw is printed
@given(data=st.data())
def test_vjp_on_device_matches_cpu(rec, data):
    dtype = data.draw(st.sampled_from(grad_dtypes(rec)), label="dtype")
    case = GradCase(rec.op, rec.sample(data.draw, dtype))
    if case.op.name in GRAD_ARGS:
        case.pos = [p for p in case.pos if p[0] in GRAD_ARGS[case.op.name]]
    try:
        dirs = prepare(case, np.random.default_rng(0), (),
                       CONSTANT_OUTPUTS.get(case.op.name, ()))
    except Exception:  # the forward pass rejects this sample (fw-core's tests see it)
        return
    if dirs is None:
        return
    _, vs = dirs
    xs = case.primals()
    try:
        want = _grads(case, xs, vs)
    except fw.core.errors.UnsupportedError:
        return  # a partial rule, by design (test_grad_records.py lists them)
    p = _dev.place()
    with _dev.on(p):
        got = _grads(case, xs, vs)
    if want is None:
        assert got is None
        return
    name = case.op.name
    if _dev.is_real_gpu() and (name in _dev.GAUGE or name in _dev.UNORDERED_WRITES):
        # sign-free singular/eigen vectors, unordered duplicate writes: the forward
        # value itself differs on a GPU (test_device_ops compares what is comparable)
        got = [None if g is None else g.place for g in got]
        assert all(q in (None, p) for q in got)
        return
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g is None) == (w is None), f"{case.op.name}: gradient {k} exists on one device"
        if g is None:
            continue
        assert g.place == p, f"{case.op.name}: gradient {k} is on {g.place}, inputs on {p}"
        f = _dev.tolerance_scale()
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6 * f, atol=1e-9 * f,
                                   err_msg=f"{case.op.name}: gradient {k} on {p} vs cpu")
