"""fw.utils: interop helpers (``fw.utils.dlpack``). Other distributions add
modules here (fw-hub ships ``fw.utils.download``, Paddle's paddle.utils.download;
fw-nn ships ``fw.utils.log_writer`` with ``LogWriter``), so this package's path
extends over every installed ``fw/utils`` portion."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from fw.utils import dlpack  # noqa: E402
from fw.utils.deprecated import deprecated  # noqa: E402
from fw.utils.install_check import require_version, run_check  # noqa: E402
from fw.utils.lazy_import import try_import  # noqa: E402

__all__ = ["dlpack", "deprecated", "require_version", "run_check", "try_import"]

# names other distributions provide in their fw.utils modules (resolved on first use)
_PROVIDED = {"LogWriter": ("fw.utils.log_writer", "fw-nn")}


def __getattr__(name):
    if name in _PROVIDED:
        import importlib

        mod, pkg = _PROVIDED[name]
        try:
            return getattr(importlib.import_module(mod), name)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise
            raise AttributeError(f"fw.utils.{name} is provided by the {pkg} package: "
                                 f"pip install {pkg}", name=name) from None
    raise AttributeError(f"module 'fw.utils' has no attribute {name!r}", name=name)
