"""``fw.linalg``: Paddle's ``paddle.linalg`` namespace.

The functions are the ``linalg.``-prefixed entries of the op table's public
functions (``fw.core.FUNCTIONS``), declared in ``fw/core/ops/linalg.py``,
``decomp.py`` and ``solve.py``; a few
names that Paddle re-exports from the top level (``matrix_transpose``,
``diagonal``) are picked up when their ops exist.

Examples:
    >>> import fw
    >>> fw.linalg.det(fw.to_tensor([[2., 0.], [0., 3.]])).item()
    6.0
"""

from fw.core import FUNCTIONS as _FUNCTIONS

_PREFIX = "linalg."
# paddle.linalg also re-exports these top-level functions
_TOP_LEVEL = ("matrix_transpose", "diagonal", "matmul")


def _names() -> dict:
    out = {k[len(_PREFIX):]: v for k, v in _FUNCTIONS.items()
           if k.startswith(_PREFIX) and "." not in k[len(_PREFIX):]}
    for k in _TOP_LEVEL:
        if k in _FUNCTIONS:
            out.setdefault(k, _FUNCTIONS[k])
    return out


globals().update(_names())
__all__ = sorted(_names())
