"""``sequence_mask``, ``gather_tree``, ``diag_embed`` and ``temporal_shift`` of
``paddle.nn.functional``."""

from __future__ import annotations

import numpy as np

import fw
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError

__all__ = ["sequence_mask", "gather_tree", "diag_embed", "temporal_shift"]


def sequence_mask(x, maxlen=None, dtype="int64", name=None):
    """A mask of sequence lengths: ``mask[..., j] = j < x[...]``, with a new last axis
    of length ``maxlen``.

    Args:
        x (Tensor): int lengths of any shape.
        maxlen (int|Tensor, optional): the mask length; ``max(x)`` when None. Default: None.
        dtype (str, optional): the mask dtype. Default: "int64".
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: ``x.shape + [maxlen]``.

    Examples:
        >>> import fw
        >>> lengths = fw.to_tensor([1, 3])
        >>> fw.nn.functional.sequence_mask(lengths, 4).tolist()
        [[1, 0, 0, 0], [1, 1, 1, 0]]
        >>> fw.nn.functional.sequence_mask(lengths, dtype='bool').tolist()
        [[True, False, False], [True, True, True]]
    """
    if maxlen is None:
        maxlen = int(x.max().item()) if x.size else 0
    elif hasattr(maxlen, "item"):
        maxlen = int(maxlen.item())
    steps = fw.arange(0, int(maxlen), dtype=x.dtype)
    mask = steps < x.unsqueeze(-1)
    return mask.astype(_dt.convert_dtype(dtype))


def gather_tree(ids, parents):
    """Back-trace beam search: follow the parent pointers from the last step to rebuild
    the full token sequence of every final beam.

    Args:
        ids (Tensor): the chosen ids ``[max_time, batch, beam]``.
        parents (Tensor): the parent beam of each id, the same shape.

    Returns:
        Tensor: the sequences, ``[max_time, batch, beam]``.

    Examples:
        >>> import fw
        >>> ids = fw.to_tensor([[[2, 5]], [[7, 9]]])
        >>> parents = fw.to_tensor([[[0, 0]], [[1, 0]]])
        >>> fw.nn.functional.gather_tree(ids, parents).tolist()
        [[[5, 2]], [[7, 9]]]
    """
    if list(ids.shape) != list(parents.shape) or len(ids.shape) != 3:
        raise InvalidArgumentError(f"gather_tree: ids {list(ids.shape)} and parents "
                                   f"{list(parents.shape)} must both be [time, batch, beam]")
    i = ids.numpy()
    p = parents.numpy()
    t_max = i.shape[0]
    out = np.empty_like(i)
    if t_max == 0:
        return fw.to_tensor(out)
    beam = np.broadcast_to(np.arange(i.shape[2]), i.shape[1:]).copy()
    b_idx = np.arange(i.shape[1])[:, None]
    for t in range(t_max - 1, -1, -1):
        out[t] = i[t][b_idx, beam]
        beam = p[t][b_idx, beam]
    return fw.to_tensor(out)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """Batched diagonal matrices: the last axis of ``input`` becomes the diagonal
    (shifted by ``offset``) of the matrices spanned by ``dim1`` and ``dim2``.

    Args:
        input (Tensor): the diagonals ``[*, n]``.
        offset (int, optional): 0 the main diagonal, > 0 above it, < 0 below. Default: 0.
        dim1 (int, optional): the first matrix axis of the output. Default: -2.
        dim2 (int, optional): the second matrix axis of the output. Default: -1.

    Returns:
        Tensor: ``[*, n + |offset|, n + |offset|]`` for the default axes.

    Examples:
        >>> import fw
        >>> fw.nn.functional.diag_embed(fw.to_tensor([1.0, 2.0])).tolist()
        [[1.0, 0.0], [0.0, 2.0]]
        >>> fw.nn.functional.diag_embed(fw.ones([3, 2]), offset=1).shape
        [3, 3, 3]
    """
    return fw.diag_embed(input, offset, dim1, dim2)


def temporal_shift(x, seg_num, shift_ratio=0.25, name=None, data_format="NCHW"):
    """Temporal shift (TSM, Lin et al. 2019): ``x [N * T, C, H, W]`` is viewed as T =
    ``seg_num`` frames; the first ``C * shift_ratio`` channels take the previous frame's
    values, the next ``C * shift_ratio`` the next frame's, the rest stay (zeros where no
    such frame exists).

    Args:
        x (Tensor): the 4-D input, batch a multiple of ``seg_num``.
        seg_num (int): the number of frames T per clip.
        shift_ratio (float, optional): the fraction of channels shifted each way.
            Default: 0.25.
        name (str, optional): unused, for Paddle compatibility. Default: None.
        data_format (str, optional): ``"NCHW"`` or ``"NHWC"``. Default: "NCHW".

    Returns:
        Tensor: ``x``'s shape.

    Examples:
        >>> import fw
        >>> x = fw.arange(8, dtype='float32').reshape([2, 4, 1, 1])
        >>> y = fw.nn.functional.temporal_shift(x, seg_num=2)
        >>> y.flatten().tolist()
        [0.0, 5.0, 2.0, 3.0, 0.0, 0.0, 6.0, 7.0]
    """
    if data_format not in ("NCHW", "NHWC"):
        raise InvalidArgumentError(f"temporal_shift: data_format must be 'NCHW' or 'NHWC', "
                                   f"got {data_format!r}")
    if len(x.shape) != 4 or x.shape[0] % seg_num:
        raise InvalidArgumentError(f"temporal_shift: x must be 4-D with a first axis divisible "
                                   f"by seg_num={seg_num}, got shape {list(x.shape)}")
    if data_format == "NHWC":
        x = x.transpose([0, 3, 1, 2])
    nt, c, h, w = x.shape
    t = seg_num
    v = x.reshape([nt // t, t, c, h, w])
    c1, c2 = int(c * shift_ratio), int(c * 2 * shift_ratio)
    z = fw.zeros([nt // t, 1, c, h, w], dtype=x.dtype)
    padded = fw.concat([z, v, z], axis=1)  # frame t of v is frame t+1 here
    out = fw.concat([padded[:, 0:t, :c1], padded[:, 2:t + 2, c1:c2], v[:, :, c2:]], axis=2)
    out = out.reshape([nt, c, h, w])
    return out.transpose([0, 2, 3, 1]) if data_format == "NHWC" else out
