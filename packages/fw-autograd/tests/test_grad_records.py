"""Generic gradient tests driven by fw-core's op records: for every record of a
differentiable op with ``grad_order >= 1``, the VJP rule must agree with
central finite differences (float64) in one random direction; records with
``grad_order == 2`` also check the gradient of the gradient (see
`fw.autograd.testing` for the method and the per-op allowances)."""

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import fw
from fw.autograd.testing import check_record
from fw.core.ops import OPS
from fw.core.testing import load_all

RECORDS = load_all()


def _cases(order):
    out = []
    for name, recs in sorted(RECORDS.items()):
        op = OPS.get(name)
        if op is None or not op.differentiable:
            continue
        for i, r in enumerate(recs):
            if r.grad_order >= order and not r.nondeterministic:
                out.append(pytest.param(r, id=f"{name}-{i}"))
    return out


# shrinking a failing gradient check costs minutes; the failure already shows the draw
_FAST = dict(phases=[Phase.explicit, Phase.reuse, Phase.generate], deadline=None)


@pytest.mark.parametrize("rec", _cases(1))
@settings(max_examples=5, **_FAST)
@given(data=st.data())
def test_vjp_matches_finite_differences(rec, data):
    check_record(rec, data.draw, order=1)


@pytest.mark.parametrize("rec", _cases(2))
@settings(max_examples=3, **_FAST)
@given(data=st.data())
def test_second_order_matches_finite_differences(rec, data):
    check_record(rec, data.draw, order=2)


def test_fw_grad_is_exported():
    assert fw.grad is fw.autograd.grad
