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
        x (Tensor): The input tensor.
        n (int, optional): How many times to take the difference. Default: 1.
        axis (int, optional): The axis along which to take it. Default: -1.
        prepend (Tensor, optional): Values put before x along axis first. Default: None.
        append (Tensor, optional): Values put after x along axis first. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the n-th forward differences; axis is n shorter (plus the prepended and appended
            lengths).

    Examples:
        >>> import fw
        >>> fw.diff(fw.to_tensor([1, 4, 5, 2])).tolist()
        [3, 1, -3]
    """
    from fw.core.dispatch import invoke

    return invoke(diff_op, [x, prepend, append], {"n": n, "axis": axis})
