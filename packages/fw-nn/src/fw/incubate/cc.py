"""``paddle.incubate.cc``: Paddle's experimental kernel compiler (``compile``, ``ap``,
``fuse``, …), which generates CUDA code for NVIDIA GPUs. fw has no such compiler (its
own fusion runs in fw.jit's program passes); each of Paddle's names raises a clear
error."""

from __future__ import annotations

from fw.core.errors import UnsupportedError

_NAMES = ("ap", "compile", "compiler", "data_type_util", "fuse", "tools", "typing")
__all__: list = []


def __getattr__(name):
    if name not in _NAMES:  # tools probe modules for other names: a plain miss
        raise AttributeError(f"module 'fw.incubate.cc' has no attribute {name!r}")
    raise UnsupportedError(f"fw.incubate.cc.{name}: Paddle's incubate.cc compiler generates "
                           f"CUDA kernels and is not supported in fw (see "
                           f"docs/paddle_differences.md)")
