"""fw.core.internal is the only way into fw-core's internals for the other packages.

The scan below reads the sources of fw-autograd, fw-nn, fw-jit and fw-inference and
fails, naming file:line, for each use of a private name of fw-core:

- ``from fw.core.<m> import _name`` (a private name or a private module),
  ``import fw.core._m`` / ``fw.core.ops._m`` (any private part in the module path);
- ``alias._name`` where ``alias`` is an fw-core module imported into the file
  (``from fw.core import dtypes as _dt`` then ``_dt._FLOAT``), or a dotted
  ``fw.core.<...>._name``.

Reading the Tensor slots (``t._data``, ``t._sg``, ``t._node``) is part of the ABI
(see fw.core.internal's docstring) and is not an fw-core module attribute, so it is
not reported. import-linter (root pyproject.toml) checks the module imports too.
"""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import fw
from fw.core import internal

ROOT = pathlib.Path(__file__).resolve().parents[3]
CORE = ROOT / "packages" / "fw-core" / "src"
SCANNED = ("fw-autograd", "fw-nn", "fw-jit", "fw-inference", "fw-onnx", "fw-distributed",
           "fw-slim")

# Uses that predate fw.core.internal, as (file relative to the repository, the use).
# Migrated with the fw-jit restructuring: the lead empties this list; do not add to it.
ALLOWED: set = set()  # (file, private name) pairs still to migrate: none


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_core_module(dotted: str) -> bool:
    p = CORE.joinpath(*dotted.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def private_uses(source: str) -> list[tuple[int, str]]:
    """[(line, the fw-core private name used)] in `source`, in line order."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # local name -> the fw-core module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "fw.core" or node.module.startswith("fw.core.")):
            if any(_private(p) for p in node.module.split(".")):
                found.append((node.lineno, node.module))
                continue
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if _private(a.name):
                    found.append((node.lineno, full))
                elif _is_core_module(full):
                    aliases[a.asname or a.name] = full
        elif isinstance(node, ast.Import):
            for a in node.names:
                if not a.name.startswith("fw.core"):
                    continue
                if any(_private(p) for p in a.name.split(".")):
                    found.append((node.lineno, a.name))
                elif a.asname:
                    aliases[a.asname] = a.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            dotted = _dotted(node.value)
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            module = aliases.get(head)
            if module is not None:
                full = ".".join(p for p in (module, rest, node.attr) if p)
            elif dotted.startswith("fw.core"):
                full = f"{dotted}.{node.attr}"
            else:
                continue
            found.append((node.lineno, full))
    return sorted(set(found))


def _scan():
    for pkg in SCANNED:
        for path in sorted((ROOT / "packages" / pkg / "src").rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for line, name in private_uses(path.read_text(encoding="utf-8")):
                yield rel, line, name


def test_no_package_uses_private_names_of_fw_core():
    seen = set()
    bad = []
    for rel, line, name in _scan():
        # a private module imported whole (`from fw.core import _native`): one entry
        key = (rel, name)
        seen.add(key)
        if key not in ALLOWED:
            bad.append(f"{rel}:{line}: {name}")
    assert not bad, ("private names of fw-core used outside it; use fw.core.internal "
                     "(packages/fw-core/README.md, 'The internal ABI'):\n" + "\n".join(bad))
    stale = sorted(ALLOWED - seen)
    assert not stale, f"allow-list entries no longer needed, remove them: {stale}"


PLANTED = '''\
import fw.core.ops._registry
from fw.core import dtypes as _dt, _native
from fw.core.tensor import Tensor, _new
from fw.core.ir.core import Value, _state
from fw.core.internal import build_state, make_tensor

def f(t):
    x = t._data + t._sg  # Tensor slots are part of the ABI
    y = build_state.builder
    return _dt._FLOAT, fw.core.ir.core._state.builder
'''


def test_the_scan_finds_planted_private_uses():
    assert private_uses(PLANTED) == [
        (1, "fw.core.ops._registry"),
        (2, "fw.core._native"),
        (3, "fw.core.tensor._new"),
        (4, "fw.core.ir.core._state"),
        (10, "fw.core.dtypes._FLOAT"),
        (10, "fw.core.ir.core._state"),
    ]
    clean = "from fw.core.internal import make_tensor\n\ndef g(t):\n    return t._node\n"
    assert private_uses(clean) == []


def test_a_planted_file_fails_the_package_scan(tmp_path, monkeypatch):
    pkg = tmp_path / "packages" / "fw-nn" / "src" / "fw" / "nn"
    pkg.mkdir(parents=True)
    (pkg / "bad.py").write_text("x = 1\nfrom fw.core.tensor import _new\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "ALLOWED", set())
    with pytest.raises(AssertionError, match=r"packages/fw-nn/src/fw/nn/bad\.py:2: "
                                             r"fw\.core\.tensor\._new"):
        test_no_package_uses_private_names_of_fw_core()


# ---------------------------------------------------------------- the module itself
def test_internal_names_are_fw_cores_own_objects():
    from fw.core import dispatch, tensor
    from fw.core.ir import core as ir_core
    from fw.core.ops import OPS, get_op

    assert internal.build_state is ir_core._state
    assert internal.grad_state is dispatch.grad_state
    assert internal.amp_state is dispatch.amp_state
    assert internal.dist_state is dispatch.dist_state
    assert internal.tensor_hooks is tensor._autograd
    assert internal.OPS is OPS and internal.get_op is get_op
    assert internal.make_tensor is tensor.make_tensor


def test_make_tensor_sets_the_autograd_state():
    a = fw.to_tensor([1.0, 2.0]).numpy()
    node = object()
    t = internal.make_tensor(a, node, stop_gradient=False)
    assert type(t) is fw.Tensor and t._data is a and t._node is node
    assert t.stop_gradient is False
    leaf = internal.make_tensor(a)
    assert leaf.stop_gradient is True and leaf._node is None

    class Sub(fw.Tensor):
        pass

    s = internal.make_tensor(a, cls=Sub)
    assert type(s) is Sub and s.numpy().tolist() == [1.0, 2.0]


def test_replace_data_swaps_the_array_and_bumps_the_version():
    t = fw.to_tensor([1.0, 2.0])
    old = t._data
    v = internal.version_of(t)
    new = np.zeros((3,), np.float32)
    internal.replace_data(t, new)
    assert t._data is new and t.shape == [3]
    assert internal.version_of(t) > v
    old[0] = 5.0                                  # the old array no longer aliases t
    assert t.numpy().tolist() == [0.0, 0.0, 0.0]


def test_collectives_is_the_kernels_hook():
    from fw.core.kernels.cpu.collective import collectives

    assert internal.collectives is collectives
    assert callable(internal.collectives.register_backend)


def test_every_internal_name_is_documented_in_the_readme():
    text = (ROOT / "packages" / "fw-core" / "README.md").read_text(encoding="utf-8")
    section = text.split("## The internal ABI", 1)
    assert len(section) == 2, "fw-core's README has no section 'The internal ABI'"
    missing = [n for n in internal.__all__ if f"`{n}" not in section[1]]
    assert not missing, f"fw.core.internal names not described in the README: {missing}"


def test_the_import_contract_lists_every_private_module():
    # the import-linter contract names fw-core's private modules one by one; a new
    # private module must be added there, or other packages could import it unnoticed
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if "private modules" in c["name"])
    src = ROOT / "packages" / "fw-core" / "src"
    private = set()
    for f in (src / "fw" / "core").rglob("_*.py"):
        mod = ".".join(f.relative_to(src).with_suffix("").parts)
        if f.name != "__init__.py" and "testing" not in mod:
            private.add(mod)
    assert private == set(contract["forbidden_modules"]), (
        f"not in the contract: {sorted(private - set(contract['forbidden_modules']))}; "
        f"no longer a module: {sorted(set(contract['forbidden_modules']) - private)}")


def test_no_package_calls_the_tensor_private_replace_data():
    # Tensor._replace_data is fw-core's own; every other package calls
    # internal.replace_data (the named ABI above)
    import ast

    bad = []
    for src in sorted((ROOT / "packages").glob("*/src")):
        if src.parent.name == "fw-core":
            continue
        for path in sorted(src.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr == "_replace_data":
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "use fw.core.internal.replace_data: " + ", ".join(bad)
