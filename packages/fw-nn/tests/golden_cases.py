"""The fw side of the golden (PyTorch-derived) layer tests.

Each `Case` builds an fw layer, names its inputs and says how to call it. The
generator `fixtures/gen_torch_fixtures.py` pairs every case with a PyTorch twin
(same name), draws inputs and parameter values, runs the twin in float64 and
stores inputs, parameters (in fw's layout), outputs, the output cotangents and
the gradients of ``sum(out_i * cot_i)`` with respect to every float input and
every parameter. `test_golden_layers.py` replays the fixtures (no PyTorch
needed) and, when PyTorch is installed, also checks fresh draws live.

This module imports no PyTorch: CI has none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

import fw
import fw.nn as nn
from fw.nn import functional as F


@dataclasses.dataclass(frozen=True)
class In:
    """One input: a float tensor drawn N(0, 1) (``kind="float"``), from U(lo, hi)
    (``"uniform"``), int class ids in ``[0, hi)`` (``"int"``), or ``make(rng)``."""
    name: str
    shape: tuple = ()
    kind: str = "float"
    lo: float = 0.0
    hi: float = 1.0
    grad: bool = True
    make: Callable | None = None

    def draw(self, rng):
        if self.make is not None:
            return np.asarray(self.make(rng))
        if self.kind == "float":
            return rng.standard_normal(self.shape).astype(np.float32)
        if self.kind == "uniform":
            return rng.uniform(self.lo, self.hi, self.shape).astype(np.float32)
        if self.kind == "int":
            return rng.integers(int(self.lo), int(self.hi), self.shape).astype(np.int64)
        raise ValueError(self.kind)

    @property
    def differentiable(self):
        return self.grad and self.kind in ("float", "uniform") and self.make is None


@dataclasses.dataclass(frozen=True)
class Case:
    """``build()`` makes the layer; ``call(layer, *inputs)`` returns a tensor or a
    (nested) tuple of tensors. `buffers` names float buffers to randomise
    (``name -> (lo, hi)``, uniform); `train` sets the layer's mode. `tol` is the
    relative/absolute tolerance of the float32 fw result against float64 torch."""
    name: str
    build: Callable
    inputs: tuple
    call: Callable | None = None
    buffers: dict = dataclasses.field(default_factory=dict)
    train: bool = True
    tol: float = 1e-4
    param_scale: float = 0.5

    def run(self, layer, *xs):
        return (self.call or (lambda m, *a: m(*a)))(layer, *xs)


def flatten(out):
    """Outputs as a flat list of tensors (tuples/lists/namedtuples unnested)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    return [out]


def _keep_mask(shape, p=0.3):
    """A bool keep-mask with at least the first key kept in every row (a fully
    blocked row has no softmax to compare)."""
    def make(rng):
        keep = rng.random(shape) > p
        keep[..., 0] = True
        return keep
    return make


def _causal(n):
    return lambda rng: np.asarray(nn.Transformer.generate_square_subsequent_mask(n).numpy())


CASES: list[Case] = []


def case(*args, **kw):
    CASES.append(Case(*args, **kw))


# ---------------------------------------------------------------- linear / embedding
case("linear", lambda: nn.Linear(5, 3), (In("x", (2, 4, 5)),))
case("bilinear", lambda: nn.Bilinear(3, 4, 2), (In("x1", (5, 3)), In("x2", (5, 4))))
case("embedding_padding_idx", lambda: nn.Embedding(7, 3, padding_idx=2),
     (In("ids", make=lambda rng: np.array([[0, 2, 5, 2], [6, 1, 2, 3]])),))

# ---------------------------------------------------------------- convolutions
for _nd, _cls in ((1, "Conv1D"), (2, "Conv2D"), (3, "Conv3D")):
    _sp = {1: (9,), 2: (7, 8), 3: (5, 6, 5)}[_nd]
    case(f"conv{_nd}d_basic", (lambda c=_cls: getattr(nn, c)(4, 6, 3, padding=1)),
         (In("x", (2, 4) + _sp),))
    case(f"conv{_nd}d_stride_dil_groups",
         (lambda c=_cls: getattr(nn, c)(4, 6, 3, stride=2, padding=2, dilation=2, groups=2)),
         (In("x", (2, 4) + _sp),))
    for _mode in ("reflect", "replicate", "circular"):
        # padding differs per axis so that swapped axes show
        _pad = {1: 2, 2: [1, 2], 3: [2, 1, 0]}[_nd]
        case(f"conv{_nd}d_pad_{_mode}",
             (lambda c=_cls, m=_mode, p=_pad: getattr(nn, c)(3, 2, 3, padding=p,
                                                              padding_mode=m)),
             (In("x", (2, 3) + _sp),))
case("conv2d_nonsquare", lambda: nn.Conv2D(3, 4, (2, 3), stride=(2, 1), padding=(1, 0),
                                             dilation=(1, 2)), (In("x", (2, 3, 7, 8)),))
case("conv2d_same_even_kernel", lambda: nn.Conv2D(2, 3, 4, padding="same"),
     (In("x", (1, 2, 6, 5)),))
case("conv2d_nhwc", lambda: nn.Conv2D(3, 4, 3, padding=1, data_format="NHWC"),
     (In("x", (2, 5, 6, 3)),))
case("conv2d_no_bias", lambda: nn.Conv2D(3, 4, 3, bias_attr=False), (In("x", (2, 3, 5, 5)),))
for _nd, _cls in ((1, "Conv1DTranspose"), (2, "Conv2DTranspose"), (3, "Conv3DTranspose")):
    _sp = {1: (6,), 2: (4, 5), 3: (3, 4, 3)}[_nd]
    case(f"convT{_nd}d_stride_outpad", (lambda c=_cls: getattr(nn, c)(
        4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)), (In("x", (2, 4) + _sp),))
case("convT2d_dilation_nonsquare", lambda: nn.Conv2DTranspose(
    3, 4, (2, 3), stride=(1, 2), padding=(0, 1), dilation=(2, 1)), (In("x", (2, 3, 4, 5)),))

# ---------------------------------------------------------------- pooling
case("maxpool2d_pad", lambda: nn.MaxPool2D(3, 2, 1), (In("x", (2, 3, 9, 8)),))
case("maxpool2d_ceil", lambda: nn.MaxPool2D(2, ceil_mode=True), (In("x", (2, 3, 7, 7)),))
case("maxpool1d", lambda: nn.MaxPool1D(3, 2), (In("x", (2, 3, 10)),))
case("maxpool3d", lambda: nn.MaxPool3D((2, 2, 3), stride=(2, 1, 2)), (In("x", (1, 2, 4, 5, 6)),))
case("avgpool2d_exclusive", lambda: nn.AvgPool2D(3, 2, 1), (In("x", (2, 3, 9, 8)),))
case("avgpool2d_inclusive", lambda: nn.AvgPool2D(3, 2, 1, exclusive=False),
     (In("x", (2, 3, 9, 8)),))
case("avgpool1d", lambda: nn.AvgPool1D(4, 3, 1), (In("x", (2, 3, 11)),))
case("avgpool3d", lambda: nn.AvgPool3D(2), (In("x", (1, 2, 4, 4, 6)),))
case("adaptive_avgpool2d", lambda: nn.AdaptiveAvgPool2D((4, 3)), (In("x", (2, 3, 9, 8)),))
case("adaptive_maxpool2d", lambda: nn.AdaptiveMaxPool2D(3), (In("x", (2, 3, 9, 8)),))
case("adaptive_avgpool1d", lambda: nn.AdaptiveAvgPool1D(4), (In("x", (2, 3, 10)),))
case("lppool2d", lambda: nn.LPPool2D(2, 2), (In("x", (2, 3, 6, 8), "uniform", 0.1, 2.0),))

# ---------------------------------------------------------------- normalization
case("batchnorm2d_train", lambda: nn.BatchNorm2D(3, momentum=0.8),
     (In("x", (4, 3, 3, 3)),),
     # two training steps, then the running statistics (Paddle: biased batch variance)
     call=lambda m, x: (m(x), m(x * 1.5 + 0.5), m._mean, m._variance),
     buffers={"_mean": (-1.0, 1.0), "_variance": (0.5, 2.0)})
case("batchnorm1d_eval", lambda: nn.BatchNorm1D(4), (In("x", (5, 4, 3)),),
     buffers={"_mean": (-1.0, 1.0), "_variance": (0.5, 2.0)}, train=False)
case("layernorm", lambda: nn.LayerNorm([4, 5]), (In("x", (2, 3, 4, 5)),))
case("groupnorm", lambda: nn.GroupNorm(3, 6), (In("x", (2, 6, 4, 3)),))
case("instancenorm2d", lambda: nn.InstanceNorm2D(3), (In("x", (2, 3, 4, 5)),))
case("instancenorm1d", lambda: nn.InstanceNorm1D(3), (In("x", (2, 3, 6)),))
case("local_response_norm", lambda: nn.LocalResponseNorm(3), (In("x", (2, 6, 3, 3)),))
case("rmsnorm", lambda: nn.RMSNorm([3, 4], epsilon=1e-5), (In("x", (2, 3, 4)),))

# ---------------------------------------------------------------- attention / transformer
case("mha_self", lambda: nn.MultiHeadAttention(8, 2), (In("x", (2, 5, 8)),))
case("mha_bool_mask", lambda: nn.MultiHeadAttention(8, 4),
     (In("q", (2, 3, 8)), In("kv", (2, 4, 8)), In("keep", make=_keep_mask((2, 1, 3, 4)))),
     call=lambda m, q, kv, keep: m(q, kv, kv, attn_mask=keep))
case("mha_kdim_vdim_weights", lambda: nn.MultiHeadAttention(6, 3, kdim=4, vdim=5,
                                                            need_weights=True),
     (In("q", (2, 3, 6)), In("k", (2, 4, 4)), In("v", (2, 4, 5)),
      In("bias", (3, 4), grad=False)),
     call=lambda m, q, k, v, bias: m(q, k, v, attn_mask=bias))
case("transformer_encoder_layer", lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
     (In("x", (2, 5, 8)), In("keep", make=_keep_mask((2, 1, 1, 5)))), tol=2e-4)
case("transformer_encoder_layer_prenorm_gelu", lambda: nn.TransformerEncoderLayer(
    8, 2, 16, dropout=0.0, activation="gelu", normalize_before=True), (In("x", (2, 5, 8)),),
     tol=2e-4)
case("transformer_encoder_stack", lambda: nn.TransformerEncoder(
    nn.TransformerEncoderLayer(8, 2, 12, dropout=0.0), 2, nn.LayerNorm(8)),
     (In("x", (2, 4, 8)),), tol=2e-4)
case("transformer_decoder_layer", lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
     (In("tgt", (2, 4, 8)), In("memory", (2, 5, 8)), In("tgt_mask", make=_causal(4))),
     call=lambda m, t, mem, mask: m(t, mem, tgt_mask=mask), tol=2e-4)

# ---------------------------------------------------------------- recurrent
for _mode in ("SimpleRNN", "LSTM", "GRU"):
    case(f"{_mode.lower()}_bidirect_2layer", (lambda c=_mode: getattr(nn, c)(
        4, 5, num_layers=2, direction="bidirect")), (In("x", (3, 6, 4)),), tol=2e-4)
case("lstm_initial_states", lambda: nn.LSTM(3, 4, num_layers=2),
     (In("x", (2, 5, 3)), In("h0", (2, 2, 4)), In("c0", (2, 2, 4))),
     call=lambda m, x, h, c: m(x, (h, c)))
case("gru_initial_state_time_major", lambda: nn.GRU(3, 4, time_major=True),
     (In("x", (5, 2, 3)), In("h0", (1, 2, 4))), call=lambda m, x, h: m(x, h))
# bidirectional: the forward and backward directions each take their own initial state
case("gru_bidirect_initial_state", lambda: nn.GRU(3, 4, direction="bidirect"),
     (In("x", (2, 5, 3)), In("h0", (2, 2, 4))), call=lambda m, x, h: m(x, h))
case("simplernn_relu", lambda: nn.SimpleRNN(3, 4, activation="relu"), (In("x", (2, 5, 3)),))

case("lstm_proj_size", lambda: nn.LSTM(3, 5, num_layers=2, direction="bidirect", proj_size=2),
     (In("x", (2, 4, 3)),), tol=2e-4)
case("transformer_full", lambda: nn.Transformer(8, 2, 1, 1, 12, dropout=0.0),
     (In("src", (2, 4, 8)), In("tgt", (2, 3, 8)), In("tgt_mask", make=_causal(3))),
     call=lambda m, s, t, mask: m(s, t, tgt_mask=mask), tol=3e-4)

# ---------------------------------------------------------------- activations with parameters
case("prelu_channels", lambda: nn.PReLU(3), (In("x", (2, 3, 4)),))
case("leaky_relu", lambda: nn.LeakyReLU(0.2), (In("x", (3, 5)),))
case("elu", lambda: nn.ELU(0.7), (In("x", (3, 5)),))
case("celu", lambda: nn.CELU(1.3), (In("x", (3, 5)),))
case("hardtanh", lambda: nn.Hardtanh(-0.5, 0.8), (In("x", (3, 5)),))
case("hardshrink", lambda: nn.Hardshrink(0.4), (In("x", (3, 5)),))
case("softshrink", lambda: nn.Softshrink(0.3), (In("x", (3, 5)),))
case("softplus", lambda: nn.Softplus(2.0, 1.5), (In("x", (3, 5)),))
case("thresholded_relu", lambda: nn.ThresholdedReLU(0.3, -0.2), (In("x", (3, 5)),))
case("gelu_tanh", lambda: nn.GELU(approximate=True), (In("x", (3, 5)),))
case("rrelu_eval", lambda: nn.RReLU(0.1, 0.3), (In("x", (3, 5)),), train=False)
case("glu", lambda: nn.GLU(axis=1), (In("x", (3, 6)),))
case("softmax2d", lambda: nn.Softmax2D(), (In("x", (2, 3, 2, 2)),))
case("log_softmax", lambda: nn.LogSoftmax(axis=0), (In("x", (3, 5)),))
case("selu", lambda: nn.SELU(), (In("x", (3, 5)),))

for _act in ("Mish", "Hardswish", "Hardsigmoid", "LogSigmoid", "Tanhshrink", "Softsign",
             "ReLU6", "Sigmoid", "Tanh", "Silu"):
    case(f"act_{_act.lower()}", (lambda a=_act: getattr(nn, a)()),
         # spread over [-4, 4] so that every piece of the piecewise ones is hit
         (In("x", (4, 6), "uniform", -4.0, 4.0),))
case("softmax_axis0", lambda: nn.Softmax(axis=0), (In("x", (3, 5)),))

# ---------------------------------------------------------------- shape / misc layers
case("pixel_shuffle", lambda: nn.PixelShuffle(2), (In("x", (1, 8, 2, 3)),))
case("channel_shuffle", lambda: nn.ChannelShuffle(3), (In("x", (2, 6, 2, 2)),))
case("adaptive_maxpool3d", lambda: nn.AdaptiveMaxPool3D((2, 3, 2)), (In("x", (1, 2, 5, 6, 4)),))
case("adaptive_avgpool3d", lambda: nn.AdaptiveAvgPool3D((3, 2, 3)), (In("x", (1, 2, 5, 6, 4)),))
case("conv1d_nlc", lambda: nn.Conv1D(3, 4, 3, padding=2, dilation=2, data_format="NLC"),
     (In("x", (2, 7, 3)),))
case("pixel_unshuffle", lambda: nn.PixelUnshuffle(2), (In("x", (1, 2, 4, 6)),))
case("pad2d_reflect", lambda: nn.Pad2D([1, 2, 0, 1], mode="reflect"), (In("x", (1, 2, 3, 4)),))
case("pad2d_circular", lambda: nn.Pad2D([2, 0, 1, 2], mode="circular"),
     (In("x", (1, 2, 3, 4)),))
case("pad3d_replicate", lambda: nn.Pad3D([1, 0, 0, 2, 1, 1], mode="replicate"),
     (In("x", (1, 1, 2, 3, 3)),))
case("unfold", lambda: nn.Unfold([2, 3], strides=[1, 2], paddings=1, dilations=1),
     (In("x", (2, 3, 5, 6)),))
case("fold", lambda: nn.Fold([4, 5], [2, 2]), (In("x", (2, 12, 12)),))
case("cosine_similarity", lambda: nn.CosineSimilarity(axis=1), (In("a", (4, 6)), In("b", (4, 6))))
case("pairwise_distance", lambda: nn.PairwiseDistance(p=3.0), (In("a", (4, 6)), In("b", (4, 6))))
case("upsample_bilinear", lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
     (In("x", (1, 2, 3, 4)),))

# ---------------------------------------------------------------- functional forms
# (a parameterless Identity carries the call; what is checked is the function with
# Paddle's defaults: ceil_mode=False, exclusive=True, align_corners=True for grids)
def fn_case(name, fn, inputs, **kw):
    case(name, nn.Identity, inputs, call=lambda m, *xs: fn(*xs), **kw)


fn_case("f_max_pool1d_defaults", lambda x: F.max_pool1d(x, 3, 2), (In("x", (2, 3, 10)),))
fn_case("f_avg_pool1d_defaults", lambda x: F.avg_pool1d(x, 3, 2, 1), (In("x", (2, 3, 10)),))
fn_case("f_max_pool2d_defaults", lambda x: F.max_pool2d(x, 3, 2), (In("x", (1, 2, 8, 6)),))
fn_case("f_avg_pool2d_defaults", lambda x: F.avg_pool2d(x, 3, 2, 1), (In("x", (1, 2, 8, 6)),))
fn_case("f_max_pool3d_defaults", lambda x: F.max_pool3d(x, 3, 2), (In("x", (1, 1, 6, 6, 8)),))
fn_case("f_avg_pool3d_defaults", lambda x: F.avg_pool3d(x, 3, 2, 1),
        (In("x", (1, 1, 6, 6, 8)),))
fn_case("f_zeropad2d_int", lambda x: F.zeropad2d(x, 2), (In("x", (1, 2, 3, 4)),))
for _ac in (True, False):
    fn_case(f"f_affine_grid_ac{int(_ac)}",
            (lambda th, ac=_ac: F.affine_grid(th, [2, 3, 4, 5], align_corners=ac)),
            (In("theta", (2, 2, 3)),))
for _mode, _pad, _ac in (("bilinear", "zeros", True), ("bilinear", "zeros", False),
                         ("bilinear", "reflection", True), ("bilinear", "border", False),
                         ("nearest", "zeros", False), ("nearest", "border", True)):
    fn_case(f"f_grid_sample_{_mode}_{_pad}_ac{int(_ac)}",
            (lambda x, g, m=_mode, p=_pad, ac=_ac: F.grid_sample(x, g, m, p, ac)),
            # nearest sampling has no gradient with respect to the grid
            (In("x", (2, 3, 4, 5)), In("grid", (2, 3, 4, 2), "uniform", -1.3, 1.3,
                                       grad=_mode == "bilinear")))
for _ac in (True, False):
    # an image axis of size 1 or 2: the reflection span degenerates
    fn_case(f"f_grid_sample_reflection_narrow_ac{int(_ac)}",
            (lambda x, g, ac=_ac: F.grid_sample(x, g, "bilinear", "reflection", ac)),
            (In("x", (1, 2, 2, 1)), In("grid", (1, 3, 2, 2), "uniform", -1.6, 1.6)))
case("upsampling_nearest2d", lambda: nn.UpsamplingNearest2D(scale_factor=2),
     (In("x", (1, 2, 3, 4)),))
case("upsampling_bilinear2d", lambda: nn.UpsamplingBilinear2D(size=[5, 7]),
     (In("x", (1, 2, 3, 4)),))
case("sync_batchnorm_2d_input", lambda: nn.SyncBatchNorm(3), (In("x", (5, 3)),))
case("sync_batchnorm_3d_input", lambda: nn.SyncBatchNorm(3), (In("x", (4, 3, 5)),))
case("sync_batchnorm_5d_input", lambda: nn.SyncBatchNorm(2), (In("x", (2, 2, 3, 2, 3)),))

# ---------------------------------------------------------------- losses
_W5 = np.array([0.5, 1.0, 2.0, 0.3, 1.5], np.float32)
_labels_with_ignored = In("label", make=lambda rng: np.array([0, 3, -100, 4, 1, 2]))
case("cross_entropy_weight_ignore", lambda: nn.CrossEntropyLoss(weight=fw.to_tensor(_W5)),
     (In("logits", (6, 5)), _labels_with_ignored))
case("cross_entropy_smoothing", lambda: nn.CrossEntropyLoss(label_smoothing=0.2),
     (In("logits", (6, 5)), In("label", (6,), "int", 0, 5)))
case("cross_entropy_sum_ignore3", lambda: nn.CrossEntropyLoss(ignore_index=3, reduction="sum"),
     (In("logits", (6, 5)), In("label", make=lambda rng: np.array([0, 3, 3, 4, 1, 2]))))
case("cross_entropy_soft_label", lambda: nn.CrossEntropyLoss(soft_label=True),
     (In("logits", (4, 5)),
      In("label", make=lambda rng: rng.dirichlet(np.ones(5), 4).astype(np.float32),
         grad=False)))
case("cross_entropy_nd_axis1", lambda: nn.CrossEntropyLoss(axis=1, reduction="none"),
     (In("logits", (2, 5, 3)), In("label", (2, 3), "int", 0, 5)))
case("nll_weight_ignore", lambda: nn.NLLLoss(weight=fw.to_tensor(_W5), ignore_index=1),
     (In("logp", (6, 5)), In("label", make=lambda rng: np.array([0, 1, 2, 4, 1, 3]))))
case("bce_weight", lambda: nn.BCELoss(weight=fw.to_tensor(np.linspace(0.5, 2, 4)
                                                          .astype(np.float32))),
     (In("p", (3, 4), "uniform", 0.05, 0.95), In("y", (3, 4), "uniform", 0.0, 1.0, grad=False)))
case("bce_with_logits_pos_weight", lambda: nn.BCEWithLogitsLoss(
    pos_weight=fw.to_tensor(np.array([0.5, 1.0, 3.0, 2.0], np.float32)), reduction="sum"),
     # hard labels: with soft ones Paddle 2's pos_weight scales the whole term (fw
     # follows it), torch's only the positive part
     (In("x", (3, 4)), In("y", make=lambda rng: (rng.random((3, 4)) > 0.5).astype(np.float32))))
case("mse_sum", lambda: nn.MSELoss(reduction="sum"), (In("a", (3, 4)), In("b", (3, 4))))
case("l1_none", lambda: nn.L1Loss(reduction="none"), (In("a", (3, 4)), In("b", (3, 4))))
case("smooth_l1_delta", lambda: nn.SmoothL1Loss(delta=0.6), (In("a", (3, 4)), In("b", (3, 4))))
case("kldiv_batchmean", lambda: nn.KLDivLoss(reduction="batchmean"),
     (In("logq", (3, 4)), In("p", (3, 4), "uniform", 0.05, 1.0, grad=False)))
case("kldiv_log_target", lambda: nn.KLDivLoss(reduction="sum", log_target=True),
     (In("logq", (3, 4)), In("logp", (3, 4))))
case("margin_ranking", lambda: nn.MarginRankingLoss(0.3),
     (In("a", (6,)), In("b", (6,)),
      In("y", make=lambda rng: np.array([1, -1, 1, 1, -1, -1], np.float32))))
case("cosine_embedding", lambda: nn.CosineEmbeddingLoss(margin=0.2),
     (In("a", (4, 5)), In("b", (4, 5)),
      In("y", make=lambda rng: np.array([1, -1, 1, -1], np.int64))))
case("hinge_embedding", lambda: nn.HingeEmbeddingLoss(margin=0.7),
     (In("x", (3, 4)), In("y", make=lambda rng: np.where(rng.random((3, 4)) > 0.5, 1.0, -1.0)
                          .astype(np.float32))))
case("triplet_margin_swap", lambda: nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True),
     (In("a", (4, 6)), In("p", (4, 6)), In("n", (4, 6))))
case("poisson_nll", lambda: nn.PoissonNLLLoss(full=True),
     (In("x", (3, 4)), In("y", (3, 4), "uniform", 0.0, 4.0, grad=False)))
case("gaussian_nll", lambda: nn.GaussianNLLLoss(full=True),
     (In("x", (3, 4)), In("y", (3, 4)), In("var", (3, 4), "uniform", 0.2, 2.0)))
# one variance per sample ([N, 1]) broadcast over the features
case("gaussian_nll_var_column", lambda: nn.GaussianNLLLoss(reduction="sum"),
     (In("x", (3, 4)), In("y", (3, 4)), In("var", (3, 1), "uniform", 0.2, 2.0)))
case("soft_margin", lambda: nn.SoftMarginLoss(),
     (In("x", (3, 4)), In("y", make=lambda rng: np.where(rng.random((3, 4)) > 0.5, 1.0, -1.0)
                          .astype(np.float32))))
case("multilabel_soft_margin_weight", lambda: nn.MultiLabelSoftMarginLoss(
    weight=fw.to_tensor(np.linspace(0.5, 1.5, 4).astype(np.float32))),
     (In("x", (3, 4)), In("y", make=lambda rng: (rng.random((3, 4)) > 0.5).astype(np.float32))))
case("multi_margin_p2", lambda: nn.MultiMarginLoss(p=2, margin=0.8),
     (In("x", (4, 5)), In("y", (4,), "int", 0, 5)))
case("multi_margin_weight", lambda: nn.MultiMarginLoss(weight=fw.to_tensor(_W5), reduction="sum"),
     (In("x", (4, 5)), In("y", (4,), "int", 0, 5)))
case("multi_margin_p2_weight", lambda: nn.MultiMarginLoss(p=2, weight=fw.to_tensor(_W5)),
     (In("x", (4, 5)), In("y", (4,), "int", 0, 5)))
case("triplet_with_distance_default", lambda: nn.TripletMarginWithDistanceLoss(margin=0.4),
     (In("a", (4, 6)), In("p", (4, 6)), In("n", (4, 6))))
case("ctc", lambda: nn.CTCLoss(blank=0),
     (In("logits", (6, 2, 4)),
      In("labels", make=lambda rng: np.array([[1, 2, 3], [2, 2, 0]], np.int32)),
      In("input_lengths", make=lambda rng: np.array([6, 5], np.int64)),
      In("label_lengths", make=lambda rng: np.array([3, 2], np.int64))))
