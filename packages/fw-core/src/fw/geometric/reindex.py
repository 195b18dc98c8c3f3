"""Graph reindexing (``paddle.geometric.reindex_graph``, ``reindex_heter_graph``): the
sampled neighbourhood of some nodes renumbered 0..K-1, the input nodes first and the
other nodes in the order they first appear."""

from __future__ import annotations

import numpy as np

from fw.core.errors import InvalidArgumentError
from fw.geometric._scatter import _INT, check_tensor, fw_

__all__ = ["reindex_graph", "reindex_heter_graph"]


def _check_buffers(value_buffer, index_buffer, who):
    # Paddle's GPU kernel uses these as a preallocated hash table; on the CPU path (and
    # here) they only need to be integer tensors when given.
    for nm, b in (("value_buffer", value_buffer), ("index_buffer", index_buffer)):
        if b is not None:
            check_tensor(b, nm, who, _INT)


def _reindex(x, neighbors, counts, who):
    check_tensor(x, "x", who, _INT, ndim=1)
    xa = x.numpy()
    order = {}
    for v in xa.tolist():
        order.setdefault(v, len(order))
    srcs, dsts = [], []
    for k, (nb, cnt) in enumerate(zip(neighbors, counts)):
        tag = f"[{k}]" if len(neighbors) > 1 else ""
        check_tensor(nb, "neighbors" + tag, who, (x.dtype.name,), ndim=1)
        check_tensor(cnt, "count" + tag, who, _INT, ndim=1)
        na, ca = nb.numpy(), cnt.numpy()
        # Paddle also takes several edge types' counts concatenated (a multiple of len(x))
        if ca.shape[0] == 0 or xa.shape[0] == 0 or ca.shape[0] % xa.shape[0]:
            raise InvalidArgumentError(f"{who}: 'count{tag}' must have one entry per node of x "
                                       f"({xa.shape[0]}), or a multiple of that, got shape "
                                       f"{list(cnt.shape)}")
        if (ca < 0).any() or int(ca.sum()) != na.shape[0]:
            raise InvalidArgumentError(f"{who}: 'count{tag}' must be >= 0 and sum to the "
                                       f"{na.shape[0]} entries of 'neighbors{tag}', got sum "
                                       f"{int(ca.sum())}")
        for v in na.tolist():
            order.setdefault(v, len(order))
        srcs.append(np.array([order[v] for v in na.tolist()], dtype=xa.dtype))
        dsts.append(np.repeat(np.arange(ca.shape[0], dtype=xa.dtype) % xa.shape[0], ca))
    fw = fw_()
    nodes = np.fromiter(order.keys(), dtype=xa.dtype, count=len(order))
    return (fw.to_tensor(np.concatenate(srcs)), fw.to_tensor(np.concatenate(dsts)),
            fw.to_tensor(nodes))


def reindex_graph(x, neighbors, count, value_buffer=None, index_buffer=None, name=None):
    """Renumbers a sampled neighbourhood: the nodes `x` become 0..len(x)-1 and every
    other node of `neighbors` the next free number, in order of first appearance.

    Args:
        x (Tensor): [N] int32/int64 input (center) nodes.
        neighbors (Tensor): [E] the sampled neighbours of the nodes of x, concatenated,
            x's dtype.
        count (Tensor): [N] int32/int64, how many neighbours each node of x has (or
            [k * N]: k edge types' counts concatenated, their neighbours likewise).
        value_buffer (Tensor, optional): Paddle's GPU hash-table buffer; not needed here.
        index_buffer (Tensor, optional): Paddle's GPU hash-table buffer; not needed here.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        tuple: ``(reindex_src, reindex_dst, out_nodes)``: the new number of each
        neighbour, the new number of its center node, and the original ids of the new
        numbers 0..K-1.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([0, 1, 2])
        >>> neighbors = fw.to_tensor([8, 9, 0, 4, 7, 6, 7])
        >>> count = fw.to_tensor([2, 3, 2], dtype="int32")
        >>> src, dst, nodes = fw.geometric.reindex_graph(x, neighbors, count)
        >>> src.tolist(), dst.tolist(), nodes.tolist()
        ([3, 4, 0, 5, 6, 7, 6], [0, 0, 1, 1, 1, 2, 2], [0, 1, 2, 8, 9, 4, 7, 6])
    """
    _check_buffers(value_buffer, index_buffer, "reindex_graph")
    return _reindex(x, [neighbors], [count], "reindex_graph")


def reindex_heter_graph(x, neighbors, count, value_buffer=None, index_buffer=None,
                        name=None):
    """`reindex_graph` for a heterogeneous graph: one neighbour list and count per edge
    type, numbered together (one node keeps one number across the types).

    Args:
        x (Tensor): [N] int32/int64 input (center) nodes.
        neighbors (list[Tensor]): per edge type, the sampled neighbours (x's dtype).
        count (list[Tensor]): per edge type, [N] int32/int64 neighbour counts.
        value_buffer (Tensor, optional): Paddle's GPU hash-table buffer; not needed here.
        index_buffer (Tensor, optional): Paddle's GPU hash-table buffer; not needed here.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        tuple: ``(reindex_src, reindex_dst, out_nodes)``, the edge types concatenated.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([0, 1, 2])
        >>> nb = [fw.to_tensor([8, 9, 0, 4, 7, 6, 7]), fw.to_tensor([0, 2, 3, 5, 1])]
        >>> cnt = [fw.to_tensor([2, 3, 2], dtype="int32"), fw.to_tensor([1, 3, 1], dtype="int32")]
        >>> src, dst, nodes = fw.geometric.reindex_heter_graph(x, nb, cnt)
        >>> nodes.tolist()
        [0, 1, 2, 8, 9, 4, 7, 6, 3, 5]
    """
    who = "reindex_heter_graph"
    _check_buffers(value_buffer, index_buffer, who)
    if not isinstance(neighbors, (list, tuple)) or not isinstance(count, (list, tuple)):
        raise InvalidArgumentError(f"{who}: 'neighbors' and 'count' must be lists of "
                                   f"Tensors, got {type(neighbors).__name__} and "
                                   f"{type(count).__name__}")
    if len(neighbors) != len(count) or not neighbors:
        raise InvalidArgumentError(f"{who}: 'neighbors' and 'count' must be non-empty lists "
                                   f"of one length, got {len(neighbors)} and {len(count)}")
    return _reindex(x, list(neighbors), list(count), who)
