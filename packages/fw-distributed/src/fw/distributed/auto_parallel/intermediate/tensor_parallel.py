"""Paddle 3.x's tensor-parallel plans for `parallelize`'s ``mp_config``: each plan
shards a layer's parameters over the mesh's "mp" axis and/or hooks reshards of its
inputs and outputs. The eager SPMD rules then run the layer on the blocks
(Megatron's column/row split: a column-split Linear gives an output split on its
last dim, a row-split Linear taking it gives a Partial output)."""

from __future__ import annotations

import warnings

from fw.distributed.auto_parallel.dist_tensor import DistTensor
from fw.distributed.auto_parallel.intermediate._util import (
    axis_index,
    gather_activation,
    split_activation,
)
from fw.distributed.auto_parallel.placement import Replicate, Shard

__all__ = ["PlanBase", "ColWiseParallel", "RowWiseParallel", "PrepareLayerInput",
           "PrepareLayerOutput", "SequenceParallelBegin", "SequenceParallelEnd",
           "SequenceParallelEnable", "SequenceParallelDisable"]


class PlanBase:
    """Base of the parallel plans: ``apply(layer, process_mesh, shard_param_list)``
    changes one layer (shards parameters, registers hooks).

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> isinstance(dist.ColWiseParallel(), dist.auto_parallel.intermediate.PlanBase)
            True
    """

    def apply(self, layer, process_mesh, shard_param_list):
        """Apply the plan to `layer` (a subclass implements it).

        Args:
            layer (Layer): the matched layer.
            process_mesh (ProcessMesh): the mesh (with an "mp" axis).
            shard_param_list (list[str]): parameter names the plan key named
                (``"x.weight"``); empty: the plan's default parameters.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
                >>> lin = fw.nn.Linear(4, 2)
                >>> dist.ColWiseParallel().apply(lin, mesh, [])
                >>> lin.weight.placements
                [Shard(dim=1)]
        """
        raise NotImplementedError(f"{type(self).__name__}.apply: PlanBase is abstract")


def _layer_check(who, layer):
    from fw.nn import Layer

    if not isinstance(layer, Layer):
        raise TypeError(f"{who}: expected a fw.nn.Layer, got {type(layer).__name__}")


def _is_linear_or_embedding(layer):
    from fw.nn import Embedding, Linear

    return isinstance(layer, (Linear, Embedding))


def _shard_param(layer, name, mesh, placements):
    from fw.distributed.auto_parallel.api import shard_tensor

    p = getattr(layer, name)
    if isinstance(p, DistTensor):      # already placed (a shared parameter, a plan before)
        return
    setattr(layer, name, shard_tensor(p, mesh, placements))


class ColWiseParallel(PlanBase):
    """Column-parallel plan: a 2-D ``weight`` is split on its second dim (the output
    features of a `Linear`, the hidden dim of an `Embedding`) and a 1-D ``bias`` on
    its only dim, over the mesh's "mp" axis; the output is then split on its last dim.

    Args:
        gather_output (bool, optional): make the output whole on "mp" again (an
            all-gather) after the layer. Default False.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
            >>> lin = fw.nn.Linear(4, 6)
            >>> dist.ColWiseParallel().apply(lin, mesh, [])
            >>> lin.weight.placements, lin.bias.placements
            ([Shard(dim=1)], [Shard(dim=0)])
    """

    def __init__(self, gather_output=False):
        self.gather_output = bool(gather_output)

    def apply(self, layer, process_mesh, shard_param_list):
        """Shard `layer`'s weight (dim 1) and bias (dim 0) over "mp".

        Args:
            layer (Layer): a `Linear`/`Embedding` (other layers: their ``weight`` and
                ``bias`` if they have them).
            process_mesh (ProcessMesh): the mesh.
            shard_param_list (list[str]): names of the parameters to shard (empty:
                ``weight`` and ``bias``).

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
                >>> emb = fw.nn.Embedding(10, 4)
                >>> dist.ColWiseParallel().apply(emb, mesh, [])
                >>> emb.weight.placements
                [Shard(dim=1)]
        """
        who = "ColWiseParallel"
        _layer_check(who, layer)
        mp = axis_index(process_mesh, "mp", who)
        if not _is_linear_or_embedding(layer):
            warnings.warn(f"{who} is meant for Linear and Embedding; sharding the weight/bias "
                          f"of {type(layer).__name__}", stacklevel=2)
        for name in (list(shard_param_list) or ["weight", "bias"]):
            p = getattr(layer, name, None)
            if p is None:
                continue
            if p.ndim == 2:
                dim = 1
            elif p.ndim == 1:
                dim = 0
            else:
                raise ValueError(f"{who}: {type(layer).__name__}.{name} has shape {p.shape}; "
                                 f"only 1-D and 2-D parameters can be column-split")
            pl = [Replicate()] * process_mesh.ndim
            pl[mp] = Shard(dim)
            _shard_param(layer, name, process_mesh, pl)
        if self.gather_output:
            layer.register_forward_post_hook(
                lambda _l, _i, out: gather_activation(out, process_mesh, False,
                                                      "ColWiseParallel(gather_output=True)"))


class RowWiseParallel(PlanBase):
    """Row-parallel plan: a 2-D ``weight`` is split on its first dim (the input
    features of a `Linear`, the vocabulary of an `Embedding`) over "mp"; the bias
    stays whole. A Linear's output is then Partial on "mp" (summed when a later op
    needs it whole).

    Args:
        is_input_parallel (bool, optional): whether the input already comes split on
            its last dim (from a column-parallel layer). False splits it first.
            Default True.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
            >>> lin = fw.nn.Linear(6, 4)
            >>> dist.RowWiseParallel().apply(lin, mesh, [])
            >>> lin.weight.placements
            [Shard(dim=0)]
    """

    def __init__(self, is_input_parallel=True):
        self.is_input_parallel = bool(is_input_parallel)

    def apply(self, layer, process_mesh, shard_param_list):
        """Shard `layer`'s weight on dim 0 over "mp".

        Args:
            layer (Layer): a `Linear`/`Embedding`.
            process_mesh (ProcessMesh): the mesh.
            shard_param_list (list[str]): names of the parameters to shard (empty:
                ``weight``; ``bias`` is never split).

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
                >>> lin = fw.nn.Linear(6, 4)
                >>> dist.RowWiseParallel().apply(lin, mesh, [])
                >>> lin.bias.is_dist(), lin.bias.placements if lin.bias.is_dist() else None
                (False, None)
        """
        who = "RowWiseParallel"
        _layer_check(who, layer)
        mp = axis_index(process_mesh, "mp", who)
        if not _is_linear_or_embedding(layer):
            warnings.warn(f"{who} is meant for Linear and Embedding; sharding the weight of "
                          f"{type(layer).__name__}", stacklevel=2)
        names = [n for n in shard_param_list if n != "bias"] or ["weight"]
        for name in names:
            p = getattr(layer, name, None)
            if p is None:
                continue
            if p.ndim != 2:
                raise ValueError(f"{who}: {type(layer).__name__}.{name} has shape {p.shape}; "
                                 f"only 2-D parameters can be row-split")
            pl = [Replicate()] * process_mesh.ndim
            pl[mp] = Shard(0)
            _shard_param(layer, name, process_mesh, pl)
        if not self.is_input_parallel:
            layer.register_forward_pre_hook(
                lambda _l, inputs: split_activation(inputs, process_mesh, False,
                                                    "RowWiseParallel(is_input_parallel=False)",
                                                    split_type="mp"))


class _HookPlan(PlanBase):
    def __init__(self, fn=None):
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}: fn must be a callable "
                            f"fn(process_mesh) -> hook, got {type(fn).__name__}")
        self.fn = fn


class PrepareLayerInput(_HookPlan):
    """Register a forward pre-hook made by ``fn(process_mesh=mesh)`` on the layer
    (to reshard or annotate its inputs).

    Args:
        fn (callable): ``fn(process_mesh) -> hook``, with ``hook(layer, inputs) ->
            new inputs | None``.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
            >>> def fn(process_mesh):
            ...     return lambda layer, inputs: (dist.shard_tensor(
            ...         inputs[0], process_mesh, [dist.Shard(0)]),)
            >>> lin = fw.nn.Linear(2, 2)
            >>> dist.PrepareLayerInput(fn).apply(lin, mesh, [])
            >>> lin(fw.ones([3, 2])).placements
            [Shard(dim=0)]
    """

    def apply(self, layer, process_mesh, shard_param_list):
        """Register the pre-hook.

        Args:
            layer (Layer): the layer.
            process_mesh (ProcessMesh): passed to `fn`.
            shard_param_list (list[str]): unused.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> plan = dist.PrepareLayerInput(lambda process_mesh: lambda l, i: None)
                >>> plan.apply(fw.nn.ReLU(), dist.ProcessMesh([0], dim_names=["mp"]), [])
        """
        _layer_check("PrepareLayerInput", layer)
        layer.register_forward_pre_hook(self.fn(process_mesh=process_mesh))


class PrepareLayerOutput(_HookPlan):
    """Register a forward post-hook made by ``fn(process_mesh=mesh)`` on the layer
    (to reshard its outputs).

    Args:
        fn (callable): ``fn(process_mesh) -> hook``, with ``hook(layer, inputs,
            outputs) -> new outputs | None``.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
            >>> def fn(process_mesh):
            ...     return lambda layer, inputs, out: dist.shard_tensor(
            ...         out, process_mesh, [dist.Replicate()])
            >>> relu = fw.nn.ReLU()
            >>> dist.PrepareLayerOutput(fn).apply(relu, mesh, [])
            >>> relu(fw.ones([2])).is_dist()
            True
    """

    def apply(self, layer, process_mesh, shard_param_list):
        """Register the post-hook.

        Args:
            layer (Layer): the layer.
            process_mesh (ProcessMesh): passed to `fn`.
            shard_param_list (list[str]): unused.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> plan = dist.PrepareLayerOutput(lambda process_mesh: lambda l, i, o: None)
                >>> plan.apply(fw.nn.ReLU(), dist.ProcessMesh([0], dim_names=["mp"]), [])
        """
        _layer_check("PrepareLayerOutput", layer)
        layer.register_forward_post_hook(self.fn(process_mesh=process_mesh))


class SequenceParallelBegin(PlanBase):
    """Start of a sequence-parallel region, on the last layer before it: the layer's
    [b, s, h] output becomes [s, b, h] split on s over "mp" (``need_transpose``) —
    or an [s, b, h] output is split on s.

    Args:
        need_transpose (bool, optional): transpose [b, s, h] to [s, b, h] first.
            Default True.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
            >>> emb = fw.nn.Embedding(10, 4)
            >>> dist.SequenceParallelBegin().apply(emb, mesh, [])
            >>> out = emb(fw.zeros([2, 3], dtype="int64"))
            >>> out.shape, out.placements
            ([3, 2, 4], [Shard(dim=0)])
    """

    def __init__(self, need_transpose=True):
        self.need_transpose = bool(need_transpose)

    def apply(self, layer, process_mesh, shard_param_list):
        """Register the output split.

        Args:
            layer (Layer): the layer.
            process_mesh (ProcessMesh): the mesh.
            shard_param_list (list[str]): unused.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> dist.SequenceParallelBegin().apply(
                ...     fw.nn.ReLU(), dist.ProcessMesh([0], dim_names=["mp"]), [])
        """
        _layer_check("SequenceParallelBegin", layer)
        nt = self.need_transpose
        layer.register_forward_post_hook(
            lambda _l, _i, out: split_activation(out, process_mesh, nt, "SequenceParallelBegin"))


class SequenceParallelEnd(PlanBase):
    """End of a sequence-parallel region, on the first layer after it: its [s, b, h]
    input split on s is made whole and (``need_transpose``) transposed back to
    [b, s, h].

    Args:
        need_transpose (bool, optional): transpose back to [b, s, h]. Default True.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
            >>> relu = fw.nn.ReLU()
            >>> dist.SequenceParallelEnd().apply(relu, mesh, [])
            >>> x = dist.shard_tensor(fw.ones([3, 2, 4]), mesh, [dist.Shard(0)])
            >>> out = relu(x)
            >>> out.shape, out.placements
            ([2, 3, 4], [Replicate()])
    """

    def __init__(self, need_transpose=True):
        self.need_transpose = bool(need_transpose)

    def apply(self, layer, process_mesh, shard_param_list):
        """Register the input gather.

        Args:
            layer (Layer): the layer.
            process_mesh (ProcessMesh): the mesh.
            shard_param_list (list[str]): unused.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> dist.SequenceParallelEnd().apply(
                ...     fw.nn.ReLU(), dist.ProcessMesh([0], dim_names=["mp"]), [])
        """
        _layer_check("SequenceParallelEnd", layer)
        nt = self.need_transpose
        layer.register_forward_pre_hook(
            lambda _l, inputs: gather_activation(inputs, process_mesh, nt, "SequenceParallelEnd"))


class SequenceParallelEnable(PlanBase):
    """Run one layer sequence-parallel: its [b, s, h] input becomes [s, b, h] split
    on s over "mp", and its output is made whole and transposed back.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
            >>> norm = fw.nn.LayerNorm(4)
            >>> dist.SequenceParallelEnable().apply(norm, mesh, [])
            >>> norm(fw.ones([2, 3, 4])).shape
            [2, 3, 4]
    """

    def apply(self, layer, process_mesh, shard_param_list):
        """Register the input split and the output gather.

        Args:
            layer (Layer): the layer.
            process_mesh (ProcessMesh): the mesh.
            shard_param_list (list[str]): unused.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> dist.SequenceParallelEnable().apply(
                ...     fw.nn.ReLU(), dist.ProcessMesh([0], dim_names=["mp"]), [])
        """
        who = "SequenceParallelEnable"
        _layer_check(who, layer)
        layer.register_forward_pre_hook(
            lambda _l, inputs: split_activation(inputs, process_mesh, True, who))
        layer.register_forward_post_hook(
            lambda _l, _i, out: gather_activation(out, process_mesh, True, who))


class SequenceParallelDisable(PlanBase):
    """Run one layer inside a sequence-parallel region on whole sequences: its
    [s, b, h] input split on s is made whole (and transposed to [b, s, h] with
    ``need_transpose``), and its output is split on s again.

    Args:
        need_transpose (bool, optional): whether the layer works on [b, s, h].
            Default True.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
            >>> relu = fw.nn.ReLU()
            >>> dist.SequenceParallelDisable().apply(relu, mesh, [])
            >>> x = dist.shard_tensor(fw.ones([3, 2, 4]), mesh, [dist.Shard(0)])
            >>> out = relu(x)
            >>> out.shape, out.placements
            ([3, 2, 4], [Shard(dim=0)])
    """

    def __init__(self, need_transpose=True):
        self.need_transpose = bool(need_transpose)

    def apply(self, layer, process_mesh, shard_param_list):
        """Register the input gather and the output split.

        Args:
            layer (Layer): the layer.
            process_mesh (ProcessMesh): the mesh.
            shard_param_list (list[str]): unused.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> dist.SequenceParallelDisable(need_transpose=False).apply(
                ...     fw.nn.ReLU(), dist.ProcessMesh([0], dim_names=["mp"]), [])
        """
        who = "SequenceParallelDisable"
        _layer_check(who, layer)
        nt = self.need_transpose
        layer.register_forward_pre_hook(
            lambda _l, inputs: gather_activation(inputs, process_mesh, nt, who))
        layer.register_forward_post_hook(
            lambda _l, _i, out: split_activation(out, process_mesh, nt, who))
