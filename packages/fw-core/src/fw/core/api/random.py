"""The Paddle-signature functions of the random ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.random`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ir.types import TensorType
from fw.core.ops._api import public
from fw.core.ops._infer import broadcast_shapes
from fw.core.ops._registry import defop
from fw.core.ops.creation import as_shape
from fw.core.ops.random import _F64, _gen, _require_float, _scalar, _shape_type

_F32 = np.dtype(np.float32)


_LOW = frozenset({np.dtype(np.float16), _dt.bfloat16.np})


def _float_dtype(d):
    d = _dt.get_default_dtype() if d is None else _dt.convert_dtype(d)
    if d.kind != _dt._FLOAT:
        raise InvalidTypeError(f"'dtype' must be a floating dtype, got {d.name}")
    return d


def _seed(v):
    v = int(_scalar(v, "seed"))
    if v < 0:
        raise InvalidArgumentError(f"'seed' must be >= 0, got {v}")
    return v


def _uniform01(gen, shape, npd):
    """Samples in [0, 1) of NumPy dtype npd (float32 draws for float16/bfloat16,
    kept below 1 after rounding)."""
    if npd in _LOW:
        u = np.asarray(gen.random(shape, dtype=_F32)).astype(npd)
        one = np.asarray(1.0, npd)
        return np.where(u >= one, np.nextafter(one, np.asarray(0.0, npd)), u)
    return np.asarray(gen.random(shape, dtype=npd))


def _normal01(gen, shape, npd):
    if npd in _LOW:
        return np.asarray(gen.standard_normal(shape, dtype=_F32)).astype(npd)
    return np.asarray(gen.standard_normal(shape, dtype=npd))


# ---------------------------------------------------------------- uniform / rand
def _uniform_canon(attrs):
    a = dict(attrs)
    a["shape"] = as_shape(a["shape"], "uniform")
    a["dtype"] = _float_dtype(a["dtype"])
    a["min"] = float(_scalar(a["min"], "min"))
    a["max"] = float(_scalar(a["max"], "max"))
    if a["min"] > a["max"]:
        raise InvalidArgumentError(f"'min' ({a['min']}) must be <= 'max' ({a['max']})")
    a["seed"] = _seed(a["seed"])
    return a


def _uniform_scale(u, lo, hi):
    """lo + (hi - lo) * u in u's dtype, kept below hi after rounding."""
    if lo == 0.0 and hi == 1.0:
        return u
    t = u.dtype.type
    r = t(lo) + t(hi - lo) * u
    if hi > lo:
        top = np.nextafter(np.asarray(hi, u.dtype), np.asarray(lo, u.dtype))
        r = np.minimum(np.maximum(r, t(lo)), top)
    return r.astype(u.dtype, copy=False)


def _uniform_ref(shape=(), dtype=None, min=-1.0, max=1.0, seed=0):
    return _uniform_scale(_uniform01(_gen(None, seed), shape, dtype.np), min, max)


uniform_op = defop("uniform", (), {"shape": (), "dtype": None, "min": -1.0, "max": 1.0,
                                   "seed": 0},
                   infer=lambda shape=(), dtype=None, **_: _shape_type(shape, dtype),
                   reference=_uniform_ref, canon=_uniform_canon, promote=None,
                   differentiable=False, random=True, family="random", method=False,
                   doc="""Samples uniform on [min, max) in a tensor of `shape`.

Args:
    shape (list|tuple|Tensor): the result shape.
    dtype (str|DType|None): a float dtype; the default float dtype when None.
    min, max (float): the interval.
    seed (int): 0 draws from the global generator (see fw.seed); another value gives
        the same numbers on every call.

Example:
    >>> fw.uniform([2, 3], min=-1.0, max=1.0)
""")


@public("rand")
def rand(shape, dtype=None, name=None):
    """Samples uniform on [0, 1) in a tensor of `shape` (default float dtype).

    Example:
        >>> fw.rand([2, 3])
    """
    from fw.core.dispatch import invoke

    return invoke(uniform_op, [], {"shape": shape, "dtype": dtype, "min": 0.0, "max": 1.0,
                                   "seed": 0})


# ---------------------------------------------------------------- gaussian / randn / normal
def _gaussian_canon(attrs):
    a = dict(attrs)
    a["shape"] = as_shape(a["shape"], "gaussian")
    a["dtype"] = _float_dtype(a["dtype"])
    a["mean"] = float(_scalar(a["mean"], "mean"))
    a["std"] = float(_scalar(a["std"], "std"))
    if a["std"] < 0:
        raise InvalidArgumentError(f"'std' must be >= 0, got {a['std']}")
    a["seed"] = _seed(a["seed"])
    return a


def _gaussian_ref(shape=(), mean=0.0, std=1.0, seed=0, dtype=None):
    z = _normal01(_gen(None, seed), shape, dtype.np)
    if mean == 0.0 and std == 1.0:
        return z
    t = z.dtype.type
    return (t(mean) + t(std) * z).astype(z.dtype, copy=False)


gaussian_op = defop("gaussian", (), {"shape": (), "mean": 0.0, "std": 1.0, "seed": 0,
                                     "dtype": None},
                    infer=lambda shape=(), dtype=None, **_: _shape_type(shape, dtype),
                    reference=_gaussian_ref, canon=_gaussian_canon, promote=None,
                    differentiable=False, random=True, family="random", method=False,
                    doc="""Samples of the normal distribution N(mean, std²) in a tensor of
`shape` (default float dtype); `seed` as in `uniform`.

Example:
    >>> fw.gaussian([2, 3], mean=1.0, std=2.0)
""")


@public("randn")
def randn(shape, dtype=None, name=None):
    """Standard normal samples in a tensor of `shape` (default float dtype).

    Example:
        >>> fw.randn([2, 3])
    """
    from fw.core.dispatch import invoke

    return invoke(gaussian_op, [], {"shape": shape, "mean": 0.0, "std": 1.0, "seed": 0,
                                    "dtype": dtype})


@public("standard_normal")
def standard_normal(shape, dtype=None, name=None):
    """Standard normal samples in a tensor of `shape` (same as `randn`).

    Example:
        >>> fw.standard_normal([2, 3])
    """
    return randn(shape, dtype)


def _normal_infer(mean, std):
    d = mean.dtype
    if d.kind != _dt._FLOAT:
        raise InvalidTypeError(f"mean and std must be floating, got {d.name}")
    return TensorType(broadcast_shapes(mean.shape, std.shape, names=("mean", "std")), d)


def _normal_ref(mean, std):
    if np.any(std < 0):
        raise InvalidArgumentError("normal: 'std' must be >= 0")
    shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
    npd = np.result_type(mean, std)
    z = _normal01(_gen(mean if isinstance(mean, np.ndarray) else std), shape, npd)
    return (mean + std * z).astype(npd, copy=False)


normal_op = defop("normal", ("mean", "std"), infer=_normal_infer, reference=_normal_ref,
                  promote="all", to_float=True, differentiable=False, random=True,
                  family="random", api=False, method=False,
                  doc="Normal samples with per-element mean and std (broadcast together).")


def _is_tensorish(v):
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, np.generic)


@public("normal")
def normal(mean=0.0, std=1.0, shape=None, name=None):
    """Samples of N(mean, std²).

    Args:
        mean (float|Tensor): the mean, per element when a tensor.
        std (float|Tensor): the standard deviation, per element when a tensor.
        shape (list|tuple|Tensor|None): the result shape when mean and std are both
            numbers (ignored otherwise: the result has the broadcast shape of the
            tensor arguments and their dtype).

    Example:
        >>> fw.normal(mean=fw.to_tensor([0., 10.]), std=1.0)
    """
    from fw.core.dispatch import invoke

    if _is_tensorish(mean) or _is_tensorish(std):
        if isinstance(mean, complex) or (_is_tensorish(mean) and mean.dtype.is_complex):
            raise UnsupportedError("normal: complex mean is not supported")
        return invoke(normal_op, [mean, std], {})
    if isinstance(mean, complex):
        raise UnsupportedError("normal: complex mean is not supported")
    return invoke(gaussian_op, [], {"shape": () if shape is None else shape, "mean": mean,
                                    "std": std, "seed": 0, "dtype": None})


# ---------------------------------------------------------------- bernoulli / poisson
def _bern_canon(attrs):
    p = attrs["p"]
    if p is None or type(p) is float:
        return attrs
    return {"p": float(_scalar(p, "p"))}


def _bern_infer(x, p=None):
    if p is not None and not 0.0 <= p <= 1.0:
        raise InvalidArgumentError(f"'p' must be in [0, 1], got {p}")
    if p is None:
        _require_float(x)
    return x


def _bern_ref(x, p=None):
    if p is None and x.dtype.kind != "f" and x.dtype not in _LOW:
        raise InvalidTypeError(f"bernoulli: 'x' (the probabilities) must be a floating tensor, "
                               f"got {x.dtype}")
    if p is not None and not 0.0 <= p <= 1.0:
        raise InvalidArgumentError(f"bernoulli: 'p' must be in [0, 1], got {p}")
    u = np.asarray(_gen(x).random(x.shape))
    prob = p if p is not None else x.astype(_F64)
    return (u < prob).astype(x.dtype)


bernoulli_op = defop("bernoulli", ("x",), {"p": None}, infer=_bern_infer,
                     reference=_bern_ref, canon=_bern_canon, promote=None,
                     differentiable=False, random=True, family="random",
                     doc="""1 with probability x (element-wise; or with probability p for every
element when p is given), else 0, in x's shape and dtype.

Example:
    >>> fw.bernoulli(fw.to_tensor([0.0, 0.5, 1.0]))
""")


# ---------------------------------------------------------------- in-place fills
def _like_uniform_canon(attrs):
    a = dict(attrs)
    a["min"] = float(_scalar(a["min"], "min"))
    a["max"] = float(_scalar(a["max"], "max"))
    if a["min"] > a["max"]:
        raise InvalidArgumentError(f"'min' ({a['min']}) must be <= 'max' ({a['max']})")
    a["seed"] = _seed(a["seed"])
    return a


def _float_like_infer(x, **_):
    _require_float(x)
    return x


def _uniform_like_ref(x, min=-1.0, max=1.0, seed=0):
    return _uniform_scale(_uniform01(_gen(x, seed), x.shape, x.dtype), min, max)


uniform_like_op = defop("uniform_like", ("x",), {"min": -1.0, "max": 1.0, "seed": 0},
                        infer=_float_like_infer, reference=_uniform_like_ref,
                        canon=_like_uniform_canon, promote=None, differentiable=False,
                        random=True, family="random", api=False, method=False,
                        doc="Uniform samples on [min, max) in x's shape and dtype.")


def _gaussian_like_canon(attrs):
    a = {"mean": float(_scalar(attrs["mean"], "mean")), "std": float(_scalar(attrs["std"],
                                                                               "std"))}
    if a["std"] < 0:
        raise InvalidArgumentError(f"'std' must be >= 0, got {a['std']}")
    return a


def _gaussian_like_ref(x, mean=0.0, std=1.0):
    z = _normal01(_gen(x), x.shape, x.dtype)
    t = z.dtype.type
    return (t(mean) + t(std) * z).astype(x.dtype, copy=False)


gaussian_like_op = defop("gaussian_like", ("x",), {"mean": 0.0, "std": 1.0},
                         infer=_float_like_infer, reference=_gaussian_like_ref,
                         canon=_gaussian_like_canon, promote=None, differentiable=False,
                         random=True, family="random", api=False, method=False,
                         doc="Normal samples N(mean, std²) in x's shape and dtype.")


def _exp_canon(attrs):
    lam = float(_scalar(attrs["lam"], "lam"))
    if not lam > 0:
        raise InvalidArgumentError(f"'lam' must be > 0, got {lam}")
    return {"lam": lam}


def _exponential_ref(x, lam=1.0):
    g = _gen(x)
    if x.dtype in _LOW:
        e = np.asarray(g.standard_exponential(x.shape, dtype=_F32))
    else:
        e = np.asarray(g.standard_exponential(x.shape, dtype=x.dtype))
    return (e / e.dtype.type(lam)).astype(x.dtype, copy=False)


exponential_op = defop("exponential", ("x",), {"lam": 1.0}, infer=_float_like_infer,
                       reference=_exponential_ref, canon=_exp_canon, promote=None,
                       differentiable=False, random=True, family="random", api=False,
                       method=False,
                       doc="Exponential samples with rate lam in x's shape and dtype.")


@public("uniform_", method=True)
def uniform_(x, min=-1.0, max=1.0, seed=0, name=None):
    """Fill x in place with samples uniform on [min, max); returns x.

    Example:
        >>> x = fw.zeros([2, 3]); x.uniform_(0.0, 1.0)
    """
    from fw.core.dispatch import assign_inplace, invoke

    return assign_inplace("uniform_", x, invoke(uniform_like_op, [x],
                                                {"min": min, "max": max, "seed": seed}))


@public("normal_", method=True)
def normal_(x, mean=0.0, std=1.0, name=None):
    """Fill x in place with samples of N(mean, std²); returns x.

    Example:
        >>> x = fw.zeros([2, 3]); x.normal_()
    """
    from fw.core.dispatch import assign_inplace, invoke

    return assign_inplace("normal_", x, invoke(gaussian_like_op, [x],
                                               {"mean": mean, "std": std}))


@public("exponential_", method=True)
def exponential_(x, lam=1.0, name=None):
    """Fill x in place with samples of the exponential distribution with rate `lam`
    (mean 1/lam); returns x.

    Example:
        >>> x = fw.zeros([2, 3]); x.exponential_(2.0)
    """
    from fw.core.dispatch import assign_inplace, invoke

    return assign_inplace("exponential_", x, invoke(exponential_op, [x], {"lam": lam}))


@public("bernoulli_", method=True)
def bernoulli_(x, p=0.5, name=None):
    """Fill x in place with 1 (probability p) or 0; returns x.

    Args:
        x (Tensor): the tensor to fill (its dtype is kept).
        p (float|Tensor): the probability; a tensor must hold one value.

    Example:
        >>> x = fw.zeros([2, 3]); x.bernoulli_(0.3)
    """
    from fw.core.dispatch import assign_inplace, invoke

    if _is_tensorish(p):
        if getattr(p, "size", 1) != 1:
            raise UnsupportedError("bernoulli_: a per-element probability tensor is not "
                                   "supported; use fw.bernoulli(p) and assign it")
        p = p.item()
    return assign_inplace("bernoulli_", x, invoke(bernoulli_op, [x], {"p": p}))
