"""``fw.audio``: Paddle's ``paddle.audio`` — audio feature functions and layers
(spectrograms, mel spectrograms, MFCC on `fw.signal.stft`), WAV I/O through the standard
library's ``wave`` module."""

from fw.audio import backends, features, functional
from fw.audio.backends import info, load, save

__all__ = ["backends", "features", "functional", "info", "load", "save"]
