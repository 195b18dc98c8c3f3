"""Records for the FFT ops (the public fw.fft functions wrap these three
transforms, the frequency helper and the shift)."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, INTS, Sample, arrays, record

COMPLEX = (_dt.complex64, _dt.complex128)
F32 = np.float32


def _signal(draw, dtype, min_side=1):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(min_side, 5)) for _ in range(nd))
    k = draw(st.integers(1, nd))
    axes = draw(st.permutations(range(nd)))[:k]
    axes = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    s = None
    if draw(st.booleans()):
        s = tuple(draw(st.integers(1, 6)) for _ in axes)
    attrs = {"axes": axes, "norm": draw(st.sampled_from(["backward", "ortho", "forward"])),
             "forward": draw(st.booleans()), "s": s}
    return shape, attrs


def _c2c(draw, dtype):
    shape, attrs = _signal(draw, dtype)
    return Sample([arrays(draw, dtype, shape)], attrs)


def _r2c(draw, dtype):
    shape, attrs = _signal(draw, dtype)
    return Sample([arrays(draw, dtype, shape)], attrs)


def _c2r(draw, dtype):
    shape, attrs = _signal(draw, dtype, min_side=2)  # default n = 2 * (m - 1) >= 2
    return Sample([arrays(draw, dtype, shape)], attrs)


record("fft_c2c", _c2c, dtypes=COMPLEX, grad_order=2,
       errors=[([np.ones((3,), F32)], {}, InvalidTypeError, "must be complex"),
               ([np.ones((3, 2), np.complex64)], {"axes": (0, 0)}, InvalidArgumentError,
                "repeats an axis"),
               ([np.ones((3,), np.complex64)], {"norm": "none"}, InvalidArgumentError,
                "'norm' must be"),
               ([np.ones((3,), np.complex64)], {"s": (0,)}, InvalidArgumentError,
                "must be positive")])
record("fft_r2c", _r2c, dtypes=FLOATS, grad_order=2,
       errors=[([np.ones((3,), np.complex64)], {}, InvalidTypeError, "real floating")])
record("fft_c2r", _c2r, dtypes=COMPLEX, grad_order=2,
       errors=[([np.ones((1,), np.complex64)], {}, InvalidArgumentError,
                "output length of 0"),
               ([np.ones((3,), np.complex64)], {"axes": (0,), "s": (2, 2)},
                InvalidArgumentError, "same length")])


def _fftfreq(draw, dtype):
    return Sample([], {"n": draw(st.integers(1, 9)), "d": draw(st.sampled_from([1.0, 0.3, -2.0])),
                       "onesided": draw(st.booleans()), "dtype": dtype})


record("fftfreq", _fftfreq, dtypes=FLOATS, grad_order=0, dynamic_ok=False,
       errors=[([], {"n": 0}, InvalidArgumentError, "positive int")])


def _shift(draw, dtype):
    nd = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(0, 5)) for _ in range(nd))
    axes = None if nd == 0 or draw(st.booleans()) else \
        tuple(draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd)))
    return Sample([arrays(draw, dtype, shape)], {"axes": axes, "inverse": draw(st.booleans())})


record("fftshift", _shift, dtypes=FLOATS + INTS + COMPLEX, grad_order=2,
       errors=[([np.ones((3,), F32)], {"axes": (2,)}, InvalidArgumentError, "out of range")])
