"""cpu kernels of the activation family: ``relu``, ``gelu`` and ``silu`` on the
elementwise interpreter's loops, ``softmax`` and ``log_softmax`` on oneDNN.

- **relu gelu silu**: the interpreter's loop for that opcode on C-contiguous
  float32/float16/bfloat16 arrays of any size (one thread up to ~128K elements): 3x
  (relu, silu) to 17x (erf-form gelu) faster than the NumPy references on large
  arrays, and bit-identical to the same instruction inside a fused_elementwise
  program. float64 and strided arrays use the reference. Registered only when the CPU
  has AVX2/FMA/F16C (``_C.fused_supported()``).
- **softmax log_softmax**: float32/bfloat16, any axis (the shared policy of the oneDNN
  nn kernels, with its measurements, is in :mod:`fw.core.kernels.cpu._common`).
"""

from __future__ import annotations

import numpy as np

from fw.core import _native
from fw.core.kernels.cpu._common import (
    _EW_DTYPE_CODES,
    _U16,
    C,
    _bits,
    _float,
    _in,
    _ndarray,
    attach,
    ew_opcodes,
    fused_available,
)

__all__ = ["register"]

# op -> the interpreter opcode computing it (gelu: erf form, tanh form). Only ops whose
# NumPy references are several passes (and whose records compare with a tolerance):
# exp/log/tanh/sigmoid/erf are single SIMD ufuncs in NumPy, and their records feed them
# integer inputs promoted to float32 and demand NumPy's exact bits.
_ACTIVATIONS = {"relu": "relu", "silu": "silu", "gelu": ("gelu_erf", "gelu_tanh")}


def _make_activation(name, reference):
    """The op's kernel: C-contiguous float32/float16/bfloat16 arrays of any size go
    through the interpreter's own loop for that opcode (so an unfused op and the same
    instruction in a fused_elementwise program give identical bits); everything else
    (float64, strided, complex) takes the reference."""
    names = ew_opcodes()
    unary = C.ew_unary
    codes = _EW_DTYPE_CODES
    empty = np.empty
    u16 = _U16
    spec = _ACTIVATIONS[name]

    if name == "gelu":
        erf_form, tanh_form = names[spec[0]], names[spec[1]]

        def gelu_cpu(x, approximate=False):
            if type(x) is _ndarray:
                c = codes.get(x.dtype)
                if c is not None and x.flags.c_contiguous:
                    out = empty(x.shape, x.dtype)
                    op = tanh_form if approximate else erf_form
                    if c == 2:
                        unary(op, x.view(u16), out.view(u16))
                    else:
                        unary(op, x, out)
                    return out
            return reference(x, approximate=approximate)

        return gelu_cpu

    opcode = names[spec]

    def activation_cpu(x):
        if type(x) is _ndarray:
            c = codes.get(x.dtype)
            if c is not None and x.flags.c_contiguous:
                out = empty(x.shape, x.dtype)
                if c == 2:
                    unary(opcode, x.view(u16), out.view(u16))
                else:
                    unary(opcode, x, out)
                return out
        return reference(x)

    activation_cpu.__name__ = activation_cpu.__qualname__ = f"_{name}_cpu_native"
    return activation_cpu



def _axis(x, axis):
    nd = x.ndim
    if nd == 0 or not -nd <= axis < nd:
        return None
    return axis % nd


def _make_softmax(reference, log):
    def softmax_cpu(x, axis=-1):
        if _float(x.dtype) and x.size:
            ax = _axis(x, axis)
            if ax is not None:
                out = np.empty(x.shape, x.dtype)
                C.softmax_forward(_in(x), _bits(out), ax, log)
                return out
        return reference(x, axis=axis)

    return softmax_cpu



def register() -> None:
    attach({name: (lambda ref, name=name: _make_activation(name, ref)) for name in _ACTIVATIONS},
           when=fused_available)
    attach({"softmax": lambda ref: _make_softmax(ref, False),
            "log_softmax": lambda ref: _make_softmax(ref, True)},
           when=_native.available, guard=True)


register()
