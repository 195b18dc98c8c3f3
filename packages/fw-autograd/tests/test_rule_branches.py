"""Rule branches the op records' samples do not reach, each checked against finite
differences (`fw.autograd.testing.check_vjp`) on a hand-picked call.

Found by mutation testing (`hatch run mutate --area autograd-rules`): a planted bug
in these branches passed every other test. Add a case here when a survivor sits
in a branch only a particular attribute or shape takes.
"""

import numpy as np
import pytest

import fw
from fw.autograd.testing import GradCase, check_vjp, prepare
from fw.core.ops import OPS, call
from fw.core.testing import Sample

RNG = np.random.default_rng(5)


def _r(*shape):
    return RNG.standard_normal(shape)


CASES = {
    # the gradient of a square LU (the records draw mostly non-square matrices, whose
    # gradient is not implemented)
    "lu_square": ("lu", [_r(3, 3) + 3 * np.eye(3)], {"pivot": True}),
    "lu_square_batch": ("lu", [_r(2, 4, 4)], {"pivot": True}),
    # the bias gradient of a channel-last transposed convolution
    "conv_transpose_channel_last_bias": (
        "conv_transpose", [_r(2, 3, 3, 2), _r(2, 3, 2, 2), _r(3)],
        {"stride": 2, "channel_last": True}),
    "conv_channel_last_bias": ("conv", [_r(2, 4, 4, 2), _r(3, 2, 2, 2), _r(3)],
                               {"channel_last": True, "padding": 1}),
    # a non-negative axis counted in the broadcast shape of operands of different ranks
    "vecdot_ranks_differ": ("vecdot", [_r(2, 3, 4), _r(4)], {"axis": 2}),
    "vecdot_ranks_differ_y": ("vecdot", [_r(4), _r(2, 3, 4)], {"axis": 2}),
    # 'xy' swaps only the first two axes: inputs 2 and 3 keep theirs
    "meshgrid_xy_4": ("meshgrid", [[_r(2), _r(3), _r(4), _r(5)]], {"indexing": "xy"}),
    "meshgrid_ij_3": ("meshgrid", [[_r(2), _r(3), _r(4)]], {"indexing": "ij"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_branch_matches_finite_differences(name):
    op, args, attrs = CASES[name]
    case = GradCase(op, Sample(args, {**OPS[op].attrs, **attrs}))
    us, vs = prepare(case, np.random.default_rng(0))
    assert check_vjp(case, us, vs) is None, f"{name}: the point was skipped"


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_straight_through_gradient(hard):
    # both outputs are differentiated as the soft sample softmax((x + G) / T): the
    # gradient is the softmax VJP of the soft output, divided by the temperature
    x = _r(2, 5)
    temp = 0.7
    t = fw.to_tensor(x, stop_gradient=False)
    fw.seed(3)
    out, soft = call("gumbel_softmax", t, temperature=temp, hard=hard, axis=-1)
    c1, c2 = _r(2, 5), _r(2, 5)
    loss = fw.sum(out * fw.to_tensor(c1)) + fw.sum(soft * fw.to_tensor(c2))
    (g,) = fw.grad([loss], [t])
    s = soft.numpy()
    c = c1 + c2
    want = s * (c - np.sum(s * c, axis=-1, keepdims=True)) / temp
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-10, atol=1e-12)
