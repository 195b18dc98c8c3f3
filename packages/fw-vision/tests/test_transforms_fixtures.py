"""fw.vision.transforms against real Paddle 3.3.1: the outputs of every functional form and
every transform class (random ones seeded) on PIL images, NumPy arrays (Paddle's cv2 backend, with
OpenCV 5.0) and tensors, recorded by tools/gen_transform_fixtures.py.

Tolerances (stored per case by the generator): PIL exact (both use pillow); NumPy uint8
exact, or ±1 grey level where OpenCV rounds resampling/colour arithmetic in fixed point;
NumPy float32 1e-4; float tensors 1e-5; uint8 tensors ±1 where a float result is truncated.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import fw
from fw.vision import transforms as T
from fw.vision.transforms import functional as F

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str):
    with np.load(FIXTURES / name, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    return data, json.loads(str(data["cases"]))


FUNC, FUNC_CASES = _load("transforms_functional.npz")
RAND, RAND_CASES = _load("transforms_random.npz")


def _input(data, case):
    arr = data[f"input_{case['input']}"]
    if case["backend"] == "pil":
        return Image.fromarray(arr)
    if case["backend"] == "tensor":
        f = arr.astype(np.float32) / 255.0 if arr.dtype == np.uint8 else arr
        return fw.to_tensor(np.ascontiguousarray(f.transpose(2, 0, 1)))
    if case["backend"] == "tensor_u8":
        return fw.to_tensor(np.ascontiguousarray(arr.transpose(2, 0, 1)))
    return arr.copy()


def _array(out) -> np.ndarray:
    if isinstance(out, Image.Image):
        return np.asarray(out)
    if isinstance(out, np.ndarray):
        return out
    return out.numpy()


def _assert_close(got: np.ndarray, ref: np.ndarray, tol: float, what: str) -> None:
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != Paddle's {ref.shape}"
    assert got.dtype == ref.dtype, f"{what}: dtype {got.dtype} != Paddle's {ref.dtype}"
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    assert diff.max(initial=0) <= tol, (
        f"{what}: max |fw - Paddle| = {diff.max()} > {tol} at {np.argwhere(diff > tol)[:5]}")


@pytest.mark.parametrize("case", FUNC_CASES, ids=lambda c: c["key"])
def test_functional_matches_paddle(case):
    out = getattr(F, case["fn"])(_input(FUNC, case), **case["kwargs"])
    _assert_close(_array(out), FUNC[case["key"]], case["tol"], case["key"])


@pytest.mark.parametrize("case", RAND_CASES, ids=lambda c: c["key"])
def test_random_transform_matches_paddle_under_seed(case):
    t = getattr(T, case["cls"])(**case["kwargs"])
    random.seed(0)
    np.random.seed(0)
    outs = [_array(t(_input(RAND, case))) for _ in range(case["calls"])]
    for i, got in enumerate(outs):
        ref = RAND[case["key"]][i] if case["stacked"] else RAND[f"{case['key']}.{i}"]
        _assert_close(got, ref, case["tol"], f"{case['key']} call {i}")


def test_fixtures_cover_every_public_name():
    """Each of Paddle's 38 names (and adjust_saturation) is replayed above or, for the
    plumbing classes, in test_transforms.py."""
    covered = {c["fn"] for c in FUNC_CASES} | {c["cls"] for c in RAND_CASES}
    plumbing = {"BaseTransform", "Compose"}
    assert set(T.__all__) - covered <= plumbing
    assert len(T.__all__) == 38
    assert "adjust_saturation" in covered
