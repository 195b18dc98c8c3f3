"""Normalization functions of ``paddle.nn.functional`` on fw-core's norm ops, which
return their statistics as extra outputs; only ``out`` reaches the user.

`batch_norm` in training mode writes the updated running statistics (the op's
``mean_out``/``variance_out`` outputs) back into ``running_mean``/``running_var``
in place, as Paddle does. While a program is being built the values cannot be
written; they are recorded as state updates of the program instead
(`Builder.record_update`, see fw.core.ir.builder): the program writes them after
each run, later reads in the same trace see the new values, and inside a
``cond``/``while`` block fw.jit carries them out of the op.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.core.errors import InvalidArgumentError
from fw.core.internal import bump_version
from fw.core.ir.core import Value, current_builder
from fw.core.tensor import Tensor, wrap
from fw.nn.functional._helpers import channel_last, check_param_dtype, op

__all__ = ["batch_norm", "layer_norm", "instance_norm", "group_norm", "local_response_norm",
           "normalize", "rms_norm", "assign_buffer"]

_ALL_FORMATS = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")


def assign_buffer(buf, value) -> None:
    """Overwrite buffer `buf` with `value` outside autograd (eager), or record the
    update in the program being built (see the module docstring)."""
    if isinstance(value, Value) or type(buf) is Value:
        b = current_builder()
        if b is not None and isinstance(buf, Tensor):
            b.record_update(buf, value)
        return
    a = buf._data
    v = value._data
    if v.dtype != a.dtype:
        v = v.astype(a.dtype)
    a[...] = v
    bump_version(buf)


def _snapshot(t):
    return wrap(t._data.copy()) if isinstance(t, Tensor) else t


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.9, epsilon=1e-05, data_format="NCHW", use_global_stats=None,
               name=None):
    """Batch normalization: normalise every channel over the batch (and spatial) axes,
    then scale and shift: ``y = (x - mean) / sqrt(var + epsilon) * weight + bias``.

    In training mode (unless ``use_global_stats``) the batch statistics are used and
    ``running_mean``/``running_var`` are updated in place as
    ``running = momentum * running + (1 - momentum) * batch`` (note: ``momentum``
    weights the old value, the opposite of PyTorch's convention). Otherwise the running
    statistics are used and not changed. Note the default ``training=False``.

    Args:
        x (Tensor): the input ``[N, C]``, ``[N, C, L]``, ``[N, C, H, W]`` or
            ``[N, C, D, H, W]`` (or channel-last).
        running_mean (Tensor): the running mean ``[C]``, updated in training.
        running_var (Tensor): the running variance ``[C]``, updated in training.
        weight (Tensor, optional): the scale ``[C]``. Default: None.
        bias (Tensor, optional): the shift ``[C]``. Default: None.
        training (bool, optional): use and update batch statistics. Default: False.
        momentum (float, optional): the weight of the old running value. Default: 0.9.
        epsilon (float, optional): added to the variance. Default: 1e-05.
        data_format (str, optional): ``"NC"``, ``"NCL"``, ``"NCHW"``, ``"NCDHW"`` or the
            channel-last forms. Default: "NCHW".
        use_global_stats (bool, optional): always use the running statistics (True) or the
            batch statistics (False); None follows ``training``. Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the normalised input, its shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1.0], [3.0]])
        >>> rm, rv = fw.zeros([1]), fw.ones([1])
        >>> y = fw.nn.functional.batch_norm(x, rm, rv, training=True, data_format='NC')
        >>> [round(v, 4) for v in y.flatten().tolist()]
        [-1.0, 1.0]
        >>> round(rm.item(), 4), round(rv.item(), 4)
        (0.2, 1.0)
    """
    cl = channel_last(data_format, _ALL_FORMATS, "batch_norm")
    check_param_dtype("batch_norm", x, weight, low_x_ok=True)
    update = training and not use_global_stats
    rm, rv = running_mean, running_var
    if update and isinstance(rm, Tensor) and current_builder() is None:
        # the op's inputs may be saved for the backward pass; the buffers are about to be
        # overwritten, so hand it snapshots (C numbers each)
        rm, rv = _snapshot(rm), _snapshot(rv)
    out, mean_out, var_out, _, _ = op("batch_norm", [x, rm, rv, weight, bias],
                                      training=training, momentum=momentum, epsilon=epsilon,
                                      channel_last=cl, use_global_stats=use_global_stats)
    if update:
        assign_buffer(running_mean, mean_out)
        assign_buffer(running_var, var_out)
    return out


def _norm_shape(normalized_shape):
    if isinstance(normalized_shape, int):
        return [normalized_shape]
    if hasattr(normalized_shape, "tolist") and not isinstance(normalized_shape, (list, tuple)):
        normalized_shape = normalized_shape.tolist()
    return [int(s) for s in normalized_shape]


def layer_norm(x, normalized_shape, weight=None, bias=None, epsilon=1e-05, name=None):
    """Layer normalization: normalise each sample over its last
    ``len(normalized_shape)`` axes, then scale and shift:
    ``y = (x - mean) / sqrt(var + epsilon) * weight + bias``.

    Args:
        x (Tensor): the input ``[*, *normalized_shape]``.
        normalized_shape (int|list|tuple): the sizes of the trailing axes normalised.
        weight (Tensor, optional): the scale, ``prod(normalized_shape)`` elements.
            Default: None.
        bias (Tensor, optional): the shift, the same size. Default: None.
        epsilon (float, optional): added to the variance. Default: 1e-05.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the normalised input, its shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[1.0, 3.0], [2.0, 2.0]])
        >>> fw.nn.functional.layer_norm(x, 2).numpy().round(3).tolist()
        [[-1.0, 1.0], [0.0, 0.0]]
        >>> fw.nn.functional.layer_norm(fw.randn([2, 3, 4]), [3, 4]).shape
        [2, 3, 4]
    """
    ns = _norm_shape(normalized_shape)
    nd = len(x.shape)
    if len(ns) > nd or list(x.shape[nd - len(ns):]) != ns and -1 not in x.shape:
        raise InvalidArgumentError(f"layer_norm: normalized_shape {ns} must match the last "
                                   f"dimensions of x {list(x.shape)}")
    check_param_dtype("layer_norm", x, weight, low_x_ok=True)
    return op("layer_norm", [x, weight, bias], epsilon=epsilon,
              begin_norm_axis=nd - len(ns))[0]


def rms_norm(input, normalized_shape, weight=None, eps=1e-05, name=None):  # noqa: A002
    """Root-mean-square normalization over the last ``len(normalized_shape)`` axes:
    ``y = x / sqrt(mean(x ** 2) + eps) * weight``.

    Args:
        input (Tensor): the input ``[*, *normalized_shape]``.
        normalized_shape (int|list|tuple): the sizes of the trailing axes normalised.
        weight (Tensor, optional): the scale, ``normalized_shape``. Default: None.
        eps (float, optional): added to the mean square. Default: 1e-05.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the normalised input, its shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[3.0, 4.0]])
        >>> [round(v, 4) for v in fw.nn.functional.rms_norm(x, [2])[0].tolist()]
        [0.8485, 1.1314]
    """
    ns = _norm_shape(normalized_shape)
    nd = len(input.shape)
    return op("rms_norm", [input, weight, None], epsilon=1e-05 if eps is None else eps,
              begin_norm_axis=nd - len(ns))[0]


def instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.9, eps=1e-05, data_format="NCHW",
                  name=None):
    """Instance normalization: normalise every (sample, channel) pair over its spatial
    axes, then scale and shift per channel. With ``use_input_stats=False`` the given
    running statistics are used instead.

    Args:
        x (Tensor): the input ``[N, C, *spatial]`` (or channel-last).
        running_mean (Tensor, optional): ``[C]``, used when ``use_input_stats`` is False.
            Default: None.
        running_var (Tensor, optional): ``[C]``, likewise. Default: None.
        weight (Tensor, optional): the scale ``[C]``. Default: None.
        bias (Tensor, optional): the shift ``[C]``. Default: None.
        use_input_stats (bool, optional): normalise with each instance's own statistics.
            Default: True.
        momentum (float, optional): accepted for compatibility. Default: 0.9.
        eps (float, optional): added to the variance. Default: 1e-05.
        data_format (str, optional): ``"NCL"``, ``"NCHW"``, ``"NCDHW"`` or channel-last.
            Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the normalised input, its shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[1.0, 3.0], [0.0, 10.0]]])
        >>> fw.nn.functional.instance_norm(x, data_format='NCL').numpy().round(3).tolist()
        [[[-1.0, 1.0], [-1.0, 1.0]]]
    """
    cl = channel_last(data_format, _ALL_FORMATS, "instance_norm")
    check_param_dtype("instance_norm", x, weight, low_x_ok=True)
    if use_input_stats or running_mean is None:
        return op("instance_norm", [x, weight, bias], epsilon=eps, channel_last=cl)[0]
    nd = len(x.shape)
    shape = [1] * nd
    shape[nd - 1 if cl else 1] = -1
    out = (x - running_mean.reshape(shape)) * fw.rsqrt(running_var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def group_norm(x, num_groups, epsilon=1e-05, weight=None, bias=None, data_format="NCHW",
               name=None):
    """Group normalization: the channels are split into ``num_groups`` groups and each
    group of each sample is normalised over its channels and spatial axes, then scaled
    and shifted per channel.

    Args:
        x (Tensor): the input ``[N, C, *]`` (or channel-last).
        num_groups (int): the number of groups; must divide C.
        epsilon (float, optional): added to the variance. Default: 1e-05.
        weight (Tensor, optional): the scale ``[C]``. Default: None.
        bias (Tensor, optional): the shift ``[C]``. Default: None.
        data_format (str, optional): ``"NCHW"`` (any rank, channel first) or ``"NHWC"``.
            Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the normalised input, its shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[[1.0], [3.0], [5.0], [5.0]]])
        >>> fw.nn.functional.group_norm(x, 2, data_format='NCL').numpy().round(3).ravel().tolist()
        [-1.0, 1.0, 0.0, 0.0]
    """
    cl = channel_last(data_format, _ALL_FORMATS, "group_norm")
    check_param_dtype("group_norm", x, weight, low_x_ok=True)
    return op("group_norm", [x, weight, bias], num_groups=num_groups, epsilon=epsilon,
              channel_last=cl)[0]


def local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0, data_format="NCHW", name=None):
    """Local response normalization across neighbouring channels:
    ``y = x / (k + alpha / size * sum(x_j ** 2)) ** beta``, summing over the ``size``
    channels centred on each one (zero-padded at the ends).

    Args:
        x (Tensor): a 3-D to 5-D input ``[N, C, *]`` (or channel-last).
        size (int): the number of channels summed.
        alpha (float, optional): the scale. Default: 1e-4.
        beta (float, optional): the exponent. Default: 0.75.
        k (float, optional): the additive constant. Default: 1.0.
        data_format (str, optional): ``"NCL"``, ``"NCHW"``, ``"NCDHW"`` or channel-last.
            Default: "NCHW".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the normalised input, its shape.

    Examples:
        >>> import fw
        >>> x = fw.ones([1, 3, 1, 1])
        >>> y = fw.nn.functional.local_response_norm(x, size=3, alpha=3.0, beta=1.0)
        >>> [round(v, 4) for v in y.numpy().ravel().tolist()]
        [0.3333, 0.25, 0.3333]
    """
    cl = channel_last(data_format, ("NCL", "NLC", "NCHW", "NHWC", "NCDHW", "NDHWC"),
                      "local_response_norm")
    return op("local_response_norm", [x], size=size, alpha=alpha, beta=beta, k=k,
              channel_last=cl)


def normalize(x, p=2, axis=1, epsilon=1e-12, name=None):
    """Normalise ``x`` to unit p-norm along ``axis``: ``x / max(||x||_p, epsilon)``.

    Args:
        x (Tensor): the input.
        p (float, optional): the norm degree. Default: 2.
        axis (int, optional): the axis normalised. Default: 1.
        epsilon (float, optional): the lower bound of the norm. Default: 1e-12.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: the normalised input, its shape.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[3.0, 4.0], [1.0, 1.0]])
        >>> fw.nn.functional.normalize(x).numpy().round(4).tolist()
        [[0.6000000238418579, 0.800000011920929], [0.707099974155426, 0.707099974155426]]
        >>> fw.nn.functional.normalize(x, p=1, axis=1).numpy().round(4).tolist()
        [[0.428600013256073, 0.571399986743927], [0.5, 0.5]]
    """
    if isinstance(p, (np.floating, np.integer)):
        p = float(p)
    return op("normalize", [x], p=p, axis=axis, epsilon=epsilon)
