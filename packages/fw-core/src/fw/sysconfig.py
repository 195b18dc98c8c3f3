"""``fw.sysconfig``: where fw-core's C++ headers and native library are (Paddle's
``paddle.sysconfig``), for building extensions against fw-core's native kernels."""

from __future__ import annotations

import os

__all__ = ["get_include", "get_lib"]

_CORE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "core")


def get_include() -> str:
    """The directory of fw-core's C++ headers (``csrc``: ``fused_elementwise.hpp``, …).

    The headers travel with the source tree (a checkout or an editable install); a wheel
    carries only the compiled module, and then this raises FileNotFoundError saying so.

    Returns:
        str: an absolute directory path.

    Examples:
        >>> import fw
        >>> import os
        >>> os.path.isfile(os.path.join(fw.sysconfig.get_include(), "fused_elementwise.hpp"))
        True
    """
    # src/fw/sysconfig.py -> packages/fw-core/csrc
    csrc = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         os.pardir, os.pardir, "csrc"))
    if not os.path.isdir(csrc):
        raise FileNotFoundError(
            f"get_include: fw-core's C++ headers are not installed (looked in {csrc}); they "
            f"ship with the source tree, not the wheel: install fw-core from source")
    return csrc


def get_lib() -> str:
    """The directory holding fw-core's native library (the ``fw.core._C`` extension).

    Returns:
        str: an absolute directory path.

    Examples:
        >>> import fw
        >>> import os
        >>> any(n.startswith("_C") for n in os.listdir(fw.sysconfig.get_lib()))
        True
    """
    return _CORE_DIR
