"""What the model families share: channel rounding, the conv-norm-activation block,
and loading Paddle's published pretrained weights.

Pretrained loading follows Paddle's model files (``paddle/vision/models/*.py``):
``get_weights_path_from_url(url, md5)`` then the state dict into the model. fw
reads the ``.pdparams`` pickle with ``fw.load`` (a restricted unpickler: name ->
array dicts only, no code runs) and, unlike Paddle's warn-and-continue, refuses a
file whose names or shapes do not fit the architecture — except the classifier
head when the user asked for a different ``num_classes`` (the fine-tuning case).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import fw
from fw import nn
from fw.core.errors import InvalidArgumentError

__all__ = ["ConvNormActivation", "load_pretrained", "load_weights_file"]


def _make_divisible(v, divisor=8, min_value=None):
    """Round channel count `v` to a multiple of `divisor`, never more than 10 % below
    `v` (the MobileNet rule; Paddle's ``_make_divisible`` has the same numbers)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvNormActivation(nn.Sequential):
    """Conv2D, then an optional norm layer, then an optional activation, as one
    `Sequential` (so the state-dict names are ``0.weight``, ``1._mean``, …, as in
    Paddle's ``paddle.vision.ops.ConvNormActivation``).

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int|list|tuple, optional): kernel size. Default: 3.
        stride (int|list|tuple, optional): stride. Default: 1.
        padding (int|str|list|tuple|None, optional): padding; None means
            ``(kernel_size - 1) // 2 * dilation`` ("same" for odd kernels). Default: None.
        groups (int, optional): convolution groups. Default: 1.
        norm_layer (Callable[..., Layer]|None, optional): called with ``out_channels``;
            None for no norm. Default: ``fw.nn.BatchNorm2D``.
        activation_layer (Callable[..., Layer]|None, optional): called with no
            arguments; None for no activation. Default: ``fw.nn.ReLU``.
        dilation (int, optional): dilation. Default: 1.
        bias (bool|None, optional): whether the convolution has a bias; None means
            only when there is no norm layer. Default: None.

    Returns:
        Layer: the block.

    Examples:
        >>> import fw
        >>> from fw.vision.models._utils import ConvNormActivation
        >>> block = ConvNormActivation(3, 8, stride=2)
        >>> block(fw.ones([1, 3, 8, 8])).shape
        [1, 8, 4, 4]
        >>> list(block.state_dict())[:2]
        ['0.weight', '1.weight']
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size=3, stride=1,
                 padding=None, groups: int = 1,
                 norm_layer: Callable[..., nn.Layer] | None = nn.BatchNorm2D,
                 activation_layer: Callable[..., nn.Layer] | None = nn.ReLU,
                 dilation: int = 1, bias: bool | None = None) -> None:
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias_attr=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)


def check_classifier_input(model: str, input_shape, features, in_features: int,
                           hint: str) -> None:
    """Raise a clear error when the features about to be flattened into the
    classifier do not have its ``in_features`` (a model without adaptive pooling, or
    built with ``with_pool=False``, given another input size). Dynamic sizes (-1,
    while tracing with a None batch or side) are not checked.

    Args:
        model (str): the model's name, for the message.
        input_shape (list): the shape of the model's input.
        features (Tensor): the features, ``[N, C, H, W]``.
        in_features (int): what the first classifier layer takes per sample.
        hint (str): what input the model needs.

    Examples:
        >>> import fw
        >>> from fw.vision.models._utils import check_classifier_input
        >>> try:
        ...     check_classifier_input("Net", [1, 3, 8, 8], fw.ones([1, 4, 2, 2]), 4, "1x1")
        ... except ValueError as e:
        ...     print(str(e)[:58])
        Net: the classifier takes 4 features per sample, but an in
    """
    dims = list(features.shape[1:])
    if any(d < 0 for d in dims) or math.prod(dims) == in_features:
        return
    raise InvalidArgumentError(
        f"{model}: the classifier takes {in_features} features per sample, but an input "
        f"of shape {list(input_shape)} gives features {dims} ({math.prod(dims)}); {hint}")


def check_pretrained_arch(fn_name: str, arch: str, model_urls: dict) -> tuple[str, str]:
    """The (url, md5) Paddle publishes for `arch`, or a clear error when it publishes
    none (Paddle asserts; fw raises ValueError naming what does exist)."""
    if arch not in model_urls:
        raise ValueError(
            f"{fn_name}(pretrained=True): Paddle publishes no pretrained weights for "
            f"{arch!r} (published: {sorted(model_urls)}); build it with pretrained=False "
            f"and load your own weights with model.set_state_dict(fw.load(path))")
    return model_urls[arch]


def load_pretrained(model: nn.Layer, fn_name: str, arch: str, model_urls: dict,
                    head: Sequence[str] = ()) -> nn.Layer:
    """Download (or find in the cache) Paddle's published weights of `arch` and load
    them into `model`.

    Args:
        model (Layer): the freshly built model.
        fn_name (str): the constructor's name, for error messages.
        arch (str): the key of `model_urls` (Paddle's naming, e.g. ``"resnet18"``,
            ``"mobilenetv2_1.0"``).
        model_urls (dict): ``{arch: (url, md5)}``, Paddle's published list.
        head (Sequence[str], optional): state-dict prefixes of the classifier head;
            their keys may be missing, unexpected or of another shape (the user chose
            another ``num_classes``): they are skipped with a warning. Default: ().

    Returns:
        Layer: `model`, with the weights loaded.

    Examples:
        >>> import fw
        >>> from fw.vision.models._utils import load_pretrained
        >>> try:
        ...     load_pretrained(fw.nn.Linear(2, 2), "demo", "nope", {})
        ... except ValueError as e:
        ...     print(str(e)[:50])
        demo(pretrained=True): Paddle publishes no pretrai
    """
    url, md5 = check_pretrained_arch(fn_name, arch, model_urls)
    from fw.utils.download import get_weights_path_from_url

    path = get_weights_path_from_url(url, md5)
    return load_weights_file(model, path, f"{fn_name}(pretrained=True)", head,
                             source=f"{path} ({url})")


def load_weights_file(model: nn.Layer, path, what: str, head: Sequence[str] = (),
                      source: str | None = None) -> nn.Layer:
    """Load the state dict in `path` (a Paddle ``.pdparams`` pickle or an fw
    checkpoint, read by ``fw.load``: no code runs) into `model`, strictly: every
    name and shape must fit, except the classifier-head keys under the `head`
    prefixes, which are skipped with a warning when they differ.

    Args:
        model (Layer): the model to fill.
        path (str|PathLike): the weights file.
        what (str): who loads, for messages (``"resnet18(pretrained=True)"``).
        head (Sequence[str], optional): state-dict prefixes of the classifier head.
            Default: ().
        source (str|None, optional): how to name the file in messages. Default: `path`.

    Returns:
        Layer: `model`.

    Examples:
        >>> import fw
        >>> import os, tempfile, fw
        >>> from fw.vision.models._utils import load_weights_file
        >>> path = os.path.join(tempfile.mkdtemp(), "w.fw")
        >>> fw.save(fw.nn.Linear(2, 3).state_dict(), path)
        >>> load_weights_file(fw.nn.Linear(2, 3), path, "demo").weight.shape
        [2, 3]
    """
    source = str(path) if source is None else source
    state = fw.load(str(path))
    if not isinstance(state, dict):
        raise ValueError(f"{what}: {source} holds a {type(state).__name__}, not a "
                         "name -> array state dict")
    # paddle.save adds a "StructuredToParameterName@@" name table; paddle.load drops it
    state = {k: v for k, v in state.items() if not (isinstance(k, str) and k.endswith("@@"))}

    def in_head(key):
        return any(key.startswith(p) for p in head)

    own = model.state_dict()
    skipped = [k for k in state if in_head(k) and
               (k not in own or tuple(state[k].shape) != tuple(own[k].shape))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reported below, as an error or a warning
        report = model.set_state_dict({k: v for k, v in state.items() if k not in skipped})
    missing = [k for k in report.missing_keys if not in_head(k)]
    bad = [m for m in report.mismatched_keys if not in_head(m.key)]
    unexpected = [k for k in report.unexpected_keys if not in_head(k)]
    if missing or bad or unexpected:
        raise ValueError(
            f"{what}: the weights in {source} do not fit the {type(model).__name__} "
            f"built with these arguments: missing {missing}, unexpected {unexpected}, "
            f"shape/dtype mismatches {bad}")
    not_loaded = sorted(set(skipped) | {k for k in report.missing_keys if in_head(k)})
    if not_loaded:
        warnings.warn(f"{what}: classifier head not loaded (its shape differs from the "
                      f"weights in {source}: {not_loaded}); it keeps its fresh "
                      "initialization", stacklevel=3)
    return model
