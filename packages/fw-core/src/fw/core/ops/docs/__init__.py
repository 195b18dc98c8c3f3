"""The reference docs of the functions generated from the op table.

One place per fact:

- the one-line summary (and a short semantics paragraph) is the op's ``doc`` field in
  ``fw/core/ops/<family>.py`` — the text ``docs/ops.md`` lists;
- the argument names, their order and defaults are the op's declared inputs and attributes:
  this module renders them, so a doc cannot name an argument the function does not take or
  state a stale default (``packages/fw-core/tests/test_op_docs.py`` checks that every
  documented argument exists and every argument is documented);
- what each argument means, what the function returns and a runnable example live here, in
  ``docs/<family>.py`` (the family has the same name as its op module), as
  ``DOCS = {op name: Doc(...)}``.

The generated function ``fw.<name>``, its in-place variant ``fw.<name>_`` and the Tensor
method are one function object (as in Paddle), so they share the text; the first input's
entry says that it is the tensor itself when called as a method. Hand-written wrappers
(``fw/core/api/<family>.py``) keep their docstrings in their source.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

__all__ = ["Doc", "DOCS", "load", "render", "render_inplace", "arg_type", "problems"]


@dataclass(frozen=True)
class Doc:
    """The reference text of one op's public function.

    ``args`` maps each input and attribute name to its meaning, or to ``(type, meaning)``
    where the type cannot be read from the declaration (inputs are ``Tensor``; an attribute's
    type is that of its default when the default is a bool, int, float or str). ``returns``
    is ``"type: meaning"``; ``examples`` is a doctest block that starts with ``>>> import fw``.
    ``details`` is an optional paragraph after the op's summary (dtype rules, broadcasting,
    differences from NumPy/PyTorch).
    """

    args: dict
    returns: str
    examples: str
    details: str = ""
    inplace: str = ""  # the example of the in-place variant ``name_``, where there is one


DOCS: dict[str, Doc] = {}  # op name -> Doc, after load()
_loaded = [False]


def load() -> dict[str, Doc]:
    """Import every ``docs/<family>.py`` module and merge their ``DOCS`` tables."""
    if not _loaded[0]:
        for m in pkgutil.iter_modules(__path__):
            if m.name.startswith("_"):
                continue
            mod = importlib.import_module(f"{__name__}.{m.name}")
            for k, v in mod.DOCS.items():
                if k in DOCS:
                    raise ValueError(f"op docs: {k!r} documented twice ({m.name})")
                DOCS[k] = v
        _loaded[0] = True
    return DOCS


_SIMPLE = {bool: "bool", int: "int", float: "float", str: "str"}


def arg_type(op, name: str, spec) -> str | None:
    """The type shown for argument `name` of `op` (None when it cannot be told)."""
    if isinstance(spec, tuple):
        return spec[0]
    if name in op.input_names:
        i = op.input_names.index(name)
        return "list[Tensor]|tuple[Tensor]" if i == op.variadic else "Tensor"
    return _SIMPLE.get(type(op.attrs.get(name)))


def _default(v) -> str:
    if isinstance(v, tuple):  # the op table stores lists as tuples; Paddle's docs show lists
        v = list(v)
    name = getattr(v, "name", None)
    if name is not None and type(v).__name__ == "DType":
        return f"fw.{name}"
    return repr(v)


_WIDTH = 92


def _para(text: str, indent: int = 0, hang: int = 0) -> str:
    """`text` wrapped to the docstring width: each blank-line separated paragraph filled
    greedily, continuation lines indented `hang` more than the first. (A plain word loop:
    textwrap's regex chunking made rendering every op's docs cost ~20 ms of import.)"""
    pad = " " * indent
    cont = pad + " " * hang
    out = []
    for p in text.strip().split("\n\n"):
        words = p.split()
        if not words:
            continue
        lines = []
        cur = [words[0]]
        n = indent + len(words[0])
        for w in words[1:]:
            if n + 1 + len(w) > _WIDTH:
                lines.append(" ".join(cur))
                cur = [w]
                n = len(cont) + len(w)
            else:
                cur.append(w)
                n += 1 + len(w)
        lines.append(" ".join(cur))
        out.append(pad + ("\n" + cont).join(lines))
    return "\n\n".join(out)


def _indent(text: str, n: int = 4) -> str:
    pad = " " * n
    return "\n".join(pad + line if line.strip() else "" for line in text.strip("\n").splitlines())


def params(op) -> list[tuple[str, bool, object]]:
    """(name, has_default, default) of the generated function's parameters, `name` excluded."""
    out = []
    for i, n in enumerate(op.input_names):
        out.append((n, i in op.optional, None))
    for k, v in op.attrs.items():
        out.append((k, True, v))
    return out


def render(op, doc: Doc, fname: str, method: str | None) -> str:
    """The docstring of the generated function `fname` of `op` (also ``Tensor.<method>``)."""
    parts = [_para(op.doc.strip() or f"The ``{op.name}`` op.")]
    if doc.details:
        parts.append(_para(doc.details))
    lines = ["Args:"]
    first = True
    for n, has_default, default in params(op):
        spec = doc.args.get(n, "")
        meaning = spec[1] if isinstance(spec, tuple) else spec
        ty = arg_type(op, n, spec) or "object"
        if has_default and not ty.endswith(", optional"):
            ty += ", optional"
        text = meaning.strip()
        if first and method and n in op.input_names:
            text += f" As the method ``Tensor.{method}``, {n} is the tensor itself."
        first = False
        if has_default and "Default:" not in text:
            text += f" Default: {_default(default)}."
        lines.append(_para(f"{n} ({ty}): {text}", 4, 4))
    lines.append(_para("name (str, optional): Paddle's op name; unused in eager mode. "
                       "Default: None.", 4, 4))
    parts.append("\n".join(lines))
    parts.append("Returns:\n" + _para(doc.returns, 4, 4))
    parts.append("Examples:\n" + _indent(doc.examples))
    return "\n\n".join(parts) + "\n"


def render_inplace(op, doc: Doc, fname: str, base: str) -> str:
    """The docstring of the in-place variant ``fw.<base>_`` / ``Tensor.<base>_``: the same
    arguments; the result is written into x. Its example is ``Doc.inplace`` (none if empty)."""
    parts = [_para(f"In-place version of ``fw.{base}``: the result is written into x, which "
                   f"keeps its shape and dtype (the result must broadcast to x's shape).")]
    full = render(op, doc, base, fname)
    args = full[full.index("Args:"):full.index("\n\nReturns:")]
    parts.append(args)
    parts.append("Returns:\n" + _para("Tensor: x itself, holding the result.", 4, 4))
    if doc.inplace:
        parts.append("Examples:\n" + _indent(doc.inplace))
    return "\n\n".join(parts) + "\n"


def problems(op, doc: Doc) -> list[str]:
    """What is wrong with `doc` as the docs of `op` (empty when nothing): arguments documented
    that the function does not take, arguments not documented, types that cannot be told,
    and examples that do not start with ``>>> import fw``."""
    out = []
    names = [n for n, _, _ in params(op)]
    for n in doc.args:
        if n not in names:
            out.append(f"{op.name}: documents {n!r}, which is not an argument of it {names}")
    for n in names:
        spec = doc.args.get(n)
        if spec is None:
            out.append(f"{op.name}: argument {n!r} is not documented")
        elif arg_type(op, n, spec) is None:
            out.append(f"{op.name}: the type of {n!r} cannot be told from its default "
                       f"{op.attrs.get(n)!r}: give (type, meaning)")
    for field in ("examples", "inplace"):
        text = getattr(doc, field).strip()
        if text and not text.startswith(">>> import fw"):
            out.append(f"{op.name}: {field} must start with '>>> import fw'")
    if not doc.examples.strip():
        out.append(f"{op.name}: no example")
    if doc.inplace and not op.inplace:
        out.append(f"{op.name}: an in-place example for an op without an in-place variant")
    return out
