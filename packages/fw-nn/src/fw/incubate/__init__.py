"""``fw.incubate``: the pieces of Paddle's ``paddle.incubate`` that user code reaches
for — the LookAhead and ModelAverage optimizer wrappers, the segment and graph ops
under their older names (thin wrappers over fw.geometric), ``identity_loss`` and the
fused attention softmaxes. Hardware-specific parts (``cc``, ``inference``) raise a
clear "not supported" error.

Example:
    >>> import fw
    >>> fw.incubate.segment_sum(fw.to_tensor([[1.0], [2.0]]), fw.to_tensor([0, 0])).tolist()
    [[3.0]]
"""

from fw.core.errors import UnsupportedError
from fw.geometric import segment_max, segment_mean, segment_min, segment_sum
from fw.incubate import cc
from fw.incubate.functional import (
    identity_loss,
    softmax_mask_fuse,
    softmax_mask_fuse_upper_triangle,
)
from fw.incubate.graph import (
    graph_khop_sampler,
    graph_reindex,
    graph_sample_neighbors,
    graph_send_recv,
)
from fw.incubate.optimizer import LookAhead, ModelAverage

__all__ = [
    "LookAhead", "ModelAverage", "segment_sum", "segment_mean", "segment_max", "segment_min",
    "graph_send_recv", "graph_khop_sampler", "graph_reindex", "graph_sample_neighbors",
    "identity_loss", "softmax_mask_fuse", "softmax_mask_fuse_upper_triangle", "cc",
    "inference",
]


def inference(function=None, cache_static_model=False, save_model_dir=None,
              memory_pool_init_size_mb=1000, precision_mode="float32", switch_ir_optim=True,
              switch_ir_debug=False, enable_cinn=False, with_trt=False,
              trt_precision_mode="float32", trt_use_static=False, collect_shape=False,
              enable_new_ir=False, exp_enable_use_cutlass=False, delete_pass_lists=None,
              skip_prune_program=False):
    """Paddle's decorator that runs a function through a Paddle Inference predictor
    (TensorRT, CINN, cutlass options). Not supported in fw: export with
    ``fw.jit.save`` and load with ``fw.inference.create_predictor`` instead.

    Args:
        function (callable, optional): the function to decorate. Default: None.
        cache_static_model (bool, optional): Paddle's option; unused. Default: False.
        save_model_dir (str, optional): Paddle's option; unused. Default: None.
        memory_pool_init_size_mb (int, optional): Paddle's option; unused. Default: 1000.
        precision_mode (str, optional): Paddle's option; unused. Default: 'float32'.
        switch_ir_optim (bool, optional): Paddle's option; unused. Default: True.
        switch_ir_debug (bool, optional): Paddle's option; unused. Default: False.
        enable_cinn (bool, optional): Paddle's option; unused. Default: False.
        with_trt (bool, optional): Paddle's option; unused. Default: False.
        trt_precision_mode (str, optional): Paddle's option; unused. Default: 'float32'.
        trt_use_static (bool, optional): Paddle's option; unused. Default: False.
        collect_shape (bool, optional): Paddle's option; unused. Default: False.
        enable_new_ir (bool, optional): Paddle's option; unused. Default: False.
        exp_enable_use_cutlass (bool, optional): Paddle's option; unused. Default: False.
        delete_pass_lists (list[str], optional): Paddle's option; unused. Default: None.
        skip_prune_program (bool, optional): Paddle's option; unused. Default: False.

    Returns:
        callable: never; it raises.

    Raises:
        UnsupportedError: always, naming the replacement.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.incubate.inference(lambda x: x)
        ... except NotImplementedError as e:
        ...     print("not supported")
        not supported
    """
    raise UnsupportedError("fw.incubate.inference: Paddle's inference decorator is not "
                           "supported in fw; export the function with fw.jit.save and run it "
                           "with fw.inference.create_predictor (see "
                           "docs/paddle_differences.md)")
