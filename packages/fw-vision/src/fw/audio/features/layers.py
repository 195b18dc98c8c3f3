"""Spectrogram feature layers: Paddle's ``paddle.audio.features``. Each is a chain of the
previous one: |STFT|^power -> mel filter bank -> decibels -> DCT, built on
`fw.signal.stft` and fw ops, so they differentiate with respect to the waveform.

The constant matrices (window, filter bank, DCT) are buffers, as in Paddle, so they
move with the layer (``.to``) and are saved in its state dict."""

from __future__ import annotations

import fw
from fw import nn
from fw.audio.functional import compute_fbank_matrix, create_dct, get_window, power_to_db
from fw.core.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["Spectrogram", "MelSpectrogram", "LogMelSpectrogram", "MFCC"]


def _check_waveform(x, who: str):
    if not isinstance(x, fw.Tensor):
        raise InvalidTypeError(f"{who}: input 'x' must be a Tensor, got {type(x).__name__}")
    if len(x.shape) not in (1, 2):
        raise InvalidArgumentError(f"{who}: input 'x' must be a waveform of shape "
                                   f"[seq_length] or [batch, seq_length], got shape "
                                   f"{list(x.shape)} ({x.dtype})")


class Spectrogram(nn.Layer):
    """The magnitude (``power=1``) or power (``power=2``) spectrogram of a waveform:
    ``|stft(x)| ** power``.

    Args:
        n_fft (int, optional): the FFT size. Default 512.
        hop_length (int, optional): the step between frames; None gives
            ``n_fft // 4``. Default 512.
        win_length (int, optional): the window size (<= n_fft). Default ``n_fft``.
        window (str, optional): the window's name, see `get_window`. Default 'hann'.
        power (float, optional): the exponent of the magnitude (> 0). Default 1.0.
        center (bool, optional): pad the signal so frames are centred. Default True.
        pad_mode (str, optional): the padding for ``center``. Default 'reflect'.
        dtype (str, optional): the window's dtype. Default 'float32'.

    Returns:
        Tensor: shape ``[batch, 1 + n_fft // 2, num_frames]`` (no batch axis for a 1-D
        input).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.randn([2, 1600])
            >>> fw.audio.features.Spectrogram(n_fft=256, hop_length=128)(x).shape
            [2, 129, 13]
    """

    def __init__(self, n_fft: int = 512, hop_length: int | None = 512,
                 win_length: int | None = None, window: str = "hann", power: float = 1.0,
                 center: bool = True, pad_mode: str = "reflect", dtype: str = "float32"):
        super().__init__()
        if not power > 0:
            raise InvalidArgumentError(f"Spectrogram: argument 'power' must be > 0, got "
                                       f"{power}")
        self.power = power
        if win_length is None:
            win_length = n_fft
        self.n_fft, self.hop_length, self.win_length = n_fft, hop_length, win_length
        self.center, self.pad_mode = center, pad_mode
        self.register_buffer("fft_window", get_window(window, win_length, fftbins=True,
                                                      dtype=dtype))

    def forward(self, x):
        _check_waveform(x, type(self).__name__)
        stft = fw.signal.stft(x, n_fft=self.n_fft, hop_length=self.hop_length,
                              win_length=self.win_length, window=self.fft_window,
                              center=self.center, pad_mode=self.pad_mode)
        return fw.pow(fw.abs(stft), self.power)


class MelSpectrogram(nn.Layer):
    """The mel spectrogram: a `Spectrogram` (power 2 by default) projected on a mel
    filter bank (`compute_fbank_matrix`).

    Args:
        sr (int, optional): the sample rate in Hz. Default 22050.
        n_fft (int, optional): the FFT size. Default 2048.
        hop_length (int, optional): the step between frames. Default 512.
        win_length (int, optional): the window size. Default ``n_fft``.
        window (str, optional): the window's name. Default 'hann'.
        power (float, optional): the exponent of the magnitude. Default 2.0.
        center (bool, optional): centre the frames. Default True.
        pad_mode (str, optional): the padding for ``center``. Default 'reflect'.
        n_mels (int, optional): the number of mel bands. Default 64.
        f_min (float, optional): the lowest frequency in Hz. Default 50.0.
        f_max (float, optional): the highest frequency in Hz. Default ``sr // 2``.
        htk (bool, optional): use the HTK mel scale. Default False.
        norm ('slaney'|float, optional): the filter normalization. Default 'slaney'.
        dtype (str, optional): the dtype of the buffers. Default 'float32'.

    Returns:
        Tensor: shape ``[batch, n_mels, num_frames]``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.randn([2, 1600])
            >>> fw.audio.features.MelSpectrogram(sr=16000, n_fft=256, hop_length=128,
            ...                                  n_mels=32)(x).shape
            [2, 32, 13]
    """

    def __init__(self, sr: int = 22050, n_fft: int = 2048, hop_length: int | None = 512,
                 win_length: int | None = None, window: str = "hann", power: float = 2.0,
                 center: bool = True, pad_mode: str = "reflect", n_mels: int = 64,
                 f_min: float = 50.0, f_max: float | None = None, htk: bool = False,
                 norm="slaney", dtype: str = "float32"):
        super().__init__()
        self._spectrogram = Spectrogram(n_fft=n_fft, hop_length=hop_length,
                                        win_length=win_length, window=window, power=power,
                                        center=center, pad_mode=pad_mode, dtype=dtype)
        self.n_mels, self.f_min, self.f_max, self.htk, self.norm = \
            n_mels, f_min, f_max, htk, norm
        if f_max is None:
            f_max = sr // 2
        self.register_buffer("fbank_matrix", compute_fbank_matrix(
            sr=sr, n_fft=n_fft, n_mels=n_mels, f_min=f_min, f_max=f_max, htk=htk,
            norm=norm, dtype=dtype))

    def forward(self, x):
        return fw.matmul(self.fbank_matrix, self._spectrogram(x))


class LogMelSpectrogram(nn.Layer):
    """The mel spectrogram in decibels (`MelSpectrogram` then `power_to_db`).

    Args:
        sr, n_fft, hop_length, win_length, window, power, center, pad_mode, n_mels,
        f_min, f_max, htk, norm, dtype: as `MelSpectrogram` (here ``n_fft`` defaults to
            512 and ``hop_length`` to None, i.e. ``n_fft // 4``).
        ref_value (float, optional): the reference power (0 dB). Default 1.0.
        amin (float, optional): the floor before the log. Default 1e-10.
        top_db (float, optional): the dynamic range kept; None keeps all. Default None.

    Returns:
        Tensor: shape ``[batch, n_mels, num_frames]``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.randn([2, 1600])
            >>> fw.audio.features.LogMelSpectrogram(sr=16000, n_mels=32)(x).shape
            [2, 32, 13]
    """

    def __init__(self, sr: int = 22050, n_fft: int = 512, hop_length: int | None = None,
                 win_length: int | None = None, window: str = "hann", power: float = 2.0,
                 center: bool = True, pad_mode: str = "reflect", n_mels: int = 64,
                 f_min: float = 50.0, f_max: float | None = None, htk: bool = False,
                 norm="slaney", ref_value: float = 1.0, amin: float = 1e-10,
                 top_db: float | None = None, dtype: str = "float32"):
        super().__init__()
        self._melspectrogram = MelSpectrogram(
            sr=sr, n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
            power=power, center=center, pad_mode=pad_mode, n_mels=n_mels, f_min=f_min,
            f_max=f_max, htk=htk, norm=norm, dtype=dtype)
        self.ref_value, self.amin, self.top_db = ref_value, amin, top_db

    def forward(self, x):
        return power_to_db(self._melspectrogram(x), ref_value=self.ref_value,
                           amin=self.amin, top_db=self.top_db)


class MFCC(nn.Layer):
    """Mel-frequency cepstral coefficients: the DCT (`create_dct`) of the
    `LogMelSpectrogram`.

    Args:
        sr (int, optional): the sample rate in Hz. Default 22050.
        n_mfcc (int, optional): the number of coefficients (<= n_mels). Default 40.
        n_fft, hop_length, win_length, window, power, center, pad_mode, n_mels, f_min,
        f_max, htk, norm, ref_value, amin, top_db, dtype: as `LogMelSpectrogram`.

    Returns:
        Tensor: shape ``[batch, n_mfcc, num_frames]``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.randn([2, 1600])
            >>> fw.audio.features.MFCC(sr=16000, n_mfcc=13, n_mels=32)(x).shape
            [2, 13, 13]
    """

    def __init__(self, sr: int = 22050, n_mfcc: int = 40, n_fft: int = 512,
                 hop_length: int | None = None, win_length: int | None = None,
                 window: str = "hann", power: float = 2.0, center: bool = True,
                 pad_mode: str = "reflect", n_mels: int = 64, f_min: float = 50.0,
                 f_max: float | None = None, htk: bool = False, norm="slaney",
                 ref_value: float = 1.0, amin: float = 1e-10, top_db: float | None = None,
                 dtype: str = "float32"):
        super().__init__()
        if n_mfcc > n_mels:
            raise InvalidArgumentError(f"MFCC: argument 'n_mfcc' ({n_mfcc}) cannot be larger "
                                       f"than 'n_mels' ({n_mels})")
        self._log_melspectrogram = LogMelSpectrogram(
            sr=sr, n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
            power=power, center=center, pad_mode=pad_mode, n_mels=n_mels, f_min=f_min,
            f_max=f_max, htk=htk, norm=norm, ref_value=ref_value, amin=amin, top_db=top_db,
            dtype=dtype)
        self.register_buffer("dct_matrix", create_dct(n_mfcc=n_mfcc, n_mels=n_mels,
                                                      dtype=dtype))

    def forward(self, x):
        # dct.T @ log_mel: [n_mfcc, n_mels] x [..., n_mels, frames]
        return fw.matmul(self.dct_matrix, self._log_melspectrogram(x), transpose_x=True)
