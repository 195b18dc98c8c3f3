"""The vision entries of fw.hub's built-in zoo (entry-point group "fw.hub.zoo":
``vision = fw.vision.models._zoo``).

``ZOO`` maps a model name to ``{"fn": callable(**kwargs) -> Layer, "doc": str,
"configs": dict, "task": str, "weights": {"url", "md5", "sha256"} | None}``; fw.hub
lists, documents and builds models from it (``fw.hub.load(source="builtin", ...)``
calls ``fn(pretrained=..., **kwargs)``). ``weights`` are Paddle's published files for
the entry's default configuration (md5 from Paddle's model files; Paddle publishes no
sha256), None where Paddle publishes none. Part A's entries also have ``from_dir``
and ``detect``: a directory where the user keeps ``<name>.pdparams`` (or Paddle's
published file name) is loaded by ``fw.hub.load(dir, name, source="local")``. Each
part of fw-vision's models adds its entries in its own block below with `_add`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial
from pathlib import Path

__all__ = ["ZOO"]

ZOO: dict[str, dict] = {}


def _add(name: str, fn: Callable, doc: str, configs: dict, weights=None,
         task: str = "image-classification", **extra) -> None:
    """Register `name`; `weights` is Paddle's (url, md5) pair or None; `extra` adds
    optional keys (``from_dir``, ``detect``)."""
    if name in ZOO:
        raise ValueError(f"fw.vision.models._zoo: duplicate zoo entry {name!r}")
    ZOO[name] = {"fn": fn, "doc": doc, "configs": dict(configs), "task": task,
                 "weights": None if weights is None else
                 {"url": weights[0], "md5": weights[1], "sha256": None}, **extra}


def _weights_in_dir(path, names):
    """The first of `names` that is a file in directory `path`, or None."""
    root = Path(path)
    for n in names:
        if (root / n).is_file():
            return root / n
    return None


def _dir_loader(name: str, fn: Callable, head: tuple, weights) -> dict:
    """``from_dir`` / ``detect`` for a directory where a user keeps the weights file:
    ``<name>.pdparams`` (or Paddle's published file name). ``from_dir(path, **kw)``
    builds ``fn(pretrained=False, **kw)`` and loads the file strictly (see
    `load_weights_file`)."""
    from fw.vision.models._utils import load_weights_file

    names = [f"{name}.pdparams"]
    if weights is not None:
        names.append(weights[0].rsplit("/", 1)[-1])

    def detect(path) -> bool:
        return _weights_in_dir(path, names) is not None

    def from_dir(path, **kwargs):
        kwargs.pop("pretrained", None)  # the directory is the weights' source
        file = _weights_in_dir(path, names)
        if file is None:
            raise FileNotFoundError(f"{name}: no weights file in {path} (looked for "
                                    f"{names})")
        return load_weights_file(fn(pretrained=False, **kwargs), file,
                                 f"{name} from {path}", head)

    return {"from_dir": from_dir, "detect": detect}


# --- part A: LeNet, AlexNet, VGG, ResNet/ResNeXt/Wide ResNet, MobileNet V1/V2/V3 ---
def _part_a() -> None:
    # (the package attribute `alexnet` is the function: take the module's names)
    from fw.vision.models import mobilenetv1 as _mv1
    from fw.vision.models import mobilenetv2 as _mv2
    from fw.vision.models import mobilenetv3 as _mv3
    from fw.vision.models import resnet as _resnet
    from fw.vision.models import vgg as _vgg
    from fw.vision.models.alexnet import alexnet
    from fw.vision.models.alexnet import model_urls as alexnet_urls
    from fw.vision.models.lenet import LeNet

    def lenet(pretrained: bool = False, **kwargs):
        if pretrained:
            raise ValueError("lenet(pretrained=True): Paddle publishes no pretrained "
                             "LeNet weights; build it with pretrained=False")
        return LeNet(**kwargs)

    def add(name, fn, doc, configs, weights=None, head=()):
        _add(name, fn, doc, configs, weights, **_dir_loader(name, fn, head, weights))

    add("lenet", lenet, "LeNet-5 style digit classifier (1x28x28 input, 10 classes).",
        {"num_classes": 10}, head=("fc.",))
    add("alexnet", alexnet, "AlexNet (Krizhevsky et al., 2012), 224x224 input.",
        {"num_classes": 1000}, alexnet_urls["alexnet"], head=("_fc",))
    for depth in (11, 13, 16, 19):
        fn = getattr(_vgg, f"vgg{depth}")
        for bn in (False, True):
            name = f"vgg{depth}" + ("_bn" if bn else "")
            add(name, partial(fn, batch_norm=True) if bn else fn,
                f"VGG-{depth}{' with batch norm' if bn else ''} (Simonyan & Zisserman, 2014).",
                {"depth": depth, "batch_norm": bn}, _vgg.model_urls.get(name),
                head=("classifier.",))
    resnets = {"resnet18": (18, 1, 64), "resnet34": (34, 1, 64), "resnet50": (50, 1, 64),
               "resnet101": (101, 1, 64), "resnet152": (152, 1, 64),
               "resnext50_32x4d": (50, 32, 4), "resnext50_64x4d": (50, 64, 4),
               "resnext101_32x4d": (101, 32, 4), "resnext101_64x4d": (101, 64, 4),
               "resnext152_32x4d": (152, 32, 4), "resnext152_64x4d": (152, 64, 4),
               "wide_resnet50_2": (50, 1, 128), "wide_resnet101_2": (101, 1, 128)}
    for name, (depth, groups, width) in resnets.items():
        family = ("ResNeXt" if name.startswith("resnext") else
                  "Wide ResNet" if name.startswith("wide") else "ResNet")
        add(name, getattr(_resnet, name),
            f"{family}-{depth} (groups={groups}, width={width}), ImageNet classifier.",
            {"depth": depth, "groups": groups, "width": width}, _resnet.model_urls[name],
            head=("fc.",))
    add("mobilenet_v1", _mv1.mobilenet_v1, "MobileNetV1 (Howard et al., 2017).",
        {"scale": 1.0}, _mv1.model_urls["mobilenetv1_1.0"], head=("fc.",))
    add("mobilenet_v2", _mv2.mobilenet_v2, "MobileNetV2 (Sandler et al., 2018).",
        {"scale": 1.0}, _mv2.model_urls["mobilenetv2_1.0"], head=("classifier.",))
    for size in ("small", "large"):
        name = f"mobilenet_v3_{size}"
        add(name, getattr(_mv3, name), f"MobileNetV3-{size.capitalize()} (Howard et al., 2019).",
            {"scale": 1.0}, _mv3.model_urls[f"{name}_x1.0"], head=("classifier.",))

_part_a()
# --- end of part A ---


# --- part B: ShuffleNetV2, SqueezeNet, DenseNet, GoogLeNet, InceptionV3 ---
def _part_b() -> None:
    from fw.vision.models import densenet as _dn
    from fw.vision.models import inceptionv3 as _iv3
    from fw.vision.models import shufflenetv2 as _sn
    from fw.vision.models import squeezenet as _sq

    # (the package attribute `googlenet` is the function: import the module by name)
    _gn = importlib.import_module("fw.vision.models.googlenet")

    def add(name, fn, doc, configs, weights, head):
        _add(name, fn, doc, configs, weights, **_dir_loader(name, fn, head, weights))

    for suffix, scale in (("x0_25", 0.25), ("x0_33", 0.33), ("x0_5", 0.5), ("x1_0", 1.0),
                          ("x1_5", 1.5), ("x2_0", 2.0)):
        name = f"shufflenet_v2_{suffix}"
        add(name, getattr(_sn, name), f"ShuffleNetV2 {scale}x (Ma et al., 2018).",
            {"scale": scale, "act": "relu"}, _sn.model_urls[name], _sn.HEAD)
    add("shufflenet_v2_swish", _sn.shufflenet_v2_swish,
        "ShuffleNetV2 1.0x with swish activations (Ma et al., 2018).",
        {"scale": 1.0, "act": "swish"}, _sn.model_urls["shufflenet_v2_swish"], _sn.HEAD)
    for version in ("1_0", "1_1"):
        name = f"squeezenet{version}"
        add(name, getattr(_sq, name),
            f"SqueezeNet {version.replace('_', '.')} (Iandola et al., 2016), ImageNet classifier.",
            {"version": version.replace("_", ".")}, _sq.model_urls[name], _sq.HEAD)
    for layers in (121, 161, 169, 201, 264):
        name = f"densenet{layers}"
        add(name, getattr(_dn, name), f"DenseNet-{layers} (Huang et al., 2017).",
            {"layers": layers}, _dn.model_urls[name], _dn.HEAD)
    add("googlenet", _gn.googlenet,
        "GoogLeNet / Inception v1 (Szegedy et al., 2015); forward returns (out, aux1, aux2).",
        {"num_classes": 1000}, _gn.model_urls["googlenet"], _gn.HEAD)
    add("inception_v3", _iv3.inception_v3,
        "InceptionV3 (Szegedy et al., 2016), inputs of at least 75x75 (299x299 trained).",
        {"num_classes": 1000}, _iv3.model_urls["inception_v3"], _iv3.HEAD)


_part_b()
# --- end of part B ---
