"""Records for conv / conv_transpose (fw.core.ops.conv): every padding form, strides,
dilations, groups, both layouts, 1 to 3 spatial dims, optional bias, empty batches."""

import numpy as np
from hypothesis import strategies as st

from fw.core.errors import InvalidArgumentError
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record

F32 = np.float32


def _padding(draw, nd, channel_last):
    """One of Paddle's padding spellings, and its explicit (begin, end) pairs or None."""
    kind = draw(st.sampled_from(["int", "per_dim", "begin_end", "pairs", "SAME", "VALID"]))
    if kind in ("SAME", "VALID"):
        spelled = kind if draw(st.booleans()) else kind.lower()
        return spelled, (None if kind == "SAME" else [(0, 0)] * nd)
    if kind == "int":
        p = draw(st.integers(0, 2))
        return p, [(p, p)] * nd
    if kind == "per_dim":
        ps = [draw(st.integers(0, 2)) for _ in range(nd)]
        return ps, [(p, p) for p in ps]
    pairs = [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(nd)]
    if kind == "begin_end":
        return [v for p in pairs for v in p], pairs
    full = [[0, 0]] + [list(p) for p in pairs]
    full.insert(len(full) if channel_last else 1, [0, 0])
    return full, pairs


def _conv_case(draw, dtype, transpose):
    nd = draw(st.integers(1, 3))
    side = {1: 7, 2: 5, 3: 4}[nd]
    n = draw(st.integers(0, 2))
    groups = draw(st.sampled_from([1, 1, 2]))
    cin = groups * draw(st.integers(1, 2))
    cout = groups * draw(st.integers(1, 2))
    ks = [draw(st.integers(1, 3)) for _ in range(nd)]
    stride = [draw(st.integers(1, 2)) for _ in range(nd)]
    dil = [draw(st.integers(1, 2)) for _ in range(nd)]
    cl = draw(st.booleans())
    padding, pairs = _padding(draw, nd, cl)
    sizes = []
    for j in range(nd):
        eff = dil[j] * (ks[j] - 1) + 1
        lo = 1 if pairs is None else max(1, eff - pairs[j][0] - pairs[j][1])
        if transpose and pairs is not None:  # the output must not be cropped away
            lo = max(lo, -(-(pairs[j][0] + pairs[j][1] - eff + 1) // stride[j]) + 1)
        sizes.append(draw(st.integers(lo, max(lo, side))))
    xs = (n,) + tuple(sizes) + (cin,) if cl else (n, cin) + tuple(sizes)
    ws = ((cin, cout // groups) if transpose else (cout, cin // groups)) + tuple(ks)
    args = [arrays(draw, dtype, xs), arrays(draw, dtype, ws, -1, 1),
            arrays(draw, dtype, (cout,)) if draw(st.booleans()) else None]
    attrs = {"stride": stride if draw(st.booleans()) else stride[0] if len(set(stride)) == 1
             else stride, "padding": padding, "dilation": dil, "groups": groups,
             "channel_last": cl}
    return args, attrs, (nd, sizes, ks, stride, dil, pairs)


def _conv(draw, dtype):
    args, attrs, _ = _conv_case(draw, dtype, False)
    return Sample(args, attrs)


def _conv_t(draw, dtype):
    args, attrs, (nd, sizes, ks, stride, dil, pairs) = _conv_case(draw, dtype, True)
    attrs["output_padding"] = 0
    attrs["output_size"] = None
    choice = draw(st.sampled_from(["none", "output_padding", "output_size"]))
    if choice == "output_padding":
        same = isinstance(attrs["padding"], str) and attrs["padding"].upper() == "SAME"
        attrs["output_padding"] = [draw(st.integers(0, max(s, 1 if same else d) - 1))
                                   for s, d in zip(stride, dil)]
    elif choice == "output_size" and not isinstance(attrs["padding"], str):
        base = [(i - 1) * s - b - e + d * (k - 1) + 1
                for i, s, d, k, (b, e) in zip(sizes, stride, dil, ks, pairs)]
        attrs["output_size"] = [b + draw(st.integers(0, s - 1)) for b, s in zip(base, stride)]
    return Sample(args, attrs)


X = np.ones((1, 2, 5, 5), F32)
W = np.ones((3, 2, 3, 3), F32)
CONV_ERRORS = [
    ([X, np.ones((3, 4, 3, 3), F32), None], {}, InvalidArgumentError, "input channels"),
    ([X, W, None], {"groups": 2}, InvalidArgumentError, "input channels"),
    ([X, W, np.ones(4, F32)], {}, InvalidArgumentError, "bias"),
    ([X, np.ones((3, 2, 7, 7), F32), None], {}, InvalidArgumentError, "smaller than the dilated"),
    ([X, W, None], {"padding": "FULL"}, InvalidArgumentError, "'SAME', 'VALID'"),
    ([X, W, None], {"padding": [1, 2, 3]}, InvalidArgumentError, "1, 2 or 4 entries"),
    ([X, W, None], {"padding": [[0, 1], [0, 0], [1, 1], [1, 1]]}, InvalidArgumentError,
     "batch or channel"),
    ([X, W, None], {"stride": 0}, InvalidArgumentError, "'stride'=\\[0\\] must be >= 1"),
    ([np.ones((2, 5), F32), np.ones((3, 2), F32), None], {}, InvalidArgumentError,
     "at least 1 spatial"),
]
record("conv", _conv, dtypes=FLOATS + FLOATS_LOW, grad_order=2,
       tol={"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)}, errors=CONV_ERRORS)

WT = np.ones((2, 3, 3, 3), F32)
record("conv_transpose", _conv_t, dtypes=FLOATS + FLOATS_LOW, grad_order=2,
       tol={"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)},
       errors=[
           ([X, np.ones((3, 3, 3, 3), F32), None], {}, InvalidArgumentError, "input channels"),
           ([X, WT, None], {"output_padding": 1}, InvalidArgumentError,
            "smaller than max\\(stride, dilation\\)"),
           ([X, WT, None], {"output_size": [9, 9]}, InvalidArgumentError, "must be in \\[7, 8\\)"),
           ([X, WT, None], {"stride": 2, "output_size": [11, 11], "output_padding": 1},
            InvalidArgumentError, "mutually exclusive"),
           ([X, WT, np.ones(2, F32)], {}, InvalidArgumentError, "bias"),
       ])
