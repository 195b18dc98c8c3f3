"""Discrete Fourier transforms: Paddle's ``paddle.fft``.

Three ops carry every transform, so fw-autograd needs three VJP rules:

- ``fft_c2c``: complex to complex (fft, ifft, fft2, ifft2, fftn, ifftn);
- ``fft_r2c``: real to one-sided complex (rfft*, and ihfft* with forward=False);
- ``fft_c2r``: one-sided complex to real (irfft*, and hfft* with forward=True).

Each takes ``axes``, ``norm`` ("backward", "ortho", "forward"), ``forward`` and
``s``: the signal lengths along ``axes``. For c2c and r2c the input is
zero-padded or cropped to ``s`` before the transform; for c2r ``s`` is the
output length (the input's last axis is resized to ``s[-1] // 2 + 1``, the other
axes to ``s``), and None means ``2 * (m - 1)`` on the last axis. Keeping the
resizing inside the ops keeps the edge handling of n/s in one place.

Dtypes follow Paddle: float32 -> complex64, float64 -> complex128 (NumPy's
results are cast back), integers use the default float dtype, and c2r of
complex64 gives float32. The public functions (``fw.fft.fft`` …) are thin
wrappers that convert the input dtype and spell n/axis as s/axes.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.core import Value
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._api import call, public
from fw.core.ops._infer import complex_of, norm_axis, real_of, shp
from fw.core.ops._registry import defop
from fw.core.tensor import Tensor, to_tensor

_NORMS = ("backward", "ortho", "forward")
# an inverse transform with norm n scales like the forward one with _SWAP[n]
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# ---------------------------------------------------------------- attributes
def _norm_value(norm, where):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise InvalidArgumentError(f"{where}'norm' must be one of {_NORMS}, got {norm!r}")
    return norm


def _int_seq(v, arg, where):
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),)
    if not isinstance(v, (list, tuple)):
        raise InvalidTypeError(f"{where}'{arg}' must be a sequence of ints, got "
                               f"{type(v).__name__}")
    out = []
    for a in v:
        if isinstance(a, Tensor):
            a = a.item()
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise InvalidTypeError(f"{where}'{arg}' must contain ints, got {v!r}")
        out.append(int(a))
    return tuple(out)


def _fft_canon(attrs):
    axes = _int_seq(attrs["axes"], "axes", "")
    s = attrs["s"]
    if s is not None:
        s = _int_seq(s, "s", "")
        if len(s) != len(axes):
            raise InvalidArgumentError(f"'s' {list(s)} and 'axes' {list(axes)} must have the "
                                       f"same length")
        bad = [n for n in s if n < 1]
        if bad:
            raise InvalidArgumentError(f"the signal lengths 's' (or 'n') must be positive, got "
                                       f"{list(s)}")
    return {"axes": axes, "norm": _norm_value(attrs["norm"], ""),
            "forward": bool(attrs["forward"]), "s": s}


def _axes_of(shape, axes):
    nd = len(shape)
    out = tuple(norm_axis(a, nd, "axes") for a in axes)
    if len(set(out)) != len(out):
        raise InvalidArgumentError(f"'axes' {list(axes)} repeats an axis")
    return out


_KIND_WORDS = {_dt._COMPLEX: "complex", _dt._FLOAT: "a real floating tensor"}


def _checked_axes(x, d, kind, axes):
    """The input check every infer and reference function starts with: x's dtype `d`
    (an fw dtype) must be of `kind`; returns x's normalised `axes`."""
    if d.kind != kind:
        raise InvalidTypeError(f"x must be {_KIND_WORDS[kind]}, got {d.name}")
    return _axes_of(x.shape, axes)


def _resized_shape(x, ax, s):
    """x's shape with the axes `ax` resized to `s` (c2c and r2c inputs); none may be
    empty."""
    shape = list(x.shape)
    if s is not None:
        for a, n in zip(ax, s):
            shape[a] = n
    for a in ax:
        if shape[a] == 0:
            raise InvalidArgumentError(f"the transformed axis {a} of x with shape "
                                       f"{shp(x.shape)} is empty")
    return shape


def _defop_fft(name, forward, infer, reference, doc):
    """One of the three transform ops: same attributes and canonicalisation."""
    return defop(name, ("x",), {"axes": (-1,), "norm": "backward", "forward": forward,
                                "s": None},
                 infer=infer, reference=reference, canon=_fft_canon, promote=None,
                 family="fft", api=False, method=False, doc=doc)


# ---------------------------------------------------------------- c2c
def _c2c_infer(x, axes=(-1,), norm="backward", forward=True, s=None):
    ax = _checked_axes(x, x.dtype, _dt._COMPLEX, axes)
    return TensorType(_resized_shape(x, ax, s), x.dtype)


def _c2c_ref(x, axes=(-1,), norm="backward", forward=True, s=None):
    ax = _checked_axes(x, _dt.from_numpy(x.dtype), _dt._COMPLEX, axes)
    f = np.fft.fftn if forward else np.fft.ifftn
    return f(x, s=s, axes=ax, norm=norm).astype(x.dtype, copy=False)


fft_c2c_op = _defop_fft("fft_c2c", True, _c2c_infer, _c2c_ref,
                        "Complex-to-complex DFT over `axes` (inverse when forward=False), the "
                        "input resized to `s` first.")


# ---------------------------------------------------------------- r2c
def _r2c_infer(x, axes=(-1,), norm="backward", forward=True, s=None):
    ax = _checked_axes(x, x.dtype, _dt._FLOAT, axes)
    shape = _resized_shape(x, ax, s)
    if ax:
        last = shape[ax[-1]]
        shape[ax[-1]] = DYN if last == DYN else last // 2 + 1
    return TensorType(shape, complex_of(x.dtype))


def _r2c_ref(x, axes=(-1,), norm="backward", forward=True, s=None):
    d = _dt.from_numpy(x.dtype)
    ax = _checked_axes(x, d, _dt._FLOAT, axes)
    a = x.astype(np.float32) if d in (_dt.float16, _dt.bfloat16) else x
    if forward:
        r = np.fft.rfftn(a, s=s, axes=ax, norm=norm)
    else:  # the one-sided inverse of a real signal: conj of the forward one, rescaled
        r = np.conj(np.fft.rfftn(a, s=s, axes=ax, norm=_SWAP[norm]))
    return r.astype(complex_of(d).np, copy=False)


fft_r2c_op = _defop_fft("fft_r2c", True, _r2c_infer, _r2c_ref,
                        "Real-to-complex DFT keeping the non-negative frequencies of the last "
                        "axis (the inverse transform, as ihfft, when forward=False).")


# ---------------------------------------------------------------- c2r
def _c2r_sizes(shape, ax, s):
    if s is not None:
        return tuple(s)
    sizes = [shape[a] for a in ax]
    if sizes:
        m = sizes[-1]
        sizes[-1] = DYN if m == DYN else 2 * (m - 1)
    return tuple(sizes)


def _c2r_infer(x, axes=(-1,), norm="backward", forward=False, s=None):
    ax = _checked_axes(x, x.dtype, _dt._COMPLEX, axes)
    sizes = _c2r_sizes(x.shape, ax, s)
    shape = list(x.shape)
    for a, n in zip(ax, sizes):
        if n == 0 or (n != DYN and n < 1):
            raise InvalidArgumentError(f"x with shape {shp(x.shape)} gives an output length "
                                       f"of {n} along axis {a}; pass n (or s) explicitly")
        shape[a] = n
    return TensorType(shape, real_of(x.dtype))


def _c2r_ref(x, axes=(-1,), norm="backward", forward=False, s=None):
    d = _dt.from_numpy(x.dtype)
    ax = _checked_axes(x, d, _dt._COMPLEX, axes)
    sizes = _c2r_sizes(x.shape, ax, s)
    for a, n in zip(ax, sizes):
        if n < 1:
            raise InvalidArgumentError(f"x with shape {list(x.shape)} gives an output length "
                                       f"of {n} along axis {a}; pass n (or s) explicitly")
    if forward:  # hfft: the forward transform of a Hermitian-symmetric signal
        r = np.fft.irfftn(np.conj(x), s=sizes, axes=ax, norm=_SWAP[norm])
    else:
        r = np.fft.irfftn(x, s=sizes, axes=ax, norm=norm)
    return r.astype(real_of(d).np, copy=False)


fft_c2r_op = _defop_fft("fft_c2r", False, _c2r_infer, _c2r_ref,
                        "One-sided complex-to-real inverse DFT (irfft) or, with forward=True, "
                        "the forward DFT of a Hermitian signal (hfft); `s` is the output length.")


# ---------------------------------------------------------------- public transforms
def _tensor(x):
    return x if isinstance(x, (Tensor, Value)) else to_tensor(x)


def _default_complex():
    return _dt.complex128 if _dt.get_default_dtype() is _dt.float64 else _dt.complex64


def _as_complex(x):
    x = _tensor(x)
    k = x.dtype.kind
    if k == _dt._COMPLEX:
        return x
    return call("cast", x, dtype=complex_of(x.dtype) if k == _dt._FLOAT else _default_complex())


def _as_real(x, fname):
    x = _tensor(x)
    k = x.dtype.kind
    if k == _dt._COMPLEX:
        raise InvalidTypeError(f"{fname}: x must be real, got {x.dtype.name}; use fft.fft for "
                               f"complex input")
    if k == _dt._FLOAT and x.dtype not in (_dt.float16, _dt.bfloat16):
        return x
    return call("cast", x, dtype=_dt.get_default_dtype() if k != _dt._FLOAT else _dt.float32)


def _n_d(fname, x, s, axes, norm, two_d):
    """Resolve Paddle's (s, axes) defaults: fft2 uses the last two axes, fftn
    all axes, or the last len(s) when only s is given."""
    where = f"{fname}: "
    if s is not None:
        s = _int_seq(s, "s", where)
        if any(n < 1 for n in s):
            raise InvalidArgumentError(f"{where}the lengths 's' must be positive, got {list(s)}")
    if axes is not None:
        axes = _int_seq(axes, "axes", where)
    elif two_d:
        axes = (-2, -1)
    elif s is not None:
        axes = tuple(range(-len(s), 0))
    else:
        axes = tuple(range(len(x.shape)))
    if two_d and len(axes) != 2:
        raise InvalidArgumentError(f"{where}'axes' must name 2 axes, got {list(axes)}")
    if s is not None and len(s) != len(axes):
        raise InvalidArgumentError(f"{where}'s' {list(s)} and 'axes' {list(axes)} must have "
                                   f"the same length")
    if len(axes) > len(x.shape):
        raise InvalidArgumentError(f"{where}x with shape {shp(x.shape)} has fewer than "
                                   f"{len(axes)} axes")
    return s, axes, _norm_value(norm, where)


def _transform(op, x, s, axes, norm, forward):
    return invoke(op, [x], {"axes": axes, "norm": norm, "forward": forward, "s": s})


def _c2c(x, s, axes, norm, forward):
    return _transform(fft_c2c_op, _as_complex(x), s, axes, norm, forward)


def _r2c(fname, x, s, axes, norm, forward):
    return _transform(fft_r2c_op, _as_real(x, fname), s, axes, norm, forward)


def _c2r(x, s, axes, norm, forward):
    return _transform(fft_c2r_op, _as_complex(x), s, axes, norm, forward)


def _make_nd(fname, kind, forward, two_d):
    def f(x, s=None, axes=(-2, -1) if two_d else None, norm="backward", name=None):
        x = _tensor(x)
        ss, ax, nm = _n_d(fname, x, s, axes, norm, two_d)
        if kind == "c2c":
            return _c2c(x, ss, ax, nm, forward)
        if kind == "r2c":
            return _r2c(fname, x, ss, ax, nm, forward)
        return _c2r(x, ss, ax, nm, forward)

    short = fname.split(".")[1]
    f.__name__ = f.__qualname__ = short
    f.__module__ = "fw.fft"
    return f


_ND_DOCS = {
    "fft2": ("c2c", True, "2-D discrete Fourier transform over `axes` (default the last two)."),
    "ifft2": ("c2c", False, "Inverse of fft.fft2."),
    "rfft2": ("r2c", True, "2-D transform of a real signal, one-sided on the last axis."),
    "irfft2": ("c2r", False, "Inverse of fft.rfft2; `s` gives the output lengths."),
    "hfft2": ("c2r", True, "2-D transform of a Hermitian signal given by its first half."),
    "ihfft2": ("r2c", False, "Inverse of fft.hfft2."),
    "fftn": ("c2c", True, "N-D discrete Fourier transform over `axes` (default all, or the "
                          "last len(s) when only s is given)."),
    "ifftn": ("c2c", False, "Inverse of fft.fftn."),
    "rfftn": ("r2c", True, "N-D transform of a real signal, one-sided on the last axis."),
    "irfftn": ("c2r", False, "Inverse of fft.rfftn; `s` gives the output lengths."),
    "hfftn": ("c2r", True, "N-D transform of a Hermitian signal given by its first half."),
    "ihfftn": ("r2c", False, "Inverse of fft.hfftn."),
}

_EXAMPLE_SHAPE = {"c2c": "[4, 4]", "r2c": "[4, 3]", "c2r": "[4, 6]"}
_RESULT = {"c2c": "the complex transform, x's shape (or s along axes)",
           "r2c": "the complex one-sided transform: the last transformed axis has n // 2 + 1 "
                  "entries",
           "c2r": "the real transform: the last transformed axis has s[-1] entries (default "
                  "2 * (m - 1) for m input entries)"}
_ND_DOC = """{doc}

    Args:
        x (Tensor): The input tensor.
        s (list|tuple, optional): The signal length along each transformed axis (the input
            is cropped or zero-padded to it); None keeps x's sizes. Default: None.
        axes (list|tuple, optional): The axes to transform. Default: {axes}.
        norm (str, optional): The scaling: "backward" (none on the forward transform, 1/n
            on the inverse), "ortho" (1/sqrt(n) both ways) or "forward" (1/n on the forward
            transform). Default: "backward".
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: {result}.

    Examples:
        >>> import fw
        >>> fw.fft.{name}(fw.ones([4, 4])).shape
        {shape}
    """

for _name, (_kind, _fwd, _doc) in _ND_DOCS.items():
    _fn = _make_nd(f"fft.{_name}", _kind, _fwd, _name.endswith("2"))
    _fn.__doc__ = _ND_DOC.format(doc=_doc, name=_name, shape=_EXAMPLE_SHAPE[_kind],
                                 result=_RESULT[_kind],
                                 axes="(-2, -1)" if _name.endswith("2") else "None (all axes)")
    public(f"fft.{_name}")(_fn)
    globals()[_name] = _fn
del _name, _kind, _fwd, _doc, _fn


# ---------------------------------------------------------------- frequencies
def _freq_canon(attrs):
    n = attrs["n"]
    if isinstance(n, Tensor):
        n = n.item()
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise InvalidArgumentError(f"'n' must be a positive int, got {n!r}")
    d = attrs["d"]
    if isinstance(d, Tensor):
        d = d.item()
    dt = attrs["dtype"]
    return {"n": int(n), "d": float(d), "onesided": bool(attrs["onesided"]),
            "dtype": _dt.get_default_dtype() if dt is None else _dt.convert_dtype(dt)}


def _freq_infer(n=1, d=1.0, onesided=False, dtype=None):
    return TensorType((n // 2 + 1 if onesided else n,), dtype)


def _freq_ref(n=1, d=1.0, onesided=False, dtype=None):
    f = np.fft.rfftfreq(n, d) if onesided else np.fft.fftfreq(n, d)
    return f.astype(dtype.np)


fftfreq_op = defop("fftfreq", (), {"n": 1, "d": 1.0, "onesided": False, "dtype": None},
                   infer=_freq_infer, reference=_freq_ref, canon=_freq_canon, promote=None,
                   differentiable=False, family="fft", api=False, method=False,
                   doc="Sample frequencies of an n-point DFT with spacing d (only the "
                       "non-negative ones when onesided).")


# ---------------------------------------------------------------- shifts
def _shift_canon(attrs):
    axes = attrs["axes"]
    return {"axes": None if axes is None else _int_seq(axes, "axes", ""),
            "inverse": bool(attrs["inverse"])}


def _shift_axes(shape, axes):
    if axes is None:
        return tuple(range(len(shape)))
    return tuple(norm_axis(a, len(shape), "axes") for a in axes)


def _shift_infer(x, axes=None, inverse=False):
    _shift_axes(x.shape, axes)
    return x


def _shift_ref(x, axes=None, inverse=False):
    ax = _shift_axes(x.shape, axes)
    if not ax:  # NumPy rejects an empty axes tuple (0-D input)
        return x.copy()
    return (np.fft.ifftshift if inverse else np.fft.fftshift)(x, axes=ax)


fftshift_op = defop("fftshift", ("x",), {"axes": None, "inverse": False}, infer=_shift_infer,
                    reference=_shift_ref, canon=_shift_canon, promote=None, family="fft",
                    api=False, method=False,
                    doc="Roll the zero frequency to the centre of `axes` (inverse=True undoes "
                        "it).")


