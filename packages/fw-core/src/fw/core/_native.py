"""Loader of fw-core's native extension ``fw.core._C`` and its NumPy-facing wrappers.

What this module owns:

- finding and preloading ``libdnnl.so.3`` (oneDNN 2023.2, from the
  ``onednn-cpu-gomp`` wheel) before ``_C`` is imported;
- the version pin between ``_C`` and ``fw.core.__version__``;
- the CPU thread policy (oneDNN's OpenMP pool vs. NumPy's BLAS pool);
- :func:`matmul`, which takes NumPy arrays, makes them fit the native kernel's
  contract (C-contiguous, float32 or bfloat16-as-uint16) and falls back to
  NumPy for everything the kernel does not cover.

``C`` is the extension module, or ``None`` when the environment variable
``FW_DISABLE_NATIVE=1`` is set; then every function here runs on NumPy alone.
Without that variable a missing or broken extension raises ImportError.

Example::

    >>> import numpy as np
    >>> from fw.core import _native
    >>> _native.matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).shape
    (2, 4)
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

from fw.core import _epilogue

__all__ = [
    "C",
    "available",
    "cache_info",
    "clear_cache",
    "get_num_threads",
    "matmul",
    "primitive_impls",
    "set_cache_capacity",
    "set_num_threads",
    "ACTIVATIONS",
    "NUMPY_FASTER_BELOW_FLOPS",
]

_ONEDNN_DIST = "onednn-cpu-gomp"
_ONEDNN_REQUIREMENT = "onednn-cpu-gomp==2023.2.0"
_LIBDNNL = "libdnnl.so.3"

#: Activations the fused matmul epilogue accepts: the names and aliases of the one table
#: (fw.core._epilogue), "none" and None included.
ACTIVATIONS = _epilogue.NAMES + tuple(a for a in _epilogue.ALIASES if a is not None)

#: Below about this many flops (2*M*N*K) an unfused float32 ``numpy.matmul`` (on
#: the 1 BLAS thread fw leaves NumPy) returns sooner than the native kernel on
#: the 2-core reference machine: per call, native costs ~2 us in _C plus ~0.5 us
#: in the wrapper, NumPy ~1.4 us, and the two meet around 64x64x64 (timings:
#: asv_bench/benchmarks/bench_matmul_native.py). A kernel chooser may use it.
NUMPY_FASTER_BELOW_FLOPS = 2 * 64**3


# --------------------------------------------------------------------------
# Loading


def _find_libdnnl() -> str:
    """Path of libdnnl.so.3 as installed by the onednn-cpu-gomp distribution.

    The wheel ships the library as *data*, so it lands in ``<prefix>/lib``
    rather than in site-packages; importlib.metadata knows where.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution(_ONEDNN_DIST)
    except metadata.PackageNotFoundError:
        raise ImportError(
            f"fw-core native extension needs {_LIBDNNL} from the '{_ONEDNN_DIST}' "
            f"distribution, which is not installed; fix: pip install {_ONEDNN_REQUIREMENT} "
            "(or set FW_DISABLE_NATIVE=1 to run on NumPy only)"
        ) from None
    listed = [f for f in (dist.files or ()) if f.name == _LIBDNNL]
    for f in listed:
        path = os.fspath(dist.locate_file(f))
        if os.path.exists(path):
            return path
    where = (
        ", ".join(os.fspath(dist.locate_file(f)) for f in listed) or "no such file in its RECORD"
    )
    raise ImportError(
        f"fw-core native extension: '{_ONEDNN_DIST}' {dist.version} is installed but "
        f"{_LIBDNNL} was not found ({where}); "
        f"fix: pip install --force-reinstall {_ONEDNN_REQUIREMENT}"
    )


def _preload_libdnnl() -> None:
    # _C carries an $ORIGIN-relative RPATH that finds <prefix>/lib in a normal
    # install; in an editable (in-place) build $ORIGIN is the source tree, so
    # load the library by path first. RTLD_GLOBAL lets the dynamic linker
    # satisfy _C's DT_NEEDED libdnnl.so.3 with this copy. The wheel's data lands
    # in <prefix>/lib: look there before asking importlib.metadata, whose imports
    # (email, zipfile, …) cost ~20 ms of every `import fw`.
    import sys

    path = os.path.join(sys.prefix, "lib", _LIBDNNL)
    if not os.path.exists(path):
        path = _find_libdnnl()
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise ImportError(
            f"fw-core native extension: could not load {path}: {e}; "
            f"fix: pip install --force-reinstall {_ONEDNN_REQUIREMENT}"
        ) from e


def _python_version() -> str:
    # Read lazily: fw.core imports this module, so it may be half-initialised.
    import sys

    core = sys.modules.get("fw.core")
    version = getattr(core, "__version__", None)
    if version is None:
        from fw.core import __version__ as version
    return version


def _check_version(native_version: str, python_version: str) -> None:
    if native_version != python_version:
        raise ImportError(
            f"fw-core native extension version {native_version} does not match Python "
            f"package version {python_version}; rebuild with pip install -e packages/fw-core"
        )


def _load() -> Any:
    if os.environ.get("FW_DISABLE_NATIVE") == "1":
        return None
    _preload_libdnnl()
    try:
        from fw.core import _C as module
    except ImportError as e:
        raise ImportError(
            f"fw-core native extension fw.core._C could not be imported ({e}); build it with "
            "pip install -e packages/fw-core (or set FW_DISABLE_NATIVE=1 to run on NumPy only)"
        ) from e
    _check_version(module.__version__, _python_version())
    return module


C = _load()
available: bool = C is not None


# --------------------------------------------------------------------------
# Threads
#
# Policy. The cores belong to oneDNN's OpenMP pool: by default it uses every
# core this process may run on (FW_NUM_THREADS=n overrides). NumPy's BLAS
# (OpenBLAS) gets 1 thread while the native kernels are on: fw calls BLAS only
# for fallbacks (float64, integers, tiny problems), and two pools of spinning
# worker threads on the same 2 cores slow each other down (each keeps spinning
# for a while after its own call returns). FW_BLAS_NUM_THREADS=n overrides.
# With FW_DISABLE_NATIVE=1 NumPy is the only compute, so BLAS keeps its default
# unless FW_NUM_THREADS is set.


def _env_threads(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return n


def _set_blas_threads(n: int) -> None:
    from threadpoolctl import threadpool_limits

    # Not used as a context manager: the limit stays for the process.
    threadpool_limits(limits=n, user_api="blas")


def set_num_threads(n: int) -> None:
    """Sets the threads fw's CPU kernels use (oneDNN; NumPy's BLAS when native is off)."""
    if int(n) < 1:
        raise ValueError(f"set_num_threads: n must be >= 1, got {n}")
    if C is not None:
        C.set_num_threads(int(n))
    else:
        _set_blas_threads(int(n))


def get_num_threads() -> int:
    """The threads fw's CPU kernels use."""
    if C is not None:
        return int(C.get_num_threads())
    from threadpoolctl import threadpool_info

    blas = [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]
    return max(blas) if blas else 1


def _apply_thread_policy() -> None:
    fw_threads = _env_threads("FW_NUM_THREADS")
    blas_threads = _env_threads("FW_BLAS_NUM_THREADS")
    if C is not None:
        if fw_threads is not None:
            C.set_num_threads(fw_threads)
        _set_blas_threads(blas_threads or 1)
    elif (blas_threads or fw_threads) is not None:
        _set_blas_threads(blas_threads or fw_threads)


_apply_thread_policy()


# --------------------------------------------------------------------------
# Primitive cache


def set_cache_capacity(capacity: int) -> None:
    """Bounds the native primitive cache (LRU, default 256 entries); 0 disables it."""
    if int(capacity) < 0:
        raise ValueError(f"set_cache_capacity: capacity must be >= 0, got {capacity}")
    if C is not None:
        C.set_cache_capacity(int(capacity))


def cache_info() -> dict[str, int]:
    """Primitive cache statistics: hits, misses, evictions, size, capacity."""
    if C is None:
        return {"hits": 0, "misses": 0, "evictions": 0, "size": 0, "capacity": 0}
    return dict(C.cache_info())


def primitive_impls() -> dict[str, list[str]]:
    """{primitive kind: [oneDNN implementation name of each cached primitive]}, for the
    matmul cache and every nn cache (conv, norms, softmax). A name starting with
    "ref" is oneDNN's reference fallback, 10-100x slower than its jit kernels: the
    deployment tests assert a predictor of the zoo models creates none."""
    if C is None:
        return {}
    out = {"matmul": list(C.matmul_cached_impls())}
    out.update({k: list(v) for k, v in C.nn_cached_impls().items()})
    return out


def clear_cache() -> None:
    """Empties the primitive cache and resets its counters."""
    if C is not None:
        C.clear_cache()


# --------------------------------------------------------------------------
# matmul

try:  # ml_dtypes is a dependency of fw-core; tolerate its absence here anyway.
    from ml_dtypes import bfloat16 as _bf16_type

    _BF16 = np.dtype(_bf16_type)
except ImportError:  # pragma: no cover
    _BF16 = None

_F32 = np.dtype(np.float32)  # a singleton: `a.dtype is _F32` holds for native-order float32
_ndarray = np.ndarray
_U16 = np.dtype(np.uint16)
_NATIVE = frozenset((_F32, _BF16) if _BF16 is not None else (_F32,))
# exact spellings only (the op layer lower-cases): name or alias -> table name
_ACT_CANON = {**{n: n for n in _epilogue.NAMES}, **_epilogue.ALIASES}


def _describe(a: np.ndarray) -> str:
    return f"{a.dtype}{list(a.shape)}"


def _native_layout(a: np.ndarray, transpose: bool) -> tuple[np.ndarray, bool]:
    """A C-contiguous array plus transpose flag computing the same op(a)."""
    if a.flags.c_contiguous:
        return a, transpose
    swapped = np.swapaxes(a, -1, -2)
    if swapped.flags.c_contiguous:  # e.g. w.T: read it transposed, no copy
        return swapped, not transpose
    return np.ascontiguousarray(a), transpose


def _strided_view(a: np.ndarray) -> bool:
    """A float32 view oneDNN can read in place: positive strides in whole elements,
    one of the matrix dims unit-stride."""
    st, sh = a.strides, a.shape
    if not (st[-1] == 4 or st[-2] == 4 or sh[-1] == 1 or sh[-2] == 1):
        return False
    return all(s > 0 and s % 4 == 0 for s, n in zip(st, sh) if n > 1)


def _strided_pair(x: np.ndarray, y: np.ndarray, tx: bool, ty: bool) -> bool:
    """Whether the product of x and y should go to the kernel as strided views: both
    float32 with the same batch dims (no broadcasting), at least one of them a view
    that `_native_layout` would have to copy."""
    if x.dtype is not _F32 or y.dtype is not _F32 or x.ndim < 3 or x.ndim != y.ndim or \
            x.shape[:-2] != y.shape[:-2] or not x.size or not y.size:
        return False
    copies = False
    for a in (x, y):
        if a.flags.c_contiguous or np.swapaxes(a, -1, -2).flags.c_contiguous:
            continue
        if not _strided_view(a):
            return False
        copies = True
    return copies


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(_U16) if a.dtype == _BF16 else a


def matmul(
    x: np.ndarray,
    y: np.ndarray,
    transpose_x: bool = False,
    transpose_y: bool = False,
    *,
    bias: np.ndarray | None = None,
    activation: str | None = None,
    residual: np.ndarray | None = None,
    residual_before_activation: bool = False,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """``act(op(x) @ op(y) + bias) + residual`` on NumPy arrays, natively where possible.

    Args:
        x, y: arrays; batch dims broadcast like ``numpy.matmul``; a 1-D operand
            is a vector as in ``numpy.matmul`` (its transpose flag is ignored).
        transpose_x, transpose_y: swap the last two dims of that operand first.
        bias: shape ``(N,)``, added to every row.
        activation: None or one of :data:`ACTIVATIONS`.
        residual: the result's shape; added after the activation, or before it
            when ``residual_before_activation``. Passing ``out`` itself
            accumulates in place (``out += ...``).
        out: optional destination of the result's shape and dtype.

    Returns:
        The result: float32 for float32 inputs, bfloat16 for bfloat16 inputs;
        other dtypes follow NumPy's promotion (computed by NumPy).

    float32 and bfloat16 (ml_dtypes) pairs of non-empty operands run on oneDNN;
    everything else, and everything when ``FW_DISABLE_NATIVE=1``, runs on NumPy.

    Example::

        >>> x = np.ones((2, 3), np.float32)
        >>> matmul(x, np.ones((4, 3), np.float32), transpose_y=True, activation="relu").shape
        (2, 4)
    """
    # Fast path, kept flat for per-call overhead: an unfused float32 product of
    # dense matrices (what C.matmul accepts as is).
    if (
        bias is None
        and activation is None
        and residual is None
        and out is None
        and C is not None
        and x.__class__ is _ndarray
        and y.__class__ is _ndarray
        and x.dtype is _F32
        and y.dtype is _F32
        and x.ndim >= 2
        and y.ndim >= 2
        and x.flags.c_contiguous
        and y.flags.c_contiguous
        and x.size
        and y.size
    ):
        return C.matmul(x, y, None, transpose_x, transpose_y)
    return _matmul(
        x, y, transpose_x, transpose_y, bias, activation, residual, residual_before_activation, out
    )


def _matmul(
    x, y, transpose_x, transpose_y, bias, activation, residual, residual_before_activation, out
):
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    if type(y) is not np.ndarray:
        y = np.asarray(y)
    try:
        act = _ACT_CANON[activation]
    except (KeyError, TypeError):
        raise ValueError(
            f"matmul: unknown activation {activation!r}; "
            f"expected None or one of {', '.join(ACTIVATIONS)}"
        ) from None
    dt = x.dtype
    if (
        C is None
        or dt not in _NATIVE
        or y.dtype != dt
        or x.ndim == 0
        or y.ndim == 0
        or x.size == 0
        or y.size == 0
    ):
        return _matmul_numpy(
            x, y, transpose_x, transpose_y, bias, act, residual, residual_before_activation, out
        )

    if (
        out is None
        and bias is None
        and act == "none"
        and residual is None
        and _strided_pair(x, y, transpose_x, transpose_y)
    ):
        try:  # oneDNN reads the views in place (e.g. attention heads), no copies
            return C.matmul(x, y, None, transpose_x, transpose_y)
        except RuntimeError:  # a stride pattern oneDNN does not take: copy below
            pass

    # numpy.matmul's vector rules: promote to a matrix, drop the dim afterwards.
    final_shape = None
    if x.ndim == 1 or y.ndim == 1:
        final_shape = _vector_result_shape(x, y)
        if x.ndim == 1:
            x, transpose_x = x.reshape(1, -1), False
        if y.ndim == 1:
            y, transpose_y = y.reshape(-1, 1), False
    x, transpose_x = _native_layout(x, transpose_x)
    y, transpose_y = _native_layout(y, transpose_y)

    dst = None  # what C writes into; `out` itself when it fits the kernel
    if out is not None:
        if final_shape is not None and out.shape != final_shape:
            raise ValueError(
                f"matmul: out {_describe(out)} does not have the result shape "
                f"{list(final_shape)} of x and y"
            )
        if (
            out.flags.c_contiguous
            and (out.dtype == dt or (dt == _BF16 and out.dtype == _F32))
            # the kernel reads its inputs while writing out: no overlap
            and not np.may_share_memory(out, x)
            and not np.may_share_memory(out, y)
        ):
            dst = out
            if final_shape is not None:
                dst = out.reshape(_full_shape(x, y, transpose_x, transpose_y))
    if bias is not None:
        bias = np.ascontiguousarray(
            bias if np.asarray(bias).dtype in _NATIVE else np.asarray(bias, dt)
        )
        bias = _bits(bias)
    if residual is not None:
        if dst is not None and residual is out:
            residual = dst
        else:
            residual = np.asarray(residual)
            if residual.dtype not in _NATIVE:
                residual = residual.astype(dt)
            elif dst is not None and np.may_share_memory(residual, dst):
                residual = residual.copy()  # a partial overlap with out is not in-place
            residual = np.ascontiguousarray(residual)
            if final_shape is not None:
                residual = residual.reshape(_full_shape(x, y, transpose_x, transpose_y))
        residual = _bits(residual)

    if dt == _BF16:
        x, y = x.view(_U16), y.view(_U16)
    dst_bits = None if dst is None else _bits(dst)
    if bias is None and act == "none" and residual is None:
        r = C.matmul(x, y, dst_bits, transpose_x, transpose_y)
    else:
        r = C.matmul(
            x,
            y,
            dst_bits,
            transpose_x,
            transpose_y,
            bias,
            act,
            residual,
            residual_before_activation,
        )

    if dst is not None:
        return out
    if dt == _BF16:
        r = r.view(_BF16)
    if final_shape is not None:
        r = r.reshape(final_shape)
    if out is not None:
        np.copyto(out, r, casting="same_kind")
        return out
    return r


def _full_shape(x: np.ndarray, y: np.ndarray, tx: bool, ty: bool) -> tuple[int, ...]:
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    return (*batch, x.shape[-1] if tx else x.shape[-2], y.shape[-2] if ty else y.shape[-1])


def _vector_result_shape(x: np.ndarray, y: np.ndarray) -> tuple[int, ...]:
    xs = x.shape if x.ndim > 1 else (1, *x.shape)
    ys = y.shape if y.ndim > 1 else (*y.shape, 1)
    _check_contraction(x, y, xs[-1], ys[-2])
    try:
        batch = np.broadcast_shapes(xs[:-2], ys[:-2])
    except ValueError:
        raise ValueError(
            f"matmul: batch dims are not broadcastable (x: {_describe(x)}; y: {_describe(y)})"
        ) from None
    shape = (*batch, xs[-2], ys[-1])
    if x.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if y.ndim == 1:
        shape = shape[:-1]
    return shape


def _check_contraction(x: np.ndarray, y: np.ndarray, kx: int, ky: int) -> None:
    if kx != ky:
        raise ValueError(
            f"matmul: contraction dims differ: op(x) has K={kx}, op(y) has K={ky} "
            f"(x: {_describe(x)}; y: {_describe(y)})"
        )


# --------------------------------------------------------------------------
# NumPy fallback (the epilogue computes the formulas of the fw.core._epilogue table)

_NUMERIC_KINDS = frozenset("biufc")


def _matmul_numpy(
    x, y, transpose_x, transpose_y, bias, act, residual, residual_before_activation, out
):
    for a in (x, y):
        if not (a.dtype.kind in _NUMERIC_KINDS or a.dtype == _BF16):
            raise TypeError(
                f"matmul: unsupported dtypes x={_describe(x)}, y={_describe(y)}; "
                "expected numeric arrays"
            )
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(
            f"matmul: operands must have at least 1 dim (x: {_describe(x)}; y: {_describe(y)})"
        )
    xo = np.swapaxes(x, -1, -2) if transpose_x and x.ndim >= 2 else x
    yo = np.swapaxes(y, -1, -2) if transpose_y and y.ndim >= 2 else y
    _check_contraction(x, y, xo.shape[-1], yo.shape[-2] if yo.ndim >= 2 else yo.shape[0])
    if x.dtype == y.dtype == _BF16:
        result_dtype = _BF16
    else:
        result_dtype = np.result_type(x.dtype, y.dtype)
    if result_dtype == _BF16 or result_dtype == np.float16:
        # Half-precision storage: compute in float32, round once at the end.
        xo, yo = xo.astype(np.float32), yo.astype(np.float32)
    try:
        r = np.matmul(xo, yo)
    except ValueError as e:
        raise ValueError(f"matmul: {e} (x: {_describe(x)}; y: {_describe(y)})") from None
    if bias is not None or act != "none" or residual is not None:
        if r.dtype.kind in "biu":
            r = r.astype(np.float64)  # the epilogue is floating-point
        work = r.dtype
        if bias is not None:
            r = r + np.asarray(bias).astype(work)
        res = None if residual is None else np.asarray(residual).astype(work)
        if res is not None and residual_before_activation:
            r = r + res
        fn = _epilogue.BY_NAME[act].numpy
        if fn is not None:
            r = fn(r)
        if res is not None and not residual_before_activation:
            r = r + res
    r = np.asarray(r).astype(result_dtype, copy=False)
    if out is not None:
        if out.shape != r.shape:
            raise ValueError(
                f"matmul: out {_describe(out)} does not have the result shape {list(r.shape)} "
                f"(x: {_describe(x)}; y: {_describe(y)})"
            )
        np.copyto(out, r, casting="unsafe")
        return out
    return r
