"""Random programs for property tests of the IR (text round trip, verifier,
passes, executor, model file): a hypothesis-drawn *recipe* of fw op calls that
runs eagerly on Tensors and traces into a Program on symbolic values, so the two
can be compared.

Only ops present in the op table are drawn (families are filled in over time),
from lists of ops whose kernels accept any real float input: a missing op just
narrows the choice.

>>> from hypothesis import given, strategies as st
>>> @given(st.data())
... def test(data):
...     rp = draw_program(data.draw)
...     prog = rp.trace()            # the Program
...     eager = rp.eager()           # outputs as Tensors
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["RandomProgram", "draw_program", "UNARY", "BINARY", "REDUCE"]

# real-float ops defined (possibly as inf/nan) on every input
UNARY = ("neg", "exp", "tanh", "sin", "cos", "abs", "relu", "sigmoid", "square", "floor",
         "ceil", "sign", "atan")
BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum")
REDUCE = ("sum", "mean", "max", "min")


def _present(names):
    from fw.core.ops import OPS

    return [n for n in names if n in OPS]


@dataclass
class RandomProgram:
    """A recipe: ``steps`` applied to the inputs (and captured ``weights``)."""

    dtype: str
    shapes: list  # concrete input shapes
    dynamic: list  # per input: which dims are -1 in the program's input types
    steps: list
    outputs: list  # indices into the value list
    inputs_: list = field(default_factory=list)  # the input arrays
    weights: list = field(default_factory=list)  # matmul weights (NumPy)
    _tensors: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        from fw.core.tensor import to_tensor

        self._tensors = [to_tensor(w) for w in self.weights]

    def input_types(self) -> list:
        from fw.core.ir import TensorType

        return [TensorType([-1 if dyn else d for d, dyn in zip(s, m)], self.dtype)
                for s, m in zip(self.shapes, self.dynamic)]

    def build(self, *xs):
        """Apply the recipe to `xs` (Tensors: eager; Values: emits IR)."""
        from fw.core.ir import control as ctl
        from fw.core.ops import call

        vals = list(xs)
        for st in self.steps:
            kind = st[0]
            if kind == "unary":
                vals.append(call(st[1], vals[st[2]]))
            elif kind == "binary":
                b = st[3] if isinstance(st[3], float) else vals[st[3]]
                vals.append(call(st[1], vals[st[2]], b))
            elif kind == "reduce":
                _, name, src, axis, keepdim = st
                vals.append(call(name, vals[src], axis=axis, keepdim=keepdim))
            elif kind == "reshape":
                vals.append(call("reshape", vals[st[1]], shape=st[2]))
            elif kind == "transpose":
                vals.append(call("transpose", vals[st[1]], perm=st[2]))
            elif kind == "matmul":
                vals.append(call("matmul", vals[st[1]], self._tensors[st[2]]))
            elif kind == "cond":
                _, src, u1, u2 = st
                x = vals[src]
                pred = call("less_than", call("sum", x), 0.0)
                vals.append(ctl.cond(pred, lambda x=x, u=u1: call(u, x),
                                     lambda x=x, u=u2: call(u, x)))
            elif kind == "while":
                _, src, n, u = st
                i0 = call("full", shape=(), fill_value=0, dtype="int64")
                _, out = ctl.while_loop(lambda i, v, n=n: call("less_than", i, n),
                                        lambda i, v, u=u: (call("add", i, 1), call(u, v)),
                                        [i0, vals[src]])
                vals.append(out)
            elif kind == "nested":  # a while whose body branches and reads an outer value
                _, src, n, u1, u2, other = st
                outer = vals[other]

                def body(i, v, u1=u1, u2=u2, outer=outer):
                    w = ctl.cond(call("less_than", call("sum", v), 0.0),
                                 lambda: call(u1, v), lambda: call("multiply", call(u2, v), outer))
                    return call("add", i, 1), w

                i0 = call("full", shape=(), fill_value=0, dtype="int64")
                _, out = ctl.while_loop(lambda i, v, n=n: call("less_than", i, n), body,
                                        [i0, vals[src]])
                vals.append(out)
            else:  # pragma: no cover
                raise AssertionError(kind)
        outs = tuple(vals[i] for i in self.outputs)
        return outs[0] if len(outs) == 1 else outs

    def trace(self):
        from fw.core.ir import trace

        return trace(self.build, self.input_types())

    def eager(self) -> tuple:
        from fw.core.tensor import to_tensor

        out = self.build(*[to_tensor(x) for x in self.inputs_])
        return out if isinstance(out, tuple) else (out,)


def draw_program(draw, max_steps: int = 8, control: bool = True) -> RandomProgram:
    """Draw a `RandomProgram` with `draw` (hypothesis' ``data.draw``)."""
    from hypothesis import strategies as st

    unary, binary, reduce_ = _present(UNARY), _present(BINARY), _present(REDUCE)
    have = set(_present(("reshape", "transpose", "matmul", "less_than", "sum", "full", "add",
                         "cond", "while")))
    dtype = draw(st.sampled_from(["float32", "float64"]), label="dtype")
    n_in = draw(st.integers(1, 3), label="inputs")
    shapes = [tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))) for _ in
              range(n_in)]
    dynamic = [[draw(st.booleans()) for _ in s] for s in shapes]
    seed = draw(st.integers(0, 2**31 - 1), label="seed")
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-2, 2, size=s).astype(dtype) for s in shapes]
    shp = list(shapes)  # concrete shape of every value so far
    steps, weights = [], []
    kinds = []
    if unary:
        kinds.append("unary")
    if binary:
        kinds.append("binary")
    if reduce_:
        kinds.append("reduce")
    kinds += [k for k in ("reshape", "transpose", "matmul") if k in have]
    if control and {"cond", "less_than", "sum"} <= have and unary:
        kinds.append("cond")
    if control and {"while", "less_than", "full", "add"} <= have and unary:
        kinds.append("while")
        if {"cond", "sum", "multiply"} <= have | set(binary) and "multiply" in binary:
            kinds.append("nested")
    for _ in range(draw(st.integers(1, max_steps), label="steps")):
        kind = draw(st.sampled_from(kinds))
        src = draw(st.integers(0, len(shp) - 1))
        s = shp[src]
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(unary)), src))
        elif kind == "binary":
            same = [i for i, t in enumerate(shp) if t == s or t == ()]
            if draw(st.booleans()):
                other = draw(st.sampled_from([0.5, -1.5, 2.0, 1.0, 0.0]))
            else:
                other = draw(st.sampled_from(same))
            steps.append(("binary", draw(st.sampled_from(binary)), src, other))
        elif kind == "reduce":
            axis = None
            if s and draw(st.booleans()):
                axis = draw(st.integers(-len(s), len(s) - 1))
            keepdim = draw(st.booleans())
            steps.append(("reduce", draw(st.sampled_from(reduce_)), src, axis, keepdim))
            if axis is None:
                s = tuple(1 for _ in s) if keepdim else ()
            else:
                a = axis % len(s)
                s = tuple(1 if i == a else d for i, d in enumerate(s)) if keepdim else \
                    tuple(d for i, d in enumerate(s) if i != a)
            shp.append(s)
            continue
        elif kind == "reshape":
            n = int(np.prod(s)) if s else 1
            target = draw(st.sampled_from([(n,), (-1,), s + (1,), (1,) + s, s[::-1] if s else
                                           (1,)]))
            steps.append(("reshape", src, target))
            shp.append((n,) if target == (-1,) else target)
            continue
        elif kind == "transpose":
            if len(s) < 2:
                steps.append(("unary", draw(st.sampled_from(unary)), src) if unary else
                             ("reshape", src, s))
                shp.append(s)
                continue
            perm = tuple(draw(st.permutations(range(len(s)))))
            steps.append(("transpose", src, perm))
            shp.append(tuple(s[p] for p in perm))
            continue
        elif kind == "matmul":
            if not s:
                steps.append(("reshape", src, (1,)))
                shp.append((1,))
                continue
            m = draw(st.integers(1, 4))
            weights.append(rng.uniform(-1, 1, size=(s[-1], m)).astype(dtype))
            steps.append(("matmul", src, len(weights) - 1))
            shp.append(s[:-1] + (m,))
            continue
        elif kind == "cond":
            steps.append(("cond", src, draw(st.sampled_from(unary)),
                          draw(st.sampled_from(unary))))
        elif kind == "while":
            steps.append(("while", src, draw(st.integers(0, 3)), draw(st.sampled_from(unary))))
        elif kind == "nested":
            same = [i for i, t in enumerate(shp) if t == s or t == ()]
            steps.append(("nested", src, draw(st.integers(0, 3)), draw(st.sampled_from(unary)),
                          draw(st.sampled_from(unary)), draw(st.sampled_from(same))))
        shp.append(s)
    n_out = draw(st.integers(1, min(2, len(shp))))
    outputs = sorted(set(draw(st.lists(st.integers(0, len(shp) - 1), min_size=n_out,
                                       max_size=n_out))))
    if len(shp) - 1 not in outputs:
        outputs.append(len(shp) - 1)
    return RandomProgram(dtype, shapes, dynamic, steps, outputs, inputs, weights)
