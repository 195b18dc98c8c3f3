"""The native image kernels (fw-core's csrc/image.cpp, through
``fw.core.internal.image_kernels``) as the cv2 backend's fast path.

`_cv_resize` and `_cv_warp` build their tap tables and matrices in NumPy and hand the
sampling loops to these kernels for uint8 / float32 images; the kernels follow the
NumPy code operation for operation, so both give the same bits, and the NumPy code
stays the reference (and the path for other dtypes, or when fw-core has no native
extension). Tests set ``_K = None`` to run the reference.
"""

from __future__ import annotations

_UNSET = object()
_K = _UNSET


def kernels():
    """The kernel namespace, or None when there is none (looked up once)."""
    global _K
    if _K is _UNSET:
        from fw.core.internal import image_kernels

        _K = image_kernels()
    return _K
