"""Shape inference with dynamic (-1) dimensions, for every op with a record.

A program built with ``TensorType([-1, 784], ...)`` reaches each op's ``infer`` with
-1 dims; the eager tests never do. For each input dim in turn, made dynamic:
- infer still succeeds wherever the static shapes are valid (a check on sizes may fire
  only when both sizes are known);
- each output dim is either -1 or the eager (static) size;
- an output dim that changes when that input dim changes (inferred with the size + 1,
  where that is valid) must be -1: a static answer there would be a guess.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fw.core.dispatch import input_types, invoke
from fw.core.errors import FwError
from fw.core.ir import TensorType
from fw.core.ir.types import DYN
from fw.core.ops import OPS
from fw.core.testing import as_tuple, load_all, reference_call, to_args

RECORDS = load_all()
# ops whose infer needs a static size by design (the size picks the output's rank or
# a data-dependent count), each with the reason
STATIC_ONLY = {
    "gather_nd": "index's last dim is the depth of indexing: it sets the output's rank",
    "scatter_nd_add": "index's last dim is the depth of indexing: it sets the rank of updates",
    "histogramdd": "x's last dim is the number of axes: it sets the number of outputs",
    "histogramdd_bin_edges": "x's last dim is the number of axes: the number of outputs",
    "unbind": "the size along axis is the number of outputs",
}
# ops whose output rank depends on whether a size is 1 (squeeze drops dims of size 1;
# cov of a single variable is a scalar): with that size dynamic, infer keeps the rank of
# the general case
RANK_BY_SIZE = {"squeeze", "cov"}


def _ops():
    return [pytest.param(n, id=n) for n in sorted(RECORDS)
            if n in OPS and n not in ("cond", "while")]


def _positions(types):
    """(input index, element index or None, dim) of every input dim."""
    for i, t in enumerate(types):
        if isinstance(t, list):
            for j, u in enumerate(t):
                for d in range(len(u.shape)):
                    yield i, j, d
        elif t is not None:
            for d in range(len(t.shape)):
                yield i, None, d


def _with_dim(types, pos, size):
    i, j, d = pos
    out = list(types)

    def change(t):
        s = list(t.shape)
        s[d] = size
        return TensorType(s, t.dtype)

    if j is None:
        out[i] = change(types[i])
    else:
        out[i] = list(types[i])
        out[i][j] = change(types[i][j])
    return out


def _shapes(op, types, attrs):
    return [tuple(t.shape) for t in as_tuple(op.infer(*types, **attrs))
            if isinstance(t, TensorType)]


@pytest.mark.parametrize("name", _ops())
def test_infer_with_dynamic_dims(name):
    op = OPS[name]
    recs = RECORDS[name]
    checked = []

    @settings(max_examples=4, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        rec = recs[data.draw(st.integers(0, len(recs) - 1))]
        s = rec.sample(data.draw, data.draw(st.sampled_from(rec.dtypes)))
        args = to_args(s.args)
        try:
            out = as_tuple(invoke(op, args, dict(s.attrs)))
            _, attrs = reference_call(op, s.args, dict(s.attrs))
        except FwError:
            return
        types = input_types(op, args)
        static = _shapes(op, types, attrs)
        eager = [tuple(np.shape(o.numpy())) for o in out if hasattr(o, "numpy")]
        if len(eager) != len(static) or any(len(a) != len(b) for a, b in zip(eager, static)):
            return  # variadic outputs: test_op_records checks these
        for pos in _positions(types):
            try:
                dyn = _shapes(op, _with_dim(types, pos, DYN), attrs)
            except FwError as e:
                if name in STATIC_ONLY:
                    continue
                raise AssertionError(f"{name}: infer fails with input dim {pos} dynamic "
                                     f"(static shapes {static} are valid): {e}") from e
            assert len(dyn) == len(static)
            if name in RANK_BY_SIZE and any(len(a) != len(b) for a, b in zip(dyn, static)):
                continue
            try:
                bigger = _shapes(op, _with_dim(types, pos, _size(types, pos) + 1), attrs)
            except FwError:
                bigger = None
            for k, (dk, sk) in enumerate(zip(dyn, static)):
                assert len(dk) == len(sk), f"{name}: output {k} rank changes with {pos} dynamic"
                for m, (a, b) in enumerate(zip(dk, sk)):
                    assert a in (DYN, b), \
                        f"{name}: output {k} dim {m} is {a} with input dim {pos} dynamic, " \
                        f"{b} when static"
                    if bigger is not None and len(bigger[k]) == len(sk) and \
                            bigger[k][m] != b:
                        assert a == DYN, \
                            f"{name}: output {k} dim {m} depends on input dim {pos} but is " \
                            f"inferred as {a} when that dim is dynamic"
        checked.append(1)

    run()
    assert checked, f"{name}: no record sample ran"


def _size(types, pos):
    i, j, d = pos
    t = types[i] if j is None else types[i][j]
    return t.shape[d]


def test_arange_dyn_takes_one_number_per_bound():
    # start, end and step are 0-D or one-element tensors (the bounds a traced
    # fw.arange gets from tensors); anything longer is refused
    import fw
    from fw.core.errors import InvalidTypeError
    from fw.core.ops import call

    one = [fw.to_tensor(v) for v in ([1], [7], [2])]
    assert call("arange_dyn", *one).tolist() == [1, 3, 5]
    assert call("arange_dyn", *[fw.to_tensor(v) for v in (1, 7, 2)]).tolist() == [1, 3, 5]
    out = OPS["arange_dyn"].infer(*[TensorType([1], "int64")] * 3, dtype=fw.int64)
    assert list(out.shape) == [DYN]
    with pytest.raises(InvalidTypeError, match="one real number"):
        OPS["arange_dyn"].infer(TensorType([2], "int64"), *[TensorType([], "int64")] * 2,
                                dtype=fw.int64)
    for i in range(3):
        args = list(one)
        args[i] = fw.to_tensor([1, 2])
        with pytest.raises(InvalidTypeError, match="one real number"):
            call("arange_dyn", *args)
