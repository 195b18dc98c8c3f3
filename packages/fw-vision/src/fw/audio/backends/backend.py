"""What every audio backend returns from ``info``."""

from __future__ import annotations

__all__ = ["AudioInfo"]


class AudioInfo:
    """The metadata of an audio file (Paddle's ``paddle.audio.backends.backend.AudioInfo``).

    Args:
        sample_rate (int): samples per second.
        num_frames (int): the number of frames (samples per channel).
        num_channels (int): the number of channels.
        bits_per_sample (int): bits of one sample.
        encoding (str): the sample encoding ('PCM_S': signed integer PCM).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.audio.backends.backend import AudioInfo
            >>> AudioInfo(16000, 8000, 1, 16, "PCM_S").num_frames
            8000
    """

    def __init__(self, sample_rate: int, num_frames: int, num_channels: int,
                 bits_per_sample: int, encoding: str):
        self.sample_rate = sample_rate
        self.num_frames = num_frames
        self.num_channels = num_channels
        self.bits_per_sample = bits_per_sample
        self.encoding = encoding

    def __repr__(self):
        return (f"AudioInfo(sample_rate={self.sample_rate}, num_frames={self.num_frames}, "
                f"num_channels={self.num_channels}, bits_per_sample={self.bits_per_sample}, "
                f"encoding={self.encoding!r})")
