"""The lowering table: fw op name -> the function that emits its ONNX nodes.

A lowering is ``fn(op, ctx)``: `op` is the `fw.core.ir.Operation`, `ctx` the
`fw.onnx._context.Context` (operand names, node emission, constants, the target
opset, nested blocks). It returns the ONNX value name of each result of `op`
(a str for a one-result op, else a list; ``None`` for a result it does not
produce — using that result later is an `ExportError`). Adding an op is one
entry: ``@lowers("name")`` in the module named like the op's family
(``OPS[name].family``), or one line in that module's table of one-to-one ops.
"""

from __future__ import annotations

__all__ = ["LOWERINGS", "lowers"]

LOWERINGS: dict = {}


def lowers(*names):
    """Decorator: register ``fn(op, ctx)`` as the ONNX lowering of the fw ops `names`.

    The function emits ONNX nodes for one op through `ctx`; it is then found in
    `LOWERINGS` by op name.

    Args:
        *names (str): fw op names.

    Returns:
        Callable: the decorator (it returns `fn` unchanged).

    Examples:
        >>> import fw
        >>> import fw.onnx
        >>> "relu" in fw.onnx.LOWERINGS
        True
        >>> fw.onnx.lowers("relu") is not None     # how a lowering module registers one
        True
    """

    def register(fn):
        for n in names:
            if n in LOWERINGS:
                raise ValueError(f"fw.onnx: op {n!r} already has a lowering "
                                 f"({LOWERINGS[n].__module__}.{LOWERINGS[n].__name__})")
            LOWERINGS[n] = fn
        return fn

    return register
