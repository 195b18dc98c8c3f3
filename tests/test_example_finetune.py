"""examples/finetune_resnet.py end to end at its CI size: ResNet-18 weights kept in a
local hub directory (Paddle's .pdparams format) are loaded through fw.hub, the head
is replaced and fine-tuned, the model is exported with fw.jit.save and served by
fw.inference's Predictor with the eager model's predictions."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def _example():
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    key = "fw_example_finetune_resnet"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, os.path.join(EXAMPLES,
                                                                        "finetune_resnet.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[key] = mod
        spec.loader.exec_module(mod)
    return sys.modules[key]


def test_finetune_resnet_small(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("fw.inference")
    pytest.importorskip("fw.hub")
    ex = _example()

    # the weights a user keeps: the example's stand-in, written here so the test
    # knows every value
    hub = tmp_path / "hub"
    hub.mkdir()
    images = ex.digits_rgb("train", 12, list(range(10))).images[:128]
    kept = ex.write_standin_weights(str(hub), images, seed=0)
    lines = []
    r = ex.main(["--small", "--weights-dir", str(hub), "--export-dir", str(tmp_path)],
                log=lines.append)
    # fw.hub.load read exactly the kept file
    for k, v in kept.state_dict().items():
        np.testing.assert_array_equal(r["loaded"][k], v.numpy(), err_msg=k)
    assert any("fw.hub.load" in line for line in lines)
    assert r["backbone_kept"]  # only the new head learnt
    assert r["classes"] == 10 and r["test_images"] == 200
    # learning happened: the loss fell and the accuracy is far above chance (10 %)
    assert np.mean(r["losses"][-5:]) < np.mean(r["losses"][:5]), r["losses"]
    assert r["accuracy"] > 0.5, r["accuracy"]
    # the served model is the eager one
    assert r["agreement"] >= 0.99 and r["max_diff"] < 1e-3, (r["agreement"], r["max_diff"])
    assert (tmp_path / "resnet18_finetuned.fwmodel").is_file()


def test_finetune_resnet_image_folder(tmp_path):
    """A tiny class-per-directory image tree (read with fw.vision.datasets'
    DatasetFolder) instead of the digits: dark and bright noise images."""
    pytest.importorskip("fw.inference")
    pytest.importorskip("fw.hub")
    from PIL import Image

    rng = np.random.default_rng(0)
    for cls, scale in (("dark", 0.2), ("bright", 1.0)):
        (tmp_path / "data" / cls).mkdir(parents=True)
        for i in range(10):
            pixels = (rng.uniform(0, 1, (20, 20, 3)) * 255 * scale).astype(np.uint8)
            Image.fromarray(pixels).save(tmp_path / "data" / cls / f"{i}.png")
    args = ["--small", "--image-folder", str(tmp_path / "data"), "--steps", "12", "--size",
            "16", "--batch-size", "8", "--export-dir", str(tmp_path)]
    r = _example().main(args, log=lambda m: None)
    assert r["classes"] == 2 and r["test_images"] == 4
    assert r["accuracy"] == 1.0  # brightness separates the classes
    assert r["agreement"] == 1.0 and r["max_diff"] < 1e-3
