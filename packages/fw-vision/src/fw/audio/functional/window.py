"""Window functions: Paddle's ``paddle.audio.functional.get_window``, whose windows are
SciPy's (``scipy.signal.windows``): the same names, parameters and the ``sym`` /
``fftbins`` convention (a periodic window of length M is the symmetric one of length
M + 1 without its last sample).

Windows are constants (no gradient), so they are computed in float64 NumPy and cast
once."""

from __future__ import annotations

import numbers

import numpy as np

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["get_window"]


def _general_cosine(m, a):
    fac = np.linspace(-np.pi, np.pi, m)
    w = np.zeros(m)
    for k, ak in enumerate(a):
        w += ak * np.cos(k * fac)
    return w


def _general_hamming(m, alpha):
    return _general_cosine(m, [alpha, 1.0 - alpha])


def _hann(m):
    return _general_cosine(m, [0.5, 0.5])


def _hamming(m):
    return _general_cosine(m, [0.54, 0.46])


def _blackman(m):
    return _general_cosine(m, [0.42, 0.50, 0.08])


def _nuttall(m):
    return _general_cosine(m, [0.3635819, 0.4891775, 0.1365995, 0.0106411])


def _bartlett(m):
    n = np.arange(m)
    return np.where(n <= (m - 1) / 2.0, 2.0 * n / (m - 1), 2.0 - 2.0 * n / (m - 1))


def _triang(m):
    n = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        w = (2 * n - 1.0) / m
        return np.concatenate([w, w[::-1]])
    w = 2 * n / (m + 1.0)
    return np.concatenate([w, w[-2::-1]])


def _cosine(m):
    return np.sin(np.pi / m * (np.arange(m) + 0.5))


def _bohman(m):
    fac = np.abs(np.linspace(-1, 1, m)[1:-1])
    w = (1 - fac) * np.cos(np.pi * fac) + 1.0 / np.pi * np.sin(np.pi * fac)
    return np.concatenate([[0.0], w, [0.0]])


def _kaiser(m, beta):
    n = np.arange(m)
    alpha = (m - 1) / 2.0
    return np.i0(beta * np.sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / np.i0(float(beta))


def _gaussian(m, std):
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.exp(-n ** 2 / (2 * std * std))


def _general_gaussian(m, p, sig):
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.exp(-0.5 * np.abs(n / sig) ** (2 * p))


def _exponential(m, center=None, tau=1.0):
    if center is None:
        center = (m - 1) / 2
    return np.exp(-np.abs(np.arange(m) - center) / tau)


def _tukey(m, alpha=0.5):
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1.0:
        return _hann(m)
    n = np.arange(m)
    width = int(np.floor(alpha * (m - 1) / 2.0))
    n1, n2, n3 = n[:width + 1], n[width + 1:m - width - 1], n[m - width - 1:]
    w1 = 0.5 * (1 + np.cos(np.pi * (-1 + 2.0 * n1 / alpha / (m - 1))))
    w3 = 0.5 * (1 + np.cos(np.pi * (-2.0 / alpha + 1 + 2.0 * n3 / alpha / (m - 1))))
    return np.concatenate([w1, np.ones(n2.shape), w3])


def _taylor(m, nbar=4, sll=30, norm=True):
    # Taylor's window (Doerry 2017, as scipy.signal.windows.taylor)
    b = 10 ** (sll / 20)
    a = np.arccosh(b) / np.pi
    s2 = nbar ** 2 / (a ** 2 + (nbar - 0.5) ** 2)
    ma = np.arange(1, nbar)
    fm = np.empty(nbar - 1)
    signs = np.empty_like(ma)
    signs[::2] = 1
    signs[1::2] = -1
    m2 = ma * ma
    for mi in range(len(ma)):
        numer = signs[mi] * np.prod(1 - m2[mi] / s2 / (a ** 2 + (ma - 0.5) ** 2))
        denom = 2 * np.prod(1 - m2[mi] / m2[:mi]) * np.prod(1 - m2[mi] / m2[mi + 1:])
        fm[mi] = numer / denom

    def w_of(n):
        return 1 + 2 * np.dot(fm, np.cos(2 * np.pi * ma[:, None] * (n - m / 2.0 + 0.5) / m))

    w = w_of(np.arange(m))
    if norm:
        w = w / w_of((m - 1) / 2)
    return w


# name -> (function, number of required parameters, number of optional parameters)
_WINDOWS = {
    "hamming": (_hamming, 0, 0), "hann": (_hann, 0, 0), "blackman": (_blackman, 0, 0),
    "nuttall": (_nuttall, 0, 0), "bartlett": (_bartlett, 0, 0), "triang": (_triang, 0, 0),
    "cosine": (_cosine, 0, 0), "bohman": (_bohman, 0, 0),
    "kaiser": (_kaiser, 1, 0), "gaussian": (_gaussian, 1, 0),
    "general_gaussian": (_general_gaussian, 2, 0), "exponential": (_exponential, 0, 2),
    "tukey": (_tukey, 0, 1), "taylor": (_taylor, 0, 3),
    "general_cosine": (_general_cosine, 1, 0), "general_hamming": (_general_hamming, 1, 0),
}


def get_window(window, win_length: int, fftbins: bool = True, dtype: str = "float64"):
    """A window of ``win_length`` samples, by name (as ``scipy.signal.get_window``).

    Args:
        window (str|tuple): the window's name — 'hamming', 'hann', 'blackman',
            'nuttall', 'bartlett', 'triang', 'cosine', 'bohman', 'tukey', 'taylor' — or a
            tuple of a name and its parameters, as Paddle required for
            ``('kaiser', beta)``, ``('gaussian', std)``,
            ``('general_gaussian', p, sig)``, ``('general_cosine', coefficients)``,
            ``('general_hamming', alpha)``, ``('exponential', center, tau=1.0)``
            (center None: the middle).
        win_length (int): the number of samples.
        fftbins (bool, optional): True gives the periodic window (for spectral
            analysis), False the symmetric one (for filter design). Default True.
        dtype (str, optional): the result's dtype. Default 'float64'.

    Returns:
        Tensor: shape ``[win_length]``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.functional.get_window('hann', 4).numpy().tolist()
            [0.0, 0.5, 1.0, 0.5]
            >>> fw.audio.functional.get_window(('kaiser', 14.0), 16).shape
            [16]
    """
    who = "fw.audio.functional.get_window"
    args = ()
    if isinstance(window, tuple) and window and isinstance(window[0], str):
        name, args = window[0], tuple(window[1:])
    elif isinstance(window, str):
        name = window
        if name == "exponential":  # Paddle asks for the tuple here too
            raise InvalidArgumentError(f"{who}: the 'exponential' window takes parameters: "
                                       f"pass a tuple ('exponential', center, tau)")
    else:
        raise InvalidTypeError(f"{who}: argument 'window' must be a str or a tuple "
                               f"(name, *params), got {window!r}")
    if name not in _WINDOWS:
        raise InvalidArgumentError(f"{who}: unknown window {name!r}; known: "
                                   f"{sorted(_WINDOWS)}")
    fn, n_req, n_opt = _WINDOWS[name]
    if not n_req <= len(args) <= n_req + n_opt:
        raise InvalidArgumentError(f"{who}: window {name!r} takes {n_req}"
                                   f"{f' to {n_req + n_opt}' if n_opt else ''} parameter(s) "
                                   f"(pass a tuple), got {len(args)}: {window!r}")
    if isinstance(win_length, bool) or not isinstance(win_length, numbers.Integral) \
            or win_length < 0:
        raise InvalidArgumentError(f"{who}: argument 'win_length' must be an int >= 0, got "
                                   f"{win_length!r}")
    m = int(win_length)
    if m <= 1:
        w = np.ones(m)
    else:
        # periodic = the symmetric window one sample longer, truncated
        w = fn(m + 1 if fftbins else m, *args)[:m]
    return fw.to_tensor(np.asarray(w, np.float64), dtype=dtype)
