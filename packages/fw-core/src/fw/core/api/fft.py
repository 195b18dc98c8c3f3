"""The Paddle-signature functions of the fft ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.fft`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ops._api import public
from fw.core.ops.fft import _c2c, _c2r, _int_seq, _norm_value, _r2c, fftfreq_op, fftshift_op
from fw.core.tensor import Tensor


def _one_d(fname, n, axis, norm):
    where = f"{fname}: "
    if n is not None:
        n = _int_seq(n, "n", where)
        if len(n) != 1:
            raise InvalidArgumentError(f"{where}'n' must be one int, got {list(n)}")
        if n[0] < 1:
            raise InvalidArgumentError(f"{where}'n' must be positive, got {n[0]}")
    if isinstance(axis, Tensor):
        axis = axis.item()
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise InvalidTypeError(f"{where}'axis' must be an int, got {type(axis).__name__}")
    return n, (int(axis),), _norm_value(norm, where)


@public("fft.fft")
def fft(x, n=None, axis=-1, norm="backward", name=None):
    """One-dimensional discrete Fourier transform along `axis`.

    Args:
        x (Tensor): The input tensor (real input is treated as complex with zero imaginary
            part).
        n (int, optional): The transform length; x is cropped or zero-padded to n along axis.
            None keeps its size. Default: None.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): The scaling: "backward" (none forward, 1/n on the inverse),
            "ortho" (1/sqrt(n) both ways) or "forward" (1/n forward). Default: 'backward'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the complex transform (complex64 for float32/complex64 input, complex128 for
            64-bit).

    Examples:
        >>> import fw
        >>> fw.fft.fft(fw.to_tensor([1., 0., 0., 0.])).tolist()
        [(1+0j), (1+0j), (1+0j), (1+0j)]
    """
    n, axes, norm = _one_d("fft.fft", n, axis, norm)
    return _c2c(x, n, axes, norm, True)


@public("fft.ifft")
def ifft(x, n=None, axis=-1, norm="backward", name=None):
    """Inverse of `fft.fft` along `axis` (scaled by 1/n with norm="backward").

    Args:
        x (Tensor): The input tensor (real input is treated as complex with zero imaginary
            part).
        n (int, optional): The transform length; x is cropped or zero-padded to n along axis.
            None keeps its size. Default: None.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): The scaling: "backward" (none forward, 1/n on the inverse),
            "ortho" (1/sqrt(n) both ways) or "forward" (1/n forward). Default: 'backward'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the complex inverse transform.

    Examples:
        >>> import fw
        >>> fw.fft.ifft(fw.to_tensor([4., 0., 0., 0.])).tolist()
        [(1+0j), (1+0j), (1+0j), (1+0j)]
    """
    n, axes, norm = _one_d("fft.ifft", n, axis, norm)
    return _c2c(x, n, axes, norm, False)


@public("fft.rfft")
def rfft(x, n=None, axis=-1, norm="backward", name=None):
    """Fourier transform of a real signal, keeping the n // 2 + 1 non-negative
    frequencies.

    Args:
        x (Tensor): A real input tensor.
        n (int, optional): The transform length; x is cropped or zero-padded to n along axis.
            None keeps its size. Default: None.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): The scaling: "backward" (none forward, 1/n on the inverse),
            "ortho" (1/sqrt(n) both ways) or "forward" (1/n forward). Default: 'backward'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the complex one-sided transform: n // 2 + 1 entries along axis.

    Examples:
        >>> import fw
        >>> fw.fft.rfft(fw.to_tensor([0., 1., 0., 0.])).shape
        [3]
    """
    n, axes, norm = _one_d("fft.rfft", n, axis, norm)
    return _r2c("fft.rfft", x, n, axes, norm, True)


@public("fft.irfft")
def irfft(x, n=None, axis=-1, norm="backward", name=None):
    """Inverse of `fft.rfft`: a real signal of length n (default 2 * (m - 1)
    for an input of length m along `axis`).

    Args:
        x (Tensor): The one-sided complex spectrum.
        n (int, optional): The length of the real output; None: 2 * (m - 1) for m input entries.
            Default: None.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): The scaling: "backward" (none forward, 1/n on the inverse),
            "ortho" (1/sqrt(n) both ways) or "forward" (1/n forward). Default: 'backward'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the real signal, n entries along axis.

    Examples:
        >>> import fw
        >>> fw.fft.irfft(fw.fft.rfft(fw.ones([5])), n=5).shape
        [5]
    """
    n, axes, norm = _one_d("fft.irfft", n, axis, norm)
    return _c2r(x, n, axes, norm, False)


@public("fft.hfft")
def hfft(x, n=None, axis=-1, norm="backward", name=None):
    """Fourier transform of a Hermitian-symmetric signal given by its first
    half; the result is real of length n (default 2 * (m - 1)).

    Args:
        x (Tensor): The first half of a Hermitian-symmetric signal.
        n (int, optional): The length of the real output; None: 2 * (m - 1). Default: None.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): The scaling: "backward" (none forward, 1/n on the inverse),
            "ortho" (1/sqrt(n) both ways) or "forward" (1/n forward). Default: 'backward'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the real transform, n entries along axis.

    Examples:
        >>> import fw
        >>> fw.fft.hfft(fw.to_tensor([1., 0., 0.])).shape
        [4]
    """
    n, axes, norm = _one_d("fft.hfft", n, axis, norm)
    return _c2r(x, n, axes, norm, True)


@public("fft.ihfft")
def ihfft(x, n=None, axis=-1, norm="backward", name=None):
    """Inverse of `fft.hfft`: the one-sided inverse transform of a real signal.

    Args:
        x (Tensor): A real input tensor.
        n (int, optional): The transform length; x is cropped or zero-padded to n along axis.
            None keeps its size. Default: None.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): The scaling: "backward" (none forward, 1/n on the inverse),
            "ortho" (1/sqrt(n) both ways) or "forward" (1/n forward). Default: 'backward'.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the complex one-sided inverse transform: n // 2 + 1 entries along axis.

    Examples:
        >>> import fw
        >>> fw.fft.ihfft(fw.ones([4])).shape
        [3]
    """
    n, axes, norm = _one_d("fft.ihfft", n, axis, norm)
    return _r2c("fft.ihfft", x, n, axes, norm, False)


@public("fft.fftfreq")
def fftfreq(n, d=1.0, dtype=None, name=None):
    """The sample frequencies ``[0, 1, …, -1] / (d * n)`` of an n-point DFT.

    Args:
        n (int): The transform length.
        d (float, optional): The sample spacing (1 / sample rate). Default: 1.0.
        dtype (str|fw.dtype, optional): The dtype; None: the default float dtype. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the n sample frequencies [0, 1, ..., n/2-1, -n/2, ..., -1] / (d * n).

    Examples:
        >>> import fw
        >>> fw.fft.fftfreq(4).tolist()
        [0.0, 0.25, -0.5, -0.25]
    """
    return invoke(fftfreq_op, [], {"n": n, "d": d, "onesided": False, "dtype": dtype})


@public("fft.rfftfreq")
def rfftfreq(n, d=1.0, dtype=None, name=None):
    """The n // 2 + 1 non-negative sample frequencies of an n-point real DFT.

    Args:
        n (int): The transform length.
        d (float, optional): The sample spacing (1 / sample rate). Default: 1.0.
        dtype (str|fw.dtype, optional): The dtype; None: the default float dtype. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the n // 2 + 1 non-negative sample frequencies.

    Examples:
        >>> import fw
        >>> fw.fft.rfftfreq(4).tolist()
        [0.0, 0.25, 0.5]
    """
    return invoke(fftfreq_op, [], {"n": n, "d": d, "onesided": True, "dtype": dtype})


@public("fft.fftshift")
def fftshift(x, axes=None, name=None):
    """Move the zero-frequency term to the centre of `axes` (all when None).

    Args:
        x (Tensor): A spectrum.
        axes (int|list|tuple, optional): The axes to shift; None: all. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: x with the zero frequency moved to the centre.

    Examples:
        >>> import fw
        >>> fw.fft.fftshift(fw.fft.fftfreq(4)).tolist()
        [-0.5, -0.25, 0.0, 0.25]
    """
    return invoke(fftshift_op, [x], {"axes": axes, "inverse": False})


@public("fft.ifftshift")
def ifftshift(x, axes=None, name=None):
    """Inverse of `fft.fftshift`.

    Args:
        x (Tensor): A centred spectrum.
        axes (int|list|tuple, optional): The axes to shift; None: all. Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the inverse of fftshift.

    Examples:
        >>> import fw
        >>> fw.fft.ifftshift(fw.to_tensor([-0.5, -0.25, 0.0, 0.25])).tolist()
        [0.0, 0.25, -0.5, -0.25]
    """
    return invoke(fftshift_op, [x], {"axes": axes, "inverse": True})
