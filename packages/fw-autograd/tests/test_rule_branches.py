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
    # the spectral norms and the nuclear norm (the records draw 'fro' and p = 1, inf)
    "matrix_norm_2": ("matrix_norm", [_r(3, 4)], {"p": 2.0}),
    "matrix_norm_minus_2": ("matrix_norm", [_r(2, 3, 3)], {"p": -2.0}),
    "matrix_norm_nuc": ("matrix_norm", [_r(4, 3)], {"p": "nuc"}),
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


RANDOM = {
    "dropout_train_upscale": ("dropout", {"p": 0.4, "mode": "upscale_in_train"}),
    "dropout_train_downscale": ("dropout", {"p": 0.4, "mode": "downscale_in_infer"}),
    "dropout_eval_upscale": ("dropout", {"p": 0.4, "training": False}),
    "dropout_eval_downscale": ("dropout", {"p": 0.4, "training": False,
                                           "mode": "downscale_in_infer"}),
    "dropout_all": ("dropout", {"p": 1.0}),
    "alpha_dropout_train": ("alpha_dropout", {"p": 0.3}),
    "alpha_dropout_eval": ("alpha_dropout", {"p": 0.3, "training": False}),
    "alpha_dropout_all": ("alpha_dropout", {"p": 1.0}),
}


@pytest.mark.parametrize("create_graph", [False, True], ids=["explicit", "create_graph"])
@pytest.mark.parametrize("name", sorted(RANDOM))
def test_dropout_gradient_matches_finite_differences_with_the_same_draw(name, create_graph):
    # with the seed fixed the op is affine in x: its derivative is exact from one
    # central difference along a random direction
    op, attrs = RANDOM[name]
    attrs = {**OPS[op].attrs, **attrs}
    x, u, c = _r(4, 6), _r(4, 6), _r(4, 6)

    def out(a):
        fw.seed(11)
        return call(op, a, **attrs)[0]

    t = fw.to_tensor(x, stop_gradient=False)
    (g,) = fw.grad([fw.sum(out(t) * fw.to_tensor(c))], [t], create_graph=create_graph)

    def f(a):
        return float(np.sum(out(fw.to_tensor(a)).numpy() * c))

    want = (f(x + 0.5 * u) - f(x - 0.5 * u))
    np.testing.assert_allclose(np.sum(g.numpy() * u), want, rtol=1e-9, atol=1e-12)
