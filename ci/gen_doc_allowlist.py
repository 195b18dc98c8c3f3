"""The inventory of fw's public API and its documentation state; writes the
allowlist of names that are not documented yet (``docs/undocumented.txt``).

The public API is derived, not listed by hand: ``fw``'s own subpackages (every
module of the ``fw`` namespace but the internal ``fw.core``), then, recursively, the
submodules a public module names in its ``__all__``. A module's public names are its
``__all__`` plus the functions and classes its namespace defines in its own package
(``fw.utils.LogWriter`` lives in ``fw.utils.log_writer``); a module without
``__all__`` offers the public names of its namespace that fw defines. The public
methods and properties of each public class (``fw.Tensor.matmul``,
``fw.nn.Layer.parameters``) are public names too.

One object reachable under several names (``fw.matmul`` is ``fw.linalg.matmul`` and
``fw.Tensor.matmul``) is one entry, under its canonical name: the one whose module and
qualified name match where the object says it was defined, else the shortest.

A name is documented when its docstring has a summary and the docs contract's
sections (``docs/guide/writing_docs.md``): ``Args:`` when it takes named arguments,
``Returns:`` for a function or method, and ``Examples:`` always.

Usage::

    python ci/gen_doc_allowlist.py            # rewrite docs/undocumented.txt, print counts
    python ci/gen_doc_allowlist.py --check    # exit 1 when the file is not current
    python ci/gen_doc_allowlist.py --missing fw.nn   # list what each name lacks

tests/test_doctests.py loads this file for the same inventory: new public names
without docs fail there, while allowlisted names that became documented only print a
message (parallel branches merge without conflicts; the integrator regenerates).
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import functools
import importlib
import inspect
import pathlib
import pkgutil
import re
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
ALLOWLIST = ROOT / "docs" / "undocumented.txt"

# fw-core's implementation: its public surface is re-exported by fw and the modules
# above; fw.core.internal is the API for fw's own packages, not for users
INTERNAL_TOP = {"core"}
# a Layer subclass documents its computation in the class docstring (as Paddle does):
# these methods need no docstring of their own, except on the base class that defines them
PROTOCOL_METHODS = {"forward", "extra_repr"}
PROTOCOL_OWNERS = {"fw.nn.Layer"}

_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Return|Yields|Examples|Example)"
                      r"\s*:\s*$", re.M)


@dataclasses.dataclass
class Entry:
    """One public object: its canonical name, the module it is grouped under, every
    name that reaches it, and what kind of thing it is."""

    name: str
    module: str
    obj: object
    kind: str  # "function", "class", "method", "property", "module"
    owner: type | None = None
    aliases: list[str] = dataclasses.field(default_factory=list)

    @property
    def doc(self) -> str:
        if self.kind == "module":
            return self.obj.__doc__ or ""
        if self.kind == "property":
            return self.obj.__doc__ or ""
        if self.kind == "class":
            return self.obj.__dict__.get("__doc__") or ""
        doc = getattr(self.obj, "__doc__", None)
        if not doc and self.kind == "method":
            doc = inspect.getdoc(self.obj)  # an override documented on the base class
        return doc or ""


def _public(name: str) -> bool:
    return not name.startswith("_")


def _from_fw(obj) -> bool:
    mod = getattr(obj, "__module__", None) or ""
    return mod == "fw" or mod.startswith("fw.")


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:  # a package of the workspace not installed: not part of this API
        return None


def public_modules() -> list[types.ModuleType]:
    """Every public module, breadth first from ``fw``, sorted by name."""
    import fw

    seen: dict[str, types.ModuleType] = {"fw": fw}
    queue = []
    for info in pkgutil.iter_modules(fw.__path__):
        if _public(info.name) and info.name not in INTERNAL_TOP:
            m = _import(f"fw.{info.name}")
            if isinstance(m, types.ModuleType):
                queue.append(m)
    while queue:
        m = queue.pop(0)
        if m.__name__ in seen or not all(_public(p) for p in m.__name__.split(".")):
            continue
        if m.__name__.split(".")[1] in INTERNAL_TOP:
            continue
        seen[m.__name__] = m
        for n in getattr(m, "__all__", ()):
            sub = getattr(m, n, None)
            if isinstance(sub, types.ModuleType) and sub.__name__.startswith("fw."):
                queue.append(sub)
    return [seen[k] for k in sorted(seen)]


def _module_names(m: types.ModuleType) -> list[str]:
    """The public names of module `m` (see the module docstring)."""
    names = set(getattr(m, "__all__", ()))
    own = m.__name__ + "."
    for n in dir(m):
        if not _public(n) or n in names:
            continue
        obj = getattr(m, n, None)
        if not (inspect.isroutine(obj) or inspect.isclass(obj)) or not _from_fw(obj):
            continue
        mod = obj.__module__
        if hasattr(m, "__all__"):
            if mod == m.__name__ or mod.startswith(own):
                names.add(n)
        else:
            names.add(n)
    # names a module resolves lazily through its __getattr__, from its own table:
    # fw's (fw.grad, fw.save, fw.Model, ...) and fw.utils' (LogWriter, from fw-nn)
    for table in ("_TOP_LEVEL", "_PROVIDED"):
        names.update(n for n in getattr(m, table, {}) if _public(n))
    return sorted(names)


def _kind(obj) -> str | None:
    if isinstance(obj, types.ModuleType):
        return None
    if inspect.isclass(obj):
        return "class" if _from_fw(obj) else None
    if inspect.isroutine(obj) or isinstance(obj, functools.partial):
        return "function" if _from_fw(obj) or inspect.isbuiltin(obj) else None
    return None


def _class_members(cls: type):
    """(name, raw attribute, defining class) for the public methods and properties of
    a fw class, inherited ones included (they dedupe to their defining class)."""
    seen = set()
    for klass in cls.__mro__:
        if not _from_fw(klass):
            continue
        for n, raw in vars(klass).items():
            if not _public(n) or n in seen:
                continue
            seen.add(n)
            if isinstance(raw, property):
                yield n, raw, klass
            elif isinstance(raw, (staticmethod, classmethod)):
                yield n, raw.__func__, klass
            elif inspect.isroutine(raw) and not inspect.isclass(raw):
                yield n, raw, klass


def _home(obj) -> str:
    """The public package an object belongs to: ``fw.nn`` for fw.nn.functional.conv's
    conv2d, ``fw`` for what fw-core defines (fw.core.*, fw itself)."""
    parts = (getattr(obj, "__module__", None) or "fw").split(".")
    if len(parts) < 2 or parts[1] in INTERNAL_TOP:
        return "fw"
    return ".".join(parts[:2])


def _score(name: str, split: int, obj) -> tuple:
    """Sort key of a candidate name (lower is better); `split` = parts of its module.
    Prefers the name whose tail is the object's qualified name, inside the object's own
    package, at the shortest module path (fw.nn.CrossEntropyLoss, not
    fw.nn.layer.loss.CrossEntropyLoss; fw.nn.functional.conv2d, not fw.conv2d)."""
    parts = name.split(".")
    module, rest = ".".join(parts[:split]), ".".join(parts[split:])
    target = obj.fget if isinstance(obj, property) and obj.fget is not None else obj
    qual = getattr(target, "__qualname__", None)
    home = _home(target)
    inside = module == home or module.startswith(home + ".")
    return (rest != qual, not inside, split, len(name), name)


@functools.lru_cache(maxsize=1)
def inventory() -> tuple[Entry, ...]:
    """Every public object once, sorted by canonical name."""
    cands: dict[int, list] = {}
    objs: dict[int, tuple] = {}

    def add(name, split, obj, kind, owner=None):
        key = id(obj)
        objs.setdefault(key, (obj, kind, owner))
        cands.setdefault(key, []).append((name, split))

    classes = []
    for m in public_modules():
        split = m.__name__.count(".") + 1
        add(m.__name__, split, m, "module")
        for n in _module_names(m):
            try:
                obj = getattr(m, n)
            except AttributeError:
                continue  # a name __all__ promises but a missing extra does not provide
            kind = _kind(obj)
            if kind is None:
                continue
            add(f"{m.__name__}.{n}", split, obj, kind)
            if kind == "class":
                classes.append((f"{m.__name__}.{n}", split, obj))
    for cname, split, cls in classes:
        for n, raw, owner in _class_members(cls):
            kind = "property" if isinstance(raw, property) else "method"
            add(f"{cname}.{n}", split, raw, kind, owner)
    out = []
    for key, names in cands.items():
        obj, kind, owner = objs[key]
        names = sorted(set(names), key=lambda c: _score(c[0], c[1], obj))
        best, split = names[0]
        out.append(Entry(best, ".".join(best.split(".")[:split]), obj, kind, owner,
                         [n for n, _ in names]))
    return tuple(sorted(out, key=lambda e: e.name))


def _named_params(obj, kind: str) -> bool | None:
    """Whether `obj` takes named arguments (None: its signature is not known)."""
    if kind == "class" and issubclass(obj, (enum.Enum, BaseException)):
        return False
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if kind == "method" and params and params[0].name in ("self", "cls"):
        params = params[1:]
    named = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.KEYWORD_ONLY)
    return any(p.kind in named for p in params)


def missing(entry: Entry) -> list[str]:
    """What `entry`'s docstring lacks under the docs contract (empty: documented)."""
    if entry.kind == "module":
        return []  # a module's docstring is its overview: not checked here
    if (entry.kind == "method" and entry.name.rsplit(".", 1)[1] in PROTOCOL_METHODS
            and f"{entry.module}.{entry.owner.__name__}" not in PROTOCOL_OWNERS):
        return []
    doc = entry.doc.strip()
    if not doc:
        return ["docstring"]
    sections = {s.lower() for s in _SECTION.findall(doc)}
    lacks = []
    if entry.kind in ("function", "method", "class") and _named_params(entry.obj, entry.kind) \
            and not sections & {"args", "arguments", "parameters"}:
        lacks.append("Args")
    if entry.kind in ("function", "method") and not sections & {"returns", "return", "yields"}:
        lacks.append("Returns")
    if not sections & {"examples", "example"} or (">>>" in doc and not contract_example(doc)):
        lacks.append("Examples")
    return lacks


_FIRST_EXAMPLE = re.compile(r"^\s*>>> (.*)$", re.M)


def contract_example(doc: str) -> bool:
    """Whether the doctest block of `doc` starts with ``>>> import fw`` (the contract:
    an example runs as written in a fresh interpreter)."""
    m = _FIRST_EXAMPLE.search(doc)
    return bool(m) and re.match(r"import fw(\s|$|\.|,| as )", m.group(1)) is not None


def undocumented() -> dict[str, list[str]]:
    """module -> sorted canonical names that are not documented yet."""
    out: dict[str, list[str]] = {}
    for e in inventory():
        if missing(e):
            out.setdefault(e.module, []).append(e.name)
    return out


def read_allowlist(path: pathlib.Path = ALLOWLIST) -> set[str]:
    if not path.exists():
        return set()
    return {line.split("#", 1)[0].strip() for line in path.read_text().splitlines()
            if line.split("#", 1)[0].strip()}


def render(groups: dict[str, list[str]]) -> str:
    total = sum(len(v) for v in groups.values())
    lines = [
        "# Public names of fw whose docstrings lack a section of the docs contract",
        "# (Args / Returns / Examples; docs/guide/writing_docs.md). Generated by",
        "# ci/gen_doc_allowlist.py -- regenerate it, do not edit by hand. A public name",
        "# not listed here must be documented (tests/test_doctests.py).",
        f"# {total} names",
    ]
    for mod in sorted(groups):
        lines.append("")
        lines.append(f"# {mod} ({len(groups[mod])})")
        lines.extend(groups[mod])
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if docs/undocumented.txt is not current")
    ap.add_argument("--missing", metavar="PREFIX",
                    help="print each undocumented name under PREFIX with what it lacks")
    args = ap.parse_args(argv)
    if args.missing is not None:
        for e in inventory():
            if e.name == args.missing or e.name.startswith(args.missing + "."):
                lacks = missing(e)
                if lacks:
                    print(f"{e.name}: {', '.join(lacks)}")
        return 0
    groups = undocumented()
    per_module: dict[str, int] = {}
    for e in inventory():
        if e.kind != "module":
            per_module[e.module] = per_module.get(e.module, 0) + 1
    width = max(map(len, per_module))
    for mod in sorted(per_module):
        print(f"{mod:<{width}}  {len(groups.get(mod, ())):5d} of {per_module[mod]:5d} undocumented")
    total = sum(len(v) for v in groups.values())
    print(f"{'total':<{width}}  {total:5d} of {sum(per_module.values()):5d} undocumented")
    text = render(groups)
    if args.check:
        current = ALLOWLIST.exists() and ALLOWLIST.read_text() == text
        if not current:
            print(f"{ALLOWLIST.relative_to(ROOT)} is not current: "
                  "run python ci/gen_doc_allowlist.py", file=sys.stderr)
        return 0 if current else 1
    ALLOWLIST.parent.mkdir(parents=True, exist_ok=True)
    ALLOWLIST.write_text(text)
    print(f"wrote {ALLOWLIST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
