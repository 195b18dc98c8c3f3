"""``fuse_all_reduce_ops``: coalesce a program's ``c_allreduce`` ops into buckets.

A data-parallel step under ``fw.jit.to_static`` all-reduces every gradient
(``dist.all_reduce(p.grad)`` for each parameter): one collective per parameter,
each paying MPI's latency, the desync check's signature exchange and the op's
Python overhead. This pass rewrites runs of them into one collective per bucket,
as Paddle's ``BuildStrategy.fuse_all_reduce_ops`` (on by default there) and the
eager `fw.DataParallel` buckets do::

    a' = c_allreduce(a) ... b' = c_allreduce(b)
      -> f = c_allreduce(concat([reshape(a, [-1]), reshape(b, [-1])]))
         a', b' = reshape(split(f, [|a|, |b|]), shape(a)), ... (shape(b))

Ops join one bucket when they have the same group (``ring_id``), reduce op and
dtype and static shapes, up to `bucket_bytes` (``FW_DIST_FUSE_ALLREDUCE_MB``, 32 MB
like Paddle's ``fuse_grad_size_in_MB``; 0 turns the pass off). The fused op takes
the place of the bucket's *last* member, so a bucket is closed as soon as an op
reads the result of one of its members (that reader would come before the fused
op), and before any op with nested blocks. Every rank builds the same program, so
every rank issues the same fused collectives.

The values are those of the unfused program: a sum (or max, min, prod, avg) is
elementwise, and concatenation only places the elements side by side.

Registered in fw-core's pass registry when fw.distributed is imported, and added
in front of the ``to_static`` pipeline that fw-jit runs on every traced program.
"""

from __future__ import annotations

import os

from fw.core.ir.passes import PIPELINES, Pass, register_pass, register_pipeline
from fw.core.ir.passes.rewrite import Rewriter

__all__ = ["FuseAllReduce", "bucket_bytes", "install"]

NAME = "fuse_all_reduce_ops"
_TRACE_DEFAULT = ("cse", "dce")  # fw-jit's pass pipeline for traced programs


def bucket_bytes() -> int:
    """The bucket cap: ``FW_DIST_FUSE_ALLREDUCE_MB`` (MB; 0 = no fusion), default 32."""
    v = os.environ.get("FW_DIST_FUSE_ALLREDUCE_MB", "32")
    try:
        mb = float(v)
    except ValueError:
        raise ValueError(f"FW_DIST_FUSE_ALLREDUCE_MB={v!r} is not a number of MB") from None
    if mb < 0:
        raise ValueError(f"FW_DIST_FUSE_ALLREDUCE_MB must be >= 0 (0 turns fusion off), got {v!r}")
    return int(mb * (1 << 20))


def _candidate_key(op):
    if op.name != "c_allreduce" or op.blocks:
        return None
    t = op.operands[0].type
    if any(not isinstance(d, int) or d < 0 for d in t.shape):
        return None  # a dynamic dimension: the split sizes are unknown
    return (op.attrs["ring_id"], op.attrs["reduce_op"], t.dtype.name)


def _nbytes(op):
    t = op.operands[0].type
    n = 1
    for d in t.shape:
        n *= d
    return n * t.dtype.itemsize, n


def _fuse(rw, members):
    """Replace `members` (c_allreduce ops in program order, one key) by one
    all-reduce of their concatenation, placed before the last of them."""
    anchor = members[-1]
    flats, sizes = [], []
    for m in members:
        x = m.operands[0]
        _, n = _nbytes(m)
        sizes.append(n)
        flats.append(rw.create("reshape", [x], {"shape": (n,)}, before=anchor).results[0])
    cat = rw.create("concat", flats, {"axis": 0}, before=anchor).results[0]
    red = rw.create("c_allreduce", [cat], dict(anchor.attrs), before=anchor).results[0]
    parts = rw.create("split", [red], {"num_or_sections": sizes, "axis": 0}, before=anchor)
    for m, part in zip(members, parts.results):
        shape = tuple(m.results[0].type.shape)
        back = rw.create("reshape", [part], {"shape": shape}, before=anchor).results[0]
        rw.replace_op(m, [back])


@register_pass
class FuseAllReduce(Pass):
    """See the module docstring. Options: ``max_bytes`` (the bucket cap; default
    `bucket_bytes()`)."""

    name = NAME

    def __init__(self, max_bytes=None):
        self.max_bytes = bucket_bytes() if max_bytes is None else int(max_bytes)

    def run(self, program) -> bool:
        if self.max_bytes <= 0:
            return False
        rw = Rewriter(program, deferred=True)
        buckets = []
        for blk in program.all_blocks():
            buckets.extend(self._buckets(blk))
        changed = False
        for members in buckets:
            if len(members) >= 2:
                _fuse(rw, members)
                changed = True
        rw.flush()
        return changed

    def _buckets(self, blk):
        """The buckets of one block's c_allreduce ops (lists in program order)."""
        done = []
        open_ = {}      # key -> [members, bytes]
        owner = {}      # id(result of an open member) -> key
        for op in list(blk.ops):
            # an op reading an open member's result (or holding nested blocks, whose
            # reads are not looked into) closes that bucket: the fused op would come
            # after this reader
            readers = [owner[id(v)] for v in op.operands if v is not None and id(v) in owner]
            if op.blocks:
                readers = list(open_)
            for key in dict.fromkeys(readers):
                if key in open_:
                    members, _ = open_.pop(key)
                    for m in members:
                        owner.pop(id(m.results[0]), None)
                    done.append(members)
            key = _candidate_key(op)
            if key is None:
                continue
            nbytes, _ = _nbytes(op)
            b = open_.setdefault(key, [[], 0])
            b[0].append(op)
            b[1] += nbytes
            owner[id(op.results[0])] = key
            if b[1] >= self.max_bytes:
                members, _ = open_.pop(key)
                for m in members:
                    owner.pop(id(m.results[0]), None)
                done.append(members)
        done.extend(members for members, _ in open_.values())
        return done


def install():
    """Put the pass in front of the ``to_static`` pipeline (fw-jit's passes for
    traced programs) once."""
    current = tuple(PIPELINES.get("to_static", _TRACE_DEFAULT))
    if NAME not in current:
        register_pipeline("to_static", (NAME, *current))
