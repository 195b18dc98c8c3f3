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
    # the plain (unweighted) covariance of several observations
    "cov_5_observations": ("cov", [_r(3, 5), None, None], {"ddof": 1}),
    "cov_columns": ("cov", [_r(6, 2), None, None], {"rowvar": False, "ddof": 0}),
    # only the weight differentiated (x a constant): its gradient is still computed
    "conv_weight_only": ("conv", [_r(2, 2, 5, 5), _r(3, 2, 3, 3), None], {"padding": 1}, (1,)),
    "conv_bias_only": ("conv", [_r(1, 2, 4, 4), _r(3, 2, 3, 3), _r(3)], {}, (2,)),
    # complex inputs (the records check sgn in float64 only)
    "sgn_complex": ("sgn", [_r(3, 2) + 1j * _r(3, 2)], {}),
    # batch statistics with an affine weight and bias
    "batch_norm_train_affine": ("batch_norm", [_r(4, 3, 2), np.zeros(3), np.ones(3),
                                               _r(3), _r(3)], {"training": True}, (0, 3, 4)),
    # batched least squares: the last two dims are the matrix
    "lstsq_batched": ("lstsq", [_r(2, 5, 3), _r(2, 5, 2)], {}),
    # the bias of a linear layer, alone and with the others
    "linear_bias": ("linear", [_r(3, 4), _r(4, 2), _r(2)], {}),
    "linear_bias_only": ("linear", [_r(3, 4), _r(4, 2), _r(2)], {}, (2,)),
    # 'xy' swaps only the first two axes: inputs 2 and 3 keep theirs
    "meshgrid_xy_4": ("meshgrid", [[_r(2), _r(3), _r(4), _r(5)]], {"indexing": "xy"}),
    "meshgrid_ij_3": ("meshgrid", [[_r(2), _r(3), _r(4)]], {"indexing": "ij"}),
    # neither x nor dx: unit spacing
    "trapezoid_unit_spacing": ("trapezoid", [_r(3, 5), None], {"axis": 1}),
    "cumulative_trapezoid_unit_spacing": ("cumulative_trapezoid", [_r(4, 3), None],
                                          {"axis": 0}),
    # the loss divided by a given normalizer (logit differentiated; labels are 0/1)
    "sigmoid_focal_normalizer": ("sigmoid_focal_loss",
                                 [_r(2, 3), (RNG.random((2, 3)) > 0.5).astype(float),
                                  np.array([2.5])], {"reduction": "mean"}, (0,)),
    # frequency and analytic weights with ddof: the factor sum(w * aw) / sum(w)
    "cov_both_weights_ddof": ("cov", [_r(2, 5), np.array([1, 2, 1, 3, 1]),
                                      RNG.random(5) + 0.5], {"ddof": 1}, (0,)),
    # a wide matrix: (I - A+ A) is not zero, the third term of the pinv gradient
    "pinv_wide": ("pinv", [_r(2, 4)], {}),
    "pinv_tall_batch": ("pinv", [_r(2, 4, 3)], {}),
    # layer norm with only the weight or only the bias differentiated
    "layer_norm_weight_only": ("layer_norm", [_r(2, 3, 4), _r(12), _r(12)], {}, (1,)),
    "layer_norm_bias_only": ("layer_norm", [_r(2, 3, 4), _r(12), _r(12)], {}, (2,)),
    "layer_norm_bias_without_weight": ("layer_norm", [_r(2, 3, 4), None, _r(12)], {}, (2,)),
    # an operand with a repeated subscript (its diagonal) before another operand
    "einsum_diagonal_first": ("einsum", [[_r(3, 3), _r(3)]], {"equation": "ii,i->i"}),
    # sample points of y's shape (x differentiated too)
    "trapezoid_full_x": ("trapezoid", [_r(3, 4), np.cumsum(RNG.random((3, 4)) + 0.5, 1)],
                         {"axis": 1}),
    # without include_self, the places written get no gradient from arr, the others all
    "put_along_axis_add_no_self": ("put_along_axis", [_r(3, 4), np.array([[0, 2], [1, 1],
                                                                          [3, 0]]), _r(3, 2)],
                                   {"axis": 1, "reduce": "add", "include_self": False},
                                   (0, 2)),
    # a non-negative axis 0 with operands of the same rank
    "vecdot_axis0": ("vecdot", [_r(4, 3), _r(4, 3)], {"axis": 0}),
    # QR of a complex matrix (copyltu keeps the real part of the diagonal) and of a
    # wide one (A = Q [U | V]: the V block's gradient goes through Q)
    "qr_complex": ("qr", [_r(3, 3) + 1j * _r(3, 3)], {"mode": "reduced"}),
    "qr_wide": ("qr", [_r(2, 4)], {"mode": "reduced"}),
    "qr_wide_complex_batch": ("qr", [_r(2, 2, 3) + 1j * _r(2, 2, 3)], {"mode": "reduced"}),
    # a letter summed within one operand after an ellipsis of two dims
    "einsum_ellipsis_summed_letter": ("einsum", [[_r(2, 3, 4, 5), _r(4)]],
                                      {"equation": "...ij,i->...i"}),
    # normalize along the first axis of a non-square matrix, with p = 2 and p = 1
    "normalize_axis0_p2": ("normalize", [_r(3, 4)], {"axis": 0, "p": 2.0}),
    "normalize_axis1_p1": ("normalize", [_r(3, 4)], {"axis": 1, "p": 1.0}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_branch_matches_finite_differences(name):
    op, args, attrs, *grad_args = CASES[name]
    case = GradCase(op, Sample(args, {**OPS[op].attrs, **attrs},
                               grad_args[0] if grad_args else None))
    us, vs = prepare(case, np.random.default_rng(0))
    assert check_vjp(case, us, vs) is None, f"{name}: the point was skipped"


def test_complex_slogdet_sign_and_log_gradients_match_finite_differences():
    # Paddle's slogdet stacks [sign, log|det|] in one complex tensor. A loss on the
    # sign (complex) and on the real part of the log entry: the rule's gradient is
    # checked along a random direction U as Re(sum(conj(grad) * U)). (A cotangent with
    # an imaginary part on the log entry is left out: Paddle 3.3.1 and fw both pass it
    # on although that entry's imaginary part is constant.)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    u = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    a, b = 0.3 - 0.7j, 0.4

    def loss(t):
        out = fw.linalg.slogdet(t)
        return fw.real(out[0] * np.conj(a)) + b * fw.real(out[1])

    t = fw.to_tensor(x, stop_gradient=False)
    (g,) = fw.grad([loss(t)], [t])
    eps = 1e-6
    fd = (loss(fw.to_tensor(x + eps * u)).item() - loss(fw.to_tensor(x - eps * u)).item()) / (
        2 * eps)
    np.testing.assert_allclose(np.real(np.sum(np.conj(g.numpy()) * u)), fd, rtol=1e-6)


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


def test_scalar_base_pow():
    # d/dy b**y = b**y log b; 0 ** y is constant 0 for y > 0
    y = _r(4)
    t = fw.to_tensor(y, stop_gradient=False)
    (g,) = fw.grad([fw.sum(call("pow", 2.5, t))], [t])
    np.testing.assert_allclose(g.numpy(), 2.5 ** y * np.log(2.5), rtol=1e-12)
    t = fw.to_tensor(np.abs(y) + 0.5, stop_gradient=False)
    (g,) = fw.grad([fw.sum(call("pow", 0.0, t))], [t])
    np.testing.assert_array_equal(g.numpy(), np.zeros(4))


def _eig_loss(a, c1, c2):
    w, v = fw.linalg.eig(a)
    # a function of the eigenpairs that does not depend on the eigenvectors' phases
    return fw.sum(fw.real(w) * c1) + fw.sum(fw.abs(v) ** 2 * c2)


def test_eig_gradient_of_a_phase_invariant_loss():
    x = _r(3, 3)
    c1, c2 = fw.to_tensor(_r(3)), fw.to_tensor(_r(3, 3))
    t = fw.to_tensor(x, stop_gradient=False)
    (g,) = fw.grad([_eig_loss(t, c1, c2)], [t])
    want = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = 1e-6
        want[i] = (float(_eig_loss(fw.to_tensor(x + d), c1, c2).numpy()) -
                   float(_eig_loss(fw.to_tensor(x - d), c1, c2).numpy())) / 2e-6
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs", [{"soft_label": True}, {"ignore_index": -1},
                                   {"ignore_index": -1, "reduction": "sum"}])
def test_cross_entropy_re_expression_equals_the_explicit_backward(attrs):
    # create_graph=True differentiates the re-expression, a plain backward uses the
    # op's own gradient kernel: two independent computations of one gradient
    attrs = {**OPS["cross_entropy_with_softmax"].attrs, **attrs}
    logits = _r(4, 5)
    label = (np.abs(_r(4, 5)) if attrs["soft_label"] else
             RNG.integers(0, 5, (4, 1)).astype(np.int64))
    if attrs["soft_label"]:
        label = label / label.sum(axis=1, keepdims=True)
    got = []
    for cg in (False, True):
        t = fw.to_tensor(logits, stop_gradient=False)
        out = call("cross_entropy_with_softmax", t, fw.to_tensor(label), None, **attrs)
        out = out[0] if isinstance(out, tuple) else out
        (g,) = fw.grad([fw.sum(out * fw.to_tensor(np.cos(np.arange(out.size) + 0.5)
                                                 .reshape(out.shape)))], [t], create_graph=cg)
        got.append(g.numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-10, atol=1e-12)


def test_hsigmoid_clips_the_pre_activation_at_40():
    # Paddle clips each node's pre-activation to [-40, 40]: beyond, the loss is flat
    for pre in (-40.5, 40.5, -39.5):
        x = fw.to_tensor(np.array([[1.0]]), stop_gradient=False)
        w = fw.to_tensor(np.full((1, 1), pre))
        loss = call("hsigmoid_loss", x, fw.to_tensor(np.array([[1]], dtype=np.int64)), w,
                    None, None, None, num_classes=2)
        (g,) = fw.grad([fw.sum(loss)], [x])
        if abs(pre) > 40:
            assert g.numpy()[0, 0] == 0, pre
        else:
            assert g.numpy()[0, 0] != 0, pre


POOLS = [
    ("avg_pool", {"kernel_size": [3, 2], "stride": [2, 2], "padding": [1, 1],
                  "ceil_mode": True}),
    ("avg_pool", {"kernel_size": [2, 2], "stride": [1, 2], "padding": [1, 0],
                  "exclusive": False}),
    ("max_pool", {"kernel_size": [3, 2], "stride": [2, 1], "padding": [1, 1]}),
    ("lp_pool", {"norm_type": 2.0, "kernel_size": [2, 2], "stride": [2, 2], "padding": [1, 0],
                 "ceil_mode": True}),
    ("max_pool", {"kernel_size": [2, 3], "stride": [2, 2], "padding": [0, 1],
                  "channel_last": True}),
    ("avg_pool", {"kernel_size": [2, 2], "stride": [1, 2], "padding": [1, 0],
                  "channel_last": True}),
]


@pytest.mark.parametrize("name,attrs", POOLS, ids=[f"{n}{i}" for i, (n, _) in enumerate(POOLS)])
def test_pool_re_expression_equals_the_explicit_backward(name, attrs):
    # with padding (and ceil_mode): create_graph=True differentiates the window
    # re-expression, a plain backward the *_pool_grad kernels
    x = np.abs(_r(2, 2, 5, 6)) + 0.1
    got = []
    for cg in (False, True):
        t = fw.to_tensor(x, stop_gradient=False)
        out = call(name, t, **{**OPS[name].attrs, **attrs})
        c = fw.to_tensor(np.cos(np.arange(out.size) * 0.7).reshape(out.shape))
        got.append(fw.grad([fw.sum(out * c)], [t], create_graph=cg)[0].numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["conv", "conv_transpose"])
def test_conv_re_expression_equals_the_explicit_backward(name):
    # create_graph=True differentiates the re-expression (_conv_fn), a plain backward
    # the conv_grad_* kernels: both gradients, bias included, must agree
    x, w, b = _r(2, 2, 5, 5), _r(2, 2, 3, 3), _r(2)
    got = []
    for cg in (False, True):
        ts = [fw.to_tensor(a, stop_gradient=False) for a in (x, w, b)]
        out = call(name, *ts, **{**OPS[name].attrs, "padding": 1})
        c = fw.to_tensor(np.cos(np.arange(out.size) * 0.9).reshape(out.shape))
        got.append([g.numpy() for g in fw.grad([fw.sum(out * c)], ts, create_graph=cg)])
    for a, e in zip(got[1], got[0]):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("create_graph", [False, True])
def test_hsigmoid_with_empty_paths_has_a_zero_gradient(create_graph):
    # custom paths of length 0: the loss is 0 for every sample, and input and weight
    # still get a (zero) gradient rather than none
    x = fw.to_tensor(_r(2, 3), stop_gradient=False)
    w = fw.to_tensor(_r(1, 3), stop_gradient=False)
    empty = fw.to_tensor(np.zeros((2, 0), np.int64))
    out = call("hsigmoid_loss", x, fw.to_tensor(np.array([[0], [0]], np.int64)), w, None,
               empty, empty, num_classes=2)
    assert out.tolist() == [[0.0], [0.0]]
    gx, gw = fw.grad([fw.sum(out)], [x, w], create_graph=create_graph, allow_unused=True)
    assert gx is not None and not gx.numpy().any()
