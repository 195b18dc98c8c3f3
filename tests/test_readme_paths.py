"""The READMEs stay true: every module, file or directory path they name exists,
every `fw.…` dotted name they name resolves to a module (and, where it goes on
past the module, to a name defined in it), and the root README links only
inside the repository (a user's clone has no ``../shared``).

Paths are looked up where a reader would look: beside the README, from the
repository root, and inside the package the README belongs to (so fw-core's
README may say ``ops/control.py`` for ``src/fw/core/ops/control.py``).
``<family>`` placeholders match any name.
"""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
READMES = sorted(p for p in ROOT.glob("**/README.md")
                 if not any(part.startswith(".") or part in ("build", "node_modules")
                            for part in p.relative_to(ROOT).parts))
SRC_ROOTS = sorted(ROOT.glob("packages/*/src"))

_SOURCE_EXT = (".py", ".cpp", ".hpp", ".h", ".cc", ".toml", ".json", ".txt", ".sh", ".md",
               ".cmake")
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_DOTTED = re.compile(r"^fw(\.[A-Za-z_][A-Za-z0-9_]*)+$")
# top-level folders of the repository and of a package's source tree: a token with
# a slash that starts with one of these (or names a file by its ending) is a path
_DIRS = {"fw", "packages", "tests", "examples", "asv_bench", "ci", "docs", "src", "csrc",
         "ops", "api", "kernels", "rules", "ir", "passes", "testing", "records", "layer",
         "functional", "optimizer", "io", "jit", "static", "inference", "core", "autograd"}
# dotted strings that are not module paths
_NOT_MODULES = {
    "fw.backends": "the entry-point group of device plugins",
    "fw.model": "the format tag in a model file's metadata",
    "fw.format": "a metadata key of fw.save checkpoints",
    "fw.structure": "a metadata key of fw.save checkpoints",
    "fw.checksum": "a metadata key of fw.save checkpoints",
    "fw.x": "a placeholder in fw.compat's docstring",
}


def _package_dir(readme: pathlib.Path) -> pathlib.Path | None:
    rel = readme.relative_to(ROOT).parts
    if len(rel) >= 2 and rel[0] == "packages":
        return ROOT / "packages" / rel[1]
    return None


def _path_like(token: str) -> bool:
    if " " in token or token.startswith(("-", "http", "$")) or "=" in token:
        return False
    if token.startswith("fw.") or token in ("fw/",) or "__pycache__" in token:
        return False  # generated folders are not in a clone
    if "/" in token:
        if not re.fullmatch(r"[\w.<>*/-]+", token) or token.startswith("/"):
            return False
        return token.endswith(("/",) + _SOURCE_EXT) or token.split("/")[0] in _DIRS or \
            bool(re.search(r"\.\w+/\.\w+$", token))
    return token.endswith(_SOURCE_EXT) and bool(re.fullmatch(r"[\w.<>*-]+", token))


def _glob(base: pathlib.Path, token: str) -> list:
    pattern = re.sub(r"<[^>]+>", "*", token.rstrip("/"))
    if pattern in ("", "."):
        return [base]
    try:
        return list(base.glob(pattern))
    except (ValueError, NotImplementedError):
        return []


def _exists(readme: pathlib.Path, token: str) -> bool:
    if re.fullmatch(r"[\w<>*-]+(\.\w+)(/\.\w+)+", token):  # `matmul.hpp/.cpp`
        stem, *exts = token.split("/")
        base = stem.rsplit(".", 1)[0]
        return _exists(readme, stem) and all(_exists(readme, base + e) for e in exts)
    bases = [readme.parent, readme.parent.parent, ROOT]
    pkg = _package_dir(readme)
    if pkg is not None:
        bases += [pkg, pkg / "src"]
        bases += [d for d in (pkg / "src").glob("fw/*") if d.is_dir()]
    bases += SRC_ROOTS
    if any(_glob(b, token) for b in bases):
        return True
    # a path relative to some directory inside the package ("ops/control.py",
    # "rules/_registry.py", "_api.py")
    scope = pkg if pkg is not None else readme.parent
    pattern = re.sub(r"<[^>]+>", "*", token.rstrip("/"))
    return any(True for _ in scope.rglob(pattern)) if "/" not in pattern else \
        any(True for _ in scope.rglob(pattern.split("/")[0])
            if any(_glob(_, "/".join(pattern.split("/")[1:]))))


def _dotted_resolves(name: str) -> bool:
    """Whether `name` is an importable module, or a module followed by attributes
    that exist (``fw.core.dispatch.invoke``, ``fw.nn.functional.pad``)."""
    import importlib

    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                return False
        return True
    return False


def _tokens(readme: pathlib.Path):
    text = readme.read_text()
    in_fence = False
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for m in _CODE.finditer(line):
            yield lineno, m.group(1).strip()


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_readme_names_exists(readme):
    missing = []
    for lineno, token in _tokens(readme):
        token = re.sub(r"\(.*\)$", "", token)  # `fw.core.dispatch.invoke(op, args)`
        if _path_like(token) and not _exists(readme, token):
            missing.append(f"{readme.relative_to(ROOT)}:{lineno}: path `{token}`")
        elif _DOTTED.match(token) and token not in _NOT_MODULES and \
                not _dotted_resolves(token):
            missing.append(f"{readme.relative_to(ROOT)}:{lineno}: name `{token}`")
    assert not missing, "READMEs name things that do not exist:\n" + "\n".join(missing)


def test_every_fw_name_a_docstring_names_exists():
    # module docstrings and comments point readers at other modules the same way
    bad = []
    for f in sorted(ROOT.glob("packages/*/src/fw/**/*.py")):
        for lineno, line in enumerate(f.read_text().splitlines(), 1):
            for m in re.finditer(r"`+(fw(?:\.[A-Za-z_]\w*)+)`+", line):
                if m.group(1) not in _NOT_MODULES and not _dotted_resolves(m.group(1)):
                    bad.append(f"{f.relative_to(ROOT)}:{lineno}: `{m.group(1)}`")
    assert not bad, "source comments name things that do not exist:\n" + "\n".join(bad)


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(readme):
    bad = []
    for m in _LINK.finditer(readme.read_text()):
        target = m.group(1).split("#")[0]
        if not target or re.match(r"[a-z]+:", target):
            continue
        if not (readme.parent / target).exists():
            bad.append(target)
    assert not bad, f"{readme.relative_to(ROOT)} links to missing files: {bad}"


def test_root_readme_links_only_inside_the_repository():
    text = (ROOT / "README.md").read_text()
    outside = []
    for m in _LINK.finditer(text):
        target = m.group(1).split("#")[0]
        if re.match(r"[a-z]+:", target):
            outside.append(target)
        elif target and not (ROOT / target).resolve().is_relative_to(ROOT):
            outside.append(target)
    assert not outside, f"README.md links outside the repository: {outside}"


def test_the_checker_finds_a_missing_path(tmp_path):
    # the checks above can fail: a made-up module path is reported, a real one not
    readme = ROOT / "packages" / "fw-core" / "README.md"
    assert _exists(readme, "ops/elementwise.py")
    assert _exists(readme, "fw/core/ops/<family>.py")
    assert not _exists(readme, "ops/no_such_family.py")
    assert not _exists(readme, "rules/no_such_registry.py")
    assert _dotted_resolves("fw.core.dispatch.invoke")
    assert not _dotted_resolves("fw.core.dispatch.no_such_name")
    assert not _dotted_resolves("fw.no_such_package.thing")
