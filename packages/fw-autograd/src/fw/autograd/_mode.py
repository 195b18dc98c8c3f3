"""Grad mode (thread-local) and anomaly mode.

The eager hot path of fw-core reads ``grad_state.enabled`` as a truth value
(``if need_grad and grad_state.enabled``). To keep that read a plain slot load
in the common case, the slot holds ``True`` while every thread is in the
default mode; as soon as some thread switches grad mode off it holds
`_PER_THREAD`, an object whose truth value is the calling thread's own mode.
So threads never see each other's ``no_grad``, and programs that never use it
pay nothing.
"""

from __future__ import annotations

import functools
import inspect
import threading

from fw.core.internal import grad_state

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "set_detect_anomaly", "detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _Local(threading.local):
    enabled = True  # per-thread grad mode; class default for new threads
    anomaly = False
    anomaly_check_nan = True


_tls = _Local()
_lock = threading.Lock()
_off_threads = [0]  # how many threads have grad mode off


class _PerThread:
    __slots__ = ()

    def __bool__(self):
        return _tls.enabled


_PER_THREAD = _PerThread()
# True once any thread turned anomaly mode on: `record` checks it before the
# (slower) thread-local flag.
_anomaly_any = [False]


def is_grad_enabled() -> bool:
    """Whether operations are recorded for automatic differentiation in this thread.

    Returns:
        bool, True when operations are recorded.

    Examples:
        >>> import fw
        >>> fw.is_grad_enabled()
        True
    """
    return _tls.enabled


def _set(mode: bool) -> bool:
    """Set this thread's grad mode; returns the previous mode."""
    mode = bool(mode)
    prev = _tls.enabled
    if mode is prev:
        return prev
    with _lock:
        _tls.enabled = mode
        _off_threads[0] += -1 if mode else 1
        grad_state.enabled = True if _off_threads[0] == 0 else _PER_THREAD
    return prev


class _ModeGuard:
    """Base of the grad-mode context managers; instances also decorate functions
    (and generator functions, whose every resumption runs in the mode)."""

    _mode = True

    def __enter__(self):
        self._prev = _set(self._mode)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, fn):
        mode = self._mode
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen(*args, **kwargs):
                g = fn(*args, **kwargs)
                sent, thrown = None, None
                while True:
                    prev = _set(mode)
                    try:
                        req = g.throw(thrown) if thrown is not None else g.send(sent)
                    except StopIteration as e:
                        return e.value
                    finally:
                        _set(prev)
                    thrown = None
                    try:
                        sent = yield req
                    except GeneratorExit:
                        g.close()
                        raise
                    except BaseException as e:  # forwarded into the wrapped generator
                        thrown = e
            return gen

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _set(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _set(prev)

        return wrapper


class _FixedModeGuard(_ModeGuard):
    """A guard whose mode is fixed by the class (`no_grad`, `enable_grad`); it takes an
    optional function so that it also decorates without parentheses."""

    def __new__(cls, func=None):
        # ``@fw.no_grad`` without parentheses (Paddle allows both spellings)
        self = super().__new__(cls)
        if func is not None and callable(func):
            return self(func)
        return self

    def __init__(self, func=None):
        pass


class no_grad(_FixedModeGuard):
    """Context manager and decorator: operations inside are not recorded, so results
    have ``stop_gradient=True`` and use no memory for backward.

    Args:
        func (callable, optional): a function to decorate (``@fw.no_grad`` without
            parentheses). Default: None.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0], stop_gradient=False)
        >>> with fw.no_grad():
        ...     y = x * 2
        >>> y.stop_gradient
        True
    """

    _mode = False


class enable_grad(_FixedModeGuard):
    """Context manager and decorator: turn recording back on inside ``no_grad``.

    Args:
        func (callable, optional): a function to decorate. Default: None.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0], stop_gradient=False)
        >>> with fw.no_grad():
        ...     with fw.enable_grad():
        ...         y = x * 2
        >>> y.stop_gradient
        False
    """

    _mode = True


class set_grad_enabled(_ModeGuard):
    """Set grad mode: ``fw.set_grad_enabled(False)`` takes effect at once (for the
    calling thread); used with ``with`` the previous mode is restored on exit.

    Args:
        mode (bool): True records operations, False does not.

    Examples:
        >>> import fw
        >>> with fw.set_grad_enabled(False):
        ...     fw.is_grad_enabled()
        False
    """

    def __init__(self, mode: bool):
        self._mode = bool(mode)
        self._prev = _set(self._mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, fn):
        # used as a decorator the call above already switched the mode: undo it
        _set(self._prev)
        return super().__call__(fn)


# ---------------------------------------------------------------- anomaly mode
def is_anomaly_enabled() -> bool:
    """Whether anomaly detection (`set_detect_anomaly`, `detect_anomaly`) is on in this
    thread.

    Returns:
        bool.

    Examples:
        >>> import fw
        >>> fw.autograd.is_anomaly_enabled()
        False
        >>> with fw.autograd.detect_anomaly():
        ...     print(fw.autograd.is_anomaly_enabled())
        True
    """
    return _tls.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode is on in this thread and checks for NaN/Inf (what
    ``detect_anomaly(check_nan=...)`` and ``FLAGS_check_nan_inf`` set). fw.jit reads it
    when it picks the compiled program of a converted function: a checked program
    tests every op's output.

    Returns:
        bool.

    Examples:
        >>> import fw.autograd
        >>> fw.autograd.is_anomaly_check_nan_enabled()
        False
    """
    return bool(_tls.anomaly and _tls.anomaly_check_nan)


def set_detect_anomaly(mode: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for this thread.

    While it is on, every recorded op remembers the user's source line, and a
    backward pass that produces a NaN/Inf gradient raises `AnomalyError` naming
    the forward op and that line. It slows recording down; use it to debug.

    Args:
        mode (bool): turn anomaly detection on or off.
        check_nan (bool, optional): check gradients for NaN/Inf. Default: True.

    Returns:
        None.

    Examples:
        >>> import fw.autograd
        >>> fw.autograd.set_detect_anomaly(True)
        >>> fw.autograd.set_detect_anomaly(False)
    """
    _tls.anomaly = bool(mode)
    _tls.anomaly_check_nan = bool(check_nan)
    if mode:
        _anomaly_any[0] = True


class detect_anomaly:
    """Context manager (and decorator) form of `set_detect_anomaly`.

    Args:
        check_nan (bool, optional): also check gradients for NaN/Inf. Default: True.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([0.0], stop_gradient=False)
        >>> with fw.autograd.detect_anomaly():
        ...     y = (x.log() * 0.0).sum()   # log'(0) = inf, inf * 0 = nan
        ...     try:
        ...         y.backward()
        ...     except fw.autograd.AnomalyError as e:
        ...         print("caught")
        caught
    """

    def __init__(self, check_nan: bool = True):
        self._check_nan = check_nan

    def __enter__(self):
        self._prev = (_tls.anomaly, _tls.anomaly_check_nan)
        set_detect_anomaly(True, self._check_nan)
        return self

    def __exit__(self, *exc):
        _tls.anomaly, _tls.anomaly_check_nan = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper
