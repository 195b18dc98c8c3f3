"""Report the import cycles inside each fw package (and fail if there are any
beyond an allowed count).

A cycle is a strongly connected component of the module import graph, counting
every import statement (module level or inside a function: a lazy import that
only dodges a cycle at import time is still a two-way dependency). Edges into a
package's own ``__init__`` from its submodules are left out: ``__init__`` files
re-export their submodules, so "submodule imports a sibling through the
package" is not a design cycle. The graph is built by grimp (import-linter's
graph builder) over the merged ``fw`` namespace of ci/lint_imports.py.

Usage: python ci/import_cycles.py [--max N] [--verbose]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lint_imports import merged_namespace  # noqa: E402

PACKAGES = ("fw.core", "fw.autograd", "fw.nn", "fw.optimizer", "fw.io", "fw.amp", "fw.jit",
            "fw.static", "fw.inference", "fw.hapi", "fw.metric", "fw.onnx")


def _owner(module: str) -> str | None:
    for p in PACKAGES:
        if module == p or module.startswith(p + "."):
            return p
    return None


def _is_ancestor(a: str, b: str) -> bool:
    return b.startswith(a + ".")


def cycles(graph) -> list[list[str]]:
    """Strongly connected components (size > 1) of the intra-package graph."""
    mods = sorted(m for m in graph.modules if _owner(m))
    succ = {m: [] for m in mods}
    for m in mods:
        for t in graph.find_modules_directly_imported_by(m):
            if t in succ and t != m and _owner(t) == _owner(m) and not _is_ancestor(t, m):
                succ[m].append(t)
    # Tarjan's algorithm, iterative (the graph has hundreds of modules)
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in mods:
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(succ[nxt])))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=None, help="fail when there are more cycles")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    import grimp

    with tempfile.TemporaryDirectory(prefix="fw-cycles-") as tmp:
        merged_namespace(pathlib.Path(tmp))
        sys.path.insert(0, tmp)
        # editable installs put meta-path finders ahead of sys.path; drop them so
        # `fw` resolves to the merged copy (as ci/lint_imports.py does)
        sys.meta_path[:] = [f for f in sys.meta_path if not any(
            w in type(f).__name__ for w in ("Inplace", "Editable", "Redirect"))]
        for m in [m for m in sys.modules if m == "fw" or m.startswith("fw.")]:
            del sys.modules[m]
        graph = grimp.build_graph("fw", cache_dir=None)
    found = cycles(graph)
    for comp in found:
        print(f"cycle ({len(comp)} modules, {_owner(comp[0])}): " +
              (", ".join(comp) if args.verbose or len(comp) <= 6 else
               ", ".join(comp[:6]) + ", …"))
    print(f"import cycles: {len(found)} ({sum(map(len, found))} modules in them)")
    if args.max is not None and len(found) > args.max:
        print(f"more than the allowed {args.max}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
