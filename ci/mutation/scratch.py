"""The scratch copy of the tree that mutants are planted in.

Mutation never touches the working tree: the tracked (and untracked, not
ignored) files are copied to a temporary directory with fw-core's built ``_C``
extension, and the tests run there. An interrupted run leaves the working tree
as it was.

Making the tests import the copy takes care: the hatch environment installs the
packages editable, and fw-core's editable install (scikit-build-core "inplace")
puts an import hook at the front of ``sys.meta_path`` that maps ``fw`` to the
working tree whatever ``sys.path`` says. The copy therefore gets a
``sitecustomize.py`` (run by ``site`` after the ``.pth`` files, in every Python
process the tests start) that removes that hook and the working tree's source
directories from ``sys.path``; ``PYTHONPATH`` puts the copy's first.
`Scratch.verify` checks that ``fw`` and its packages really come from the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .areas import ROOT

SITECUSTOMIZE = '''\
"""fw mutation testing (ci/mutation/scratch.py): import fw from this scratch copy."""
import os
import sys

_origin = os.environ.get("FWMUT_ORIGIN")
if _origin:
    sys.meta_path[:] = [f for f in sys.meta_path
                        if type(f).__name__ != "ScikitBuildInplaceFinder"]
    sys.path[:] = [p for p in sys.path
                   if not (p == _origin or p.startswith(_origin + os.sep))]
'''

PACKAGES = ("fw-core", "fw-autograd", "fw-nn", "fw-jit", "fw-inference")


def _tree_files(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, check=True, timeout=60).stdout
    return [f for f in out.decode().split("\0") if f]


class Scratch:
    """A copy of `root` in a temporary directory; use as a context manager."""

    def __init__(self, root: Path = ROOT):
        self.origin = root.resolve()
        self.base = Path(tempfile.mkdtemp(prefix="fw-mutate-"))
        self.root = self.base / "tree"
        self.boot = self.base / "boot"
        self._originals: dict[str, str] = {}

    def __enter__(self) -> Scratch:
        try:
            self._copy()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    def _copy(self) -> None:
        for rel in _tree_files(self.origin):
            src = self.origin / rel
            if not src.is_file():  # deleted in the working tree, not yet in git
                continue
            dst = self.root / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        core = self.origin / "packages/fw-core/src/fw/core"
        built = sorted(core.glob("_C*.so"))
        if not built:
            raise RuntimeError("fw-core's _C is not built (run `hatch run native`)")
        for so in built:
            shutil.copy2(so, self.root / "packages/fw-core/src/fw/core" / so.name)
        shared = self.origin.parent / "shared"  # tests that read ../shared/ (conformance)
        if shared.is_dir():
            (self.base / "shared").symlink_to(shared)
        self.boot.mkdir()
        (self.boot / "sitecustomize.py").write_text(SITECUSTOMIZE)
        shutil.copy2(Path(__file__).with_name("covplugin.py"), self.boot / "_fwmut_covplugin.py")

    def env(self) -> dict[str, str]:
        """The environment of a test run in the copy."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTEST_", "COV_", "COVERAGE_", "FWMUT_"))}
        paths = [str(self.boot)] + [str(self.root / "packages" / p / "src") for p in PACKAGES]
        env["PYTHONPATH"] = os.pathsep.join(paths)
        env["FWMUT_ORIGIN"] = str(self.origin)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return env

    def verify(self) -> None:
        """Check that fw and each package import from the copy (not the working tree)."""
        code = ("import fw, fw.core.ops, fw.core._C, fw.autograd, fw.nn, fw.optimizer, fw.jit, "
                "fw.inference\nfor m in (fw, fw.core.ops, fw.core._C, fw.autograd, fw.nn, "
                "fw.optimizer, fw.jit, fw.inference):\n    print(m.__file__)")
        out = subprocess.run([sys.executable, "-c", code], cwd=self.root, env=self.env(),
                             capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise RuntimeError(f"importing fw in the scratch copy failed:\n{out.stderr[-3000:]}")
        bad = [f for f in out.stdout.split() if not f.startswith(str(self.root) + os.sep)]
        if bad:
            raise RuntimeError(f"the scratch copy imports modules of the working tree: {bad}")

    # -- planting and removing a mutant --------------------------------------------

    def write(self, rel: str, text: str) -> None:
        """Replace `rel`'s text in the copy (the first write remembers the original)."""
        path = self.root / rel
        if rel not in self._originals:
            self._originals[rel] = path.read_text(encoding="utf-8")
        path.write_text(text, encoding="utf-8")
        self._drop_bytecode(path)

    def restore(self, rel: str) -> None:
        if rel in self._originals:
            path = self.root / rel
            path.write_text(self._originals.pop(rel), encoding="utf-8")
            self._drop_bytecode(path)

    def original(self, rel: str) -> str:
        if rel in self._originals:
            return self._originals[rel]
        return (self.root / rel).read_text(encoding="utf-8")

    @staticmethod
    def _drop_bytecode(path: Path) -> None:
        # A .pyc is trusted when the source's mtime (whole seconds) and size match;
        # a same-size mutant written within the second would reuse the old code.
        for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
            pyc.unlink(missing_ok=True)
