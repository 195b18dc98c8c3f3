"""The Paddle-signature functions of the cumulative ops that the generated ones cannot express
(diff).

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.cumulative`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

from fw.core.ops._api import public
from fw.core.ops.cumulative import diff_op


@public("diff", method=True)
def diff(x, n=1, axis=-1, prepend=None, append=None, name=None):
    """The n-th forward difference ``out[i] = x[i+1] - x[i]`` along `axis`, applied
    n times (bool input uses logical xor).

    Args:
        x (Tensor): input with at least one dimension.
        n (int): how many times to difference.
        axis (int): the axis.
        prepend, append (Tensor|None): values joined to x along `axis` first; the
            other dimensions must match x.

    Examples:
        >>> import fw
        >>> fw.diff(fw.to_tensor([1, 4, 5, 2])).tolist()
        [3, 1, -3]
    """
    from fw.core.dispatch import invoke

    return invoke(diff_op, [x, prepend, append], {"n": n, "axis": axis})
