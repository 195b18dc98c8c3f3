"""``fuse_elementwise``: groups of elementwise ops over one shape -> one
``fused_elementwise`` (its program format is documented in `fw.core.ops.fused`).

Which ops: the opcodes of ``fused_elementwise`` (``add subtract multiply divide
maximum minimum neg exp log tanh sigmoid sqrt rsqrt abs relu silu gelu pow
where cast`` and the six comparisons) whose operands and result have one of the
dtypes bool/float16/bfloat16/float32/float64 and pass the opcode's dtype rule
(operands already share a dtype in programs built by fw: the builder inserts
``cast`` ops, which fuse too). ``pow`` fuses only with a constant exponent (a
one-element ``full`` or uniform constant): it becomes a scalar of the
instruction.

Groups, per block: starting from the last op of the block and going up, a
not-yet-grouped fusable op is a group's *root* with shape ``S`` = its result
type's shape. The group then grows backwards: the producer of an operand joins
when it is fusable, in the same block, not in another group, its result type
has exactly the shape ``S`` (dims equal as written, -1 included), and **every
reader of its result is already in the group** (repeated until nothing joins,
so diamonds inside the group are found). The root's result may have any
readers.

Policy on shared values: an op whose result is also read outside the group is
never pulled in, because that would compute it twice (duplicating is cheap
only for constants): it stays a separate op and its result becomes an input of
the fused op. One-element ``full`` constants are the exception: they are
copied into the program as ``const`` instructions whatever their readers (the
original stays for its other readers; ``dce`` removes it if none are left).

Inputs are the values read by the group from outside it (parameters,
constants, block arguments, other ops' results), in order of first use; they
broadcast into ``S`` because every op of the group yields ``S``. A group is
rewritten only when it has at least two ops (constants not counted); the fused
op replaces the root in place, the other members are erased. The reference
kernel calls each op's own kernel in program order, so results are bit-identical.
"""

from __future__ import annotations

from fw.core import dtypes as _dt
from fw.core.ir.core import Operation
from fw.core.ir.passes import Pass, register_pass
from fw.core.ir.passes.consts import uniform_value
from fw.core.ir.passes.rewrite import Rewriter
from fw.core.ops.fused import ELEMENTWISE_DTYPES, OPCODES, check_program, instruction_type

__all__ = ["FuseElementwise"]


def _full_scalar(v):
    """(value, dtype) when `v` is a one-element ``full`` result, else None."""
    op = v.owner if v is not None else None
    if not isinstance(op, Operation) or op.name != "full" or op.operands or \
            v.type.numel() != 1:
        return None
    fv = op.attrs.get("fill_value")
    if isinstance(fv, complex) or not isinstance(fv, (bool, int, float)):
        return None
    return fv, v.type.dtype


class _Fuser:
    def __init__(self, program):
        self.rw = Rewriter(program, deferred=True)
        self.program = program
        self.opcodes = OPCODES
        self.dtypes = frozenset(ELEMENTWISE_DTYPES)

    # ------------------------------------------------------------ eligibility
    def _exponent(self, op):
        """pow's constant exponent as a float, else None."""
        e = op.operands[1]
        if e is None or e.type.numel() != 1 or e.type.ndim > op.operands[0].type.ndim:
            return None
        v = uniform_value(e, self.program)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def instruction(self, op):
        """(opcode, dtype, operand values, scalars) for a fusable op, else None."""
        name = op.name
        if name not in self.opcodes or name == "const" or op.blocks or len(op.results) != 1:
            return None
        r = op.results[0]
        if r.type.dtype not in self.dtypes or any(
                v is None or v.type.dtype not in self.dtypes for v in op.operands):
            return None
        operands = list(op.operands)
        scalars = ()
        if name == "pow":
            e = self._exponent(op)
            if e is None:
                return None
            operands, scalars = operands[:1], (e,)
        elif name == "gelu":
            scalars = (bool(op.attrs.get("approximate")),)
        elif op.attrs and name != "cast":
            return None
        try:  # the opcode's dtype rule, on the real operand types
            instruction_type(0, (name, r.type.dtype, tuple(range(len(operands))), scalars),
                              [v.type for v in operands])
        except Exception:  # noqa: BLE001 - not expressible as an instruction: leave it
            return None
        return name, r.type.dtype, operands, scalars

    # ------------------------------------------------------------ grouping
    def groups(self, block) -> list:
        """Disjoint groups (lists of ops in block order) with >= 2 ops."""
        rw = self.rw
        index = {id(op): i for i, op in enumerate(block.ops)}
        claimed: set = set()
        found = []
        for root in reversed(block.ops):
            if id(root) in claimed or self.instruction(root) is None:
                continue
            shape = root.results[0].type.shape
            members = {id(root): root}
            # A worklist, each member's operands looked at once: a producer joins when
            # the uses of its result read from inside the group reach all its uses
            # (block outputs and updates are never members, so they never count).
            inside: dict = {}  # id(value) -> uses of it by members so far
            work = [root]
            while work:
                m = work.pop()
                for v in m.operands:
                    p = rw.producer(v)
                    if p is None or id(p) in members or id(p) in claimed or \
                            p.parent is not block or p.results[0].type.shape != shape:
                        continue
                    k = inside[id(v)] = inside.get(id(v), 0) + 1
                    if k == rw.num_uses(v) and self.instruction(p) is not None:
                        members[id(p)] = p
                        work.append(p)
            if len(members) >= 2:
                claimed.update(members)
                found.append(sorted(members.values(), key=lambda o: index[id(o)]))
        return found

    # ------------------------------------------------------------ rewriting
    def rewrite(self, ops) -> bool:
        rw = self.rw
        inside = {id(r): None for op in ops for r in op.results}
        inputs, number, prog = [], {}, []

        def value(v):
            k = number.get(id(v))
            if k is not None:
                return k
            c = _full_scalar(v) if id(v) not in inside else None
            if c is not None:  # copied in as an immediate
                prog.append(("const", c[1], (), (c[0] if c[1] is _dt.bool_ else float(c[0]),)))
                k = -len(prog)  # instructions are numbered once the inputs are known
            else:
                inputs.append(v)
                k = len(inputs) - 1
            number[id(v)] = k
            return k

        body = []
        for op in ops:
            name, dtype, operands, scalars = self.instruction(op)
            refs = [value(v) for v in operands]
            prog.append((name, dtype, refs, scalars))
            number[id(op.results[0])] = -len(prog)
            body.append(op)
        n = len(inputs)
        final = []
        for opcode, dtype, refs, scalars in prog:  # instruction j (ref -j-1) -> value n + j
            final.append((opcode, dtype, tuple(r if r >= 0 else n - r - 1 for r in refs),
                          scalars))
        root = ops[-1]
        out_t = root.results[0].type
        try:
            check_program([v.type for v in inputs], tuple(final), out_t.dtype)
        except Exception:  # noqa: BLE001 - a group the op cannot express stays unfused
            return False
        fused = rw.create("fused_elementwise", inputs,
                          {"program": tuple(final), "out_dtype": out_t.dtype}, [out_t],
                          before=root)
        rw.replace_op(root, fused.results)
        for op in reversed(body[:-1]):
            rw.erase(op)
        return True


@register_pass
class FuseElementwise(Pass):
    name = "fuse_elementwise"

    def run(self, program) -> bool:
        f = _Fuser(program)
        changed = False
        for block in program.all_blocks():
            for ops in f.groups(block):
                changed = f.rewrite(ops) or changed
        f.rw.flush()
        return changed
