"""Test records for the op table (the OpInfo idea): one `OpRecord` per op drives
the generic tests of every package — fast kernel vs reference, infer vs kernel,
eager vs executor, dtype promotion, error messages (fw-core), and gradients vs
finite differences (fw-autograd).

A record's ``sample(draw, dtype)`` builds one call of the op from a hypothesis
``draw`` function: it returns ``Sample(args, attrs)`` where ``args`` are NumPy
arrays / Python scalars / lists of arrays, aligned with the op's inputs.
Helpers below draw shapes (including empty and broadcast shapes) and values
(optionally with NaN/Inf).

Records live in ``fw.core.testing.records`` (one module per op family) and are
collected into `RECORDS` by op name.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fw.core import dtypes as _dt

__all__ = ["OpRecord", "Sample", "RECORDS", "record", "FLOATS", "FLOATS_LOW", "ALL_NUMERIC",
           "INTS", "shapes", "broadcast_pair", "arrays", "tolerance", "records_for"]

FLOATS = (_dt.float32, _dt.float64)
FLOATS_LOW = (_dt.float16, _dt.bfloat16)
INTS = (_dt.int32, _dt.int64)
ALL_NUMERIC = FLOATS + INTS
COMPLEX = (_dt.complex64, _dt.complex128)


@dataclass
class Sample:
    args: list
    attrs: dict = field(default_factory=dict)
    # indices of args whose gradient autograd should check (default: all float args)
    grad_args: tuple | None = None


@dataclass
class OpRecord:
    op: str
    sample: Callable  # (draw, dtype) -> Sample
    dtypes: tuple = FLOATS
    # gradient checks (fw-autograd): order 0 = none, 1 = first, 2 = also second order
    grad_order: int = 1
    grad_dtypes: tuple = (_dt.float64,)
    # tolerances per dtype name override `tolerance()`
    tol: dict = field(default_factory=dict)
    # the IR test traces with every dim dynamic unless this is False (shape-dependent attrs)
    dynamic_ok: bool = True
    ir: bool = True  # run the eager == executor test
    nondeterministic: bool = False  # random ops: compare shapes and dtypes only
    errors: list = field(default_factory=list)  # [(args, attrs, exc type, regex)]
    note: str = ""
    # optional independent oracle (NumPy/SciPy formula, or plain loops) to check the
    # reference itself: oracle(*args, **attrs) -> the outputs (tests/test_record_oracles.py)
    oracle: Callable | None = None
    # what the sampler draws: "random" values, "ties" (equal values in every slice, for
    # reductions, sorts and selections) or "duplicates" (repeated indices, for scatters);
    # the last two always come with an oracle (see records/_ties.py)
    kind: str = "random"
    # finite differences need a smooth neighbourhood: keep draws away from kinks
    fd_eps: float = 1e-6
    # the module that called `record` (set by `record`): records/<op family>.py
    module: str = field(default="", repr=False, compare=False)


RECORDS: dict = {}


def record(op: str, sample: Callable, **kw) -> OpRecord:
    kw.setdefault("module", sys._getframe(1).f_globals.get("__name__", ""))
    r = OpRecord(op, sample, **kw)
    RECORDS.setdefault(op, []).append(r)
    return r


def records_for(op_name: str) -> list:
    return RECORDS.get(op_name, [])


def tolerance(dtype) -> tuple:
    """(rtol, atol) for comparing a fast kernel with the reference."""
    d = _dt.convert_dtype(dtype)
    return {
        "float16": (1e-2, 1e-2), "bfloat16": (3e-2, 3e-2), "float32": (1e-5, 1e-6),
        "float64": (1e-10, 1e-12), "complex64": (1e-5, 1e-6), "complex128": (1e-10, 1e-12),
    }.get(d.name, (0, 0))


# ---------------------------------------------------------------- hypothesis helpers
def shapes(draw, min_dims=0, max_dims=4, min_side=0, max_side=5):
    from hypothesis.extra import numpy as hnp

    return draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                 max_side=max_side))


def broadcast_pair(draw, max_dims=4, min_side=0, max_side=5, num=2):
    from hypothesis.extra import numpy as hnp

    bs = draw(hnp.mutually_broadcastable_shapes(num_shapes=num, min_dims=0, max_dims=max_dims,
                                                min_side=min_side, max_side=max_side))
    return bs.input_shapes


def arrays(draw, dtype, shape, lo=-3.0, hi=3.0, special=False, unique=False):
    """An array of `dtype` and `shape` with values in [lo, hi]; with special=True
    some entries may be NaN/Inf (floating dtypes only)."""
    from hypothesis import strategies as st

    d = _dt.convert_dtype(dtype)
    n = int(np.prod(shape)) if len(shape) else 1
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    if d.kind == _dt._BOOL:
        return rng.random(shape) < 0.5
    if d.kind == _dt._INT:
        info = np.iinfo(d.np)
        a = rng.integers(max(int(lo), info.min), min(int(hi), info.max) + 1, size=shape)
        return a.astype(d.np)
    a = rng.uniform(lo, hi, size=shape)
    if d.kind == _dt._COMPLEX:
        a = a + 1j * rng.uniform(lo, hi, size=shape)
    if unique and n > 1:
        a = a + np.arange(n).reshape(shape) * 1e-3
    if special and n > 0 and draw(st.booleans()):
        flat = a.reshape(-1)
        k = draw(st.integers(0, n - 1))
        flat[k] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    return np.asarray(a).astype(d.np)


def load_all() -> dict:
    """Import every records module (one per op family)."""
    import importlib
    import pkgutil

    from fw.core.testing import records as _r

    for m in pkgutil.iter_modules(_r.__path__):
        importlib.import_module(f"fw.core.testing.records.{m.name}")
    return RECORDS



# ---------------------------------------------------------------- calling helpers
def to_args(args):
    """Sample args -> the arguments of an fw call (arrays become Tensors)."""
    from fw.core.tensor import to_tensor

    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(to_tensor(a))
        elif isinstance(a, list) and a and all(isinstance(x, np.ndarray) for x in a):
            out.append([to_tensor(x) for x in a])
        else:
            out.append(a)
    return out


def reference_call(op, args, attrs):
    """Run `op.reference` with the same argument conversion as the eager
    dispatcher (canon, promotion, scalars), bypassing fast kernels and paths."""
    from fw.core import dispatch

    if op.canon is not None:
        attrs = op.canon(attrs)
    target = dispatch.target_dtype(op, args) if op.promote_idx else None
    arrays_ = []
    for i, a in enumerate(args):
        t = target if (target is not None and i in op.promote_idx) else None

        def conv(x, t=t):
            if x is None:
                return None
            if isinstance(x, (bool, int, float, complex)):
                return (t or _dt.scalar_dtype(x)).np.type(x)
            x = np.asarray(x)
            return x.astype(t.np) if t is not None and x.dtype != t.np else x

        arrays_.append([conv(x) for x in a] if i == op.variadic else conv(a))
    return op.reference(*arrays_, **attrs), attrs


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def assert_close(got, want, dtype, rtol=None, atol=None, what=""):
    """Shape, then dtype, then values (NaN == NaN)."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != expected {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != expected {want.dtype}"
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    r, a = tolerance(dtype)
    r = r if rtol is None else rtol
    a = a if atol is None else atol
    g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
    w = want.astype(g.dtype)
    np.testing.assert_allclose(g, w, rtol=r, atol=a, equal_nan=True, err_msg=what)
