"""Extract Paddle 3.3's PyTorch-style argument aliases into a committed JSON table.

Paddle marks the functions that accept ``dim=`` for ``axis=``, ``input=`` for ``x=`` and so on
with decorators from ``paddle/utils/decorator_utils.py`` (``ParamAliasDecorator``,
``param_one_alias``, ``param_two_alias``, ``param_two_alias_one_default`` and a few hand-written
ones such as ``sum_decorator``).  This script reads Paddle's *source* with ``ast`` (it never
imports or runs it) and writes the facts -- public name, alias, canonical argument -- to
``packages/fw-core/src/fw/core/paddle_aliases.json``; ``fw.core.aliases`` applies the table at
import.  Only the alias facts are taken; no Paddle code is copied.

Usage (Paddle is needed only to regenerate the table, never in CI)::

    /work/tmp/paddle-venv/bin/python ci/gen_paddle_aliases.py [PADDLE_PACKAGE_DIR]
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "packages" / "fw-core" / "src" / "fw" / "core" / "paddle_aliases.json"

# The hand-written decorators of decorator_utils.py whose alias part is fixed in their body
# (read from Paddle 3.3.1's decorator_utils.py; the positional-call reshuffling some of them do
# for PyTorch-order calls is not an alias and is not recorded).
_FIXED = {
    "softmax_param_alias": {"input": "x", "dim": "axis"},
    "sum_decorator": {"input": "x", "dim": "axis"},
    "index_select_decorator": {"input": "x", "dim": "axis"},
    "lp_pool_function_decorator": {"input": "x"},
    "tensor_split_decorator": {
        "input": "x",
        "dim": "axis",
        "indices_or_sections": "num_or_indices",
        "indices": "num_or_indices",
        "sections": "num_or_indices",
    },
}


def _pairs(node: ast.expr) -> list[str]:
    value = ast.literal_eval(node)
    return [str(v) for v in value]


def _decorator_aliases(dec: ast.expr) -> dict[str, str] | None:
    """{alias: canonical} declared by one decorator, or None when it declares none."""
    if isinstance(dec, ast.Name) and dec.id in _FIXED:
        return dict(_FIXED[dec.id])
    if not isinstance(dec, ast.Call):
        return None
    fn = dec.func
    name = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", None)
    if name in _FIXED:
        return dict(_FIXED[name])
    if name in ("ParamAliasDecorator", "SetDefaultParaAliasDecorator"):
        mapping = ast.literal_eval(dec.args[0])
        return {str(a): str(k) for k, aliases in mapping.items() for a in aliases}
    if name == "param_one_alias":
        canon, alias = _pairs(dec.args[0])
        return {alias: canon}
    if name in ("param_two_alias", "param_two_alias_one_default"):
        out = {}
        for arg in dec.args[:2]:
            canon, alias = _pairs(arg)
            out[alias] = canon
        return out
    return None


def _public_prefix(rel: Path) -> str | None:
    parts = rel.with_suffix("").parts
    if parts[0] == "tensor":
        return "paddle"
    if parts[:2] == ("nn", "functional"):
        return "paddle.nn.functional"
    if parts[:2] == ("nn", "layer"):
        return "paddle.nn"
    if parts == ("fft",):
        return "paddle.fft"
    if parts[0] == "sparse":
        return "paddle.sparse"
    if parts == ("framework", "dtype") or parts == ("base", "dygraph", "base"):
        return "paddle"
    return None


def extract(paddle_dir: Path) -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for path in sorted(paddle_dir.rglob("*.py")):
        rel = path.relative_to(paddle_dir)
        prefix = _public_prefix(rel)
        if prefix is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            scopes: list[tuple[str, ast.AST]] = []
            if isinstance(node, ast.FunctionDef):
                scopes.append((node.name, node))
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        member = "" if item.name == "__init__" else "." + item.name
                        scopes.append((node.name + member, item))
            for qualname, fn in scopes:
                aliases: dict[str, str] = {}
                for dec in fn.decorator_list:
                    found = _decorator_aliases(dec)
                    if found:
                        aliases.update(found)
                if aliases:
                    key = f"{prefix}.{qualname}"
                    if qualname.startswith("_") or "._" in qualname:
                        continue
                    table.setdefault(key, {}).update(aliases)
    return dict(sorted(table.items()))


# PyTorch-style names tried against the functions Paddle 3.3 defines in C++ (their signatures
# live in paddle/_paddle_docs.py, their aliases in the C++ argument parser, which is not in the
# wheel's Python source): the alias counts only when real Paddle accepts it and returns the
# same value as the canonical name.
_CANDIDATES = {"x": "input", "y": "other", "axis": "dim"}


def probe_cpp_aliases(paddle_dir: Path) -> dict[str, dict[str, str]]:
    import inspect

    import numpy as np
    import paddle

    tree = ast.parse((paddle_dir / "_paddle_docs.py").read_text(encoding="utf-8"))
    names = [
        n.args[0].value
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "add_doc_and_signature"
    ]
    rng = np.random.default_rng(0)
    found: dict[str, dict[str, str]] = {}
    for name in names:
        fn = getattr(paddle, name, None)
        if fn is None:
            continue
        params = list(inspect.signature(fn).parameters)
        floats = rng.uniform(0.1, 0.9, (3, 3)).astype("float32")
        for data in (floats, np.array([[True, False]] * 2)):
            kwargs = {"x": paddle.to_tensor(data)}
            if "y" in params:
                kwargs["y"] = paddle.to_tensor(data)
            if "axis" in params:
                kwargs["axis"] = 1
            try:
                want = fn(**kwargs)
            except Exception:
                continue
            for canon, alias in _CANDIDATES.items():
                if canon not in kwargs:
                    continue
                moved = dict(kwargs)
                moved[alias] = moved.pop(canon)
                try:
                    got = fn(**moved)
                except Exception:
                    continue
                if np.array_equal(np.asarray(got), np.asarray(want)):
                    found.setdefault(f"paddle.{name}", {})[alias] = canon
            break
    return found


def main() -> None:
    if len(sys.argv) > 1:
        paddle_dir = Path(sys.argv[1])
    else:
        import importlib.util

        spec = importlib.util.find_spec("paddle")
        if spec is None or spec.origin is None:
            raise SystemExit("gen_paddle_aliases: paddle not importable; pass its package dir")
        paddle_dir = Path(spec.origin).parent
    table = extract(paddle_dir)
    for key, aliases in probe_cpp_aliases(paddle_dir).items():
        table.setdefault(key, {}).update(aliases)
    table = dict(sorted(table.items()))
    version = "unknown"
    ver = paddle_dir / "version" / "__init__.py"
    if ver.exists():
        for line in ver.read_text().splitlines():
            if line.startswith("full_version"):
                version = line.split("=", 1)[1].strip().strip("'\"")
    doc = {
        "_source": f"paddle {version}: decorators of paddle/utils/decorator_utils.py "
        "(extracted by ci/gen_paddle_aliases.py)",
        "aliases": table,
    }
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{len(table)} functions, {sum(map(len, table.values()))} aliases -> {OUT}")


if __name__ == "__main__":
    main()
