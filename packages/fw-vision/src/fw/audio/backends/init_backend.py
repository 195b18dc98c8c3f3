"""Backend selection: Paddle's ``list_available_backends`` / ``get_current_backend`` /
``set_backend``. fw ships one backend, the standard-library ``wave_backend``; Paddle's
other backends come from the separate ``paddleaudio`` package, which fw does not use."""

from __future__ import annotations

from fw.core.errors import UnsupportedError

__all__ = ["list_available_backends", "get_current_backend", "set_backend"]

_BACKENDS = ["wave_backend"]
_current = "wave_backend"


def list_available_backends() -> list[str]:
    """The audio backends that can be selected.

    Returns:
        list[str]: ``['wave_backend']``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.backends.list_available_backends()
            ['wave_backend']
    """
    return list(_BACKENDS)


def get_current_backend() -> str:
    """The backend behind ``fw.audio.load``/``save``/``info``.

    Returns:
        str: the backend's name.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.backends.get_current_backend()
            'wave_backend'
    """
    return _current


def set_backend(backend_name: str) -> None:
    """Select the backend behind ``fw.audio.load``/``save``/``info``.

    Args:
        backend_name (str): one of `list_available_backends`.

    Returns:
        None

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.backends.set_backend('wave_backend')
    """
    global _current
    if backend_name not in _BACKENDS:
        raise UnsupportedError(f"fw.audio.backends.set_backend: backend {backend_name!r} is "
                               f"not available; available: {_BACKENDS} (Paddle's soundfile "
                               f"backend comes from paddleaudio, which fw does not use)")
    _current = backend_name
