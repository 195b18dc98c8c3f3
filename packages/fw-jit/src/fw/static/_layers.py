"""The layer functions of ``paddle.static.nn`` (conv, norm, embedding, prelu, …).

Each creates its parameters with `fw.nn.create_parameter` (eagerly initialised,
named ``<name or kind_N>.w_0`` / ``.b_0`` as Paddle names them) and computes with
the fw.nn.functional op the matching dygraph layer uses. On a `fw.static.data`
variable the ops are emitted into the variable's program (the parameters become
its captured inputs), so ``Executor.run`` gives the values of the dygraph layer with
the same weights; on concrete tensors they run eagerly. Parameter shapes and
default initialisers follow Paddle 3.3's ``python/paddle/static/nn/common.py``.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from fw.core.internal import build_state
from fw.core.ir.core import Value

__all__ = ["conv2d", "conv2d_transpose", "conv3d", "conv3d_transpose", "batch_norm",
           "embedding", "sparse_embedding", "group_norm", "instance_norm", "layer_norm",
           "prelu", "bilinear_tensor_product", "deform_conv2d", "row_conv", "spectral_norm",
           "nce"]

_COUNTERS: dict = {}


def _prefix(kind, name):
    if name:
        return name
    c = _COUNTERS.setdefault(kind, itertools.count())
    return f"{kind}_{next(c)}"


def _in_program(fn):
    """Run layer function `fn` inside the builder of its first symbolic argument, so
    that the ops on its (concrete) parameters — a reshape, a slice — are emitted into
    the program too and gradients reach the parameters."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        v = next((a for a in list(args) + list(kwargs.values()) if type(a) is Value), None)
        if v is None or build_state.builder is not None:
            return fn(*args, **kwargs)
        from fw.static._mode import builder_for

        with builder_for(v):
            return fn(*args, **kwargs)

    return wrapper


def _param(shape, dtype, attr, pname, is_bias=False, default_initializer=None):
    """A parameter named `pname` unless `attr` names it; None when ``attr is False``."""
    from fw.nn import ParamAttr, create_parameter

    if attr is False:
        return None
    a = ParamAttr._to_attr(attr)
    if a.name is None:
        a = ParamAttr(pname, a.initializer, a.learning_rate, a.regularizer, a.trainable,
                      a.do_model_average, a.need_clip)
    return create_parameter(list(shape), dtype, attr=a, is_bias=is_bias,
                            default_initializer=default_initializer)


def _act(out, act, fname):
    if act is None:
        return out
    import fw

    fn = getattr(fw.nn.functional, act, None)
    if fn is None or not callable(fn):
        raise ValueError(f"{fname}: unknown activation act={act!r}")
    return fn(out)


def _shape(x, fname, argname="input", rank=None):
    s = list(getattr(x, "shape", None) or [])
    if not hasattr(x, "shape"):
        raise TypeError(f"{fname}: '{argname}' must be a Tensor or static Variable, got "
                        f"{type(x).__name__}")
    if rank is not None and len(s) not in (rank if isinstance(rank, tuple) else (rank,)):
        raise ValueError(f"{fname}: '{argname}' must have rank {rank}, got shape {s} "
                         f"(dtype {x.dtype})")
    return s


def _ntuple(v, n, fname, argname):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    if len(v) != n:
        raise ValueError(f"{fname}: '{argname}' must be an int or {n} ints, got {v}")
    return [int(i) for i in v]


def _channels(s, data_format, fname):
    c = s[1] if data_format.startswith("NC") else s[-1]
    if c < 0:
        raise ValueError(f"{fname}: the channel dim of the input (shape {s}, "
                         f"{data_format}) must be known")
    return c


def _conv(kind, nd, transpose, input, num_filters, filter_size, stride, padding, dilation,
          groups, param_attr, bias_attr, act, name, data_format, output_size=None):
    import fw
    from fw.nn import initializer as I

    fname = f"static.nn.{kind}"
    s = _shape(input, fname, rank=nd + 2)
    if data_format not in (("NCHW", "NHWC") if nd == 2 else ("NCDHW", "NDHWC")):
        raise ValueError(f"{fname}: data_format={data_format!r} is not supported")
    c = _channels(s, data_format, fname)
    groups = 1 if groups is None else int(groups)
    if c % groups or (not transpose and num_filters % groups):
        raise ValueError(f"{fname}: channels ({c}) and num_filters ({num_filters}) must be "
                         f"divisible by groups ({groups})")
    if transpose and filter_size is None:
        if output_size is None:
            raise ValueError(f"{fname}: give filter_size or output_size")
        # the filter that makes output_size from the input (Paddle's rule)
        osz = _ntuple(output_size, nd, fname, "output_size")
        st = _ntuple(stride, nd, fname, "stride")
        pd = _ntuple(padding, nd, fname, "padding") if not isinstance(padding, str) else [0] * nd
        dl = _ntuple(dilation, nd, fname, "dilation")
        sp = s[2:] if data_format.startswith("NC") else s[1:-1]
        filter_size = [(osz[i] - (sp[i] - 1) * st[i] + 2 * pd[i] - 1) // dl[i] + 1
                       for i in range(nd)]
    ks = _ntuple(filter_size, nd, fname, "filter_size")
    p = _prefix(kind, name)
    if transpose:
        wshape = [c, num_filters // groups] + ks
        w = _param(wshape, input.dtype, param_attr, f"{p}.w_0")
    else:
        wshape = [num_filters, c // groups] + ks
        # Paddle's conv default: Normal(0, sqrt(2 / (k * k * C_in/groups)))
        std = (2.0 / float(np.prod(ks) * (c // groups))) ** 0.5
        w = _param(wshape, input.dtype, param_attr, f"{p}.w_0",
                   default_initializer=I.Normal(0.0, std))
    b = _param([num_filters], input.dtype, bias_attr, f"{p}.b_0", is_bias=True)
    F = fw.nn.functional
    if transpose:
        fn = F.conv2d_transpose if nd == 2 else F.conv3d_transpose
        out = fn(input, w, bias=b, stride=stride, padding=padding, dilation=dilation,
                 groups=groups, output_size=output_size, data_format=data_format)
    else:
        fn = F.conv2d if nd == 2 else F.conv3d
        out = fn(input, w, bias=b, stride=stride, padding=padding, dilation=dilation,
                 groups=groups, data_format=data_format)
    return _act(out, act, fname)


@_in_program
def conv2d(input, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=None,  # noqa: A002
           param_attr=None, bias_attr=None, use_cudnn=True, act=None, name=None,
           data_format="NCHW"):
    """A 2-D convolution layer (Paddle's ``static.nn.conv2d``).

    Creates the filter ``[num_filters, C/groups, kh, kw]`` (``<name>.w_0``, Normal
    initialised) and the bias ``[num_filters]`` (``.b_0``; none with
    ``bias_attr=False``) and computes ``F.conv2d`` then `act`.

    Args:
        input (Tensor): 4-D, NCHW or NHWC (`data_format`).
        num_filters (int): output channels.
        filter_size (int|list): kernel size.
        stride, padding, dilation: as in `fw.nn.functional.conv2d` (padding may be
            ``"SAME"``/``"VALID"``).
        groups (int, optional): groups (default 1).
        param_attr, bias_attr (ParamAttr, optional): the parameters' attributes.
        use_cudnn (bool): accepted; fw picks its kernel itself.
        act (str, optional): an fw.nn.functional activation name.
        name (str, optional): the parameters' name prefix.
        data_format (str): ``"NCHW"`` or ``"NHWC"``.

    Returns:
        Tensor: the output, ``[N, num_filters, H', W']`` for NCHW.

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 3, 8, 8])
        >>> fw.static.nn.conv2d(x, num_filters=2, filter_size=3).shape
        [1, 2, 6, 6]
    """
    return _conv("conv2d", 2, False, input, num_filters, filter_size, stride, padding,
                 dilation, groups, param_attr, bias_attr, act, name, data_format)


@_in_program
def conv3d(input, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=None,  # noqa: A002
           param_attr=None, bias_attr=None, use_cudnn=True, act=None, name=None,
           data_format="NCDHW"):
    """A 3-D convolution layer (Paddle's ``static.nn.conv3d``): as `conv2d` on 5-D
    input (NCDHW or NDHWC), filter ``[num_filters, C/groups, kd, kh, kw]``.

    Args:
        input (Tensor): 5-D input. Other arguments as in `conv2d`.

    Returns:
        Tensor: the output.

    Examples:
        >>> import fw
        >>> fw.static.nn.conv3d(fw.ones([1, 2, 4, 4, 4]), 3, 2).shape
        [1, 3, 3, 3, 3]
    """
    return _conv("conv3d", 3, False, input, num_filters, filter_size, stride, padding,
                 dilation, groups, param_attr, bias_attr, act, name, data_format)


@_in_program
def conv2d_transpose(input, num_filters, output_size=None, filter_size=None, padding=0,  # noqa: A002
                     stride=1, dilation=1, groups=None, param_attr=None, bias_attr=None,
                     use_cudnn=True, act=None, name=None, data_format="NCHW"):
    """A 2-D transposed convolution layer (Paddle's ``static.nn.conv2d_transpose``).

    The filter is ``[C, num_filters/groups, kh, kw]``; with only `output_size`
    given, the filter size that produces it is derived (Paddle's rule).

    Args:
        input (Tensor): 4-D input. output_size (int|list, optional): the output's
            spatial size. Other arguments as in `conv2d`.

    Returns:
        Tensor: the output.

    Examples:
        >>> import fw
        >>> fw.static.nn.conv2d_transpose(fw.ones([1, 3, 4, 4]), 2, filter_size=3).shape
        [1, 2, 6, 6]
    """
    return _conv("conv2d_transpose", 2, True, input, num_filters, filter_size, stride,
                 padding, dilation, groups, param_attr, bias_attr, act, name, data_format,
                 output_size)


@_in_program
def conv3d_transpose(input, num_filters, output_size=None, filter_size=None, padding=0,  # noqa: A002
                     stride=1, dilation=1, groups=None, param_attr=None, bias_attr=None,
                     use_cudnn=True, act=None, name=None, data_format="NCDHW"):
    """A 3-D transposed convolution layer (Paddle's ``static.nn.conv3d_transpose``).

    Args:
        input (Tensor): 5-D input. Other arguments as in `conv2d_transpose`.

    Returns:
        Tensor: the output.

    Examples:
        >>> import fw
        >>> fw.static.nn.conv3d_transpose(fw.ones([1, 2, 2, 2, 2]), 1, filter_size=2).shape
        [1, 1, 3, 3, 3]
    """
    return _conv("conv3d_transpose", 3, True, input, num_filters, filter_size, stride,
                 padding, dilation, groups, param_attr, bias_attr, act, name, data_format,
                 output_size)


@_in_program
def batch_norm(input, act=None, is_test=False, momentum=0.9, epsilon=1e-05, param_attr=None,  # noqa: A002
               bias_attr=None, data_layout="NCHW", in_place=False, name=None,
               moving_mean_name=None, moving_variance_name=None,
               do_model_average_for_mean_and_var=True, use_global_stats=False):
    """Batch normalisation (Paddle's ``static.nn.batch_norm``).

    Creates scale (ones), bias (zeros) and the moving mean (zeros) / variance (ones)
    of the channel dim; with ``is_test`` or `use_global_stats` it normalises with
    the moving statistics, else with the batch's.

    Args:
        input (Tensor): 2-D to 5-D input. act (str, optional): activation.
        is_test (bool): inference mode. momentum (float): moving-average momentum.
        epsilon (float): added to the variance.
        param_attr, bias_attr (ParamAttr, optional): scale / bias attributes.
        data_layout (str): ``"NCHW"`` (channel dim 1) or ``"NHWC"`` (last).
        moving_mean_name, moving_variance_name (str, optional): names of the
            statistics. in_place, do_model_average_for_mean_and_var: accepted.
        use_global_stats (bool): normalise with the moving statistics.

    Returns:
        Tensor: the normalised input.

    Examples:
        >>> import fw
        >>> y = fw.static.nn.batch_norm(fw.to_tensor([[1.0, 2.0], [3.0, 6.0]]))
        >>> y.numpy().round(3).tolist()
        [[-1.0, -1.0], [1.0, 1.0]]
    """
    import fw
    from fw.nn import ParamAttr
    from fw.nn import initializer as I

    fname = "static.nn.batch_norm"
    s = _shape(input, fname, rank=(2, 3, 4, 5))
    if data_layout not in ("NCHW", "NHWC"):
        raise ValueError(f"{fname}: data_layout={data_layout!r} is not NCHW or NHWC")
    c = _channels(s, "NCHW" if data_layout == "NCHW" else "NHWC", fname)
    p = _prefix("batch_norm", name)
    dt = input.dtype
    scale = _param([c], dt, param_attr, f"{p}.w_0", default_initializer=I.Constant(1.0))
    bias = _param([c], dt, bias_attr, f"{p}.b_0", is_bias=True)
    mean = _param([c], dt, ParamAttr(name=moving_mean_name or f"{p}.w_1", trainable=False),
                  None, default_initializer=I.Constant(0.0))
    var = _param([c], dt, ParamAttr(name=moving_variance_name or f"{p}.w_2", trainable=False),
                 None, default_initializer=I.Constant(1.0))
    mean.stop_gradient = True
    var.stop_gradient = True
    fmt = {2: "NC", 3: "NCL", 4: "NCHW", 5: "NCDHW"}[len(s)]
    if data_layout == "NHWC" and len(s) > 2:
        fmt = {3: "NLC", 4: "NHWC", 5: "NDHWC"}[len(s)]
    out = fw.nn.functional.batch_norm(input, mean, var, weight=scale, bias=bias,
                                      training=not (is_test or use_global_stats),
                                      momentum=momentum, epsilon=epsilon, data_format=fmt,
                                      use_global_stats=use_global_stats or None)
    return _act(out, act, fname)


@_in_program
def embedding(input, size, is_sparse=False, is_distributed=False, padding_idx=None,  # noqa: A002
              param_attr=None, dtype="float32"):
    """An embedding lookup (Paddle's ``static.nn.embedding``): creates the table
    ``size = [vocab, dim]`` and returns its rows at the ids of `input`.

    Args:
        input (Tensor): int64/int32 ids. size (list): ``[vocab, dim]``.
        is_sparse, is_distributed (bool): accepted (fw's gradient is dense).
        padding_idx (int, optional): the row that reads as zeros (negative counts
            from the end). param_attr (ParamAttr, optional). dtype: the table dtype.

    Returns:
        Tensor: ``input.shape + [dim]``.

    Examples:
        >>> import fw
        >>> ids = fw.to_tensor([[0, 2]], dtype="int64")
        >>> fw.static.nn.embedding(ids, size=[4, 3]).shape
        [1, 2, 3]
    """
    import fw

    fname = "static.nn.embedding"
    _shape(input, fname)
    if len(size) != 2:
        raise ValueError(f"{fname}: size must be [vocab, dim], got {size}")
    if str(input.dtype).split(".")[-1] not in ("int32", "int64"):
        raise TypeError(f"{fname}: input ids must be int32/int64, got {input.dtype}")
    w = _param(size, dtype, param_attr, f"{_prefix('embedding', None)}.w_0")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += size[0]
    return fw.nn.functional.embedding(input, w, padding_idx=padding_idx, sparse=is_sparse)


def sparse_embedding(input, size, padding_idx=None, is_test=False, entry=None,  # noqa: A002
                     table_class="MemorySparseTable", param_attr=None, dtype="float32",
                     slot=None):
    """Paddle's ``static.nn.sparse_embedding`` is the parameter-server embedding
    (a table kept on PS servers). fw's parameter-server tables are dygraph layers:
    `fw.distributed.ps.SparseEmbedding` takes this function's arguments; a table in
    a static program is not supported, so this raises, naming that layer.

    Args:
        input (Variable): the ids.
        size (list[int]): ``[vocabulary, dim]``.
        padding_idx (int, optional): the id whose row is zeros. Default: None.
        is_test (bool, optional): inference mode. Default: False.
        entry (optional): the feature-admission rule. Default: None.
        table_class (str, optional): the PS table kind. Default: "MemorySparseTable".
        param_attr (ParamAttr, optional): the table's attributes. Default: None.
        dtype (str, optional): the dtype. Default: "float32".
        slot (int, optional): the feature slot. Default: None.

    Returns:
        None: it always raises NotImplementedError.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.static.nn.sparse_embedding(fw.to_tensor([1]), [10, 4])
        ... except NotImplementedError as e:
        ...     print("fw.distributed.ps" in str(e))
        True
    """
    raise NotImplementedError(
        "static.nn.sparse_embedding: parameter-server tables in static programs are not "
        "supported by fw; use the layer fw.distributed.ps.SparseEmbedding(size, padding_idx, "
        "is_test, entry, table_class, param_attr, dtype) in dygraph code, or "
        "fw.static.nn.embedding for a local table")


@_in_program
def group_norm(input, groups, epsilon=1e-05, param_attr=None, bias_attr=None, act=None,  # noqa: A002
               data_layout="NCHW", name=None):
    """Group normalisation (Paddle's ``static.nn.group_norm``): scale (ones) and
    bias (zeros) of the channel dim.

    Args:
        input (Tensor): ``[N, C, *]``. groups (int): divides C. epsilon (float).
        param_attr, bias_attr (ParamAttr|False, optional). act (str, optional).
        data_layout (str): ``"NCHW"`` or ``"NHWC"``. name (str, optional).

    Returns:
        Tensor: same shape as `input`.

    Examples:
        >>> import fw
        >>> fw.static.nn.group_norm(fw.rand([2, 4, 3, 3]), groups=2).shape
        [2, 4, 3, 3]
    """
    import fw
    from fw.nn import initializer as I

    fname = "static.nn.group_norm"
    s = _shape(input, fname, rank=(3, 4, 5))
    c = _channels(s, data_layout, fname)
    if c % groups:
        raise ValueError(f"{fname}: channels ({c}) must be divisible by groups ({groups})")
    p = _prefix("group_norm", name)
    w = _param([c], input.dtype, param_attr, f"{p}.w_0", default_initializer=I.Constant(1.0))
    b = _param([c], input.dtype, bias_attr, f"{p}.b_0", is_bias=True)
    fmt = {3: "NCL", 4: "NCHW", 5: "NCDHW"}[len(s)] if data_layout == "NCHW" else \
        {3: "NLC", 4: "NHWC", 5: "NDHWC"}[len(s)]
    out = fw.nn.functional.group_norm(input, groups, epsilon=epsilon, weight=w, bias=b,
                                      data_format=fmt)
    return _act(out, act, fname)


@_in_program
def instance_norm(input, epsilon=1e-05, param_attr=None, bias_attr=None, name=None):  # noqa: A002
    """Instance normalisation (Paddle's ``static.nn.instance_norm``) of NC* input,
    with a per-channel scale (ones) and bias (zeros).

    Args:
        input (Tensor): ``[N, C]`` or ``[N, C, *]``. epsilon (float).
        param_attr, bias_attr (ParamAttr|False, optional). name (str, optional).

    Returns:
        Tensor: same shape as `input`.

    Examples:
        >>> import fw
        >>> fw.static.nn.instance_norm(fw.rand([2, 3, 4, 4])).shape
        [2, 3, 4, 4]
    """
    import fw
    from fw.nn import initializer as I

    fname = "static.nn.instance_norm"
    s = _shape(input, fname, rank=(2, 3, 4, 5))
    c = _channels(s, "NCHW", fname)
    p = _prefix("instance_norm", name)
    w = _param([c], input.dtype, param_attr, f"{p}.w_0", default_initializer=I.Constant(1.0))
    b = _param([c], input.dtype, bias_attr, f"{p}.b_0", is_bias=True)
    if len(s) == 2:
        # [N, C]: every (sample, channel) is normalised alone (to 0), then scaled and
        # shifted: Paddle's result, computed as [N, C, 1]
        y = fw.nn.functional.instance_norm(fw.unsqueeze(input, -1), weight=w, bias=b,
                                           eps=epsilon, data_format="NCL")
        return fw.squeeze(y, -1)
    fmt = {3: "NCL", 4: "NCHW", 5: "NCDHW"}[len(s)]
    return fw.nn.functional.instance_norm(input, weight=w, bias=b, eps=epsilon,
                                          data_format=fmt)


@_in_program
def layer_norm(input, scale=True, shift=True, begin_norm_axis=1, epsilon=1e-05,  # noqa: A002
               param_attr=None, bias_attr=None, act=None, name=None):
    """Layer normalisation over the dims from `begin_norm_axis` on (Paddle's
    ``static.nn.layer_norm``); the scale (ones) and bias (zeros) are flat,
    ``[prod(input.shape[begin_norm_axis:])]``, as in Paddle.

    Args:
        input (Tensor). scale, shift (bool): create the scale / bias.
        begin_norm_axis (int): the first normalised dim. epsilon (float).
        param_attr, bias_attr (ParamAttr, optional). act (str, optional).

    Returns:
        Tensor: same shape as `input`.

    Examples:
        >>> import fw
        >>> y = fw.static.nn.layer_norm(fw.to_tensor([[1.0, 3.0]]))
        >>> y.numpy().round(3).tolist()
        [[-1.0, 1.0]]
    """
    import fw
    from fw.nn import initializer as I

    fname = "static.nn.layer_norm"
    s = _shape(input, fname)
    if not 0 < begin_norm_axis < len(s) if len(s) > 1 else begin_norm_axis != 0:
        raise ValueError(f"{fname}: begin_norm_axis={begin_norm_axis} does not fit an input of "
                         f"shape {s}")
    norm = s[begin_norm_axis:]
    if any(d < 0 for d in norm):
        raise ValueError(f"{fname}: the normalised dims {norm} must be known")
    n = int(np.prod(norm))
    p = _prefix("layer_norm", name)
    w = _param([n], input.dtype, param_attr, f"{p}.w_0",
               default_initializer=I.Constant(1.0)) if scale else None
    b = _param([n], input.dtype, bias_attr, f"{p}.b_0", is_bias=True) if shift else None
    wr = fw.reshape(w, norm) if w is not None else None
    br = fw.reshape(b, norm) if b is not None else None
    out = fw.nn.functional.layer_norm(input, norm, weight=wr, bias=br, epsilon=epsilon)
    return _act(out, act, fname)


@_in_program
def prelu(x, mode, param_attr=None, data_format="NCHW", name=None):
    """Parametric ReLU (Paddle's ``static.nn.prelu``): ``max(0, x) + alpha *
    min(0, x)`` with alpha (initialised 0.25) of shape ``[1]`` (``mode="all"``),
    one per channel (``"channel"``) or one per element of a sample (``"element"``).

    Args:
        x (Tensor). mode (str): ``"all"``, ``"channel"`` or ``"element"``.
        param_attr (ParamAttr, optional). data_format (str): for ``"channel"``.
        name (str, optional).

    Returns:
        Tensor: same shape as `x`.

    Examples:
        >>> import fw
        >>> fw.static.nn.prelu(fw.to_tensor([[-4.0, 2.0]]), "all").numpy().tolist()
        [[-1.0, 2.0]]
    """
    import fw
    from fw.nn import initializer as I

    fname = "static.nn.prelu"
    s = _shape(x, fname)
    p = _prefix("prelu", name)
    if mode == "all":
        a = _param([1], x.dtype, param_attr, f"{p}.w_0", default_initializer=I.Constant(0.25))
        return fw.nn.functional.prelu(x, a)
    if mode == "channel":
        if len(s) < 2:
            raise ValueError(f"{fname}: mode='channel' needs an input of rank >= 2, got {s}")
        c = _channels(s, data_format, fname)
        a = _param([c], x.dtype, param_attr, f"{p}.w_0", default_initializer=I.Constant(0.25))
        return fw.nn.functional.prelu(x, a, data_format=data_format)
    if mode == "element":
        if any(d < 0 for d in s[1:]):
            raise ValueError(f"{fname}: mode='element' needs known non-batch dims, got {s}")
        a = _param(s[1:], x.dtype, param_attr, f"{p}.w_0", default_initializer=I.Constant(0.25))
        return fw.where(x > 0, x, x * a)
    raise ValueError(f"{fname}: mode must be 'all', 'channel' or 'element', got {mode!r}")


@_in_program
def bilinear_tensor_product(x, y, size, act=None, name=None, param_attr=None, bias_attr=None):
    """``out[:, i] = x @ W[i] @ y^T + b[i]`` (Paddle's
    ``static.nn.bilinear_tensor_product``): W is ``[size, dx, dy]``, b ``[1, size]``.

    Args:
        x (Tensor): ``[N, dx]``. y (Tensor): ``[N, dy]``. size (int): outputs.
        act (str, optional). name (str, optional).
        param_attr, bias_attr (ParamAttr|False, optional).

    Returns:
        Tensor: ``[N, size]``.

    Examples:
        >>> import fw
        >>> fw.static.nn.bilinear_tensor_product(fw.ones([2, 3]), fw.ones([2, 4]), 5).shape
        [2, 5]
    """
    import fw

    fname = "static.nn.bilinear_tensor_product"
    sx = _shape(x, fname, "x", rank=2)
    sy = _shape(y, fname, "y", rank=2)
    p = _prefix("bilinear_tensor_product", name)
    w = _param([size, sx[1], sy[1]], x.dtype, param_attr, f"{p}.w_0")
    b = _param([1, size], x.dtype, bias_attr, f"{p}.b_0", is_bias=True)
    out = fw.nn.functional.bilinear(x, y, w, b)
    return _act(out, act, fname)


@_in_program
def deform_conv2d(x, offset, mask, num_filters, filter_size, stride=1, padding=0, dilation=1,
                  groups=1, deformable_groups=1, im2col_step=1, weight_attr=None,
                  bias_attr=None, name=None):
    """Deformable convolution v1/v2 (Paddle's ``static.nn.deform_conv2d``; Dai et al.
    2017, Zhu et al. 2019): creates the filter ``[num_filters, C/groups, kh, kw]``
    (``.w_0``) and bias ``[num_filters]`` (``.b_0``). Each kernel tap reads `x`
    bilinearly at its position moved by `offset` (zero outside the image), scaled
    by `mask` (v2; ``mask=None``: v1); the taps are then combined with the filter.
    Built from `grid_sample` and matmul, so it also works in a static program.

    Args:
        x (Tensor): ``[N, C, H, W]`` (H, W known). offset (Tensor):
            ``[N, 2*dg*kh*kw, Ho, Wo]``, (dy, dx) per tap. mask (Tensor|None):
            ``[N, dg*kh*kw, Ho, Wo]``. num_filters (int). filter_size (int|list).
        stride, padding, dilation (int|list). groups (int). deformable_groups (int):
            dg, channel groups sharing one offset field. im2col_step (int): accepted.
        weight_attr, bias_attr (ParamAttr|False, optional). name (str, optional).

    Returns:
        Tensor: ``[N, num_filters, Ho, Wo]``.

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 2, 4, 4])
        >>> off = fw.zeros([1, 8, 3, 3])
        >>> fw.static.nn.deform_conv2d(x, off, None, num_filters=3, filter_size=2).shape
        [1, 3, 3, 3]
    """
    import fw
    from fw.nn import initializer as I

    fname = "static.nn.deform_conv2d"
    s = _shape(x, fname, "x", rank=4)
    ks = _ntuple(filter_size, 2, fname, "filter_size")
    st = _ntuple(stride, 2, fname, "stride")
    pd = _ntuple(padding, 2, fname, "padding")
    dl = _ntuple(dilation, 2, fname, "dilation")
    c, h, w_ = s[1], s[2], s[3]
    if c < 0 or h < 0 or w_ < 0:
        raise ValueError(f"{fname}: the channel and spatial dims of x must be known, got {s}")
    if c % groups or num_filters % groups or c % deformable_groups:
        raise ValueError(f"{fname}: channels ({c}) and num_filters ({num_filters}) must be "
                         f"divisible by groups ({groups}); channels by deformable_groups "
                         f"({deformable_groups})")
    ho = (h + 2 * pd[0] - (dl[0] * (ks[0] - 1) + 1)) // st[0] + 1
    wo = (w_ + 2 * pd[1] - (dl[1] * (ks[1] - 1) + 1)) // st[1] + 1
    kk = ks[0] * ks[1]
    dg = int(deformable_groups)
    so = _shape(offset, fname, "offset", rank=4)
    if so[1:] != [2 * dg * kk, ho, wo]:
        raise ValueError(f"{fname}: offset must be [N, {2 * dg * kk}, {ho}, {wo}], got {so}")
    if mask is not None:
        sm = _shape(mask, fname, "mask", rank=4)
        if sm[1:] != [dg * kk, ho, wo]:
            raise ValueError(f"{fname}: mask must be [N, {dg * kk}, {ho}, {wo}], got {sm}")
    p = _prefix("deform_conv2d", name)
    std = (2.0 / float(kk * (c // groups))) ** 0.5
    weight = _param([num_filters, c // groups] + ks, x.dtype, weight_attr, f"{p}.w_0",
                    default_initializer=I.Normal(0.0, std))
    bias = _param([num_filters], x.dtype, bias_attr, f"{p}.b_0", is_bias=True)
    # the undeformed sampling positions of every tap, [kk, Ho, Wo] (pixel units)
    oy = np.arange(ho) * st[0] - pd[0]
    ox = np.arange(wo) * st[1] - pd[1]
    ty, tx = np.meshgrid(np.arange(ks[0]) * dl[0], np.arange(ks[1]) * dl[1], indexing="ij")
    base_y = (ty.reshape(-1, 1, 1) + oy.reshape(1, -1, 1)).astype("float32")
    base_x = (tx.reshape(-1, 1, 1) + ox.reshape(1, 1, -1)).astype("float32")
    base_y = np.broadcast_to(base_y, (kk, ho, wo)).copy()
    base_x = np.broadcast_to(base_x, (kk, ho, wo)).copy()
    cg = c // dg
    cols = []  # per deformable group: [N, cg, kk, Ho*Wo]
    off = fw.reshape(offset, [-1, dg, kk, 2, ho, wo])
    for g in range(dg):
        xg = x[:, g * cg:(g + 1) * cg]
        py = fw.to_tensor(base_y) + off[:, g, :, 0]  # [N, kk, Ho, Wo]
        px = fw.to_tensor(base_x) + off[:, g, :, 1]
        # align_corners=True maps pixel i to -1 + 2 i / (size - 1)
        gy = py * (2.0 / max(h - 1, 1)) - 1.0
        gx = px * (2.0 / max(w_ - 1, 1)) - 1.0
        grid = fw.stack([gx, gy], axis=-1)  # [N, kk, Ho, Wo, 2]
        grid = fw.reshape(grid, [-1, kk * ho, wo, 2])
        sampled = fw.nn.functional.grid_sample(xg.astype("float32"), grid, mode="bilinear",
                                               padding_mode="zeros", align_corners=True)
        sampled = fw.reshape(sampled, [-1, cg, kk, ho * wo])
        if mask is not None:
            mg = fw.reshape(mask[:, g * kk:(g + 1) * kk], [-1, 1, kk, ho * wo])
            sampled = sampled * mg.astype("float32")
        cols.append(sampled)
    col = fw.concat(cols, axis=1) if dg > 1 else cols[0]  # [N, C, kk, L]
    cpg, opg = c // groups, num_filters // groups
    outs = []
    for g in range(groups):
        cg_col = fw.reshape(col[:, g * cpg:(g + 1) * cpg], [-1, cpg * kk, ho * wo])
        wg = fw.reshape(weight[g * opg:(g + 1) * opg], [opg, cpg * kk]).astype("float32")
        outs.append(fw.matmul(wg, cg_col))  # [N, opg, L]
    out = fw.concat(outs, axis=1) if groups > 1 else outs[0]
    out = fw.reshape(out, [-1, num_filters, ho, wo]).astype(x.dtype)
    if bias is not None:
        out = out + fw.reshape(bias, [1, num_filters, 1, 1])
    return out

@_in_program
def row_conv(input, future_context_size, param_attr=None, act=None):  # noqa: A002
    """Lookahead row convolution (Paddle's ``static.nn.row_conv``, from Deep
    Speech 2): ``out[:, t] = sum_{j=0..k} x[:, t+j] * W[j]`` with W
    ``[future_context_size + 1, D]``, zero past the end of the sequence. fw takes
    padded ``[N, T, D]`` batches (no LoD).

    Args:
        input (Tensor): ``[N, T, D]``. future_context_size (int): k.
        param_attr (ParamAttr, optional). act (str, optional).

    Returns:
        Tensor: ``[N, T, D]``.

    Examples:
        >>> import fw
        >>> fw.static.nn.row_conv(fw.ones([2, 5, 3]), future_context_size=2).shape
        [2, 5, 3]
    """
    import fw

    fname = "static.nn.row_conv"
    s = _shape(input, fname, rank=3)
    if s[2] < 0:
        raise ValueError(f"{fname}: the feature dim of the input (shape {s}) must be known")
    k = int(future_context_size)
    if k < 0:
        raise ValueError(f"{fname}: future_context_size must be >= 0, got {k}")
    w = _param([k + 1, s[2]], input.dtype, param_attr, f"{_prefix('row_conv', None)}.w_0")
    xp = fw.nn.functional.pad(input, [0, k], mode="constant", value=0.0, data_format="NLC")
    t = s[1]
    if t < 0:
        raise ValueError(f"{fname}: the time dim must be known in fw (shape {s})")
    out = None
    for j in range(k + 1):
        term = xp[:, j:j + t, :] * w[j]
        out = term if out is None else out + term
    return _act(out, act, fname)


@_in_program
def spectral_norm(weight, dim=0, power_iters=1, eps=1e-12, name=None):
    """`weight` divided by its largest singular value, estimated by `power_iters`
    power iterations (Paddle's ``static.nn.spectral_norm``). `weight` is seen as a
    matrix ``[weight.shape[dim], rest]``; the iteration vectors u ``[h]`` and v
    ``[w]`` are created Normal(0, 1) initialised, as Paddle does.

    Args:
        weight (Tensor). dim (int): the row dim. power_iters (int). eps (float):
            added when normalising. name (str, optional).

    Returns:
        Tensor: same shape as `weight`.

    Examples:
        >>> import fw
        >>> w = fw.to_tensor([[3.0, 0.0], [0.0, 1.0]])
        >>> y = fw.static.nn.spectral_norm(w, power_iters=20)
        >>> y.numpy().astype("float64").round(3).tolist()
        [[1.0, 0.0], [0.0, 0.333]]
    """
    import fw
    from fw.nn import ParamAttr
    from fw.nn import initializer as I

    fname = "static.nn.spectral_norm"
    s = _shape(weight, fname, "weight")
    if not 0 <= dim < len(s):
        raise ValueError(f"{fname}: dim={dim} is out of range for shape {s}")
    if any(d < 0 for d in s):
        raise ValueError(f"{fname}: the weight's shape {s} must be known")
    h = s[dim]
    wd = int(np.prod(s)) // h
    p = _prefix("spectral_norm", name)
    u = _param([h], weight.dtype, ParamAttr(name=f"{p}.w_0", trainable=False), None,
               default_initializer=I.Normal(0.0, 1.0))
    v = _param([wd], weight.dtype, ParamAttr(name=f"{p}.w_1", trainable=False), None,
               default_initializer=I.Normal(0.0, 1.0))
    perm = [dim] + [i for i in range(len(s)) if i != dim]
    mat = fw.reshape(fw.transpose(weight, perm) if dim else weight, [h, wd])
    uu, vv = u, v
    for _ in range(int(power_iters)):
        vv = fw.matmul(uu, mat)
        vv = vv / (fw.sqrt(fw.sum(vv * vv)) + eps)
        uu = fw.matmul(mat, vv)
        uu = uu / (fw.sqrt(fw.sum(uu * uu)) + eps)
    sigma = fw.sum(uu * fw.matmul(mat, vv))
    return weight / sigma


@_in_program
def nce(input, label, num_total_classes, sample_weight=None, param_attr=None,  # noqa: A002
        bias_attr=None, num_neg_samples=None, name=None, sampler="uniform", custom_dist=None,
        seed=0, is_sparse=False):
    """Noise-contrastive estimation loss (Paddle's ``static.nn.nce``; Gutmann and
    Hyvärinen 2010). Creates the class weights ``[num_total_classes, dim]`` and bias
    ``[num_total_classes, 1]``; each row's `num_neg_samples` negative classes are
    drawn from `sampler` (``"uniform"``, ``"log_uniform"`` (Zipfian) or
    ``"custom_dist"``, a probability per class), drawn anew on every run. With
    ``o = sigmoid(w_c · x + b_c)`` and ``B = num_neg_samples * q(c)``, a true class
    costs ``-log(o / (o + B))`` and a sampled one ``-log(B / (o + B))`` (the terms of
    Paddle's nce kernel); the result is their (sample-weighted) sum divided by
    ``num_neg_samples + 1``.

    fw draws the negatives with its own random stream (Paddle's `seed` and alias
    sampler give other draws from the same distribution), so only a deterministic
    `custom_dist` reproduces Paddle's values exactly.

    Args:
        input (Tensor): float ``[N, dim]``. label (Tensor): int64
            ``[N, num_true]``. num_total_classes (int). sample_weight (Tensor,
            optional): ``[N, 1]`` per-row weights. param_attr, bias_attr (ParamAttr|
            False, optional). num_neg_samples (int, optional): default 10.
        name (str, optional). sampler (str). custom_dist (list, optional): class
            probabilities for ``"custom_dist"``. seed (int): accepted.
        is_sparse (bool): accepted (the gradient is dense).

    Returns:
        Tensor: ``[N, 1]`` costs.

    Examples:
        >>> import fw
        >>> x = fw.rand([4, 8])
        >>> y = fw.to_tensor([[1], [0], [3], [2]], dtype="int64")
        >>> fw.static.nn.nce(x, y, num_total_classes=5, num_neg_samples=3).shape
        [4, 1]
    """
    import fw

    fname = "static.nn.nce"
    s = _shape(input, fname, rank=2)
    ls = _shape(label, fname, "label", rank=2)
    if str(label.dtype).split(".")[-1] != "int64":
        raise TypeError(f"{fname}: label must be int64, got {label.dtype}")
    if str(input.dtype).split(".")[-1] not in ("float32", "float64"):
        raise TypeError(f"{fname}: input must be float32/float64, got {input.dtype}")
    if s[1] < 0 or ls[1] < 0:
        raise ValueError(f"{fname}: the feature and label dims must be known (input {s}, "
                         f"label {ls})")
    n_cls = int(num_total_classes)
    k = 10 if num_neg_samples is None else int(num_neg_samples)
    if k < 1:
        raise ValueError(f"{fname}: num_neg_samples must be >= 1, got {k}")
    if sampler == "uniform":
        q = np.full([n_cls], 1.0 / n_cls)
    elif sampler == "log_uniform":
        c = np.arange(n_cls, dtype=np.float64)
        q = np.log((c + 2.0) / (c + 1.0)) / np.log(n_cls + 1.0)
    elif sampler == "custom_dist":
        if custom_dist is None or len(custom_dist) != n_cls:
            raise ValueError(f"{fname}: sampler='custom_dist' needs custom_dist with "
                             f"{n_cls} probabilities")
        q = np.asarray(custom_dist, dtype=np.float64)
        if (q < 0).any() or abs(q.sum() - 1.0) > 1e-3:
            raise ValueError(f"{fname}: custom_dist must be probabilities summing to 1")
    else:
        raise ValueError(f"{fname}: sampler must be 'uniform', 'log_uniform' or "
                         f"'custom_dist', got {sampler!r}")
    p = _prefix("nce", name)
    dt = input.dtype
    w = _param([n_cls, s[1]], dt, param_attr, f"{p}.w_0")
    b = _param([n_cls, 1], dt, bias_attr, f"{p}.b_0", is_bias=True)
    # negatives by inverse CDF of q on fresh uniforms (a random op of the program)
    cdf = np.cumsum(q)
    cdf[-1] = 1.0 + 1e-6
    # [N, k] uniforms; N may be dynamic, so fill a zeros tensor of that shape in place
    u = fw.uniform_(fw.zeros_like(input[:, 0:1], dtype="float32") + fw.zeros([1, k]), 0.0, 1.0)
    neg = fw.searchsorted(fw.to_tensor(cdf.astype("float32")), u, right=True)
    neg = fw.clip(neg, 0, n_cls - 1).astype("int64")
    labels = fw.concat([label, neg], axis=1)  # [N, num_true + k]
    flat = fw.reshape(labels, [-1])
    wl = fw.reshape(fw.gather(w, flat), [-1, ls[1] + k, s[1]])
    logit = fw.sum(wl * fw.unsqueeze(input, 1), axis=-1)
    if b is not None:
        logit = logit + fw.reshape(fw.gather(b, flat), [-1, ls[1] + k])
    o = fw.nn.functional.sigmoid(logit)
    bq = fw.gather(fw.to_tensor((q * k).astype(str(dt).split(".")[-1])), flat)
    bq = fw.reshape(bq, [-1, ls[1] + k])
    true_cost = -fw.log(o[:, :ls[1]] / (o[:, :ls[1]] + bq[:, :ls[1]]))
    neg_cost = -fw.log(bq[:, ls[1]:] / (o[:, ls[1]:] + bq[:, ls[1]:]))
    cost = fw.sum(true_cost, axis=1, keepdim=True) + fw.sum(neg_cost, axis=1, keepdim=True)
    if sample_weight is not None:
        cost = cost * fw.reshape(sample_weight, [-1, 1]).astype(dt)
    return cost / float(k + 1)
