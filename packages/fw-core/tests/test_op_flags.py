"""Declaration flags and attribute forms of the op table, checked for every op with a
record: ``differentiable=False`` ops record no gradient, and int-list attributes may be
given as a 1-D integer tensor or a list of 0-D tensors (Paddle accepts a
Tensor for shape-like arguments) with the same result as a list."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fw
from fw.core import dtypes as _dt
from fw.core.dispatch import invoke
from fw.core.errors import FwError
from fw.core.ops import OPS
from fw.core.tensor import to_tensor
from fw.core.testing import as_tuple, load_all, to_args

RECORDS = load_all()
FEW = settings(max_examples=5, deadline=None, derandomize=True,
               suppress_health_check=list(HealthCheck))


def _sample(rec, data):
    return rec.sample(data.draw, data.draw(st.sampled_from(rec.dtypes)))


def _rules():
    from fw.autograd.rules import RULES  # fw-autograd's VJP table: the flag's oracle

    return RULES


# differentiated by the static engine itself (they hold nested blocks), without a rule
CONTROL_FLOW = {"cond", "while"}


def test_differentiable_flag_matches_the_rule_table():
    """An op is differentiable iff it has a VJP rule: a differentiable op without one
    (a fused op's flag flipped) fails at backward, one with a rule wrongly marked
    non-differentiable silently drops gradients. (fw-autograd checks the same from
    its side; this is the op table's.)"""
    rules = _rules()
    wrong = sorted(n for n, op in OPS.items()
                   if op.differentiable != (n in rules) and n not in CONTROL_FLOW)
    assert not wrong, f"differentiable flag disagrees with the rule table: {wrong}"


@pytest.mark.parametrize("name", sorted(n for n in OPS if n not in _rules()
                                        and n not in CONTROL_FLOW and RECORDS.get(n)))
def test_ops_without_a_rule_record_no_gradient(name):
    op, ran = OPS[name], []

    @FEW
    @given(data=st.data())
    def run(data):
        s = _sample(RECORDS[name][0], data)
        args = to_args(s.args)
        floats = [a for a in args if isinstance(a, fw.Tensor) and a.dtype.kind == _dt._FLOAT]
        if not floats:
            return
        for a in floats:
            a.stop_gradient = False
        try:
            out = as_tuple(invoke(op, args, dict(s.attrs)))
        except FwError:
            return
        assert all(o.stop_gradient for o in out if isinstance(o, fw.Tensor)), \
            f"{name} is declared non-differentiable but its output asks for a gradient"
        ran.append(1)

    with fw.enable_grad():
        run()
    if not ran:
        pytest.skip(f"{name}: no float-input sample")


def _int_list_attrs(s):
    return [k for k, v in s.attrs.items() if isinstance(v, (list, tuple)) and len(v) >= 2
            and all(type(i) is int for i in v)]


def _values(out):
    return [np.asarray(o.numpy()) for o in as_tuple(out) if isinstance(o, fw.Tensor)]




def _nan_comparable(a):
    """NumPy's array comparison treats NaN as equal to NaN only for its own float
    dtypes; a bfloat16 NaN (ml_dtypes) compares unequal to itself there."""
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


@pytest.mark.parametrize("name", sorted(n for n in RECORDS if n in OPS))
def test_int_list_attrs_take_tensors(name):
    op, seen = OPS[name], []

    @FEW
    @given(data=st.data())
    def run(data):
        rec = RECORDS[name][data.draw(st.integers(0, len(RECORDS[name]) - 1))]
        s = _sample(rec, data)
        keys = _int_list_attrs(s)
        if not keys or rec.nondeterministic:
            return
        try:
            want = _values(invoke(op, to_args(s.args), dict(s.attrs)))
        except FwError:
            return
        for k in keys:
            v = list(s.attrs[k])
            # Paddle's two tensor forms (a NumPy array is not one of them)
            for form in (to_tensor(np.array(v, np.int64)),
                         [to_tensor(np.array(i, np.int64)) for i in v]):
                got = _values(invoke(op, to_args(s.args), {**s.attrs, k: form}))
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(_nan_comparable(g), _nan_comparable(w))
            seen.append(k)

    run()
    if not seen:
        pytest.skip(f"{name}: no int-list attribute in its samples")
