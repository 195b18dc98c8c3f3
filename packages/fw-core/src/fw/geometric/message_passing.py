"""Graph message passing (``paddle.geometric.send_u_recv``, ``send_ue_recv``,
``send_uv``): node features gathered along edges ``src_index[e] -> dst_index[e]``,
combined with edge features, and reduced at the destination nodes."""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Value
from fw.geometric._scatter import _DATA, check_index, check_reduce, check_tensor, fw_, reduce_rows

__all__ = ["send_u_recv", "send_ue_recv", "send_uv"]

_MESSAGE_OPS = ("add", "sub", "mul", "div")


def _out_rows(out_size, x, who):
    """Paddle's rule: None or a value <= 0 means as many rows as x has."""
    fw = fw_()
    if out_size is None:
        return x.shape[0]
    if isinstance(out_size, Value):
        raise InvalidArgumentError(f"{who}: 'out_size' must be an int or a concrete Tensor "
                                   f"inside fw.jit.to_static (it sets the output's shape)")
    if isinstance(out_size, fw.Tensor):
        if out_size.size != 1:
            raise InvalidArgumentError(f"{who}: 'out_size' must hold one value, got shape "
                                       f"{list(out_size.shape)}")
        out_size = out_size.reshape([]).item()
    if isinstance(out_size, bool) or not isinstance(out_size, (int,)) and not hasattr(
            out_size, "__index__"):
        raise InvalidTypeError(f"{who}: 'out_size' must be an int or a Tensor, got "
                               f"{type(out_size).__name__}")
    n = int(out_size)
    return x.shape[0] if n <= 0 else n


def _edges(x, src_index, dst_index, who, dst_rows=None):
    check_tensor(x, "x", who, _DATA)
    if len(x.shape) == 0:
        raise InvalidArgumentError(f"{who}: 'x' must have at least 1 dimension, got a 0-D "
                                   f"tensor")
    src = check_index(src_index, "src_index", who, upper=x.shape[0])
    dst = check_index(dst_index, "dst_index", who, length=src_index.shape[0], upper=dst_rows)
    return src, dst


def _message(a, b, op, who):
    """a op b, with b's feature dims broadcast against a's (Paddle aligns them after
    the edge dim)."""
    fw = fw_()
    if op not in _MESSAGE_OPS:
        raise InvalidArgumentError(f"{who}: 'message_op' must be 'add', 'sub', 'mul' or "
                                   f"'div', got {op!r}")
    fa, fb = len(a.shape) - 1, len(b.shape) - 1
    if fb < fa:
        b = b.reshape([b.shape[0]] + [1] * (fa - fb) + list(b.shape[1:]))
    elif fa < fb:
        a = a.reshape([a.shape[0]] + [1] * (fb - fa) + list(a.shape[1:]))
    try:
        return {"add": fw.add, "sub": fw.subtract, "mul": fw.multiply,
                "div": fw.divide}[op](a, b)
    except Exception as e:
        raise InvalidArgumentError(f"{who}: the features of x (per edge {list(a.shape)}) and "
                                   f"y ({list(b.shape)}) do not broadcast: {e}") from None


def send_u_recv(x, src_index, dst_index, reduce_op="sum", out_size=None, name=None):
    """Gathers ``x[src_index]`` along the edges and reduces the messages at
    ``dst_index``: ``out[i] = reduce(x[src_index[e]] for e with dst_index[e] == i)``.

    Args:
        x (Tensor): [N, ...] node features (float16, bfloat16, float32, float64, int32,
            int64).
        src_index (Tensor): [E] int32/int64 source node of each edge.
        dst_index (Tensor): [E] int32/int64 destination node of each edge.
        reduce_op (str, optional): ``'sum'`` (default), ``'mean'``, ``'max'`` or ``'min'``;
            nodes no edge reaches are 0.
        out_size (int|Tensor|None, optional): rows of the output; None or <= 0 means
            x.shape[0].
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        Tensor: [out_size, ...] with x's dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[0.0, 2.0, 3.0], [1.0, 4.0, 5.0], [2.0, 6.0, 7.0]])
        >>> src = fw.to_tensor([0, 1, 2, 0])
        >>> dst = fw.to_tensor([1, 2, 1, 0])
        >>> fw.geometric.send_u_recv(x, src, dst, reduce_op="sum").tolist()
        [[0.0, 2.0, 3.0], [2.0, 8.0, 10.0], [1.0, 4.0, 5.0]]
    """
    who = "send_u_recv"
    check_reduce(reduce_op, who)
    check_tensor(x, "x", who, _DATA)
    n = _out_rows(out_size, x, who)
    _, dst = _edges(x, src_index, dst_index, who, dst_rows=n)
    msgs = fw_().index_select(x, src_index.astype("int64"), 0)
    return reduce_rows(msgs, dst_index, dst, n, reduce_op)


def send_ue_recv(x, y, src_index, dst_index, message_op="add", reduce_op="sum",
                 out_size=None, name=None):
    """Combines the gathered node features ``x[src_index]`` with the edge features `y`
    by `message_op` and reduces the messages at ``dst_index`` by `reduce_op`.

    Args:
        x (Tensor): [N, ...] node features.
        y (Tensor): [E, ...] edge features, x's dtype; its feature dims broadcast with x's.
        src_index (Tensor): [E] int32/int64 source node of each edge.
        dst_index (Tensor): [E] int32/int64 destination node of each edge.
        message_op (str, optional): ``'add'`` (default), ``'sub'``, ``'mul'`` or ``'div'``.
        reduce_op (str, optional): ``'sum'`` (default), ``'mean'``, ``'max'`` or ``'min'``.
        out_size (int|Tensor|None, optional): rows of the output; None or <= 0 means
            x.shape[0].
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        Tensor: [out_size, broadcast feature shape] with x's dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[0.0, 2.0, 3.0], [1.0, 4.0, 5.0], [2.0, 6.0, 7.0]])
        >>> y = fw.to_tensor([1.0, 1.0, 1.0, 1.0])
        >>> src = fw.to_tensor([0, 1, 2, 0])
        >>> dst = fw.to_tensor([1, 2, 1, 0])
        >>> fw.geometric.send_ue_recv(x, y, src, dst, "add", "sum").tolist()
        [[1.0, 3.0, 4.0], [4.0, 10.0, 12.0], [2.0, 5.0, 6.0]]
    """
    who = "send_ue_recv"
    check_reduce(reduce_op, who)
    check_tensor(x, "x", who, _DATA)
    check_tensor(y, "y", who, (x.dtype.name,))
    n = _out_rows(out_size, x, who)
    _, dst = _edges(x, src_index, dst_index, who, dst_rows=n)
    if len(y.shape) == 0 or y.shape[0] != src_index.shape[0]:
        raise InvalidArgumentError(f"{who}: 'y' must have one row per edge "
                                   f"({src_index.shape[0]}), "
                                   f"got shape {list(y.shape)}")
    msgs = _message(fw_().index_select(x, src_index.astype("int64"), 0), y, message_op, who)
    return reduce_rows(msgs, dst_index, dst, n, reduce_op)


def send_uv(x, y, src_index, dst_index, message_op="add", name=None):
    """The message of every edge from the features of its two end nodes:
    ``x[src_index] message_op y[dst_index]``.

    Args:
        x (Tensor): [N, ...] source node features.
        y (Tensor): [M, ...] destination node features, x's dtype; feature dims
            broadcast with x's.
        src_index (Tensor): [E] int32/int64 source node of each edge.
        dst_index (Tensor): [E] int32/int64 destination node of each edge.
        message_op (str, optional): ``'add'`` (default), ``'sub'``, ``'mul'`` or ``'div'``.
        name (str, optional): unused (Paddle's naming argument).

    Returns:
        Tensor: [E, broadcast feature shape] with x's dtype.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[0.0, 2.0, 3.0], [1.0, 4.0, 5.0], [2.0, 6.0, 7.0]])
        >>> y = fw.to_tensor([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0], [4.0, 5.0, 6.0]])
        >>> src = fw.to_tensor([0, 1, 2, 0])
        >>> dst = fw.to_tensor([1, 2, 1, 0])
        >>> fw.geometric.send_uv(x, y, src, dst, message_op="add").tolist()
        [[2.0, 5.0, 7.0], [5.0, 9.0, 11.0], [4.0, 9.0, 11.0], [0.0, 3.0, 5.0]]
    """
    who = "send_uv"
    check_tensor(x, "x", who, _DATA)
    check_tensor(y, "y", who, (x.dtype.name,))
    if len(y.shape) == 0:
        raise InvalidArgumentError(f"{who}: 'y' must have at least 1 dimension, got a 0-D "
                                   f"tensor")
    _edges(x, src_index, dst_index, who, dst_rows=y.shape[0])
    fw = fw_()
    return _message(fw.index_select(x, src_index.astype("int64"), 0),
                    fw.index_select(y, dst_index.astype("int64"), 0), message_op, who)
