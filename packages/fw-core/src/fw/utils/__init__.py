"""fw.utils: interop helpers (``fw.utils.dlpack``). Other distributions add
modules here (fw-hub ships ``fw.utils.download``, Paddle's paddle.utils.download),
so this package's path extends over every installed ``fw/utils`` portion."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from fw.utils import dlpack  # noqa: E402
from fw.utils.deprecated import deprecated  # noqa: E402
from fw.utils.install_check import require_version, run_check  # noqa: E402
from fw.utils.lazy_import import try_import  # noqa: E402

__all__ = ["dlpack", "deprecated", "require_version", "run_check", "try_import"]
