"""Paddle 3.x's context-parallel plans (``cp_config`` of `parallelize`), on the
mesh's "sep" axis.

``backend="all2all"`` (DeepSpeed-Ulysses) works on fw's eager SPMD: the model's
input ids are split along the sequence, and around the attention layer q, k, v go
from sequence-split to head-split (one all-to-all each), attention runs on whole
sequences of a subset of heads, and the output goes back to sequence-split.
``backend="p2p"`` (ring attention over the load-balanced sequence chunks) needs a
ring-attention kernel behind ``scaled_dot_product_attention(backend="p2p")``,
which fw does not have: applying it raises."""

from __future__ import annotations

from fw.distributed.auto_parallel.intermediate._util import as_dist, axis_index
from fw.distributed.auto_parallel.intermediate.tensor_parallel import PlanBase
from fw.distributed.auto_parallel.placement import Shard

__all__ = ["PrepareContextParallel", "ContextParallel"]

_P2P = ("the 'p2p' backend is ring attention (K/V blocks passed around the 'sep' ranks "
        "inside scaled_dot_product_attention, with an online softmax and its own backward); "
        "fw has no ring-attention kernel: use backend='all2all'")


def _check_backend(who, backend):
    if backend not in ("p2p", "all2all"):
        raise ValueError(f"{who}: backend must be 'p2p' or 'all2all', got {backend!r}")
    return backend


def _reshard_dim(t, mesh, cp, dim, who):
    from fw.distributed.auto_parallel.api import reshard

    t = as_dist(t, mesh, who)
    pl = t.placements
    pl[cp] = Shard(dim)
    return reshard(t, mesh, pl)


class PrepareContextParallel(PlanBase):
    """Split the model's [batch, seq] inputs along the sequence over the mesh's
    "sep" axis (put it on the top-level model's name in ``cp_config``).

    Args:
        backend (str, optional): "all2all" (Ulysses) or "p2p" (ring attention, not
            available in fw). Default "p2p", as in Paddle.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["sep"])
            >>> emb = fw.nn.Embedding(10, 4)
            >>> dist.PrepareContextParallel("all2all").apply(emb, mesh, [])
            >>> ids = dist.shard_tensor(fw.zeros([2, 6], dtype="int64"), mesh,
            ...                         [dist.Replicate()])
            >>> emb(ids).placements
            [Shard(dim=1)]
    """

    def __init__(self, backend="p2p"):
        self.backend = _check_backend("PrepareContextParallel", backend)

    def apply(self, layer, process_mesh, shard_param_list):
        """Register the input split (all2all); raises for p2p.

        Args:
            layer (Layer): the model.
            process_mesh (ProcessMesh): a mesh with a "sep" axis.
            shard_param_list (list[str]): unused.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["sep"])
                >>> try:
                ...     dist.PrepareContextParallel("p2p").apply(fw.nn.ReLU(), mesh, [])
                ... except NotImplementedError as e:
                ...     print("ring" in str(e))
                True
        """
        who = f"PrepareContextParallel({self.backend!r})"
        cp = axis_index(process_mesh, "sep", who)
        if self.backend == "p2p":
            raise NotImplementedError(f"{who}: {_P2P}")
        n = process_mesh.shape[cp]

        def split(_layer, args):
            out = []
            for t in args:
                if t is None or not hasattr(t, "shape"):
                    out.append(t)
                    continue
                if t.ndim != 2:
                    raise ValueError(f"{who}: inputs must be [batch, seq], got shape {t.shape}")
                if t.shape[1] % n:
                    raise ValueError(f"{who}: sequence length {t.shape[1]} is not divisible by "
                                     f"the 'sep' degree {n}")
                out.append(_reshard_dim(t, process_mesh, cp, 1, who))
            return tuple(out)

        layer.register_forward_pre_hook(split)


class ContextParallel(PlanBase):
    """Context parallelism around an attention layer whose ``forward(q, k, v)`` takes
    [batch, seq, heads, head_dim] tensors split along seq on "sep": with "all2all"
    they are resharded to split along heads, attention runs on whole sequences, and
    the output is resharded back to split along seq.

    Args:
        backend (str, optional): "all2all" or "p2p" (not available in fw).
            Default "p2p", as in Paddle.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["sep"])
            >>> class SDPA(fw.nn.Layer):
            ...     def forward(self, q, k, v):
            ...         return fw.nn.functional.scaled_dot_product_attention(q, k, v)
            >>> attn = SDPA()
            >>> dist.ContextParallel("all2all").apply(attn, mesh, [])
            >>> q = dist.shard_tensor(fw.ones([1, 4, 2, 8]), mesh, [dist.Shard(1)])
            >>> attn(q, q, q).placements
            [Shard(dim=1)]
    """

    def __init__(self, backend="p2p"):
        self.backend = _check_backend("ContextParallel", backend)

    def apply(self, layer, process_mesh, shard_param_list):
        """Register the q/k/v and output reshards (all2all); raises for p2p.

        Args:
            layer (Layer): the attention layer.
            process_mesh (ProcessMesh): a mesh with a "sep" axis.
            shard_param_list (list[str]): unused.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["sep"])
                >>> dist.ContextParallel("all2all").apply(fw.nn.Identity(), mesh, [])
        """
        who = f"ContextParallel({self.backend!r})"
        cp = axis_index(process_mesh, "sep", who)
        if self.backend == "p2p":
            raise NotImplementedError(f"{who}: {_P2P}")

        def to_heads(_layer, args):
            out = []
            for t in args:
                if t.ndim not in (3, 4):
                    raise ValueError(f"{who}: q/k/v must be 3-D or 4-D [batch, seq, heads, ...],"
                                     f" got shape {t.shape}")
                t = as_dist(t, process_mesh, who)
                if t.placements[cp] != Shard(1):
                    raise ValueError(f"{who}: q/k/v must be split along the sequence (dim 1) "
                                     f"on 'sep', got {t.placements}")
                out.append(_reshard_dim(t, process_mesh, cp, 2, who))
            return tuple(out)

        def to_seq(_layer, _inputs, out):
            return _reshard_dim(out, process_mesh, cp, 1, who)

        layer.register_forward_pre_hook(to_heads)
        layer.register_forward_post_hook(to_seq)
