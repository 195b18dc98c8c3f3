"""The user guide's code runs as written: docs/guide.md's blocks form one script
(run here, in this process), and so do each docs/guide/ page's (each in a fresh
interpreter)."""

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

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


# ---- docs/guide/: every page's code runs; the pages link to each other correctly ----

GUIDE_DIR = GUIDE.parent / "guide"
_BLOCK = re.compile(r"```python\n(.*?)```", flags=re.S)
_FILE_BLOCK = re.compile(r"# ([\w.-]+\.py)\n")  # a block that starts "# train.py" is that file
PAGES = sorted(p for p in GUIDE_DIR.glob("*.md") if _BLOCK.search(p.read_text()))


def page_script(page: pathlib.Path) -> tuple[dict[str, str], str]:
    """The files a page shows (blocks headed ``# name.py``) and the script that its
    other Python blocks make, in order."""
    files, code = {}, []
    for block in _BLOCK.findall(page.read_text()):
        m = _FILE_BLOCK.match(block)
        if m:
            files[m.group(1)] = block
        else:
            code.append(block)
    return files, "\n".join(code)


def test_guide_has_the_pages_the_issue_asks_for():
    names = {p.stem for p in PAGES}
    assert {"tensors", "autograd", "layers", "training", "checkpoints", "amp", "to_static",
            "serving", "profiling"} <= names
    files, script = page_script(GUIDE_DIR / "checkpoints.md")
    assert "train.py" in files and "\"train.py\"" in script


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_guide_page_runs(page, tmp_path):
    """Each page's Python blocks, as one script in a fresh interpreter (the pages
    start servers, enable flags and AMP: nothing leaks into this process). The pages
    assert what they claim (losses fall, outputs match), so a wrong page fails."""
    files, script = page_script(page)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "page.py").write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    try:
        run = subprocess.run([sys.executable, "page.py"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{page.name}: its code did not finish in {e.timeout} s")
    assert run.returncode == 0, f"{page.name} failed:\n{run.stdout[-3000:]}\n{run.stderr[-6000:]}"


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_guide_links_resolve():
    pages = [GUIDE] + sorted(GUIDE_DIR.glob("*.md"))
    for page in pages:
        for target in _LINK.findall(page.read_text()):
            if target.startswith(("http://", "https://", "#")):
                continue
            assert (page.parent / target.split("#")[0]).exists(), f"{page.name} -> {target}"
    index = (GUIDE_DIR / "index.md").read_text()
    for p in PAGES:
        assert f"({p.name})" in index, f"index.md does not link {p.name}"
    assert "(guide/index.md)" in GUIDE.read_text()
