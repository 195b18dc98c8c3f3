"""Ops declared ``to_float`` compute integer inputs in the default float dtype, as
Paddle's do (``paddle.sin(int_tensor)`` is float32): each record's first argument,
rounded to int32, gives a float32 result equal to the same call on those
integer values given as float32. A wrong flag either fails on integers or returns an
integer (or float64) tensor."""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import fw
from fw.core.dispatch import invoke
from fw.core.ops import OPS
from fw.core.testing import as_tuple, assert_close, load_all, to_args

RECORDS = load_all()
# random ops compare shapes and dtypes only
TO_FLOAT = sorted(n for n, o in OPS.items() if o.to_float and n in RECORDS)


def _as_ints(args):
    """The sample with its first argument, when a floating array, rounded to int32 (and
    its float32 twin); weights, statistics and the like stay floating."""
    ints, floats, changed = [], [], False
    for i, a in enumerate(args):
        if i == 0 and isinstance(a, np.ndarray) and a.dtype.kind == "f":
            r = np.clip(np.nan_to_num(np.round(a.astype(np.float64))), -8, 8).astype(np.int32)
            ints.append(r)
            floats.append(r.astype(np.float32))
            changed = True
        else:
            ints.append(a)
            floats.append(a)
    return ints, floats, changed


@pytest.mark.parametrize("name", TO_FLOAT)
@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
@given(data=st.data())
def test_integer_inputs_compute_in_the_default_float_dtype(name, data):
    op = OPS[name]
    rec = data.draw(st.sampled_from(RECORDS[name]))
    if fw.float32 not in rec.dtypes:
        return
    s = rec.sample(data.draw, fw.float32)
    ints, floats, changed = _as_ints(s.args)
    if not changed:
        return
    fw.seed(0)
    try:
        want = as_tuple(invoke(op, to_args(floats), dict(s.attrs)))
    except fw.core.errors.FwError:
        return  # the integer values are outside this op's domain (the float call says so)
    fw.seed(0)
    got = as_tuple(invoke(op, to_args(ints), dict(s.attrs)))
    for k, (g, w) in enumerate(zip(got, want)):
        if not isinstance(g, fw.Tensor):
            continue
        assert g.dtype == w.dtype, f"{name} output {k}: {g.dtype} from int32, {w.dtype} " \
                                   f"from float32"
        if not rec.nondeterministic and w.dtype.is_floating_point:
            assert_close(g.numpy(), w.numpy(), w.dtype, 1e-6, 1e-6, what=f"{name} output {k}")
