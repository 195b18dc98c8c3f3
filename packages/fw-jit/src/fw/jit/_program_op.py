"""A Program callable as one differentiable op.

`ProgramGrad(program)` runs a traced forward program on tensors and, when
autograd needs it, records ONE tape node for the whole call (a `PyLayer`): its
backward runs a backward program. Both programs come from one *joint* program,
built once per "which inputs need gradients" mask:

1. the forward ops are re-emitted into a new program with one extra input per
   floating output (the output's gradient), and `fw.autograd.gradients` appends
   the backward ops with the same VJP rules as eager mode;
2. the joint program is split: the forward program returns the user outputs plus
   the *residuals* (the forward values the backward ops read); the backward
   program takes the output gradients and the residuals and returns the
   gradients of the inputs and trainable parameters that need them.

So a step costs one forward and one backward run, as in eager mode, and the
gradients are the eager ones (same rules, same kernels). `fw.jit.load`'s
`TranslatedLayer` uses the same facility. Higher-order gradients through a
program call are not available (the backward is run, not recorded).
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import UnsupportedError
from fw.core.ir.builder import Builder, clone_block, clone_ops
from fw.core.ir.core import Program
from fw.core.ir.executor import Compiled
from fw.core.tensor import Tensor, wrap
from fw.jit import _nan_check

__all__ = ["ProgramGrad"]


def _inexact(t) -> bool:
    return t.dtype.is_inexact


def reemit_ops(builder, ops, vmap) -> None:
    """Like `clone_ops`, but each op's result types are inferred again from its
    (possibly more precise) operand types: specialises a program with dynamic
    dims to concrete input shapes. ``cond``/``while`` keep their recorded result
    and carried types; the ops inside them are re-inferred."""
    from fw.core.ir.control import join_types

    for op in ops:
        operands = [None if v is None else vmap.get(v, v) for v in op.operands]
        if not op.blocks:
            d = op.opdef
            args = operands
            if d.variadic >= 0:
                k = len(args) - (len(d.input_names) - 1)
                args = args[:d.variadic] + [args[d.variadic:d.variadic + k]] + \
                    args[d.variadic + k:]
            res = builder.emit(d, args, dict(op.attrs))
            res = res if isinstance(res, tuple) else (res,)
            for r, nr in zip(op.results, res):
                vmap[r] = nr
            continue
        arg_types = [v.type for v in operands] if op.name == "while" else None
        for _attempt in range(4):  # a while's carried types widen until stable
            blocks = [clone_block(builder, blk, vmap, reemit_ops, arg_types)
                      for blk in op.blocks]
            if arg_types is None:
                break
            widened = [join_types(t, y.type, "while") for t, y in
                       zip(arg_types, blocks[1].outputs)]
            if widened == arg_types:
                break
            arg_types = widened
        types = [r.type for r in op.results] if arg_types is None else list(arg_types)
        if op.name == "cond" and len(blocks) == 2:
            types = [join_types(x.type, y.type, "cond") for x, y in
                     zip(blocks[0].outputs, blocks[1].outputs)]
        new = builder.append_op(op.opdef, operands, op.attrs, types, blocks)
        new.loc = op.loc
        for r, nr in zip(op.results, new.results):
            nr._sg = r._sg
            vmap[r] = nr


def specialize(program, shapes):
    """A copy of `program` (same captured tensors) whose inputs have the concrete
    `shapes`, every type re-inferred (see `reemit_ops`)."""
    from fw.core.ir.types import TensorType

    b = Builder()
    prog = b.program
    prog.captured = program.captured
    vmap = {}
    with b:
        ins = iter(shapes)
        for a in program.block.args:
            t = TensorType(next(ins), a.type.dtype) if a.role == "input" else a.type
            v = prog.block.add_arg(t, a.role, a.label)
            v._sg = a._sg
            vmap[a] = v
        b._captured.clear()
        for a in program.block.args:
            if a.role != "input":
                b._captured[id(program.captured[a.label])] = vmap[a]
        reemit_ops(b, program.block.ops, vmap)
    prog.block.outputs = [vmap.get(o, o) for o in program.outputs]
    for label, v in program.updates:
        prog.updates.set(label, vmap.get(v, v))
    prog.touch()
    return prog


def inline_program(program, inputs) -> list:
    """Emit `program`'s ops into the program being built (the current builder),
    reading `inputs` (Values or Tensors, one per program input) and the program's
    captured tensors (captured by the current program); returns the output Values.
    State updates of `program` become updates of the current program."""
    from fw.core.internal import build_state
    from fw.core.ir.core import Value

    b = build_state.builder
    vmap = {}
    ins = iter(inputs)
    for a in program.block.args:
        if a.role == "input":
            x = next(ins)
            vmap[a] = x if type(x) is Value else b.capture(x)
        else:
            vmap[a] = b.capture(program.captured[a.label])
    reemit_ops(b, program.block.ops, vmap)
    for label, v in program.updates:
        b.record_update(program.captured[label], vmap.get(v, v))
    return [vmap.get(o, o) for o in program.outputs]


def _uses(op) -> list:
    out = [v for v in op.operands if v is not None]
    for b in op.blocks:
        inner = set(b.args)
        for o in b.ops:
            inner.update(o.results)
        for o in b.ops:
            out.extend(v for v in _uses(o) if v not in inner)
        out.extend(v for v in b.outputs if v not in inner)
    return out


def _remap(block, rmap) -> None:
    for op in block.ops:
        op.operands = [None if v is None else rmap.get(v, v) for v in op.operands]
        for b in op.blocks:
            _remap(b, rmap)
    block.outputs = [rmap.get(v, v) for v in block.outputs]


def _set_program(block, program) -> None:
    block.program = program
    for op in block.ops:
        for b in op.blocks:
            _set_program(b, program)


class _Variant:
    """The forward/backward pair for one mask of inputs/params needing gradients."""

    def __init__(self, program, in_mask, param_labels, n_diff_outputs):
        from fw.autograd import gradients

        b = Builder()
        prog = b.program
        prog.captured = program.captured
        vmap = {}
        with b:
            new_inputs = []
            for a in program.block.args:
                if a.role == "input":
                    v = prog.block.add_arg(a.type, "input", a.label)
                    new_inputs.append(v)
                else:
                    v = prog.block.add_arg(a.type, a.role, a.label)
                v._sg = a._sg
                vmap[a] = v
            b._captured.clear()
            clone_ops(b, program.block.ops, vmap)
            outs = [vmap.get(o, o) for o in program.outputs]
            n_fwd = len(prog.block.ops)
            diff_out = [k for k, o in enumerate(outs[:n_diff_outputs]) if _inexact(o.type)]
            gouts = [prog.block.add_arg(outs[k].type, "input", f"__grad_out_{k}")
                     for k in diff_out]
            targets = [v for v, m in zip(new_inputs, in_mask) if m]
            targets += [vmap[a] for a in program.block.args
                        if a.role in ("param", "const") and a.label in param_labels]
            grads = gradients([outs[k] for k in diff_out], targets, gouts,
                              allow_unused=True) if diff_out and targets else \
                [None] * len(targets)
        for label, v in program.updates:
            prog.updates.set(label, vmap.get(v, v))
        self.diff_out = diff_out
        self.n_outputs = len(outs)
        # ---- split
        blk = prog.block
        fwd_ops, bwd_ops = blk.ops[:n_fwd], blk.ops[n_fwd:]
        gout_set = set(gouts)
        fwd_defined = set(a for a in blk.args if a not in gout_set)
        for op in fwd_ops:
            fwd_defined.update(op.results)
        residuals: list = []
        seen = set()
        for v in [u for op in bwd_ops for u in _uses(op)] + [g for g in grads if g is not None]:
            if v in fwd_defined and v not in seen:
                seen.add(v)
                residuals.append(v)
        # backward program
        B = Program()
        rmap = {}
        for g in gouts:
            rmap[g] = B.block.add_arg(g.type, "input", g.label)
        for k, r in enumerate(residuals):
            rmap[r] = B.block.add_arg(r.type, "input", f"__residual_{k}")
        for op in bwd_ops:
            op.parent = B.block
            B.block.ops.append(op)
            for nb in op.blocks:
                _set_program(nb, B)
        _remap(B.block, rmap)
        self.grad_slots = [k for k, g in enumerate(grads) if g is not None]
        B.block.outputs = [rmap.get(grads[k], grads[k]) for k in self.grad_slots]
        B.touch()
        # forward program: the joint one without the backward ops and gradient inputs
        blk.ops[:] = fwd_ops
        blk.args[:] = [a for a in blk.args if a not in gout_set]
        for i, a in enumerate(blk.args):
            a.index = i
        blk.outputs = outs + residuals
        prog.touch()
        self.forward_program = prog
        self.backward_program = B
        self.n_residuals = len(residuals)
        targets_labels = set(a.label for a in blk.args if a.role in ("param", "const"))
        update_targets = set(prog.updates.labels)
        # residuals that are captured tensors the program writes: copied at forward
        self._copy_residual = [r.owner is blk and r.role in ("param", "const") and
                               r.label in update_targets and r.label in targets_labels
                               for r in residuals]
        self.fwd = Compiled(prog)
        self.bwd = Compiled(B)
        self.n_targets = len(targets)


class _Deferred:
    """A program whose backward cannot be built (e.g. a ``while`` op between the
    inputs and the outputs): the forward runs as usual and the gradient error is
    raised only if a backward pass reaches the call."""

    def __init__(self, program, error, n_diff_outputs):
        self.error = error
        self.fwd = Compiled(program)
        self.n_outputs = len(program.outputs)
        self.diff_out = [k for k, o in enumerate(program.outputs[:n_diff_outputs])
                         if _inexact(o.type)]
        self._copy_residual = []
        self.n_targets = 0
        self._target_positions = []


def _checked(variant, which):
    """`variant.fwd`/`.bwd`, or in anomaly mode its twin that checks every op's
    output (`fw.jit._nan_check`), compiled on first use."""
    plain = getattr(variant, which)
    if not _nan_check.checking():
        return plain
    twins = variant.__dict__.setdefault("_checked", {})
    c = twins.get(which)
    if c is None:
        c = twins[which] = Compiled(plain.program, plain.backend,
                                    op_check=_nan_check.check_outputs)
    return c


class _Call:
    """The PyLayer class is made lazily (fw-autograd is imported on first use)."""

    cls = None

    @classmethod
    def get(cls):
        if cls.cls is None:
            from fw.autograd import PyLayer

            class ProgramCall(PyLayer):
                @staticmethod
                def forward(ctx, variant, n_in, *tensors):
                    arrays = [t._data for t in tensors[:n_in]]
                    outs = _checked(variant, "fwd")(arrays, check=False)
                    n = variant.n_outputs
                    res = outs[n:]
                    res = [r.copy() if c else r for r, c in zip(res, variant._copy_residual)]
                    ctx.variant = variant
                    ctx.residuals = res
                    ctx.n_tensors = len(tensors)
                    result = [wrap(np.asarray(o) if isinstance(o, np.generic) else o)
                              for o in outs[:n]]
                    diff = set(variant.diff_out)
                    for k, r in enumerate(result):
                        if k not in diff:
                            ctx.mark_non_differentiable(r)
                    return tuple(result)

                @staticmethod
                def backward(ctx, *grads):
                    v = ctx.variant
                    if isinstance(v, _Deferred):
                        from fw.core.errors import UnsupportedError

                        raise UnsupportedError(f"backward through a static program: "
                                               f"{v.error}")
                    gin = []
                    for k in v.diff_out:
                        g = grads[k]
                        gin.append(g._data if isinstance(g, Tensor) else g)
                    outs = _checked(v, "bwd")(gin + list(ctx.residuals), check=False)
                    got = [None] * v.n_targets
                    for slot, o in zip(v.grad_slots, outs):
                        got[slot] = wrap(np.asarray(o) if isinstance(o, np.generic) else o)
                    res = [None] * ctx.n_tensors
                    for slot, pos in enumerate(v._target_positions):
                        res[pos] = got[slot]
                    ctx.residuals = None
                    return tuple(res)

            cls.cls = ProgramCall
        return cls.cls


class ProgramGrad:
    """Runs `program` as one differentiable op (see the module docstring).

    Args:
        program: the forward program (its ``captured`` holds the parameters).
        n_diff_outputs: how many leading outputs gradients flow into (later outputs
            are auxiliary, e.g. values printed after the run).
    """

    def __init__(self, program, n_diff_outputs=None):
        self.program = program
        self.n_diff_outputs = len(program.outputs) if n_diff_outputs is None else \
            n_diff_outputs
        self._variants: dict = {}
        self.params = [(a.label, program.captured[a.label]) for a in program.block.args
                       if a.role in ("param", "const") and a.label in program.captured]
        self._dynamic = any(-1 in a.type.shape for a in program.inputs())

    def trainable(self) -> list:
        """The captured parameters that need gradients now: [(label, tensor)]."""
        return [(lab, t) for lab, t in self.params
                if isinstance(t, Tensor) and not t._sg and _inexact(t)]

    def needs_grad(self, inputs) -> bool:
        return any(not t._sg and _inexact(t) for t in inputs) or bool(self.trainable())

    def __call__(self, inputs) -> list:
        """Run on input Tensors with autograd recording: returns output Tensors. A
        program with dynamic input dims is specialised to the inputs' shapes first
        (gradient rules work with static shapes), once per shape."""
        in_mask = tuple(not t._sg and _inexact(t) for t in inputs)
        params = self.trainable()
        labels = tuple(lab for lab, _ in params)
        shapes = None
        if self._dynamic:
            shapes = tuple(tuple(t._data.shape) for t in inputs)
        key = (in_mask, labels, shapes)
        v = self._variants.get(key)
        if v is None:
            prog = self.program if shapes is None else specialize(self.program, shapes)
            try:
                v = _Variant(prog, in_mask, set(labels), self.n_diff_outputs)
            except UnsupportedError as e:
                self._variants[key] = _Deferred(self.program, e, self.n_diff_outputs)
                return list(_Call.get().apply(self._variants[key], len(inputs),
                                              *(list(inputs) + [t for _, t in params])))
            # tensor argument positions of each gradient target
            pos = [i for i, m in enumerate(in_mask) if m]
            n_in = len(inputs)
            label_pos = {}
            order = [a.label for a in self.program.block.args
                     if a.role in ("param", "const") and a.label in set(labels)]
            for j, lab in enumerate(labels):
                label_pos[lab] = n_in + j
            pos += [label_pos[lab] for lab in order]
            v._target_positions = pos
            self._variants[key] = v
        tensors = list(inputs) + [t for _, t in params]
        return list(_Call.get().apply(v, len(inputs), *tensors))
