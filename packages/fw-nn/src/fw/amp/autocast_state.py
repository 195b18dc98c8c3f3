"""Queries of the current ``auto_cast`` region: Paddle 3.3's ``is_autocast_enabled`` and
``get_autocast_dtype`` (with its ``_cpu_``/``_gpu_`` spellings).

fw's ``auto_cast`` also works on CPU (bfloat16 by default there), so inside an enabled region on
CPU these report it as enabled; Paddle 3.3 ignores ``auto_cast`` on CPU and reports False /
"float16" (docs/paddle_differences.md). Outside a region the dtype is "float16", as in Paddle.
"""

from __future__ import annotations

from fw.amp.auto_cast import auto_cast, current_state

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "get_autocast_cpu_dtype",
           "get_autocast_gpu_dtype"]


def is_autocast_enabled(device_type=None) -> bool:
    """Whether an enabled ``fw.amp.auto_cast`` region is active in this thread.

    Args:
        device_type (str|Place, optional): ignored: every device shares one AMP state, as in
            Paddle.

    Returns:
        bool.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.amp.is_autocast_enabled()
            False
            >>> with fw.amp.auto_cast():
            ...     fw.amp.is_autocast_enabled()
            True
    """
    return current_state() is not None


def get_autocast_dtype(device_type=None) -> str:
    """The low-precision dtype of the active ``auto_cast`` region, else "float16".

    Args:
        device_type (str|Place, optional): ignored (one AMP state for every device).

    Returns:
        str, "float16" or "bfloat16".

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.amp.get_autocast_dtype()
            'float16'
            >>> with fw.amp.auto_cast(dtype="bfloat16"):
            ...     fw.amp.get_autocast_dtype()
            'bfloat16'
    """
    st = current_state()
    if st is None:
        return "float16"
    return str(st.dtype).split(".")[-1]


def get_autocast_cpu_dtype(device_type=None) -> str:
    """Same as ``get_autocast_dtype`` (Paddle keeps one AMP state for all devices).

    Args:
        device_type (str|Place, optional): ignored.

    Returns:
        str.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.amp.get_autocast_cpu_dtype()
            'float16'
    """
    return get_autocast_dtype(device_type)


def get_autocast_gpu_dtype(device_type=None) -> str:
    """Same as ``get_autocast_dtype`` (Paddle keeps one AMP state for all devices).

    Args:
        device_type (str|Place, optional): ignored.

    Returns:
        str.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.amp.get_autocast_gpu_dtype()
            'float16'
    """
    return get_autocast_dtype(device_type)


def autocast(device_type=None, dtype="float16", enabled=True, cache_enabled=True):
    """``paddle.autocast`` (PyTorch's argument order): ``fw.amp.auto_cast(enable=enabled,
    dtype=dtype)``.

    Args:
        device_type (str, optional): ignored (one AMP state for every device).
        dtype (str, optional): "float16" or "bfloat16". Default "float16".
        enabled (bool, optional): Default True.
        cache_enabled (bool, optional): ignored: fw caches casts of parameters per region.

    Returns:
        a context manager (also a decorator).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> with fw.autocast("cpu", dtype="bfloat16"):
            ...     fw.amp.get_autocast_dtype()
            'bfloat16'
    """
    return auto_cast(enable=enabled, dtype=dtype)
