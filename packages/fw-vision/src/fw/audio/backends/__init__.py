"""``fw.audio.backends``: Paddle's ``paddle.audio.backends`` — WAV load/save/info and
backend selection."""

from fw.audio.backends.init_backend import (
    get_current_backend,
    list_available_backends,
    set_backend,
)
from fw.audio.backends.wave_backend import info, load, save

__all__ = ["get_current_backend", "list_available_backends", "set_backend", "info", "load",
           "save"]
