"""Building programs: the `Builder` that fw ops emit into, and `trace`.

While a builder is active every fw op call emits an `Operation` (see
fw.core.dispatch.invoke): its operands are Values; concrete tensors met on the
way are captured as block-0 arguments — a tensor that is a parameter
(``trainable``/``persistable`` with a name) becomes a ``param`` named after it,
any other tensor a ``const`` — and Python scalars become ``full`` constants of
the promoted dtype. Mixed dtypes are promoted by explicit ``cast`` operations.

State updates: code that writes a captured tensor while a program is being built
(an optimizer step, a batch-norm running statistic, ``t.set_value(v)``, an
in-place op ``t.add_(v)``) calls `Builder.record_update(t, value)`. The program
then writes ``value`` into ``t`` after each run (``program.updates``), and reads of
``t`` later in the same trace see ``value``. Inside a nested block (a ``cond``
branch or a ``while`` body) an update is kept in the innermost *update scope*
(`push_update_scope`/`pop_update_scope`) so that the code building the control
flow op can carry it out as a result of the op.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import FwError, InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Block, Operation, Program, Value, _state, user_location
from fw.core.ir.types import TensorType
from fw.core.tensor import Tensor

__all__ = ["Builder", "trace", "building", "no_building"]

_SCALARS = (bool, int, float, complex)


class Builder:
    """Emits operations into a program; use as a context manager."""

    def __init__(self, program: Program | None = None):
        self.program = program if program is not None else Program()
        self.blocks = [self.program.block]
        self._captured: dict = {}  # id(tensor) -> Value (its latest value in the trace)
        self._state_args: dict = {}  # id(tensor) -> its block-0 argument (before updates)
        for label, t in self.program.captured.items():
            for a in self.program.block.args:
                if a.label == label and a.role in ("param", "const"):
                    self._captured[id(t)] = a
                    self._state_args[id(t)] = a
        for label, v in self.program.updates:  # reads see the values already written
            t = self.program.captured.get(label)
            if t is not None:
                self._captured[id(t)] = v
        self._prev = None
        self._const_count = sum(1 for a in self.program.block.args if a.role == "const")
        self.update_scopes: list = []  # one {id(tensor): (tensor, value)} per nested scope
        # gradients computed while tracing (``loss.backward()`` on a Value, see
        # fw.core.ir.core.value_hooks): id(param tensor) -> (tensor, grad Value)
        self.grads: dict = {}

    # -------------------------------------------------------- context
    def __enter__(self) -> Builder:
        self._prev = _state.builder
        _state.builder = self
        return self

    def __exit__(self, *exc):
        _state.builder = self._prev
        return False

    @property
    def block(self) -> Block:
        return self.blocks[-1]

    def push(self, block: Block) -> None:
        block.program = self.program
        self.blocks.append(block)

    def pop(self) -> Block:
        return self.blocks.pop()

    # -------------------------------------------------------- values
    def add_input(self, type_: TensorType, name: str | None = None) -> Value:
        v = self.program.block.add_arg(type_, "input", name)
        self.program.touch()
        return v

    def capture(self, t: Tensor) -> Value:
        """The Value standing for concrete tensor `t` (captured once per program)."""
        v = self._captured.get(id(t))
        if v is not None:
            return v
        is_param = bool(getattr(t, "trainable", False)) or (
            bool(getattr(t, "persistable", False)) and not t._sg)
        if is_param or getattr(t, "persistable", False):
            label = t.name
        else:
            label = f"_const_{self._const_count}"
            self._const_count += 1
        base = label
        k = 1
        while label in self.program.captured and self.program.captured[label] is not t:
            label = f"{base}_{k}"
            k += 1
        role = "param" if is_param else "const"
        v = self.program.block.add_arg(TensorType(t._data.shape, t.dtype), role, label)
        v._sg = t._sg
        self.program.captured[label] = t
        self._captured[id(t)] = v
        self._state_args[id(t)] = v
        self.program.touch()
        return v

    # -------------------------------------------------------- state updates
    def state_arg(self, t: Tensor) -> Value:
        """The block-0 param/const argument standing for tensor `t` (captured now if
        it was not), regardless of updates recorded for it."""
        a = self._state_args.get(id(t))
        if a is None:
            a = self.capture(t)  # (capture registers new arguments in _state_args)
        return a

    def current_value(self, t: Tensor) -> Value:
        """What `t` reads as at this point of the trace (its last recorded update, or
        its argument)."""
        return self.capture(t)

    def record_update(self, target, value) -> Value:
        """Record that captured tensor `target` (a Tensor, or its block-0 argument
        Value) holds `value` after this point of the program; the executor writes it
        into the tensor after each run. `value` (a Value, Tensor or number) is cast to
        the target's dtype; its shape must match. Returns the Value recorded.

        Inside a nested block the update goes into the innermost update scope (see the
        module docstring); with no scope open that is an `UnsupportedError`."""
        from fw.core.errors import UnsupportedError

        if type(target) is Value:
            if target.owner is not self.program.block or target.role not in ("param", "const"):
                raise InvalidArgumentError(f"record_update: the target must be a captured "
                                           f"parameter/constant of the program, got {target!r}")
            t = self.program.captured.get(target.label)
            if t is None:
                raise InvalidArgumentError(f"record_update: {target.label!r} has no captured "
                                           f"tensor")
            arg = target
        elif isinstance(target, Tensor):
            t = target
            arg = self.state_arg(t)
        else:
            raise InvalidTypeError(f"record_update: the target must be a Tensor, got "
                                   f"{type(target).__name__}")
        tt = arg.type
        if type(value) is not Value:
            if isinstance(value, Tensor):
                value = self.capture(value)
            elif isinstance(value, _SCALARS):
                from fw.core.ops import call

                value = call("full", shape=list(tt.shape), fill_value=value, dtype=tt.dtype)
            else:
                raise InvalidTypeError(f"record_update: the new value of {arg.label!r} must be "
                                       f"a tensor or a number, got {type(value).__name__}")
        if value.type.dtype is not tt.dtype:
            from fw.core.ops import call

            value = call("cast", value, dtype=tt.dtype)
        vt = value.type
        if len(vt.shape) != len(tt.shape) or any(a != b and a != -1 for a, b in
                                                  zip(vt.shape, tt.shape)):
            raise InvalidArgumentError(f"record_update: {arg.label!r} is {tt} but the new value "
                                       f"is {vt}; a state update cannot change the shape")
        if len(self.blocks) > 1:
            if not self.update_scopes:
                raise UnsupportedError(
                    f"writing the captured tensor {arg.label!r} inside a cond/while block: "
                    f"the update cannot leave the block (fw.jit.to_static carries such "
                    f"updates out of converted if/while; with fw.static.nn.cond/while_loop "
                    f"return the new value and assign it after the op)")
            self.update_scopes[-1][id(t)] = (t, value)
        else:
            self.program.updates.set(arg.label, value)
            self.program.touch()
        self._captured[id(t)] = value
        return value

    def push_update_scope(self) -> None:
        """Open a scope collecting the updates recorded in a nested block."""
        self.update_scopes.append({})

    def pop_update_scope(self) -> dict:
        """Close the innermost scope: returns ``{id(tensor): (tensor, value)}`` of the
        updates recorded in it and makes the tensors read as they did before it."""
        scope = self.update_scopes.pop()
        for key, (t, _v) in scope.items():
            outer = None
            for s in reversed(self.update_scopes):
                if key in s:
                    outer = s[key][1]
                    break
            if outer is None:
                outer = self.program.updates.get(self.state_arg(t).label)
            self._captured[key] = outer if outer is not None else self.state_arg(t)
        return scope

    def constant(self, value, dtype) -> Value:
        """A 0-D constant of `dtype` (emitted as a ``full`` op)."""
        from fw.core.ops._registry import OPS

        (v,) = self._append(OPS["full"], [], {"shape": (), "fill_value": value, "dtype": dtype},
                            [TensorType((), dtype)])
        return v

    def as_value(self, op, i, a, target=None) -> Value | None:
        if a is None:
            return None
        if type(a) is Value:
            v = a
        elif isinstance(a, Tensor):
            v = self.capture(a)
        elif isinstance(a, _SCALARS) or isinstance(a, np.generic):
            d = target if target is not None else _dt.scalar_dtype(a.item() if isinstance(
                a, np.generic) else a)
            return self.constant(a.item() if isinstance(a, np.generic) else a, d)
        elif isinstance(a, (np.ndarray, list, tuple)):
            from fw.core.tensor import to_tensor

            v = self.capture(to_tensor(a))
        else:
            raise InvalidTypeError(f"{op.name}: argument '{op.input_names[i]}' must be a tensor "
                                   f"or a number, got {type(a).__name__}")
        if target is not None and v.type.dtype is not target:
            from fw.core.ops._registry import OPS

            cast = OPS["cast"]
            (v,) = self._append(cast, [v], {"dtype": target},
                                [TensorType(v.type.shape, target)])
        return v

    # -------------------------------------------------------- emission
    def emit(self, op, args, attrs):
        from fw.core.dispatch import target_dtype

        if op.canon is not None:
            attrs = op.canon(attrs)
        target = target_dtype(op, args) if op.promote_idx else None
        operands = []
        types = []
        for i, a in enumerate(args):
            t = target if (target is not None and i in op.promote_idx) else None
            if i == op.variadic:
                vs = [self.as_value(op, i, x, t) for x in a]
                operands.extend(vs)
                types.append([v.type for v in vs])
            else:
                if a is None and i not in op.optional:
                    raise InvalidArgumentError(f"{op.name}: argument '{op.input_names[i]}' is "
                                               f"required, got None")
                v = self.as_value(op, i, a, t)
                operands.append(v)
                types.append(None if v is None else v.type)
        try:
            res = op.infer(*types, **attrs)
        except FwError:
            raise
        except Exception as e:  # an infer bug must still say where it happened
            raise InvalidArgumentError(f"{op.name}: cannot infer the result type from "
                                       f"{types} and {attrs}: {type(e).__name__}: {e}") from e
        res_types = list(res) if isinstance(res, (tuple, list)) else [res]
        results = self._append(op, operands, attrs, res_types)
        return results[0] if op.num_outputs == 1 else tuple(results)

    def _append(self, op, operands, attrs, result_types, blocks=()):
        o = Operation(op, operands, _freeze(attrs), result_types, blocks, loc=user_location())
        self.block.append(o)
        self.program.touch()
        for r in o.results:
            r._sg = not any(v is not None and not v._sg for v in operands) \
                or not op.differentiable
        return o.results

    def append_op(self, op, operands, attrs, result_types, blocks=()) -> Operation:
        """Append a fully specified operation (used by control flow and passes)."""
        o = Operation(op, operands, _freeze(attrs), result_types, blocks, loc=user_location())
        self.block.append(o)
        self.program.touch()
        return o

    def set_outputs(self, outs) -> list:
        flat = _flatten(outs)
        vals = []
        for o in flat:
            if type(o) is Value:
                vals.append(o)
            elif isinstance(o, Tensor):
                vals.append(self.capture(o))
            elif isinstance(o, _SCALARS):
                vals.append(self.constant(o, _dt.scalar_dtype(o)))
            else:
                raise InvalidTypeError(f"a traced function must return tensors (or nested "
                                       f"tuples/lists of them), got {type(o).__name__}")
        self.program.block.outputs = vals
        self.program.touch()
        return vals


def _freeze(v):
    if isinstance(v, dict):
        return {k: _freeze(x) for k, x in v.items()}
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, tuple):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, np.generic):
        return v.item()
    return v


def _flatten(x) -> list:
    if isinstance(x, (list, tuple)):
        out = []
        for e in x:
            out.extend(_flatten(e))
        return out
    if isinstance(x, dict):
        out = []
        for k in x:
            out.extend(_flatten(x[k]))
        return out
    return [x]


def trace(fn, input_types, names=None) -> Program:
    """Run `fn` on symbolic inputs of `input_types` and return the Program it built.

    >>> import fw
    >>> from fw.core.ir import TensorType, trace
    >>> p = trace(lambda x: fw.relu(x) * 2.0, [TensorType([-1, 4], "float32")])
    """
    types = [t if isinstance(t, TensorType) else TensorType(*t) for t in input_types]
    names = list(names) if names is not None else [None] * len(types)
    b = Builder()
    with b:
        args = [b.add_input(t, n) for t, n in zip(types, names)]
        out = fn(*args)
        b.set_outputs(out)
    return b.program


class building:
    """Context manager: emit into `program` (a new one if None)."""

    def __init__(self, program: Program | None = None):
        self.builder = Builder(program)

    def __enter__(self) -> Builder:
        return self.builder.__enter__()

    def __exit__(self, *exc):
        return self.builder.__exit__(*exc)


class no_building:
    """Context manager: run ops eagerly even while a program is being built
    (parameter initialisation inside a traced function)."""

    def __enter__(self):
        self._prev = _state.builder
        _state.builder = None

    def __exit__(self, *exc):
        _state.builder = self._prev
        return False


def clone_ops(builder, ops, vmap) -> None:
    """Re-emit `ops` (with their nested blocks) into the builder's current block,
    reading values through `vmap` (original -> clone), which it extends with the
    results. Source locations and stop_gradient flags carry over. Used to re-emit a
    region elsewhere: a cond branch or loop body in its backward (fw-autograd), a
    pruned or specialised program (fw-jit)."""
    for op in ops:
        operands = [None if v is None else vmap.get(v, v) for v in op.operands]
        blocks = [clone_block(builder, blk, vmap) for blk in op.blocks]
        new = builder.append_op(op.opdef, operands, op.attrs, [r.type for r in op.results],
                                blocks)
        new.loc = op.loc
        for r, nr in zip(op.results, new.results):
            nr._sg = r._sg
            vmap[r] = nr


def clone_block(builder, blk, vmap, emit=clone_ops, arg_types=None) -> Block:
    """A new Block like `blk`: its args (of `arg_types` when given, else blk's), then
    its ops re-emitted into it by ``emit(builder, ops, vmap)``; `vmap` maps blk's
    values to the new ones."""
    nb = Block(builder.program)
    for k, a in enumerate(blk.args):
        na = nb.add_arg(a.type if arg_types is None else arg_types[k])
        na._sg = a._sg
        vmap[a] = na
    builder.push(nb)
    try:
        emit(builder, blk.ops, vmap)
        nb.outputs = [vmap.get(v, v) for v in blk.outputs]
    finally:
        builder.pop()
    return nb
