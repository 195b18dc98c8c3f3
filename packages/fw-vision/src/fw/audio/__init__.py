"""``fw.audio``: Paddle's ``paddle.audio`` — audio feature functions and layers
(spectrograms, mel spectrograms, MFCC on `fw.signal.stft`), WAV I/O through the standard
library's ``wave`` module, and the ESC-50 / TESS datasets."""

from fw.audio import backends, datasets, features, functional
from fw.audio.backends import info, load, save

__all__ = ["backends", "datasets", "features", "functional", "info", "load", "save"]
