"""``fw.signal``: Paddle's ``paddle.signal`` — the short-time Fourier transform `stft` and
its inverse `istft`.

Both are compositions of fw ops (gather for framing and reflect padding, the
``fft.*`` ops, pad/reshape/sum for overlap-add), so they run eagerly, trace into
programs and differentiate through fw.autograd like any other fw code.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([0.0, 1.0, 0.0, -1.0] * 4)
    >>> fw.signal.stft(x, n_fft=8).shape
    [5, 9]
"""

from __future__ import annotations

import numpy as np

from fw.core import FUNCTIONS as _F
from fw.core.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["stft", "istft"]


def _fw():
    import fw

    return fw


def _check_int(v, name, who):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise InvalidTypeError(f"{who}: '{name}' must be an int, got {type(v).__name__}")
    return int(v)


def _gather_last(x, idx):
    """x[..., idx] for an integer NumPy index array of any shape (a differentiable
    gather on the last axis)."""
    fw = _fw()
    flat = fw.gather(x, fw.to_tensor(np.asarray(idx, np.int64).reshape(-1)), axis=x.dim() - 1)
    return flat.reshape(list(x.shape[:-1]) + list(np.shape(idx)))


def _pad_window(window, win_length, n_fft):
    if win_length < n_fft:
        fw = _fw()
        left = (n_fft - win_length) // 2
        right = n_fft - win_length - left
        z = lambda k: fw.zeros([k], dtype=window.dtype)  # noqa: E731
        window = fw.concat([z(left), window, z(right)])
    return window


def _window(window, win_length, n_fft, dtype, who):
    fw = _fw()
    if window is None:
        window = fw.ones([win_length], dtype=dtype)
    elif len(window.shape) != 1 or window.shape[0] != win_length:
        raise InvalidArgumentError(f"{who}: expected a 1-D window of size win_length "
                                   f"({win_length}), got shape {list(window.shape)}")
    return _pad_window(window, win_length, n_fft)


def stft(x, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, name=None):
    r"""The short-time Fourier transform: the DFT of windowed frames of ``x``,
    :math:`X[f, t] = \sum_n w[n] x[t \cdot hop + n] e^{-2\pi i f n / n_{fft}}`.

    Args:
        x (Tensor): a 1-D ``[seq_length]`` or 2-D ``[batch, seq_length]`` signal, real
            (float32/float64) or complex.
        n_fft (int): the frame (and DFT) size, ``0 < n_fft <= seq_length``.
        hop_length (int, optional): the step between frames. Default ``n_fft // 4``.
        win_length (int, optional): the window size, ``<= n_fft`` (the window is
            zero-padded to ``n_fft`` in the middle). Default ``n_fft``.
        window (Tensor, optional): a 1-D window of size ``win_length``. Default ones.
        center (bool, optional): pad ``x`` by ``n_fft // 2`` on both sides so frame
            ``t`` is centred at ``t * hop_length``. Default True.
        pad_mode (str, optional): 'reflect' or 'constant' (zeros), for ``center``.
        normalized (bool, optional): scale by ``1/sqrt(n_fft)`` (the "ortho" norm).
        onesided (bool, optional): keep only the ``n_fft // 2 + 1`` non-negative
            frequencies of a real input. Default: True for real input and window.
        name (str, optional): unused (Paddle's name argument).

    Returns:
        Tensor: complex, ``[batch?, freq, num_frames]`` with ``num_frames = 1 +
        (padded_length - n_fft) // hop_length``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.ones([2, 32])
            >>> y = fw.signal.stft(x, n_fft=16, hop_length=4, center=False)
            >>> y.shape, y.dtype
            ([2, 9, 5], fw.complex64)
    """
    fw = _fw()
    who = "stft"
    if x.dim() not in (1, 2):
        raise InvalidArgumentError(f"{who}: x must be 1-D or 2-D, got shape {list(x.shape)}")
    squeeze = x.dim() == 1
    if squeeze:
        x = x.unsqueeze(0)
    n_fft = _check_int(n_fft, "n_fft", who)
    hop_length = n_fft // 4 if hop_length is None else _check_int(hop_length, "hop_length",
                                                                   who)
    win_length = n_fft if win_length is None else _check_int(win_length, "win_length", who)
    if hop_length <= 0:
        raise InvalidArgumentError(f"{who}: hop_length must be > 0, got {hop_length}")
    if not 0 < n_fft <= x.shape[-1]:
        raise InvalidArgumentError(f"{who}: n_fft must be in (0, seq_length ({x.shape[-1]})], "
                                   f"got {n_fft}")
    if not 0 < win_length <= n_fft:
        raise InvalidArgumentError(f"{who}: win_length must be in (0, n_fft ({n_fft})], got "
                                   f"{win_length}")
    win = _window(window, win_length, n_fft, x.dtype, who)
    if center:
        if pad_mode not in ("reflect", "constant"):
            raise InvalidArgumentError(f"{who}: pad_mode must be 'reflect' or 'constant', got "
                                       f"{pad_mode!r}")
        p = n_fft // 2
        n = x.shape[-1]
        if pad_mode == "reflect":
            if p >= n:
                raise InvalidArgumentError(f"{who}: reflect padding by {p} needs more than {p} "
                                           f"samples, got {n}")
            idx = np.concatenate([np.arange(p, 0, -1), np.arange(n),
                                  np.arange(n - 2, n - 2 - p, -1)])
            x = _gather_last(x, idx)
        else:
            z = fw.zeros([x.shape[0], p], dtype=x.dtype)
            x = fw.concat([z, x, z], axis=-1)
    n = x.shape[-1]
    num_frames = 1 + (n - n_fft) // hop_length
    idx = hop_length * np.arange(num_frames)[:, None] + np.arange(n_fft)[None, :]
    frames = _gather_last(x, idx) * win  # [B, T, n_fft]
    is_c = fw.is_complex(frames)
    if onesided is None:
        onesided = not is_c
    if is_c and onesided:
        raise InvalidArgumentError(f"{who}: onesided must be False for a complex input or "
                                   f"window")
    norm = "ortho" if normalized else "backward"
    if not is_c and onesided:
        out = _F["fft.rfft"](frames, axis=-1, norm=norm)
    else:
        out = _F["fft.fft"](frames, axis=-1, norm=norm)
    out = out.transpose([0, 2, 1])
    return out.squeeze(0) if squeeze else out


def _overlap_add(frames, hop):
    """Sum frames [B, T, n] placed ``hop`` apart into [B, n + hop (T - 1)], with pads,
    reshapes and one sum (so it differentiates): frame t's chunk k (of size hop)
    lands in output chunk t + k."""
    fw = _fw()
    b, t, n = frames.shape
    r = -(-n // hop)
    if r * hop != n:
        frames = fw.concat([frames, fw.zeros([b, t, r * hop - n], dtype=frames.dtype)], -1)
    chunks = frames.reshape([b, t, r, hop])
    parts = []
    for k in range(r):
        c = chunks[:, :, k, :]
        pre = fw.zeros([b, k, hop], dtype=frames.dtype)
        post = fw.zeros([b, r - 1 - k, hop], dtype=frames.dtype)
        parts.append(fw.concat([pre, c, post], axis=1))
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out.reshape([b, (t + r - 1) * hop])[:, :n + hop * (t - 1)]


def istft(x, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=True, length=None, return_complex=False, name=None):
    r"""The inverse short-time Fourier transform (least-squares overlap-add of the inverse
    DFTs of the frames, divided by the overlap-added squared window).

    Args:
        x (Tensor): a complex ``[freq, num_frames]`` or ``[batch, freq, num_frames]``
            spectrogram, as `stft` returns.
        n_fft (int): the DFT size.
        hop_length (int, optional): the step between frames. Default ``n_fft // 4``.
        win_length (int, optional): the window size. Default ``n_fft``.
        window (Tensor, optional): the window `stft` used. Default ones.
        center (bool, optional): whether `stft` padded the signal. Default True.
        normalized (bool, optional): whether `stft` was normalized. Default False.
        onesided (bool, optional): whether ``x`` holds ``n_fft // 2 + 1`` frequencies.
            Default True.
        length (int, optional): the output length (trims or zero-pads). Default: all.
        return_complex (bool, optional): return a complex signal (needs
            ``onesided=False``). Default False.
        name (str, optional): unused (Paddle's name argument).

    Returns:
        Tensor: ``[batch?, length]``.

    Raises:
        ValueError: when the window violates the nonzero overlap-add (NOLA) condition.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.to_tensor([float(i % 5) for i in range(32)])
            >>> y = fw.signal.istft(fw.signal.stft(x, 8), 8, length=32)
            >>> bool((y - x).abs().max() < 1e-5)
            True
    """
    fw = _fw()
    who = "istft"
    if x.dim() not in (2, 3):
        raise InvalidArgumentError(f"{who}: x must be 2-D or 3-D, got shape {list(x.shape)}")
    if not fw.is_complex(x):
        raise InvalidTypeError(f"{who}: x must be a complex spectrogram, got {x.dtype.name}")
    squeeze = x.dim() == 2
    if squeeze:
        x = x.unsqueeze(0)
    n_fft = _check_int(n_fft, "n_fft", who)
    hop_length = n_fft // 4 if hop_length is None else _check_int(hop_length, "hop_length",
                                                                   who)
    win_length = n_fft if win_length is None else _check_int(win_length, "win_length", who)
    if not 0 < hop_length <= win_length:
        raise InvalidArgumentError(f"{who}: hop_length must be in (0, win_length "
                                   f"({win_length})], got {hop_length}")
    if not 0 < win_length <= n_fft:
        raise InvalidArgumentError(f"{who}: win_length must be in (0, n_fft ({n_fft})], got "
                                   f"{win_length}")
    n_frames, fft_size = x.shape[-1], x.shape[-2]
    if x.size == 0:
        raise InvalidArgumentError(f"{who}: x must not be empty")
    want = n_fft // 2 + 1 if onesided else n_fft
    if fft_size != want:
        raise InvalidArgumentError(f"{who}: x has {fft_size} frequencies; expected {want} "
                                   f"(n_fft={n_fft}, onesided={onesided})")
    real_dt = "float32" if x.dtype == fw.complex64 else "float64"
    win = _window(window, win_length, n_fft, real_dt, who)
    frames = x.transpose([0, 2, 1])  # [B, T, freq]
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise InvalidArgumentError(f"{who}: return_complex=True needs onesided=False")
        out = _F["fft.ifft"](frames, axis=-1, norm=norm)
    else:
        if fw.is_complex(win):
            raise InvalidTypeError(f"{who}: the window must be real when return_complex is "
                                   f"False")
        if not onesided:
            frames = frames[:, :, :n_fft // 2 + 1]
        out = _F["fft.irfft"](frames, n=n_fft, axis=-1, norm=norm)
    out = _overlap_add(out * win, hop_length)
    # the envelope (overlap-added squared window) in fw ops: a window that requires
    # grad gets its full gradient
    wsq = (win * win).astype(real_dt)
    env = _overlap_add(wsq.reshape([1, 1, n_fft]).tile([1, n_frames, 1]), hop_length)[0]
    start = n_fft // 2 if center else 0
    if length is None:
        stop = env.shape[0] - (n_fft // 2 if center else 0)
    else:
        stop = start + _check_int(length, "length", who)
    out = out[:, start:stop]
    env = env[start:stop]
    if length is not None and out.shape[-1] < length:
        # fewer samples than asked for: zero-pad (the envelope pads with ones)
        pad = length - out.shape[-1]
        out = fw.concat([out, fw.zeros([out.shape[0], pad], dtype=out.dtype)], -1)
        env = fw.concat([env, fw.ones([pad], dtype=env.dtype)])
    if env.shape[0] and float(env.abs().min()) < 1e-11:
        raise ValueError("istft: the window fails the nonzero overlap-add (NOLA) condition "
                         "(its overlap-added square is ~0 somewhere), so the signal cannot "
                         "be recovered; see scipy.signal.check_NOLA")
    out = out / env
    return out.squeeze(0) if squeeze else out
