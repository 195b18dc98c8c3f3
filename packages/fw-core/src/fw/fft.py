"""``fw.fft``: Paddle's ``paddle.fft`` namespace.

The functions are the ``fft.``-prefixed entries of the op table's public
functions (``fw.core.FUNCTIONS``), declared in ``fw/core/ops/fft.py``.

Examples:
    >>> import fw
    >>> fw.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
"""

from fw.core import FUNCTIONS as _FUNCTIONS

_PREFIX = "fft."


def _names() -> dict:
    return {k[len(_PREFIX):]: v for k, v in _FUNCTIONS.items()
            if k.startswith(_PREFIX) and "." not in k[len(_PREFIX):]}


globals().update(_names())
__all__ = sorted(_names())
