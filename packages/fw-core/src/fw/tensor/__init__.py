"""``fw.tensor``: Paddle's ``paddle.tensor`` namespace.

Paddle files its tensor functions in submodules (``paddle.tensor.math.add``,
``paddle.tensor.creation.zeros`` …) and, since 3.x, ``paddle.tensor(data, …)``
also creates a tensor. Here the module is callable the same way, and it and its
submodules expose every public fw function (fw does not keep Paddle's split).
"""

import sys as _sys
import types as _types

from fw.core import FUNCTIONS as _FUNCTIONS

_SUBMODULES = ("math", "creation", "manipulation", "linalg", "logic", "random", "search", "stat",
               "attribute", "einsum", "ops", "to_string", "layer_function_generator")


def _lookup(name):
    fn = _FUNCTIONS.get(name)
    if fn is None:
        raise AttributeError(f"fw.tensor has no function {name!r}")
    return fn


class _TensorModule(_types.ModuleType):
    def __call__(self, *args, **kwargs):
        return _FUNCTIONS["tensor"](*args, **kwargs)

    def __getattr__(self, name):
        if name in _SUBMODULES:
            sub = _types.ModuleType(f"{__name__}.{name}")
            sub.__getattr__ = _lookup  # PEP 562: module-level __getattr__
            _sys.modules[sub.__name__] = sub
            setattr(self, name, sub)
            return sub
        return _lookup(name)


_sys.modules[__name__].__class__ = _TensorModule
