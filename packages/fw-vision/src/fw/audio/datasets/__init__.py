"""``fw.audio.datasets``: Paddle's ``paddle.audio.datasets`` — ESC-50 and TESS."""

from fw.audio.datasets.esc50 import ESC50
from fw.audio.datasets.tess import TESS

__all__ = ["ESC50", "TESS"]
