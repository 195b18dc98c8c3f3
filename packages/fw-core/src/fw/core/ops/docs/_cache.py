"""The rendered op docstrings, kept between processes (like the compiled generated functions
in ``ops/_codecache.py``): rendering every doc and importing the doc tables cost ~10 ms of
``import fw`` on a loaded 2-core machine; reading them back costs well under one.

Validity: the file records the size and modification time of every module of this package
(the doc tables and the renderer) and, per docstring, the parts of the op's declaration the
text is built from (`fingerprint`). Any change there misses and re-renders; a file from another
Python or format, or a damaged one, is ignored. Written atomically, only when something was
rendered, never under ``PYTHONDONTWRITEBYTECODE``; an unwritable directory is skipped.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys

__all__ = ["DocCache", "PATH", "fingerprint", "stamp"]

_HEADER = b"fw-op-docs-1\n" + importlib.util.MAGIC_NUMBER
_DIR = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(os.path.dirname(_DIR), "__pycache__",
                    f"_op_docs.{sys.implementation.cache_tag}.marshal")


def stamp(directory: str = _DIR) -> tuple:
    """(name, size, mtime_ns) of each .py module in `directory`, sorted."""
    out = []
    with os.scandir(directory) as it:
        for e in it:
            if e.name.endswith(".py"):
                st = e.stat()
                out.append((e.name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


def fingerprint(op) -> tuple:
    """What a docstring takes from the op's declaration (`docs.render` reads no more)."""
    return (op.doc, op.input_names, tuple(sorted(op.optional)), op.variadic,
            repr(tuple(op.attrs.items())), bool(op.inplace))


class DocCache:
    """``get(key, fp)``: the stored text for `key` if it was rendered from `fp` with the
    current doc modules, else None; ``put`` stores a text; ``save`` writes the file back if
    anything was put. ``ops`` is the set of documented op names when `valid`."""

    def __init__(self, path: str = PATH, directory: str = _DIR):
        self.path = path
        self.stamp = stamp(directory)
        data = _read(path)
        self.valid = data is not None and data.get("stamp") == self.stamp
        self.ops = set(data.get("ops", ())) if self.valid else set()
        self._entries = dict(data.get("entries", {})) if self.valid else {}
        self._dirty = False

    def get(self, key, fp):
        hit = self._entries.get(key)
        return hit[1] if hit is not None and hit[0] == fp else None

    def put(self, key, fp, text: str) -> None:
        self._entries[key] = (fp, text)
        self._dirty = True

    def save(self, ops) -> bool:
        """Write the file if anything was rendered; whether it was written."""
        if not self._dirty or sys.dont_write_bytecode:
            return False
        from fw.core.atomic_io import atomic_path  # only when writing: import stays lean

        data = {"stamp": self.stamp, "ops": tuple(sorted(ops)), "entries": self._entries}
        try:
            with atomic_path(self.path, make_parents=True) as tmp, open(tmp, "wb") as f:
                f.write(_HEADER + marshal.dumps(data))
        except (OSError, ValueError):  # read-only install, or an unmarshallable default
            return False
        self._dirty = False
        return True


def _read(path: str):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if not raw.startswith(_HEADER):
        return None
    try:
        data = marshal.loads(raw[len(_HEADER):])
    except (EOFError, ValueError, TypeError):
        return None
    return data if type(data) is dict else None
