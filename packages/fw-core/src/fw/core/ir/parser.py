"""Reading the text form of a Program (the grammar is in `fw.core.ir.printer`).

`parse(text)` is the inverse of `print_program`: ``print_program(parse(t)) == t``
for any text the printer wrote. It only reads: op names are looked up in the op
table, attribute values are literals (no expression is evaluated, no op is run,
no `canon` or `infer` is called), and every malformed input raises `ParseError`
with the line, the column and what was expected. Parsed programs hold no
tensors (`captured` is empty): the values of parameters and constants come from
the model file (`fw.core.ir.load`) or from the caller.

Grammar (whitespace and newlines separate tokens and are otherwise ignored)::

    program  := "program" "{" block "}"
    block    := "block" INT "(" [arg ("," arg)*] ")" "{" (op | update)* term "}"
    update   := "update" VALUE "=" VALUE       # block 0 only: param/const <- value
    arg      := VALUE ":" type [("param" | "const" | "input") STRING]   # roles: block 0 only
    op       := [VALUE ("," VALUE)* "="] NAME "(" [operand ("," operand)*] ")"
                ["{" [NAME "=" attr ("," NAME "=" attr)*] "}"] [":" type ("," type)*]
                ["{" block+ "}"]
    operand  := VALUE | "none"
    term     := ("return" | "yield") [VALUE ("," VALUE)*]     # return in block 0 only
    type     := DTYPE "[" [INT ("," INT)*] "]"                 # f32[-1,784], bool[]
    attr     := "none" | "true" | "false" | INT | FLOAT | "inf" | "-inf" | "nan"
              | "complex" "(" FLOAT "," FLOAT ")" | STRING | DTYPE | "[" [attr ("," attr)*] "]"
"""

from __future__ import annotations

import json
import re

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ir.core import Block, Operation, Program, Value
from fw.core.ir.types import TensorType

__all__ = ["parse", "ParseError"]

# deeper nesting than this (of lists in attributes; of blocks, unless parse is
# given a max_block_depth) is refused, so a hostile text cannot exhaust the Python
# stack
_MAX_DEPTH = 64


class ParseError(InvalidArgumentError):
    """The text is not a valid program. `line` and `column` are 1-based. A text
    beyond a bound given to `parse` has ``limit`` set (``"max_ops"`` or
    ``"max_block_depth"``), ``what`` saying what was counted and ``count`` the
    count reached; otherwise ``limit`` is None."""

    def __init__(self, message: str, line: int = 0, column: int = 0):
        super().__init__(message)
        self.line = line
        self.column = column
        self.limit = None
        self.what = ""
        self.count = 0


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<value>%[A-Za-z0-9_]+)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>-?(?:[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|[0-9]+))
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<punct>[{}()\[\],:=-])
  | (?P<bad>.)
""", re.VERBOSE | re.DOTALL)

_DTYPES = {d.short: d for d in _dt.ALL_DTYPES}
_INT = re.compile(r"^-?[0-9]+$")


class _Tok:
    __slots__ = ("kind", "text", "pos")

    def __init__(self, kind, text, pos):
        self.kind = kind
        self.text = text
        self.pos = pos


def _tokenize(text: str, where) -> list:
    toks = []
    append = toks.append
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "ws":
            continue
        if kind == "bad":
            ch = m.group()
            raise where(m.start(), "unterminated string" if ch == '"' else
                        f"unexpected character {ch!r}")
        append(_Tok(kind, m.group(), m.start()))
    append(_Tok("eof", "", len(text)))
    return toks


class _Parser:
    def __init__(self, text: str, max_ops=None, max_block_depth=None):
        self.text = text
        self.max_ops = max_ops
        self.max_block_depth = max_block_depth
        self.n_ops = 0
        self.block_depth = -1  # block 0 is depth 0
        self.toks = _tokenize(text, self.error_at)
        self.i = 0
        self.program = Program()
        self.scopes: list = []  # one dict name -> Value per open block
        self.defined: dict = {}  # name -> position of its definition (names are global)
        self.depth = 0

    # ---------------------------------------------------------------- errors
    def _line_col(self, pos):
        line = self.text.count("\n", 0, pos) + 1
        start = self.text.rfind("\n", 0, pos) + 1
        return line, pos - start + 1, start

    def error_at(self, pos, msg) -> ParseError:
        line, col, start = self._line_col(pos)
        end = self.text.find("\n", pos)
        src = self.text[start:end if end >= 0 else len(self.text)]
        if len(src) > 200:  # a huge one-line text: quote around the error only
            lo = max(0, col - 100)
            src, col_in = src[lo:lo + 200], col - lo
        else:
            col_in = col
        return ParseError(f"line {line}, column {col}: {msg}\n  {src}\n  {' ' * (col_in - 1)}^",
                          line, col)

    def error(self, msg, tok=None) -> ParseError:
        tok = tok or self.toks[self.i]
        return self.error_at(tok.pos, msg)

    @staticmethod
    def _show(tok) -> str:
        if tok.kind == "eof":
            return "the end of the text"
        t = tok.text if len(tok.text) <= 40 else tok.text[:37] + "..."
        return repr(t)

    # ---------------------------------------------------------------- tokens
    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def peek(self, k=1) -> _Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> _Tok:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def at(self, text, kind=None) -> bool:
        t = self.tok
        return t.text == text and (kind is None or t.kind == kind) and t.kind != "string"

    def expect(self, text, what) -> _Tok:
        t = self.tok
        if t.text != text or t.kind == "string":
            raise self.error(f"expected {text!r} {what}, got {self._show(t)}")
        return self.next()

    def expect_kind(self, kind, what) -> _Tok:
        t = self.tok
        if t.kind != kind:
            raise self.error(f"expected {what}, got {self._show(t)}")
        return self.next()

    def enter(self, what):
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.error(f"{what} nested more than {_MAX_DEPTH} levels deep")

    def over(self, limit, what, count, bound) -> ParseError:
        e = self.error(f"{what} ({count}) exceeds {limit}={bound}")
        e.limit, e.what, e.count = limit, what, count
        return e

    # ---------------------------------------------------------------- values
    def define(self, tok, value) -> None:
        name = tok.text
        if name in self.defined:
            line, col, _ = self._line_col(self.defined[name])
            raise self.error(f"value {name} is defined twice (first at line {line}, column "
                             f"{col}); every value is assigned once", tok)
        self.defined[name] = tok.pos
        self.scopes[-1][name] = value

    def lookup(self, tok) -> Value:
        name = tok.text
        for scope in reversed(self.scopes):
            v = scope.get(name)
            if v is not None:
                return v
        if name in self.defined:
            raise self.error(f"value {name} is not visible here: it is defined later or inside "
                             f"another block", tok)
        raise self.error(f"undefined value {name}", tok)

    # ---------------------------------------------------------------- grammar
    def parse_program(self) -> Program:
        self.expect("program", "at the start of the text")
        self.expect("{", "after 'program'")
        self.parse_block(self.program.block, top=True)
        self.expect("}", "to close the program")
        if self.tok.kind != "eof":
            raise self.error(f"expected the end of the text after the program, got "
                             f"{self._show(self.tok)}")
        _propagate_stop_gradient(self.program.block)
        return self.program

    def parse_block(self, block: Block, top=False) -> None:
        self.block_depth += 1
        if self.max_block_depth is not None:
            if self.block_depth > self.max_block_depth:
                raise self.over("max_block_depth", "the nesting depth of blocks",
                                self.block_depth, self.max_block_depth)
        elif self.block_depth > _MAX_DEPTH:
            raise self.error(f"blocks nested more than {_MAX_DEPTH} levels deep")
        self.expect("block", "to start a block")
        self.expect_kind("number", "the block number after 'block'")
        self.expect("(", "to open the block's arguments")
        self.scopes.append({})
        labels: dict = {}
        if not self.at(")"):
            while True:
                self.parse_arg(block, top, labels)
                if not self.at(","):
                    break
                self.next()
        self.expect(")", "to close the block's arguments")
        self.expect("{", "to open the block's body")
        term = "return" if top else "yield"
        while True:
            t = self.tok
            if t.kind == "name" and t.text in ("return", "yield"):
                if t.text != term:
                    raise self.error(f"expected {term!r} to end "
                                     f"{'block 0' if top else 'a nested block'}, got "
                                     f"{t.text!r}")
                self.next()
                block.outputs = self.parse_value_list()
                break
            if t.kind == "name" and t.text == "update" and self.peek().kind == "value":
                if not top:
                    raise self.error("state updates ('update %p = %v') are only allowed in "
                                     "block 0")
                self.parse_update()
                continue
            if t.kind in ("value", "name"):
                self.parse_op(block)
                continue
            raise self.error(f"expected an operation or {term!r}, got {self._show(t)}")
        self.expect("}", f"to close the block after {term!r}")
        self.scopes.pop()
        self.block_depth -= 1

    def parse_update(self) -> None:
        self.next()  # 'update'
        tt = self.expect_kind("value", "the updated parameter/constant (%pN or %cN)")
        target = self.lookup(tt)
        if target.owner is not self.program.block or target.role not in ("param", "const"):
            raise self.error(f"{tt.text} is not a param/const of block 0; only those can be "
                             f"updated", tt)
        if self.program.updates.get(target.label) is not None:
            raise self.error(f"{tt.text} ({json.dumps(target.label)}) is updated twice", tt)
        self.expect("=", f"after 'update {tt.text}'")
        value = self.lookup(self.expect_kind("value", "the new value (%name)"))
        self.program.updates.set(target.label, value)

    def parse_value_list(self) -> list:
        vals = []
        if self.tok.kind != "value":
            return vals
        while True:
            vals.append(self.lookup(self.expect_kind("value", "a value (%name)")))
            if not self.at(","):
                return vals
            self.next()

    def parse_arg(self, block, top, labels) -> None:
        name = self.expect_kind("value", "a block argument (%name: type)")
        self.expect(":", f"after the argument {name.text}")
        type_ = self.parse_type()
        role, label = ("input" if top else "arg"), None
        t = self.tok
        if t.kind == "name" and t.text in ("param", "const", "input"):
            if not top:
                raise self.error(f"only block 0 has {t.text} arguments")
            role = t.text
            self.next()
            label = self.parse_string(f"the {role}'s name")
            if role != "input":
                if label in labels:
                    raise self.error(f"{role} name {json.dumps(label)} is used twice in block "
                                     f"0 (also by {labels[label]})", t)
                labels[label] = name.text
        elif top:
            label = _input_label(name.text)
        v = block.add_arg(type_, role, label)
        self.define(name, v)

    def number(self, t):
        try:
            return int(t.text) if _INT.match(t.text) else float(t.text)
        except ValueError as e:  # e.g. more digits than Python converts
            raise self.error(f"bad number: {e}", t) from None

    def parse_string(self, what) -> str:
        t = self.expect_kind("string", what + " (a JSON string)")
        try:
            s = json.loads(t.text)
        except ValueError as e:
            raise self.error(f"bad string literal: {e}", t) from None
        return s

    def parse_type(self) -> TensorType:
        t = self.expect_kind("name", "a type such as f32[-1,4]")
        d = _DTYPES.get(t.text)
        if d is None:
            raise self.error(f"unknown dtype {t.text!r} (expected one of "
                             f"{', '.join(_DTYPES)})", t)
        self.expect("[", f"after the dtype {t.text!r}")
        dims = []
        if not self.at("]"):
            while True:
                dt = self.expect_kind("number", "a dimension (an integer, -1 when dynamic)")
                n = self.number(dt)
                if not isinstance(n, int) or n < -1:
                    raise self.error(f"a dimension must be an integer >= -1, got {dt.text}", dt)
                dims.append(n)
                if not self.at(","):
                    break
                self.next()
        self.expect("]", "to close the shape")
        return TensorType(dims, d)

    def parse_op(self, block) -> None:
        from fw.core.ops._registry import OPS

        result_toks = []
        if self.tok.kind == "value":
            while True:
                result_toks.append(self.expect_kind("value", "a result name (%name)"))
                if not self.at(","):
                    break
                self.next()
            self.expect("=", "after the result names")
        name_tok = self.expect_kind("name", "an op name")
        self.n_ops += 1
        if self.max_ops is not None and self.n_ops > self.max_ops:
            raise self.over("max_ops", "the number of operations", self.n_ops, self.max_ops)
        opdef = OPS.get(name_tok.text)
        if opdef is None:
            raise self.error(f"unknown op {name_tok.text!r} (not in the op table)", name_tok)
        self.expect("(", f"after the op name {name_tok.text!r}")
        operands = []
        if not self.at(")"):
            while True:
                t = self.tok
                if t.kind == "name" and t.text == "none":
                    self.next()
                    operands.append(None)
                elif t.kind == "value":
                    operands.append(self.lookup(self.next()))
                else:
                    raise self.error(f"expected an operand (%name or none), got {self._show(t)}")
                if not self.at(","):
                    break
                self.next()
        self.expect(")", f"to close the operands of {name_tok.text!r}")
        attrs = {}
        if self.at("{") and (self.peek().text == "}" or (
                self.peek().kind == "name" and self.peek(2).text == "=")):
            attrs = self.parse_attrs()
        types = []
        if self.at(":"):
            colon = self.next()
            if not result_toks:
                raise self.error("result types given for an operation without results", colon)
            while True:
                types.append(self.parse_type())
                if not self.at(","):
                    break
                self.next()
        if len(types) != len(result_toks):
            raise self.error(f"{name_tok.text!r} names {len(result_toks)} results but gives "
                             f"{len(types)} result types (expected ': type, ...' after the "
                             f"operation)")
        blocks = []
        if self.at("{"):
            self.next()
            while self.at("block"):
                b = Block(self.program)
                self.parse_block(b)
                blocks.append(b)
            if not blocks:
                raise self.error(f"expected 'block' inside the braces of {name_tok.text!r}")
            self.expect("}", f"to close the blocks of {name_tok.text!r}")
        op = Operation(opdef, operands, attrs, types, blocks)
        for b in blocks:
            b.parent = op
        block.append(op)
        for t, r in zip(result_toks, op.results):
            self.define(t, r)

    def parse_attrs(self) -> dict:
        self.expect("{", "to open the attributes")
        attrs = {}
        if not self.at("}"):
            while True:
                k = self.expect_kind("name", "an attribute name")
                if k.text in attrs:
                    raise self.error(f"attribute {k.text!r} is given twice", k)
                self.expect("=", f"after the attribute name {k.text!r}")
                attrs[k.text] = self.parse_attr()
                if not self.at(","):
                    break
                self.next()
        self.expect("}", "to close the attributes")
        return attrs

    def parse_attr(self):
        t = self.tok
        if t.kind == "number":
            return self.number(self.next())
        if t.kind == "string":
            return self.parse_string("a string attribute")
        if t.text == "-" and t.kind == "punct":
            self.next()
            u = self.tok
            if u.kind == "name" and u.text == "inf":
                self.next()
                return float("-inf")
            raise self.error(f"expected a number after '-', got {self._show(u)}")
        if t.kind == "name":
            w = t.text
            if w in _WORDS:
                self.next()
                return _WORDS[w]
            if w in _DTYPES:
                self.next()
                return _DTYPES[w]
            if w == "complex":
                self.next()
                self.expect("(", "after 'complex'")
                re_ = self.parse_real()
                self.expect(",", "between the real and imaginary parts")
                im = self.parse_real()
                self.expect(")", "to close 'complex('")
                return complex(re_, im)
            raise self.error(f"expected an attribute value, got the name {w!r} (values are "
                             f"none, true, false, numbers, complex(re, im), \"strings\", dtypes "
                             f"or [lists])")
        if t.text == "[" and t.kind == "punct":
            self.enter("lists")
            self.next()
            items = []
            if not self.at("]"):
                while True:
                    items.append(self.parse_attr())
                    if not self.at(","):
                        break
                    self.next()
            self.expect("]", "to close the list")
            self.depth -= 1
            return tuple(items)
        raise self.error(f"expected an attribute value, got {self._show(t)}")

    def parse_real(self) -> float:
        v = self.parse_attr()
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error("expected a real number inside complex(re, im)")
        return float(v)


_WORDS = {"none": None, "true": True, "false": False, "inf": float("inf"), "nan": float("nan")}
_ARG = re.compile(r"^%arg[0-9]+$")


def _input_label(name: str):
    # the printer writes %argI for inputs without a (printable) name
    return None if _ARG.match(name) else name[1:]


def _propagate_stop_gradient(block: Block) -> None:
    """Results need grad when an operand does and the op is differentiable (as
    the builder decides); control ops take it from what their blocks yield."""
    for op in block.ops:
        for b in op.blocks:
            _propagate_stop_gradient(b)
        if op.name == "cond" and len(op.blocks) == 2:
            for i, r in enumerate(op.results):
                ys = [b.outputs[i] for b in op.blocks if i < len(b.outputs)]
                r._sg = all(y._sg for y in ys)
        elif op.name == "while":
            for r, v in zip(op.results, op.operands):
                r._sg = v is None or v._sg
        else:
            sg = not any(v is not None and not v._sg for v in op.operands) or \
                not op.opdef.differentiable
            for r in op.results:
                r._sg = sg


def parse(text: str, *, max_ops=None, max_block_depth=None) -> Program:
    """Read a program from its text form (what `print_program` / ``str(program)``
    writes).

    Args:
        text: the program text.
        max_ops: refuse a text with more operations (nested blocks included);
            counted while parsing, so a huge text stops early. None: no bound.
        max_block_depth: refuse blocks nested deeper (block 0 is depth 0); None:
            64, the fixed bound attribute lists are held to too, so a text cannot
            exhaust the Python stack.
    Returns:
        a new `Program`; its ``captured`` dict is empty (fill it with the
        parameter/constant tensors by label, or use `fw.core.ir.load`).
    Raises:
        ParseError: malformed text, with line, column and what was expected.

    >>> import fw
    >>> from fw.core.ir import TensorType, trace, parse
    >>> p = trace(lambda x: fw.tanh(x), [TensorType([-1, 4], "float32")])
    >>> str(parse(str(p))) == str(p)
    True
    """
    if not isinstance(text, str):
        raise ParseError(f"parse expects the program text as a str, got {type(text).__name__}")
    p = _Parser(text, max_ops, max_block_depth)
    try:
        return p.parse_program()
    except RecursionError:  # pragma: no cover - depth is bounded above; belt and braces
        raise ParseError("the program text is nested too deeply") from None
