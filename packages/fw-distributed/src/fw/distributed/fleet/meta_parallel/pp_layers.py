"""`LayerDesc` and `PipelineLayer`: a model written as a list of layers, of which
each pipeline stage builds and runs only its own contiguous segment.

Layers are split uniformly by count (``seg_method="uniform"``) or at the layers
whose class name matches ``seg_method="layer:Name"`` (Paddle's two methods). A
built layer is registered under its *global* index (``"3.weight"``), so the
stages' state dicts together have the keys of the whole model (and a dense
``nn.Sequential`` of the same layers has the same keys).
"""

from __future__ import annotations

from fw.distributed.fleet import fleet_base
from fw.nn import Layer

__all__ = ["LayerDesc", "PipelineLayer", "segment_bounds"]


class LayerDesc:
    """A layer to build later: ``LayerDesc(nn.Linear, 4, 8)`` builds ``nn.Linear(4,
    8)`` on the stage that owns it (the others never allocate its parameters).

    Args:
        layer_func (type): an ``fw.nn.Layer`` subclass.
        *inputs: its positional arguments.
        **kwargs: its keyword arguments.

    Examples:
        >>> import fw
        >>> import fw.nn as nn
        >>> from fw.distributed.fleet.meta_parallel import LayerDesc
        >>> LayerDesc(nn.Linear, 4, 8)
        LayerDesc(Linear)
    """

    def __init__(self, layer_func, *inputs, **kwargs):
        if not (isinstance(layer_func, type) and issubclass(layer_func, Layer)):
            raise TypeError(f"LayerDesc: layer_func must be an fw.nn.Layer subclass, got "
                            f"{layer_func!r}")
        self.layer_func = layer_func
        self.inputs = inputs
        self.kwargs = kwargs

    def build_layer(self):
        """Build the layer (``layer_func(*inputs, **kwargs)``).

        Returns:
            Layer: a new layer.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.distributed.fleet.meta_parallel import LayerDesc
            >>> LayerDesc(nn.Linear, 4, 8).build_layer().weight.shape
            [4, 8]
        """
        return self.layer_func(*self.inputs, **self.kwargs)

    def __repr__(self):
        return f"LayerDesc({self.layer_func.__name__})"


def segment_bounds(descs, num_stages, seg_method="uniform"):
    """``num_stages + 1`` boundaries: stage s runs ``descs[b[s]:b[s+1]]``."""
    n = len(descs)
    if num_stages > n:
        raise ValueError(f"PipelineLayer: {n} layers cannot be split into {num_stages} stages")
    if seg_method == "uniform":
        return [n * s // num_stages for s in range(num_stages + 1)]
    if isinstance(seg_method, str) and seg_method.startswith("layer:"):
        name = seg_method[len("layer:"):]
        marks = [i for i, d in enumerate(descs)
                 if (d.layer_func.__name__ if isinstance(d, LayerDesc)
                     else type(d).__name__) == name]
        if len(marks) < num_stages:
            raise ValueError(f"PipelineLayer: seg_method={seg_method!r} found {len(marks)} "
                             f"{name} layers, fewer than num_stages={num_stages}")
        b = [0] + [marks[len(marks) * s // num_stages] for s in range(1, num_stages)] + [n]
        return b
    raise ValueError(f"PipelineLayer: seg_method must be 'uniform' or 'layer:<ClassName>', "
                     f"got {seg_method!r}")


class PipelineLayer(Layer):
    """A model described as a sequence of layers split into pipeline stages; each
    rank builds and runs only its stage's layers.

    Args:
        layers: a list of `LayerDesc`, Layers and plain functions, run in order.
        num_stages: the pipeline degree (default: fleet's pp degree, or 1).
        topology: accepted for Paddle's API (fleet's topology is used).
        loss_fn: ``loss_fn(output, label)`` for the last stage.
        seg_method: how to split: ``"uniform"`` or ``"layer:<ClassName>"``.
        recompute_interval: recompute every `recompute_interval` layers in backward
            (0: never).
        recompute_ctx: accepted for Paddle's API.
        num_virtual_pipeline_stages: must be None or 1 (no interleaving).

    Examples:
        >>> import fw
        >>> import fw.nn as nn
        >>> from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer
        >>> net = PipelineLayer([LayerDesc(nn.Linear, 4, 8), nn.ReLU(),
        ...                      LayerDesc(nn.Linear, 8, 1)], num_stages=1)
        >>> net(fw.ones([2, 4])).shape, net.segment_parts
        ([2, 1], [0, 3])
    """

    def __init__(self, layers, num_stages=None, topology=None, loss_fn=None,
                 seg_method="uniform", recompute_interval=0, recompute_ctx=None,
                 num_virtual_pipeline_stages=None):
        super().__init__()
        if not isinstance(layers, (list, tuple)) or not layers:
            raise ValueError("PipelineLayer: 'layers' must be a non-empty list")
        hcg = fleet_base._hcg_or_none()
        if num_stages is None:
            num_stages = hcg.get_pipe_parallel_world_size() if hcg is not None else 1
        stage = hcg.get_stage_id() if hcg is not None and num_stages > 1 else 0
        if hcg is not None and num_stages > 1 and \
                num_stages != hcg.get_pipe_parallel_world_size():
            raise ValueError(f"PipelineLayer: num_stages={num_stages} but fleet's pp_degree is "
                             f"{hcg.get_pipe_parallel_world_size()}")
        if num_virtual_pipeline_stages not in (None, 1):
            raise NotImplementedError("PipelineLayer: interleaved (virtual) pipeline stages "
                                      "are not supported")
        self._num_stages = num_stages
        self._stage_id = stage
        self._loss_fn = loss_fn
        self._recompute_interval = int(recompute_interval)
        self.segment_parts = segment_bounds(list(layers), num_stages, seg_method)
        self._start = self.segment_parts[stage]
        self._end = self.segment_parts[stage + 1]
        self.run_function = []
        for i in range(self._start, self._end):
            d = layers[i]
            if isinstance(d, LayerDesc):
                d = d.build_layer()
            if isinstance(d, Layer):
                self.add_sublayer(str(i), d)
            elif not callable(d):
                raise TypeError(f"PipelineLayer: layers[{i}] is neither a LayerDesc, a Layer "
                                f"nor a function: {d!r}")
            self.run_function.append(d)

    def get_stage_from_index(self, layer_idx):
        """The stage that runs layer `layer_idx`.

        Args:
            layer_idx (int): an index into `layers`.

        Returns:
            int: the stage (IndexError when out of range).

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer
            >>> net = PipelineLayer([LayerDesc(nn.Linear, 4, 4), nn.ReLU()], num_stages=1)
            >>> net.get_stage_from_index(1)
            0
        """
        for s in range(self._num_stages):
            if self.segment_parts[s] <= layer_idx < self.segment_parts[s + 1]:
                return s
        raise IndexError(f"PipelineLayer: layer index {layer_idx} out of range")

    def _run(self, fns, x):
        for f in fns:
            x = f(x)
        return x

    def forward(self, x):
        fns = self.run_function
        k = self._recompute_interval
        if k <= 0 or not self.training:
            return self._run(fns, x)
        from fw.autograd import recompute

        for i in range(0, len(fns), k):
            seg = fns[i:i + k]
            x = recompute(lambda y, seg=seg: self._run(seg, y), x)
        return x
