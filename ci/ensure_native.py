"""Make sure fw-core's native extension in this checkout is built and current.

Why: fw-core is installed editable with scikit-build-core's "inplace" mode, so
the compiled ``_C`` module lives beside the sources, not in the environment.
A hatch environment outlives the checkout it was made for: a fresh clone at the
same path (what CI does), ``git clean -fdx``, or a pull that changes csrc/ all
leave an existing environment whose fw-core has no (or a stale) ``_C``, and
``hatch env create`` does nothing for an environment that already exists.
Every hatch script that imports fw runs this first; it costs a few stat() calls
when the build is current and a rebuild (about a minute) when it is not.

It does not import fw: a half-built fw is what it guards against.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "packages" / "fw-core"
INPUTS = ("csrc", "CMakeLists.txt", "pyproject.toml")
_SOURCES = {".cpp", ".cc", ".hpp", ".h"}  # what csrc/ holds that the build compiles


def _newest_input() -> tuple[float, Path]:
    newest = (0.0, CORE)
    for name in INPUTS:
        path = CORE / name
        files = [p for p in path.rglob("*") if p.suffix in _SOURCES] if path.is_dir() else [path]
        for f in files:
            newest = max(newest, (f.stat().st_mtime, f))
    return newest


def why_rebuild() -> str | None:
    """Reason the extension must be (re)built, or None when it is current."""
    built = sorted((CORE / "src" / "fw" / "core").glob("_C.*.so"))
    if not built:
        return "fw.core._C is not built in this checkout"
    so_time = max(p.stat().st_mtime for p in built)
    in_time, newest = _newest_input()
    if in_time > so_time:
        return f"{newest.relative_to(ROOT)} is newer than the built fw.core._C"
    return None


def main() -> int:
    if os.environ.get("FW_DISABLE_NATIVE") == "1":
        return 0
    reason = why_rebuild()
    if reason is None:
        return 0
    print(f"ensure_native: {reason}; building it (pip install -e packages/fw-core)", flush=True)
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(CORE)]
    rc = subprocess.call(cmd, cwd=ROOT)
    if rc != 0:
        print(f"ensure_native: the build failed (exit {rc}): {' '.join(cmd)}", file=sys.stderr)
        return rc
    built = list((CORE / "src" / "fw" / "core").glob("_C.*.so"))
    if not built:
        print("ensure_native: pip succeeded but no fw/core/_C.*.so was written", file=sys.stderr)
        return 1
    for so in built:  # ninja skips relinking when an input changed nothing it compiles
        os.utime(so)
    return 0


if __name__ == "__main__":
    sys.exit(main())
