"""`Context`: the state of one export — the ONNX graph being built and the names of
the fw IR values in it. Lowerings (`fw.onnx.lowering`) talk to ONNX only
through it, so the ONNX-specific bookkeeping (fresh names, constants shared
between graphs, value types of subgraphs, opset-dependent forms) lives here once.
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import InternalError
from fw.onnx._dtypes import onnx_dtype
from fw.onnx.errors import ExportError, where
from onnx import TensorProto, helper, numpy_helper

__all__ = ["Context", "value_info"]


def value_info(name: str, type_, dim_names=None):
    """A ValueInfoProto for fw `TensorType` `type_`; dynamic dims get `dim_names[i]`
    (a symbolic dim) or stay unknown."""
    dims = []
    for i, d in enumerate(type_.shape):
        if d >= 0:
            dims.append(int(d))
        else:
            dims.append(dim_names[i] if dim_names else None)
    return helper.make_tensor_value_info(name, onnx_dtype(type_.dtype), dims)


class Context:
    """What a lowering ``fn(op, ctx)`` uses:

    - ``ctx.opset``: the target opset version (of the default ONNX domain);
    - ``ctx.input(i)`` / ``ctx.name(value)``: the ONNX name of operand `i` of the
      op being lowered (None for an absent optional operand) / of any IR value;
    - ``value.type``: an IR value's fw `TensorType` (dtype + shape, -1 for dynamic);
    - ``ctx.node(op_type, inputs, outputs=1, **attrs)``: emit a node, return the
      name of its output (or the list of names when ``outputs > 1``);
    - ``ctx.const(array)``, ``ctx.ints(seq)``, ``ctx.scalar(v, dtype)``: constants
      (initializers of the main graph, visible in every subgraph);
    - ``ctx.cast``, ``ctx.reduce``, ``ctx.squeeze``, ``ctx.unsqueeze``: nodes whose
      form depends on the opset;
    - ``ctx.fail(reason)``: refuse the op (an `ExportError` naming it and its line);
      ``ctx.unavailable(result, reason)``: a result not produced (fails if used);
    - ``ctx.block_graph(block, name)`` / ``ctx.subgraph(name, inputs, build)``: a
      nested block (If branch, Loop body) as a GraphProto.
    """

    def __init__(self, opset: int, lowerings: dict, labels=None):
        self.opset = opset
        self.lowerings = lowerings
        self.names: dict = {}  # IR Value -> ONNX name
        self.initializers: list = []
        self.op = None  # the op being lowered (for messages)
        self._nodes = [[]]  # a stack: the node list of the graph being built
        self._labels = labels or {}
        self._used: set = set()
        self._consts: dict = {}
        self._uid = 0
        self._missing: dict = {}  # result Value -> (its op, why it has no ONNX name)

    # ------------------------------------------------------------ names
    def fresh(self, hint: str = "v") -> str:
        while True:
            self._uid += 1
            n = f"{hint}_{self._uid}"
            if n not in self._used:
                self._used.add(n)
                return n

    def reserve(self, name: str) -> str:
        """`name` itself if unused, else a fresh variant of it."""
        if name not in self._used:
            self._used.add(name)
            return name
        return self.fresh(name)

    def name(self, value) -> str:
        try:
            return self.names[value]
        except KeyError:
            pass
        missing = self._missing.get(value)
        if missing is None:
            raise InternalError(f"fw.onnx: {value!r} has no ONNX name (a lowering emitted an op "
                                f"before its operands); please report it")
        producer, why = missing
        loc = where(producer)
        self.fail(f"it uses result #{value.index} of '{producer.name}'"
                  + (f" (at {loc})" if loc else "") + f", and {why}")

    def bind(self, value, name: str) -> None:
        """Let IR `value` be ONNX `name` (a block argument bound to what it receives)."""
        self.names[value] = name

    def input(self, i: int):
        v = self.op.operands[i]
        return None if v is None else self.name(v)

    # ------------------------------------------------------------ nodes
    def node(self, op_type: str, inputs, outputs: int = 1, domain: str = "", **attrs):
        outs = [self.fresh(op_type.lower()) for _ in range(outputs)]
        ins = ["" if i is None else i for i in inputs]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self._nodes[-1].append(helper.make_node(op_type, ins, outs, name=self.fresh("n"),
                                                domain=domain or None, **attrs))
        return outs[0] if outputs == 1 else outs

    def cast(self, name: str, dtype) -> str:
        return self.node("Cast", [name], to=onnx_dtype(dtype))

    def const(self, array, hint: str = "const") -> str:
        """An initializer holding `array` (small ones are shared)."""
        a = np.asarray(array)
        key = None
        if a.size <= 64:
            key = (a.dtype.str, a.shape, a.tobytes())
            hit = self._consts.get(key)
            if hit is not None:
                return hit
        name = self.fresh(hint)
        self.initializers.append(_tensor(a, name))
        if key is not None:
            self._consts[key] = name
        return name

    def ints(self, values) -> str:
        """A 1-D int64 constant (shapes, axes, pads, perm)."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1), "ints")

    def scalar(self, value, dtype) -> str:
        """A 0-D constant of fw dtype `dtype` (what ONNX broadcasts like a number)."""
        return self.const(np.asarray(value, dtype=_np_dtype(dtype)), "scalar")

    def param(self, label: str, array) -> str:
        name = self.reserve(self._labels.get(label, label))
        self.initializers.append(_tensor(np.asarray(array), name))
        return name

    # ------------------------------------------------------------ opset-dependent forms
    def reduce(self, op_type: str, x: str, axes, keepdims: bool) -> str:
        """A Reduce* node over `axes` (None: all axes). ReduceSum takes its axes as an
        input from opset 13, the other reductions from opset 18 (onnx Changelog)."""
        keep = int(bool(keepdims))
        if axes is None:
            return self.node(op_type, [x], keepdims=keep)
        axes = [int(a) for a in axes]
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.node(op_type, [x, self.ints(axes)], keepdims=keep)
        return self.node(op_type, [x], axes=axes, keepdims=keep)

    def squeeze(self, x: str, axes) -> str:
        return self.node("Squeeze", [x, self.ints(axes)])

    def unsqueeze(self, x: str, axes) -> str:
        return self.node("Unsqueeze", [x, self.ints(axes)])

    # ------------------------------------------------------------ errors
    def fail(self, reason: str):
        op = self.op
        loc = where(op) if op is not None else None
        name = op.name if op is not None else "?"
        raise ExportError(f"fw.onnx.export: op '{name}' cannot be exported: {reason}"
                          + (f"\n  at {loc}" if loc else ""),
                          [(name, loc, reason)])

    def unavailable(self, value, reason: str) -> None:
        """Mark a result the op being lowered does not produce: an op that uses it fails
        with `reason` (so an unused BN statistic or pooling mask costs nothing)."""
        self._missing[value] = (self.op, reason)

    # ------------------------------------------------------------ blocks
    def lower_block(self, block) -> None:
        """Emit every op of `block` into the graph being built."""
        outer = self.op  # a control-flow lowering continues after its blocks
        for op in block.ops:
            self.op = op
            try:
                outs = self.lowerings[op.name](op, self)
            except (ExportError, InternalError):
                raise  # a refusal, or a nested block's failure already naming its op
            except Exception as e:
                loc = where(op)
                raise InternalError(f"fw.onnx: the lowering of '{op.name}' failed: "
                                    f"{type(e).__name__}: {e}" + (f"\n  at {loc}" if loc else "")
                                    + "\nplease report it") from e
            if isinstance(outs, str) or outs is None:
                outs = [outs]
            if len(outs) != len(op.results):
                raise InternalError(f"fw.onnx: the lowering of '{op.name}' gave {len(outs)} "
                                    f"names for {len(op.results)} results")
            for r, n in zip(op.results, outs):
                if n is None:
                    self._missing.setdefault(r, (op, "its lowering does not produce it"))
                else:
                    self.names[r] = n
        self.op = outer

    def subgraph(self, name: str, inputs, build):
        """A GraphProto (an If branch, a Loop body): ``inputs`` lists its formal inputs
        as (IR value or None, ONNX name, fw TensorType or a ValueInfoProto); ``build()``
        emits its nodes (``lower_block``, ``node``) and returns its output
        ValueInfoProtos (see `outputs`). Values of enclosing graphs are used by name
        (ONNX's outer scope)."""
        infos = []
        for v, n, t in inputs:
            if v is not None:
                self.bind(v, n)
            infos.append(value_info(n, t) if hasattr(t, "shape") else t)
        self._nodes.append([])
        try:
            outs = build()
        finally:
            nodes = self._nodes.pop()
        return helper.make_graph(nodes, self.fresh(name), infos, outs)

    def block_graph(self, block, name: str):
        """The GraphProto of a nested block without arguments (an If branch)."""

        def build():
            self.lower_block(block)
            return self.outputs(block.outputs)

        return self.subgraph(name, (), build)

    def outputs(self, values, names=None):
        """Graph outputs for IR `values`: an Identity each, so that a graph output is
        always produced inside its graph under a name of its own (a subgraph may not
        re-export an outer or input name as its output, and one value may be
        returned twice)."""
        infos = []
        for i, v in enumerate(values):
            out = self.reserve(names[i]) if names else self.fresh("out")
            self._nodes[-1].append(helper.make_node("Identity", [self.name(v)], [out],
                                                    name=self.fresh("n")))
            infos.append(value_info(out, v.type))
        return infos

    @property
    def nodes(self) -> list:
        return self._nodes[0]


def _np_dtype(dtype):
    np_dt = getattr(dtype, "np", None)
    return np_dt if np_dt is not None else np.dtype(dtype)


def _tensor(a, name: str) -> TensorProto:
    # numpy_helper knows ml_dtypes' bfloat16 (onnx >= 1.16); not np.ascontiguousarray,
    # which turns a 0-D array into a 1-D one
    return numpy_helper.from_array(np.array(a, order="C", copy=not a.flags.c_contiguous), name)
