"""Paddle 3.3's PyTorch-style argument aliases (``dim=`` for ``axis=``, ``input=`` for ``x=``, …).

Paddle 3.3 accepts these names on ~220 public functions, Tensor methods, ``nn.functional``
functions and layers. Which name is accepted where is a fact of Paddle's source, extracted by
``ci/gen_paddle_aliases.py`` into ``paddle_aliases.json`` beside this module; this module applies
that one table at import (``apply``), so fw accepts an alias exactly where Paddle does.

The wrapper sits at the public-function layer (not in dispatch): a call without keyword
arguments pays one ``if`` and one extra call; renaming happens only when an alias is passed.
Passing both an alias and its canonical name is a TypeError naming the function (Paddle 3.3
raises ValueError or silently lets the canonical one win, depending on the decorator; a
TypeError is what Python raises for a duplicate argument).
"""

from __future__ import annotations

import functools
import inspect
import json
import keyword
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["TABLE", "table_for", "with_aliases", "apply"]

_TABLE_FILE = Path(__file__).with_name("paddle_aliases.json")


def _load() -> dict[str, dict[str, str]]:
    with open(_TABLE_FILE, encoding="utf-8") as f:
        return json.load(f)["aliases"]


TABLE: dict[str, dict[str, str]] = _load()
"""{Paddle public name: {alias: canonical argument}} as extracted from Paddle 3.3.1."""


def table_for(prefix: str) -> dict[str, dict[str, str]]:
    """The entries of ``TABLE`` directly under ``prefix`` ("paddle", "paddle.nn.functional", …),
    keyed by the rest of the name ("sum", "Conv2D.forward", …)."""
    p = prefix + "."
    out = {}
    for key, aliases in TABLE.items():
        if key.startswith(p):
            rest = key[len(p):]
            # "paddle.fft.fft" is not a top-level "paddle" entry: sub-namespaces are their own
            # prefix, but class members ("Conv2D.forward") stay under their module
            if "." in rest and not rest.split(".", 1)[0][:1].isupper():
                continue
            out[rest] = aliases
    return out


def with_aliases(fn: Callable, aliases: dict[str, str], name: str) -> Callable:
    """Wrap ``fn`` so that each ``alias=`` keyword reaches it as its canonical argument.

    Args:
        fn (callable): the function (or method) to wrap.
        aliases (dict[str, str]): ``{alias: canonical argument name}``.
        name (str): the public name used in error messages, e.g. ``"fw.sum"``.

    Returns:
        callable, with ``fn``'s name, docstring and signature.

    Examples:
        .. code-block:: python

            >>> from fw.core.aliases import with_aliases
            >>> def f(x, axis=None):
            ...     return (x, axis)
            >>> g = with_aliases(f, {"input": "x", "dim": "axis"}, "f")
            >>> g(input=1, dim=0)
            (1, 0)
    """
    if getattr(fn, "_fw_aliases", None) is not None:
        aliases = {**fn._fw_aliases, **aliases}
        fn = fn.__wrapped__
    wrapper = _generated(fn, aliases, name)
    if wrapper is None:
        wrapper = _generic(fn, aliases, name)
    functools.update_wrapper(wrapper, fn)
    wrapper._fw_aliases = dict(aliases)
    try:
        wrapper.__signature__ = inspect.signature(fn)
    except (TypeError, ValueError):
        pass
    return wrapper


class _Missing:
    """Marks an argument the caller did not pass (None is a real value for many)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


_NA = _Missing()


def _generated(fn: Callable, aliases: dict[str, str], name: str) -> Callable | None:
    """A wrapper with fn's own parameters plus the aliases as keyword-only ones, so that a call
    binds its arguments once, with no ``*args``/``**kwargs`` repacking: about 60 ns of
    overhead against ~130-280 ns for the generic wrapper (measured on the 2-core build machine).
    None when fn's signature does not allow it (``*args``, ``**kwargs``, positional-only
    parameters, or an alias that is also a parameter): the generic wrapper is used then."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    P = inspect.Parameter
    if any(p.kind not in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY) for p in params):
        return None
    names = [p.name for p in params]
    if any(a in names for a in aliases) or any(c not in names for c in aliases.values()):
        return None
    if any(not n.isidentifier() or keyword.iskeyword(n) or n.startswith("_w_") or
           n == "TypeError" for n in (*names, *aliases)):
        return None  # e.g. uniform_(from=…): a keyword can only come through **kwargs
    env: dict[str, Any] = {"_w_fn": fn, "_w_NA": _NA}
    canons = set(aliases.values())
    head, kwonly, body, call, checks = [], [], [], [], []
    seen_default = False
    for i, p in enumerate(params):
        pos = p.kind is P.POSITIONAL_OR_KEYWORD
        if p.name in canons or (pos and seen_default and p.default is P.empty):
            # a sentinel default: the alias may fill it, or it stays required after defaults
            decl = f"{p.name}=_w_NA"
            if p.default is P.empty:
                env[f"_w_req_{i}"] = f"{name}() missing required argument {p.name!r}"
                checks += [f"    if {p.name} is _w_NA:", f"        raise TypeError(_w_req_{i})"]
            else:
                env[f"_w_d{i}"] = p.default
                checks += [f"    if {p.name} is _w_NA:", f"        {p.name} = _w_d{i}"]
        elif p.default is not P.empty:
            env[f"_w_d{i}"] = p.default  # a plain default: bound once, at definition
            decl = f"{p.name}=_w_d{i}"
        else:
            decl = p.name
        if pos:
            seen_default = seen_default or "=" in decl
            head.append(decl)
            call.append(p.name)
        else:
            kwonly.append(decl)
            call.append(f"{p.name}={p.name}")
    kwonly += [f"{a}=_w_NA" for a in aliases]
    for alias, canon in aliases.items():
        env[f"_w_msg_{alias}"] = (f"{name}() got both {canon!r} and its alias {alias!r}: pass "
                                  f"only one")
        body += [f"    if {alias} is not _w_NA:",
                 f"        if {canon} is not _w_NA:",
                 f"            raise TypeError(_w_msg_{alias})",
                 f"        {canon} = {alias}"]
    body += checks
    sep = ["*"] if kwonly else []
    src = (f"def _w_alias_wrapper({', '.join(head + sep + kwonly)}):\n" + "\n".join(body)
           + f"\n    return _w_fn({', '.join(call)})\n")
    code = compile(src, f"<fw aliases of {name}>", "exec")
    exec(code, env)  # noqa: S102 -- our own source, built from fw's own signature
    return env["_w_alias_wrapper"]


def _generic(fn: Callable, aliases: dict[str, str], name: str) -> Callable:
    names = frozenset(aliases)
    items = tuple(aliases.items())

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs and not names.isdisjoint(kwargs):
            for alias, canon in items:
                if alias in kwargs:
                    if canon in kwargs:
                        raise TypeError(
                            f"{name}() got both {canon!r} and its alias {alias!r}: pass only one"
                        )
                    kwargs[canon] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    return wrapper


def apply(namespace: dict[str, Any], prefix: str, public: str) -> list[str]:
    """Wrap every function or class member of ``namespace`` that ``TABLE`` lists under
    ``prefix``; returns the Paddle names applied (those fw lacks are skipped).

    Args:
        namespace (dict): a module's ``globals()`` (or ``vars(module)``), updated in place.
        prefix (str): the Paddle namespace, e.g. ``"paddle.nn.functional"``.
        public (str): the fw namespace for error messages, e.g. ``"fw.nn.functional"``.

    Returns:
        list[str], the Paddle names now accepting their aliases.

    Examples:
        .. code-block:: python

            >>> from fw.core.aliases import apply
            >>> ns = {"flatten": lambda x, start_axis=0, stop_axis=-1: (start_axis, stop_axis)}
            >>> apply(ns, "paddle", "fw")
            ['paddle.flatten']
            >>> ns["flatten"](1, start_dim=1)
            (1, -1)
    """
    done = []
    for rest, aliases in table_for(prefix).items():
        head, _, member = rest.partition(".")
        obj = namespace.get(head)
        if obj is None:
            continue
        if isinstance(obj, type):
            attr = member or "__init__"
            fn = getattr(obj, attr, None)  # an inherited forward is wrapped on this class
            if fn is None or not callable(fn) or fn is object.__init__:
                continue
            if getattr(fn, "_fw_aliases", None) is not None and \
                    fn._fw_aliases.items() >= aliases.items():
                continue
            setattr(obj, attr, with_aliases(fn, aliases, f"{public}.{rest}"))
        elif callable(obj) and not member:
            if getattr(obj, "_fw_aliases", None) is not None and \
                    obj._fw_aliases.items() >= aliases.items():
                continue  # already wrapped where it was defined (fw-core's install)
            namespace[head] = with_aliases(obj, aliases, f"{public}.{head}")
        else:
            continue
        done.append(f"{prefix}.{rest}")
    return done


def apply_core(functions: dict[str, Callable], methods: dict[str, Callable],
               classes: tuple[type, ...]) -> int:
    """Apply the table to fw-core's public functions (``fw.*``, ``fw.fft.*``, ``fw.linalg.*``)
    and to the Tensor methods that are the same functions, as Paddle's Tensor methods are its
    functions. Called once by the op table's ``install()``; returns how many functions it
    wrapped. ``a + b`` is untouched: dunders are never wrapped."""
    # one function may carry several Paddle names (mul and multiply): their aliases merge
    found: dict[int, tuple[Callable, dict[str, str]]] = {}

    def note(obj: Callable, aliases: dict[str, str]) -> None:
        entry = found.setdefault(id(obj), (obj, {}))
        entry[1].update(aliases)

    top = table_for("paddle")
    for prefix, keys in (("", top), ("fft.", table_for("paddle.fft")), ("linalg.", top)):
        for name, aliases in keys.items():
            if "." not in name and prefix + name in functions:
                note(functions[prefix + name], aliases)
    for name, aliases in top.items():
        if name in methods:
            note(methods[name], aliases)
        for cls in classes:
            member = cls.__dict__.get(name)
            if member is not None and callable(member) and not isinstance(member, type):
                note(member, aliases)
    wrapped = {i: with_aliases(obj, al, f"fw.{getattr(obj, '__name__', '?')}")
               for i, (obj, al) in found.items()}
    # every name bound to a wrapped function (second names such as concatenate = concat
    # included, as in Paddle, where both names are one function object) gets the wrapper
    for table in (functions, methods):
        for key, obj in table.items():
            if id(obj) in wrapped:
                table[key] = wrapped[id(obj)]
    for cls in classes:
        for key, member in list(cls.__dict__.items()):
            if id(member) in wrapped and not key.startswith("__"):
                setattr(cls, key, wrapped[id(member)])
    return len(wrapped)
