"""`IdIndex`: id -> row number, an open-addressing hash map in NumPy arrays.

A server holds up to millions of ids and answers batches of thousands: a Python
dict would cost a bytecode loop per id. Here every step is a NumPy operation over
the whole batch: hash, then linear probing where each round moves only the ids
still unresolved (the load factor stays <= 1/2, so rounds are few). Insertion
resolves batch-internal collisions on one empty slot by letting the first id of
each slot win and the others probe on.
"""
from __future__ import annotations

import numpy as np

from fw.distributed.ps._hash import mix64

__all__ = ["IdIndex"]

_EMPTY = np.int64(np.iinfo(np.int64).min)   # never a valid id (ids are >= 0)
_SALT = np.int64(0x632BE59BD9B4E019)  # decorrelates slots from shard_of's hash


class IdIndex:
    """Maps int64 ids (>= 0) to consecutive row numbers 0, 1, 2, ... in insertion
    order."""

    def __init__(self, capacity: int = 1024):
        cap = 16
        while cap < 2 * capacity:
            cap *= 2
        self._alloc(cap)
        self.size = 0

    def _alloc(self, cap):
        self.keys = np.full(cap, _EMPTY, np.int64)
        self.vals = np.full(cap, -1, np.int64)
        self.mask = np.uint64(cap - 1)

    def __len__(self):
        return self.size

    def _slots(self, ids):
        return (mix64(ids ^ _SALT) & self.mask).astype(np.int64)

    def find(self, ids: np.ndarray) -> np.ndarray:
        """Row numbers of `ids` (int64, any shape flattened), -1 where absent."""
        ids = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        out = np.full(ids.size, -1, np.int64)
        if ids.size == 0 or self.size == 0:
            return out
        pos = self._slots(ids)
        active = np.arange(ids.size)
        keys, mask = self.keys, int(self.mask)
        while active.size:
            p = pos[active]
            k = keys[p]
            hit = k == ids[active]
            if hit.any():
                out[active[hit]] = self.vals[p[hit]]
            go = ~(hit | (k == _EMPTY))
            active = active[go]
            pos[active] = (p[go] + 1) & mask
        return out

    def insert(self, ids: np.ndarray) -> np.ndarray:
        """Insert `ids` (unique, none present, >= 0); returns their new row numbers
        (``size, size+1, ...`` in the order given)."""
        ids = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        n = ids.size
        rows = np.arange(self.size, self.size + n, dtype=np.int64)
        if n == 0:
            return rows
        if 2 * (self.size + n) > self.keys.size:
            self._grow(self.size + n)
        self._place(ids, rows)
        self.size += n
        return rows

    def _place(self, ids, rows):
        pos = self._slots(ids)
        active = np.arange(ids.size)
        keys, vals, mask = self.keys, self.vals, int(self.mask)
        while active.size:
            p = pos[active]
            free = keys[p] == _EMPTY
            if free.any():
                # among the ids aiming at one free slot, the first takes it
                cand = active[free]
                _, first = np.unique(p[free], return_index=True)
                win = cand[first]
                keys[pos[win]] = ids[win]
                vals[pos[win]] = rows[win]
                placed = np.zeros(ids.size, bool)
                placed[win] = True
                keep = ~placed[active]
                active = active[keep]
                p = p[keep]
            # the rest (slot taken, now or before) move on; a loser retries the slot it
            # lost only if it is free, which it is not, so it advances too
            pos[active] = (p + 1) & mask

    def _grow(self, need):
        cap = self.keys.size
        while 2 * need > cap:
            cap *= 2
        used = self.keys != _EMPTY
        old_keys, old_vals = self.keys[used], self.vals[used]
        self._alloc(cap)
        self._place(old_keys, old_vals)

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, rows) of every entry, ordered by row number."""
        used = self.keys != _EMPTY
        ids, rows = self.keys[used], self.vals[used]
        order = np.argsort(rows, kind="stable")
        return ids[order], rows[order]
