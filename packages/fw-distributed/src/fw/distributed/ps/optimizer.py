"""`PSOptimizer`: what ``fleet.distributed_optimizer`` returns in parameter-server
mode. The wrapped optimizer's rule runs on the servers (sync, async) or locally
between merges (geo).

- sync / async: ``step()`` pushes every `SparseEmbedding`'s row gradients and the
  flat dense gradient to the servers in one round of messages; the servers'
  replies to the dense push carry the updated dense slices, written into the
  parameters. The next forward pulls fresh rows.
- geo (``k_steps = k > 0``): ``step()`` updates locally (the wrapped optimizer
  for dense parameters, the same rule for the cached rows); every k steps the
  local progress since the last merge, divided by the number of trainers
  (Paddle's GeoCommunicator), is added on the servers, and the merged values are
  pulled back.
"""
from __future__ import annotations

import numpy as np

from fw.distributed.ps import runtime
from fw.distributed.ps._protocol import Op
from fw.distributed.ps.rules import spec_from_optimizer
from fw.distributed.ps.table import SparseTable

__all__ = ["PSOptimizer"]


class PSOptimizer:
    """Wraps an fw optimizer (SGD, Adagrad, Adam) for parameter-server training.

    Args:
        optimizer (Optimizer): its type and hyperparameters become the servers'
            update rule; its parameters are the dense parameters.
        strategy (DistributedStrategy): ``a_sync`` and ``a_sync_configs["k_steps"]``
            choose sync, async or geo.

    Returns:
        An object with ``step()``, ``minimize(loss)``, ``clear_grad()``; other
        attributes are the wrapped optimizer's.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> from fw.distributed.ps.optimizer import PSOptimizer
        >>> lin = fw.nn.Linear(2, 1)
        >>> opt = PSOptimizer(fw.optimizer.SGD(0.1, parameters=lin.parameters()),
        ...                   fleet.DistributedStrategy())
        >>> opt.mode, opt.dense_size()
        ('async', 3)
    """

    def __init__(self, optimizer, strategy):
        self.inner = optimizer
        self.rule = spec_from_optimizer(optimizer)
        self.mode, self.k_steps = runtime.mode_of(strategy)
        self.params = [p for p in optimizer.get_parameter_list() if not p.stop_gradient]
        for p in self.params:
            if str(p.dtype).split(".")[-1] != "float32":
                raise TypeError(f"fleet.distributed_optimizer: parameter {p.name!r} is "
                                f"{p.dtype}; parameter-server mode keeps float32 parameters")
        self._steps = 0
        self._since_merge = 0
        self._cache = {}       # geo: table id -> (local rows, rows at the last merge)
        self._touched = {}     # geo: table id -> [ids updated since the last merge]
        self._dense_snap = None

    # -- dense parameters as one flat vector ------------------------------------------
    def dense_size(self) -> int:
        return int(sum(int(np.prod(p.shape)) for p in self.params))

    def dense_flat(self) -> np.ndarray:
        if not self.params:
            return np.empty(0, np.float32)
        return np.concatenate([np.asarray(p.numpy(), np.float32).ravel() for p in self.params])

    def _grad_flat(self) -> np.ndarray:
        out = []
        for p in self.params:
            g = p.grad
            out.append(np.zeros(int(np.prod(p.shape)), np.float32) if g is None
                       else np.asarray(g.numpy(), np.float32).ravel())
        return np.concatenate(out) if out else np.empty(0, np.float32)

    def set_dense(self, flat: np.ndarray) -> None:
        o = 0
        for p in self.params:
            n = int(np.prod(p.shape))
            p.set_value(flat[o:o + n].reshape(p.shape))
            o += n

    def after_init_worker(self):
        if self.mode == "geo":
            self._dense_snap = self.dense_flat()

    # -- rows for SparseEmbedding.forward -----------------------------------------
    def pull_rows(self, layer, ids, create=True, show=None, click=None) -> np.ndarray:
        rt = runtime.require("SparseEmbedding.forward", worker=True)
        if self.mode != "geo" or not create:
            # a lookup without training (eval, is_test) reads the servers' merged rows,
            # not geo's local copies of them
            return rt.client.pull_sparse(layer.table_id, ids, layer._dim, create, show, click)
        if getattr(layer, "_entry", None) is not None:
            raise NotImplementedError(f"SparseEmbedding({layer.table_name!r}): an entry "
                                      f"(feature admission) is not supported in geo mode "
                                      f"(k_steps > 0): the trainers' local copies would "
                                      f"create rows the servers did not admit")
        cache = self._cache.get(layer.table_id)
        if cache is None:
            cfg = layer.table_config(self.rule)
            cache = self._cache[layer.table_id] = (SparseTable(**cfg), SparseTable(**cfg))
        local, snap = cache
        have = local.index.find(ids) >= 0
        if not have.all():
            miss = ids[~have]
            rows = rt.client.pull_sparse(layer.table_id, miss, layer._dim)
            local.load_rows({"ids": miss, "values": rows})
            snap.load_rows({"ids": miss, "values": rows})
        return local.pull(ids)

    # -- the step ------------------------------------------------------------------------
    def step(self):
        rt = runtime.require("distributed_optimizer(...).step", worker=True)
        if not rt.worker_ready:
            raise RuntimeError("fleet.distributed_optimizer(...).step: call fleet.init_worker() "
                               "first")
        self._steps += 1
        if self.mode == "geo":
            self._geo_step(rt)
        else:
            self._push_step(rt)

    def _push_step(self, rt):
        c = rt.client
        sync = self.mode == "sync"
        meta = {"sync": True} if sync else None
        parts = []
        for layer in runtime.layers():
            ids, grads = layer.take_grads()
            if ids.size or sync:
                parts += c.push_sparse(layer.table_id, ids, grads, every_server=sync, meta=meta)
        n_sparse = len(parts)
        total = rt.dense_total
        if total:
            parts += c.dense_parts(Op.PUSH_DENSE, self._grad_flat(), meta)
        replies = c.call(parts, f"step {self._steps} ({self.mode})")
        if total:
            self.set_dense(c.gather_dense(replies[n_sparse:], total))

    def _geo_step(self, rt):
        self.inner.step()        # dense parameters: the local optimizer
        for layer in runtime.layers():
            ids, grads = layer.take_grads()
            if ids.size:
                local, _ = self._cache[layer.table_id]
                local.push(ids, grads)
                self._touched.setdefault(layer.table_id, []).append(ids)
        self._since_merge += 1
        if self._since_merge >= self.k_steps:
            self._geo_merge(rt)

    def _geo_merge(self, rt):
        c = rt.client
        T = rt.role.num_trainers
        parts, pulls = [], []
        for tid, chunks in self._touched.items():
            ids = np.unique(np.concatenate(chunks))
            local, snap = self._cache[tid]
            delta = (local.pull(ids) - snap.pull(ids)) / np.float32(T)
            parts += c.push_sparse(tid, ids, delta, op=Op.ADD_SPARSE)
            pulls.append((tid, ids, local.dim))
        n_sparse = len(parts)
        total = rt.dense_total
        if total:
            delta = (self.dense_flat() - self._dense_snap) / np.float32(T)
            parts += c.dense_parts(Op.ADD_DENSE, delta)
        replies = c.call(parts, f"geo merge after step {self._steps}")
        if total:
            new = c.gather_dense(replies[n_sparse:], total)
            self.set_dense(new)
            self._dense_snap = new
        for tid, ids, dim in pulls:
            fresh = c.pull_sparse(tid, ids, dim)
            local, snap = self._cache[tid]
            local.load_rows({"ids": ids, "values": fresh})
            snap.load_rows({"ids": ids, "values": fresh})
        self._touched = {}
        self._since_merge = 0

    def flush(self):
        """Send what is still local (geo: a last merge); called by stop_worker."""
        if self.mode == "geo" and self._since_merge:
            self._geo_merge(runtime.require("stop_worker", worker=True))

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """``loss.backward()`` then `step`; returns ``(None, None)`` (no program ops)."""
        loss.backward()
        self.step()
        return None, None

    def clear_grad(self, set_to_zero=True):
        self.inner.clear_grad(set_to_zero)
        for layer in runtime.layers():
            layer.clear()

    clear_gradients = clear_grad

    def __getattr__(self, name):
        if name == "inner":      # not set yet (a half-built object): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
