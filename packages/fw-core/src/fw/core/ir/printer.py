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
an identifier (other than the reserved ``argN``/``pN``/``cN``) not used before;
State updates (``program.updates``) print in block 0 after its operations, one
``update %pN = %V`` line each (the param/const argument, then the value written
into it after every run), before ``return``.

Any other input is ``%argI`` (I its position in the block's arguments) followed
by ``input "name"`` when it has a name; parameters and constants are
``%pN``/``%cN`` followed by ``param "name"``/``const "name"``. Every attribute
of the op is printed, in the op table's order. An absent optional operand prints as ``none``.
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
# names the printer gives to unnamed inputs, parameters and constants: an input
# label of this form is printed as ``%argI ... input "label"`` so names never clash
_RESERVED = re.compile(r"^(arg|p|c)[0-9]+$")


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
    def __init__(self, lenient=False, op_lines=None):
        self.names: dict = {}
        self.used: set = set()
        self.counter = 0
        self.lenient = lenient
        self.op_lines = op_lines

    def name(self, v) -> str:
        n = self.names.get(v)
        if n is None:
            if self.lenient:  # the verifier prints broken programs to point at their lines
                return "%<undefined>"
            raise ValueError(f"value {v!r} is used before it is defined (or comes from another "
                             f"program)")
        return n

    def attr(self, v) -> str:
        try:
            return format_attr(v)
        except TypeError:
            if self.lenient:
                return f"<{type(v).__name__}>"
            raise

    def result(self, v) -> str:
        n = f"%{self.counter}"
        self.counter += 1
        self.names[v] = n
        return n

    def named(self, v, n) -> str:
        self.names[v] = n
        self.used.add(n)
        return n


def print_program(prog, *, lenient=False, op_lines=None) -> str:
    """The text form of `prog`.

    Args:
        prog: the Program.
        lenient: print even a broken program (a value used before its definition
            prints as ``%<undefined>``, an attribute with no text form as ``<type>``);
            the verifier uses it to quote the offending lines.
        op_lines: if a dict, filled with ``operation -> line number`` (1-based).
    Returns:
        the text, ending with a newline.
    """
    namer = _Namer(lenient, op_lines)
    out = ["program {"]
    _print_block(prog.block, 0, namer, out, "  ", [0], top=True)
    out.append("}")
    return "\n".join(out) + "\n"


def _print_block(block, bid, namer, out, ind, counter, top=False):
    args = []
    p = c = 0
    for i, a in enumerate(block.args):
        if top and a.role == "input":
            lab = a.label
            if lab is not None and _IDENT.match(lab) and not _RESERVED.match(lab) and \
                    f"%{lab}" not in namer.used:
                args.append(f"{namer.named(a, '%' + lab)}: {a.type}")
            else:
                n = namer.named(a, f"%arg{i}")
                args.append(f"{n}: {a.type}" + ("" if lab is None else
                                                f" input {json.dumps(lab)}"))
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
        if namer.op_lines is not None:
            namer.op_lines[op] = len(out) + 1
        if op.results:
            line += ", ".join(namer.result(r) for r in op.results) + " = "
        line += f"{op.name}({operands})"
        if op.attrs:
            keys = list(op.opdef.attrs) + [k for k in op.attrs if k not in op.opdef.attrs]
            line += " {" + ", ".join(f"{k}={namer.attr(op.attrs[k])}" for k in keys
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
    if top and block.program is not None:
        updates = getattr(block.program, "updates", None)
        if updates:
            targets = {a.label: a for a in block.args if a.role in ("param", "const")}
            for label, v in updates:
                a = targets.get(label)
                if a is None:
                    if not namer.lenient:
                        raise ValueError(f"state update of {label!r}, which is not a "
                                         f"param/const of the program")
                    tname = f"<{label}>"
                else:
                    tname = namer.name(a)
                out.append(f"{inner}update {tname} = {namer.name(v)}")
    term = "return" if top else "yield"
    outs = ", ".join(namer.name(v) for v in block.outputs)
    out.append(f"{inner}{term}{' ' + outs if outs else ''}")
    out.append(f"{ind}}}")
