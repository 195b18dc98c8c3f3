"""ZeRO sharding (Rajbhandari et al., 2020, "ZeRO: Memory Optimizations Toward
Training Trillion Parameter Models"), in Paddle's three levels:

- ``"os"`` (stage 1): each rank keeps the optimizer state of its own part of the
  parameters. Gradients are all-reduced (the model is a `DataParallel`), each rank
  updates its part, and the updated parameters are broadcast from their owners.
- ``"os_g"`` (stage 2): as stage 1, but gradients are *reduced* to the owner of
  each parameter instead of all-reduced — bucket by bucket during backward (the
  model is a `DataParallel` whose buckets each hold one owner's parameters) — and
  the other ranks free theirs as soon as the reduction completes.
- ``"p_g_os"`` (stage 3): every parameter is flattened and split evenly over the
  ranks and a rank keeps only its slice; each layer all-gathers its full
  parameters just before it runs (the next layer's all-gather is already in
  flight: prefetch) and frees them after, and backward gathers them again,
  recomputes the layer and hands each full gradient to a bucket that is
  reduce-scattered into the slices as soon as it is full, while backward goes on
  (full gradients never accumulate beyond one bucket); the optimizer updates
  slices.

Stages 1 and 2 partition whole parameters (greedily, largest first, to the least
loaded rank — Paddle's ``DygraphShardingOptimizer`` does the same); stage 3 splits
each parameter. The wrapped optimizer keeps its class and hyper-parameters; its
parameter groups are narrowed to what this rank owns.

Stage 3 gathers layer by layer (see `Stage3Model`). What this implementation does
not do: stage 2 frees the gradients when backward ends, not bucket by bucket.
"""

from __future__ import annotations

import weakref

import numpy as np

import fw
from fw.autograd import PyLayer
from fw.core.internal import bump_version, replace_data
from fw.core.tensor import wrap
from fw.distributed import _fleet_comm as comm
from fw.distributed.sharding._stage3_comm import GradBuckets, Prefetcher, progress_driver
from fw.nn import Layer

__all__ = ["partition_params", "owners_of", "ShardingOptimizer", "Stage3Model",
           "Stage3Optimizer", "shard_range"]


def partition_params(sizes, nranks):
    """Owner rank of each parameter: largest first to the least loaded rank (ties:
    the lowest rank), so every rank updates about the same number of elements.

    Args:
        sizes (list[int]): the parameters' element counts.
        nranks (int): the ranks.

    Returns:
        list[int]: the owner of each parameter.

    Examples:
        >>> import fw
        >>> from fw.distributed.sharding import partition_params
        >>> partition_params([10, 1, 8, 3], 2)
        [0, 0, 1, 1]
    """
    load = [0] * nranks
    owner = [0] * len(sizes)
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        r = min(range(nranks), key=lambda r: (load[r], r))
        owner[i] = r
        load[r] += sizes[i]
    return owner


def owners_of(params, nranks):
    """``{id(param): owner group rank}`` for the trainable `params`, partitioned in
    the order of their names, so the model side (which reduces gradients to the
    owners) and the optimizer side (which updates what it owns) agree whatever
    order each lists the parameters in.

    Args:
        params (list[Parameter]): the parameters.
        nranks (int): the ranks.

    Returns:
        dict: ``id(param)`` -> owner rank.

    Examples:
        >>> import fw
        >>> from fw.distributed.sharding import owners_of
        >>> net = fw.nn.Linear(4, 2)
        >>> sorted(owners_of(net.parameters(), 2).values())
        [0, 1]
    """
    ps = sorted((p for p in params if not p.stop_gradient), key=lambda p: p.name)
    return {id(p): o for p, o in zip(ps, partition_params([p._data.size for p in ps],
                                                          nranks))}


def shard_range(numel, nranks, rank):
    """``(start, end, size)``: rank's slice of a flattened tensor of `numel` elements
    split into `nranks` slices of equal `size` (the last padded)."""
    size = -(-numel // nranks)
    start = min(rank * size, numel)
    return start, min(start + size, numel), size


def _narrow(optimizer, keep):
    """Restrict `optimizer`'s parameter groups to `keep` (a function of a parameter
    returning the parameter to optimize instead, or None to drop it)."""
    groups = []
    for g in optimizer.get_param_groups():
        ps = [q for q in (keep(p) for p in g["params"]) if q is not None]
        if ps:
            groups.append(dict(g, params=ps))
    optimizer.set_param_groups(groups)


class ShardingOptimizer:
    """ZeRO stage 1 or 2 around `optimizer` over `group`: each rank keeps the
    optimizer state of the parameters it owns (`owners_of`) and broadcasts them after
    its update; stage 2 also reduces each gradient to its owner only.
    `group_sharded_parallel` makes it.

    Args:
        optimizer (Optimizer): the optimizer, made with ``parameters``.
        group (Group, optional): the sharding group; None: all ranks.
        stage (int, optional): 1 or 2. Default: 1.
        grads_reduced (bool, optional): a `DataParallel` already reduced each gradient
            to its owner (stage 2). Default: False.

    Examples:
        >>> import fw
        >>> from fw.distributed.sharding import ShardingOptimizer
        >>> net = fw.nn.Linear(4, 2)
        >>> opt = ShardingOptimizer(fw.optimizer.SGD(0.1, parameters=net.parameters()))
        >>> net(fw.ones([3, 4])).mean().backward()
        >>> opt.step()
        >>> opt.clear_grad()
    """

    def __init__(self, optimizer, group=None, stage=1, grads_reduced=False):
        if stage not in (1, 2):
            raise ValueError(f"ShardingOptimizer: stage must be 1 or 2, got {stage!r}")
        plist = optimizer.get_parameter_list()
        if plist is None:
            raise ValueError("group_sharded_parallel: the optimizer was made without "
                             "'parameters'")
        self._inner = optimizer
        self._group = comm.world() if group is None else group
        self._stage = stage
        self._params = [p for p in plist if not p.stop_gradient]
        n = self._group.nranks
        owners = owners_of(self._params, n)
        self._owner = [owners[id(p)] for p in self._params]
        # stage 2 under a DataParallel that reduces each owner's buckets to it in
        # backward: step() only drops what this rank does not own
        self._grads_reduced = grads_reduced
        me = self._group.rank
        owned = {id(p) for p, o in zip(self._params, self._owner) if o == me}
        self._all = list(plist)
        _narrow(optimizer, lambda p: p if id(p) in owned else None)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def _by_owner(self):
        out = {}
        for p, o in zip(self._params, self._owner):
            out.setdefault(o, []).append(p)
        return out

    def _reduce_grads(self):
        g = self._group
        n = g.nranks
        for r, ps in sorted(self._by_owner().items()):
            have = [p for p in ps if p._grad is not None]
            # a flag per parameter so every rank reduces the same layout even when
            # some rank has no gradient for a parameter
            flat = np.concatenate([p._grad._data.reshape(-1) if p._grad is not None else
                                   np.zeros(p._data.size, p._data.dtype) for p in ps])
            mask = np.array([p._grad is not None for p in ps], dtype=np.int32)
            comm.reduce(flat, dst=r, group=g)
            comm.all_reduce(mask, op="max", group=g)
            if g.rank == r:
                flat *= 1.0 / n
                o = 0
                for p, m in zip(ps, mask):
                    k = p._data.size
                    if m:
                        val = flat[o:o + k].reshape(p._data.shape)
                        if p._grad is not None:
                            np.copyto(p._grad._data, val)
                        else:
                            p.grad = wrap(val.copy())
                    o += k
            else:
                for p in have:
                    p.clear_gradient(False)

    def _broadcast_params(self):
        g = self._group
        for r, ps in sorted(self._by_owner().items()):
            flat = np.concatenate([p._data.reshape(-1) for p in ps])
            comm.broadcast(flat, src=r, group=g)
            if g.rank != r:
                o = 0
                for p in ps:
                    k = p._data.size
                    np.copyto(p._data, flat[o:o + k].reshape(p._data.shape))
                    o += k

    def step(self):
        """One optimizer step: reduce the gradients to their owners (stage 2), update the
        parameters this rank owns and broadcast every parameter from its owner.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.step()
            >>> opt.clear_grad()
        """
        if self._group.nranks > 1 and self._stage == 2:
            if self._grads_reduced:
                me = self._group.rank
                for p, o in zip(self._params, self._owner):
                    if o != me and p._grad is not None:
                        p.clear_gradient(False)
            else:
                self._reduce_grads()
        self._inner.step()
        if self._group.nranks > 1:
            self._broadcast_params()

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Paddle's static-style entry: the same as `step` (backward already ran).

        Args:
            loss (Tensor): the loss (its backward must have run).
            startup_program: accepted for Paddle's API.
            parameters: accepted for Paddle's API.
            no_grad_set: accepted for Paddle's API.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.minimize(None)
        """
        self.step()

    def clear_grad(self, set_to_zero=True):
        """Clear the gradients of every parameter of the model (not only the owned ones).

        Args:
            set_to_zero (bool, optional): zero the gradients in place (else drop them).
                Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.step()
            >>> opt.clear_grad()
        """
        for p in self._all:
            if not p.stop_gradient:
                p.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self):
        """This rank's shard of the optimizer state (the state of the parameters or
        slices it updates).

        Returns:
            dict: name -> Tensor.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.step()
            >>> any(k.endswith("moment1_0") for k in opt.state_dict())
            True
        """
        return self._inner.state_dict()

    def set_state_dict(self, state_dict):
        """Load a shard saved by `state_dict` on the same rank.

        Args:
            state_dict (dict): the saved shard.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.step()
            >>> opt.set_state_dict(opt.state_dict())
        """
        return self._inner.set_state_dict(state_dict)


class _Slot:
    __slots__ = ("param", "shape", "numel", "start", "end", "size", "shard", "owners")


class _GatherParam(PyLayer):
    """Forward: a parameter's full array (`full`, all-gathered from the slices by
    the caller). Backward: the full gradient goes to the model's gradient buckets
    (`GradBuckets`), reduce-scattered into the slices bucket by bucket while
    backward goes on; the slice's gradient is written when the buckets complete
    (the last shard's hook). With one rank the slice is the whole gradient."""

    @staticmethod
    def forward(ctx, shard, slot, grads, full):
        ctx.slot, ctx.grads = slot, grads
        return wrap(full)

    @staticmethod
    def backward(ctx, dfull):
        return wrap(ctx.grads.add(ctx.slot, dfull._data))


class _Memory:
    """Bytes of gathered full parameters alive now, and the peak (each gathered
    array is its own allocation; a weakref finalizer counts it down when freed)."""

    def __init__(self):
        self.alive = 0
        self.peak = 0

    def track(self, a):
        self.alive += a.nbytes
        self.peak = max(self.peak, self.alive)
        weakref.finalize(a, self._free, a.nbytes)

    def _free(self, n):
        self.alive -= n


class _WatchedParams(dict):
    """An owner layer's ``_parameters`` while it belongs to a `Stage3Model`: reading
    a sharded parameter by attribute (``layer.weight``) outside the owner's own
    forward — a tied output head reading an embedding's weight, say — gathers it
    there and then (a collective: every rank runs the same code, so they all read it
    at the same point) while the model is running; otherwise it gives the stored
    value (the empty placeholder between steps, the gathered tensor inside the
    owner's forward)."""

    def __init__(self, items, model, owner):
        super().__init__(items)
        self._model = model
        self._owner = owner

    def __getitem__(self, name):
        v = dict.__getitem__(self, name)
        m = self._model
        if m._depth and id(self._owner) not in m._active:
            s = m._slot_of.get(id(v))
            if s is not None:
                return m._gather_slots([s])[0]
        return v


class Stage3Model(Layer):
    """ZeRO stage 3: `layers`' parameters live as 1/N slices (``_slots[i].shard``,
    the tensors the optimizer updates); the full parameters exist only while the
    layer that owns them runs.

    Layer by layer: each sublayer that owns parameters gets a forward that
    all-gathers *its* parameters (per dtype: its largest parameter alone, received in
    place, and the others in one more collective — `_gather_groups`), puts
    `_GatherParam` outputs in their place, runs, and puts the empty placeholders
    back. With gradients enabled that forward runs under ``fw.autograd.recompute``:
    nothing of the layer (full parameters included) is kept for backward, which
    gathers the layer's parameters again, recomputes it and hands each parameter's
    full gradient to a bucket (`_stage3_comm.GradBuckets`); a bucket of
    `bucket_size` bytes is reduce-scattered into the slices as soon as it is full,
    while backward goes on with the earlier layers, and the last slice's gradient
    hook waits for the buckets and writes the averaged slices (DeepSpeed's ZeRO-3
    gathers again in backward too; here the recomputation also lets fw's version
    checks hold, as the full arrays are new tensors each time). With `prefetch`,
    starting a layer issues the all-gather of the layer that runs after it (in
    forward the next one in the last forward's order, in backward the previous
    one), so it travels while this layer computes. So the full parameters of about
    two layers at a time are alive, in forward and in backward. Layers with
    buffers (batch norm's running statistics) are not recomputed — their
    statistics would be updated twice — and keep their gathered parameters until
    backward has used them.

    A parameter read outside its layer's forward (a tied output head reading
    ``self.emb.weight``) is gathered at that read (`_WatchedParams`); tied
    parameters are gathered by each layer that owns them, their gradients summed in
    the slice. ``state_dict()`` / `get_all_parameters` gather the full values into
    the original parameters (collective). `memory_stats` reports the peak of
    gathered bytes, `comm_stats` the collectives of the buckets and prefetches.

    Args:
        layers (Layer): the model.
        group (Group, optional): the sharding group; None: all ranks.
        bucket_size (int, optional): bytes of gradient per reduce-scatter bucket.
            Default: 2 ** 23.
        prefetch (bool, optional): gather the next layer's parameters while the
            current one runs. Default: True.

    Examples:
        >>> import fw
        >>> from fw.distributed.sharding import Stage3Model
        >>> model = Stage3Model(fw.nn.Linear(4, 2))
        >>> model(fw.ones([3, 4])).shape
        [3, 2]
    """

    def __init__(self, layers, group=None, bucket_size=2 ** 23, prefetch=True):
        super().__init__()
        self._layers = layers
        self._group = comm.world() if group is None else group
        from fw.nn.parameter import Parameter

        n, r = self._group.nranks, max(self._group.rank, 0)
        slots, by_id, owners = [], {}, {}
        for owner in layers.sublayers(include_self=True):
            for name, p in owner._parameters.items():
                if p is None:
                    continue
                s = by_id.get(id(p))
                if s is None:
                    s = by_id[id(p)] = _Slot()
                    s.param = p
                    s.shape = list(p._data.shape)
                    s.numel = p._data.size
                    s.start, s.end, s.size = shard_range(s.numel, n, r)
                    buf = np.zeros(s.size, dtype=p._data.dtype)
                    buf[:s.end - s.start] = p._data.reshape(-1)[s.start:s.end]
                    s.shard = Parameter(buf, requires_grad=not p.stop_gradient,
                                        name=f"{p.name}.shard{r}")
                    for a in ("optimize_attr", "regularizer", "need_clip"):
                        if hasattr(p, a):
                            setattr(s.shard, a, getattr(p, a))
                    s.owners = []
                    slots.append(s)
                s.owners.append((owner, name))
                owners.setdefault(id(owner), (owner, []))[1].append((name, s))
        object.__setattr__(self, "_slots", slots)
        object.__setattr__(self, "_slot_of", {id(s.param): s for s in slots})
        object.__setattr__(self, "_memory", _Memory())
        self._depth = 0          # > 0 while the model's forward (or a recomputation) runs
        self._active = set()     # ids of the owner layers whose forward is running
        self._in_forward = False  # the model's own forward (not backward's recomputation)
        self._full = True
        driver = progress_driver(self._group) if n > 1 else None
        object.__setattr__(self, "_driver", driver)
        object.__setattr__(self, "_grads", GradBuckets(self._group, bucket_size, driver))
        object.__setattr__(self, "_prefetcher", Prefetcher(self._group, self._memory, driver)
                           if prefetch and n > 1 else None)
        # the order in which the last forward ran the owner layers (prefetch follows it)
        self._order, self._pos = [], {}
        self._cur_order, self._cur_pos = [], {}
        self._units = {}  # id(owner) -> (named slots, recomputed in backward)
        self.release()
        for owner, named in owners.values():
            self._install(owner, named)
        self._shard_hooks = [s.shard.register_hook(self._grads.slot_hook(s)) for s in slots
                       if not s.shard.stop_gradient] if n > 1 else []

    # ------------------------------------------------------------ per layer
    def _install(self, owner, named):
        object.__setattr__(owner, "_parameters", _WatchedParams(owner._parameters, self, owner))
        orig = owner.forward   # the bound method of its class
        recompute_ok = not any(True for _ in owner.buffers(include_sublayers=False))
        trains = any(not s.shard.stop_gradient for _, s in named)
        self._units[id(owner)] = ([s for _, s in named], recompute_ok and trains)

        def segment(*inputs, **kwargs):
            fulls = self._gather_slots([s for _, s in named], key=id(owner))
            self._prefetch_after(id(owner))
            for (name, _), full in zip(named, fulls):
                dict.__setitem__(owner._parameters, name, full)
            self._active.add(id(owner))
            self._depth += 1
            try:
                return orig(*inputs, **kwargs)
            finally:
                self._depth -= 1
                self._active.discard(id(owner))
                for name, s in named:
                    dict.__setitem__(owner._parameters, name, s.param)

        def forward(*inputs, **kwargs):
            from fw.autograd import recompute

            if recompute_ok and fw.is_grad_enabled() and \
                    any(not s.shard.stop_gradient for _, s in named):
                return recompute(segment, *inputs, **kwargs)
            return segment(*inputs, **kwargs)

        forward.__name__ = f"zero3({type(owner).__name__})"
        object.__setattr__(owner, "forward", forward)

    def _prefetch_after(self, oid):
        """Record `oid` in this forward's order and start gathering the layer that
        runs after it: in forward the next one of the last forward's order, in
        backward the previous one that backward recomputes."""
        if self._in_forward and oid not in self._cur_pos:
            self._cur_pos[oid] = len(self._cur_order)
            self._cur_order.append(oid)
        pf = self._prefetcher
        if pf is None:
            return
        i = self._pos.get(oid)
        if i is None:
            return
        nxt = None
        if self._in_forward:
            if i + 1 < len(self._order):
                nxt = self._order[i + 1]
        elif fw.is_grad_enabled():
            for j in range(i - 1, -1, -1):
                if self._units[self._order[j]][1]:
                    nxt = self._order[j]
                    break
        if nxt is None or nxt == oid:
            return
        ss = self._units[nxt][0]
        for gk, ks in _gather_groups(ss):
            if (nxt, gk) not in pf.pending:
                pf.issue((nxt, gk), np.concatenate([ss[k].shard._data for k in ks]))

    def _gather_slots(self, slots, key=None):
        """Full tensors of `slots` (all-gathered per `_gather_groups`, or taken from
        a prefetch issued for layer `key`), as `_GatherParam` outputs where
        gradients flow."""
        g = self._group
        arrays = [None] * len(slots)
        pf = self._prefetcher
        for gk, ks in _gather_groups(slots):
            parts = pf.take((key, gk)) if pf is not None and key is not None else None
            counted = parts is not None  # a prefetch's buffer is counted from its issue
            if parts is None:
                flat = np.concatenate([slots[k].shard._data for k in ks])
                parts = comm.all_gather(flat, group=g)  # [n, sum of slice sizes]
            if len(ks) == 1:
                # rank-major slices of one parameter are the flat parameter (padding
                # at the end): a view of the received buffer, no copy
                s = slots[ks[0]]
                arrays[ks[0]] = parts.reshape(-1)[:s.numel].reshape(s.shape)
                if not counted:
                    self._memory.track(parts if parts.base is None else parts.base)
                continue
            o = 0
            for k in ks:
                s = slots[k]
                # a copy of its own (not a view of `parts`): freed alone, counted alone
                a = np.array(parts[:, o:o + s.size].reshape(-1)[:s.numel].reshape(s.shape))
                self._memory.track(a)
                arrays[k] = a
                o += s.size
        if pf is not None and not pf.pending and not self._grads.in_flight and \
                self._driver is not None:
            self._driver.pause()
        out = []
        for s, a in zip(slots, arrays):
            if s.shard.stop_gradient or not fw.is_grad_enabled():
                out.append(wrap(a))
            else:
                if self._in_forward:
                    self._grads.expect(s)  # its gradient arrives in the coming backward
                out.append(_GatherParam.apply(s.shard, s, self._grads, a))
        return out

    def comm_stats(self) -> dict:
        """The communication counters since construction.

        Returns:
            dict: ``reduce_scatters`` (gradient buckets sent), ``early`` (those sent while
            backward was still running), ``gradients`` (full gradients they carried),
            ``prefetched`` (all-gathers issued ahead) and ``prefetch_used`` (those a layer
            then took).

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 4), fw.nn.Linear(4, 2))
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, level="p_g_os")
            >>> model(fw.ones([2, 4])).sum().backward()
            >>> opt.step()
            >>> model.comm_stats()      # one rank: nothing to send
            {'reduce_scatters': 0, 'early': 0, 'gradients': 0, 'prefetched': 0, 'prefetch_used': 0}
        """
        st = dict(self._grads.stats)
        pf = self._prefetcher
        st["prefetched"] = pf.stats["prefetched"] if pf is not None else 0
        st["prefetch_used"] = pf.stats["used"] if pf is not None else 0
        return st

    def _sync_grads(self):
        """Finish a backward whose buckets are still open (some slice got no
        gradient, so its hook never ran): collective, every rank gets here alike."""
        if self._grads.in_flight:
            self._grads.finish()
        elif self._grads.armed and not self._in_forward:
            self._grads.armed = False
            self._grads.expected = set()
            self._grads.fired = set()
        if self._prefetcher is not None:
            self._prefetcher.drain()

    def memory_stats(self) -> dict:
        """Parameter memory of this rank in bytes: ``shards`` (the slices it keeps),
        ``full_model`` (every parameter whole), ``gathered_peak`` (the most
        gathered full parameters alive at once since the last `reset_memory_stats`),
        ``peak`` (shards + gathered_peak) and ``gathered_now``.

        Returns:
            dict: the byte counts.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> stats = model.memory_stats()
            >>> stats["full_model"]          # 4 * 2 + 2 float32
            40
        """
        shards = sum(s.shard._data.nbytes for s in self._slots)
        full = sum(s.numel * s.shard._data.itemsize for s in self._slots)
        m = self._memory
        return {"shards": shards, "full_model": full, "gathered_peak": m.peak,
                "peak": shards + m.peak, "gathered_now": m.alive}

    def reset_memory_stats(self):
        """Restart the ``gathered_peak`` measurement of `memory_stats` from now.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> model.reset_memory_stats()
            >>> model.memory_stats()["gathered_peak"]
            0
        """
        self._memory.peak = self._memory.alive

    # ------------------------------------------------------------ whole model
    def release(self):
        """Drop the full arrays of the original parameters (keep the slices); the
        inverse of `get_all_parameters`.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> model.get_all_parameters()
            >>> model.release()
            >>> model.memory_stats()["shards"]
            40
        """
        if not self._full:
            return
        for s in self._slots:
            replace_data(s.param, np.empty((0,), dtype=s.param._data.dtype))
        self._full = False

    def get_all_parameters(self):
        """All-gather the full parameters into the original `Parameter` objects
        (collective: every rank calls it; before saving or evaluating elsewhere).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.step()
            >>> model.get_all_parameters()
            >>> net.weight.shape
            [4, 2]
        """
        if self._full:
            return
        with fw.no_grad():
            fulls = self._gather_slots(self._slots)
        for s, full in zip(self._slots, fulls):
            replace_data(s.param, full._data)
        self._full = True

    def forward(self, *inputs, **kwargs):
        self.release()
        if self._grads.in_flight:  # the last backward left slices without a gradient
            self._grads.finish()
        self._depth += 1
        self._in_forward = True
        self._cur_order, self._cur_pos = [], {}
        try:
            return self._layers(*inputs, **kwargs)
        finally:
            self._depth -= 1
            self._in_forward = False
            self._order, self._pos = self._cur_order, self._cur_pos
            if self._prefetcher is not None:
                self._prefetcher.drain()

    def state_dict(self, destination=None, include_sublayers=True, structured_name_prefix="",
                   use_hook=True, keep_vars=True):
        self.get_all_parameters()
        return self._layers.state_dict(destination, include_sublayers, structured_name_prefix,
                                       use_hook, keep_vars)

    def set_state_dict(self, state_dict, use_structured_name=True):
        self.get_all_parameters()
        rep = self._layers.set_state_dict(state_dict, use_structured_name)
        for s in self._slots:
            flat = s.param._data.reshape(-1)
            s.shard._data[:s.end - s.start] = flat[s.start:s.end]
            bump_version(s.shard)
        return rep


def _gather_groups(slots):
    """How the parameters of `slots` are all-gathered: per dtype, the largest
    alone (its full array is then a view of the received buffer, so the layer's
    biggest parameter is never copied, nor held twice while copied) and the rest
    together (copied out: small). Returns ``[((dtype, part), [indices])]``, the
    same on every rank."""
    by_dtype = {}
    for k, s in enumerate(slots):
        by_dtype.setdefault(str(s.shard._data.dtype), []).append(k)
    out = []
    for dt, ks in by_dtype.items():
        big = max(ks, key=lambda k: (slots[k].size, -k))
        out.append(((dt, 0), [big]))
        rest = [k for k in ks if k != big]
        if rest:
            out.append(((dt, 1), rest))
    return out


class Stage3Optimizer:
    """The optimizer of a `Stage3Model`: it updates this rank's slices (whose
    gradients backward reduce-scattered).

    Args:
        optimizer (Optimizer): the optimizer over the model's original parameters.
        model (Stage3Model): the sharded model.

    Examples:
        >>> import fw
        >>> from fw.distributed.sharding import group_sharded_parallel
        >>> net = fw.nn.Linear(4, 2)
        >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
        >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
        >>> type(model).__name__, type(opt).__name__
        ('Stage3Model', 'Stage3Optimizer')
    """

    def __init__(self, optimizer, model):
        self._inner = optimizer
        self._model = model
        by_id = {id(s.param): s.shard for s in model._slots}
        self._all = [s.shard for s in model._slots]
        _narrow(optimizer, lambda p: by_id.get(id(p)))

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def step(self):
        """One optimizer step: update this rank's parameter slices (their gradients were
        reduce-scattered in backward) and release the gathered full parameters.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.step()
            >>> opt.clear_grad()
        """
        self._model._sync_grads()
        self._inner.step()
        self._model._full = True  # any gathered full arrays are stale now
        self._model.release()

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Paddle's static-style entry: the same as `step` (backward already ran).

        Args:
            loss (Tensor): the loss (its backward must have run).
            startup_program: accepted for Paddle's API.
            parameters: accepted for Paddle's API.
            no_grad_set: accepted for Paddle's API.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.minimize(None)
        """
        self.step()

    def clear_grad(self, set_to_zero=True):
        """Clear the gradients of every parameter of the model (not only the owned ones).

        Args:
            set_to_zero (bool, optional): zero the gradients in place (else drop them).
                Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.step()
            >>> opt.clear_grad()
        """
        for s in self._model._slots:
            s.shard.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self):
        """This rank's shard of the optimizer state (the state of the parameters or
        slices it updates).

        Returns:
            dict: name -> Tensor.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.step()
            >>> any(k.endswith("moment1_0") for k in opt.state_dict())
            True
        """
        return self._inner.state_dict()

    def set_state_dict(self, state_dict):
        """Load a shard saved by `state_dict` on the same rank.

        Args:
            state_dict (dict): the saved shard.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed.sharding import group_sharded_parallel
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model, opt, _ = group_sharded_parallel(net, opt, "p_g_os")
            >>> model(fw.ones([3, 4])).mean().backward()
            >>> opt.step()
            >>> opt.set_state_dict(opt.state_dict())
        """
        return self._inner.set_state_dict(state_dict)
