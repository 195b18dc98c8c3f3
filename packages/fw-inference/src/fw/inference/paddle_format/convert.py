"""`PaddleGraph` + weights -> an fw-core `Program`, by the entries of `ops.py`.

The program is built the way fw traces its own models (a ``fw.core.ir``
`Builder`): feeds become inputs, weights become captured tensors labelled with
their Paddle names, each Paddle op emits fw ops through its entry. The result is
an ordinary fw program, so the predictor runs the same passes, executor and
kernels on it as on a ``.fwmodel``.
"""

from __future__ import annotations

import collections

from fw.core.errors import FwError
from fw.core.internal import get_op
from fw.core.ir.serialize import ModelFormatError
from fw.inference.paddle_format.ops import OPS, Const

__all__ = ["UnknownPaddleOpError", "to_program", "unknown_ops"]


class UnknownPaddleOpError(ModelFormatError):
    """A Paddle program with ops fw has no mapping for; ``ops`` is
    ``{paddle op name: count}``."""

    def __init__(self, message, ops):
        super().__init__(message)
        self.ops = ops


def unknown_ops(path, names, known=None) -> UnknownPaddleOpError | None:
    """The error for the op names (one per op of the program) without an entry in
    `known` (default `ops.OPS`), or None when every op has one."""
    known = OPS if known is None else known
    missing = collections.Counter(n for n in names if n not in known)
    if not missing:
        return None
    listing = ", ".join(f"{n} (x{c})" for n, c in sorted(missing.items()))
    return UnknownPaddleOpError(
        f"{path}: {len(missing)} Paddle op type(s) have no fw mapping: {listing}; "
        f"mapped ops: fw.inference.paddle_format.ops.OPS", dict(missing))


class _Ctx:
    def __init__(self, builder):
        self.b = builder

    def value(self, v):
        from fw.core.ir.core import Value
        from fw.core.tensor import to_tensor

        if isinstance(v, Const):
            return self.b.capture(to_tensor(v.array))
        if isinstance(v, Value):
            return v
        return self.b.capture(v)  # a weight tensor

    def emit(self, name, args, attrs):
        def conv(a):
            if isinstance(a, list):
                return [conv(x) for x in a]
            return None if a is None else self.value(a)

        op = get_op(name)
        extra = set(attrs) - set(op.attrs)
        if extra:  # a wrong entry in ops.py, not a problem of the file
            raise AssertionError(f"fw op {name} has no attributes {sorted(extra)}")
        return self.b.emit(op, [conv(a) for a in args], {**op.attrs, **attrs})


def _check_spec(path, i, pop, k, v, spec):
    """A result fw infers must agree with the type the Paddle file declares (a
    wrong mapping shows up here, at load time, naming the op)."""
    shape = getattr(v, "shape", None)
    if spec is None or shape is None:
        return
    shape = list(shape)
    ok = len(shape) == len(spec.shape) and all(
        a == b or a < 0 or b < 0 for a, b in zip(shape, spec.shape))
    if not ok:
        raise ModelFormatError(f"{path}: op {i} ({pop.name}) output {k}: the file declares "
                               f"shape {list(spec.shape)}, fw computes {shape}")


def to_program(graph, weights):
    """The fw `Program` of `graph` with `weights` ({paddle name: ndarray}) captured."""
    from fw.core.ir import TensorType
    from fw.core.ir.builder import Builder
    from fw.core.tensor import wrap

    err = unknown_ops(graph.source, [o.name for o in graph.ops])
    if err is not None:
        raise err
    path = graph.source
    b = Builder()
    env: dict = {}
    ctx = _Ctx(b)
    with b:
        for name, key, spec in graph.feeds:
            env[key] = b.add_input(TensorType(list(spec.shape), spec.dtype), name)
        for name, key, _ in graph.params:
            t = wrap(weights[name])
            t.name = name
            t.persistable = True
            env[key] = t
        for i, pop in enumerate(graph.ops):
            try:
                ins = [None if k is None else env[k] for k in pop.inputs]
            except KeyError as e:
                raise ModelFormatError(f"{path}: op {i} ({pop.name}) reads value {e} that no "
                                       f"earlier op defines") from None
            try:
                outs = OPS[pop.name](ctx, ins, pop.attrs)
            except ModelFormatError:
                raise
            except (FwError, KeyError, TypeError, ValueError, IndexError) as e:
                raise ModelFormatError(f"{path}: op {i} ({pop.name}, attrs {pop.attrs}): "
                                       f"cannot map it to fw: {type(e).__name__}: {e}") from e
            for k, (key, v) in enumerate(zip(pop.outputs, outs)):
                if pop.specs and k < len(pop.specs):
                    _check_spec(path, i, pop, k, v, pop.specs[k])
                env[key] = v
        try:
            b.set_outputs([ctx.value(env[k]) for k in graph.fetches])
        except KeyError as e:
            raise ModelFormatError(f"{path}: a fetch reads value {e} that no op defines") \
                from None
    program = b.program
    program.meta["source"] = path
    return program
