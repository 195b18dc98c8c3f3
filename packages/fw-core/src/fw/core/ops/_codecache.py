"""A cache of the compiled code of the generated op functions.

`fw.core.ops._api` generates the public function of each op as Python source (so
signatures and defaults are real and binding is as cheap as in hand-written
code). Compiling ~120 such sources is the largest part of ``import fw.core.ops``
(about 17 ms); loading their code objects back with `marshal` takes 0.5 ms.

Trust and validity, as for the ``.pyc`` files Python itself loads:

- one file, written only by this module, in this package's ``__pycache__``
  directory next to those ``.pyc`` files (no user or temp directory);
- a header with fw's format tag and the interpreter's bytecode magic number: a
  file from another Python or another format is ignored;
- each entry is keyed by the exact ``(filename, source)`` it was compiled from,
  so a generator or op-table change simply misses and recompiles; a damaged file
  is ignored;
- written atomically (`fw.core.atomic_io`) and only when something was compiled;
  an unwritable directory is skipped silently, and ``PYTHONDONTWRITEBYTECODE``
  (``sys.dont_write_bytecode``) turns writing off, as for ``.pyc`` files.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys

__all__ = ["CodeCache", "PATH"]

_HEADER = b"fw-generated-ops-1\n" + importlib.util.MAGIC_NUMBER
_CodeType = type(compile("", "", "exec"))
_compile = compile  # a seam for the tests (a cache hit must not compile)

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__",
                    f"_generated_ops.{sys.implementation.cache_tag}.marshal")


class CodeCache:
    """``compile(source, filename)`` through the cache file at `path`; `save` writes
    back the entries this process used when any of them had to be compiled."""

    def __init__(self, path: str = PATH):
        self.path = path
        self._stored = _read(path)
        self._used: dict = {}
        self._compiled = False

    def compile(self, source: str, filename: str):
        key = (filename, source)
        code = self._stored.get(key)
        if type(code) is not _CodeType:
            code = _compile(source, filename, "exec")
            self._compiled = True
        self._used[key] = code
        return code

    def save(self) -> bool:
        """Write the cache if anything was compiled; whether it was written."""
        if not self._compiled or sys.dont_write_bytecode:
            return False
        from fw.core.atomic_io import atomic_path  # only when writing: import stays lean

        try:
            with atomic_path(self.path, make_parents=True) as tmp, open(tmp, "wb") as f:
                f.write(_HEADER + marshal.dumps(self._used))
        except OSError:  # a read-only install: compile at each import, as without .pyc
            return False
        self._stored, self._compiled = self._used, False
        return True


def _read(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return {}
    if not data.startswith(_HEADER):
        return {}
    try:
        codes = marshal.loads(data[len(_HEADER):])
    except (EOFError, ValueError, TypeError):
        return {}
    return codes if type(codes) is dict else {}
