"""Mel scale conversions, filter banks, decibels and the DCT: Paddle's
``paddle.audio.functional`` (whose numerics follow librosa: the Slaney mel scale by
default, HTK's on request).

Everything that takes or returns a Tensor is written with fw ops, so gradients flow
through `power_to_db` and the tensor forms of `hz_to_mel`/`mel_to_hz`, and the
functions trace into programs."""

from __future__ import annotations

import math
import numbers

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["hz_to_mel", "mel_to_hz", "mel_frequencies", "fft_frequencies",
           "compute_fbank_matrix", "power_to_db", "create_dct"]

# The Slaney mel scale (librosa's default; Paddle's htk=False): linear below 1 kHz
# (200/3 Hz per mel), logarithmic above it (27 mels per factor 6.4).
_F_SP = 200.0 / 3
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = math.log(6.4) / 27.0


def _is_tensor(x) -> bool:
    return isinstance(x, fw.Tensor)


def _check_number(x, name: str, who: str):
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InvalidTypeError(f"{who}: argument '{name}' must be a float or a Tensor, got "
                               f"{type(x).__name__}")
    return float(x)


def _check_positive_int(x, name: str, who: str) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x <= 0:
        raise InvalidArgumentError(f"{who}: argument '{name}' must be a positive int, got "
                                   f"{x!r}")
    return int(x)


def hz_to_mel(freq, htk: bool = False):
    """Convert frequencies in Hz to mels.

    Args:
        freq (float|Tensor): the frequencies in Hz.
        htk (bool, optional): use the HTK formula ``2595 log10(1 + f / 700)`` instead of
            the Slaney scale (linear below 1 kHz, logarithmic above). Default False.

    Returns:
        float|Tensor: the mels, a float for a float input, else a Tensor of ``freq``'s
        shape and dtype.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> round(fw.audio.functional.hz_to_mel(440.0), 4)
            6.6
            >>> fw.audio.functional.hz_to_mel(fw.to_tensor([2000.0])).shape
            [1]
    """
    who = "fw.audio.functional.hz_to_mel"
    if htk:
        if _is_tensor(freq):
            return 2595.0 * fw.log10(1.0 + freq / 700.0)
        return 2595.0 * math.log10(1.0 + _check_number(freq, "freq", who) / 700.0)
    if _is_tensor(freq):
        linear = freq / _F_SP
        # the log branch reads max(freq, 1 kHz) so it is finite (and its gradient zero)
        # where the linear branch is taken
        log = _MIN_LOG_MEL + fw.log(fw.maximum(freq, fw.full_like(freq, _MIN_LOG_HZ))
                                    / _MIN_LOG_HZ + 1e-10) / _LOGSTEP
        return fw.where(freq > _MIN_LOG_HZ, log, linear)
    f = _check_number(freq, "freq", who)
    if f >= _MIN_LOG_HZ:
        return _MIN_LOG_MEL + math.log(f / _MIN_LOG_HZ + 1e-10) / _LOGSTEP
    return f / _F_SP


def mel_to_hz(mel, htk: bool = False):
    """Convert mels to frequencies in Hz (the inverse of `hz_to_mel`).

    Args:
        mel (float|Tensor): the mels.
        htk (bool, optional): use the HTK formula instead of the Slaney scale.
            Default False.

    Returns:
        float|Tensor: the frequencies in Hz, a float for a float input, else a Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> round(fw.audio.functional.mel_to_hz(6.6), 4)
            440.0
    """
    who = "fw.audio.functional.mel_to_hz"
    if htk:
        if _is_tensor(mel):
            return 700.0 * (fw.pow(fw.full_like(mel, 10.0), mel / 2595.0) - 1.0)
        return 700.0 * (10.0 ** (_check_number(mel, "mel", who) / 2595.0) - 1.0)
    if _is_tensor(mel):
        linear = mel * _F_SP
        log = _MIN_LOG_HZ * fw.exp(_LOGSTEP * (mel - _MIN_LOG_MEL))
        return fw.where(mel > _MIN_LOG_MEL, log, linear)
    m = _check_number(mel, "mel", who)
    if m >= _MIN_LOG_MEL:
        return _MIN_LOG_HZ * math.exp(_LOGSTEP * (m - _MIN_LOG_MEL))
    return m * _F_SP


def mel_frequencies(n_mels: int = 64, f_min: float = 0.0, f_max: float = 11025.0,
                    htk: bool = False, dtype: str = "float32"):
    """``n_mels`` frequencies in Hz evenly spaced on the mel scale from ``f_min`` to
    ``f_max``.

    Args:
        n_mels (int, optional): how many frequencies. Default 64.
        f_min (float, optional): the lowest frequency in Hz. Default 0.0.
        f_max (float, optional): the highest frequency in Hz. Default 11025.0.
        htk (bool, optional): use the HTK mel scale. Default False.
        dtype (str, optional): the result's dtype. Default 'float32'.

    Returns:
        Tensor: shape ``[n_mels]``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.functional.mel_frequencies(n_mels=4, f_max=8000.0).shape
            [4]
    """
    who = "fw.audio.functional.mel_frequencies"
    n_mels = _check_positive_int(n_mels, "n_mels", who)
    lo = hz_to_mel(_check_number(f_min, "f_min", who), htk=htk)
    hi = hz_to_mel(_check_number(f_max, "f_max", who), htk=htk)
    return mel_to_hz(fw.linspace(lo, hi, n_mels, dtype=dtype), htk=htk)


def fft_frequencies(sr: int, n_fft: int, dtype: str = "float32"):
    """The centre frequencies in Hz of the ``1 + n_fft // 2`` bins of a real FFT.

    Args:
        sr (int): the sample rate in Hz.
        n_fft (int): the FFT size.
        dtype (str, optional): the result's dtype. Default 'float32'.

    Returns:
        Tensor: shape ``[1 + n_fft // 2]``, from 0 to ``sr / 2``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.functional.fft_frequencies(sr=16000, n_fft=8).numpy().tolist()
            [0.0, 2000.0, 4000.0, 6000.0, 8000.0]
    """
    who = "fw.audio.functional.fft_frequencies"
    _check_positive_int(sr, "sr", who)
    n_fft = _check_positive_int(n_fft, "n_fft", who)
    return fw.linspace(0, float(sr) / 2, 1 + n_fft // 2, dtype=dtype)


def compute_fbank_matrix(sr: int, n_fft: int, n_mels: int = 64, f_min: float = 0.0,
                         f_max: float | None = None, htk: bool = False,
                         norm="slaney", dtype: str = "float32"):
    """The mel filter bank: ``n_mels`` triangular filters over the ``1 + n_fft // 2``
    FFT bins (librosa's ``filters.mel``).

    Args:
        sr (int): the sample rate in Hz.
        n_fft (int): the FFT size.
        n_mels (int, optional): the number of mel bands. Default 64.
        f_min (float, optional): the lowest frequency in Hz. Default 0.0.
        f_max (float, optional): the highest frequency in Hz. Default ``sr / 2``.
        htk (bool, optional): use the HTK mel scale. Default False.
        norm ('slaney'|float, optional): 'slaney' divides each triangle by its width in
            Hz (constant energy per band); a number p normalizes each filter to unit
            p-norm. Default 'slaney'.
        dtype (str, optional): the result's dtype. Default 'float32'.

    Returns:
        Tensor: shape ``[n_mels, 1 + n_fft // 2]``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.functional.compute_fbank_matrix(sr=16000, n_fft=512, n_mels=40).shape
            [40, 257]
    """
    who = "fw.audio.functional.compute_fbank_matrix"
    n_mels = _check_positive_int(n_mels, "n_mels", who)
    if f_max is None:
        f_max = float(sr) / 2
    if not (norm == "slaney" or (isinstance(norm, numbers.Real)
                                 and not isinstance(norm, bool))):
        raise InvalidArgumentError(f"{who}: argument 'norm' must be 'slaney' or a number, "
                                   f"got {norm!r}")
    fftfreqs = fft_frequencies(sr=sr, n_fft=n_fft, dtype=dtype)
    mel_f = mel_frequencies(n_mels + 2, f_min=f_min, f_max=f_max, htk=htk, dtype=dtype)
    fdiff = mel_f[1:] - mel_f[:-1]
    ramps = mel_f.unsqueeze(1) - fftfreqs.unsqueeze(0)
    # filter i rises over [mel_f[i], mel_f[i+1]] and falls over [mel_f[i+1], mel_f[i+2]]
    lower = -ramps[:n_mels] / fdiff[:n_mels].unsqueeze(1)
    upper = ramps[2:n_mels + 2] / fdiff[1:n_mels + 1].unsqueeze(1)
    weights = fw.maximum(fw.zeros_like(lower), fw.minimum(lower, upper))
    if norm == "slaney":
        enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
        weights = weights * enorm.unsqueeze(1)
    else:
        weights = fw.nn.functional.normalize(weights, p=float(norm), axis=-1)
    return weights


def power_to_db(spect, ref_value: float = 1.0, amin: float = 1e-10,
                top_db: float | None = 80.0):
    """Convert a power spectrogram to decibels: ``10 log10(max(spect, amin) / ref_value)``,
    floored at ``max - top_db``.

    Args:
        spect (Tensor): a power spectrogram (any shape).
        ref_value (float, optional): the reference power (0 dB). Default 1.0.
        amin (float, optional): the floor applied before the log (> 0). Default 1e-10.
        top_db (float, optional): the dynamic range kept below the maximum (over the whole
            tensor); None keeps everything. Default 80.0.

    Returns:
        Tensor: ``spect``'s shape and dtype.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.to_tensor([1.0, 10.0, 100.0])
            >>> fw.audio.functional.power_to_db(x).numpy().round(4).tolist()
            [0.0, 10.0, 20.0]
    """
    who = "fw.audio.functional.power_to_db"
    if not _is_tensor(spect):
        raise InvalidTypeError(f"{who}: argument 'spect' must be a Tensor, got "
                               f"{type(spect).__name__}")
    if amin <= 0:
        raise InvalidArgumentError(f"{who}: argument 'amin' must be > 0, got {amin}")
    if ref_value <= 0:
        raise InvalidArgumentError(f"{who}: argument 'ref_value' must be > 0, got "
                                   f"{ref_value}")
    if top_db is not None and top_db < 0:
        raise InvalidArgumentError(f"{who}: argument 'top_db' must be >= 0 or None, got "
                                   f"{top_db}")
    log_spec = 10.0 * fw.log10(fw.maximum(spect, fw.full_like(spect, amin)))
    log_spec = log_spec - 10.0 * math.log10(max(ref_value, amin))
    if top_db is not None:
        # the floor follows the maximum, gradient included (as Paddle's)
        log_spec = fw.maximum(log_spec, fw.zeros_like(log_spec) + (log_spec.max() - top_db))
    return log_spec


def create_dct(n_mfcc: int, n_mels: int, norm: str | None = "ortho",
               dtype: str = "float32"):
    """The DCT-II matrix that turns ``n_mels`` log-mel bands into ``n_mfcc`` cepstral
    coefficients (``mfcc = dct.T @ log_mel``).

    Args:
        n_mfcc (int): the number of coefficients.
        n_mels (int): the number of mel bands.
        norm ('ortho'|None, optional): 'ortho' makes the basis orthonormal; None is the
            unscaled DCT-II times 2. Default 'ortho'.
        dtype (str, optional): the result's dtype. Default 'float32'.

    Returns:
        Tensor: shape ``[n_mels, n_mfcc]``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.functional.create_dct(n_mfcc=13, n_mels=40).shape
            [40, 13]
    """
    who = "fw.audio.functional.create_dct"
    n_mfcc = _check_positive_int(n_mfcc, "n_mfcc", who)
    n_mels = _check_positive_int(n_mels, "n_mels", who)
    if norm not in ("ortho", None):
        raise InvalidArgumentError(f"{who}: argument 'norm' must be 'ortho' or None, got "
                                   f"{norm!r}")
    n = fw.arange(n_mels, dtype=dtype)
    k = fw.arange(n_mfcc, dtype=dtype).unsqueeze(1)
    dct = fw.cos(math.pi / float(n_mels) * (n + 0.5) * k)  # [n_mfcc, n_mels]
    if norm is None:
        dct = dct * 2.0
    else:
        scale = fw.full([n_mfcc, 1], math.sqrt(2.0 / n_mels), dtype=dtype)
        scale[0] = math.sqrt(1.0 / n_mels)
        dct = dct * scale
    return dct.T
