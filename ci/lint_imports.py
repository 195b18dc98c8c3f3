"""Run the import-linter layer contracts of pyproject.toml over the whole `fw`
namespace.

Every fw distribution contributes subpackages to the one `fw` package, but
grimp (import-linter's graph builder) only scans the directory of `fw`'s
__init__.py. So this script lays out a merged view of the namespace — a copy of
every package's `src/fw/*` sources under one temporary `fw/` (grimp does not
follow symlinked directories) — and runs `lint-imports` against it.

Usage: python ci/lint_imports.py
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def merged_namespace(dest: pathlib.Path) -> None:
    fw = dest / "fw"
    fw.mkdir()
    for src in sorted(ROOT.glob("packages/*/src/fw")):
        for entry in src.iterdir():
            if entry.name == "__pycache__" or entry.name.endswith((".so", ".pyc")):
                continue
            _merge(entry, fw / entry.name)


def _merge(entry: pathlib.Path, target: pathlib.Path) -> None:
    """Copy `entry` to `target`. Two packages may share a directory (fw-hub adds
    fw/utils/download.py to fw-core's fw/utils) but never a file."""
    if entry.is_dir():
        target.mkdir(exist_ok=True)
        for sub in entry.iterdir():
            if sub.name != "__pycache__" and not sub.name.endswith((".so", ".pyc")):
                _merge(sub, target / sub.name)
        return
    if target.exists():
        raise SystemExit(f"two packages provide the file {target}: {entry} and another")
    shutil.copy2(entry, target)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="fw-layers-") as tmp:
        merged_namespace(pathlib.Path(tmp))
        env = dict(os.environ)
        env["PYTHONPATH"] = tmp
        # Editable installs put import hooks (meta-path finders) ahead of
        # PYTHONPATH; drop them so `fw` resolves to the merged copy.
        code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if not any("
                "w in type(f).__name__ for w in ('Inplace', 'Editable', 'Redirect'))]; "
                "from importlinter.cli import lint_imports_command; "
                "sys.argv = ['lint-imports', '--config', sys.argv[1]]; "
                "sys.exit(lint_imports_command())")
        return subprocess.call([sys.executable, "-c", code, str(ROOT / "pyproject.toml")],
                               env=env, cwd=tmp)


if __name__ == "__main__":
    sys.exit(main())
