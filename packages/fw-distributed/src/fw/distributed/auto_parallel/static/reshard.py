"""Reshard insertion: the collective ops that turn one rank's local block under
placements ``src`` into its block under ``dst``, emitted into a program.

The phases are those of eager resharding (`auto_parallel._reshard`): (1) Partial
axes reduce — ``c_reducescatter`` straight into the wanted Shard when that dim
is sharded nowhere else, else ``c_allreduce``; (2a) a lone Shard(i) -> Shard(j)
on one axis (neither dim sharded on another axis, before or after) is one
``all_to_all``; (2b) every other Shard dim whose sharding changes is gathered
(``c_allgather``) along all its axes, last axis first; (3) Replicate -> Shard
slices locally (no communication); (4) Replicate -> Partial keeps the value on
coordinate 0 of the axis (zeros elsewhere).

The table's exchanging ops work on axis 0 of equal blocks: another dim is moved
to the front (``transpose``) and uneven blocks (Paddle's balanced split) travel
padded to the largest block and are cut back after. The all-to-all follows
Paddle 3's static ``s_to_s`` reshard (transpose the wanted dim's chunks to the
front, exchange, put the received chunks back along the old dim).

Every collective is logged (`Comm`) with the bytes this rank sends under the
ring algorithms (all-gather: (n-1) blocks, all-reduce: 2(n-1)/n of the tensor,
reduce-scatter: (n-1)/n of it, all-to-all: (n-1)/n of the padded block, which is
1/n of what the gather-and-slice it replaces moved)."""

from __future__ import annotations

from fw.distributed.auto_parallel._layout import balanced, local_box
from fw.distributed.auto_parallel.placement import Partial, Replicate, Shard

__all__ = ["Comm", "ReshardEmitter"]

_RED = {0: "sum", 1: "max", 2: "min", 3: "prod", 4: "avg"}


class Comm:
    """One communication inserted: which value, the placements it went between,
    the collective, the mesh axis, the ranks of the group and the bytes this rank
    sends."""

    __slots__ = ("value", "src", "dst", "kind", "axis", "ranks", "nbytes", "shape")

    def __init__(self, value, src, dst, kind, axis, ranks, nbytes, shape):
        self.value, self.src, self.dst, self.kind = value, src, dst, kind
        self.axis, self.ranks, self.nbytes, self.shape = axis, ranks, int(nbytes), shape

    def __repr__(self):
        return (f"Comm({self.kind} of {self.value} {list(self.shape)} on axis {self.axis} "
                f"{self.src} -> {self.dst}: {self.nbytes} B)")


def _call(name, *args, **attrs):
    from fw.core.ops import call

    return call(name, *args, **attrs)


def _nbytes(v):
    n = 1
    for s in v.type.shape:
        n *= int(s)
    return n * v.type.dtype.itemsize


def _sharded_on(pl, d, skip=None):
    return [b for b, p in enumerate(pl) if b != skip and isinstance(p, Shard) and p.dim == d]


class ReshardEmitter:
    """Emits reshards for one rank (mesh coordinate `coord`) into the active builder.

    Args:
        mesh (ProcessMesh): the mesh.
        coord (list[int]): this rank's coordinate.
        group_of (callable): ``group_of(axis) -> (ring_id, ranks)`` of this rank's
            group along mesh `axis` (called only for axes of more than one rank).
        log (list): `Comm` records are appended here.
    """

    def __init__(self, mesh, coord, group_of, log):
        self.mesh, self.coord, self.group_of, self.log = mesh, list(coord), group_of, log

    # ------------------------------------------------------------ primitives
    def _front(self, x, d):
        if d == 0:
            return x
        perm = [d] + [i for i in range(len(x.type.shape)) if i != d]
        return _call("transpose", x, perm=perm)

    def _back(self, x, d):
        if d == 0:
            return x
        nd = len(x.type.shape)
        perm = list(range(1, d + 1)) + [0] + list(range(d + 1, nd))
        return _call("transpose", x, perm=perm)

    def _cut(self, x, d, start, size):
        if start == 0 and size == x.type.shape[d]:
            return x
        return _call("strided_slice", x, axes=[d], starts=[start], ends=[start + size],
                     strides=[1])

    def _pad0(self, x, m):
        k = x.type.shape[0]
        if k == m:
            return x
        pads = [0, m - k] + [0, 0] * (len(x.type.shape) - 1)
        return _call("pad", x, paddings=pads, mode="constant", value=0.0)

    def gather(self, x, d, sizes, axis, name, src, dst):
        ring, ranks = self.group_of(axis)
        n, m = len(sizes), max(sizes)
        y = self._pad0(self._front(x, d), m)
        self.log.append(Comm(name, src, dst, "all_gather", axis, ranks,
                             (n - 1) * _nbytes(y), x.type.shape))
        y = _call("c_allgather", y, nranks=n, ring_id=ring)
        if min(sizes) != m:
            y = _call("concat", [self._cut(y, 0, k * m, s) for k, s in enumerate(sizes)], axis=0)
        return self._back(y, d)

    def _pad_dim(self, x, d, m):
        k = x.type.shape[d]
        if k == m:
            return x
        pads = [0, 0] * len(x.type.shape)
        pads[2 * d + 1] = m - k
        return _call("pad", x, paddings=pads, mode="constant", value=0.0)

    def all_to_all(self, x, i, j, sizes_i, sizes_j, c, axis, name, src, dst):
        """Block c of dim i (dim j whole) -> dim i whole, block c of dim j."""
        ring, ranks = self.group_of(axis)
        n, mi, mj = len(sizes_j), max(sizes_i), max(sizes_j)
        # dim j padded to n equal chunks of mj moved to the front: chunk k of axis 0
        # is what rank k must get; dim i padded to mi so every rank's chunk is equal
        y = self._pad_dim(x, i, mi)
        if min(sizes_j) != mj:
            y = _call("concat", [self._pad_dim(self._cut(y, j, sum(sizes_j[:k]), s), j, mj)
                                 for k, s in enumerate(sizes_j)], axis=j)
        y = self._front(y, j)
        self.log.append(Comm(name, src, dst, "all_to_all", axis, ranks,
                             (n - 1) * _nbytes(y) // n, x.type.shape))
        y = _call("all_to_all", y, nranks=n, ring_id=ring)
        # chunk k of axis 0 now holds rank k's block of dim i (our chunk of dim j)
        ii = i + 1 if i < j else i              # dim i's position after _front
        parts = [self._cut(self._cut(y, 0, k * mj, mj), ii, 0, s)
                 for k, s in enumerate(sizes_i)]
        y = parts[0] if n == 1 else _call("concat", parts, axis=ii)
        return self._back(self._cut(y, 0, 0, sizes_j[c]), j)

    def slice_block(self, x, d, sizes, c):
        return self._cut(x, d, sum(sizes[:c]), sizes[c])

    def all_reduce(self, x, rt, axis, name, src, dst):
        ring, ranks = self.group_of(axis)
        n = len(ranks)
        self.log.append(Comm(name, src, dst, "all_reduce", axis, ranks,
                             2 * (n - 1) * _nbytes(x) // n, x.type.shape))
        return _call("c_allreduce", x, reduce_op=_RED[int(rt)], ring_id=ring)

    def reduce_scatter(self, x, d, sizes, c, axis, name, src, dst):
        ring, ranks = self.group_of(axis)
        n, m = len(sizes), max(sizes)
        xf = self._front(x, d)
        if min(sizes) != m:
            xf = _call("concat", [self._pad0(self._cut(xf, 0, sum(sizes[:k]), s), m)
                                  for k, s in enumerate(sizes)], axis=0)
        self.log.append(Comm(name, src, dst, "reduce_scatter", axis, ranks,
                             (n - 1) * _nbytes(xf) // n, x.type.shape))
        y = _call("c_reducescatter", xf, reduce_op="sum", nranks=n, ring_id=ring)
        return self._back(self._cut(y, 0, 0, sizes[c]), d)

    def to_partial(self, x, c, rt):
        rt = int(rt)
        if c == 0 or rt in (1, 2, 4):
            return x
        if rt == 3:
            return x * 0.0 + 1.0
        return x * 0.0

    # ------------------------------------------------------------ the phases
    def _level(self, gshape, cur, a, d):
        pl = [p if b < a else Replicate() for b, p in enumerate(cur)]
        return local_box(gshape, pl, self.mesh, self.coord)[d][1]

    def reshard(self, x, gshape, src, dst, name="%v"):
        """`x` (this rank's block under `src`) as its block under `dst`."""
        src, dst = list(src), list(dst)
        if src == dst:
            return x
        mesh, coord = self.mesh, self.coord
        s0, d0 = [str(p) for p in src], [str(p) for p in dst]
        cur = list(src)
        n_axes = len(cur)
        for a in range(n_axes):                       # (1) Partial axes
            p, q = cur[a], dst[a]
            if not isinstance(p, Partial) or p == q:
                continue
            if mesh.shape[a] == 1:
                cur[a] = Replicate()
                continue
            if (isinstance(q, Shard) and int(p.reduce_type) == 0 and not _sharded_on(cur, q.dim)
                    and not _sharded_on(dst, q.dim, skip=a)):
                sizes = balanced(gshape[q.dim], mesh.shape[a])
                x = self.reduce_scatter(x, q.dim, sizes, coord[a], a, name, s0, d0)
                cur[a] = q
            else:
                x = self.all_reduce(x, p.reduce_type, a, name, s0, d0)
                cur[a] = Replicate()
        for a in range(n_axes):                       # (2a) lone Shard(i) -> Shard(j)
            p, q = cur[a], dst[a]
            if (isinstance(p, Shard) and isinstance(q, Shard) and p.dim != q.dim
                    and mesh.shape[a] > 1
                    and not any(_sharded_on(pl, d, skip=a) for pl in (cur, dst)
                                for d in (p.dim, q.dim))):
                n = mesh.shape[a]
                x = self.all_to_all(x, p.dim, q.dim, balanced(gshape[p.dim], n),
                                    balanced(gshape[q.dim], n), coord[a], a, name, s0, d0)
                cur[a] = q
        changed = set()                               # (2b) gather changed dims
        for a in range(n_axes):
            if cur[a] != dst[a]:
                for p in (cur[a], dst[a]):
                    if isinstance(p, Shard):
                        changed.add(p.dim)
        for d in sorted(changed):
            for a in reversed(_sharded_on(cur, d)):
                if mesh.shape[a] > 1:
                    sizes = balanced(self._level(gshape, cur, a, d), mesh.shape[a])
                    x = self.gather(x, d, sizes, a, name, s0, d0)
                cur[a] = Replicate()
        for a in range(n_axes):                       # (3) Replicate -> Shard
            q = dst[a]
            if isinstance(q, Shard) and cur[a] != q:
                if mesh.shape[a] > 1:
                    sizes = balanced(self._level(gshape, cur, a, q.dim), mesh.shape[a])
                    x = self.slice_block(x, q.dim, sizes, coord[a])
                cur[a] = q
        for a in range(n_axes):                       # (4) Replicate -> Partial
            q = dst[a]
            if isinstance(q, Partial) and cur[a] != q:
                if mesh.shape[a] > 1:
                    x = self.to_partial(x, coord[a], q.reduce_type)
                cur[a] = q
        return x
