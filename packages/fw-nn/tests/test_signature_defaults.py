"""Default arguments of fw.nn, fw.nn.functional, fw.optimizer and fw.optimizer.lr
against Paddle 3.3.1's signatures (fixtures/paddle_signatures.json, made by
fixtures/gen_paddle_signatures.py from Paddle itself).

A default that differs from Paddle's silently changes what a ported program
computes (``rrelu``'s upper bound, ``Adadelta``'s learning rate, ``NoamDecay``'s
scale), and value tests that pass every argument never notice. Each case also
calls the callable with its arguments omitted and with Paddle's defaults spelled
out, and requires the same result: a body that treats an omitted argument
specially must still mean Paddle's default.
"""

from __future__ import annotations

import inspect
import json
import math
import os

import numpy as np
import pytest

import fw
import fw.nn as nn
import fw.nn.functional as F
import fw.optimizer as opt
import fw.optimizer.lr as lr

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "paddle_signatures.json")) as _f:
    PADDLE = json.load(_f)

MODULES = {"nn": nn, "nn.functional": F, "optimizer": opt, "optimizer.lr": lr}

# Where fw deliberately differs from Paddle's signature, and why. (module, name, param)
DEVIATIONS = {
    # Paddle spells the layout per rank ("NCL"/"NCHW"/"NCDHW"); fw's None picks the
    # same channel-first layout from the input's rank (test_pad_layers_default_layout).
    **{("nn", f"{kind}Pad{d}{s}", "data_format"): "None means the rank's channel-first layout"
       for kind in ("Circular", "Constant", "Reflection", "Replication")
       for d in "123" for s in "Dd"},
    **{("nn", f"ZeroPad{d}{s}", "data_format"): "None means the rank's channel-first layout"
       for d in "123" for s in "Dd"},
    # Paddle's F.pad takes None (by rank); fw's "NCHW" is read the same way for any rank
    ("nn.functional", "pad", "data_format"): "any channel-first name means channel-first",
    # the base classes take a dtype only to pass on; fw's None means the default dtype
    ("nn", "Layer", "dtype"): "None means fw's default dtype (float32)",
    ("nn", "Module", "dtype"): "None means fw's default dtype (float32)",
    ("nn", "RNNCellBase", "dtype"): "None means fw's default dtype (float32)",
    # fw's one_hot needs the class count (no data-dependent output shape)
    ("nn.functional", "one_hot", "num_classes"): "required: the output shape must be static",
}


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _params(obj):
    fn = obj.__init__ if inspect.isclass(obj) else obj
    return inspect.signature(fn).parameters


def _comparable(paddle_params):
    """Paddle's defaults that are plain values (JSON), by parameter name."""
    return {p["name"]: p["default"] for p in paddle_params
            if "default" in p and not isinstance(p["default"], dict)}


def _cases():
    out = []
    for key, mod in MODULES.items():
        for name, params in sorted(PADDLE[key].items()):
            if getattr(mod, name, None) is not None and _comparable(params):
                out.append(pytest.param(key, name, id=f"{key}.{name}"))
    return out


# ---------------------------------------------------------------- required arguments
RNG = np.random.default_rng(0)


def _t(*shape, lo=-1.0, hi=1.0):
    return fw.to_tensor(RNG.uniform(lo, hi, shape).astype("float32"))


def _ints(hi, *shape):
    return fw.to_tensor(RNG.integers(0, hi, shape).astype("int64"))


def _pool_mask(nd):
    x = _t(1, 2, *([4] * nd))
    _, mask = getattr(F, f"max_pool{nd}d")(x, 2, return_mask=True)
    return getattr(F, f"max_pool{nd}d")(x, 2), mask


# functional name -> () -> positional arguments (the ones without a default)
F_ARGS = {
    **{f"adaptive_avg_pool{d}d": (lambda d=d: (_t(1, 2, *([4] * d)), 2)) for d in (1, 2, 3)},
    **{f"adaptive_max_pool{d}d": (lambda d=d: (_t(1, 2, *([4] * d)), 2)) for d in (1, 2, 3)},
    "affine_grid": lambda: (_t(1, 2, 3), [1, 1, 3, 4]),
    "alpha_dropout": lambda: (_t(2, 8),),
    "feature_alpha_dropout": lambda: (_t(2, 3, 4),),
    **{f"avg_pool{d}d": (lambda d=d: (_t(1, 2, *([5] * d)), 2)) for d in (1, 2, 3)},
    **{f"max_pool{d}d": (lambda d=d: (_t(1, 2, *([5] * d)), 2)) for d in (1, 2, 3)},
    **{f"lp_pool{d}d": (lambda d=d: (_t(1, 2, *([5] * d), lo=0.1), 2.0, 2)) for d in (1, 2)},
    **{f"max_unpool{d}d": (lambda d=d: (*_pool_mask(d), 2)) for d in (1, 2, 3)},
    "batch_norm": lambda: (_t(2, 3, 4), fw.zeros([3]), fw.ones([3])),
    "instance_norm": lambda: (_t(2, 3, 4),),
    "group_norm": lambda: (_t(2, 4, 3), 2),
    "layer_norm": lambda: (_t(2, 3, 4), 4),
    "rms_norm": lambda: (_t(2, 3, 4), [4]),
    "local_response_norm": lambda: (_t(1, 4, 3, 3), 3),
    "normalize": lambda: (_t(2, 3),),
    "binary_cross_entropy": lambda: (_t(4, lo=0.1, hi=0.9), _t(4, lo=0.0, hi=1.0)),
    "binary_cross_entropy_with_logits": lambda: (_t(4), _t(4, lo=0.0, hi=1.0)),
    "sigmoid_focal_loss": lambda: (_t(4), _t(4, lo=0.0, hi=1.0)),
    "celu": lambda: (_t(5),), "elu": lambda: (_t(5),), "elu_": lambda: (_t(5),),
    "gelu": lambda: (_t(5),), "glu": lambda: (_t(2, 4),), "hardshrink": lambda: (_t(5),),
    "hardsigmoid": lambda: (_t(5, lo=-4, hi=4),), "hardtanh": lambda: (_t(5, lo=-2, hi=2),),
    "hardtanh_": lambda: (_t(5, lo=-2, hi=2),), "leaky_relu": lambda: (_t(5),),
    "leaky_relu_": lambda: (_t(5),), "log_softmax": lambda: (_t(2, 3),),
    "softmax": lambda: (_t(2, 3),), "softmax_": lambda: (_t(2, 3),),
    "selu": lambda: (_t(5),), "silu": lambda: (_t(5),), "softshrink": lambda: (_t(5),),
    "softplus": lambda: (_t(5, lo=-30, hi=30),), "thresholded_relu": lambda: (_t(5, lo=0, hi=2),),
    "thresholded_relu_": lambda: (_t(5, lo=0, hi=2),), "rrelu": lambda: (_t(20),),
    "gumbel_softmax": lambda: (_t(2, 3),), "maxout": lambda: (_t(1, 4, 2), 2),
    "prelu": lambda: (_t(1, 2, 3), fw.to_tensor(np.array([0.25], "float32"))),
    "channel_shuffle": lambda: (_t(1, 4, 2, 2), 2),
    "pixel_shuffle": lambda: (_t(1, 4, 2, 2), 2),
    "pixel_unshuffle": lambda: (_t(1, 1, 4, 4), 2),
    "temporal_shift": lambda: (_t(4, 4, 2, 2), 2),
    **{f"conv{d}d": (lambda d=d: (_t(1, 2, *([5] * d)), _t(3, 2, *([2] * d)))) for d in (1, 2, 3)},
    **{f"conv{d}d_transpose": (lambda d=d: (_t(1, 2, *([3] * d)), _t(2, 3, *([2] * d))))
       for d in (1, 2, 3)},
    "cosine_embedding_loss": lambda: (_t(3, 4), _t(3, 4),
                                      fw.to_tensor(np.array([1, -1, 1], "int64"))),
    "cosine_similarity": lambda: (_t(3, 4), _t(3, 4)),
    "pairwise_distance": lambda: (_t(3, 4), _t(3, 4)),
    "cross_entropy": lambda: (_t(3, 4), _ints(4, 3)),
    "softmax_with_cross_entropy": lambda: (_t(3, 4), _ints(4, 3, 1)),
    "nll_loss": lambda: (_t(3, 4, lo=-3, hi=-0.1), _ints(4, 3)),
    "ctc_loss": lambda: (_t(5, 2, 4), fw.to_tensor(np.array([[1, 2], [3, 1]], "int32")),
                         fw.to_tensor(np.array([5, 4], "int64")),
                         fw.to_tensor(np.array([2, 1], "int64"))),
    "dice_loss": lambda: (_t(2, 3, lo=0.1, hi=0.9), _ints(3, 2, 1)),
    "dropout": lambda: (_t(4, 5),), "dropout1d": lambda: (_t(2, 3, 4),),
    "dropout2d": lambda: (_t(1, 3, 2, 2),), "dropout3d": lambda: (_t(1, 3, 2, 2, 2),),
    "embedding": lambda: (_ints(5, 2, 3), _t(5, 4)),
    "fold": lambda: (_t(1, 4, 4), [3, 3], 2),
    "unfold": lambda: (_t(1, 1, 3, 3), 2),
    "gaussian_nll_loss": lambda: (_t(3, 2), _t(3, 2), _t(3, 2, lo=0.5, hi=1.5)),
    "grid_sample": lambda: (_t(1, 1, 3, 3), _t(1, 2, 2, 2)),
    "hinge_embedding_loss": lambda: (_t(4), fw.to_tensor(np.array([1., -1., 1., -1.], "float32"))),
    "hsigmoid_loss": lambda: (_t(2, 3), _ints(4, 2, 1), 4, _t(3, 3)),
    "interpolate": lambda: (_t(1, 1, 2, 2),),
    "upsample": lambda: (_t(1, 1, 2, 2),),
    "kl_div": lambda: (_t(2, 3, lo=-2, hi=-0.1), _t(2, 3, lo=0.1, hi=0.9)),
    "l1_loss": lambda: (_t(3), _t(3)), "mse_loss": lambda: (_t(3), _t(3)),
    "smooth_l1_loss": lambda: (_t(3, lo=-3, hi=3), _t(3)),
    "soft_margin_loss": lambda: (_t(3), fw.to_tensor(np.array([1., -1., 1.], "float32"))),
    "multi_label_soft_margin_loss": lambda: (_t(2, 3), _ints(2, 2, 3).astype("float32")),
    "multi_margin_loss": lambda: (_t(3, 4), _ints(4, 3)),
    "label_smooth": lambda: (_ints(2, 2, 3).astype("float32"),),
    "log_loss": lambda: (_t(3, 1, lo=0.1, hi=0.9), _ints(2, 3, 1).astype("float32")),
    "margin_ranking_loss": lambda: (_t(3), _t(3),
                                    fw.to_tensor(np.array([1., -1., 1.], "float32"))),
    "npair_loss": lambda: (_t(3, 4), _t(3, 4), fw.to_tensor(np.array([0, 1, 0], "int64"))),
    "pad": lambda: (_t(1, 2, 3, 3), [1, 1, 1, 1]),
    "poisson_nll_loss": lambda: (_t(3), _t(3, lo=0.0, hi=2.0)),
    "scaled_dot_product_attention": lambda: (_t(1, 3, 2, 4), _t(1, 3, 2, 4), _t(1, 3, 2, 4)),
    "sequence_mask": lambda: (fw.to_tensor(np.array([1, 3], "int64")),),
    "triplet_margin_loss": lambda: (_t(3, 4), _t(3, 4), _t(3, 4)),
    "triplet_margin_with_distance_loss": lambda: (_t(3, 4), _t(3, 4), _t(3, 4)),
    "zeropad2d": lambda: (_t(1, 1, 2, 2), [1, 0, 1, 0]),
    "one_hot": lambda: (_ints(3, 4), 3),
    "linear": lambda: (_t(2, 3), _t(3, 4)),
    "bilinear": lambda: (_t(2, 3), _t(2, 2), _t(4, 3, 2)),
    "swiglu": lambda: (_t(2, 4),),
    "pdist": lambda: (_t(4, 3),),
    "diag_embed": lambda: (_t(2, 3),),
    **{n: (lambda: (_t(5, lo=-4, hi=4),)) for n in (
        "hardswish", "log_sigmoid", "logsigmoid", "mish", "relu", "relu6", "relu_", "sigmoid",
        "softsign", "swish", "tanh", "tanh_", "tanhshrink")},
}
# keyword arguments some functionals cannot go without
F_KWARGS = {"interpolate": {"scale_factor": 2}, "upsample": {"scale_factor": 2}}
# issue 16's names (flash-attention variants, fractional pooling, the last losses)
F_ARGS.update({
    "adaptive_log_softmax_with_loss": lambda: (_t(3, 4), _ints(5, 3), _t(4, 3),
                                               [[_t(4, 2), _t(2, 3)]], [2, 5]),
    "class_center_sample": lambda: (fw.to_tensor([1, 3, 1]), 5, 2),  # no negatives drawn
    "flash_attention_v3_varlen": lambda: (_t(4, 1, 4), _t(4, 1, 4), _t(4, 1, 4),
                                          fw.to_tensor([0, 4], "int32"),
                                          fw.to_tensor([0, 4], "int32"), 4, 4),
    "flash_attn_qkvpacked": lambda: (_t(1, 3, 3, 1, 4),),
    "flash_attn_varlen_qkvpacked": lambda: (_t(4, 3, 1, 4), fw.to_tensor([0, 4], "int32"),
                                            fw.to_tensor([0, 4], "int32"), 4, 4, 0.5),
    "flashmask_attention": lambda: (_t(1, 3, 1, 4), _t(1, 3, 1, 4), _t(1, 3, 1, 4)),
    "fractional_max_pool2d": lambda: (_t(1, 1, 5, 5), 2),
    "fractional_max_pool3d": lambda: (_t(1, 1, 5, 5, 5), 2),
    "margin_cross_entropy": lambda: (_t(3, 4), _ints(4, 3)),
    "multi_label_margin_loss": lambda: (_t(2, 3), fw.to_tensor([[1, -1, 0], [2, 0, -1]])),
    "rnnt_loss": lambda: (_t(1, 2, 2, 3, lo=-2.0, hi=-0.5), fw.to_tensor([[1]], "int32"),
                          fw.to_tensor([2], "int32"), fw.to_tensor([1], "int32")),
    "sparse_attention": lambda: (_t(1, 1, 2, 4), _t(1, 1, 2, 4), _t(1, 1, 2, 4),
                                 fw.to_tensor([[[0, 1, 3]]], "int32"),
                                 fw.to_tensor([[[0, 0, 1]]], "int32")),
})
# Paddle's CUDA-only functionals fw declares with Paddle's signature but cannot run
# (docs/paddle_differences.md): their defaults are compared, their bodies raise
F_UNSUPPORTED = {"moe_permute", "moe_unpermute"}

# class name -> positional arguments of its constructor (the ones without a default)
_REQ = {
    "in_features": 3, "out_features": 4, "in1_features": 2, "in2_features": 3,
    "in_channels": 4, "out_channels": 4, "kernel_size": 3, "kernel_sizes": 2,
    "num_features": 4, "num_channels": 4, "num_groups": 2, "normalized_shape": 4,
    "input_size": 4, "hidden_size": 4, "d_model": 8, "nhead": 2, "dim_feedforward": 8,
    "embed_dim": 8, "num_heads": 2, "num_embeddings": 10, "embedding_dim": 4,
    "padding": 1, "output_size": 2, "output_sizes": [4, 4], "size": 3, "norm_type": 2.0,
    "upscale_factor": 2, "downscale_factor": 2, "groups": 2, "seg_num": 2, "num_classes": 4,
    "feature_size": 3, "shape": [2, 2], "axis": 1,
    # optimizers and schedulers
    "learning_rate": 0.1, "warmup_steps": 4, "T_max": 5, "T_0": 3, "decay_steps": 4,
    "step_size": 2, "milestones": [2, 4], "boundaries": [2, 4], "values": [0.1, 0.01, 0.001],
    "max_learning_rate": 0.1, "total_steps": 10, "base_learning_rate": 0.01,
    "step_size_up": 2, "start_lr": 0.0, "end_lr": 0.1, "lr_lambda": lambda e: 0.5 ** e,
    "gamma": 0.5, "clip_norm": 1.0, "max": 1.0, "weight_shape": [2, 3], "num_layers": 1,
}


class _Make:
    """A constructor argument that must be a fresh object per call."""

    def __init__(self, fn):
        self.fn = fn


_REQ.update({
    "cell": _Make(lambda: nn.SimpleRNNCell(4, 4)),
    "cell_fw": _Make(lambda: nn.SimpleRNNCell(4, 4)),
    "cell_bw": _Make(lambda: nn.SimpleRNNCell(4, 4)),
    "encoder_layer": _Make(lambda: nn.TransformerEncoderLayer(8, 2, 8)),
    "decoder_layer": _Make(lambda: nn.TransformerDecoderLayer(8, 2, 8)),
})


def _class_args(key, name, cls):
    """The constructor's required arguments, or None when this table cannot build them."""
    args = []
    for pname, p in _params(cls).items():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is not p.empty:
            break
        if pname == "learning_rate" and key == "optimizer.lr" and name == "LinearWarmup":
            args.append(0.1)
        elif pname in _REQ:
            v = _REQ[pname]
            args.append(v.fn() if isinstance(v, _Make) else v)
        else:
            return None
    return args


def _results(value):
    """A comparable form of what a call returns: tensors by value, a layer by its
    printed form and parameter shapes, a scheduler by its first learning rates."""
    if isinstance(value, (tuple, list)):
        return [_results(v) for v in value]
    if hasattr(value, "numpy"):
        return value.numpy()
    if isinstance(value, nn.Layer):
        return repr(value), [tuple(p.shape) for p in value.parameters()]
    if isinstance(value, lr.ReduceOnPlateau):
        out = []
        for _ in range(4):
            out.append(value())
            value.step(1.0)  # a metric that never improves: the rate drops
        return out
    if isinstance(value, lr.LRScheduler):
        out = []
        for _ in range(4):
            out.append(value())
            value.step()
        return out
    if isinstance(value, opt.Optimizer):
        return value.get_lr(), sorted(value._default_hp.items()) if hasattr(
            value, "_default_hp") else None
    if isinstance(value, (int, float, str, bool, type(None))):
        return value
    return repr(value)  # gradient clippers print their settings


class _Constant(lr.LRScheduler):
    """The base scheduler is abstract (no get_lr); its constructor runs through this."""

    def get_lr(self):
        return self.base_lr


def _assert_same_results(a, b):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same_results(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


def _call(key, name, obj, explicit):
    global RNG
    RNG = np.random.default_rng(0)  # the same sample inputs on both calls
    if key == "nn.functional":
        args = F_ARGS[name]()
    else:
        args = _class_args(key, name, obj)
        if key == "optimizer":
            args = args[:1]
    kwargs = dict(explicit, **(F_KWARGS.get(name, {}) if key == "nn.functional" else {}))
    if key == "optimizer":
        kwargs["parameters"] = [fw.create_parameter([2], "float32")]
    if key == "nn.functional" and name in ("rrelu",) or "dropout" in name or name in (
            "gumbel_softmax", "scaled_dot_product_attention", "fractional_max_pool2d",
            "fractional_max_pool3d"):
        fw.seed(7)  # random ops: the same draws on both calls
    if obj is lr.LRScheduler:
        obj = _Constant
    return _results(obj(*args, **kwargs))


@pytest.mark.parametrize("key,name", _cases())
def test_defaults_are_paddles(key, name):
    obj = getattr(MODULES[key], name)
    params = _params(obj)
    paddle = _comparable(PADDLE[key][name])
    bad = []
    for pname, pdef in paddle.items():
        why = DEVIATIONS.get((key, name, pname))
        if pname not in params:
            continue  # an argument fw does not take (test_op_surface covers the API)
        fdef = params[pname].default
        if why is None and (fdef is inspect.Parameter.empty or not _same(fdef, pdef)):
            bad.append(f"{pname}: fw {fdef!r}, Paddle {pdef!r}")
    assert not bad, f"{key}.{name}: defaults differ from Paddle 3.3.1's: {bad}"

    # omitted arguments mean Paddle's defaults (runs the callable's body)
    if key == "nn.functional" and name in F_UNSUPPORTED:
        pytest.skip(f"{name} raises UnsupportedError in fw (CUDA-only in Paddle)")
    if key == "nn.functional" and name not in F_ARGS:
        pytest.skip(f"no sample arguments for {name}")
    if key != "nn.functional" and _class_args(key, name, obj) is None:
        pytest.skip(f"no sample constructor arguments for {name}")
    explicit = {p: v for p, v in paddle.items()
                if p in params and (key, name, p) not in DEVIATIONS and p != "name"}
    _assert_same_results(_call(key, name, obj, {}), _call(key, name, obj, explicit))


def test_the_table_covers_the_api():
    """Every functional with a Paddle default has sample arguments here, and the
    fixture still names the callables fw exports (a rename must not empty the test)."""
    missing = [n for n, ps in PADDLE["nn.functional"].items()
               if getattr(F, n, None) is not None and _comparable(ps) and n not in F_ARGS
               and n not in F_UNSUPPORTED]
    assert not missing, missing
    assert len(_cases()) > 250
