"""The text form of a Program. `fw.core.ir.parser.parse` reads it back.

::

    program {
      block 0 (%x: f32[-1,784], %p0: f32[784,256] param "fc1.weight") {
        %0 = matmul(%x, %p0) {transpose_x=false, transpose_y=false} : f32[-1,256]
        %1 = relu(%0) : f32[-1,256]
        %2 = cond(%b) : f32[-1,256] {
          block 1 () {
            yield %1
          }
          block 2 () {
            %3 = neg(%1) : f32[-1,256]
            yield %3
          }
        }
        return %2
      }
    }

Results are numbered in print order; block-0 inputs keep their name when it is
an identifier; parameters and constants are ``%pN``/``%cN`` followed by
``param "name"``/``const "name"``. Every attribute of the op is printed, in
the op table's order. An absent optional operand prints as ``none``.
Attribute values: ``none``, ``true``/``false``, ints, floats (``repr``, so they
read back exactly; ``inf``/``-inf``/``nan``), ``complex(re, im)``, strings as
JSON strings, dtypes by short name (``f32``), lists as ``[a, b]``.
"""

from __future__ import annotations

import json
import math
import re

from fw.core.dtypes import DType

__all__ = ["print_program", "format_attr"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def format_attr(v) -> str:
    if v is None:
        return "none"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, DType):
        return v.short
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        return r if ("." in r or "e" in r or "n" in r) else r + ".0"
    if isinstance(v, complex):
        return f"complex({format_attr(v.real)}, {format_attr(v.imag)})"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    if hasattr(v, "item") and getattr(v, "shape", None) == ():
        return format_attr(v.item())
    raise TypeError(f"attribute value {v!r} of type {type(v).__name__} has no text form; "
                    f"attributes must be None, bool, int, float, complex, str, dtype or lists")


class _Namer:
    def __init__(self):
        self.names: dict = {}
        self.used: set = set()
        self.counter = 0

    def name(self, v) -> str:
        n = self.names.get(v)
        if n is None:
            raise ValueError(f"value {v!r} is used before it is defined (or comes from another "
                             f"program)")
        return n

    def result(self, v) -> str:
        n = f"%{self.counter}"
        self.counter += 1
        self.names[v] = n
        return n

    def named(self, v, n) -> str:
        self.names[v] = n
        self.used.add(n)
        return n


def print_program(prog) -> str:
    namer = _Namer()
    out = ["program {"]
    _print_block(prog.block, 0, namer, out, "  ", [0], top=True)
    out.append("}")
    return "\n".join(out) + "\n"


def _print_block(block, bid, namer, out, ind, counter, top=False):
    args = []
    p = c = 0
    for i, a in enumerate(block.args):
        if top and a.role == "input":
            n = f"%{a.label}" if a.label and _IDENT.match(a.label) and \
                f"%{a.label}" not in namer.used and not a.label.isdigit() else f"%arg{i}"
            if n in namer.used:
                n = f"%arg{i}"
            namer.named(a, n)
            args.append(f"{n}: {a.type}")
        elif top and a.role == "param":
            n = namer.named(a, f"%p{p}")
            p += 1
            args.append(f"{n}: {a.type} param {json.dumps(a.label)}")
        elif top and a.role == "const":
            n = namer.named(a, f"%c{c}")
            c += 1
            args.append(f"{n}: {a.type} const {json.dumps(a.label)}")
        else:
            n = namer.result(a)
            args.append(f"{n}: {a.type}")
    out.append(f"{ind}block {bid} ({', '.join(args)}) {{")
    inner = ind + "  "
    for op in block.ops:
        operands = ", ".join("none" if v is None else namer.name(v) for v in op.operands)
        line = inner
        if op.results:
            line += ", ".join(namer.result(r) for r in op.results) + " = "
        line += f"{op.name}({operands})"
        if op.attrs:
            keys = list(op.opdef.attrs) + [k for k in op.attrs if k not in op.opdef.attrs]
            line += " {" + ", ".join(f"{k}={format_attr(op.attrs[k])}" for k in keys
                                     if k in op.attrs) + "}"
        if op.results:
            line += " : " + ", ".join(str(r.type) for r in op.results)
        if op.blocks:
            out.append(line + " {")
            for b in op.blocks:
                counter[0] += 1
                _print_block(b, counter[0], namer, out, inner + "  ", counter)
            out.append(inner + "}")
        else:
            out.append(line)
    term = "return" if top else "yield"
    outs = ", ".join(namer.name(v) for v in block.outputs)
    out.append(f"{inner}{term}{' ' + outs if outs else ''}")
    out.append(f"{ind}}}")
