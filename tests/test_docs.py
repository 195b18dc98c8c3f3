"""The user guide's code runs as written (its blocks form one script)."""

import pathlib
import re

import numpy as np

GUIDE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "guide.md"


def test_guide_code_blocks_run(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    # the guide leaves data to the reader: provide it, then run every block in order
    ns = {"batch": np.random.default_rng(0).random((4, 784), dtype=np.float32)}
    for code in blocks:
        exec(compile(code, str(GUIDE), "exec"), ns)
    import fw

    xb, yb = fw.randn([8, 784]), fw.randint(0, 10, [8])
    first = float(ns["train_step"](xb, yb))
    for _ in range(5):
        last = float(ns["train_step"](xb, yb))
    assert last < first
    (logits,) = ns["predictor"].run([ns["batch"]])
    assert logits.shape == [4, 10]
    assert (tmp_path / "deploy" / "net.fwmodel").exists()
