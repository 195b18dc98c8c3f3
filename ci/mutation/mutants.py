"""The mutation operators and the list of mutants of a source file.

The operators are cosmic-ray's (parso-based: a mutant is the file's exact text
with one token changed, comments and layout kept), chosen for the bugs
the issue planted by hand: arithmetic swaps, comparison swaps and boundaries,
numbers +-1, a dropped unary minus or ``not``, and/or, True/False,
break/continue, a negated condition. cosmic-ray has no "dropped term"
operator; `DropTerm` below adds one in its operator interface.

A mutant is identified across runs by what it changes, not by its place: the
file, the stripped text of the line before and after, and the operator (line
numbers move as the file is edited). That key is what ci/mutation/equivalent.toml
uses.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import parso
import parso.python.tree as pt
from cosmic_ray.ast import is_number
from cosmic_ray.operators import (
    binary_operator_replacement as _bin,
)
from cosmic_ray.operators import (
    boolean_replacer as _bool,
)
from cosmic_ray.operators import (
    break_continue as _brk,
)
from cosmic_ray.operators import (
    comparison_operator_replacement as _cmp,
)
from cosmic_ray.operators import (
    unary_operator_replacement as _un,
)
from cosmic_ray.operators.operator import Example, Operator

from .areas import ROOT


class DropTerm(Operator):
    """Drop one operand (with its operator) of a sum or a product: ``a + b - c`` ->
    ``a - c``; ``a * b`` -> ``a`` (a forgotten term or scale factor)."""

    def mutation_positions(self, node):
        if isinstance(node, pt.PythonNode) and node.type in ("arith_expr", "term"):
            for i in range(1, (len(node.children) + 1) // 2):
                op = node.children[2 * i - 1]
                yield (op.start_pos, node.children[2 * i].end_pos)

    def mutate(self, node, index):
        i = index + 1
        node.children = node.children[: 2 * i - 1] + node.children[2 * i + 1:]
        return node

    @classmethod
    def examples(cls):
        return (Example("x = a + b - c", "x = a - c"), Example("x = a * b", "x = a"),
                Example("x = a + b - c", "x = a + b", occurrence=1))


class NumberOffByOne(Operator):
    """One mutant per number literal: 0 <-> 1, another integer n -> n - 1 (an
    off-by-one), a float x -> x + 1. cosmic-ray's NumberReplacer makes two (+1 and
    -1) per number; numbers are a third of all places in fw's op tables, and one
    realistic slip per number keeps a full pass affordable."""

    def mutation_positions(self, node):
        if is_number(node) and not node.value.lower().endswith("j"):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        value = eval(node.value)  # a number literal (parso checked) -> its value
        if isinstance(value, int):
            new = 1 if value == 0 else 0 if value == 1 else value - 1
        else:
            new = value + 1
        return pt.Number(repr(new), node.start_pos, prefix=node.prefix)

    @classmethod
    def examples(cls):
        return (Example("x = 0", "x = 1"), Example("x = 1", "x = 0"), Example("x = 8", "x = 7"),
                Example("x = 0.5", "x = 1.5"))


def _cls(module, name):
    return getattr(module, name)


# name (as reported) -> operator class; names are cosmic-ray's own
OPERATORS: dict[str, type[Operator]] = {
    **{f"ReplaceBinaryOperator_{a}_{b}": _cls(_bin, f"ReplaceBinaryOperator_{a}_{b}")
       for a, b in (("Add", "Sub"), ("Sub", "Add"), ("Mul", "Div"), ("Div", "Mul"),
                    ("Pow", "Mul"))},
    **{f"ReplaceComparisonOperator_{a}_{b}": _cls(_cmp, f"ReplaceComparisonOperator_{a}_{b}")
       for a, b in (("Eq", "NotEq"), ("NotEq", "Eq"), ("Lt", "LtE"), ("LtE", "Lt"),
                    ("Gt", "GtE"), ("GtE", "Gt"), ("Is", "IsNot"), ("IsNot", "Is"))},
    "ReplaceUnaryOperator_Delete_USub": _cls(_un, "ReplaceUnaryOperator_Delete_USub"),
    "ReplaceUnaryOperator_Delete_Not": _cls(_un, "ReplaceUnaryOperator_Delete_Not"),
    "AddNot": _bool.AddNot,
    "ReplaceTrueWithFalse": _bool.ReplaceTrueWithFalse,
    "ReplaceFalseWithTrue": _bool.ReplaceFalseWithTrue,
    "ReplaceAndWithOr": _bool.ReplaceAndWithOr,
    "ReplaceOrWithAnd": _bool.ReplaceOrWithAnd,
    "ReplaceBreakWithContinue": _brk.ReplaceBreakWithContinue,
    "ReplaceContinueWithBreak": _brk.ReplaceContinueWithBreak,
    "NumberOffByOne": NumberOffByOne,
    "DropTerm": DropTerm,
}

# calls whose arguments are messages, not behaviour
_MESSAGE_CALLS = {"warn", "debug", "info", "warning", "error", "exception", "critical", "log",
                  "print"}
NO_MUTATE = "pragma: no mutate"


@dataclass(frozen=True)
class Mutant:
    file: str  # repository-relative
    line: int  # 1-based, where the operator applies
    operator: str
    occurrence: int  # cosmic-ray's index among this operator's places in the file
    scope: str = ""  # the enclosing class/function ("Adam._update"), "" at module level

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Applied:
    """A mutant's text: the whole mutated file and its identity."""

    mutant: Mutant
    code: str
    old_line: str  # stripped
    new_line: str  # stripped
    diff: str

    @property
    def key(self) -> str:
        return mutant_key(self.mutant.file, self.mutant.scope, self.old_line,
                          self.mutant.operator, self.new_line)


def mutant_key(file: str, scope: str, old_line: str, operator: str, new_line: str) -> str:
    """What identifies a mutant across edits: identical lines in one function (two
    ``break``) share it."""
    text = "\0".join((file, scope, old_line.strip(), operator, new_line.strip()))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _skipped(node) -> bool:
    """Places not worth a mutant: messages and checks, not behaviour."""
    n = node
    while n is not None:
        t = n.type
        if t in ("raise_stmt", "assert_stmt", "annassign", "tfpdef"):
            return True
        if t == "funcdef" or t == "classdef":
            return False
        if isinstance(n, pt.Param) and n.annotation is not None and _within(node, n.annotation):
            return True
        if t == "power" or t == "atom_expr":  # a call: f(...) / obj.f(...)
            names = [c for c in n.children if c.type == "trailer"]
            if names and len(names) >= 2 and names[-1].children[0] == "(":
                callee = names[-2].children[-1] if names[-2].children[0] == "." else None
                if callee is not None and getattr(callee, "value", "") in _MESSAGE_CALLS:
                    return True
            first = n.children[0]
            if (first.type == "name" and first.value in _MESSAGE_CALLS and len(n.children) == 2):
                return True
        if t == "expr_stmt" and n.children[0].type == "name" and n.children[0].value == "__all__":
            return True
        if t == "if_stmt" and "TYPE_CHECKING" in n.children[1].get_code():
            return True
        n = n.parent
    return False


def _scope(node) -> str:
    names = []
    n = node.parent
    while n is not None:
        if n.type in ("funcdef", "classdef"):
            names.append(n.name.value)
        n = n.parent
    return ".".join(reversed(names))


def _within(node, outer) -> bool:
    return outer.start_pos <= node.start_pos and node.end_pos <= outer.end_pos


@lru_cache(maxsize=64)
def _source(path: Path, mtime: float) -> str:
    return path.read_text(encoding="utf-8")


def read_source(file: str, root: Path = ROOT) -> str:
    p = root / file
    return _source(p, p.stat().st_mtime)


def enumerate_mutants(file: str, root: Path = ROOT, source: str | None = None) -> list[Mutant]:
    """Every mutant of `file` (repository-relative), in file order."""
    code = read_source(file, root) if source is None else source
    lines = code.splitlines()
    tree = parso.parse(code)
    ops = {name: cls() for name, cls in OPERATORS.items()}
    counts = dict.fromkeys(ops, 0)
    out: list[Mutant] = []

    def walk(node):
        for name, op in ops.items():
            for start, _end in op.mutation_positions(node):
                occurrence = counts[name]
                counts[name] += 1
                line = start[0]
                if NO_MUTATE in lines[line - 1] or _skipped(node):
                    continue
                out.append(Mutant(file, line, name, occurrence, _scope(node)))
        if hasattr(node, "children"):
            for child in node.children:
                walk(child)

    walk(tree)
    out.sort(key=lambda m: (m.line, m.operator, m.occurrence))
    return out


def apply(mutant: Mutant, root: Path = ROOT, source: str | None = None) -> Applied:
    """The mutated text of `mutant`'s file (read from `root` unless `source` given)."""
    from cosmic_ray.mutating import mutate_code

    original = read_source(mutant.file, root) if source is None else source
    code = mutate_code(original, OPERATORS[mutant.operator](), mutant.occurrence)
    if code is None or code == original:
        raise ValueError(f"{mutant.operator} #{mutant.occurrence} does not apply to {mutant.file}")
    old_lines, new_lines = original.splitlines(), code.splitlines()
    old_line = old_lines[mutant.line - 1].strip()
    new_line = new_lines[mutant.line - 1].strip() if mutant.line <= len(new_lines) else ""
    diff = "".join(difflib.unified_diff(
        original.splitlines(keepends=True), code.splitlines(keepends=True),
        fromfile=f"a/{mutant.file}", tofile=f"b/{mutant.file}", n=1))
    return Applied(mutant, code, old_line, new_line, diff)
