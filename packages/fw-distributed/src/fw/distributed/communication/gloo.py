"""Paddle's CPU barrier context: gloo_init_parallel_env, gloo_barrier,
gloo_release (``paddle.distributed.parallel_with_gloo``).

Paddle starts a key-value server on rank 0 at `server_endpoint`, builds a Gloo
context over it and uses it for nothing but barriers. fw has no Gloo: the same
three calls run on fw's `TCPStore` — rank 0 hosts the store at `server_endpoint`,
every rank connects to it, a barrier is a store barrier (each rank sets its key,
all wait for every key; a missing rank is named on timeout). It is independent of
`init_parallel_env` and of MPI, as Paddle's is of the collective backend.
"""
from __future__ import annotations

import os

from fw.distributed.store import StoreError, TCPStore, store_barrier

__all__ = ["gloo_init_parallel_env", "gloo_barrier", "gloo_release"]

# the one context of this process: {"store", "rank", "size", "n" (barriers done)}
_ctx = {}
_DEFAULT_TIMEOUT = 1800.0


def _timeout():
    env = os.environ.get("FW_DIST_TIMEOUT")
    try:
        v = float(env) if env else _DEFAULT_TIMEOUT
    except ValueError:
        raise ValueError(f"FW_DIST_TIMEOUT must be a number of seconds, got {env!r}") from None
    return v if v > 0 else _DEFAULT_TIMEOUT


def gloo_init_parallel_env(rank_id, rank_num, server_endpoint):
    """Set up the CPU barrier context of `rank_num` processes (no collectives: only
    `gloo_barrier`). Rank 0 serves the rendezvous at `server_endpoint`.

    Args:
        rank_id (int): this process's rank, in ``[0, rank_num)``.
        rank_num (int): the number of processes.
        server_endpoint (str): ``"ip:port"`` that rank 0 listens on and the others
            connect to.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> dist.gloo_init_parallel_env(0, 1, "127.0.0.1:0")
        >>> dist.gloo_barrier()
        >>> dist.gloo_release()
    """
    fn = "gloo_init_parallel_env"
    for name, v in (("rank_id", rank_id), ("rank_num", rank_num)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"fw.distributed.{fn}: {name} must be an int, got {v!r}")
    if rank_num < 1 or not 0 <= rank_id < rank_num:
        raise ValueError(f"fw.distributed.{fn}: rank_id must be in [0, rank_num), got "
                         f"rank_id={rank_id}, rank_num={rank_num}")
    if not isinstance(server_endpoint, str) or server_endpoint.count(":") != 1:
        raise ValueError(f"fw.distributed.{fn}: server_endpoint must be 'ip:port', got "
                         f"{server_endpoint!r}")
    host, port = server_endpoint.split(":")
    try:
        port = int(port)
    except ValueError:
        raise ValueError(f"fw.distributed.{fn}: the port of server_endpoint "
                         f"{server_endpoint!r} is not a number") from None
    if _ctx:
        raise RuntimeError(f"fw.distributed.{fn}: already initialised (rank "
                           f"{_ctx['rank']} of {_ctx['size']}); call gloo_release() first")
    if port == 0 and rank_num > 1:
        raise ValueError(f"fw.distributed.{fn}: port 0 cannot be shared with other ranks; "
                         f"give a fixed port in server_endpoint")
    t = _timeout()
    try:
        store = TCPStore(host, port, is_master=rank_id == 0, world_size=rank_num, timeout=t)
    except StoreError as e:
        raise StoreError(f"fw.distributed.{fn}: rank {rank_id} cannot reach the rendezvous at "
                         f"{server_endpoint}: {e}") from e
    _ctx.update(store=store, rank=rank_id, size=rank_num, n=0, timeout=t)
    gloo_barrier()    # every rank is connected when init returns, as Paddle's


def _require(fn):
    if not _ctx:
        raise RuntimeError(f"fw.distributed.{fn}: call gloo_init_parallel_env() first")


def gloo_barrier():
    """Block until every rank of the context has called `gloo_barrier` (as many times).

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> dist.gloo_init_parallel_env(0, 1, "127.0.0.1:0")
        >>> dist.gloo_barrier()
        >>> dist.gloo_release()
    """
    _require("gloo_barrier")
    _ctx["n"] += 1
    store_barrier(_ctx["store"], f"gloo/barrier/{_ctx['n']}", _ctx["rank"], _ctx["size"],
                  _ctx["timeout"])


def gloo_release():
    """Tear the context down: a last barrier, then every rank disconnects and rank 0
    stops the server (after the others have left it).

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> dist.gloo_init_parallel_env(0, 1, "127.0.0.1:0")
        >>> dist.gloo_release()
    """
    if not _ctx:
        return None     # nothing to release (Paddle's release is a no-op then, too)
    store, rank, size = _ctx["store"], _ctx["rank"], _ctx["size"]
    try:
        gloo_barrier()
        if rank != 0:
            store.set(f"gloo/left/{rank}", b"1")
        elif size > 1:
            store.wait([f"gloo/left/{r}" for r in range(1, size)], timeout=_ctx["timeout"])
    finally:
        _ctx.clear()
        store.close()
    return None
