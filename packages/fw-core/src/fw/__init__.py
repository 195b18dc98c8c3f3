"""fw — a deep-learning framework with Paddle 3.x's public API.

This module is the facade: tensors, dtypes, devices and every op function come
from fw-core; ``fw.nn``, ``fw.jit``, … resolve lazily to the installed packages
(``import fw.nn`` without fw-nn raises ModuleNotFoundError naming the pip package;
``fw.nn`` is then an AttributeError with the same hint). ``import fw`` loads fw-core
only: fw-autograd attaches itself on first use of gradients (fw.core._grad_hooks).
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
from fw.core.random import Generator, get_rng_state, seed, set_rng_state  # noqa: E402,F401
from fw.core.tensor import Tensor, is_tensor, set_printoptions, to_tensor  # noqa: E402,F401
from fw.utils.dlpack import from_dlpack, to_dlpack  # noqa: E402,F401

globals().update({k: v for k, v in _FUNCTIONS.items() if "." not in k})
globals()["bool"] = _dtypes.bool_
import math as _math  # noqa: E402

from fw.core.api.composite import TENSOR_TYPES as _TENSOR_TYPES  # noqa: E402

# Paddle 3.3's constants, dtype second names (paddle.float is float32, …) and the
# FloatTensor/LongTensor/… constructors; set through globals() so that this module's own
# code keeps the builtins `float`/`bool`.
globals().update(_TENSOR_TYPES)
from fw.core.aliases import apply as _apply_aliases  # noqa: E402

_apply_aliases(globals(), "paddle", "fw")  # finfo(type=…), is_tensor(obj=…): not op functions
globals().update({
    "e": _math.e, "pi": _math.pi, "inf": _math.inf, "nan": _math.nan, "newaxis": None,
    "float": float32, "double": float64, "half": float16, "cfloat": complex64,
    "cdouble": complex128,
})
# fw.tensor is a module (Paddle's paddle.tensor.math …) that is also callable
# (paddle.tensor(data)); it replaces the plain `tensor` function set just above.
import importlib as _importlib  # noqa: E402
import sys as _sys  # noqa: E402

globals()["tensor"] = _importlib.import_module("fw.tensor")
globals()["framework"] = _importlib.import_module("fw.framework")
from fw.compat import disable_compat, enable_compat  # noqa: E402,F401

# Subpackages provided by other distributions (DESIGN.md's package table). A name
# that no planned package provides is not listed: its error must not point at a
# package that does not exist.
_PROVIDERS = {
    "autograd": "fw-autograd",
    "nn": "fw-nn", "optimizer": "fw-nn", "io": "fw-nn", "amp": "fw-nn", "metric": "fw-nn",
    "hapi": "fw-nn", "callbacks": "fw-nn", "regularizer": "fw-nn", "distribution": "fw-nn",
    "incubate": "fw-nn",
    "sparse": "fw-nn",
    "jit": "fw-jit", "static": "fw-jit",
    "inference": "fw-inference",
    "onnx": "fw-onnx",
    "distributed": "fw-distributed",
    "slim": "fw-slim", "quantization": "fw-slim",
    "vision": "fw-vision", "audio": "fw-vision", "text": "fw-vision",
    "hub": "fw-hub",
}
# modules another distribution adds inside a subpackage of fw-core
_NESTED_PROVIDERS = {"fw.utils.download": "fw-hub"}
# top-level names -> the module that defines them
_TOP_LEVEL = {
    "grad": "fw.autograd", "no_grad": "fw.autograd", "enable_grad": "fw.autograd",
    "set_grad_enabled": "fw.autograd", "is_grad_enabled": "fw.autograd",
    "save": "fw.nn.serialization", "load": "fw.nn.serialization",
    "Model": "fw.hapi", "summary": "fw.hapi", "flops": "fw.hapi",
    "ParamAttr": "fw.nn", "create_parameter": "fw.nn", "LazyGuard": "fw.nn",
    "enable_static": "fw.static", "disable_static": "fw.static", "in_dynamic_mode": "fw.static",
    "DataParallel": "fw.distributed",
    "is_autocast_enabled": "fw.amp", "get_autocast_dtype": "fw.amp",
    "get_autocast_cpu_dtype": "fw.amp", "get_autocast_gpu_dtype": "fw.amp",
    "manual_seed": "fw.device", "XPUPinnedPlace": "fw.device",
    "get_cuda_rng_state": "fw.device", "set_cuda_rng_state": "fw.device",
    "autocast": "fw.amp",
    # Paddle 3.3 re-exports these nn.functional functions at the top level (the same objects)
    "conv1d": "fw.nn.functional", "conv2d": "fw.nn.functional", "conv3d": "fw.nn.functional",
    "group_norm": "fw.nn.functional", "layer_norm": "fw.nn.functional",
    "adaptive_avg_pool1d": "fw.nn.functional", "pdist": "fw.nn.functional",
}


def _provider(module: str):
    """The pip package that provides fw module `module`, or None if none is planned."""
    pkg = _NESTED_PROVIDERS.get(module)
    if pkg is None and module.count(".") == 1:
        pkg = _PROVIDERS.get(module[3:])
    return pkg


def _missing_message(what: str, pkg: str) -> str:
    return f"{what} is provided by the {pkg} package: pip install {pkg}"


class _MissingPackageFinder:
    """Last on ``sys.meta_path``, so it is asked only after every installed package
    was looked for: ``import fw.nn`` without fw-nn then says what to install
    instead of "No module named 'fw.nn'". It answers for no other name."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname.startswith("fw."):
            pkg = _provider(fullname)
            if pkg is not None and not _probing():
                raise ModuleNotFoundError(_missing_message(fullname, pkg), name=fullname)
        return None


def _probing() -> bool:
    """Whether `importlib.util.find_spec` is asking: a feature probe, which must get
    None for a missing package (an import gets the error). Only runs on a miss."""
    f = _sys._getframe(2)
    while f is not None and f.f_globals.get("__name__") in _IMPORT_SYSTEM:
        f = f.f_back
    return f is not None and f.f_globals.get("__name__") == "importlib.util"


_IMPORT_SYSTEM = ("importlib._bootstrap", "importlib._bootstrap_external")


# (fw's globals shadow the builtins `any`, `all`, … with ops: plain names only here)
_sys.meta_path[:] = [f for f in _sys.meta_path if type(f).__name__ != "_MissingPackageFinder"]
_sys.meta_path.append(_MissingPackageFinder())  # after the filter above: once, even on reload


def __getattr__(name):
    """``fw.nn``, ``fw.grad``, …: import the providing package on first use. A missing
    one is an AttributeError naming the pip package, so ``hasattr(fw, "vision")``
    and ``getattr(fw, "distributed", None)`` probe features as Python expects."""
    if name.startswith("__"):
        raise AttributeError(name)
    mod = _TOP_LEVEL.get(name) or f"fw.{name}"
    try:
        m = _importlib.import_module(mod)
    except ModuleNotFoundError as e:
        if not e.name or not (e.name == mod or mod.startswith(e.name + ".")):
            raise  # an installed package lacks one of its own dependencies: a real error
        pkg = _provider(e.name)
        msg = (_missing_message(f"fw.{name}", pkg) if pkg is not None
               else f"module 'fw' has no attribute {name!r}")
        raise AttributeError(msg, name=name, obj=_sys.modules[__name__]) from None
    return getattr(m, name) if name in _TOP_LEVEL else m

# Paddle 3.3's float8 formats, wider unsigned ints, non-tensor DataType tags and mmap storage
from fw.core.dtypes import (  # noqa: E402,F401
    float8_e4m3fn,
    float8_e5m2,
    pstring,
    raw,
    uint16,
    uint32,
    uint64,
)
from fw.core.mmap_storage import MmapStorage  # noqa: E402,F401
