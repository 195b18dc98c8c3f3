"""Random ops: rand, randn, uniform, normal, randint, randperm, bernoulli,
multinomial, poisson, … and the in-place fills ``uniform_``, ``normal_``,
``exponential_``, ``bernoulli_``.

Every kernel draws at the moment it runs — also inside a compiled program, so a
program gives fresh numbers on every run — from the generator of the device its
input lives on (`fw.core.random.default_generator`); ops without tensor inputs
draw on the cpu generator and the dispatcher moves the result to the current
device. `fw.seed(s)` therefore makes eager and compiled runs reproducible.

Paddle's per-op ``seed`` argument: 0 means "use the global generator"; any other
value draws from a fresh generator seeded with it, so every call with that seed
gives the same numbers.

Float results default to `fw.get_default_dtype()`. float16/bfloat16 samples are
drawn in float32 and rounded. All random ops are non-differentiable.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core import random as _rnd
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import TensorType
from fw.core.ops._infer import broadcast_shapes
from fw.core.ops._registry import defop
from fw.core.ops._xp import xp_of
from fw.core.ops.creation import as_shape

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
_LOW = frozenset({np.dtype(np.float16), _dt.bfloat16.np})


# ---------------------------------------------------------------- generators and helpers
def _gen(x=None, seed=0):
    """The generator to draw from: the global one of x's device (cpu without x), or a
    fresh one for a non-zero per-call seed."""
    from fw.core import place as _pl

    kind = "cpu" if x is None or type(x) is np.ndarray else _pl.backend_of(x).name
    if seed:
        return _rnd.Generator(int(seed), kind).np
    return _rnd.default_generator(kind).np


def _scalar(v, arg):
    if hasattr(v, "item") and not isinstance(v, (int, float)):
        if getattr(v, "size", 1) != 1:
            raise InvalidArgumentError(f"'{arg}' must be a number or a one-element tensor, got "
                                       f"shape {list(v.shape)}")
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise InvalidTypeError(f"'{arg}' must be a number, got {type(v).__name__}")
    return v


def _float_dtype(d):
    d = _dt.get_default_dtype() if d is None else _dt.convert_dtype(d)
    if d.kind != _dt._FLOAT:
        raise InvalidTypeError(f"'dtype' must be a floating dtype, got {d.name}")
    return d


def _int_dtype(d, default=_dt.int64):
    d = default if d is None else _dt.convert_dtype(d)
    if d not in (_dt.int32, _dt.int64):
        raise InvalidTypeError(f"'dtype' must be int32 or int64, got {d.name}")
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


def _shape_type(shape, dtype):
    for d in shape:
        if d < 0:
            raise InvalidArgumentError(f"shape {list(shape)} has a negative dimension")
    return TensorType(shape, dtype)


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
                   doc="""Samples uniform on [min, max) in a tensor of `shape`.""")


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
`shape` (default float dtype); `seed` as in `uniform`.""")


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


# ---------------------------------------------------------------- randint / randint_like
def _randint_bounds(a):
    lo, hi = a["low"], a["high"]
    lo = int(_scalar(lo, "low"))
    if hi is None:
        lo, hi = 0, lo
    else:
        hi = int(_scalar(hi, "high"))
    if lo >= hi:
        raise InvalidArgumentError(f"'high' ({hi}) must be greater than 'low' ({lo})")
    a["low"], a["high"] = lo, hi


def _randint_canon(attrs):
    a = dict(attrs)
    _randint_bounds(a)
    a["shape"] = as_shape(a["shape"], "randint")
    a["dtype"] = _int_dtype(a["dtype"])
    return a


def _randint_ref(low=0, high=None, shape=(1,), dtype=None):
    r = np.asarray(_gen().integers(low, high, size=shape, dtype=_I64))
    return r.astype(dtype.np, copy=False)


defop("randint", (), {"low": 0, "high": None, "shape": (1,), "dtype": None},
      infer=lambda shape=(1,), dtype=None, **_: _shape_type(shape, dtype),
      reference=_randint_ref, canon=_randint_canon, promote=None, differentiable=False,
      random=True, family="random", method=False,
      doc="""Integers drawn uniformly from [low, high) (from [0, low) when high is
None), int64 by default (int32 allowed).""")


def _randint_like_canon(attrs):
    a = dict(attrs)
    _randint_bounds(a)
    if a["dtype"] is not None:
        a["dtype"] = _dt.convert_dtype(a["dtype"])
    return a


def _randint_like_infer(x, low=0, high=None, dtype=None):
    return TensorType(x.shape, x.dtype if dtype is None else dtype)


def _randint_like_ref(x, low=0, high=None, dtype=None):
    out = x.dtype if dtype is None else dtype.np
    r = np.asarray(_gen(x).integers(low, high, size=x.shape, dtype=_I64))
    return r.astype(out, copy=False)


defop("randint_like", ("x",), {"low": 0, "high": None, "dtype": None},
      infer=_randint_like_infer, reference=_randint_like_ref, canon=_randint_like_canon,
      promote=None, differentiable=False, random=True, family="random", method=False,
      doc="""Integers from [low, high) (from [0, low) when high is None) in a tensor of
x's shape, of `dtype` (x's dtype when None).""")


# ---------------------------------------------------------------- randperm
def _randperm_canon(attrs):
    n = int(_scalar(attrs["n"], "n"))
    if n < 0:
        raise InvalidArgumentError(f"'n' must be >= 0, got {n}")
    d = _dt.convert_dtype(attrs["dtype"])
    if d.kind not in (_dt._INT, _dt._FLOAT):
        raise InvalidTypeError(f"'dtype' must be an integer or float dtype, got {d.name}")
    return {"n": n, "dtype": d}


def _randperm_ref(n=1, dtype=_dt.int64):
    return _gen().permutation(n).astype(dtype.np, copy=False)


defop("randperm", (), {"n": 1, "dtype": "int64"},
      infer=lambda n=1, dtype=_dt.int64: TensorType((n,), dtype), reference=_randperm_ref,
      canon=_randperm_canon, promote=None, differentiable=False, random=True,
      family="random", method=False,
      doc="""A random permutation of 0 .. n-1 (int64 by default).""")


# ---------------------------------------------------------------- bernoulli / poisson
def _bern_canon(attrs):
    p = attrs["p"]
    if p is None or type(p) is float:
        return attrs
    return {"p": float(_scalar(p, "p"))}


def _require_float(x, arg="x"):
    if x.dtype.kind != _dt._FLOAT:
        raise InvalidTypeError(f"'{arg}' must be a floating tensor, got {x.dtype.name}")


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
element when p is given), else 0, in x's shape and dtype.""")


def _poisson_infer(x):
    _require_float(x)
    return x


def _poisson_ref(x):
    lam = x.astype(_F64)
    if np.any(lam < 0):
        raise InvalidArgumentError("poisson: the rates in x must be >= 0")
    return np.asarray(_gen(x).poisson(lam)).astype(x.dtype)


defop("poisson", ("x",), infer=_poisson_infer, reference=_poisson_ref, promote=None,
      differentiable=False, random=True, family="random",
      doc="""Samples of the Poisson distribution with rate x (element-wise), in x's
shape and dtype.""")


# ---------------------------------------------------------------- multinomial
def _multinomial_canon(attrs):
    n = int(_scalar(attrs["num_samples"], "num_samples"))
    if n < 1:
        raise InvalidArgumentError(f"'num_samples' must be >= 1, got {n}")
    return {"num_samples": n, "replacement": bool(attrs["replacement"])}


def _multinomial_infer(x, num_samples=1, replacement=False):
    _require_float(x)
    if len(x.shape) not in (1, 2):
        raise InvalidArgumentError(f"x must be 1-D or 2-D (rows of category weights), got "
                                   f"shape {list(x.shape)}")
    k = x.shape[-1]
    if not replacement and k != -1 and num_samples > k:
        raise InvalidArgumentError(f"'num_samples' ({num_samples}) exceeds the {k} categories; "
                                   f"sampling without replacement needs replacement=True")
    return TensorType(tuple(x.shape[:-1]) + (num_samples,), _dt.int64)


def _multinomial_ref(x, num_samples=1, replacement=False):
    _multinomial_infer(TensorType(x.shape, _dt.from_numpy(x.dtype)), num_samples, replacement)
    p = x.astype(_F64).reshape(-1, x.shape[-1])
    rows, k = p.shape
    if np.any(p < 0) or not np.all(np.isfinite(p)):
        raise InvalidArgumentError("multinomial: x must hold finite, non-negative weights")
    total = np.add.reduce(p, axis=1)
    if np.any(total <= 0):
        raise InvalidArgumentError("multinomial: every row of x needs a positive weight")
    gen = _gen(x)
    if replacement:
        cdf = np.cumsum(p, axis=1) / total[:, None]
        u = gen.random((rows, num_samples))
        out = np.empty_like(u, dtype=_I64)
        for r in range(rows):  # inverse CDF; a zero-weight category is never chosen
            out[r] = np.searchsorted(cdf[r], u[r], side="right")
        out = np.minimum(out, k - 1)
    else:
        nz = np.add.reduce(p > 0, axis=1)
        if np.any(nz < num_samples):
            raise InvalidArgumentError(
                f"multinomial: {num_samples} samples without replacement need at least as "
                f"many categories with positive weight, a row has {int(nz.min())}")
        # Gumbel-top-k: the k largest log(p) + Gumbel noise are a draw without replacement
        keys = np.log(p) - np.log(gen.standard_exponential((rows, k)))
        out = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples].astype(_I64)
    return out.reshape(x.shape[:-1] + (num_samples,))


defop("multinomial", ("x",), {"num_samples": 1, "replacement": False},
      infer=_multinomial_infer, reference=_multinomial_ref, canon=_multinomial_canon,
      promote=None, differentiable=False, random=True, family="random",
      doc="""Draw `num_samples` category indices from each row of x (non-negative
weights, normalised per row). Without replacement the indices of a row are
distinct.""")


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




# ---------------------------------------------------------------- standard_gamma / binomial
def _standard_gamma_ref(x):
    if x.dtype.kind != "f" and x.dtype not in _LOW:
        raise InvalidTypeError(f"standard_gamma: 'x' (the concentrations) must be a floating "
                               f"tensor, got {x.dtype}")
    a = x.astype(_F64)
    if np.any(~(a > 0)):
        raise InvalidArgumentError("standard_gamma: the concentrations in x must be > 0")
    # the generator's Marsaglia-Tsang sampler (boosted for a < 1), drawn in float64 and
    # rounded; xp.asarray keeps a 0-d draw an array, on x's device
    return xp_of(x).asarray(_gen(x).standard_gamma(a)).astype(x.dtype)


defop("standard_gamma", ("x",), infer=_poisson_infer, reference=_standard_gamma_ref,
      promote=None, differentiable=False, random=True, family="random", method=False,
      doc="""Samples of the standard gamma distribution (rate 1) with concentration x
(element-wise, x > 0), in x's shape and dtype. `fw.distribution.Gamma.rsample`
differentiates them by implicit reparameterisation.""")


def _binomial_infer(count, prob):
    if count.dtype.kind not in (_dt._INT, _dt._FLOAT):
        raise InvalidTypeError(f"'count' must be an integer or floating tensor, got "
                               f"{count.dtype.name}")
    _require_float(prob, "prob")
    shape = broadcast_shapes(count.shape, prob.shape, names=["'count'", "'prob'"])
    return TensorType(shape, _dt.int64)


def _binomial_ref(count, prob):
    n = count  # (no np.asarray: the arrays stay on their device)
    p = prob.astype(_F64)
    if n.dtype.kind == "f":
        if np.any(n != np.floor(n)):
            raise InvalidArgumentError("binomial: 'count' must hold whole numbers")
    if np.any(n < 0):
        raise InvalidArgumentError("binomial: 'count' must be >= 0")
    if np.any(~((p >= 0) & (p <= 1))):
        raise InvalidArgumentError("binomial: 'prob' must be in [0, 1]")
    try:
        n, p = np.broadcast_arrays(n.astype(np.int64), p)
    except ValueError:
        raise InvalidArgumentError(f"binomial: 'count' of shape {list(count.shape)} and "
                                   f"'prob' of shape {list(prob.shape)} do not broadcast"
                                   ) from None
    return xp_of(prob).asarray(_gen(prob).binomial(n, p)).astype(_I64).reshape(n.shape)


defop("binomial", ("count", "prob"), infer=_binomial_infer, reference=_binomial_ref,
      promote=None, differentiable=False, random=True, family="random", method=False,
      doc="""Samples of the binomial distribution: the number of successes in `count`
trials of probability `prob` (element-wise, broadcast), as int64.""")
