"""``fw.utils.deprecated``: mark a public function as deprecated (Paddle's decorator)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

__all__ = ["deprecated"]


def deprecated(update_to: str = "", since: str = "", reason: str = "",
               level: int = 0) -> Callable[[Callable], Callable]:
    """Decorator: mark a function as deprecated.

    Args:
        update_to (str, optional): the replacement, e.g. ``"fw.new_fn"``.
        since (str, optional): the version that deprecated it.
        reason (str, optional): why.
        level (int, optional): 0: only the docstring says so; 1: each call warns
            (``DeprecationWarning``); 2: each call raises ``RuntimeError``. Default 0.

    Returns:
        callable, the decorator.

    Examples:
        >>> import fw
        >>> import warnings
        >>> from fw.utils import deprecated
        >>> @deprecated(update_to="fw.new_fn", since="0.1", level=1)
        ... def old_fn():
        ...     return 1
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     _ = old_fn()
        >>> "fw.new_fn" in str(w[0].message)
        True
    """
    if not isinstance(level, int) or level not in (0, 1, 2):
        raise ValueError(f"deprecated: level must be 0, 1 or 2, got {level!r}")

    def decorator(fn: Callable) -> Callable:
        msg = f"API {fn.__module__}.{fn.__qualname__} is deprecated"
        if since:
            msg += f" since {since}"
        if update_to:
            msg += f"; use {update_to} instead"
        if reason:
            msg += f". Reason: {reason}"
        note = f"\n\n    Warning: {msg}.\n"
        if level == 0:
            fn.__doc__ = (fn.__doc__ or "") + note
            return fn

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if level == 2:
                raise RuntimeError(msg)
            warnings.warn(msg, DeprecationWarning, stacklevel=2)
            return fn(*args, **kwargs)

        wrapper.__doc__ = (fn.__doc__ or "") + note
        return wrapper

    return decorator
