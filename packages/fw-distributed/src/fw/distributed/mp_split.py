"""``paddle.distributed.split``: one Megatron-style model-parallel linear or
embedding op on `x`, creating its (split) parameters as it goes — the op-function
form of fleet's `ColumnParallelLinear`, `RowParallelLinear` and
`VocabParallelEmbedding` (which hold the splitting and communication; see
fleet/meta_parallel/mp_layers.py).

Like ``fw.static.nn.fc``, each call creates new parameters: in a static program
that is once per op built; called eagerly it is a one-off layer whose parameters
the caller does not keep (Paddle refuses dynamic mode and points to the layers;
fw runs it, so a program built by tracing gets the same op).
"""
from __future__ import annotations

from fw.distributed import _fleet_comm as comm

__all__ = ["split"]


def _group(num_partitions, fn):
    """The model-parallel group of `num_partitions` ranks this rank belongs to:
    fleet's model-parallel group when its size matches, else the world (when it has
    exactly `num_partitions` ranks), else this rank alone for 1."""
    from fw.distributed.fleet import fleet_base

    hcg = fleet_base._hcg_or_none()
    if hcg is not None:
        mp = hcg.get_model_parallel_group()
        if mp.nranks == num_partitions:
            return mp
    if num_partitions == 1:
        return comm.self_group()
    if comm.world_size() == num_partitions:
        return comm.world()
    mp = hcg.get_model_parallel_group().nranks if hcg is not None else "fleet not initialised"
    raise ValueError(f"fw.distributed.{fn}: num_partitions={num_partitions} must be 1, the world "
                     f"size ({comm.world_size()}) or fleet's model-parallel degree ({mp})")


def split(x, size, operation, axis=0, num_partitions=1, gather_out=True, weight_attr=None,
          bias_attr=None, name=None):
    """Run a linear or embedding op whose weight is split over `num_partitions`
    model-parallel ranks (Megatron-LM's tensor parallelism).

    - ``operation="embedding"`` (`axis` must be 0): the ``[vocab, dim]`` table is split
      by vocabulary rows; each rank looks up the ids in its range and the partial
      lookups are all-reduced.
    - ``operation="linear"``, ``axis=0``: the ``[in, out]`` weight is split by rows;
      an input with ``in`` features is split along its last axis first (an input
      with ``in / num_partitions`` features is taken as already split); the partial
      products are all-reduced, then the bias is added.
    - ``operation="linear"``, ``axis=1``: split by columns; each rank computes its
      output columns, all-gathered when `gather_out`.

    Args:
        x (Tensor): the input (int64 ids for the embedding).
        size (list|tuple): the whole weight's shape, ``[in, out]`` or ``[vocab, dim]``.
        operation (str): ``"linear"`` or ``"embedding"``.
        axis (int, optional): the weight axis that is split (0 or 1). Default: 0.
        num_partitions (int, optional): the number of ranks sharing the weight: 1, the
            world size or fleet's ``mp_degree``. Default: 1.
        gather_out (bool, optional): gather the column-split output on every rank.
            Default: True.
        weight_attr (ParamAttr, optional): the weight's attributes. Default: None.
        bias_attr (ParamAttr|bool, optional): the bias's attributes; False for no
            bias. Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the op's output.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> x = fw.ones([2, 4])
        >>> dist.split(x, size=(4, 6), operation="linear", axis=1).shape
        [2, 6]
        >>> ids = fw.to_tensor([[1, 3]])
        >>> dist.split(ids, size=(8, 5), operation="embedding").shape
        [1, 2, 5]
    """
    fn = "split"
    from fw.distributed.fleet.meta_parallel.mp_layers import (
        ColumnParallelLinear,
        RowParallelLinear,
        VocabParallelEmbedding,
    )

    if operation not in ("linear", "embedding"):
        raise ValueError(f"fw.distributed.{fn}: operation must be 'linear' or 'embedding', "
                         f"got {operation!r}")
    if not isinstance(size, (list, tuple)) or len(size) != 2 or \
            not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in size):
        raise ValueError(f"fw.distributed.{fn}: size must be two positive ints, got {size!r}")
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int) or \
            num_partitions < 1:
        raise ValueError(f"fw.distributed.{fn}: num_partitions must be an int >= 1, got "
                         f"{num_partitions!r}")
    if axis not in (0, 1):
        raise ValueError(f"fw.distributed.{fn}: axis must be 0 or 1, got {axis!r}")
    k = size[axis]
    if k % num_partitions:
        raise ValueError(f"fw.distributed.{fn}: size[{axis}]={k} (the split axis of the "
                         f"{operation} weight {list(size)}) must be divisible by "
                         f"num_partitions={num_partitions}")
    g = _group(num_partitions, fn)
    if operation == "embedding":
        if axis != 0:
            raise ValueError(f"fw.distributed.{fn}: an embedding is split along axis 0 (its "
                             f"vocabulary), got axis={axis}")
        return VocabParallelEmbedding(size[0], size[1], weight_attr=weight_attr, mp_group=g)(x)
    has_bias = bias_attr is not False
    feat = x.shape[-1]
    if axis == 1:
        if feat != size[0]:
            raise ValueError(f"fw.distributed.{fn}: x of shape {x.shape} has {feat} features but "
                             f"the weight {list(size)} takes {size[0]}")
        layer = ColumnParallelLinear(size[0], size[1], weight_attr=weight_attr,
                                     has_bias=has_bias, gather_output=gather_out, mp_group=g)
    else:
        if feat not in (size[0], size[0] // num_partitions):
            raise ValueError(f"fw.distributed.{fn}: x of shape {x.shape} must have {size[0]} "
                             f"features (the whole input) or {size[0] // num_partitions} (this "
                             f"rank's part) for the row-split weight {list(size)}")
        layer = RowParallelLinear(size[0], size[1], weight_attr=weight_attr, has_bias=has_bias,
                                  input_is_parallel=feat != size[0] or num_partitions == 1,
                                  mp_group=g)
    if has_bias and bias_attr not in (None, True):
        _rebias(layer, bias_attr, axis, g)
    return layer(x)


def _rebias(layer, bias_attr, axis, g):
    """Give `layer` a bias created with `bias_attr` (the layers take no bias_attr)."""
    from fw.distributed.fleet.meta_parallel.mp_layers import _block_param, split_bias

    b = layer.create_parameter([layer.out_features], attr=bias_attr, is_bias=True)
    if axis == 1 and g.nranks > 1:
        b = _block_param(b, split_bias(b._data, "column", g.rank, g.nranks))
    b.is_distributed = axis == 1 and g.nranks > 1
    b.split_axis = 0
    layer.bias = b
