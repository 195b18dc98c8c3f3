"""Sparse 3-D convolution and max pooling (Paddle's ``paddle.sparse.nn.functional.conv3d`` /
``subm_conv3d`` and the ``Conv3D`` / ``SubmConv3D`` layers) on NDHWC COO tensors.

The "rulebook" formulation of sparse convolution (Graham & van der Maaten,
"Submanifold Sparse Convolutional Networks", 2017; spconv): for each kernel offset,
the pairs (input entry, output site) it connects are found on NumPy from the indices;
the values go through fw ops (gather the input rows, multiply by that offset's
``[C_in, C_out]`` weight, scatter-add to the output rows), so gradients reach the
input values, the weight and the bias. A regular conv outputs every site some input
reaches (sorted, as Paddle); a submanifold conv outputs exactly the input's sites.
"""

from __future__ import annotations

import itertools

import numpy as np

import fw
from fw.sparse._util import gather_rows, index_tensor, linear, scatter_rows, to_coo, unravel
from fw.sparse.tensor import SparseCooTensor

__all__ = ["conv2d", "conv3d", "max_pool3d", "subm_conv2d", "subm_conv3d"]


def _triple(v, what, fn, n=3):
    """An int or n ints -> a list of n ints (n spatial dims)."""
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    if len(v) != n or not all(isinstance(i, int) for i in v):
        raise ValueError(f"fw.sparse.nn.functional.{fn}(): `{what}` must be an int or {n} "
                         f"ints, got {v!r}")
    return v


def _rulebook(x, ksize, stride, padding, dilation, out_sp, subm):
    """Per kernel offset k: (k, input rows, output linear sites), and the sorted output
    sites (a submanifold conv's are the input's)."""
    idx = x.indices().numpy()
    nsp = len(ksize)
    batch, pos = idx[0], idx[1:1 + nsp]
    n_batch = x.shape[0]
    out_dims = [n_batch] + out_sp
    pairs = []  # per kernel offset: (flat offset, input rows, output linear sites)
    for k, off in enumerate(itertools.product(*(range(s) for s in ksize))):
        if subm:  # output site = input site; it reads input site + (off - centre) * dil
            num = pos - np.array([(off[i] - ksize[i] // 2) * dilation[i]
                                  for i in range(nsp)])[:, None]
            ok = np.ones(pos.shape[1], bool)
            o = num
        else:
            num = pos + np.array([padding[i] - off[i] * dilation[i]
                                  for i in range(nsp)])[:, None]
            st = np.array(stride)[:, None]
            ok = np.all(num % st == 0, axis=0)
            o = num // st
        ok &= np.all((o >= 0) & (o < np.array(out_sp)[:, None]), axis=0)
        rows = np.nonzero(ok)[0]
        if rows.size:
            pairs.append((k, rows, linear(np.vstack([batch[rows], o[:, rows]]), out_dims)))
    if subm:
        sites = linear(np.vstack([batch, pos]), out_dims)
        out_sites = np.unique(sites)
    else:
        out_sites = np.unique(np.concatenate([p[2] for p in pairs])) if pairs \
            else np.zeros(0, np.int64)
    return pairs, out_sites, out_dims


def _conv(x, weight, bias, stride, padding, dilation, groups, data_format, subm, fn, nsp=3):
    if not isinstance(x, SparseCooTensor) and not (hasattr(x, "is_sparse") and x.is_sparse()):
        raise TypeError(f"fw.sparse.nn.functional.{fn}(): `x` must be a sparse COO tensor, got "
                        f"{type(x).__name__}")
    x = to_coo(x)
    layout = "NDHWC" if nsp == 3 else "NHWC"
    if data_format != layout:
        raise ValueError(f"fw.sparse.nn.functional.{fn}(): only data_format='{layout}', got "
                         f"{data_format!r}")
    if groups != 1:
        raise ValueError(f"fw.sparse.nn.functional.{fn}(): only groups=1, got {groups}")
    if x.ndim != nsp + 2 or x.sparse_dim() != nsp + 1:
        raise ValueError(f"fw.sparse.nn.functional.{fn}(): x must be {layout} with "
                         f"{nsp + 1} sparse dims, got shape {x.shape}, sparse_dim "
                         f"{x.sparse_dim()}")
    if weight.ndim != nsp + 2 or weight.shape[nsp] != x.shape[-1]:
        raise ValueError(f"fw.sparse.nn.functional.{fn}(): weight must be [{nsp} kernel dims, "
                         f"C_in={x.shape[-1]}, C_out], got {list(weight.shape)}")
    stride = _triple(stride, "stride", fn, nsp)
    padding = _triple(padding, "padding", fn, nsp)
    dilation = _triple(dilation, "dilation", fn, nsp)
    ksize = list(weight.shape[:nsp])
    spatial = x.shape[1:1 + nsp]
    if subm:
        out_sp = list(spatial)
    else:
        out_sp = [(spatial[i] + 2 * padding[i] - dilation[i] * (ksize[i] - 1) - 1) // stride[i]
                  + 1 for i in range(nsp)]
        if min(out_sp) <= 0:
            raise ValueError(f"fw.sparse.nn.functional.{fn}(): the output would be empty: "
                             f"input {spatial}, kernel {ksize}, padding {padding}")
    pairs, out_sites, out_dims = _rulebook(x, ksize, stride, padding, dilation, out_sp, subm)
    c_out = weight.shape[-1]
    w = fw.reshape(weight, [-1, weight.shape[nsp], c_out])
    out = None
    for k, rows, sites in pairs:
        if subm:
            keep = np.isin(sites, out_sites)
            rows, sites = rows[keep], sites[keep]
            if rows.size == 0:
                continue
        contrib = fw.matmul(gather_rows(x.values(), rows), w[k])
        part = scatter_rows(contrib, np.searchsorted(out_sites, sites), out_sites.size)
        out = part if out is None else out + part
    if out is None:
        out = fw.zeros([out_sites.size, c_out], dtype=x.dtype)
    if bias is not None:
        out = out + bias
    # both kinds come out sorted by site (a submanifold conv's sites are the input's)
    return SparseCooTensor(index_tensor(unravel(out_sites, out_dims)), out,
                           out_dims + [c_out], True)


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           data_format="NDHWC", name=None):
    """Sparse 3-D convolution of an NDHWC COO tensor.

    Args:
        x (SparseCooTensor): ``[N, D, H, W, C_in]`` with 4 sparse dims.
        weight (Tensor): ``[kD, kH, kW, C_in, C_out]``.
        bias (Tensor, optional): ``[C_out]``. Default None.
        stride (int|list, optional): Default 1.
        padding (int|list, optional): zero padding per side. Default 0.
        dilation (int|list, optional): Default 1.
        groups (int, optional): must be 1. Default 1.
        data_format (str, optional): must be "NDHWC". Default "NDHWC".
        name (str, optional): unused.

    Returns:
        SparseCooTensor: ``[N, D', H', W', C_out]``, stored at every reached site.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0], [1], [1], [1]], [[1.0]], [1, 3, 3, 3, 1])
        >>> y = fw.sparse.nn.functional.conv3d(x, fw.ones([3, 3, 3, 1, 1]), padding=1)
        >>> y.nnz(), y.shape
        (27, [1, 3, 3, 3, 1])
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, False, "conv3d")


def subm_conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                data_format="NDHWC", key=None, name=None):
    """Submanifold sparse 3-D convolution: outputs only at the input's sites.

    Args:
        x (SparseCooTensor): ``[N, D, H, W, C_in]`` with 4 sparse dims.
        weight (Tensor): ``[kD, kH, kW, C_in, C_out]`` (odd kernel sizes).
        bias (Tensor, optional): ``[C_out]``. Default None.
        stride (int|list, optional): must be 1. Default 1.
        padding (int|list, optional): accepted for Paddle compatibility (the output
            sites are the input's). Default 0.
        dilation (int|list, optional): Default 1.
        groups (int, optional): must be 1. Default 1.
        data_format (str, optional): must be "NDHWC". Default "NDHWC".
        key (str, optional): Paddle's rulebook cache key; unused.
        name (str, optional): unused.

    Returns:
        SparseCooTensor: x's sites (sorted, coalesced), ``C_out`` values per site.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 0], [1, 1], [1, 1], [1, 2]], [[1.0], [2.0]],
        ...                                 [1, 3, 3, 3, 1])
        >>> y = fw.sparse.nn.functional.subm_conv3d(x, fw.ones([3, 3, 3, 1, 1]), padding=1)
        >>> y.values().numpy().tolist()
        [[3.0], [3.0]]
    """
    if _triple(stride, "stride", "subm_conv3d") != [1, 1, 1]:
        raise ValueError(f"fw.sparse.nn.functional.subm_conv3d(): only stride 1, got {stride}")
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, True,
                 "subm_conv3d")


def max_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NDHWC",
               name=None):
    """Sparse 3-D max pooling of an NDHWC COO tensor: each output site (every site some
    stored input reaches) takes, per channel, the maximum over the stored inputs in its
    window (absent entries do not count as zeros).

    Args:
        x (SparseCooTensor): ``[N, D, H, W, C]`` with 4 sparse dims.
        kernel_size (int|list): window size.
        stride (int|list, optional): Default: kernel_size.
        padding (int|list, optional): Default 0.
        ceil_mode (bool, optional): must be False. Default False.
        data_format (str, optional): must be "NDHWC".
        name (str, optional): unused.

    Returns:
        SparseCooTensor: the pooled tensor; gradients reach the winning input values.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 0], [0, 1], [0, 0], [0, 1]], [[1.0], [-3.0]],
        ...                                 [1, 2, 2, 2, 1])
        >>> fw.sparse.nn.functional.max_pool3d(x, 2).values().numpy().tolist()
        [[1.0]]
    """
    fn = "max_pool3d"
    if not (hasattr(x, "is_sparse") and x.is_sparse()):
        raise TypeError(f"fw.sparse.nn.functional.{fn}(): `x` must be a sparse COO tensor, got "
                        f"{type(x).__name__}")
    x = to_coo(x)
    if data_format != "NDHWC" or ceil_mode:
        raise ValueError(f"fw.sparse.nn.functional.{fn}(): only data_format='NDHWC' and "
                         f"ceil_mode=False, got {data_format!r}, {ceil_mode}")
    if x.ndim != 5 or x.sparse_dim() != 4:
        raise ValueError(f"fw.sparse.nn.functional.{fn}(): x must be [N, D, H, W, C] with 4 "
                         f"sparse dims, got shape {x.shape}")
    ksize = _triple(kernel_size, "kernel_size", fn)
    stride = ksize if stride is None else _triple(stride, "stride", fn)
    padding = _triple(padding, "padding", fn)
    spatial = x.shape[1:4]
    out_sp = [(spatial[i] + 2 * padding[i] - ksize[i]) // stride[i] + 1 for i in range(3)]
    if min(out_sp) <= 0:
        raise ValueError(f"fw.sparse.nn.functional.{fn}(): the output would be empty: input "
                         f"{spatial}, kernel {ksize}, padding {padding}")
    pairs, out_sites, out_dims = _rulebook(x, ksize, stride, padding, [1, 1, 1], out_sp, False)
    c = x.shape[4]
    if not pairs:
        return SparseCooTensor(index_tensor(np.zeros((4, 0))), fw.zeros([0, c], dtype=x.dtype),
                               out_dims + [c], True)
    rows = np.concatenate([p[1] for p in pairs])
    outs = np.searchsorted(out_sites, np.concatenate([p[2] for p in pairs]))
    # the winner of each (output site, channel) is found on NumPy; the values are then
    # gathered with an fw op, so the gradient goes to the winners only
    vals = x.values().numpy()
    best = np.full((out_sites.size, c), -np.inf)
    win = np.zeros((out_sites.size, c), np.int64)
    for ch in range(c):
        cand = vals[rows, ch]
        order = np.lexsort((-cand, outs))  # by site, largest first
        first = np.ones(order.size, bool)
        first[1:] = outs[order][1:] != outs[order][:-1]
        sel = order[first]
        best[outs[sel], ch] = cand[sel]
        win[outs[sel], ch] = rows[sel] * c + ch
    flat = fw.reshape(x.values(), [-1])
    out = fw.reshape(gather_rows(flat, win.ravel()), [out_sites.size, c])
    return SparseCooTensor(index_tensor(unravel(out_sites, out_dims)), out, out_dims + [c], True)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           data_format="NHWC", name=None):
    """Sparse 2-D convolution of an NHWC COO tensor (the 2-D case of :func:`conv3d`).

    Args:
        x (SparseCooTensor): ``[N, H, W, C_in]`` with 3 sparse dims.
        weight (Tensor): ``[kH, kW, C_in, C_out]``.
        bias (Tensor, optional): ``[C_out]``. Default None.
        stride (int|list, optional): Default 1.
        padding (int|list, optional): Default 0.
        dilation (int|list, optional): Default 1.
        groups (int, optional): must be 1. Default 1.
        data_format (str, optional): must be "NHWC". Default "NHWC".
        name (str, optional): unused.

    Returns:
        SparseCooTensor: ``[N, H', W', C_out]``.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0], [1], [1]], [[1.0]], [1, 3, 3, 1])
        >>> fw.sparse.nn.functional.conv2d(x, fw.ones([3, 3, 1, 1]), padding=1).nnz()
        9
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, False,
                 "conv2d", nsp=2)


def subm_conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                data_format="NHWC", key=None, name=None):
    """Submanifold sparse 2-D convolution (the 2-D case of :func:`subm_conv3d`).

    Args:
        x (SparseCooTensor): ``[N, H, W, C_in]`` with 3 sparse dims.
        weight (Tensor): ``[kH, kW, C_in, C_out]`` (odd kernel sizes).
        bias (Tensor, optional): ``[C_out]``. Default None.
        stride (int|list, optional): must be 1. Default 1.
        padding (int|list, optional): accepted for Paddle compatibility. Default 0.
        dilation (int|list, optional): Default 1.
        groups (int, optional): must be 1. Default 1.
        data_format (str, optional): must be "NHWC". Default "NHWC".
        key (str, optional): unused.
        name (str, optional): unused.

    Returns:
        SparseCooTensor: x's sites (sorted, coalesced), ``C_out`` values per site.

    Examples:
        >>> import fw
        >>> x = fw.sparse.sparse_coo_tensor([[0, 0], [1, 1], [1, 2]], [[1.0], [2.0]],
        ...                                 [1, 3, 3, 1])
        >>> y = fw.sparse.nn.functional.subm_conv2d(x, fw.ones([3, 3, 1, 1]), padding=1)
        >>> y.values().numpy().tolist()
        [[3.0], [3.0]]
    """
    if _triple(stride, "stride", "subm_conv2d", 2) != [1, 1]:
        raise ValueError(f"fw.sparse.nn.functional.subm_conv2d(): only stride 1, got {stride}")
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, True,
                 "subm_conv2d", nsp=2)
