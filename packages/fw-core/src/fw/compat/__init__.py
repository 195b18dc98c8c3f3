"""``fw.compat``: PyTorch-style spellings of fw functions (``dim=`` for ``axis=``,
``input`` first), as Paddle 3's ``paddle.compat`` has, and the switch that makes
``import torch`` give fw (`enable_compat` / `disable_compat`)."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

from fw.compat import nn  # noqa: F401

__all__ = ["nn", "enable_compat", "disable_compat", "is_compat_enabled"]


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``torch`` and ``torch.x`` to ``fw`` and ``fw.x``."""

    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("fw" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass


_alias = _TorchAlias()


def enable_compat() -> None:
    """Make ``import torch`` (and ``torch.nn``, ...) import fw, to run PyTorch-style scripts on fw.

    A real PyTorch already imported is set aside until disable_compat.

    Returns:
        None

    Examples:
        >>> import fw
        >>> fw.enable_compat()
        >>> import torch
        >>> torch.zeros([2]).shape
        [2]
        >>> fw.disable_compat()
    """
    if _alias in sys.meta_path:
        return
    _saved.update({k: v for k, v in sys.modules.items()
                   if k == "torch" or k.startswith("torch.")})
    for k in _saved:
        del sys.modules[k]
    sys.meta_path.insert(0, _alias)


def disable_compat() -> None:
    """Undo enable_compat: ``import torch`` imports PyTorch again (or fails if it is missing).

    Returns:
        None

    Examples:
        >>> import fw
        >>> fw.enable_compat()
        >>> fw.disable_compat()
    """
    if _alias in sys.meta_path:
        sys.meta_path.remove(_alias)
    for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
        if getattr(sys.modules[k], "__name__", "").startswith("fw"):
            del sys.modules[k]
    sys.modules.update(_saved)
    _saved.clear()


def is_compat_enabled() -> bool:
    """Whether `enable_compat` is in effect (``import torch`` gives fw).

    Returns:
        bool: True between `enable_compat` and `disable_compat`.

    Examples:
        >>> import fw
        >>> fw.compat.is_compat_enabled()
        False
        >>> fw.compat.enable_compat()
        >>> fw.compat.is_compat_enabled()
        True
        >>> fw.compat.disable_compat()
        >>> fw.compat.is_compat_enabled()
        False
    """
    return _alias in sys.meta_path


_saved: dict = {}
