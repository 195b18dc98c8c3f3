"""fw.utils: interop helpers (``fw.utils.dlpack``)."""

from fw.utils import dlpack

__all__ = ["dlpack"]
