"""``fw.utils.try_import``: import an optional dependency with an actionable error."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["try_import"]


def try_import(module_name: str, err_msg: str | None = None) -> ModuleType:
    """Import ``module_name``; if it is missing, raise ImportError saying what to install.

    Args:
        module_name (str): a module name, e.g. ``"scipy.signal"``.
        err_msg (str, optional): the message to raise instead of the default.

    Returns:
        module, the imported module.

    Examples:
        >>> import fw
        >>> from fw.utils import try_import
        >>> try_import("json").dumps([1])
        '[1]'
    """
    try:
        return importlib.import_module(module_name)
    except ImportError as e:
        if e.name is not None and not module_name.startswith(e.name) \
                and not e.name.startswith(module_name):
            raise  # the module exists but one of its own dependencies is missing
        pip_name = module_name.split(".")[0]
        raise ImportError(err_msg or (
            f"try_import: failed to import {module_name!r}; an fw feature needs this optional "
            f"dependency: pip install {pip_name}")) from e
