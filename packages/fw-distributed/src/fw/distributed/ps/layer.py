"""`SparseEmbedding`: an embedding whose table lives on the parameter servers.

The eager counterpart of Paddle's ``paddle.static.nn.sparse_embedding``: the
forward pulls the rows of the batch's distinct ids (created on the servers on
first use), makes them a leaf tensor that requires a gradient, and looks the
batch up in it; the distributed optimizer's ``step`` pushes that leaf's
gradient (one row per distinct id) back. The full ``[vocab, dim]`` matrix never
exists on a trainer.
"""
from __future__ import annotations

import numpy as np

import fw
import fw.nn as nn
import fw.nn.functional as F
from fw.distributed.ps import runtime
from fw.distributed.ps.entry import entry_spec
from fw.distributed.ps.initializer import spec_from_initializer
from fw.distributed.ps.table import check_ids, merge_rows

__all__ = ["SparseEmbedding"]


class SparseEmbedding(nn.Layer):
    """A sparse embedding table held by the parameter servers (``fleet`` PS mode).

    Arguments follow ``paddle.static.nn.sparse_embedding``.

    Args:
        size (list|tuple): ``[vocab_size, emb_size]``. Ids must be in
            ``[0, vocab_size)``; rows exist only for ids seen (a vocabulary of 10^9
            costs nothing until used).
        padding_idx (int, optional): an id whose output is zeros and whose row is
            never updated; negative counts from ``vocab_size``. Default: None.
        is_test (bool, optional): look up only: unseen ids read as zeros and are not
            created, nothing is pushed. Default: False.
        entry (EntryAttr, optional): feature admission — ``CountFilterEntry``,
            ``ProbabilityEntry`` or ``ShowClickEntry`` (then ``forward`` takes ``show``
            and ``click``); an id gets a row only once admitted, reading zeros
            before (see fw.distributed.ps.entry). Default: None (a row at first
            lookup).
        table_class (str, optional): ``"MemorySparseTable"`` (the only kind: rows
            in server memory). Default: ``"MemorySparseTable"``.
        param_attr (ParamAttr|Initializer, optional): the table's name and row
            initializer (Constant, Uniform, Normal, TruncatedNormal, XavierUniform,
            XavierNormal). Default: Xavier-uniform over ``size``, as Paddle's
            default weight initializer.
        dtype (str, optional): ``"float32"`` (the tables hold float32). Default:
            ``"float32"``.
        name (str, optional): the table name (default ``param_attr.name``, else
            ``sparse_embedding_<k>.w_0``). Trainers must create their tables in the
            same order with the same names.

    Returns:
        A layer whose ``forward(input)`` maps int64 ids of any shape to
        ``input.shape + [emb_size]`` float32 embeddings.

    Examples:
        >>> import fw
        >>> from fw.distributed.ps import SparseEmbedding
        >>> emb = SparseEmbedding([10 ** 6, 8],
        ...                       param_attr=fw.nn.initializer.Uniform(-0.1, 0.1))
        >>> emb.table_config({"name": "sgd", "learning_rate": 0.1})["dim"]
        8
    """

    def __init__(self, size, padding_idx=None, is_test=False, entry=None,
                 table_class="MemorySparseTable", param_attr=None, dtype="float32", name=None):
        super().__init__()
        where = "SparseEmbedding"
        if (not isinstance(size, (list, tuple)) or len(size) != 2
                or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                           for s in size)):
            raise ValueError(f"{where}: size must be [vocab_size, emb_size] (two ints), got "
                             f"{size!r}")
        vocab, dim = int(size[0]), int(size[1])
        if vocab < 1 or dim < 1:
            raise ValueError(f"{where}: size must be positive, got {list(size)}")
        self._entry = entry_spec(entry, where)
        if table_class not in ("MemorySparseTable", "CommonSparseTable"):
            raise ValueError(f"{where}: table_class must be 'MemorySparseTable' (rows in server "
                             f"memory), got {table_class!r}")
        if str(dtype).replace("fw.", "").replace("paddle.", "") != "float32":
            raise ValueError(f"{where}: dtype must be 'float32' (the tables hold float32), got "
                             f"{dtype!r}")
        if padding_idx is not None:
            if not -vocab <= int(padding_idx) < vocab:
                raise ValueError(f"{where}: padding_idx must be in [-{vocab}, {vocab}), got "
                                 f"{padding_idx}")
            padding_idx = int(padding_idx) % vocab
        init = getattr(param_attr, "initializer", param_attr)
        if init is not None and type(init).__name__ == "ParamAttr":
            init = None
        attr_name = getattr(param_attr, "name", None) if param_attr is not None else None
        self._vocab, self._dim = vocab, dim
        self._padding_idx = padding_idx
        self.is_test = bool(is_test)
        self._init_spec = spec_from_initializer(init, (vocab, dim), where)
        k = len(runtime.layers())
        self.table_name = name or attr_name or f"sparse_embedding_{k}.w_0"
        self.table_id = runtime.register_layer(self)
        self._batches = []     # (distinct ids, leaf tensor of their rows) since the last step

    def table_config(self, rule: dict) -> dict:
        """The table's definition sent to the servers (and kept in checkpoints)."""
        cfg = {"name": self.table_name, "dim": self._dim, "rule": rule,
               "init": self._init_spec, "seed": runtime.default_seed(self.table_name),
               "vocab": self._vocab}
        if self._entry is not None:
            cfg["entry"] = self._entry
        return cfg

    def forward(self, input, show=None, click=None):
        """Look `input` up (``show``/``click``: per-id counts shaped like `input`, for a
        ``ShowClickEntry`` only)."""
        where = f"SparseEmbedding({self.table_name!r})"
        rt = runtime.require("SparseEmbedding.forward", worker=True)
        if not rt.worker_ready:
            raise RuntimeError(f"{where}: call fleet.init_worker() before the first forward")
        a = input.numpy() if isinstance(input, fw.Tensor) else np.asarray(input)
        flat = check_ids(a, self._vocab, where)
        uniq, inv = np.unique(flat, return_inverse=True)
        learn = self.training and not self.is_test
        sc = self._show_click(show, click, a.shape, inv, uniq.size, where, learn)
        pad = None
        if self._padding_idx is not None:
            hit = int(np.searchsorted(uniq, self._padding_idx))
            if hit < uniq.size and uniq[hit] == self._padding_idx:
                pad = hit
        if pad is None:
            rows = rt.optimizer.pull_rows(self, uniq, learn, *sc)
        else:   # the padding id reads as zeros: never pulled, so never created
            rows = np.zeros((uniq.size, self._dim), np.float32)
            keep = np.arange(uniq.size) != pad
            rows[keep] = rt.optimizer.pull_rows(self, uniq[keep], learn,
                                                *[None if v is None else v[keep] for v in sc])
        w = fw.to_tensor(rows, stop_gradient=not learn)
        out = F.embedding(fw.to_tensor(inv.reshape(a.shape).astype(np.int64)), w,
                          padding_idx=pad)
        if learn:
            self._batches.append((uniq, w))
        return out

    def _show_click(self, show, click, shape, inv, n, where, learn):
        """(summed show per distinct id, summed click) for a ShowClickEntry, else
        (None, None)."""
        wants = self._entry is not None and self._entry["kind"] == "show_click"
        if not wants:
            if show is not None or click is not None:
                raise ValueError(f"{where}: show/click are inputs of a table with a "
                                 f"ShowClickEntry; this table's entry is {self._entry}")
            return None, None
        if show is None or click is None:
            if not learn:
                return None, None
            raise ValueError(f"{where}: the table's ShowClickEntry needs show= and click= "
                             f"(counts shaped like the ids {list(shape)})")
        out = []
        for what, v in (("show", show), ("click", click)):
            arr = np.asarray(v.numpy() if isinstance(v, fw.Tensor) else v, np.float64)
            if arr.shape != tuple(shape):
                raise ValueError(f"{where}: {what} has shape {list(arr.shape)}, expected the "
                                 f"ids' shape {list(shape)}")
            out.append(np.bincount(inv, weights=arr.reshape(-1), minlength=n))
        return out[0], out[1]

    def take_grads(self):
        """(distinct ids, summed row gradients) of the forwards since the last call;
        the padding id is left out. Clears the record."""
        ids, grads = [], []
        for uniq, w in self._batches:
            g = w.grad
            if g is not None:
                ids.append(uniq)
                grads.append(np.asarray(g.numpy(), np.float32))
        self._batches = []
        if not ids:
            return np.empty(0, np.int64), np.empty((0, self._dim), np.float32)
        u, g = merge_rows(np.concatenate(ids), np.concatenate(grads))
        if self._padding_idx is not None:
            keep = u != self._padding_idx
            u, g = u[keep], g[keep]
        return u, g

    def clear(self):
        self._batches = []

    def extra_repr(self):
        return (f"size=[{self._vocab}, {self._dim}], table={self.table_name!r}, "
                f"padding_idx={self._padding_idx}")
