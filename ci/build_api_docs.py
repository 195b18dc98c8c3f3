"""Build fw's API reference from its docstrings with pdoc (``hatch run docs``).

Usage::

    python ci/build_api_docs.py                   # every public module -> build/api/
    python ci/build_api_docs.py fw.optimizer fw.linalg -o /tmp/api   # just these

The modules and the names each page shows are ci/gen_doc_allowlist.py's inventory
(the package tree's ``__all__``s), the same the doctests and the completeness check
use: pdoc alone would show only what a module defines itself, so ``fw``'s page would
lack ``fw.Tensor`` and the names fw resolves lazily (``fw.grad``, ``fw.Model``). For the
build (a process of its own) each module's ``__all__`` is set to that list.

Why pdoc: it is small and pure Python (with Jinja2, MarkupSafe and Pygments), renders
Google-style ``Args:``/``Returns:`` sections, needs no configuration tree like Sphinx's,
and writes static HTML with a search index.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import types

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gen_doc_allowlist as inv  # noqa: E402

ROOT = inv.ROOT
DEFAULT_OUT = ROOT / "build" / "api"


def _expose(modules: list[types.ModuleType]) -> None:
    """Set each module's ``__all__`` to its public names and child modules."""
    names = {m.__name__: m for m in modules}
    for m in modules:
        own = [n for n in inv._module_names(m) if hasattr(m, n)]
        for n in own:
            if n not in vars(m):  # resolved lazily by the module's __getattr__
                setattr(m, n, getattr(m, n))
        children = [c.rsplit(".", 1)[1] for c in names
                    if "." in c and c.rsplit(".", 1)[0] == m.__name__]
        m.__all__ = sorted(set(own) | set(children))


def build(selected: list[str] | None = None, out: pathlib.Path = DEFAULT_OUT,
          show_source: bool = True) -> list[pathlib.Path]:
    """Render the public modules named in `selected` (all when None) to HTML files under
    `out`; returns the pages written (index.html and search.js included)."""
    import pdoc.doc
    import pdoc.render

    modules = inv.public_modules()
    _expose(modules)
    if selected:
        unknown = sorted(set(selected) - {m.__name__ for m in modules})
        if unknown:
            raise SystemExit(f"build_api_docs: not public fw modules: {', '.join(unknown)}")
        modules = [m for m in modules if m.__name__ in selected]
    pdoc.render.configure(docformat="google", show_source=show_source,
                          footer_text="fw API reference (generated from the docstrings)")
    docs = {m.__name__: pdoc.doc.Module(m) for m in modules}
    written = []
    for name, mod in docs.items():
        page = out / f"{name.replace('.', '/')}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(pdoc.render.html_module(mod, docs), encoding="utf-8")
        written.append(page)
    for fname, text in (("index.html", pdoc.render.html_index(docs)),
                        ("search.js", pdoc.render.search_index(docs))):
        if text:
            (out / fname).write_text(text, encoding="utf-8")
            written.append(out / fname)
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help="public modules to render (default: all)")
    ap.add_argument("-o", "--output", type=pathlib.Path, default=DEFAULT_OUT,
                    help="output folder (default: build/api)")
    ap.add_argument("--no-source", action="store_true", help="omit the source listings")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    pages = build(args.modules or None, args.output, show_source=not args.no_source)
    print(f"wrote {len(pages)} files to {args.output} in {time.perf_counter() - t0:.1f} s; "
          f"open {args.output / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
