"""Paddle 3.x's ``ConvParallel``: spatial parallelism of a `Conv2D` over the mesh's
"mp" axis, the input split along its width.

fw's conv SPMD rule splits batch and channels only, so the plan runs the
convolution itself on each rank's width block (`local_map`, whose gradient sum
makes the replicated weight's gradient whole):

- no width padding, stride = kernel width: the windows do not overlap, each block
  is convolved alone;
- "same" width padding (2 * padding = kernel width - 1), stride 1: each rank first
  takes a halo of ``padding`` columns from each neighbour (one all-gather of the
  edge strips; zeros at the ends are the padding), then convolves without width
  padding. The halo's backward sends the edge gradients back to their owners.

Other configurations (dilation, strides that overlap windows, other paddings, a
width smaller than the halo) are left unsharded, with a warning, as Paddle leaves
them alone."""

from __future__ import annotations

import warnings

import numpy as np

from fw.autograd import PyLayer
from fw.core.tensor import wrap
from fw.distributed import _fleet_comm as fcomm
from fw.distributed.auto_parallel import _comm
from fw.distributed.auto_parallel._layout import balanced
from fw.distributed.auto_parallel.intermediate._util import as_dist, axis_index
from fw.distributed.auto_parallel.intermediate.local_map import local_map
from fw.distributed.auto_parallel.intermediate.tensor_parallel import PlanBase
from fw.distributed.auto_parallel.placement import Replicate, Shard

__all__ = ["ConvParallel"]


def _take(a, d, start, stop):
    idx = [slice(None)] * a.ndim
    idx[d] = slice(start, stop)
    return a[tuple(idx)]


class _Halo(PyLayer):
    """[left halo | block | right halo] along dim d, `p` columns from each neighbour
    of the mesh-axis group (zeros past the ends)."""

    @staticmethod
    def forward(ctx, x, d, p, c, n, g):
        a = x._data
        ctx.args = (d, p, c, n, g, a.shape[d])
        edges = np.ascontiguousarray(np.concatenate([_take(a, d, 0, p),
                                                     _take(a, d, a.shape[d] - p, a.shape[d])],
                                                    axis=d))
        got = fcomm.all_gather(edges, group=g)
        zero = np.zeros_like(_take(a, d, 0, p))
        left = _take(got[c - 1], d, p, 2 * p) if c > 0 else zero
        right = _take(got[c + 1], d, 0, p) if c < n - 1 else zero
        return wrap(np.concatenate([left, a, right], axis=d))

    @staticmethod
    def backward(ctx, dy):
        d, p, c, n, g, w = ctx.args
        a = dy._data
        dx = np.array(_take(a, d, p, p + w))
        # my left-halo gradient belongs to rank c-1's last columns, my right-halo
        # gradient to rank c+1's first columns
        edges = np.ascontiguousarray(np.concatenate([_take(a, d, 0, p),
                                                     _take(a, d, p + w, 2 * p + w)], axis=d))
        got = fcomm.all_gather(edges, group=g)
        if c > 0:
            _take(dx, d, 0, p)[...] += _take(got[c - 1], d, p, 2 * p)
        if c < n - 1:
            _take(dx, d, w - p, w)[...] += _take(got[c + 1], d, 0, p)
        return wrap(dx)


def _pads(padding):
    """(pad_h, pad_w) of a symmetric numeric padding, else None."""
    if isinstance(padding, int):
        return padding, padding
    if isinstance(padding, (list, tuple)) and len(padding) == 2 and \
            all(isinstance(v, int) for v in padding):
        return int(padding[0]), int(padding[1])
    if isinstance(padding, (list, tuple)) and len(padding) == 4 and \
            all(isinstance(v, int) for v in padding) and padding[0] == padding[1] \
            and padding[2] == padding[3]:
        return int(padding[0]), int(padding[2])
    return None


class ConvParallel(PlanBase):
    """Split a `Conv2D`'s input along its width over the mesh's "mp" axis and
    convolve each block on its rank (with a halo exchange for "same" padding). The
    output stays split along its width; weights stay whole.

    Supported (else the layer runs unsharded, with a warning): dilation 1 along the
    width, zero padding mode, and either no width padding with stride = kernel width
    and every rank's block a multiple of the stride, or stride 1 with width padding
    (kernel width - 1) / 2 and blocks at least that wide.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
            >>> conv = fw.nn.Conv2D(2, 4, 3, padding=1)
            >>> dist.ConvParallel().apply(conv, mesh, [])
            >>> out = conv(fw.ones([1, 2, 5, 8]))
            >>> out.shape, out.placements
            ([1, 4, 5, 8], [Shard(dim=3)])
    """

    def apply(self, layer, process_mesh, shard_param_list):
        """Replace the layer's forward by the width-parallel one.

        Args:
            layer (Layer): a `Conv2D`.
            process_mesh (ProcessMesh): a mesh with an "mp" axis.
            shard_param_list (list[str]): unused.

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw, fw.distributed as dist
                >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
                >>> dist.ConvParallel().apply(fw.nn.Conv2D(1, 1, 2, stride=2), mesh, [])
        """
        from fw.nn import Conv2D

        who = "ConvParallel"
        if not isinstance(layer, Conv2D):
            raise TypeError(f"{who}: expected a fw.nn.Conv2D, got {type(layer).__name__}")
        mp = axis_index(process_mesh, "mp", who)
        original = layer.forward
        warned = []

        def unsupported(why):
            if not warned:
                warned.append(why)
                warnings.warn(f"{who}: {type(layer).__name__} runs unsharded: {why}",
                              stacklevel=3)

        def forward(x):
            from fw.distributed.auto_parallel.api import reshard
            from fw.nn import functional as F

            fmt = layer._data_format
            wd = 3 if fmt == "NCHW" else 2
            kw, sw, dw = layer._kernel_size[1], layer._stride[1], layer._dilation[1]
            pads = _pads(layer._padding) if layer._padding_mode == "zeros" else None
            n = process_mesh.shape[mp]
            if pads is None or dw != 1:
                unsupported("only zero padding given as numbers and dilation 1 along the "
                            "width are supported")
                return original(x)
            ph, pw = pads
            x = as_dist(x, process_mesh, who)
            sizes = balanced(x.shape[wd], n)
            if pw == 0 and not (sw == kw and all(s % sw == 0 for s in sizes)):
                unsupported(f"without width padding the stride ({sw}) must equal the kernel "
                            f"width ({kw}) and divide every block {sizes}")
                return original(x)
            if pw > 0 and not (sw == 1 and 2 * pw == kw - 1 and min(sizes) >= pw):
                unsupported(f"with width padding {pw} the stride must be 1, the padding "
                            f"(kernel width - 1) / 2 and every block {sizes} at least {pw} "
                            f"wide")
                return original(x)
            pl = x.placements
            others = [p for a, p in enumerate(pl) if a != mp]
            if not all(isinstance(p, Replicate) or p == Shard(0) for p in others):
                unsupported(f"the input's other placements {pl} must be Replicate or Shard(0)")
                return original(x)
            params = [as_dist(t, process_mesh, who) for t in (layer.weight, layer.bias)
                      if t is not None]
            if any(not all(isinstance(p, Replicate) for p in t.placements) for t in params):
                unsupported("the weight and bias must be replicated")
                return original(x)
            pl[mp] = Shard(wd)
            x = reshard(x, process_mesh, pl)
            c = _comm.my_coord(process_mesh)[mp]
            g = _comm.axis_group(process_mesh, mp)

            def local(xl, w, b=None):
                if pw > 0 and n > 1:
                    xl = _Halo.apply(xl, wd, pw, c, n, g)
                pad = [ph, pw] if n == 1 else [ph, 0]
                return F.conv2d(xl, w, b, stride=layer._stride, padding=pad,
                                dilation=layer._dilation, groups=layer._groups,
                                data_format=fmt)

            return local_map(local, [pl])(x, *params)

        layer.forward = forward
