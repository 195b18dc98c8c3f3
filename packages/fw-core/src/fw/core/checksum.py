"""Content checksums of fw's files: SHA-256 over named arrays and text.

One definition for every fw file that stores tensors, so that a flipped bit or a
truncated file is caught the same way everywhere. An array's digest covers its
name, its dtype, its shape and its raw bytes (C order), so a tensor renamed,
reshaped or retyped in the header is caught as well as one whose data changed.

- `array_digest(name, a)`: the hex digest of one named array (the model file,
  `fw.core.ir.serialize`, stores one per tensor, so the error names the tensor);
- `text_digest(text)`: the hex digest of a text (the model file's program);
- `digest(text, arrays)`: one hex digest over a text and a mapping of named
  arrays, in the mapping's order — exactly the checkpoint checksum of
  ``fw.save`` (fw-nn's ``serialization._digest``), so fw-nn can use this one.

>>> import numpy as np
>>> a = np.arange(3, dtype=np.float32)
>>> array_digest("w", a) == array_digest("w", a.copy())
True
>>> b = a.copy(); b.view(np.uint8)[0] ^= 1
>>> array_digest("w", a) == array_digest("w", b)
False
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["ALGORITHM", "array_digest", "text_digest", "digest", "Hasher"]

#: The algorithm name, stored beside the digests so a later fw can change it.
ALGORITHM = "sha256"


class Hasher:
    """An incremental digest: ``update_text`` / ``update_array``, then ``hexdigest``."""

    __slots__ = ("_h",)

    def __init__(self):
        self._h = hashlib.sha256()

    def update_text(self, text: str) -> Hasher:
        self._h.update(text.encode("utf-8"))
        return self

    def update_array(self, name: str, a) -> Hasher:
        """Add `a`'s name, dtype, shape and bytes (a non-contiguous array is copied)."""
        a = np.asarray(a)
        h = self._h
        h.update(name.encode("utf-8"))
        h.update(str(a.dtype).encode("ascii"))
        h.update(str(list(a.shape)).encode("ascii"))
        if not a.flags.c_contiguous:
            a = a.copy()
        h.update(a.reshape(-1).view(np.uint8).data)
        return self

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def array_digest(name: str, a) -> str:
    """The hex digest of array `a` stored under `name`."""
    return Hasher().update_array(name, a).hexdigest()


def text_digest(text: str) -> str:
    """The hex digest of `text` (UTF-8)."""
    return Hasher().update_text(text).hexdigest()


def digest(text: str, arrays) -> str:
    """One hex digest over `text` and then each ``(name, array)`` of the mapping
    `arrays`, in order (the checkpoint checksum of ``fw.save``)."""
    h = Hasher().update_text(text)
    for name, a in arrays.items():
        h.update_array(name, a)
    return h.hexdigest()
