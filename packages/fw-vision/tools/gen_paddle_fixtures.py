"""Generate the Paddle-fixture files for fw-vision's model equality tests, with
real Paddle (run once, by hand; CI never needs Paddle):

    /path/to/python-with-paddle packages/fw-vision/tools/gen_paddle_fixtures.py resnet18 ...
    (no names: every constructor in INPUT_SIZES)

For each constructor of ``paddle.vision.models`` it builds the model with default
arguments, fills its state dict with tests/_weights.draw (seeded by name), runs it
in eval mode on tests/_weights.image(...) and writes tests/fixtures/<name>.npz:
``names`` (JSON: [[name, shape], ...] in state-dict order), ``input`` and
``output_0``, ``output_1``, ... (a tuple output gives several). The tests build
the fw model, check names and shapes equal, load the same drawn weights and
compare outputs.
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
    # --- part B (shufflenetv2, squeezenet, densenet, googlenet, inceptionv3) ---
    **{f"shufflenet_v2_{s}": (1, 3, 32, 32)
       for s in ("x0_25", "x0_33", "x0_5", "x1_0", "x1_5", "x2_0", "swish")},
    "squeezenet1_0": (1, 3, 64, 64),
    "squeezenet1_1": (1, 3, 64, 64),
    **{f"densenet{d}": (1, 3, 32, 32) for d in (121, 161, 169, 201, 264)},
    # the auxiliary heads' fc layers take 128x3x3: inputs of 189 to 236 px only
    "googlenet": (1, 3, 189, 189),
    "inception_v3": (1, 3, 75, 75),  # the smallest input the stem and reductions allow
    # --- end of part B ---
}


def generate(name: str, out_dir: pathlib.Path) -> pathlib.Path:
    import paddle

    paddle.set_device("cpu")
    ctor = getattr(paddle.vision.models, name) if name != "lenet" else paddle.vision.models.LeNet
    model = ctor()
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
    np.savez_compressed(path, names=np.array(json.dumps(names)), input=x, **arrays)
    return path


def main(argv: list[str]) -> int:
    out_dir = HERE.parent / "tests" / "fixtures"
    out_dir.mkdir(exist_ok=True)
    for name in argv or sorted(INPUT_SIZES):
        print(generate(name, out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
