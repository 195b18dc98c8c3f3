"""Neighbour sampling on a CSC graph (``paddle.geometric.sample_neighbors``,
``weighted_sample_neighbors``): for each input node, up to `sample_size` of its
in-neighbours ``row[colptr[v]:colptr[v+1]]`` drawn without replacement from fw's
seeded cpu generator (``fw.seed`` makes a run repeatable; the draws are not Paddle's
bit for bit, which no two Paddle devices are either)."""

from __future__ import annotations

import numpy as np

from fw.core import random as _random
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.geometric._scatter import _INT, check_tensor, fw_

__all__ = ["sample_neighbors", "weighted_sample_neighbors"]


def _flat(t, name, who, dtype=None):
    check_tensor(t, name, who, (dtype,) if dtype else _INT)
    if len(t.shape) == 2 and t.shape[1] == 1:  # Paddle also takes [n, 1]
        t = t.reshape([-1])
    if len(t.shape) != 1:
        raise InvalidArgumentError(f"{who}: '{name}' must be 1-D (or [n, 1]), got shape "
                                   f"{list(t.shape)}")
    return t.numpy()


def _csc(row, colptr, input_nodes, sample_size, eids, return_eids, who):
    r = _flat(row, "row", who)
    c = _flat(colptr, "colptr", who, row.dtype.name)
    nodes = _flat(input_nodes, "input_nodes", who, row.dtype.name)
    if isinstance(sample_size, bool) or not isinstance(sample_size, (int, np.integer)):
        raise InvalidTypeError(f"{who}: 'sample_size' must be an int, got "
                               f"{type(sample_size).__name__}")
    if sample_size == 0 or sample_size < -1:
        raise InvalidArgumentError(f"{who}: 'sample_size' must be -1 (all) or positive, got "
                                   f"{sample_size}")
    if c.size == 0 or c[0] != 0 or c[-1] != r.shape[0] or (np.diff(c) < 0).any():
        raise InvalidArgumentError(f"{who}: 'colptr' must rise from 0 to len(row) "
                                   f"({r.shape[0]}), got {c.tolist()[:16]}")
    if nodes.size and (nodes.min() < 0 or nodes.max() >= c.shape[0] - 1):
        raise InvalidArgumentError(f"{who}: 'input_nodes' must be node ids in [0, "
                                   f"{c.shape[0] - 1}), got {nodes.tolist()[:16]}")
    e = None
    if return_eids:
        if eids is None:
            raise InvalidArgumentError(f"{who}: 'eids' must be given when return_eids=True")
        e = _flat(eids, "eids", who)
        if e.shape[0] != r.shape[0]:
            raise InvalidArgumentError(f"{who}: 'eids' must have one entry per edge "
                                       f"({r.shape[0]}), got {e.shape[0]}")
    return r, c, nodes, e


def _sample(row, colptr, input_nodes, sample_size, eids, return_eids, weight, who):
    r, c, nodes, e = _csc(row, colptr, input_nodes, sample_size, eids, return_eids, who)
    w = None
    if weight is not None:
        w = _flat(weight, "edge_weight", who, weight.dtype.name).astype("float64")
        check_tensor(weight, "edge_weight", who, ("float32", "float64", "float16"))
        # as Paddle's kernel, entries past the last edge are never read (Paddle's own
        # documentation example passes one too many)
        if w.shape[0] < r.shape[0] or (w[:r.shape[0]] < 0).any():
            raise InvalidArgumentError(f"{who}: 'edge_weight' must be >= 0 with one entry per "
                                       f"edge ({r.shape[0]}), got shape {list(weight.shape)}")
        w = w[:r.shape[0]]
    gen = _random.default_generator("cpu")
    picks, counts = [], []
    with gen._lock:
        g = gen.np
        for v in nodes.tolist():
            lo, hi = int(c[v]), int(c[v + 1])
            deg = hi - lo
            if sample_size == -1 or deg <= sample_size:
                sel = np.arange(lo, hi)
            elif w is None:
                sel = lo + g.choice(deg, sample_size, replace=False)
            else:
                p = w[lo:hi]
                nz = int((p > 0).sum())
                if nz <= sample_size:  # every positive-weight edge, then zero-weight ones
                    sel = lo + np.concatenate([np.flatnonzero(p > 0),
                                               g.permutation(np.flatnonzero(p == 0))]
                                              )[:sample_size]
                else:
                    sel = lo + g.choice(deg, sample_size, replace=False, p=p / p.sum())
            picks.append(sel)
            counts.append(sel.shape[0])
    sel = np.concatenate(picks).astype(np.int64) if picks else np.zeros([0], np.int64)
    fw = fw_()
    out = [fw.to_tensor(r[sel]), fw.to_tensor(np.asarray(counts, dtype=np.int32))]
    if return_eids:
        out.append(fw.to_tensor(e[sel]))
    return tuple(out)


def sample_neighbors(row, colptr, input_nodes, sample_size=-1, eids=None, return_eids=False,
                     perm_buffer=None, name=None):
    """Samples up to `sample_size` in-neighbours of each input node, uniformly without
    replacement, from a graph in CSC form (node v's neighbours are
    ``row[colptr[v]:colptr[v+1]]``).

    Args:
        row (Tensor): [E] int32/int64 (or [E, 1]) source node of each edge.
        colptr (Tensor): [num_nodes + 1] row's dtype, the CSC column pointers.
        input_nodes (Tensor): [N] row's dtype, the nodes to sample for.
        sample_size (int, optional): neighbours per node; -1 (default) takes all.
        eids (Tensor, optional): [E] edge ids; needed when `return_eids` is True.
        return_eids (bool, optional): also return the ids of the sampled edges.
        perm_buffer (Tensor, optional): Paddle's GPU scratch permutation ([E], row's
            dtype); checked, not needed here: the sample has the same distribution.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        tuple: ``(out_neighbors, out_count)`` and ``out_eids`` when `return_eids`:
        the sampled neighbours of all input nodes concatenated (row's dtype), their
        number per node (int32), and their edge ids.

    Examples:
        >>> import fw
        >>> row = fw.to_tensor([3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7])
        >>> colptr = fw.to_tensor([0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13])
        >>> nodes = fw.to_tensor([0, 8, 1, 2])
        >>> _ = fw.seed(1)
        >>> nb, cnt = fw.geometric.sample_neighbors(row, colptr, nodes, sample_size=2)
        >>> cnt.tolist()
        [2, 2, 2, 1]
    """
    who = "sample_neighbors"
    if perm_buffer is not None:
        pb = _flat(perm_buffer, "perm_buffer", who, row.dtype.name)
        if pb.shape[0] != row.shape[0]:
            raise InvalidArgumentError(f"{who}: 'perm_buffer' must have one entry per edge "
                                       f"({row.shape[0]}), got {pb.shape[0]}")
    return _sample(row, colptr, input_nodes, sample_size, eids, return_eids, None, who)


def weighted_sample_neighbors(row, colptr, edge_weight, input_nodes, sample_size=-1,
                              eids=None, return_eids=False, name=None):
    """Like `sample_neighbors`, with edge `i` drawn with probability proportional to
    ``edge_weight[i]`` (without replacement).

    Args:
        row (Tensor): [E] int32/int64 source node of each edge.
        colptr (Tensor): [num_nodes + 1] row's dtype, the CSC column pointers.
        edge_weight (Tensor): [E] float32/float64 non-negative weights.
        input_nodes (Tensor): [N] row's dtype, the nodes to sample for.
        sample_size (int, optional): neighbours per node; -1 (default) takes all.
        eids (Tensor, optional): [E] edge ids; needed when `return_eids` is True.
        return_eids (bool, optional): also return the ids of the sampled edges.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        tuple: ``(out_neighbors, out_count)`` and ``out_eids`` when `return_eids`.

    Examples:
        >>> import fw
        >>> row = fw.to_tensor([3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7])
        >>> colptr = fw.to_tensor([0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13])
        >>> w = fw.to_tensor([1.0, 0.0] * 6 + [1.0])
        >>> nodes = fw.to_tensor([0, 8, 1, 2])
        >>> nb, cnt = fw.geometric.weighted_sample_neighbors(row, colptr, w, nodes, 1)
        >>> nb.tolist()
        [3, 7, 0, 1]
    """
    return _sample(row, colptr, input_nodes, sample_size, eids, return_eids, edge_weight,
                   "weighted_sample_neighbors")
