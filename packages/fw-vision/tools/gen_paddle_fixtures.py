"""Generate the Paddle-fixture files for fw-vision's model equality tests, with
real Paddle (run once, by hand; CI never needs Paddle):

    /path/to/python-with-paddle packages/fw-vision/tools/gen_paddle_fixtures.py resnet18 ...
    (no names: every constructor in INPUT_SIZES)

For each constructor of ``paddle.vision.models`` it builds the model with default
arguments, fills its state dict with tests/_weights.draw (seeded by name), runs it
in eval mode on tests/_weights.image(...) and writes tests/fixtures/<name>.npz:
``names`` (JSON: [[name, shape], ...] in state-dict order), ``input`` (or, when
it is big, ``input_shape``: the tests redraw it with tests/_weights.image) and
``output_0``, ``output_1``, ... (a tuple output gives several), plus ``ctor`` and
``kwargs`` (JSON) naming the constructor call. The tests build the fw model, check
names and shapes equal, load the same drawn weights and compare outputs.

VARIANTS adds fixtures of non-default arguments (batch norm, scale, num_classes,
with_pool) under their own names: ``name: (constructor, kwargs)``.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from _weights import draw, image  # noqa: E402

# input shape per constructor: small where the architecture allows it (adaptive
# pooling), the architecture's minimum otherwise
INPUT_SIZES: dict[str, tuple[int, ...]] = {
    "lenet": (2, 1, 28, 28),
    # --- part A (fw.vision.models: lenet, alexnet, vgg, resnet, mobilenet v1/v2/v3) ---
    "lenet_features": (1, 1, 28, 28),
    # AlexNet has no adaptive pooling: its classifier needs 223..254 pixels
    "alexnet": (1, 3, 224, 224),
    "alexnet_features": (1, 3, 224, 224),
    # VGG's 7x7 adaptive pool accepts the 1x1 features of a 32x32 input
    **{f"vgg{d}{bn}": (1, 3, 32, 32) for d in (11, 13, 16, 19) for bn in ("", "_bn")},
    "vgg16_features": (1, 3, 32, 32),
    "vgg11_bn_features": (1, 3, 32, 32),
    **{n: (1, 3, 32, 32) for n in (
        "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
        "resnext50_32x4d", "resnext50_64x4d", "resnext101_32x4d", "resnext101_64x4d",
        "resnext152_32x4d", "resnext152_64x4d", "wide_resnet50_2", "wide_resnet101_2",
        "resnet18_features", "resnet18_nopool",
        "mobilenet_v1", "mobilenet_v1_x0_25", "mobilenet_v2", "mobilenet_v2_x0_5",
        "mobilenet_v2_features", "mobilenet_v3_small", "mobilenet_v3_small_x0_75",
        "mobilenet_v3_large", "mobilenet_v3_large_x0_5", "mobilenet_v3_large_nopool")},
    # --- end of part A ---
    # --- part B (shufflenetv2, squeezenet, densenet, googlenet, inceptionv3) ---
    **{f"shufflenet_v2_{s}": (1, 3, 32, 32)
       for s in ("x0_25", "x0_33", "x0_5", "x1_0", "x1_5", "x2_0", "swish")},
    "shufflenet_v2_swish_nopool": (1, 3, 64, 64),  # a 2x2 last feature map
    "squeezenet1_0": (1, 3, 64, 64),
    "squeezenet1_1": (1, 3, 64, 64),
    "squeezenet1_1_features": (1, 3, 64, 64),
    "squeezenet1_1_nopool": (1, 3, 64, 64),
    **{f"densenet{d}": (1, 3, 32, 32) for d in (121, 161, 169, 201, 264)},
    "densenet121_features": (1, 3, 32, 32),
    # the auxiliary heads' fc layers take 128x3x3: inputs of 189 to 236 px only
    "googlenet": (1, 3, 189, 189),
    "googlenet_features": (1, 3, 189, 189),
    "inception_v3": (1, 3, 75, 75),  # the smallest input the stem and reductions allow
    "inception_v3_features": (1, 3, 75, 75),
    # --- end of part B ---
}

# fixture name -> (constructor of paddle.vision.models, keyword arguments)
VARIANTS: dict[str, tuple[str, dict]] = {
    "lenet": ("LeNet", {}),
    # --- part A ---
    "lenet_features": ("LeNet", {"num_classes": 0}),
    # without the 100M-parameter classifiers: fast enough for every CI run
    "alexnet_features": ("alexnet", {"num_classes": 0}),
    "vgg16_features": ("vgg16", {"num_classes": 0}),
    "vgg11_bn_features": ("vgg11", {"batch_norm": True, "num_classes": 0}),
    **{f"vgg{d}_bn": (f"vgg{d}", {"batch_norm": True}) for d in (11, 13, 16, 19)},
    "resnet18_features": ("resnet18", {"num_classes": 0}),
    # without the pool, a 32x32 input leaves 1x1 features: the fc still fits
    "resnet18_nopool": ("resnet18", {"with_pool": False, "num_classes": 7}),
    "mobilenet_v1_x0_25": ("mobilenet_v1", {"scale": 0.25}),
    "mobilenet_v2_x0_5": ("mobilenet_v2", {"scale": 0.5}),
    "mobilenet_v2_features": ("mobilenet_v2", {"num_classes": -1, "with_pool": False}),
    "mobilenet_v3_small_x0_75": ("mobilenet_v3_small", {"scale": 0.75}),
    "mobilenet_v3_large_x0_5": ("mobilenet_v3_large", {"scale": 0.5}),
    "mobilenet_v3_large_nopool": ("MobileNetV3Large", {"with_pool": False, "num_classes": 0}),
    # --- end of part A ---
    # --- part B ---
    "shufflenet_v2_swish_nopool": ("shufflenet_v2_swish", {"num_classes": 0,
                                                           "with_pool": False}),
    # Paddle keeps a 0-channel classifier conv for num_classes=0
    "squeezenet1_1_features": ("squeezenet1_1", {"num_classes": 0}),
    "squeezenet1_1_nopool": ("squeezenet1_1", {"with_pool": False}),
    # (Paddle 3.3.1's DenseNet fails for with_pool=False: no fixture for it)
    "densenet121_features": ("densenet121", {"num_classes": 0}),
    # the three heads off: the three pooled maps
    "googlenet_features": ("googlenet", {"num_classes": 0}),
    "inception_v3_features": ("inception_v3", {"num_classes": 0, "with_pool": False}),
    # --- end of part B ---
}


def generate(name: str, out_dir: pathlib.Path) -> pathlib.Path:
    import paddle

    paddle.set_device("cpu")
    ctor_name, kwargs = VARIANTS.get(name, (name, {}))
    model = getattr(paddle.vision.models, ctor_name)(**kwargs)
    model.eval()
    sd = model.state_dict()
    names = [[k, list(v.shape)] for k, v in sd.items()]
    model.set_state_dict({k: paddle.to_tensor(draw(k, s)) for k, s in names})
    x = image(INPUT_SIZES.get(name, (1, 3, 64, 64)))
    with paddle.no_grad():
        out = model(paddle.to_tensor(x))
    outs = out if isinstance(out, (tuple, list)) else [out]
    arrays = {f"output_{i}": np.asarray(o.numpy(), np.float32) for i, o in enumerate(outs)}
    path = out_dir / f"{name}.npz"
    # a big input (AlexNet's 224x224) is not stored: the tests redraw it from its
    # shape with the same seeded generator (tests/_weights.image)
    inputs = {"input": x} if x.size <= 16384 else {"input_shape": np.array(x.shape)}
    np.savez_compressed(path, names=np.array(json.dumps(names)), ctor=np.array(ctor_name),
                        kwargs=np.array(json.dumps(kwargs)), **inputs, **arrays)
    return path


def main(argv: list[str]) -> int:
    out_dir = HERE.parent / "tests" / "fixtures"
    out_dir.mkdir(exist_ok=True)
    for name in argv or sorted(INPUT_SIZES):
        print(generate(name, out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
