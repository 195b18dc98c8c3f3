"""The verifier: is a Program well formed? Run after every pass (see
`fw.core.ir.passes.PassManager`) and on every loaded model file.

It checks, and reports every problem it finds at once (each with the op's line
in the text form):

- SSA: every value is defined once (a block argument or an op result) and every
  use is dominated by its definition: earlier in the same block, or in an
  enclosing block before the op holding the nested block;
- structure: ops name ops of the op table, each op's `parent` is its block,
  results belong to their op, block 0's arguments are inputs/params/consts with
  unique param/const labels, nested blocks have plain arguments;
- operands: the count matches the op's inputs (variadic and optional inputs
  accounted for), None only for optional inputs;
- attributes: only names the op declares, with values that have a text form;
- types: the recorded result types are *compatible* with what the op's `infer`
  gives for the operand types: same count, dtype and rank, and each dim equal
  unless one of them is -1. A recorded dim may be more precise than the
  re-inferred one (infer works from operand types alone: when an operand is
  dynamic, or for data-dependent sizes, infer says -1 where a pass or the
  tracer knew the size) and a recorded -1 may stand for a size infer knows;
  two different static sizes are an error. With ``strict_types=True`` (what
  `fw.core.ir.load` uses for a model file) a recorded dim must be -1 or the size
  infer gives: a file may not claim a size its operands do not determine (a
  "lying" type would only show up later, when a pass re-infers it, and be
  blamed on the pass);
- state updates (``program.updates``): each names a param/const of block 0 (at
  most once) and a value visible at the end of block 0 whose type is compatible
  with the target's (same dtype and rank, equal dims where both are known);
- control flow: ``cond`` has one bool scalar operand and two argument-less
  blocks whose yields match the result types; ``while`` has a cond block taking
  the carried values and yielding one bool scalar and a body block taking and
  yielding the carried types; the initial values match the carried types.

`verify_schedule(compiled)` checks what the executor made of a program (a
`fw.core.ir.executor.Compiled`): the IR itself is pure SSA, but the schedule
frees values, writes results into dying operands' buffers and lets optimizer
ops update parameters in place. Each of those ends the life of a buffer, and
no later step may read it (the write-after-read hazards of in-place updates):

- a value freed, or overwritten by a reused buffer, at step i is read by no
  step after i (a nested block's reads count for the op holding it) and is not
  a block output or a state update; only values of the block itself are freed
  or reused (a loop body must not free a value of the enclosing block);
- a reused buffer is an operand of its step and not a block-0 argument (inputs,
  params and consts belong to the caller);
- a param/const written in place at step i, and every value that may be a view
  of it (`fw.core.ir.executor.may_return_view`), is read by no later step and is
  not an output or a state update (those are read after the whole run).
"""

from __future__ import annotations

from fw.core.errors import FwError, InvalidArgumentError
from fw.core.ir.core import Block, Operation, Value
from fw.core.ir.types import DYN, TensorType

__all__ = ["verify", "VerificationError", "problems", "schedule_problems",
           "verify_schedule"]

_ATTR_TYPES = (type(None), bool, int, float, complex, str)


class VerificationError(InvalidArgumentError):
    """The program is not well formed. ``problems`` lists (line, message) pairs."""

    def __init__(self, message: str, problems: list):
        super().__init__(message)
        self.problems = problems


def _attr_ok(v) -> bool:
    from fw.core.dtypes import DType

    if isinstance(v, _ATTR_TYPES) or isinstance(v, DType):
        return True
    if isinstance(v, tuple):
        return all(_attr_ok(x) for x in v)
    return False


def _compatible(a: TensorType, b: TensorType) -> bool:
    return a.dtype is b.dtype and len(a.shape) == len(b.shape) and all(
        x == y or x == DYN or y == DYN for x, y in zip(a.shape, b.shape))


def _refines(rec: TensorType, given: TensorType) -> bool:
    """`rec` claims nothing `given` does not: each dim is -1 or `given`'s size."""
    return rec.dtype is given.dtype and len(rec.shape) == len(given.shape) and all(
        x == DYN or x == y for x, y in zip(rec.shape, given.shape))


_STRICT_HINT = ("a recorded size must be one the operand types give (-1 where they do not "
                "tell)")


def _is_scalar_bool(t: TensorType) -> bool:
    from fw.core import dtypes as _dt

    return t.dtype is _dt.bool_ and t.numel() in (1, DYN)


class _Verifier:
    def __init__(self, program, strict_types=False):
        self.program = program
        self.strict = strict_types
        self.found: list = []  # (op or None, message)
        self.defined: set = set()

    def problem(self, op, msg):
        self.found.append((op, msg))

    # ------------------------------------------------------------ values
    def define(self, op, v, what) -> bool:
        if not isinstance(v, Value):
            self.problem(op, f"{what} is a {type(v).__name__}, not a Value")
            return False
        if v in self.defined:
            self.problem(op, f"{what} ({v!r}) is defined twice; every value is assigned once")
            return False
        if not isinstance(v.type, TensorType):
            self.problem(op, f"{what} has no TensorType (type is {v.type!r})")
        self.defined.add(v)
        return True

    def use(self, op, v, visible, what) -> None:
        if not isinstance(v, Value):
            self.problem(op, f"{what} is a {type(v).__name__}, not a Value")
        elif v not in visible:
            self.problem(op, f"{what} uses a value ({v!r}) that is not defined before it in "
                             f"this block or an enclosing one (defined later, inside another "
                             f"block, or in another program)")

    # ------------------------------------------------------------ blocks
    def run(self) -> None:
        blk = self.program.block
        if blk.parent is not None:
            self.problem(None, "block 0 has a parent operation")
        labels: dict = {}
        for i, a in enumerate(blk.args):
            what = f"block 0 argument {i}"
            if not self.define(None, a, what):
                continue
            if a.owner is not blk or a.index != i:
                self.problem(None, f"{what} does not record block 0 / position {i} as its "
                                   f"owner")
            if a.role not in ("input", "param", "const"):
                self.problem(None, f"{what} has role {a.role!r}; block 0 arguments are "
                                   f"inputs, params or consts")
            elif a.role != "input":
                if not isinstance(a.label, str) or not a.label:
                    self.problem(None, f"{what} is a {a.role} without a name")
                elif a.label in labels:
                    self.problem(None, f"{a.role} name {a.label!r} is used by block 0 "
                                       f"arguments {labels[a.label]} and {i}")
                else:
                    labels[a.label] = i
        visible = set(blk.args)
        self.block(blk, visible, None)
        self.updates(blk, visible)

    def updates(self, blk, visible) -> None:
        ups = getattr(self.program, "updates", None)
        if not ups:
            return
        if len(ups.labels) != len(ups.outputs):
            self.problem(None, "the state updates have different numbers of labels and values")
            return
        targets = {a.label: a for a in blk.args if isinstance(a, Value) and
                   a.role in ("param", "const")}
        seen = set()
        for label, v in zip(ups.labels, ups.outputs):
            what = f"the state update of {label!r}"
            if label in seen:
                self.problem(None, f"{what} is given twice")
            seen.add(label)
            a = targets.get(label)
            if a is None:
                self.problem(None, f"{what}: {label!r} is not a param/const of block 0")
            self.use(None, v, visible, what)
            if a is not None and isinstance(v, Value) and isinstance(v.type, TensorType) and \
                    not _compatible(v.type, a.type):
                self.problem(None, f"{what}: the value is {v.type} but {label!r} is {a.type}")

    def block(self, block: Block, visible: set, owner) -> None:
        # One `visible` set for the whole walk: what a nested block defines is taken
        # out when it ends (a copy per nested block is quadratic with many ``cond``).
        own = [a for a in block.args if isinstance(a, Value) and a not in visible] \
            if owner is not None else []
        if owner is not None:
            for i, a in enumerate(block.args):
                what = f"block argument {i}"
                if self.define(owner, a, what):
                    if a.owner is not block or a.index != i:
                        self.problem(owner, f"{what} does not record its block / position as "
                                            f"its owner")
                    if a.role != "arg":
                        self.problem(owner, f"{what} of a nested block has role {a.role!r}")
                    visible.add(a)
        for op in block.ops:
            if not isinstance(op, Operation):
                self.problem(owner, f"the block holds a {type(op).__name__}, not an Operation")
                continue
            self.op(op, block, visible)
            for r in op.results:
                if isinstance(r, Value) and r not in visible:
                    visible.add(r)
                    own.append(r)
        for i, v in enumerate(block.outputs):
            self.use(owner, v, visible, f"{'return' if owner is None else 'yield'} value {i}")
        if owner is not None:
            visible.difference_update(own)

    # ------------------------------------------------------------ operations
    def op(self, op: Operation, block: Block, visible: set) -> None:
        from fw.core.ops._registry import OPS

        if op.parent is not block:
            self.problem(op, "the op's parent is not the block holding it (set op.parent when "
                             "inserting it)")
        opdef = op.opdef
        known = OPS.get(getattr(opdef, "name", None)) is opdef
        if not known:
            self.problem(op, f"op {getattr(opdef, 'name', opdef)!r} is not in the op table")
        for i, v in enumerate(op.operands):
            if v is not None:
                self.use(op, v, visible, f"operand {i}")
        attrs_ok = True
        if known:
            attrs_ok = self.operand_count(op)
            for k, v in op.attrs.items():
                if k not in opdef.attrs:
                    attrs_ok = False
                    self.problem(op, f"unknown attribute {k!r} (the op has "
                                     f"{list(opdef.attrs) or 'no attributes'})")
                if not _attr_ok(v):
                    attrs_ok = False
                    self.problem(op, f"attribute {k!r} has a value of type "
                                     f"{type(v).__name__}, which has no text form (attributes "
                                     f"are None, bool, int, float, complex, str, dtype or "
                                     f"tuples of those)")
        for b in op.blocks:
            if not isinstance(b, Block):
                self.problem(op, f"a nested block is a {type(b).__name__}")
                continue
            if b.parent is not op:
                self.problem(op, "a nested block does not record this op as its parent")
            self.block(b, visible, op)
        ok = True
        for i, r in enumerate(op.results):
            if self.define(op, r, f"result {i}"):
                if r.owner is not op or r.index != i:
                    self.problem(op, f"result {i} does not record this op / position {i} as "
                                     f"its owner")
            else:
                ok = False
        if known and ok and attrs_ok:  # (infer would only repeat an attribute problem)
            if op.name == "cond":
                self.cond(op)
            elif op.name == "while":
                self.while_(op)
            else:
                if op.blocks:
                    self.problem(op, f"{op.name} does not take nested blocks")
                self.types(op)

    def operand_count(self, op) -> bool:
        """Check the operands against the op's inputs; True when they fit."""
        n_problems = len(self.found)
        d = op.opdef
        n_in = len(d.input_names)
        n = len(op.operands)
        if d.variadic >= 0:
            if n < n_in - 1:
                self.problem(op, f"{op.name} takes at least {n_in - 1} operands "
                                 f"({', '.join(d.inputs)}), got {n}")
                return False
            k = n - (n_in - 1)  # operands in the variadic group
            groups = []
            for i in range(n_in):
                if i < d.variadic:
                    groups.append((i, [i]))
                elif i == d.variadic:
                    groups.append((i, list(range(i, i + k))))
                else:
                    groups.append((i, [i + k - 1]))
        else:
            if n != n_in:
                self.problem(op, f"{op.name} takes {n_in} operands ({', '.join(d.inputs)}), "
                                 f"got {n}")
                return False
            groups = [(i, [i]) for i in range(n_in)]
        for i, idx in groups:
            if i == d.variadic or i in d.optional:
                if i == d.variadic:
                    for j in idx:
                        if op.operands[j] is None:
                            self.problem(op, f"operand {j} (in the variadic input "
                                             f"'{d.input_names[i]}') is none")
                continue
            if op.operands[idx[0]] is None:
                self.problem(op, f"operand {idx[0]} ('{d.input_names[i]}') is required but is "
                                 f"none")
        return len(self.found) == n_problems

    def _grouped_types(self, op):
        d = op.opdef
        ts = [None if v is None else v.type for v in op.operands]
        if d.variadic < 0:
            return ts
        k = len(ts) - (len(d.input_names) - 1)
        return ts[:d.variadic] + [ts[d.variadic:d.variadic + k]] + ts[d.variadic + k:]

    def types(self, op) -> None:
        if any(v is not None and not isinstance(getattr(v, "type", None), TensorType)
               for v in op.operands):
            return
        try:
            res = op.opdef.infer(*self._grouped_types(op), **op.attrs)
        except FwError as e:
            self.problem(op, f"the op rejects its operand types: {e}")
            return
        except Exception as e:  # infer bug or an attribute of the wrong kind
            self.problem(op, f"inferring the result types failed: {type(e).__name__}: {e}")
            return
        inferred = list(res) if isinstance(res, (tuple, list)) else [res]
        if len(inferred) != len(op.results):
            self.problem(op, f"{op.name} gives {len(inferred)} results, the op records "
                             f"{len(op.results)}")
            return
        for i, (r, t) in enumerate(zip(op.results, inferred)):
            if not isinstance(t, TensorType):
                self.problem(op, f"infer gave {t!r} for result {i}, not a TensorType")
            elif not _compatible(r.type, t):
                self.problem(op, f"result {i} is recorded as {r.type} but the operand types "
                                 f"give {t}")
            elif self.strict and not _refines(r.type, t):
                self.problem(op, f"result {i} is recorded as {r.type} but the operand types "
                                 f"give {t} ({_STRICT_HINT})")

    # ------------------------------------------------------------ control flow
    def _yields(self, op, blk, types, what) -> None:
        outs = blk.outputs
        if len(outs) != len(types):
            self.problem(op, f"{what} yields {len(outs)} values, expected {len(types)}")
            return
        for i, (v, t) in enumerate(zip(outs, types)):
            if isinstance(v, Value) and not _compatible(v.type, t):
                self.problem(op, f"{what} yields {v.type} for value {i}, expected {t}")
            elif isinstance(v, Value) and self.strict and not _refines(t, v.type):
                self.problem(op, f"result {i} is recorded as {t} but {what} yields {v.type} "
                                 f"({_STRICT_HINT})")

    def cond(self, op) -> None:
        if len(op.operands) != 1 or op.operands[0] is None:
            self.problem(op, f"cond takes one operand (the predicate), got "
                             f"{len(op.operands)}")
        elif not _is_scalar_bool(op.operands[0].type):
            self.problem(op, f"the predicate of cond must be a bool scalar, got "
                             f"{op.operands[0].type}")
        if len(op.blocks) != 2:
            self.problem(op, f"cond holds two blocks (then, else), got {len(op.blocks)}")
            return
        types = [r.type for r in op.results]
        for name, b in zip(("then", "else"), op.blocks):
            if b.args:
                self.problem(op, f"the {name} block of cond takes no arguments, got "
                                 f"{len(b.args)}")
            self._yields(op, b, types, f"the {name} block")

    def while_(self, op) -> None:
        types = [r.type for r in op.results]
        if len(op.operands) != len(types):
            self.problem(op, f"while carries {len(types)} values (results) but has "
                             f"{len(op.operands)} initial values")
        for i, (v, t) in enumerate(zip(op.operands, types)):
            if v is None:
                self.problem(op, f"initial value {i} is none")
            elif not _compatible(v.type, t):
                self.problem(op, f"initial value {i} is {v.type} but the loop carries {t}")
            elif self.strict and not _refines(t, v.type):
                self.problem(op, f"the loop carries {t} but initial value {i} is {v.type} "
                                 f"({_STRICT_HINT})")
        if len(op.blocks) != 2:
            self.problem(op, f"while holds two blocks (cond, body), got {len(op.blocks)}")
            return
        for name, b in zip(("cond", "body"), op.blocks):
            if len(b.args) != len(types):
                self.problem(op, f"the {name} block takes {len(b.args)} arguments, expected "
                                 f"the {len(types)} carried values")
                continue
            for i, (a, t) in enumerate(zip(b.args, types)):
                if isinstance(a, Value) and not _compatible(a.type, t):
                    self.problem(op, f"argument {i} of the {name} block is {a.type}, the loop "
                                     f"carries {t}")
                elif isinstance(a, Value) and self.strict and not _refines(a.type, t):
                    self.problem(op, f"argument {i} of the {name} block is {a.type}, the loop "
                                     f"carries {t} ({_STRICT_HINT})")
        cb, bb = op.blocks
        if len(cb.outputs) != 1:
            self.problem(op, f"the cond block yields {len(cb.outputs)} values, expected one "
                             f"bool scalar")
        elif isinstance(cb.outputs[0], Value) and not _is_scalar_bool(cb.outputs[0].type):
            self.problem(op, f"the cond block yields {cb.outputs[0].type}, expected a bool "
                             f"scalar")
        self._yields(op, bb, types, "the body block")


def problems(program, strict_types: bool = False) -> list:
    """Every problem in `program` as ``(line, message)`` (line 0: not tied to an op;
    line numbers refer to ``print_program(program, lenient=True)``)."""
    from fw.core.ir.printer import print_program

    v = _Verifier(program, strict_types)
    v.run()
    if not v.found:
        return []
    lines: dict = {}
    text = ""
    try:
        text = print_program(program, lenient=True, op_lines=lines)
    except Exception:  # a program too broken to print still gets its messages
        lines = {}
    src = text.splitlines()
    out = []
    for op, msg in v.found:
        ln = lines.get(op, 0) if op is not None else 0
        where = src[ln - 1].strip() if 0 < ln <= len(src) else (
            repr(op) if op is not None else "")
        out.append((ln, f"{msg}" if not where else f"{msg}\n      at: {where}"))
    return out


def verify(program, strict_types: bool = False) -> None:
    """Check that `program` is well formed (see the module docstring).

    Args:
        program: the Program.
        strict_types: also refuse a recorded result size that the operand types
            do not give (infer says -1): what a model file is held to.
    Raises:
        VerificationError: listing every problem with the op's text line.

    >>> import fw
    >>> from fw.core.ir import TensorType, trace, verify
    >>> verify(trace(lambda x: fw.tanh(x) + 1.0, [TensorType([-1, 4], "float32")]))
    """
    found = problems(program, strict_types)
    if found:
        body = "\n".join(f"  line {ln}: {msg}" if ln else f"  {msg}" for ln, msg in found)
        raise VerificationError(f"the program is not valid ({len(found)} problem"
                                f"{'s' if len(found) > 1 else ''}):\n{body}", found)


# ---------------------------------------------------------------- executor schedules
def _reads(op) -> list:
    """Values `op` reads: its operands and what its nested blocks read from outside.

    Deliberately not the executor's own `_uses`: the schedule check must not share
    the code it checks (a bug there would plan and verify the same wrong reads)."""
    out = [v for v in op.operands if v is not None]
    for b in op.blocks:
        inner = set(b.args)
        for o in b.ops:
            inner.update(o.results)
        for o in b.ops:
            out.extend(v for v in _reads(o) if v not in inner)
        out.extend(v for v in b.outputs if v not in inner)
    return out


def schedule_problems(compiled) -> list:
    """Every hazard in `compiled`'s schedules, as messages (see `verify_schedule`)."""
    from fw.core.ir.executor import may_return_view

    program = compiled.program
    slot = compiled.slot
    args0 = {slot[a] for a in program.block.args}
    state = {slot[a] for a in program.block.args if a.role in ("param", "const")}
    found = []
    for sched in compiled.schedules:
        blk = sched.block
        where = "block 0" if blk is program.block else f"a nested block of {blk.parent.name}"
        keep = {slot[v]: "a block output" for v in blk.outputs}
        if blk is program.block:
            for label, v in program.updates:
                keep.setdefault(slot[v], f"the state update of {label!r}")
        local = {slot[a] for a in blk.args}
        for op in blk.ops:
            local.update(slot[r] for r in op.results)
        # param slot -> slots that may share its memory (views of it, transitively)
        views = {s: {s} for s in state}
        dead: dict = {}  # slot -> why its buffer no longer holds the value
        for i, step in enumerate(sched.steps):
            op = step.op
            what = f"{where}, step {i} ({op.name})"
            if may_return_view(op):
                for al in views.values():
                    if any(slot[v] in al for v in op.operands if v is not None):
                        al.update(step.outs)
            for v in _reads(op):
                s = slot.get(v)
                if s in dead:
                    found.append(f"{what} reads v{s} after {dead[s]}")
            ended = []
            if step.reuse:
                if step.reuse not in step.ins:
                    found.append(f"{what} writes its result into v{step.reuse}, which is not "
                                 f"one of its operands")
                elif step.reuse in args0 or step.reuse not in local:
                    found.append(f"{what} writes its result into v{step.reuse}, a value it "
                                 f"does not own (a program argument or a value of an "
                                 f"enclosing block)")
                ended.append((step.reuse, f"step {i} ({op.name}) wrote its result into its "
                                          f"buffer"))
            for s in step.writes:
                if s not in state:
                    found.append(f"{what} writes v{s} in place, which is not a param/const")
                for t in sorted(views.get(s, {s})):
                    ended.append((t, f"step {i} ({op.name}) updated the param/const v{s} in "
                                     f"place"))
            for s in step.frees:
                if s not in local:
                    found.append(f"{what} frees v{s}, a value of an enclosing block")
                ended.append((s, f"step {i} ({op.name}) freed it"))
            for s, why in ended:
                if s in keep:
                    found.append(f"{what}: v{s} is {keep[s]} (read after the run) but "
                                 f"{why}")
                dead.setdefault(s, why)
    return found


def verify_schedule(compiled) -> None:
    """Check that the executor's schedule reads no buffer after its value is gone
    (freed, overwritten by buffer reuse, or a param/const updated in place).

    Args:
        compiled: a `fw.core.ir.executor.Compiled`.
    Raises:
        VerificationError: listing every hazard (``problems`` has ``(0, message)``).

    >>> import fw
    >>> from fw.core.ir import TensorType, trace
    >>> from fw.core.ir.executor import Compiled
    >>> verify_schedule(Compiled(trace(lambda x: (x + 1.0).exp(), [TensorType([3], "float32")])))
    """
    found = schedule_problems(compiled)
    if found:
        body = "\n".join(f"  {m}" for m in found)
        raise VerificationError(f"the executor's schedule has {len(found)} hazard"
                                f"{'s' if len(found) > 1 else ''}:\n{body}",
                                [(0, m) for m in found])
