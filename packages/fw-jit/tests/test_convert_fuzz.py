"""A differential fuzzer of the control-flow conversion: hypothesis writes small
Python functions mixing ``if``/``while``/``for`` on tensor and Python conditions
with ``break``/``continue``/``return`` at random places, and each one must give
the same outputs, the same input gradient and the same state (a module-level
tensor written in place here and there) eagerly and under
``fw.jit.to_static`` on several inputs (so both sides of every tensor branch
and loops of 0, 1 and several iterations run through one cached program).

The generated programs are kept exact: values are small integers in float32
(``+``, ``-``, negation, integer constants) and every threshold is a half
integer, so a condition never depends on rounding. Every tensor ``while`` loop
counts its iterations first thing in its body (a ``continue`` cannot skip
it), so each loop ends. ``FW_HYPOTHESIS_PROFILE=thorough`` runs many more
functions than the default "ci" profile.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, note
from hypothesis import strategies as st
from jit_testutil import assert_same, load_source

import fw

VARS = ("a", "b")


class _Gen:
    """Draws statements; `loops` counts loop variables so each loop has its own."""

    def __init__(self, draw):
        self.draw = draw
        self.loops = 0
        self.returns = 0

    def var(self):
        return self.draw(st.sampled_from(VARS))

    def cond(self, loopvar=None):
        d = self.draw
        k = d(st.integers(-4, 4))
        kinds = ["sum", "elem", "py", "n"]
        if loopvar is not None:
            kinds.append("row")
        kind = d(st.sampled_from(kinds))
        if kind == "sum":
            return f"{self.var()}.sum() > {k}.5"
        if kind == "elem":
            return f"{self.var()}[{d(st.integers(0, 2))}] < {k}.5"
        if kind == "py":
            return f"p > {d(st.integers(0, 2))}"
        if kind == "n":
            return f"n > {d(st.integers(0, 2))}"
        return f"{loopvar}.sum() > {k}.5"

    def assign(self, loopvar=None):
        d = self.draw
        v, w = self.var(), self.var()
        rhs = [f"{v} + {w}", f"{v} - {w}", f"-{w}", f"{w} + {d(st.integers(-2, 2))}",
               f"{v} + x", f"{v} + S"]
        if loopvar is not None:
            rhs.append(f"{v} + {loopvar}")
        return [f"{v} = {d(st.sampled_from(rhs))}"]

    def block(self, depth, loop, loopvar=None):
        """A list of source lines (indented relative to the block)."""
        d = self.draw
        out = []
        for _ in range(d(st.integers(1, 3))):
            kinds = ["assign", "assign", "state"]
            if depth < 2:
                kinds += ["if", "while", "for"]
            if loop:
                kinds += ["break", "continue"]
            kinds.append("return")
            kind = d(st.sampled_from(kinds))
            if kind == "assign":
                out += self.assign(loopvar)
            elif kind == "state":  # in-place writes of a captured (global) tensor
                out.append(d(st.sampled_from(["S.add_(fw.ones([3]))", "S.set_value(1 - S)"])))
            elif kind == "if":
                out.append(f"if {self.cond(loopvar)}:")
                out += _indent(self.block(depth + 1, loop, loopvar))
                if d(st.booleans()):
                    out.append("else:")
                    out += _indent(self.block(depth + 1, loop, loopvar))
            elif kind == "while":
                out += self.while_(depth)
            elif kind == "for":
                out += self.for_(depth)
            else:  # break / continue / return: bare (ends the block) or guarded
                stmt = "return a, b" if kind == "return" else kind
                if d(st.booleans()):
                    out.append(f"if {self.cond(loopvar)}:")
                    out.append(f"    {stmt}")
                else:
                    out.append(stmt)
                    break
        return out

    def while_(self, depth):
        d = self.draw
        k = self.loops
        self.loops += 1
        i = f"i{k}"
        if d(st.booleans()):  # a tensor loop
            head = [f"{i} = fw.zeros([], 'int64')", f"while {i} < n:"]
        else:  # a Python loop (unrolled unless a break/return flag becomes a tensor)
            head = [f"{i} = 0", f"while {i} < {d(st.integers(0, 3))}:"]
        body = [f"{i} = {i} + 1"] + self.block(depth + 1, True)
        return head + _indent(body) + self.orelse(depth)

    def orelse(self, depth):
        """An optional ``else:`` of a loop (runs unless the loop breaks)."""
        if not self.draw(st.booleans()):
            return []
        return ["else:"] + _indent(self.assign())

    def for_(self, depth):
        d = self.draw
        k = self.loops
        self.loops += 1
        kind = d(st.sampled_from(["range_n", "range_py", "rows"]))
        if kind == "rows":
            r = f"r{k}"
            head = d(st.sampled_from([f"for {r} in m:", f"for j{k}, {r} in enumerate(m):"]))
            return [head] + _indent(self.block(depth + 1, True, r)) + self.orelse(depth)
        bound = "n" if kind == "range_n" else str(d(st.integers(0, 3)))
        return [f"for j{k} in range({bound}):"] + _indent(self.block(depth + 1, True)) + \
            self.orelse(depth)


def _indent(lines):
    return ["    " + ln for ln in lines]


@st.composite
def programs(draw):
    g = _Gen(draw)
    body = ["a = x + 0", "b = x - 1"] + g.block(0, False) + ["return a, b"]
    return "def f(x, n, m, p):\n" + "\n".join(_indent(body)) + "\n"


_row = st.lists(st.integers(-3, 3), min_size=3, max_size=3)
inputs = st.tuples(_row, st.integers(0, 3), st.lists(_row, min_size=3, max_size=3))


def _load(src, directory):
    """The function `f` of `src` and its module's own tensor `S`."""
    mod = load_source("S = fw.zeros([3])\n\n\n" + src, directory)
    return mod.f, mod.S


def _call(fn, state, x, n, m, p):
    xt = fw.to_tensor(np.asarray(x, np.float32), stop_gradient=False)
    out = fn(xt, fw.to_tensor(n, "int64"), fw.to_tensor(np.asarray(m, np.float32)), p)
    a, b = out
    (a.sum() + (b * 2).sum()).backward()
    return [a.numpy(), b.numpy(), xt.grad.numpy(), state.numpy().copy()]


@given(src=programs(), data=st.lists(inputs, min_size=3, max_size=3), p=st.integers(0, 2))
def test_eager_and_static_agree_on_random_control_flow(tmp_path_factory, src, data, p):
    note(src)
    f, state = _load(src, tmp_path_factory.getbasetemp())
    g, static_state = _load(src, tmp_path_factory.getbasetemp())  # its own global S
    sf = fw.jit.to_static(g, full_graph=True)
    for x, n, m in data:
        note(f"inputs: x={x} n={n} m={m} p={p}")
        assert_same(_call(f, state, x, n, m, p), _call(sf, static_state, x, n, m, p))
