"""Constant folding: compute at compile time what depends on constants only.

An op is folded when every operand is a constant — a ``full`` result, a block-0
``const`` (never a ``param``: parameters change between runs), or the result of
an op folded before — of at most `max_bytes`, and the op is not random, has no
side effects and holds no blocks. It is run through its NumPy reference kernel
(the executable specification); if that raises or warns, the op is left for the
executor to report at run time. Each result of at most `max_bytes` whose dtype
and shape agree with the recorded type then replaces the op: a ``full`` when all
its elements are the same bits (so the text stays small), else a new block-0
constant ``_folded_N`` captured by the program (equal folded values share one).
Ops with no operands (``full``, ``arange``) already are constants and stay.
Values carried by a ``while`` are block arguments, never constants, so loop
bodies fold only their invariant part.
"""

from __future__ import annotations

import warnings

import numpy as np

from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import constant_array
from fw.core.ir.passes.rewrite import Rewriter, walk_ops

__all__ = ["ConstantFolding"]


def _same_bits(a: np.ndarray) -> bool:
    if a.size <= 1:
        return True
    b = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, a.dtype.itemsize)
    return bool((b == b[0]).all())


@register_pass
class ConstantFolding(Pass):
    """Args: max_bytes: the largest operand or result folded (default 64 KiB)."""

    name = "constant_folding"

    def __init__(self, max_bytes: int = 1 << 16):
        self.max_bytes = max_bytes

    def run(self, program) -> bool:
        rw = Rewriter(program, deferred=True)
        known: dict = {}  # value -> array, for values computed here
        self._made: dict = {}  # (dtype, shape, bytes) -> const made here: equal folds share one
        for op in walk_ops(program.block):
            if op.parent is None or not op.operands or op.blocks or not op.results:
                continue
            d = op.opdef
            if d.random or d.side_effect or op.name in ("cond", "while"):
                continue
            args = []
            for v in op.operands:
                if v is None:
                    args.append(None)
                    continue
                a = known.get(v)
                if a is None:
                    a = constant_array(v, program, self.max_bytes)
                if a is None:
                    break
                args.append(a)
            else:
                outs = self._evaluate(op, args)
                if outs is not None:
                    self._replace(rw, op, outs, known)
        rw.flush()
        return rw.changed

    def _evaluate(self, op, args):
        d = op.opdef
        if d.variadic >= 0:
            k = len(args) - (len(d.input_names) - 1)
            args = args[:d.variadic] + [args[d.variadic:d.variadic + k]] + \
                args[d.variadic + k:]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                res = d.reference(*args, **op.attrs)
        except Exception:  # noqa: BLE001 - the executor reports it at run time
            return None
        if d.num_outputs != 1 and not isinstance(res, (tuple, list)):
            return None
        outs = [res] if d.num_outputs == 1 else list(res)
        if len(outs) != len(op.results):
            return None
        arrays = []
        for r, a in zip(op.results, outs):
            a = np.asarray(a)
            t = r.type
            if type(a) is not np.ndarray or a.dtype != t.dtype.np or a.ndim != t.ndim or \
                    any(e not in (-1, g) for e, g in zip(t.shape, a.shape)) or \
                    a.nbytes > self.max_bytes:
                return None
            arrays.append(a)
        return arrays

    def _replace(self, rw, op, arrays, known) -> None:
        from fw.core.ir.types import TensorType

        new = []
        for r, a in zip(op.results, arrays):
            if _same_bits(a):
                fill = a.reshape(-1)[0].item() if a.size else a.dtype.type(0).item()
                f = rw.create("full", [], {"shape": tuple(a.shape), "fill_value": fill,
                                           "dtype": r.type.dtype},
                              [TensorType(a.shape, r.type.dtype)], before=op)
                v = f.results[0]
            else:
                key = (a.dtype.str, a.shape, a.tobytes())
                v = self._made.get(key)
                if v is None:
                    v = self._made[key] = rw.add_const(np.array(a, copy=True, order="C"))
            known[v] = a
            new.append(v)
        rw.replace_op(op, new)
