"""Alpha-beta models of the collectives a parallel strategy issues.

A message of ``M`` bytes over a link costs ``alpha + M * beta`` (Hockney's model);
``n`` ranks run the textbook algorithms (Thakur, Rabenseifner & Gropp, "Optimization
of Collective Communication Operations in MPICH", IJHPCA 2005; NCCL's rings and
double binary trees):

================  ================================  =====================================
collective        ring                              tree / recursive doubling
================  ================================  =====================================
all_reduce        2(n-1) a + 2(n-1)/n M b           2 ceil(log2 n) a + 2(n-1)/n M b
all_gather        (n-1) a + (n-1)/n M b             ceil(log2 n) a + (n-1)/n M b
reduce_scatter    (n-1) a + (n-1)/n M b             ceil(log2 n) a + (n-1)/n M b
broadcast/reduce  (n-1) a + M b  (pipelined)        ceil(log2 n) (a + M b)
send/recv         a + M b
================  ================================  =====================================

``M`` is the full tensor (all_reduce, broadcast), the gathered output (all_gather)
or the scattered input (reduce_scatter). With ``topology="auto"`` the cheaper of
the two is taken per message, as NCCL and MPICH do.

Which link: a group whose ranks all sit in one node uses the intra-node link (or,
when the cluster carries measured fits from `calibrate`, the fit of that
collective); a group spanning nodes is limited by the network: each node's
``inter.bandwidth`` is shared by its ``devices_per_node`` devices, of which
``per_node`` belong to this group (NCCL drives one NIC per GPU, so a group with
one rank per node gets one NIC's share).
"""

from __future__ import annotations

import math

__all__ = ["collective_time", "group_link", "COLLECTIVES"]

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
               "send_recv")


def _ring(op, n, m, a, b):
    if op == "all_reduce":
        return 2 * (n - 1) * a + 2 * (n - 1) / n * m * b
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) * a + (n - 1) / n * m * b
    if op in ("broadcast", "reduce"):
        return (n - 1) * a + m * b
    return a + m * b


def _tree(op, n, m, a, b):
    lg = math.ceil(math.log2(n))
    if op == "all_reduce":
        return 2 * lg * a + 2 * (n - 1) / n * m * b
    if op in ("all_gather", "reduce_scatter"):
        return lg * a + (n - 1) / n * m * b
    if op in ("broadcast", "reduce"):
        return lg * (a + m * b)
    return a + m * b


def group_link(cluster, n: int, stride: int = 1):
    """``(alpha, beta, where)`` for a group of `n` ranks `stride` apart (ranks are laid
    out node by node, the fastest-varying mesh axis innermost)."""
    dpn = cluster.devices_per_node
    span = (n - 1) * stride + 1
    if cluster.nodes == 1 or span <= dpn:
        return cluster.intra.latency, 1.0 / cluster.intra.bandwidth, "intra"
    per_node = max(1, min(n, dpn // max(stride, 1)))
    bw = min(cluster.intra.bandwidth, cluster.inter.bandwidth * per_node / dpn)
    return cluster.inter.latency, 1.0 / bw, "inter"


def collective_time(cluster, op: str, nbytes: float, n: int, stride: int = 1) -> float:
    """Seconds for one `op` of `nbytes` among `n` ranks (0 when n == 1).

    Args:
        cluster (Cluster): the hardware.
        op (str): one of `COLLECTIVES`.
        nbytes (float): message size as defined in the module docstring.
        n (int): ranks in the group.
        stride (int): distance between consecutive ranks of the group.

    Returns:
        float: seconds.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto import Cluster, Device, Link
            >>> from fw.distributed.auto.comm import collective_time
            >>> c = Cluster(Device("d", {"float32": 1e12}, 1e11, 1e10), devices_per_node=4,
            ...             intra=Link(1e9, 1e-5), topology="ring")
            >>> round(collective_time(c, "all_reduce", 4e6, 4), 6)   # 6a + 1.5 M/B
            0.00606
    """
    if op not in COLLECTIVES:
        raise ValueError(f"collective_time: op must be one of {COLLECTIVES}, got {op!r}")
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"collective_time: n must be an int >= 1, got {n!r}")
    if nbytes < 0:
        raise ValueError(f"collective_time: nbytes must be >= 0, got {nbytes!r}")
    if n == 1:
        return 0.0
    a, b, where = group_link(cluster, n, stride)
    fit = cluster.collectives.get(op) if where == "intra" else None
    if fit is not None:  # measured on this machine's engine: the algorithm MPICH chose
        a, b = float(fit["alpha"]), float(fit["beta"])
        return _ring(op, n, nbytes, a, b)
    if cluster.topology == "ring":
        return _ring(op, n, nbytes, a, b)
    if cluster.topology == "tree":
        return _tree(op, n, nbytes, a, b)
    return min(_ring(op, n, nbytes, a, b), _tree(op, n, nbytes, a, b))
