"""The built-in audio backend: 16-bit PCM WAV through the standard library's ``wave``
module (Paddle's ``wave_backend``; other formats need another backend)."""

from __future__ import annotations

import os
import wave

import numpy as np

import fw
from fw.audio.backends.backend import AudioInfo
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError

__all__ = ["info", "load", "save"]


def _open(filepath, who: str):
    """A ``wave.Wave_read`` and whether we own the file object (a path) or not (a file
    object the caller passed)."""
    own = not hasattr(filepath, "read")
    f = open(filepath, "rb") if own else filepath
    try:
        return wave.open(f), f, own
    except (wave.Error, EOFError) as e:
        if own:
            f.close()
        raise UnsupportedError(f"{who}: {getattr(filepath, 'name', filepath)!r} is not a PCM "
                               f"WAV file the wave backend can read ({e}); only 16-bit PCM "
                               f"WAV is supported") from None


def info(filepath) -> AudioInfo:
    """The sample rate, frame count, channels and sample width of a WAV file.

    Args:
        filepath (str|file): a path or a binary file object.

    Returns:
        AudioInfo: the file's metadata.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "a.wav")
            >>> fw.audio.save(path, fw.zeros([1, 800]), 16000)
            >>> fw.audio.info(path).num_frames
            800
    """
    w, f, own = _open(filepath, "fw.audio.info")
    try:
        return AudioInfo(w.getframerate(), w.getnframes(), w.getnchannels(),
                         w.getsampwidth() * 8, "PCM_S")
    finally:
        if own:
            f.close()


def load(filepath, frame_offset: int = 0, num_frames: int = -1, normalize: bool = True,
         channels_first: bool = True):
    """Read a 16-bit PCM WAV file.

    Args:
        filepath (str|file): a path or a binary file object.
        frame_offset (int, optional): the first frame to read. Default 0.
        num_frames (int, optional): how many frames to read; -1 reads to the end.
            Default -1.
        normalize (bool, optional): scale the samples to [-1, 1) (divide by 2**15);
            False keeps the integer values (as float32, like Paddle). Default True.
        channels_first (bool, optional): return ``[channels, time]`` (True) or
            ``[time, channels]``. Default True.

    Returns:
        tuple: (Tensor float32 waveform, int sample rate).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "a.wav")
            >>> fw.audio.save(path, fw.full([1, 800], 0.5), 16000)
            >>> wav, sr = fw.audio.load(path)
            >>> wav.shape, sr, float(wav[0, 0])
            ([1, 800], 16000, 0.5)
    """
    who = "fw.audio.load"
    for name, v in (("frame_offset", frame_offset), ("num_frames", num_frames)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InvalidTypeError(f"{who}: argument '{name}' must be an int, got {v!r}")
    if frame_offset < 0 or num_frames < -1:
        raise InvalidArgumentError(f"{who}: 'frame_offset' must be >= 0 and 'num_frames' >= "
                                   f"-1, got {frame_offset} and {num_frames}")
    w, f, own = _open(filepath, who)
    try:
        if w.getsampwidth() != 2:
            raise UnsupportedError(f"{who}: {getattr(filepath, 'name', filepath)!r} has "
                                   f"{8 * w.getsampwidth()}-bit samples; the wave backend "
                                   f"reads 16-bit PCM only")
        channels, sample_rate, total = w.getnchannels(), w.getframerate(), w.getnframes()
        start = min(frame_offset, total)
        count = total - start if num_frames == -1 else min(num_frames, total - start)
        w.setpos(start)
        raw = w.readframes(count)
    finally:
        if own:
            f.close()
    data = np.frombuffer(raw, dtype="<i2").astype(np.float32).reshape(-1, channels)
    if normalize:
        data = data / np.float32(2 ** 15)
    if channels_first:
        data = data.T
    return fw.to_tensor(np.ascontiguousarray(data)), sample_rate


def save(filepath, src, sample_rate: int, channels_first: bool = True,
         encoding: str | None = None, bits_per_sample: int | None = 16) -> None:
    """Write a waveform as a 16-bit PCM WAV file (written to a temporary file and renamed,
    so a reader never sees half a file).

    Args:
        filepath (str): the path to write.
        src (Tensor): a 2-D waveform; float samples in [-1, 1] are scaled by 2**15,
            integer samples are written as they are.
        sample_rate (int): samples per second.
        channels_first (bool, optional): ``src`` is ``[channels, time]`` (True) or
            ``[time, channels]``. Default True.
        encoding (str, optional): only 'PCM_S' (or None) is supported. Default None.
        bits_per_sample (int, optional): only 16 (or None) is supported. Default 16.

    Returns:
        None

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "a.wav")
            >>> fw.audio.save(path, fw.zeros([2, 100]), 8000)
            >>> fw.audio.info(path).num_channels
            2
    """
    who = "fw.audio.save"
    if not isinstance(src, fw.Tensor):
        raise InvalidTypeError(f"{who}: argument 'src' must be a Tensor, got "
                               f"{type(src).__name__}")
    if len(src.shape) != 2:
        raise InvalidArgumentError(f"{who}: argument 'src' must be 2-D ([channels, time] or "
                                   f"[time, channels]), got shape {list(src.shape)}")
    if bits_per_sample not in (None, 16):
        raise UnsupportedError(f"{who}: bits_per_sample={bits_per_sample}: the wave backend "
                               f"writes 16-bit PCM only")
    if encoding not in (None, "PCM_S"):
        raise UnsupportedError(f"{who}: encoding={encoding!r}: the wave backend writes "
                               f"'PCM_S' only")
    data = src.numpy()
    if channels_first:
        data = data.T
    if np.issubdtype(data.dtype, np.floating):
        data = np.clip(np.round(data * 2 ** 15), -(2 ** 15), 2 ** 15 - 1)
    data = np.ascontiguousarray(data.astype("<i2"))
    tmp = f"{os.fspath(filepath)}.tmp{os.getpid()}"
    try:
        with wave.open(tmp, "wb") as w:
            w.setnchannels(data.shape[1])
            w.setsampwidth(2)
            w.setframerate(int(sample_rate))
            w.writeframes(data.tobytes())
        os.replace(tmp, filepath)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
