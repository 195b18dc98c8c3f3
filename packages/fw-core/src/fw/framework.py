"""``fw.framework``: Paddle's ``paddle.framework`` namespace (a few framework-level
names). Names provided by other packages resolve lazily, like the top level."""

from fw.core.dtypes import get_default_dtype, set_default_dtype  # noqa: F401
from fw.core.place import CPUPlace, CUDAPlace, get_device, set_device  # noqa: F401
from fw.core.random import Generator, get_rng_state, seed, set_rng_state  # noqa: F401

_LAZY = {"ParamAttr": "fw.nn", "in_dynamic_mode": "fw.static", "no_grad": "fw.autograd",
         "grad": "fw.autograd", "save": "fw.nn.serialization", "load": "fw.nn.serialization"}


def __getattr__(name):
    if name in _LAZY:
        import fw

        return getattr(fw, name)
    raise AttributeError(f"module 'fw.framework' has no attribute {name!r}")
