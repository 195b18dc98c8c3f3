"""Copies of a program cut down to what some fetched values need.

`prune(program, fetch_vars, feed_vars=None, keep_updates=True)` re-emits the
program's operations into a new program (the same captured tensors), makes the
fetched values its outputs, keeps the state updates (training) or drops them
(inference), removes dead operations (DCE) and the inputs nothing reads any
more, and with `feed_vars` orders the inputs like them. The original program is
not changed.
"""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError
from fw.core.ir.builder import Builder, clone_ops
from fw.core.ir.core import Value

__all__ = ["prune", "resolve_var"]


def resolve_var(program, v, what="fetch"):
    """A Value of `program` from a Value, or a name (an input name, a parameter
    label, a name given with ``value.name = ...``, or the ``%N`` name an unnamed
    value reports as ``value.name``, as Paddle code fetches ``loss.name``)."""
    if type(v) is Value:
        return v
    if isinstance(v, str):
        for a in program.block.args:
            if a.label == v:
                return a
        for op in program.walk():
            for r in op.results:
                if r.label == v or (r.label is None and r.name == v):
                    return r
        raise InvalidArgumentError(f"{what}: the program has no variable named {v!r}")
    name = getattr(v, "name", None)
    if isinstance(name, str):
        return resolve_var(program, name, what)
    raise InvalidArgumentError(f"{what}: expected a variable of the program or its name, got "
                               f"{type(v).__name__}")


def prune(program, fetch_vars, feed_vars=None, keep_updates=True):
    """(new program, {old value: new value}) — see the module docstring."""
    from fw.core.ir.passes import PassManager
    from fw.static._program import as_static_program

    fetch = [resolve_var(program, v) for v in fetch_vars]
    feeds = [resolve_var(program, v, "feed") for v in feed_vars] if feed_vars is not None \
        else None
    b = Builder()
    new = b.program
    new.captured = dict(program.captured)  # (DCE drops unused constants from the copy)
    vmap = {}
    with b:
        for a in program.block.args:
            na = new.block.add_arg(a.type, a.role, a.label)
            na._sg = a._sg
            vmap[a] = na
        b._captured.clear()
        clone_ops(b, program.block.ops, vmap)
    for v in fetch:
        if v not in vmap:
            raise InvalidArgumentError(f"fetch: {v!r} is not a variable of block 0 of the "
                                       f"program")
    new.block.outputs = [vmap[v] for v in fetch]
    if keep_updates:
        for label, v in program.updates:
            new.updates.set(label, vmap[v])
    new.touch()
    PassManager(["dce"], verify=False).run(new)
    used = set(new.block.outputs) | set(new.updates.outputs)
    for op in new.walk():
        used.update(x for x in op.operands if x is not None)
        for blk in op.blocks:
            used.update(blk.outputs)
    keep_inputs = set(vmap[f] for f in feeds) if feeds is not None else set()
    args = [a for a in new.block.args if a.role != "input" or a in used or a in keep_inputs]
    if feeds is not None:
        order = [vmap[f] for f in feeds]
        others = [a for a in args if a.role != "input"]
        extra = [a for a in args if a.role == "input" and a not in set(order)]
        if extra:
            names = ", ".join(repr(a.label) for a in extra)
            raise InvalidArgumentError(f"the fetched values also need the inputs {names}, "
                                       f"which are not among the feed variables")
        args = order + others
    new.block.args[:] = args
    for i, a in enumerate(args):
        a.index = i
    used_labels = {a.label for a in args if a.role != "input"}
    new.captured = {k: t for k, t in new.captured.items() if k in used_labels}
    new.touch()
    new.meta = dict(program.meta)
    return as_static_program(new), vmap
