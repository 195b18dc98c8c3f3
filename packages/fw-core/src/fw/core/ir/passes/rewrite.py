"""Editing programs: the `Rewriter` that passes use, and a greedy pattern driver.

A pass that rewrites ops one at a time (simplification, fusion) is a dict of
*patterns*, ``{op name: fn(rw, op) -> bool}``, run by `apply_patterns`; each
pattern looks at one op, and when it matches edits the program through the
`Rewriter` and returns True::

    def fold_double_neg(rw, op):                     # neg(neg(x)) -> x
        inner = rw.producer(op.operands[0])
        if inner is None or inner.name != "neg":
            return False
        rw.replace_op(op, [inner.operands[0]])
        return True

    apply_patterns(program, {"neg": fold_double_neg})

The `Rewriter` keeps a map from each value to its users up to date, so
replacing uses and erasing ops cost no walk over the program:

- `users(v)` / `has_uses(v)`: who reads a value (operands and block yields, in
  nested blocks too);
- `replace_all_uses(old, new)`; `replace_op(op, values)`: results -> values,
  then erase the op;
- `create(name, operands, attrs, before=op)`: a new op of the table, its
  attributes canonicalised and result types inferred (or given), inserted
  before `op` (or appended to a block); `insert_before` / `insert_after` /
  `erase` for ops built by hand;
- `add_const(array)`: a new block-0 constant holding `array` (captured).

It is the caller's job to keep SSA dominance (a replacement must be defined
before every use it takes over); the PassManager's verifier catches mistakes.

Cost: every query and edit is O(1) amortised (plus the size of what it
touches), so a pass is linear in the program. Use lists are insertion-ordered
dicts (dropping one use does not scan the others). A ``Rewriter(program,
deferred=True)`` — what `apply_patterns` and the built-in passes use — also
applies insertions and erasures to ``block.ops`` lazily: erased ops get
``parent = None`` at once, new ops get their block as ``parent`` at once, and
the op lists are rebuilt in one walk by `flush` (called by `apply_patterns`
before each sweep and at its end; a pass that edits through its own deferred
rewriter calls it before returning). Without ``deferred`` each edit updates
``block.ops`` immediately (a list search: O(block length) per edit).
"""

from __future__ import annotations

from fw.core.errors import InternalError
from fw.core.ir.core import Block, Operation, Value
from fw.core.ir.types import TensorType

__all__ = ["Rewriter", "apply_patterns", "walk_ops"]


def walk_ops(block: Block):
    """Every op in `block` and its nested blocks (a snapshot: safe to edit while
    iterating; check ``op.parent is not None`` to skip ops erased meanwhile)."""
    return list(block.walk())


class Rewriter:
    """Edits one program, keeping a value -> users map current."""

    def __init__(self, program, deferred: bool = False):
        self.program = program
        self._users: dict | None = None  # value -> {(owner, index): None}, in use order
        self.changed = False
        self.deferred = deferred
        self._before: dict = {}  # anchor op -> ops to insert before it (deferred mode)
        self._after: dict = {}  # anchor op -> ops to insert after it, latest first
        self._dirty: dict = {}  # blocks whose op list is out of date -> None
        self._taken: set | None = None  # param/const labels in use (add_const)
        self._next_label: dict = {}  # add_const base label -> next suffix to try

    def flush(self) -> None:
        """Apply pending insertions/erasures to the blocks' op lists (deferred mode;
        a no-op otherwise or when nothing is pending). One walk per edited block."""
        if not self._dirty:
            return
        before, after = self._before, self._after
        # an op inserted while still listed elsewhere (moved) lands only where inserted
        moved = {id(o) for lst in (*before.values(), *after.values()) for o in lst}
        for blk in self._dirty:
            out = []
            # an explicit stack of (kind, op): inserted ops may anchor others, at any depth
            stack = [(0, op) for op in reversed(blk.ops)]  # 0: listed, 1: inserted, 2: emit
            while stack:
                kind, op = stack.pop()
                if kind == 2:
                    if op.parent is blk:
                        out.append(op)
                    continue
                stack.extend((1, a) for a in after.get(op, ()))  # latest lands first
                if kind == 1 or id(op) not in moved:
                    stack.append((2, op))
                stack.extend((1, b) for b in reversed(before.get(op, ())))
            blk.ops[:] = out
        self._before.clear()
        self._after.clear()
        self._dirty.clear()

    # ------------------------------------------------------------ queries
    def _map(self) -> dict:
        if self._users is None:
            self.flush()  # the map is built from the op lists
            users: dict = {}
            for blk in self.program.all_blocks():
                for op in blk.ops:
                    for i, v in enumerate(op.operands):
                        if v is not None:
                            users.setdefault(v, {})[(op, i)] = None
                for i, v in enumerate(blk.outputs):
                    users.setdefault(v, {})[(blk, i)] = None
            ups = getattr(self.program, "updates", None)
            if ups:  # a state update reads its value like a block output
                for i, v in enumerate(ups.outputs):
                    users.setdefault(v, {})[(ups, i)] = None
            self._users = users
        return self._users

    def users(self, v: Value) -> list:
        """``[(op, operand index) or (block, output index)]`` reading `v` (a state
        update reading `v` appears as ``(program.updates, index)``)."""
        return list(self._map().get(v, ()))

    def has_uses(self, v: Value) -> bool:
        return bool(self._map().get(v))

    def num_uses(self, v: Value) -> int:
        """``len(users(v))`` without building the list."""
        return len(self._map().get(v, ()))

    @staticmethod
    def producer(v) -> Operation | None:
        """The op defining `v` (None for block arguments and None)."""
        return v.owner if isinstance(v, Value) and isinstance(v.owner, Operation) else None

    # ------------------------------------------------------------ edits
    def _touch(self) -> None:
        self.changed = True
        self.program.touch()

    def _add_uses(self, op) -> None:
        if self._users is None:
            return
        for o in [op] + [x for b in op.blocks for x in b.walk()]:
            for i, v in enumerate(o.operands):
                if v is not None:
                    self._users.setdefault(v, {})[(o, i)] = None
        for b in op.blocks:
            for blk in [b] + [nb for x in b.walk() for nb in x.blocks]:
                for i, v in enumerate(blk.outputs):
                    self._users.setdefault(v, {})[(blk, i)] = None

    def _drop_uses(self, op) -> None:
        if self._users is None:
            return
        for o in [op] + [x for b in op.blocks for x in b.walk()]:
            for i, v in enumerate(o.operands):
                if v is not None:
                    uses = self._users.get(v)
                    if uses:
                        uses.pop((o, i), None)
        for b in op.blocks:
            for blk in [b] + [nb for x in b.walk() for nb in x.blocks]:
                for i, v in enumerate(blk.outputs):
                    uses = self._users.get(v)
                    if uses:
                        uses.pop((blk, i), None)

    def set_operand(self, op, i: int, v) -> None:
        old = op.operands[i]
        if self._users is not None:
            if old is not None:
                uses = self._users.get(old)
                if uses:
                    uses.pop((op, i), None)
            if v is not None:
                self._users.setdefault(v, {})[(op, i)] = None
        op.operands[i] = v
        self._touch()

    def replace_all_uses(self, old: Value, new: Value) -> int:
        """Make every reader of `old` read `new`; returns how many uses moved."""
        if old is new:
            return 0
        uses = self._map().pop(old, {})
        for owner, i in uses:
            if isinstance(owner, Operation):
                owner.operands[i] = new
            else:
                owner.outputs[i] = new
        if uses:
            self._users.setdefault(new, {}).update(uses)
            self._touch()
        return len(uses)

    def erase(self, op: Operation, force: bool = False) -> None:
        """Remove `op` (and its nested blocks); its results must be unused unless
        `force`."""
        if not force:
            for r in op.results:
                if self.has_uses(r):
                    raise InternalError(f"erasing {op.name} whose result is still used by "
                                        f"{len(self.users(r))} op(s)")
        blk = op.parent
        if blk is None:
            return
        self._drop_uses(op)
        if self.deferred:
            self._dirty[blk] = None
        else:
            blk.ops.remove(op)
        op.parent = None
        for b in op.blocks:  # mark nested ops dead for drivers iterating a snapshot
            for x in b.walk():
                x.parent = None
        self._touch()

    def replace_op(self, op: Operation, values) -> None:
        """Replace each result of `op` by the matching value, then erase `op`."""
        values = list(values)
        if len(values) != len(op.results):
            raise InternalError(f"replace_op: {op.name} has {len(op.results)} results, got "
                                f"{len(values)} replacements")
        for r, v in zip(op.results, values):
            self.replace_all_uses(r, v)
        self.erase(op)

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        blk = anchor.parent
        if self.deferred:
            self._map()  # built before the op list goes stale
            self._before.setdefault(anchor, []).append(op)
            self._dirty[blk] = None
        else:
            blk.ops.insert(blk.ops.index(anchor), op)
        op.parent = blk
        self._add_uses(op)
        self._touch()
        return op

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        blk = anchor.parent
        if self.deferred:
            self._map()
            self._after.setdefault(anchor, []).append(op)
            self._dirty[blk] = None
        else:
            blk.ops.insert(blk.ops.index(anchor) + 1, op)
        op.parent = blk
        self._add_uses(op)
        self._touch()
        return op

    def append(self, block: Block, op: Operation) -> Operation:
        block.ops.append(op)
        op.parent = block
        self._add_uses(op)
        self._touch()
        return op

    def create(self, name: str, operands, attrs=None, result_types=None, *, before=None,
               block=None) -> Operation:
        """A new op of the table. Missing attributes take the op's defaults and go
        through its `canon`; result types come from `infer` unless given. Inserted
        before `before`, else appended to `block`, else left detached."""
        from fw.core.ops._registry import get_op

        opdef = get_op(name)
        a = dict(opdef.attrs)
        a.update(attrs or {})
        if opdef.canon is not None:
            a = opdef.canon(a)
        if result_types is None:
            ts = [None if v is None else v.type for v in operands]
            if opdef.variadic >= 0:
                k = len(ts) - (len(opdef.input_names) - 1)
                ts = ts[:opdef.variadic] + [ts[opdef.variadic:opdef.variadic + k]] + \
                    ts[opdef.variadic + k:]
            res = opdef.infer(*ts, **a)
            result_types = list(res) if isinstance(res, (tuple, list)) else [res]
        from fw.core.ir.builder import _freeze

        op = Operation(opdef, operands, _freeze(a), result_types)
        for r in op.results:
            r._sg = not any(v is not None and not v._sg for v in operands) or \
                not opdef.differentiable
        if before is not None:
            self.insert_before(before, op)
        elif block is not None:
            self.append(block, op)
        return op

    def add_const(self, array, label: str | None = None) -> Value:
        """A new block-0 constant holding `array` (a NumPy array), captured by the
        program under a fresh label (``_folded_N`` unless `label` is free)."""
        from fw.core import dtypes as _dt
        from fw.core.tensor import wrap

        prog = self.program
        if self._taken is None:  # kept current here: one scan per rewriter, not per const
            self._taken = set(prog.captured) | {a.label for a in prog.block.args if a.label}
        taken = self._taken
        if label is None or label in taken:
            base = label or "_folded"
            k = self._next_label.get(base, 0)  # suffixes below k were taken already
            while f"{base}_{k}" in taken:
                k += 1
            self._next_label[base] = k + 1
            label = f"{base}_{k}"
        taken.add(label)
        t = wrap(array)
        v = prog.block.add_arg(TensorType(array.shape, _dt.from_numpy(array.dtype)), "const",
                               label)
        prog.captured[label] = t
        self._touch()
        return v

    def remove_arg(self, v: Value) -> None:
        """Drop an unused block-0 param/const (and its captured tensor)."""
        self.remove_args([v])

    def remove_args(self, values) -> None:
        """Drop unused block-0 params/consts (one renumbering for all of them)."""
        values = list(values)
        for v in values:
            if self.has_uses(v):
                raise InternalError(f"remove_arg: {v!r} is still used")
        if not values:
            return
        blk = self.program.block
        gone = {id(v) for v in values}  # by identity: Value's == builds an `equal` op
        blk.args[:] = [a for a in blk.args if id(a) not in gone]
        for i, a in enumerate(blk.args):
            a.index = i
        for v in values:
            if v.label is not None:
                self.program.captured.pop(v.label, None)
                if self._taken is not None:
                    self._taken.discard(v.label)
        self._touch()


def apply_patterns(program, patterns: dict, max_rounds: int = 10,
                   rewriter: Rewriter | None = None) -> bool:
    """Apply ``{op name: fn(rw, op) -> bool}`` to every op, in program order,
    until no pattern fires (at most `max_rounds` sweeps). Returns True if any
    pattern changed the program."""
    rw = rewriter or Rewriter(program, deferred=True)
    changed_any = False
    for _ in range(max_rounds):
        changed = False
        rw.flush()
        for op in walk_ops(program.block):
            if op.parent is None:
                continue
            fn = patterns.get(op.name)
            if fn is not None and fn(rw, op):
                changed = True
        if not changed:
            break
        changed_any = True
    rw.flush()
    return changed_any
