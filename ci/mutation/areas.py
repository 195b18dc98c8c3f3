"""The scoped areas of mutation testing: their source files and their tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CORE = "packages/fw-core/src/fw/core"
_NN = "packages/fw-nn/src/fw"
_JIT = "packages/fw-jit/src/fw/jit"


@dataclass(frozen=True)
class Area:
    name: str
    sources: tuple[str, ...]  # globs relative to the repository root
    tests: tuple[str, ...]  # test directories/files whose runs build its coverage map
    about: str

    def files(self, root: Path = ROOT) -> list[str]:
        """The area's source files (repository-relative, sorted), ``__init__`` excluded:
        package ``__init__`` modules only re-export."""
        out: set[str] = set()
        for pattern in self.sources:
            for p in root.glob(pattern):
                if p.is_file() and p.name != "__init__.py":
                    out.add(p.relative_to(root).as_posix())
        return sorted(out)


# The tests of an area are those of its own package and of the packages above
# it that exercise it most directly; the root tests/ (end-to-end, slow to run per
# mutant) are left out of the maps. A file not in any area (a PATH argument)
# uses every package's tests.
AREAS: dict[str, Area] = {
    a.name: a
    for a in (
        Area("core-ops", (f"{_CORE}/ops/*.py",),
             ("packages/fw-core/tests", "packages/fw-autograd/tests"),
             "fw-core's op table (fw/core/ops/*.py, the private helpers included)"),
        Area("core-ir", (f"{_CORE}/ir/passes/*.py", f"{_CORE}/ir/executor.py"),
             ("packages/fw-core/tests", "packages/fw-jit/tests", "packages/fw-inference/tests"),
             "fw-core's IR passes and executor"),
        Area("autograd-rules", ("packages/fw-autograd/src/fw/autograd/rules/*.py",),
             ("packages/fw-autograd/tests",),
             "fw-autograd's VJP rules"),
        Area("nn", (f"{_NN}/nn/layer/*.py", f"{_NN}/nn/functional/*.py", f"{_NN}/nn/clip.py",
                    f"{_NN}/optimizer/*.py"),
             ("packages/fw-nn/tests",),
             "fw-nn's layers, functional API, gradient clipping and optimizers"),
        Area("jit", (f"{_JIT}/_transform.py", f"{_JIT}/_cflow.py", f"{_JIT}/_convert_call.py",
                     f"{_JIT}/_runtime.py"),
             ("packages/fw-jit/tests",),
             "fw-jit's conversion: the AST transform, control flow, convert_call and the "
             "runtime helpers converted code calls"),
    )
}

ALL_TESTS = ("packages/fw-core/tests", "packages/fw-autograd/tests", "packages/fw-nn/tests",
             "packages/fw-jit/tests", "packages/fw-inference/tests")


def area_of(path: str) -> Area | None:
    """The area a repository-relative source file belongs to, if any."""
    for area in AREAS.values():
        if path in area.files():
            return area
    return None
