"""Generate the transform fixtures of packages/fw-vision/tests/ with real Paddle.

Run once with a Python that has Paddle 3.x and opencv-python(-headless) (Paddle's "cv2"
backend needs it); CI only reads the committed files:

    /work/tmp/paddle-venv/bin/python packages/fw-vision/tools/gen_transform_fixtures.py

Writes tests/fixtures/transforms_functional.npz and transforms_random.npz: the input
images, one output per case, and a JSON list of the cases (function or class name,
arguments, input, tolerance) that tests/test_transforms_fixtures.py replays with fw.
No pickles: every entry is a plain array or a string.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures"


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20251126)
    h, w = 10, 13
    # a smooth picture plus noise: interpolation sees both gradients and edges
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([xx * 14, yy * 18, (xx + yy) * 8], axis=-1).astype(np.float64)
    u8 = np.clip(base + rng.integers(-40, 40, (h, w, 3)), 0, 255).astype(np.uint8)
    even = rng.integers(0, 256, (12, 16, 3)).astype(np.uint8)
    return {
        "u8": u8,
        "f32": (u8.astype(np.float32) / 255.0),
        "even": even,
        "gray1": u8[:, :, :1].copy(),
    }


PTS_START = [[0, 0], [12, 0], [12, 9], [0, 9]]
PTS_END = [[1, 2], [11, 0], [10, 8], [2, 9]]

# (function, kwargs, backends, inputs for the cv2 backend); tolerances below
FUNCTIONAL = [
    ("to_tensor", {}, "pil cv2", "u8 f32"),
    ("to_tensor", {"data_format": "HWC"}, "pil cv2", "u8"),
    *[("resize", {"size": s, "interpolation": m}, "pil cv2 tensor", "u8 f32")
      for s in ([7, 9], [15, 17], 8) for m in ("nearest", "bilinear", "bicubic")],
    *[("resize", {"size": s, "interpolation": m}, "cv2", "u8 f32")
      for s in ([7, 9], [15, 17]) for m in ("area", "lanczos")],
    *[("resize", {"size": [6, 8], "interpolation": m}, "cv2", "even")
      for m in ("bilinear", "area", "nearest")],
    *[("resize", {"size": [5, 6], "interpolation": m}, "pil", "u8")
      for m in ("box", "lanczos", "hamming")],
    *[("pad", {"padding": p, "fill": f, "padding_mode": "constant"}, "pil cv2 tensor", "u8")
      for p in (2, [1, 2], [1, 2, 3, 4]) for f in (0, 7)],
    ("pad", {"padding": [1, 2, 3, 4], "fill": [10, 20, 30]}, "pil cv2", "u8"),
    *[("pad", {"padding": [1, 2, 3, 4], "padding_mode": m}, "pil cv2 tensor", "u8")
      for m in ("edge", "reflect")],
    ("pad", {"padding": [1, 2, 3, 4], "padding_mode": "symmetric"}, "pil cv2", "u8"),
    ("crop", {"top": 2, "left": 3, "height": 6, "width": 9}, "pil cv2 tensor", "u8"),
    ("center_crop", {"output_size": 5}, "pil cv2 tensor", "u8"),
    ("center_crop", {"output_size": [4, 9]}, "pil cv2 tensor", "u8"),
    ("hflip", {}, "pil cv2 tensor", "u8"),
    ("vflip", {}, "pil cv2 tensor", "u8"),
    *[("adjust_brightness", {"brightness_factor": f}, "pil cv2 tensor", "u8")
      for f in (0.5, 1.7)],
    *[("adjust_contrast", {"contrast_factor": f}, "pil cv2 tensor", "u8") for f in (0.5, 1.5)],
    *[("adjust_saturation", {"saturation_factor": f}, "pil tensor", "u8") for f in (0.3, 1.8)],
    *[("adjust_hue", {"hue_factor": f}, "pil cv2 tensor", "u8") for f in (-0.3, 0.2, 0.5)],
    # cv2: Paddle's backend agrees with the documented geometry (and fw) only for pure
    # translations (see functional_cv2.affine); PIL and tensors take every argument
    *[("affine", {"angle": 0.0, "translate": [2, -1], "scale": 1.0, "shear": 0.0,
                  "interpolation": m}, "cv2", "u8 f32")
      for m in ("nearest", "bilinear", "bicubic")],
    *[("affine", {"angle": 30.0, "translate": [1, 2], "scale": 0.9, "shear": [5.0, 3.0],
                  "interpolation": m}, "pil tensor", "u8") for m in ("nearest", "bilinear")],
    ("affine", {"angle": -20.0, "translate": [0, 0], "scale": 1.2, "shear": 8.0,
                "center": [4, 5], "interpolation": "bicubic"}, "pil", "u8"),
    *[("rotate", {"angle": a, "interpolation": m}, "pil cv2 tensor", "u8 f32")
      for a in (30.0, 90.0) for m in ("nearest", "bilinear")],
    ("rotate", {"angle": 30.0, "interpolation": "bicubic"}, "pil cv2", "u8 f32"),
    ("rotate", {"angle": -45.0, "expand": True}, "pil cv2 tensor", "u8"),
    ("rotate", {"angle": 20.0, "center": [3, 4], "fill": [10, 20, 30]}, "pil cv2 tensor",
     "u8"),
    ("rotate", {"angle": 20.0, "fill": 100}, "cv2", "u8"),
    *[("perspective", {"startpoints": PTS_START, "endpoints": PTS_END, "interpolation": m},
       "pil cv2 tensor", "u8 f32") for m in ("nearest", "bilinear")],
    ("perspective", {"startpoints": PTS_START, "endpoints": PTS_END,
                     "interpolation": "bicubic"}, "pil cv2", "u8"),
    *[("to_grayscale", {"num_output_channels": n}, "pil cv2 tensor", "u8 f32") for n in (1, 3)],
    ("normalize", {"mean": [0.4, 0.5, 0.6], "std": [0.2, 0.25, 0.3], "data_format": "CHW"},
     "tensor", "u8"),
    ("normalize", {"mean": [100.0, 120.0, 140.0], "std": [50.0, 60.0, 70.0],
                   "data_format": "HWC"}, "pil cv2", "u8"),
    ("normalize", {"mean": [100.0, 120.0, 140.0], "std": [50.0, 60.0, 70.0],
                   "data_format": "HWC", "to_rgb": True}, "cv2", "u8"),
    ("erase", {"i": 2, "j": 3, "h": 4, "w": 5, "v": 9}, "pil cv2 tensor", "u8"),
    # uint8 tensors, where Paddle has kernels for them
    *[("resize", {"size": [7, 9], "interpolation": m}, "tensor_u8", "u8")
      for m in ("nearest", "bilinear")],
    ("adjust_hue", {"hue_factor": 0.2}, "tensor_u8", "u8"),
    ("center_crop", {"output_size": 5}, "tensor_u8", "u8"),
]

# (class, kwargs, backends, input); every case: seed 0, three calls (one for the
# deterministic classes)
RANDOM = [
    ("RandomResizedCrop", {"size": 8}, "pil cv2 tensor", "u8"),
    ("RandomResizedCrop", {"size": [6, 9], "scale": [0.5, 0.9], "ratio": [0.5, 2.0]},
     "pil cv2", "u8"),
    ("RandomCrop", {"size": 8, "padding": 2}, "pil cv2 tensor", "u8"),
    ("RandomCrop", {"size": [15, 20], "pad_if_needed": True}, "pil cv2", "u8"),
    ("RandomHorizontalFlip", {}, "pil cv2 tensor", "u8"),
    ("RandomVerticalFlip", {"prob": 0.7}, "pil cv2 tensor", "u8"),
    ("RandomRotation", {"degrees": 30}, "pil cv2 tensor", "u8"),
    ("RandomRotation", {"degrees": [-10, 40], "interpolation": "bilinear", "expand": True},
     "pil cv2", "u8"),
    ("RandomAffine", {"degrees": 20, "translate": [0.2, 0.1], "scale": [0.8, 1.2],
                      "shear": [-5, 5, -3, 3]}, "pil tensor", "u8"),
    ("RandomAffine", {"degrees": 0, "translate": [0.3, 0.2]}, "cv2", "u8"),
    ("RandomPerspective", {"prob": 1.0, "distortion_scale": 0.4}, "pil cv2 tensor", "u8"),
    ("BrightnessTransform", {"value": 0.4}, "pil cv2 tensor", "u8"),
    ("ContrastTransform", {"value": 0.4}, "pil cv2 tensor", "u8"),
    ("SaturationTransform", {"value": 0.4}, "pil tensor", "u8"),
    ("HueTransform", {"value": 0.3}, "pil cv2 tensor", "u8"),
    ("ColorJitter", {"brightness": 0.4, "contrast": 0.3, "saturation": 0.2, "hue": 0.1},
     "pil tensor", "u8"),
    ("ColorJitter", {"brightness": 0.4, "contrast": 0.3, "saturation": 0, "hue": 0.1},
     "cv2", "u8"),
    ("RandomErasing", {"prob": 0.9, "value": [10, 20, 30]}, "cv2 tensor", "u8"),
    ("RandomErasing", {"prob": 1.0, "scale": [0.1, 0.4], "value": 5}, "pil", "u8"),
    # the deterministic classes, through the same replay
    ("Resize", {"size": [6, 9]}, "pil cv2 tensor", "u8"),
    ("Resize", {"size": 7, "interpolation": "bicubic"}, "pil cv2", "u8"),
    ("CenterCrop", {"size": [5, 7]}, "pil cv2 tensor", "u8"),
    ("Pad", {"padding": [1, 2], "padding_mode": "reflect"}, "pil cv2 tensor", "u8"),
    ("Grayscale", {"num_output_channels": 3}, "pil cv2 tensor", "u8"),
    ("Transpose", {}, "pil cv2", "u8"),
    ("ToTensor", {"data_format": "HWC"}, "pil cv2", "u8"),
    ("Normalize", {"mean": [100.0, 110.0, 120.0], "std": [50.0, 55.0, 60.0],
                   "data_format": "HWC", "to_rgb": True}, "cv2", "u8"),
    ("Normalize", {"mean": 0.5, "std": 0.25}, "tensor", "u8"),
]

DETERMINISTIC = {"Resize", "CenterCrop", "Pad", "Grayscale", "Transpose", "ToTensor",
                 "Normalize"}

# resampling and colour conversions in 8 bits: OpenCV rounds in fixed point (±1 allowed)
_CV_ROUNDING = {"resize", "affine", "rotate", "perspective", "adjust_hue", "Resize",
                "RandomResizedCrop", "RandomRotation", "RandomAffine", "RandomPerspective",
                "HueTransform", "ColorJitter"}


def tolerance(fn: str, backend: str, inp: str) -> float:
    if backend == "pil":
        return 0.0
    if backend == "tensor":
        return 1e-5
    if backend == "tensor_u8":
        # the uint8 kernels truncate a float result: a last-bit float difference can
        # move it by one
        return 1.0 if fn in ("resize", "adjust_hue") else 0.0
    if inp == "f32":
        return 1e-4  # float32 rounding of coordinates and weights
    return 1.0 if fn in _CV_ROUNDING else 0.0


def to_input(arr: np.ndarray, backend: str):
    import paddle
    from PIL import Image

    if backend == "pil":
        return Image.fromarray(arr[:, :, 0] if arr.shape[2] == 1 else arr)
    if backend == "tensor":
        f = arr.astype(np.float32) / 255.0 if arr.dtype == np.uint8 else arr
        return paddle.to_tensor(np.ascontiguousarray(f.transpose(2, 0, 1)))
    if backend == "tensor_u8":
        return paddle.to_tensor(np.ascontiguousarray(arr.transpose(2, 0, 1)))
    return arr.copy()


def to_array(out) -> np.ndarray:
    from PIL import Image

    if isinstance(out, Image.Image):
        return np.asarray(out).copy()
    if isinstance(out, np.ndarray):
        return out.copy()
    return out.numpy()


def call_kwargs(kw: dict) -> dict:
    """Paddle's PIL padding wants a tuple fill (JSON keeps lists)."""
    return {k: tuple(v) if k == "fill" and isinstance(v, list) else v for k, v in kw.items()}


def main() -> int:
    import paddle
    import paddle.vision.transforms as T
    import paddle.vision.transforms.functional as PF

    imgs = inputs()
    arrays: dict[str, np.ndarray] = {f"input_{k}": v for k, v in imgs.items()}
    cases = []
    for fn, kw, backends, ins in FUNCTIONAL:
        for backend in backends.split():
            for inp in (ins.split() if backend == "cv2" else ["u8"]):
                key = f"{backend}.{fn}.{len(cases)}"
                out = to_array(getattr(PF, fn)(to_input(imgs[inp], backend), **call_kwargs(kw)))
                arrays[key] = out
                cases.append({"key": key, "fn": fn, "kwargs": kw, "backend": backend,
                              "input": inp, "tol": tolerance(fn, backend, inp)})
    rand_cases = []
    rand_arrays: dict[str, np.ndarray] = {}
    for cls, kw, backends, inp in RANDOM:
        for backend in backends.split():
            key = f"{backend}.{cls}.{len(rand_cases)}"
            t = getattr(T, cls)(**kw)
            random.seed(0)
            np.random.seed(0)
            calls = 1 if cls in DETERMINISTIC else 3
            outs = [to_array(t(to_input(imgs[inp], backend))) for _ in range(calls)]
            shapes = {o.shape for o in outs}
            if len(shapes) == 1:
                rand_arrays[key] = np.stack(outs)
            else:
                for i, o in enumerate(outs):
                    rand_arrays[f"{key}.{i}"] = o
            rand_cases.append({"key": key, "cls": cls, "kwargs": kw, "backend": backend,
                               "input": inp, "stacked": len(shapes) == 1, "calls": calls,
                               "tol": tolerance(cls, backend, inp)})
    # Paddle's cv2 adjust_saturation draws its blend factor from np.random; fw blends
    # with the given factor, so the reference is Paddle's formula with that factor
    import cv2

    for f in (0.3, 1.8):
        img = imgs["u8"].astype(np.float32)
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)[..., None]
        key = f"cv2.adjust_saturation.{len(cases)}"
        arrays[key] = (img * f + grey * (1 - f)).clip(0, 255).astype(np.uint8)
        cases.append({"key": key, "fn": "adjust_saturation", "kwargs": {"saturation_factor": f},
                      "backend": "cv2", "input": "u8", "tol": 0.0})
    arrays["cases"] = np.array(json.dumps(cases))
    rand_arrays["cases"] = np.array(json.dumps(rand_cases))
    for k in imgs:
        rand_arrays[f"input_{k}"] = imgs[k]
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT / "transforms_functional.npz", **arrays)
    np.savez_compressed(OUT / "transforms_random.npz", **rand_arrays)
    print(f"paddle {paddle.__version__}, opencv {cv2.__version__}: {len(cases)} functional "
          f"and {len(rand_cases)} random cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
