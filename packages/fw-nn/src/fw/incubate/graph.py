"""Paddle's older graph names in ``paddle.incubate`` (``graph_send_recv``,
``graph_reindex``, ``graph_sample_neighbors``, ``graph_khop_sampler``): thin wrappers
over fw.geometric with the old argument names, and the k-hop sampler built from
`sample_neighbors` and `reindex_graph`."""

from __future__ import annotations

import numpy as np

from fw.core.errors import InvalidArgumentError
from fw.geometric import reindex_graph, sample_neighbors, send_u_recv

__all__ = ["graph_send_recv", "graph_reindex", "graph_sample_neighbors", "graph_khop_sampler"]


def graph_send_recv(x, src_index, dst_index, pool_type="sum", out_size=None, name=None):
    """The older name of `fw.geometric.send_u_recv` (`pool_type` is its `reduce_op`).

    Args:
        x (Tensor): [N, ...] node features.
        src_index (Tensor): [E] int32/int64 source node of each edge.
        dst_index (Tensor): [E] int32/int64 destination node of each edge.
        pool_type (str, optional): ``'sum'`` (default), ``'mean'``, ``'max'`` or ``'min'``.
        out_size (int|Tensor|None, optional): rows of the output; None or <= 0 means
            x.shape[0].
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        Tensor: [out_size, ...] with x's dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[0.0, 2.0, 3.0], [1.0, 4.0, 5.0], [2.0, 6.0, 7.0]])
        >>> out = fw.incubate.graph_send_recv(x, fw.to_tensor([0, 1, 2, 0]),
        ...                                   fw.to_tensor([1, 2, 1, 0]), pool_type="sum")
        >>> out.tolist()
        [[0.0, 2.0, 3.0], [2.0, 8.0, 10.0], [1.0, 4.0, 5.0]]
    """
    if pool_type not in ("sum", "mean", "max", "min"):
        raise InvalidArgumentError(f"graph_send_recv: 'pool_type' must be 'sum', 'mean', "
                                   f"'max' or 'min', got {pool_type!r}")
    return send_u_recv(x, src_index, dst_index, pool_type, out_size)


def graph_reindex(x, neighbors, count, value_buffer=None, index_buffer=None,
                  flag_buffer_hashtable=False, name=None):
    """The older name of `fw.geometric.reindex_graph` (`flag_buffer_hashtable` chose
    Paddle's GPU hash-table path; the result is the same).

    Args:
        x (Tensor): [N] int32/int64 input nodes.
        neighbors (Tensor): [E] their sampled neighbours, x's dtype.
        count (Tensor): [N] int32/int64 neighbour count per node of x.
        value_buffer (Tensor, optional): Paddle's GPU hash-table buffer.
        index_buffer (Tensor, optional): Paddle's GPU hash-table buffer.
        flag_buffer_hashtable (bool, optional): Paddle's GPU switch; no effect here.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        tuple: ``(reindex_src, reindex_dst, out_nodes)``.

    Examples:
        >>> import fw
        >>> src, dst, nodes = fw.incubate.graph_reindex(
        ...     fw.to_tensor([0, 1, 2]), fw.to_tensor([8, 9, 0, 4, 7, 6, 7]),
        ...     fw.to_tensor([2, 3, 2], dtype="int32"))
        >>> nodes.tolist()
        [0, 1, 2, 8, 9, 4, 7, 6]
    """
    return reindex_graph(x, neighbors, count, value_buffer, index_buffer)


def graph_sample_neighbors(row, colptr, input_nodes, eids=None, perm_buffer=None,
                           sample_size=-1, return_eids=False, flag_perm_buffer=False,
                           name=None):
    """The older name of `fw.geometric.sample_neighbors` (note its argument order).

    Args:
        row (Tensor): [E] int32/int64 source node of each edge (CSC).
        colptr (Tensor): [num_nodes + 1] row's dtype, the CSC column pointers.
        input_nodes (Tensor): [N] row's dtype, the nodes to sample for.
        eids (Tensor, optional): [E] edge ids; needed when `return_eids` is True.
        perm_buffer (Tensor, optional): Paddle's GPU scratch permutation.
        sample_size (int, optional): neighbours per node; -1 (default) takes all.
        return_eids (bool, optional): also return the ids of the sampled edges.
        flag_perm_buffer (bool, optional): Paddle's GPU switch for `perm_buffer`; when
            True, `perm_buffer` must be given.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        tuple: ``(out_neighbors, out_count)`` and ``out_eids`` when `return_eids`.

    Examples:
        >>> import fw
        >>> row = fw.to_tensor([3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7])
        >>> colptr = fw.to_tensor([0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13])
        >>> nb, cnt = fw.incubate.graph_sample_neighbors(row, colptr, fw.to_tensor([0, 8]),
        ...                                              sample_size=-1)
        >>> nb.tolist(), cnt.tolist()
        ([3, 7, 9, 7], [2, 2])
    """
    if flag_perm_buffer and perm_buffer is None:
        raise InvalidArgumentError("graph_sample_neighbors: 'perm_buffer' must be given when "
                                   "flag_perm_buffer=True")
    return sample_neighbors(row, colptr, input_nodes, sample_size, eids, return_eids,
                            perm_buffer if flag_perm_buffer else None)


def graph_khop_sampler(row, colptr, input_nodes, sample_sizes, sorted_eids=None,
                       return_eids=False, name=None):
    """Multi-hop neighbour sampling: hop i samples up to ``sample_sizes[i]`` neighbours
    of the nodes first reached in hop i-1 (hop 0: `input_nodes`), then all sampled
    edges are renumbered as `reindex_graph` does.

    Args:
        row (Tensor): [E] (or [E, 1]) int32/int64 source node of each edge (CSC).
        colptr (Tensor): [num_nodes + 1] row's dtype, the CSC column pointers.
        input_nodes (Tensor): [N] row's dtype, the nodes to start from.
        sample_sizes (list|tuple): neighbours per node for each hop (-1: all).
        sorted_eids (Tensor, optional): [E] edge ids; needed when `return_eids` is True.
        return_eids (bool, optional): also return the ids of the sampled edges.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        tuple: ``(edge_src, edge_dst, sample_index, reindex_nodes)`` and ``edge_eids``
        when `return_eids`: the renumbered neighbour and center node of each sampled
        edge ([num_edges, 1] each), the original ids of the numbers, the numbers of
        `input_nodes`.

    Examples:
        >>> import fw
        >>> row = fw.to_tensor([3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7])
        >>> colptr = fw.to_tensor([0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13])
        >>> src, dst, index, nodes = fw.incubate.graph_khop_sampler(
        ...     row, colptr, fw.to_tensor([0, 8, 1, 2]), [-1, -1])
        >>> index.tolist()
        [0, 8, 1, 2, 3, 7, 9, 4]
    """
    import fw

    if not isinstance(sample_sizes, (list, tuple)) or not sample_sizes:
        raise InvalidArgumentError(f"graph_khop_sampler: 'sample_sizes' must be a non-empty "
                                   f"list of ints, got {sample_sizes!r}")
    frontier = input_nodes.reshape([-1]) if len(input_nodes.shape) == 2 else input_nodes
    dtype = frontier.numpy().dtype
    seen = set(frontier.numpy().tolist())
    nbs, centers, eids = [], [], []
    for size in sample_sizes:
        out = sample_neighbors(row, colptr, frontier, size, sorted_eids, return_eids)
        nb, cnt = out[0].numpy(), out[1].numpy()
        nbs.append(nb)
        centers.append(np.repeat(frontier.numpy(), cnt))
        if return_eids:
            eids.append(out[2].numpy())
        new = []
        for v in nb.tolist():
            if v not in seen:
                seen.add(v)
                new.append(v)
        frontier = fw.to_tensor(np.asarray(new, dtype=dtype))
    nb_all = np.concatenate(nbs).astype(dtype)
    ct_all = np.concatenate(centers).astype(dtype)
    # renumber: input nodes first, then the nodes in the order the hops reached them
    start = input_nodes.numpy().reshape(-1)
    order = {}
    for v in start.tolist() + nb_all.tolist():
        order.setdefault(v, len(order))
    src = np.array([order[v] for v in nb_all.tolist()], dtype=dtype).reshape(-1, 1)
    dst = np.array([order[v] for v in ct_all.tolist()], dtype=dtype).reshape(-1, 1)
    index = np.fromiter(order.keys(), dtype=dtype, count=len(order))
    reindex_nodes = np.array([order[v] for v in start.tolist()], dtype=dtype)
    res = (fw.to_tensor(src), fw.to_tensor(dst), fw.to_tensor(index),
           fw.to_tensor(reindex_nodes))
    if return_eids:
        res += (fw.to_tensor(np.concatenate(eids).astype(dtype).reshape(-1, 1)),)
    return res
