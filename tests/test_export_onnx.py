"""ONNX export across packages: eager == to_static == jit.save/jit.load == the
exported ONNX file on onnxruntime, and the README's "Export to ONNX" snippet runs
as written."""

from __future__ import annotations

import os
import pathlib
import re
import sys

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

import fw  # noqa: E402
import fw.onnx  # noqa: E402
from fw.jit import InputSpec  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import zoo  # noqa: E402


def _session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


class Gated(fw.nn.Layer):
    """A layer with a tensor-dependent branch (an If in the ONNX file)."""

    def __init__(self):
        super().__init__()
        self.fc = fw.nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        if x.mean() > 0:
            out = fw.tanh(h)
        else:
            out = h * 0.5
        return out


def _models():
    fw.seed(0)
    return {
        "lenet": (zoo.build(fw, "lenet"), [InputSpec([None, 1, 28, 28], "float32", "x")],
                  lambda b: zoo.example_input(fw, "lenet", batch=b, seed=b).numpy()),
        "bert_1layer": (zoo.build(fw, "bert_encoder", layers=1),
                        [InputSpec([None, 128], "int64", "x")],
                        lambda b: zoo.example_input(fw, "bert_encoder", batch=b, seed=b).numpy()),
        "gated": (Gated(), [InputSpec([None, 6], "float32", "x")],
                  # batch 1 takes the then-branch, batch 2 the else-branch
                  lambda b: np.abs(np.random.default_rng(b).standard_normal((b, 6)))
                  .astype("float32") * (1 if b % 2 else -1)),
    }


@pytest.mark.parametrize("name", ["lenet", "bert_1layer", "gated"])
def test_eager_static_saved_and_onnx_agree(name, tmp_path):
    model, spec, make = _models()[name]
    model.eval()
    static = fw.jit.to_static(model, input_spec=spec)
    saved = fw.jit.save(model, tmp_path / "m", spec)
    loaded = fw.jit.load(saved)
    onnx_path = fw.onnx.export(loaded, tmp_path / "m")  # the saved model, as Paddle would
    sess = _session(onnx_path)
    for batch in (1, 2):
        x = make(batch)
        eager = static.forward.dygraph_function(fw.to_tensor(x)).numpy()
        outs = {"to_static": static(fw.to_tensor(x)).numpy(),
                "jit.load": loaded(fw.to_tensor(x)).numpy(),
                "onnx": sess.run(None, {"x": x})[0]}
        for what, got in outs.items():
            assert got.shape == eager.shape, what
            scale = max(1.0, float(np.abs(eager).max()))
            err = float(np.abs(got - eager).max())
            assert err <= 1e-5 * scale, f"{name} batch {batch}: {what} differs by {err:.3g}"


def test_readme_export_snippet_runs(tmp_path, monkeypatch, capsys):
    text = (ROOT / "README.md").read_text()
    section = text.split("### Export to ONNX", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    assert (tmp_path / "deploy" / "net.onnx").exists()
    assert ns["path"] == os.path.join("deploy", "net.onnx")
    assert ns["y"].shape == (5, 3)
    assert float(capsys.readouterr().out) <= 1e-5
