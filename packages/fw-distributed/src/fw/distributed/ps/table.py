"""The tables a server holds: `SparseTable` (rows created lazily per id) and
`DenseTable` (this server's slice of the flat dense parameters).

Both update themselves with a server-side rule (`rules.py`) and hand their
contents out as plain arrays for checkpoints (`checkpoint.py`). A table knows
nothing of servers or messages: the same class is the single-process reference
the tests train against.
"""
from __future__ import annotations

import numpy as np

from fw.distributed.ps._index import IdIndex
from fw.distributed.ps.entry import Admission, entry_spec
from fw.distributed.ps.initializer import check_spec, make_rows
from fw.distributed.ps.rules import apply_rule, check_rule, state_layout

__all__ = ["SparseTable", "DenseTable", "merge_rows", "check_ids"]


def check_ids(ids, vocab: int, where: str) -> np.ndarray:
    """`ids` as a flat int64 array, every id in ``[0, vocab)`` (``vocab`` <= 0:
    no upper bound); ValueError naming `where` and the first bad id otherwise."""
    a = np.asarray(ids)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{where}: ids must be an integer tensor (int64), got dtype {a.dtype} "
                        f"of shape {list(a.shape)}")
    a = a.astype(np.int64, copy=False).reshape(-1)
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < 0 or (vocab > 0 and hi >= vocab):
            bad = lo if lo < 0 else hi
            raise ValueError(f"{where}: id {bad} is outside [0, {vocab}) (size[0] of the "
                             f"table; ids of shape {list(np.shape(ids))})")
    return a


def merge_rows(ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum the rows of repeated ids: (unique ids ascending, summed rows)."""
    if ids.size == 0:
        return ids, vals.reshape(0, vals.shape[-1] if vals.ndim == 2 else 0)
    order = np.argsort(ids, kind="stable")
    s = ids[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    if starts.size == s.size:
        return s, vals[order]
    return s[starts], np.add.reduceat(vals[order], starts, axis=0)


class SparseTable:
    """A sparse embedding table: ``dim`` floats per id, created on first pull from
    ``init`` (an `initializer` spec) and updated by ``rule`` (a `rules` spec).

    Args:
        name (str): the table's name (the embedding parameter's).
        dim (int): row width.
        rule (dict): the update rule (`rules.check_rule`).
        init (dict): the row initializer (`initializer.check_spec`).
        seed (int): the initializer's seed (rows are a function of seed and id).
        vocab (int): ids must be in ``[0, vocab)``; <= 0: any id >= 0.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.distributed.ps.table import SparseTable
        >>> t = SparseTable("emb", 2, {"name": "sgd", "learning_rate": 0.5},
        ...                 {"kind": "constant", "value": 1.0})
        >>> t.pull(np.array([7, 3, 7])).tolist()
        [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
        >>> t.push(np.array([7, 7]), np.ones((2, 2), np.float32))
        >>> t.pull(np.array([7])).tolist()
        [[0.0, 0.0]]
    """

    def __init__(self, name: str, dim: int, rule: dict, init: dict, seed: int = 0,
                 vocab: int = 0, entry: dict | None = None):
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"SparseTable {name!r}: dim must be an int >= 1, got {dim!r}")
        self.name = name
        self.dim = dim
        self.rule = check_rule(rule, f"SparseTable {name!r}")
        self.init = check_spec(init, f"SparseTable {name!r}")
        self.seed = int(seed)
        self.vocab = int(vocab)
        # feature admission (ps/entry.py): None creates a row at an id's first lookup
        self.entry = entry_spec(entry, f"SparseTable {name!r}")
        self._admission = Admission(self.entry, self.seed) if self.entry else None
        self.index = IdIndex()
        self._cap = 0
        self.values = np.empty((0, dim), np.float32)
        self.states = {}
        self._layout = state_layout(self.rule, dim)
        self._reserve(1024)

    def config(self) -> dict:
        """What defines the table (JSON-able; the checkpoint manifest keeps it)."""
        cfg = {"name": self.name, "dim": self.dim, "rule": self.rule, "init": self.init,
               "seed": self.seed, "vocab": self.vocab}
        if self.entry is not None:
            cfg["entry"] = self.entry
        return cfg

    def __len__(self):
        return self.index.size

    def _reserve(self, n):
        if n <= self._cap:
            return
        cap = max(n, 2 * self._cap, 1024)
        v = np.empty((cap, self.dim), np.float32)
        v[:self.index.size] = self.values[:self.index.size]
        self.values = v
        for sname, width, init in self._layout:
            s = np.full((cap, width), init, np.float32)
            if sname in self.states:
                s[:self.index.size] = self.states[sname][:self.index.size]
            self.states[sname] = s
        self._cap = cap

    def rows(self, ids: np.ndarray, create: bool = True, show=None, click=None,
             admit: bool = True) -> np.ndarray:
        """Row numbers of `ids` (flat int64), creating missing rows when `create`
        (-1 for a missing id otherwise, and for an id the table's entry does not admit
        yet; `show`/`click`: the ids' counts, for a ShowClickEntry). ``admit=False``
        creates rows without asking the entry (rows loaded from a checkpoint)."""
        r = self.index.find(ids)
        if create:
            miss = r < 0
            if miss.any() and self._admission is not None and admit:
                u, first = np.unique(ids[miss], return_index=True)
                pos = np.flatnonzero(miss)[first]
                ok = self._admission.admit(
                    u, None if show is None else np.asarray(show)[pos],
                    None if click is None else np.asarray(click)[pos])
                miss &= np.isin(ids, u[ok])
            if miss.any():
                new, inv = np.unique(ids[miss], return_inverse=True)
                start = self.index.size
                self._reserve(start + new.size)
                got = self.index.insert(new)
                self.values[start:start + new.size] = make_rows(self.init, self.seed, new,
                                                                self.dim)
                r[miss] = got[inv]
        return r

    def pull(self, ids, create: bool = True, show=None, click=None) -> np.ndarray:
        """``[len(ids), dim]`` float32 rows (a copy). Missing ids are created
        (``create``; if the entry admits them) or read as zeros (Paddle's ``is_test``
        lookup)."""
        ids = check_ids(ids, self.vocab, f"SparseTable {self.name!r}.pull")
        r = self.rows(ids, create, show, click)
        if create and self._admission is None:
            return self.values[r]
        out = np.zeros((ids.size, self.dim), np.float32)
        ok = r >= 0
        out[ok] = self.values[r[ok]]
        return out

    def _check_vals(self, ids, vals, what):
        vals = np.asarray(vals, dtype=np.float32)
        if vals.shape != (ids.size, self.dim):
            raise ValueError(f"SparseTable {self.name!r}.{what}: {ids.size} ids need values of "
                             f"shape [{ids.size}, {self.dim}], got {list(vals.shape)}")
        return vals

    def push(self, ids, grads, scale: float = 1.0) -> None:
        """Apply the rule to the rows of `ids` with gradients `grads` (repeated ids'
        gradients are summed first), times `scale`."""
        ids = check_ids(ids, self.vocab, f"SparseTable {self.name!r}.push")
        grads = self._check_vals(ids, grads, "push")
        if ids.size == 0:
            return
        u, g = merge_rows(ids, grads)
        if scale != 1.0:
            g = g * np.float32(scale)
        if self._admission is not None:
            # with an entry only pulls admit ids: gradients of unadmitted ids are dropped
            r = self.rows(u, create=False)
            keep = r >= 0
            u, g = u[keep], g[keep]
        r = self.rows(u)
        w = self.values[r]
        st = {k: v[r] for k, v in self.states.items()}
        apply_rule(self.rule, w, g, st)
        self.values[r] = w
        for k, v in st.items():
            self.states[k][r] = v

    def add(self, ids, deltas) -> None:
        """Add `deltas` to the rows of `ids` (geo mode's merge of a trainer's local
        progress); repeated ids add up."""
        ids = check_ids(ids, self.vocab, f"SparseTable {self.name!r}.add")
        deltas = self._check_vals(ids, deltas, "add")
        if ids.size == 0:
            return
        u, d = merge_rows(ids, deltas)
        r = self.rows(u)
        self.values[r] += d

    def state_dict(self) -> dict:
        """``{"ids", "values", <state names>}``: every row, in creation order."""
        ids, r = self.index.items()
        out = {"ids": ids, "values": self.values[r]}
        for k, v in self.states.items():
            out[k] = v[r]
        return out

    def load_rows(self, arrays: dict) -> None:
        """Set the rows (and optimizer states) of ``arrays["ids"]``, creating them."""
        ids = check_ids(arrays["ids"], self.vocab, f"SparseTable {self.name!r}.load")
        if ids.size == 0:
            return
        if np.unique(ids).size != ids.size:
            raise ValueError(f"SparseTable {self.name!r}.load: repeated ids in the rows")
        vals = self._check_vals(ids, arrays["values"], "load")
        r = self.rows(ids, admit=False)      # saved rows were admitted when created
        self.values[r] = vals
        for sname, width, _ in self._layout:
            if sname in arrays:
                s = np.asarray(arrays[sname], np.float32)
                if s.shape != (ids.size, width):
                    raise ValueError(f"SparseTable {self.name!r}.load: state {sname!r} has "
                                     f"shape {list(s.shape)}, expected [{ids.size}, {width}]")
                self.states[sname][r] = s


class DenseTable:
    """One server's slice ``[begin, end)`` of the flat float32 vector of all dense
    parameters, updated by ``rule`` as one row.

    Args:
        name (str): the table's name.
        begin (int): the slice's first index in the flat vector.
        end (int): one past its last index.
        rule (dict): the update rule (`rules.check_rule`).

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.distributed.ps.table import DenseTable
        >>> d = DenseTable("<dense>", 0, 2, {"name": "sgd", "learning_rate": 0.5})
        >>> d.set(np.array([1.0, 2.0]))
        >>> d.push(np.array([2.0, 2.0]), scale=0.5)
        >>> d.values[0].tolist()
        [0.5, 1.5]
    """

    def __init__(self, name: str, begin: int, end: int, rule: dict):
        if not 0 <= begin <= end:
            raise ValueError(f"DenseTable {name!r}: bad slice [{begin}, {end})")
        self.name = name
        self.begin, self.end = int(begin), int(end)
        self.rule = check_rule(rule, f"DenseTable {name!r}")
        n = self.end - self.begin
        self.values = np.zeros((1, n), np.float32)
        self.states = {k: np.full((1, w if w == 1 else n), init, np.float32)
                       for k, w, init in state_layout(self.rule, n)}
        self.initialized = False

    def config(self) -> dict:
        return {"name": self.name, "begin": self.begin, "end": self.end, "rule": self.rule}

    def _check(self, v, what):
        v = np.asarray(v, np.float32).reshape(-1)
        if v.size != self.end - self.begin:
            raise ValueError(f"DenseTable {self.name!r}.{what}: expected {self.end - self.begin} "
                             f"values (slice [{self.begin}, {self.end})), got {v.size}")
        return v

    def set(self, v) -> None:
        self.values[0] = self._check(v, "set")
        self.initialized = True

    def push(self, grad, scale: float = 1.0) -> None:
        g = self._check(grad, "push")[None, :]
        if scale != 1.0:
            g = g * np.float32(scale)
        apply_rule(self.rule, self.values, g, self.states)

    def add(self, delta) -> None:
        self.values[0] += self._check(delta, "add")
