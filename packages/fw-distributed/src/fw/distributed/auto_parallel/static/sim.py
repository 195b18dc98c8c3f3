"""Simulated ranks: the per-rank programs of one mesh run in threads of this
process, their collective ops served by an in-process exchange.

For tests and for checking a partition without launching processes: each rank
is a thread; the collectives backend (``fw.core.internal.collectives``) finds
the calling thread's rank, deposits its array in a slot keyed by (group, the
group's n-th collective), waits (bounded) until every rank of the group has
deposited, and computes its own result from all of them with NumPy — the
semantics of fw-core's collective ops (`fw.core.ops.collective`). The real
engine (MPI) is what runs in a launched job; this exchange has the same
results, not the same performance."""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["SimulatedRanks", "simulate"]


class SimulatedRanks:
    """`world_size` ranks as threads (see the module docstring).

    Args:
        world_size (int): number of ranks.
        timeout (float): seconds a rank waits for the others at a collective.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto_parallel.static.sim import SimulatedRanks
            >>> sim = SimulatedRanks(2)
            >>> sim.run([lambda: 1, lambda: 2])
            [1, 2]
    """

    def __init__(self, world_size, timeout=60.0):
        self.world_size = int(world_size)
        self.timeout = float(timeout)
        self._groups: dict = {}
        self._ids: dict = {}
        self._tls = threading.local()
        self._cond = threading.Condition()
        self._slots: dict = {}

    # ------------------------------------------------------------ groups
    def group(self, ranks) -> int:
        """The ring id of the group of world `ranks` (made on first use)."""
        key = tuple(int(r) for r in ranks)
        rid = self._ids.get(key)
        if rid is None:
            rid = 1000 + len(self._ids)
            self._ids[key] = rid
            self._groups[rid] = key
        return rid

    def group_of(self, mesh, coord):
        """``group_of(axis) -> (ring_id, ranks)`` for the rank at mesh `coord`."""
        def fn(axis):
            arr = np.moveaxis(np.asarray(mesh.mesh), axis, -1)
            idx = tuple(c for a, c in enumerate(coord) if a != axis)
            ranks = [int(r) for r in arr[idx]]
            return self.group(ranks), ranks
        return fn

    # ------------------------------------------------------------ the backend
    def _backend(self, op_name, x, attrs):
        rank = getattr(self._tls, "rank", None)
        if rank is None:
            raise RuntimeError(f"SimulatedRanks: collective {op_name} called outside a "
                               f"simulated rank's thread")
        rid = int(attrs["ring_id"])
        ranks = self._groups.get(rid)
        if ranks is None:
            raise RuntimeError(f"SimulatedRanks: {op_name} on unknown ring_id {rid}")
        me = ranks.index(rank)
        seqs = self._tls.seq
        seq = seqs.get(rid, 0)
        seqs[rid] = seq + 1
        key = (rid, seq)
        with self._cond:
            slot = self._slots.setdefault(key, {"x": {}, "op": op_name, "taken": 0})
            if slot["op"] != op_name:
                raise RuntimeError(f"SimulatedRanks: ranks disagree on collective #{seq} of "
                                   f"group {ranks}: {slot['op']} and {op_name}")
            slot["x"][me] = np.array(x, copy=True)
            self._cond.notify_all()
            if not self._cond.wait_for(lambda: len(slot["x"]) == len(ranks),
                                       timeout=self.timeout):
                raise TimeoutError(f"SimulatedRanks: rank {rank} waited {self.timeout} s at "
                                   f"{op_name} #{seq} of group {ranks}; ranks "
                                   f"{[ranks[i] for i in range(len(ranks)) if i not in slot['x']]}"
                                   f" never came")
            xs = [slot["x"][i] for i in range(len(ranks))]
            slot["taken"] += 1
            if slot["taken"] == len(ranks):
                del self._slots[key]
        return _compute(op_name, xs, me, attrs)

    def run(self, fns):
        """Run ``fns[r]()`` as rank r (one thread each); returns their results. The
        first exception raised by a rank is re-raised (with its rank)."""
        from fw.core.internal import collectives

        if len(fns) != self.world_size:
            raise ValueError(f"SimulatedRanks.run: expected {self.world_size} functions, got "
                             f"{len(fns)}")
        results = [None] * len(fns)
        errors = []

        def main(r):
            self._tls.rank = r
            self._tls.seq = {}
            try:
                results[r] = fns[r]()
            except BaseException as e:   # reported by the caller's thread
                errors.append((r, e))
                with self._cond:
                    self._cond.notify_all()

        # one bound-method object: `self._backend` makes a new one on every access, and
        # unregister_backend(fn) removes only the very object registered
        backend = self._backend
        prev = collectives.register_backend(backend)
        try:
            threads = [threading.Thread(target=main, args=(r,), daemon=True)
                       for r in range(len(fns))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(self.timeout * 4)
            if any(t.is_alive() for t in threads):
                raise TimeoutError("SimulatedRanks.run: ranks still running after "
                                   f"{self.timeout * 4} s")
        finally:
            if prev is None:
                collectives.unregister_backend(backend)
            else:
                collectives.register_backend(prev)
            self._slots.clear()
        if errors:
            r, e = errors[0]
            raise RuntimeError(f"SimulatedRanks: rank {r} failed: {type(e).__name__}: {e}") \
                from e
        return results


def _compute(op_name, xs, me, attrs):
    red = attrs.get("reduce_op", "sum")
    if op_name == "c_allreduce":
        return _reduce(xs, red)
    if op_name == "c_broadcast":
        return xs[int(attrs["root"])].copy()
    if op_name == "c_reduce":
        out = _reduce(xs, red)
        return out if me == int(attrs["root"]) else np.zeros_like(out)
    if op_name == "c_allgather":
        return np.concatenate(xs, axis=0)
    if op_name == "c_reducescatter":
        out = _reduce(xs, red)
        n = len(xs)
        k = out.shape[0] // n
        return np.ascontiguousarray(out[me * k:(me + 1) * k])
    if op_name == "all_to_all":  # chunk `me` of every rank, in rank order
        k = xs[0].shape[0] // len(xs)
        return np.concatenate([x[me * k:(me + 1) * k] for x in xs], axis=0)
    raise ValueError(f"SimulatedRanks: no simulation of collective {op_name!r}")


def _reduce(xs, red):
    out = np.array(xs[0], copy=True)
    for x in xs[1:]:
        if red in ("sum", "avg"):
            out = out + x
        elif red == "max":
            out = np.maximum(out, x)
        elif red == "min":
            out = np.minimum(out, x)
        elif red == "prod":
            out = out * x
    if red == "avg":
        out = (out / len(xs)).astype(xs[0].dtype, copy=False)
    return out.astype(xs[0].dtype, copy=False)


def simulate(program, mesh, annotations, inputs, output_placements=None, timeout=60.0):
    """Propagate, partition and run `program` on every rank of `mesh` as threads.

    Args:
        program (Program): a global program whose params/consts hold whole values.
        mesh (ProcessMesh): the mesh (its process ids are the simulated ranks
            0..n-1).
        annotations (dict): block-0 argument -> placements.
        inputs (list): the whole input arrays (each rank is fed its block).
        output_placements (list, optional): per output; default Replicate.
        timeout (float): seconds a rank waits at a collective.

    Returns:
        (outputs, rank_programs, propagation): ``outputs[r]`` is the list of rank r's
        output arrays (its local blocks).
    """
    from fw.core.ir.executor import compile_program
    from fw.core.tensor import wrap
    from fw.distributed.auto_parallel._layout import local_box
    from fw.distributed.auto_parallel.placement import Replicate
    from fw.distributed.auto_parallel.static.partition import partition
    from fw.distributed.auto_parallel.static.propagation import propagate

    prop = propagate(program, mesh, annotations)
    rep = [Replicate()] * mesh.ndim
    outs_pl = output_placements or [rep] * len(program.block.outputs)
    ids = [int(r) for r in np.asarray(mesh.mesh).reshape(-1)]
    sim = SimulatedRanks(max(ids) + 1, timeout=timeout)
    rank_progs = {}

    def block(arr, pl, coord):
        box = local_box(arr.shape, pl, mesh, coord)
        return np.ascontiguousarray(arr[tuple(slice(s, s + n) for s, n in box)])

    for r in ids:
        coord = mesh.coordinate(r)

        def local_tensor(arg, pl, coord=coord):
            t = program.captured[arg.label]
            lt = wrap(block(t._data, pl, coord).copy())
            lt.name = arg.label
            return lt
        rank_progs[r] = partition(program, prop, mesh, coord, sim.group_of(mesh, coord),
                                  local_tensor, outs_pl)
    ins = program.inputs()

    def runner(r):
        coord = mesh.coordinate(r)
        arrays = [block(np.asarray(x), prop.placements[a], coord) for x, a in zip(inputs, ins)]
        return [np.asarray(o) for o in compile_program(rank_progs[r].program)(arrays)]

    fns = [(lambda r=r: runner(r)) if r in rank_progs else (lambda: None)
           for r in range(sim.world_size)]
    outs = sim.run(fns)
    return outs, rank_progs, prop
