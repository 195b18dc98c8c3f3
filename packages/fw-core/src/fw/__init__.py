"""fw — a deep-learning framework with Paddle 3.x's public API.

This module is the facade: tensors, dtypes, devices and every op function come
from fw-core; ``fw.nn``, ``fw.jit``, … resolve lazily to the installed packages,
and a missing one raises ModuleNotFoundError naming the pip package.
``import fw as paddle`` runs Paddle programs for the surface fw covers.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from fw.core import FUNCTIONS as _FUNCTIONS  # noqa: E402
from fw.core import __version__  # noqa: E402
from fw.core import dtypes as _dtypes  # noqa: E402
from fw.core.dtypes import (  # noqa: E402,F401
    DType as dtype,
)
from fw.core.dtypes import (
    bfloat16,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    set_default_dtype,
    uint8,
)
from fw.core.misc import Size, batch, get_flags, set_flags  # noqa: E402,F401
from fw.core.place import (  # noqa: E402,F401
    CPUPlace,
    CUDAPinnedPlace,
    CUDAPlace,
    Place,
    get_device,
    is_compiled_with_cuda,
    set_device,
)
from fw.core.random import get_rng_state, seed, set_rng_state  # noqa: E402,F401
from fw.core.tensor import Tensor, is_tensor, set_printoptions, to_tensor  # noqa: E402,F401
from fw.utils.dlpack import from_dlpack, to_dlpack  # noqa: E402,F401

globals().update({k: v for k, v in _FUNCTIONS.items() if "." not in k})
globals()["bool"] = _dtypes.bool_
# fw.tensor is a module (Paddle's paddle.tensor.math …) that is also callable
# (paddle.tensor(data)); it replaces the plain `tensor` function set just above.
import importlib as _importlib  # noqa: E402

globals()["tensor"] = _importlib.import_module("fw.tensor")
globals()["framework"] = _importlib.import_module("fw.framework")
from fw.compat import disable_compat, enable_compat  # noqa: E402,F401

# Subpackages and names provided by other distributions, resolved on first use.
_PROVIDERS = {
    "autograd": "fw-autograd",
    "nn": "fw-nn", "optimizer": "fw-nn", "io": "fw-nn", "amp": "fw-nn", "metric": "fw-nn",
    "hapi": "fw-nn", "callbacks": "fw-nn", "regularizer": "fw-nn",
    "jit": "fw-jit", "static": "fw-jit",
    "inference": "fw-inference",
    "distributed": "fw-distributed",
    "slim": "fw-slim", "quantization": "fw-slim",
    "hub": "fw-hub", "vision": "fw-hub", "text": "fw-hub",
}
# top-level names -> the module that defines them
_TOP_LEVEL = {
    "grad": "fw.autograd", "no_grad": "fw.autograd", "enable_grad": "fw.autograd",
    "set_grad_enabled": "fw.autograd", "is_grad_enabled": "fw.autograd",
    "save": "fw.nn.serialization", "load": "fw.nn.serialization",
    "Model": "fw.hapi", "summary": "fw.hapi", "flops": "fw.hapi",
    "ParamAttr": "fw.nn", "create_parameter": "fw.nn", "LazyGuard": "fw.nn",
    "enable_static": "fw.static", "disable_static": "fw.static", "in_dynamic_mode": "fw.static",
    "DataParallel": "fw.distributed",
}


def __getattr__(name):
    import importlib

    if name in _TOP_LEVEL:
        mod = _TOP_LEVEL[name]
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name and (e.name == mod or mod.startswith(e.name + ".")):
                pkg = _PROVIDERS.get(mod.split(".")[1], "fw-" + mod.split(".")[1])
                raise ModuleNotFoundError(f"fw.{name} is provided by the {pkg} package: "
                                          f"pip install {pkg}", name=mod) from None
            raise
        return getattr(m, name)
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"fw.{name}")
    except ModuleNotFoundError as e:
        if e.name == f"fw.{name}":
            if name in _PROVIDERS:
                pkg = _PROVIDERS[name]
                raise ModuleNotFoundError(f"fw.{name} is provided by the {pkg} package: "
                                          f"pip install {pkg}", name=f"fw.{name}") from None
            raise AttributeError(f"module 'fw' has no attribute {name!r}") from None
        raise


# Turn on gradient recording when fw-autograd is installed (it is optional).
try:
    import fw.autograd  # noqa: F401,E402
except ModuleNotFoundError as _e:
    if _e.name not in ("fw.autograd",):
        raise
