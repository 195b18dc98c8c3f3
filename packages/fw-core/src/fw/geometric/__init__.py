"""``fw.geometric``: Paddle's ``paddle.geometric`` — segment reductions, graph message
passing (``send_u_recv``, ``send_ue_recv``, ``send_uv``), graph reindexing and
neighbour sampling.

The reductions and message passing are compositions of fw ops (``index_select``,
``index_add``, ``put_along_axis`` with ``amax``/``amin``, elementwise ops), so they
differentiate through fw.autograd like any other fw code. The segment ops size their
output from the ids (a host read, as Paddle's eager kernels do), so they run eagerly;
the message-passing ops also trace into fw.jit programs. On the cpu the max/min
forward is a sorted ``ufunc.reduceat``. Reindexing and sampling return integer
tensors and have no gradient.

Example:
    >>> import fw
    >>> x = fw.to_tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> fw.geometric.segment_sum(x, fw.to_tensor([0, 0, 1])).tolist()
    [[4.0, 6.0], [5.0, 6.0]]
"""

from fw.geometric.math import segment_max, segment_mean, segment_min, segment_sum
from fw.geometric.message_passing import send_u_recv, send_ue_recv, send_uv
from fw.geometric.reindex import reindex_graph, reindex_heter_graph
from fw.geometric.sampling import sample_neighbors, weighted_sample_neighbors

__all__ = [
    "segment_sum", "segment_mean", "segment_max", "segment_min",
    "send_u_recv", "send_ue_recv", "send_uv",
    "reindex_graph", "reindex_heter_graph",
    "sample_neighbors", "weighted_sample_neighbors",
]
