"""Ops whose reference kernel does not run on a device's arrays yet: on a device they
run on the host (inputs copied down, outputs copied back up), like PyTorch's MPS
fallback, instead of failing with the array library's error.

Every other op runs its reference on the device's arrays through NumPy's dispatch
protocols (or a device kernel). The list is checked both ways by the device tests:
``FW_TEST_DEVICE=gpu`` runs every op record on a GPU (ci/gpu/run.sh), and on machines
without one the strict 'fake' device of fw.core.testing runs them. Removing an op
from here is how a reference is declared device-clean; `ci/gpu/op_status.py` says
which ones still fail. The copies make these ops slow on a GPU: none of them is on
the path of a forward/backward step of the common layers.
"""

from __future__ import annotations

import numpy as np

__all__ = ["HOST_FALLBACK", "attach"]

# why, per group (measured on CuPy 14 with ci/gpu/op_status.py, 2026-11-26)
HOST_FALLBACK = frozenset({
    # data-dependent output shapes or host loops over values
    "unique", "unique_consecutive", "histogram", "histogram_bin_edges", "histogramdd",
    "histogramdd_bin_edges", "mode", "ctc_loss", "hsigmoid_loss", "arange_dyn", "full_dyn",
    "expand_dyn", "reshape_dyn", "as_strided",
    # NumPy functions CuPy lacks (ufunc.accumulate of maximum/minimum/logaddexp,
    # reductions with `initial=`, eye(device=)) or host index arithmetic
    "cummax", "cummin", "logcumsumexp", "median", "nanmedian", "quantile", "nanquantile",
    "lu", "lu_unpack", "diag_embed", "max_unpool", "fold", "interpolate",
    # random ops whose samplers CuPy's Generator does not have
    "bernoulli", "exponential", "poisson", "normal", "gaussian_like", "uniform_like",
    "randint_like",
})


def _down(a):
    """A device array (or a list of them) as host arrays."""
    from fw.core import place as _pl

    if isinstance(a, list):
        return [_down(x) for x in a]
    if a is None or type(a) is np.ndarray or isinstance(a, (np.generic, int, float, complex,
                                                              bool, str, tuple)):
        return a
    return _pl.backend_of(a).to_numpy(a)


def _up(out, be, index):
    if isinstance(out, tuple):
        return tuple(_up(o, be, index) for o in out)
    if isinstance(out, list):
        return [_up(o, be, index) for o in out]
    return be.asarray(np.asarray(out), index)


def _device_of(arrays):
    from fw.core import place as _pl

    for a in arrays:
        for x in (a if isinstance(a, list) else (a,)):
            if x is not None and type(x) is not np.ndarray and not isinstance(
                    x, (np.generic, int, float, complex, bool)):
                return _pl.place_of(x).index
    return _pl.current_place().index


def host_kernel(op, be):
    ref = op.reference

    def kernel(*arrays, **attrs):
        index = _device_of(arrays)
        return _up(ref(*[_down(a) for a in arrays], **attrs), be, index)

    kernel.__name__ = f"{op.name}_host_fallback"
    kernel.host_fallback = True
    return kernel


def attach(be) -> None:
    """Give backend `be` the host fallback for the listed ops it has no kernel for
    (FW_NO_HOST_FALLBACK=1: none, to see which of them now run on the device)."""
    import os

    from fw.core.ops._registry import OPS

    if os.environ.get("FW_NO_HOST_FALLBACK") == "1":
        return

    for name in HOST_FALLBACK:
        op = OPS.get(name)
        if op is not None and be.name not in op.kernels:
            op.kernels[be.name] = host_kernel(op, be)
