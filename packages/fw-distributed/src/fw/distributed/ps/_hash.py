"""Integer hashing for the parameter server: which server owns an id, and the
per-id random numbers of lazily created rows.

Both must be a pure function of the id (never of which server holds the row or of
the order rows were created in), so that a table saved by S servers reloads onto
any other number of servers, and a row created on any server equals the row a
single process creates for the same id.

The mixer is splitmix64's finaliser (Steele, Lea and Flood, "Fast splittable
pseudorandom number generators", OOPSLA 2014): a bijection on 64-bit integers
whose output bits each depend on every input bit, so consecutive ids spread
evenly over the servers (``id % S`` would put every id of a slot whose ids share
a stride on one server).
"""
from __future__ import annotations

import numpy as np

__all__ = ["mix64", "shard_of", "uniform01"]

_C1 = np.uint64(0xBF58476D1CE4E5B9)
_C2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def mix64(x) -> np.ndarray:
    """splitmix64's finaliser of `x` (any integer array; int64 ids are taken as
    their two's-complement bits). Returns uint64, wrapping arithmetic."""
    z = np.asarray(x).astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z += _GOLDEN
        z ^= z >> _S30
        z *= _C1
        z ^= z >> _S27
        z *= _C2
        z ^= z >> _S31
    return z


def shard_of(ids, num_shards: int) -> np.ndarray:
    """The server (in ``[0, num_shards)``) that owns each id, as int64.

    Args:
        ids (array): int64 ids.
        num_shards (int): the number of servers.

    Returns:
        int64 array of server indices, the shape of `ids`.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.distributed.ps._hash import shard_of
        >>> shard_of(np.arange(6), 2).tolist()
        [1, 1, 0, 1, 0, 0]
    """
    if num_shards < 1:
        raise ValueError(f"shard_of: num_shards must be >= 1, got {num_shards}")
    return (mix64(ids) % np.uint64(num_shards)).astype(np.int64)


def uniform01(seed: int, ids, dim: int) -> np.ndarray:
    """float64 ``[len(ids), dim]`` uniforms in ``[0, 1)``: element ``(i, j)`` is a
    function of ``(seed, ids[i], j)`` only (a counter-based generator: the 64-bit
    counter ``id * dim + j`` mixed with the seed, top 53 bits)."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    with np.errstate(over="ignore"):
        ctr = (ids.astype(np.uint64)[:, None] * np.uint64(dim)
               + np.arange(dim, dtype=np.uint64)[None, :])
        key = mix64(np.uint64(seed & 0xFFFFFFFFFFFFFFFF) ^ np.uint64(0x5851F42D4C957F2D))
        z = mix64(ctr ^ key)
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
