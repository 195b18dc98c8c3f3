"""README.md's "Deploy / Serve over HTTP" works from a clone: its commands are the
steps of examples/serve_digits.sh, and that script — save the demo's model, serve
it, curl it — runs here, with this interpreter instead of hatch's environment and
a free loopback port. The prediction it prints is checked against a Predictor run
on the same request file."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "serve_digits.sh"
REQUEST = ROOT / "examples" / "data" / "digit_request.json"


def _section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^##)", text, re.S | re.M)
    assert m, f"README.md has no '### {title}' section"
    return m.group(1)


def _commands(block_text: str) -> list:
    out = []
    for block in re.findall(r"```sh\n(.*?)```", block_text, re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line:
                out.append(line)
    return out


def _as_in_script(cmd: str) -> str:
    """A README command as the script spells it (its variables, not hatch)."""
    cmd = cmd.replace("hatch run demo", "$PY examples/digits.py")
    cmd = cmd.replace("hatch run python", "$PY")
    return cmd.replace("build/deploy", "$DIR").replace("8866", "$PORT")


def test_the_readme_commands_are_the_steps_of_the_example_script():
    commands = _commands(_section("Serve over HTTP"))
    assert len(commands) == 4, commands  # save, serve, list, predict
    script = [line.replace('"', "") for line in SCRIPT.read_text().splitlines()
              if line and not line.startswith("#")]
    for cmd in commands:
        want = _as_in_script(cmd)
        assert any(want in line for line in script), f"README's {cmd!r} is not in {SCRIPT.name}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # trains the demo's LeNet for 3 quick epochs: half a minute or more
@pytest.mark.skipif(shutil.which("curl") is None or shutil.which("bash") is None,
                    reason="the example uses bash and curl")
def test_the_serve_digits_example_saves_serves_and_answers(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    deploy = tmp_path / "build" / "deploy"  # not there yet, as in a fresh clone
    env = dict(os.environ, FW_PYTHON=sys.executable, PORT=str(_free_port()),
               DEPLOY_DIR=str(deploy))
    out = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    model = deploy / "lenet_digits.fwmodel"
    assert model.exists()
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    ready, listing, answer = (json.loads(line) for line in lines[-3:])
    assert ready == {"status": "ready", "models": ["lenet_digits"]}
    (m,) = listing["models"]
    assert m["inputs"] == [{"name": "image", "shape": [-1, 1, 28, 28], "dtype": "float32"}]
    assert m["outputs"] == [{"name": "output_0", "shape": [-1, 10], "dtype": "float32"}]
    logits = np.array(answer["outputs"]["output_0"], np.float32)
    import fw.inference as infer

    image = np.array(json.loads(REQUEST.read_text())["inputs"]["image"], np.float32)
    (want,) = infer.create_predictor(infer.Config(str(model))).run([image])
    assert logits.shape == (1, 10) and np.array_equal(logits, np.asarray(want))
