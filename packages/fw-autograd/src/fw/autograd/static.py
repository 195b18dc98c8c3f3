"""Reverse mode on IR programs: `gradients` and `append_backward`.

The backward is emitted into the program with the same VJP rules as eager mode:
a rule sees an `OpView` of the operation (the same ``ctx`` interface as an eager
node) and, since its inputs are IR Values, every fw op it calls emits an
operation. The walk is the textbook one: the operations between the inputs and
the targets are visited in reverse program order, each one's output gradients
are complete by then, and its rule adds the input gradients.

Control flow:

- ``cond``: its gradient is a ``cond`` of gradients on the same predicate. Each
  branch of the backward ``cond`` re-emits the forward operations of the
  corresponding branch (their values live in the forward branch's region and
  cannot be used outside it) and differentiates them with respect to the
  outer values the branch reads.
- ``while``: the trip count is known only at run time, so the gradient is two
  loops. The first re-runs the forward loop from its initial values and stacks
  the loop variables each iteration starts from (one ``concat`` per iteration
  and variable, so n iterations copy O(n^2) elements: fine for the tens of
  steps of an RNN or a solver, not meant for millions). The second runs as many
  iterations backwards: it picks the iteration's start values from the stacks,
  re-emits the body on them, differentiates it (with respect to the loop
  variables and to the outer values the body reads) and carries the loop
  variables' gradients and the outer values' accumulated gradients. Random ops
  in a loop body (or a cond branch) draw again when re-emitted, so their
  gradients do not match the forward's draw.

Shapes: rules work with static shapes; dynamic (-1) dimensions are handled where
a rule can do it with shape-polymorphic ops (elementwise, reductions, reshape
with one dynamic dim, ``expand_as``/``reduce_as`` for broadcasting) and raise
`UnsupportedError` otherwise.
"""

from __future__ import annotations

from fw.autograd._registry import RULES
from fw.autograd._shapes import unbroadcast
from fw.autograd.errors import GradientError
from fw.core.errors import InternalError, InvalidArgumentError, UnsupportedError
from fw.core.internal import build_state
from fw.core.ir.builder import Builder, clone_ops
from fw.core.ir.core import Block, Operation, Program, Value, current_builder
from fw.core.ir.types import DYN

__all__ = ["gradients", "append_backward", "OpView"]

_create_graph = [False]  # set by `gradients` for the rules it runs


class OpView:
    """The ``ctx`` of a VJP rule for an IR operation (see _registry.py)."""

    def __init__(self, op: Operation, want):
        self._op = op
        # whether this backward must itself be differentiable (fw.grad with
        # create_graph=True on Values); rules use fast non-differentiable backward
        # ops only when it need not be (see rules/_explicit.py)
        self.create_graph = _create_graph[0]
        self.op = op.opdef
        self.attrs = dict(op.attrs)
        self.want = want  # per operand slot
        d = op.opdef
        v = d.variadic
        n = len(d.inputs)
        self.nvar = len(op.operands) - (n - 1) if v >= 0 else -1

    @property
    def name(self):
        return self.op.name

    @property
    def inputs(self) -> list:
        d = self.op
        ops = self._op.operands
        v = d.variadic
        if v < 0:
            return list(ops)
        k = self.nvar
        return list(ops[:v]) + [list(ops[v:v + k])] + list(ops[v + k:])

    @property
    def outputs(self) -> tuple:
        return tuple(self._op.results)

    def _slot(self, i):
        v = self.op.variadic
        if v < 0 or i <= v:
            return i
        return i + self.nvar - 1

    def count(self, i):
        return self.nvar if i == self.op.variadic else 1

    def needs(self, i, j=None):
        v = self.op.variadic
        if i == v:
            if j is None:
                return any(self.want[v + k] for k in range(self.nvar))
            return self.want[v + j]
        return self.want[self._slot(i)]

    def _operand(self, i, j=None):
        return self._op.operands[self._slot(i) + (j or 0)]

    def shape(self, i, j=None):
        return list(self._operand(i, j).type.shape)

    def dtype(self, i, j=None):
        return self._operand(i, j).type.dtype


# ---------------------------------------------------------------- helpers
def _program_of(v: Value) -> Program:
    o = v.owner
    blk = o.parent if isinstance(o, Operation) else o
    while blk is not None and blk.program is None and blk.parent is not None:
        blk = blk.parent.parent
    if blk is None or blk.program is None:
        raise InvalidArgumentError(f"{v!r} does not belong to a program")
    return blk.program


def _scope_ops(block: Block) -> list:
    """The operations visible from `block`, in program order: those of the enclosing
    blocks before the operation holding it, then its own."""
    ops = list(block.ops)
    b = block
    while b.parent is not None:
        holder = b.parent
        outer = holder.parent
        ops = outer.ops[:outer.ops.index(holder)] + ops
        b = outer
    return ops


def _reads(op) -> list:
    """Values `op` reads: its operands and, for control flow, the outer values its
    blocks use."""
    seen = [v for v in op.operands if v is not None]
    for b in op.blocks:
        inner = set(b.args)
        for o in b.ops:
            inner.update(o.results)
        for o in b.ops:
            for v in _reads(o):
                if v not in inner:
                    seen.append(v)
        for v in b.outputs:
            if v not in inner:
                seen.append(v)
    return seen


def _captures(block: Block) -> list:
    inner = set(block.args)
    for o in block.ops:
        inner.update(o.results)
    out = []
    seen = set()  # (Values compare with ==, which is an op: membership goes by identity)
    for v in [v for o in block.ops for v in _reads(o)] + list(block.outputs):
        if v not in inner and v not in seen:
            seen.add(v)
            out.append(v)
    return out


def _inexact(v) -> bool:
    return v.type.dtype.is_inexact


def _zeros_like(v):
    import fw

    return fw.zeros_like(v)


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _fit(g, v, op):
    """Cast `g` to `v`'s dtype (real part for real v) and sum it to v's shape."""
    import fw

    if type(g) is not Value:
        g = fw.to_tensor(g, dtype=v.type.dtype) if not isinstance(g, fw.Tensor) else g
        g = current_builder().capture(g)
    vt, gt = v.type, g.type
    if gt.dtype is not vt.dtype:
        if gt.dtype.is_complex and not vt.dtype.is_complex:
            g = fw.real(g)
        if g.type.dtype is not vt.dtype:
            g = fw.cast(g, vt.dtype)
    gs, vs = tuple(g.type.shape), tuple(vt.shape)
    # a dynamic dim may hide a broadcast (size 1 at run time) in any op that takes two
    # tensors: elementwise ops, and others that broadcast them (masked_select, where,
    # the losses, ...)
    maybe_bcast = sum(1 for x in op.operands if x is not None) > 1
    if gs == vs and (DYN not in vs or not maybe_bcast):
        return g
    if DYN not in gs and DYN not in vs:
        return unbroadcast(g, vs, op.name)
    # dynamic dims: the runtime decides what was broadcast
    return fw.reduce_as(g, v)


# ---------------------------------------------------------------- the walk
def _dependent(ops, sources, blocked):
    """Values computed (differentiably) from `sources` by `ops`."""
    dep = set(v for v in sources if v not in blocked)
    for op in ops:
        if not op.opdef.differentiable and op.name not in ("cond", "while"):
            continue
        if any(v in dep for v in _reads(op)):
            for r in op.results:
                if _inexact(r) and r not in blocked:
                    dep.add(r)
    return dep


def _grad_ops(ops, targets, target_grads, inputs, blocked=frozenset()):
    """Emit the gradients of `targets` (seeded with `target_grads`) with respect to
    `inputs`, differentiating `ops` (in program order). Returns one gradient (a
    Value) or None per input."""
    dep = _dependent(ops, inputs, blocked)
    grads: dict = {}
    for t, g in zip(targets, target_grads):
        if t in dep and g is not None:
            grads[t] = _add(grads.get(t), g)
    # only the ops some target depends on: walk back from the targets
    needed = set(targets)
    live = []
    for op in reversed(ops):
        if any(r in needed for r in op.results):
            live.append(op)
            needed.update(_reads(op))
    for op in live:  # reverse program order
        outs = op.results
        if not any(r in grads for r in outs):
            continue
        reads = _reads(op)
        if not any(v in dep for v in reads):
            continue
        if op.name == "while":
            _while_grad(op, grads, dep, blocked)
            continue
        if op.name == "cond":
            _cond_grad(op, grads, dep, blocked)
            continue
        if not op.opdef.differentiable:
            continue
        rule = RULES.get(op.name)
        if rule is None:
            raise UnsupportedError(
                f"{op.name}: no gradient rule is registered for this op, so the program cannot "
                f"be differentiated through it (add one with @vjp({op.name!r}) in "
                f"fw/autograd/rules/)")
        want = [v is not None and v in dep and _inexact(v) for v in op.operands]
        if not any(want):
            continue
        if len(outs) == 1 and not op.opdef.variadic_out:
            g = grads.get(outs[0])
        else:
            g = tuple(grads.get(r) if r in grads else
                      (_zeros_like(r) if _inexact(r) else None) for r in outs)
        view = OpView(op, want)
        res = rule.fn(view, g)
        flat = _flatten(view, res)
        for v, w, gv in zip(op.operands, want, flat):
            if w and gv is not None:
                grads[v] = _add(grads.get(v), _fit(gv, v, op))
    return [grads.get(x) for x in inputs]


def _flatten(view, res):
    d = view.op
    n = len(d.inputs)
    v = d.variadic
    if n == 1:
        if v == 0:
            if isinstance(res, (tuple, list)) and len(res) == 1 and \
                    isinstance(res[0], (list, tuple)):
                res = res[0]
            return list(res)
        if isinstance(res, (tuple, list)):
            res = res[0]
        return [res]
    if not isinstance(res, (tuple, list)) or len(res) != n:
        raise InternalError(f"the VJP rule of '{d.name}' must return {n} gradients")
    if v < 0:
        return list(res)
    out = []
    for i, r in enumerate(res):
        if i == v:
            out.extend(list(r) if r is not None else [None] * view.nvar)
        else:
            out.append(r)
    return out


def _emit(builder, blk, values) -> list:
    """Re-emit block `blk` into the builder's current block, its args read as `values`;
    returns its outputs there."""
    vmap = dict(zip(blk.args, values))
    clone_ops(builder, blk.ops, vmap)
    return [vmap.get(v, v) for v in blk.outputs]


def _cond_grad(op, grads, dep, blocked):
    """The gradient of a cond: a cond (same predicate) whose branches recompute the
    forward branch and differentiate it with respect to the outer values it reads."""
    from fw.core.ir import control

    builder = build_state.builder
    caps = []
    for b in op.blocks:
        for v in _captures(b):
            if v in dep and _inexact(v) and all(v is not c for c in caps):
                caps.append(v)
    if not caps:
        return
    gouts = [grads.get(r) if r in grads else (_zeros_like(r) if _inexact(r) else None)
             for r in op.results]

    def branch(blk):
        def fn():
            outs = _emit(builder, blk, ())
            gs = _grad_ops(_scope_ops(builder.block), outs, gouts, caps, blocked)
            return [g if g is not None else _zeros_like(c) for g, c in zip(gs, caps)]
        return fn

    res = control.cond(op.operands[0], branch(op.blocks[0]), branch(op.blocks[1]))
    res = res if isinstance(res, (list, tuple)) else [res]
    for c, g in zip(caps, res):
        grads[c] = _add(grads.get(c), g)


def _while_grad(op, grads, dep, blocked):
    """The gradient of a while op: a recording re-run of the loop, then a reverse loop
    over the recorded iterations (see the module doc)."""
    import fw
    from fw.core.ir import control

    if op.attrs.get("records_iterations"):
        raise UnsupportedError(
            "while: gradients of order 2 and higher through a while loop are not supported in "
            "static programs (the first-order backward of a loop records each iteration's "
            "values in stacks whose length changes every iteration, and those cannot be "
            "differentiated again). Take higher-order derivatives of loops eagerly, or unroll "
            "the loop (a Python loop over a known trip count)")
    builder = build_state.builder
    cblk, bblk = op.blocks
    init = list(op.operands)
    n = len(init)
    diff = [k for k in range(n) if _inexact(op.results[k])]
    caps = [v for v in _captures(bblk) if v in dep and _inexact(v)]
    if not diff and not caps:
        return
    gouts = [grads.get(op.results[k]) if op.results[k] in grads else
             _zeros_like(op.results[k]) for k in diff]

    def emit(blk, values):
        return _emit(builder, blk, values)

    # 1. the loop again, stacking the values each iteration starts from
    def rec_cond(*vs):
        return emit(cblk, vs[:n])[0]

    def rec_body(*vs):
        carries, stacks, count = vs[:n], vs[n:2 * n], vs[2 * n]
        grown = [fw.concat([s, fw.unsqueeze(c, 0)], axis=0) for s, c in zip(stacks, carries)]
        return emit(bblk, carries) + grown + [count + 1]

    empty = [fw.unsqueeze(v, 0)[:0] for v in init]
    zero = fw.full([], 0, dtype="int64")
    rec = control.while_loop(rec_cond, rec_body, init + empty + [zero])
    rec[0].owner.attrs["records_iterations"] = True
    stacks, count = rec[n:2 * n], rec[2 * n]

    # 2. the iterations in reverse: gradients of the loop variables and the outer values
    nd = len(diff)

    def back_cond(i, *_):
        return i > 0

    def back_body(i, *gs):
        j = i - 1
        at = fw.reshape(j, [1])
        starts = [fw.squeeze(fw.gather(s, at, axis=0), axis=0) for s in stacks]
        outs = emit(bblk, starts)
        wrt = [starts[k] for k in diff] + caps
        res = _grad_ops(_scope_ops(builder.block), [outs[k] for k in diff], list(gs[:nd]), wrt,
                        blocked)
        new = [g if g is not None else _zeros_like(w) for g, w in zip(res[:nd], wrt[:nd])]
        acc = [a if g is None else a + g for a, g in zip(gs[nd:], res[nd:])]
        return [j] + new + acc

    back = control.while_loop(back_cond, back_body,
                              [count] + gouts + [_zeros_like(c) for c in caps])
    for k, g in zip(diff, back[1:1 + nd]):
        v = init[k]
        if v in dep and _inexact(v):
            grads[v] = _add(grads.get(v), g)
    for c, g in zip(caps, back[1 + nd:]):
        grads[c] = _add(grads.get(c), g)


# ---------------------------------------------------------------- public
def _enter(program):
    b = build_state.builder
    if b is not None and b.program is program:
        return b, None
    nb = Builder(program)
    nb.__enter__()
    return nb, nb


def gradients(targets, inputs, target_gradients=None, no_grad_set=None, allow_unused=False,
              create_graph=False):
    """Emit the backward of `targets` with respect to `inputs` into their program
    (``paddle.static.gradients``). Returns one gradient Value (or None) per input.

    Works inside a program being built (``fw.grad`` on Values calls it) and on a
    finished program (the ops are appended to it). With ``create_graph=True`` the
    emitted backward is made of differentiable ops, so it can be differentiated
    again (higher-order gradients); otherwise rules may use the faster explicit
    backward ops (conv_grad_weight, batch_norm_grad, …), as eager backward does.

    Args:
        targets (Value|list): the values to differentiate.
        inputs (Value|list): the values to differentiate with respect to.
        target_gradients (list, optional): initial gradients of `targets` (None: ones).
            Default: None.
        no_grad_set (set, optional): values (or names) treated as constants. Default: None.
        allow_unused (bool, optional): return None for an input the targets do not depend
            on (otherwise that raises). Default: False.
        create_graph (bool, optional): emit a differentiable backward (for higher-order
            gradients). Default: False.

    Returns:
        list, one gradient Value (or None) per input.

    Examples:
        >>> import fw
        >>> from fw.core.ir import TensorType, building
        >>> from fw.autograd import gradients
        >>> with building() as b:
        ...     x = b.add_input(TensorType([2], "float32"), "x")
        ...     y = (x * x).sum()
        ...     (gx,) = gradients([y], [x])
        >>> gx.type.shape
        (2,)
    """
    targets = list(targets)
    inputs = list(inputs)
    if not targets:
        raise GradientError("gradients: no targets")
    for t in targets + inputs:
        if type(t) is not Value:
            raise GradientError(f"gradients: expected IR Values, got {type(t).__name__}")
    program = _program_of(targets[0])
    builder, own = _enter(program)
    try:
        import fw

        tg = list(target_gradients) if target_gradients is not None else [None] * len(targets)
        seeds = []
        for t, g in zip(targets, tg):
            if g is None:
                g = fw.ones_like(t)
            elif type(g) is not Value:
                g = builder.capture(g if isinstance(g, fw.Tensor) else fw.to_tensor(g))
            seeds.append(g)
        blocked = frozenset(no_grad_set or ())
        ops = _scope_ops(builder.block)
        prev = _create_graph[0]
        _create_graph[0] = bool(create_graph)
        try:
            res = _grad_ops(ops, targets, seeds, inputs, blocked)
        finally:
            _create_graph[0] = prev
    finally:
        if own is not None:
            own.__exit__(None, None, None)
    for x, g in zip(inputs, res):
        if g is None and not allow_unused:
            raise GradientError(f"gradients: input {x!r} is not reachable from the targets; "
                                f"pass allow_unused=True to get None for it")
    return res


def append_backward(*args, **kwargs):
    """Append the backward of `loss` to its program (``paddle.static.append_backward``).

    Call it as ``append_backward(loss, parameter_list=None, no_grad_set=None)``
    (Paddle's form; ``callbacks`` and ``checkpoints`` are accepted and ignored) or
    ``append_backward(program, loss, parameter_list=None, no_grad_set=None)``.

    Args:
        loss: the scalar loss Value.
        parameter_list: the Values (or parameter names) to differentiate; default:
            every trainable parameter of the program.
        no_grad_set: Values (or names) treated as constants.

    Returns:
        ``[(param, grad)]`` for the parameters the loss depends on.

    Examples:
        >>> import fw
        >>> from fw.core.ir import TensorType, building
        >>> from fw.autograd import append_backward
        >>> w = fw.to_tensor([2.0, 3.0], stop_gradient=False)
        >>> w.trainable, w.name = True, "w"
        >>> with building() as b:
        ...     x = b.add_input(TensorType([2], "float32"), "x")
        ...     loss = (x * w).sum()
        >>> [(p.label, g.type.shape) for p, g in append_backward(loss)]
        [('w', (2,))]
    """
    program = None
    if args and isinstance(args[0], Program):
        program, args = args[0], args[1:]
    names = ("loss", "parameter_list", "no_grad_set", "callbacks", "checkpoints",
             "distop_context")
    if len(args) > len(names):
        raise TypeError(f"append_backward takes at most {len(names)} arguments")
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in bound:
            raise TypeError(f"append_backward got an unexpected or repeated argument {k!r}")
        bound[k] = v
    loss = bound.get("loss")
    if type(loss) is not Value:
        raise GradientError(f"append_backward: loss must be an IR Value, got "
                            f"{type(loss).__name__}")
    program = program or _program_of(loss)
    parameter_list = bound.get("parameter_list")
    if parameter_list is None:
        params = [a for a in program.parameters() if not a._sg]
    else:
        params = [_resolve(program, p) for p in parameter_list]
    blocked = {_resolve(program, v) for v in (bound.get("no_grad_set") or ())}
    params = [p for p in params if p not in blocked]  # a set: membership by identity
    grads = gradients([loss], params, None, blocked, allow_unused=True)
    return [(p, g) for p, g in zip(params, grads) if g is not None]


def _resolve(program, p):
    if type(p) is Value:
        return p
    name = getattr(p, "name", p)
    for a in program.block.args:
        if a.label == name:
            return a
    raise InvalidArgumentError(f"append_backward: no value named {name!r} in the program")
