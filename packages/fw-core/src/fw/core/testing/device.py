"""The device that device-parametrised tests run on (the `DEVICE` switch, as MLX's
test suite has one).

``FW_TEST_DEVICE=gpu`` runs them on CuPy and an NVIDIA GPU. Without it they run on
the 'fake' device (`fw.core.testing.fake_device`, a NumPy subclass), so on a machine
with no GPU the same tests still check what does not need one: every output stays on
the inputs' device (a kernel that builds a host array, as ``np.asarray`` or
``np.zeros`` without ``like=`` do, drops the fake device's array type, and on CuPy it
would fail), and values match the cpu reference.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

import numpy as np

from fw.core import place as _pl

__all__ = ["name", "place", "on", "move", "is_real_gpu"]


def name() -> str:
    """'gpu' or 'fake' (FW_TEST_DEVICE; anything else is an error, not a silent cpu)."""
    kind = os.environ.get("FW_TEST_DEVICE", "fake").strip().lower() or "fake"
    if kind not in ("gpu", "fake"):
        raise ValueError(f"FW_TEST_DEVICE={kind!r}: expected 'gpu' or 'fake'")
    return kind


def is_real_gpu() -> bool:
    return name() == "gpu"


def place() -> _pl.Place:
    """The test device's place, its backend registered (the fake one needs no plugin)."""
    kind = name()
    if kind == "fake" and "fake" not in _pl._BACKENDS:
        from fw.core.testing.fake_device import FakeBackend

        _pl.register_backend(FakeBackend())
    _pl.get_backend(kind)  # gpu: a clear error when CuPy or the GPU is missing
    return _pl.Place(kind, 0)


@contextmanager
def on(p=None):
    """Make the test device current for the block (new tensors are created there)."""
    p = p or place()
    old = _pl._current[0]
    _pl._current[0] = p
    try:
        yield p
    finally:
        _pl._current[0] = old


def move(args, p=None):
    """Sample args (NumPy arrays, scalars, lists of arrays) -> fw call arguments with
    every array a Tensor on the test device."""
    from fw.core.tensor import to_tensor

    p = p or place()
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(to_tensor(a, place=p))
        elif isinstance(a, list) and a and any(isinstance(x, np.ndarray) for x in a):
            out.append([to_tensor(x, place=p) if isinstance(x, np.ndarray) else x for x in a])
        else:
            out.append(a)
    return out


# ---------------------------------------------------------------- comparing with the cpu
# Where a GPU may rightly differ from the cpu reference (each seen on an H200 with
# CuPy 14; the fake device has none of them):
# outputs defined up to a sign per vector (eigen/singular vectors): compared by |v|
GAUGE = {"eigh": (1,), "svd": (0, 2), "eig": (1,)}
# writes to one position from several updates: which one wins is unspecified on a GPU
UNORDERED_WRITES = {"put_along_axis": lambda attrs: attrs.get("reduce", "assign") == "assign",
                    "max_unpool": lambda attrs: True}
# complex edge values (infinities) where CuPy's formulas give NaN and NumPy's 0
COMPLEX_EDGES = {"rsqrt", "reciprocal", "log2"}
# looser tolerances, with why: put_along_axis's accumulating modes on duplicate indices
# differed by 4e-8 relative in float64 on an H200 (CuPy's atomic add.at); not yet
# explained, so it is loosened here rather than hidden
LOOSE = {"put_along_axis": 1e-6}


def tolerance_scale() -> float:
    """A GPU reduces in another order than NumPy (trees, not pairwise sums)."""
    return 10.0 if is_real_gpu() else 1.0


def comparable(op_name, k, dtype, attrs, got, want):
    """(got, want) as they should compare on the test device, or None when output `k`
    has no device-independent value here."""
    if not is_real_gpu():
        return got, want
    if op_name in UNORDERED_WRITES and UNORDERED_WRITES[op_name](attrs):
        return None
    if op_name in COMPLEX_EDGES and dtype.is_complex:
        return None
    if k in GAUGE.get(op_name, ()):
        return np.abs(got), np.abs(want)
    return got, want


def loose(op_name):
    """An absolute and relative tolerance floor for `op_name` on the test device."""
    return LOOSE.get(op_name, 0.0) if is_real_gpu() else 0.0


# ops whose output device is an attribute (to_device's record copies to the cpu)
MOVES = {"to_device"}


class LeftTheDevice(AssertionError):
    """An output of an op run on the test device is on another device."""


def _flat(out):
    from fw.core.testing import as_tuple

    for o in as_tuple(out):
        if isinstance(o, (list, tuple)):
            yield from o
        else:
            yield o


def _tolerance_dtype(dtype, w):
    """The dtype whose tolerance applies: the output's when an integer input gives a
    floating output (a device's transcendental functions round differently)."""
    wd = np.asarray(w).dtype
    if not dtype.is_floating_point and wd.kind in "fc":
        from fw.core import dtypes as _dt

        return _dt.from_numpy(wd)
    return dtype


def check_outputs(rec, dtype, attrs, got, want, p):
    """Assert that the outputs `got` of record `rec`'s op, run on device `p`, stay on
    `p` (else `LeftTheDevice`) and equal the cpu reference's `want` within the record's
    tolerance for this device (else AssertionError)."""
    from fw.core.tensor import Tensor
    from fw.core.testing import assert_close, tolerance

    name = rec.op
    got, want = list(_flat(got)), list(_flat(want))
    assert len(got) == len(want), f"{name}: {len(got)} outputs on {p}, {len(want)} on cpu"
    for k, (g, w) in enumerate(zip(got, want)):
        if not isinstance(g, Tensor):
            continue
        if name not in MOVES and g.place != p:
            raise LeftTheDevice(f"{name} output {k} is on {g.place}, inputs on {p}")
        if rec.nondeterministic:
            assert g.shape == list(np.shape(w)) and g.numpy().dtype == np.asarray(w).dtype
            continue
        pair = comparable(name, k, dtype, attrs, g.numpy(), np.asarray(w))
        if pair is None:
            continue
        r, a = rec.tol.get(dtype.name, tolerance(_tolerance_dtype(dtype, w)))
        f, lo = tolerance_scale(), loose(name)
        assert_close(*pair, dtype, max(r * f, lo), max(a * f, lo),
                     what=f"{name} output {k} on {p}")
