"""Write docs/ops.md, the op list, from the op table (fw.core.ops.OPS).

    python ci/gen_op_docs.py          # rewrite docs/ops.md
    python ci/gen_op_docs.py --check  # exit 1 if docs/ops.md is out of date (CI)
"""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "ops.md"


def _first_line(doc: str) -> str:
    for line in (doc or "").strip().splitlines():
        line = line.strip()
        if line:
            return line.replace("|", "\\|")
    return ""


def _attr(v) -> str:
    r = repr(v)
    return (r if len(r) <= 24 else r[:21] + "...").replace("|", "\\|")


def render() -> str:
    import fw  # noqa: F401  (loads every installed package's ops and kernels)
    from fw.core.ops import OPS

    families: dict = {}
    for op in OPS.values():
        families.setdefault(op.family or "other", []).append(op)
    n_diff = sum(op.differentiable for op in OPS.values())
    lines = [
        "# The op table",
        "",
        "Generated from `fw.core.ops.OPS` by `ci/gen_op_docs.py` (CI checks it is current).",
        f"{len(OPS)} ops in {len(families)} families; {n_diff} differentiable (each has a VJP "
        "rule in fw-autograd). Inputs: `x*` variadic, `b?` optional. Kernels: `ref` is the "
        "NumPy reference every op has; `cpu` a faster cpu kernel (native where it pays).",
        "",
    ]
    for fam in sorted(families):
        ops = sorted(families[fam], key=lambda o: o.name)
        lines += [f"## {fam} ({len(ops)})", "",
                  "| op | inputs | attributes | outputs | grad | kernels | what |",
                  "|---|---|---|---|---|---|---|"]
        for op in ops:
            attrs = ", ".join(f"{k}={_attr(v)}" for k, v in op.attrs.items())
            kernels = "ref" + ("".join(f", {k}" for k in sorted(op.kernels)) if op.kernels else "")
            lines.append(f"| `{op.name}` | {', '.join(op.inputs)} | {attrs} | "
                         f"{', '.join(op.outputs)} | {'yes' if op.differentiable else ''} | "
                         f"{kernels} | {_first_line(op.doc)} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run python ci/gen_op_docs.py")
            return 1
        print(f"{OUT.relative_to(ROOT)} is current")
        return 0
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
