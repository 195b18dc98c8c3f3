"""The Paddle-signature functions of the search ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.search`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError
from fw.core.ops._api import public
from fw.core.ops._registry import OPS
from fw.core.ops.search import nonzero_op, sort_op, ss_op, uc_op, unique_op


@public("msort", method=True)
def msort(input, *, out=None):
    """``sort(input, axis=0)``: sort along the first axis (ascending).

    Args:
        input (Tensor): A tensor with at least one dimension.
        out (Tensor, optional): If given, the result is written into it and it is returned.
            Default: None.

    Returns:
        Tensor: input sorted along its first axis.

    Examples:
        >>> import fw
        >>> fw.msort(fw.to_tensor([[2., 1.], [0., 3.]])).tolist()
        [[0.0, 1.0], [2.0, 3.0]]
    """
    from fw.core.dispatch import assign_inplace, invoke

    r = invoke(sort_op, [input], {"axis": 0, "descending": False, "stable": False})
    if out is None:
        return r
    return assign_inplace("msort", out, r)


@public("unique", method=True)
def unique(x, return_index=False, return_inverse=False, return_counts=False, axis=None,
           dtype="int64", name=None):
    """The sorted unique elements of x (flattened), or the unique slices along `axis`.

    Args:
        x (Tensor): The input tensor.
        return_index (bool, optional): Also return the index of the first occurrence of each
            unique value. Default: False.
        return_inverse (bool, optional): Also return, for each element of x, the index of its
            value in the result. Default: False.
        return_counts (bool, optional): Also return how often each unique value occurs. Default:
            False.
        axis (int, optional): Find unique slices along this axis; None flattens x first.
            Default: None.
        dtype (str|fw.dtype, optional): The dtype of the index outputs (int64 or int32).
            Default: 'int64'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor|tuple(Tensor): the sorted unique values, followed by the requested index, inverse
            and counts tensors.

    Examples:
        >>> import fw
        >>> fw.unique(fw.to_tensor([2, 3, 3, 1, 5, 3])).tolist()
        [1, 2, 3, 5]
    """
    from fw.core.dispatch import invoke

    out, index, inverse, counts = invoke(unique_op, [x], {"axis": axis, "dtype": dtype})
    extra = [t for t, want in ((index, return_index), (inverse, return_inverse),
                               (counts, return_counts)) if want]
    return (out, *extra) if extra else out


@public("unique_consecutive", method=True)
def unique_consecutive(x, return_inverse=False, return_counts=False, axis=None,
                       dtype="int64", name=None):
    """Keep the first element of every run of equal consecutive elements of x
    (flattened), or of equal consecutive slices along `axis`.

    Args:
        x (Tensor): The input tensor.
        return_inverse (bool, optional): Also return, for each element, the index of its run.
            Default: False.
        return_counts (bool, optional): Also return the length of each run. Default: False.
        axis (int, optional): Collapse runs of equal slices along this axis; None flattens x
            first. Default: None.
        dtype (str|fw.dtype, optional): The dtype of the index outputs (int64 or int32).
            Default: 'int64'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor|tuple(Tensor): the values with consecutive repeats collapsed, followed by the
            requested inverse and counts.

    Examples:
        >>> import fw
        >>> fw.unique_consecutive(fw.to_tensor([1, 1, 2, 2, 3, 1, 1, 2])).tolist()
        [1, 2, 3, 1, 2]
    """
    from fw.core.dispatch import invoke

    out, inverse, counts = invoke(uc_op, [x], {"axis": axis, "dtype": dtype})
    extra = [t for t, want in ((inverse, return_inverse), (counts, return_counts)) if want]
    return (out, *extra) if extra else out


@public("bucketize", method=True)
def bucketize(x, sorted_sequence, out_int32=False, right=False, name=None):
    """The bucket of each element of x given 1-D boundaries `sorted_sequence`
    (``searchsorted(sorted_sequence, x)``).

    Args:
        x (Tensor): The values to place.
        sorted_sequence (Tensor): A 1-D ascending tensor of boundaries.
        out_int32 (bool, optional): Give int32 indices instead of int64. Default: False.
        right (bool, optional): For values equal to a boundary: False gives the boundary's
            index, True the next one. Default: False.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the bucket index of each value, with x's shape.

    Examples:
        >>> import fw
        >>> fw.bucketize(fw.to_tensor([0, 6, 9]), fw.to_tensor([2, 4, 8])).tolist()
        [0, 2, 3]
    """
    from fw.core.dispatch import invoke

    nd = len(sorted_sequence.shape)
    if nd != 1:
        raise InvalidArgumentError(f"bucketize: 'sorted_sequence' must be 1-D, got shape "
                                   f"{list(sorted_sequence.shape)}")
    return invoke(ss_op, [sorted_sequence, x], {"out_int32": out_int32, "right": right})


@public("nonzero", method=True)
def nonzero(x, as_tuple=False, *, out=None):
    """Coordinates of the non-zero elements of x, in row-major order.

    Args:
        x (Tensor): input.
        as_tuple (bool): return one 1-D [z] tensor per dimension instead of one
            [z, ndim] tensor.
        out (Tensor|None): with as_tuple=False, write the result into it.

    Returns:
        Tensor (int64, [z, ndim]) or a tuple of ndim int64 tensors of shape [z].

    Examples:
        >>> import fw
        >>> fw.nonzero(fw.to_tensor([[1., 0.], [0., 2.]])).tolist()
        [[0, 0], [1, 1]]
    """
    from fw.core.dispatch import assign_inplace, invoke

    if as_tuple:  # one 1-D [z] tensor per dimension, as Paddle 3.3 gives (2.x gave [z, 1])
        return tuple(invoke(OPS["reshape"], [invoke(nonzero_op, [x], {"dim": k})],
                            {"shape": (-1,)}) for k in range(len(x.shape)))
    r = invoke(nonzero_op, [x], {"dim": None})
    return r if out is None else assign_inplace("nonzero", out, r)


@public("argwhere", method=True)
def argwhere(input):
    """Coordinates of the non-zero elements of `input` as a [z, ndim] int64 tensor
    (``nonzero(input)``).

    Args:
        input (Tensor): The input tensor.

    Returns:
        Tensor: int64 coordinates [z, ndim] of the nonzero elements, in row-major order.

    Examples:
        >>> import fw
        >>> fw.argwhere(fw.to_tensor([[1., 0.], [0., 2.]])).tolist()
        [[0, 0], [1, 1]]
    """
    from fw.core.dispatch import invoke

    return invoke(nonzero_op, [input], {"dim": None})
