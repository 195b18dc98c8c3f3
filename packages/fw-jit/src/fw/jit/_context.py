"""The state of the trace being built: what the runtime helpers need to know
beyond the builder (the user's location, symbolic control-flow depth, asserts and
prints that run with the program, notes for the conversion report)."""

from __future__ import annotations

import sys

from fw.jit.errors import ConversionError

__all__ = ["Trace", "current", "active", "push", "pop", "user_frame", "UndefinedVar",
           "mark_aux", "is_aux"]


class Trace:
    """One trace (one program being built by a converted function)."""

    def __init__(self, builder, name="function"):
        self.builder = builder
        self.name = name
        self.symbolic_depth = 0  # > 0 inside a branch/body traced into a nested block
        # symbolic asserts: (flag tensor, message, filename, lineno)
        self.asserts: list = []
        # symbolic prints in block 0: (values, rendering function) printed after each run
        self.prints: list = []
        self.notes: list = []  # (filename, lineno, text) for the conversion report
        # full_graph=False: constructs that need concrete values (print of a tensor)
        # raise, so the statement around them runs eagerly (a graph break)
        self.graph_breaks = False
        self.seen_notes: set = set()

    def note(self, filename, lineno, text) -> None:
        key = (filename, lineno, text)
        if key not in self.seen_notes:
            self.seen_notes.add(key)
            self.notes.append(key)


_stack: list = []


def current() -> Trace | None:
    return _stack[-1] if _stack else None


def active() -> Trace | None:
    """The trace of the builder ops emit into now (None when running eagerly). A
    builder started elsewhere (fw.core.ir.trace, fw.static) gets a trace of its own."""
    from fw.core.internal import build_state

    b = build_state.builder
    if b is None:
        return None
    t = current()
    if t is not None and t.builder is b:
        return t
    t = b.__dict__.get("_fw_trace")
    if t is None:
        t = Trace(b)
        b.__dict__["_fw_trace"] = t
    return t


def push(t: Trace) -> None:
    _stack.append(t)


def pop() -> Trace:
    return _stack.pop()


_FW_DIRS: tuple = ()


def _fw_dirs() -> tuple:
    global _FW_DIRS
    if not _FW_DIRS:
        _FW_DIRS = tuple(list(sys.modules["fw"].__path__))
    return _FW_DIRS


def user_frame(depth: int = 1):
    """(filename, lineno) of the innermost caller frame outside fw's packages."""
    dirs = _fw_dirs()
    f = sys._getframe(depth)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(dirs) and not fn.startswith("<fw"):
            return fn, f.f_lineno
        f = f.f_back
    return None, None


class UndefinedVar:
    """The value of a local variable that has not been assigned (yet, or on every
    path). Any use raises a `ConversionError` naming the variable and why it has
    no value; passing it around (assigning, returning it unused) is allowed."""

    __slots__ = ("name", "reason")

    def __init__(self, name: str, reason: str | None = None):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "reason", reason)

    def fail(self, how: str = "used"):
        fn, ln = user_frame(2)
        why = f" ({self.reason})" if self.reason else " (it is not assigned before this point)"
        shown = "the function's return value" if self.name == "__fw_retval" else \
            f"variable {self.name!r}"
        raise ConversionError(f"{shown} is {how} but has no value{why}", fn, ln,
                              construct="undefined variable",
                              hint="assign it on every path before this line (for a tensor "
                                   "computed in only one branch of a tensor-dependent `if`, "
                                   "give it a value before the `if`)")

    def __repr__(self) -> str:
        return f"<undefined variable {self.name!r}>"

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        self.fail(f"used (.{item})")

    def __setattr__(self, key, value):
        self.fail("assigned an attribute")

    def __bool__(self):
        self.fail("used as a condition")

    def __iter__(self):
        self.fail("iterated over")

    def __len__(self):
        self.fail("passed to len()")

    def __call__(self, *a, **k):
        self.fail("called")

    def __getitem__(self, k):
        self.fail("indexed")

    def __index__(self):
        self.fail("used as an index")

    def __int__(self):
        self.fail("converted to int")

    def __float__(self):
        self.fail("converted to float")

    def __array__(self, *a, **k):
        self.fail("converted to an array")


def _binary(name):
    def f(self, *a):
        self.fail(f"used in an arithmetic expression ({name})")
    f.__name__ = name
    return f


for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
           "xor", "lshift", "rshift", "lt", "le", "gt", "ge", "neg", "pos", "abs", "invert"):
    for _p in ("__{}__", "__r{}__"):
        if _p == "__r{}__" and _n in ("lt", "le", "gt", "ge", "neg", "pos", "abs", "invert"):
            continue
        setattr(UndefinedVar, _p.format(_n), _binary(_p.format(_n)))


# Tensors fw.jit itself captures (learning rates, flags) are never trained. They are
# marked on the tensor: a set of their id()s went stale when one died and a new
# parameter was allocated at the same address, which then silently stopped
# training (seen as a rare failure of the training tests).
_AUX_MARK = "_fw_jit_aux"


def mark_aux(t) -> None:
    setattr(t, _AUX_MARK, True)


def is_aux(t) -> bool:
    return getattr(t, _AUX_MARK, False)
