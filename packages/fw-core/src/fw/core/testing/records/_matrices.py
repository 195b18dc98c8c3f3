"""Matrix inputs shared by the linalg, decomp and solve records: well-conditioned
(diagonally dominant, symmetric positive-definite, or Hermitian with separated
eigenvalues) so that finite-difference gradient checks are meaningful; batches
include empty ones.
"""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, Sample, arrays

COMPLEX = (_dt.complex64, _dt.complex128)
INEXACT = FLOATS + COMPLEX
F32 = np.float32


# ---------------------------------------------------------------- input helpers
def _batch(draw, empty=True):
    opts = [(), (2,), (1, 2)] + ([(0,)] if empty else [])
    return draw(st.sampled_from(opts))


def _general(draw, dtype, batch, m, n):
    return arrays(draw, dtype, batch + (m, n), -1.0, 1.0)


def _well_conditioned(draw, dtype, batch, n):
    """A diagonally dominant (so invertible, well-conditioned) matrix stack."""
    a = _general(draw, dtype, batch, n, n)
    return (a + (n + 1) * np.eye(n)).astype(a.dtype)


def _spd(draw, dtype, batch, n):
    """Hermitian positive-definite with eigenvalues >= n."""
    a = _general(draw, dtype, batch, n, n)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(a.dtype)


def _hermitian(draw, dtype, batch, n):
    """Hermitian with well separated eigenvalues (eigenvector gradients exist)."""
    a = _general(draw, dtype, batch, n, n) * 0.2
    h = (a + np.conj(np.swapaxes(a, -1, -2))) / 2 + np.diag(np.arange(n) * 2.0)
    return h.astype(a.dtype)


def _distinct_singular(draw, dtype, batch, m, n):
    """A matrix with well separated singular values: U diag(s) V^T + noise."""
    k = min(m, n)
    a = _general(draw, dtype, batch, m, n) * 0.05
    d = np.zeros((m, n))
    d[np.arange(k), np.arange(k)] = np.arange(k, 0, -1) * 2.0
    return (a + d).astype(a.dtype)


BAD_SQUARE = ([np.ones((2, 3), F32)], {}, InvalidArgumentError, "square")
BAD_INT = ([np.ones((2, 2), np.int64)], {}, InvalidTypeError, "floating")
BAD_RANK = ([np.ones((3,), F32)], {}, InvalidArgumentError, "at least 2 dimensions")


def _unary_square(make, empty=True, **attrs):
    def sample(draw, dtype):
        n = draw(st.integers(1, 4))
        return Sample([make(draw, dtype, _batch(draw, empty), n)], dict(attrs))
    return sample
