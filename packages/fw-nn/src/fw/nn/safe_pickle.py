"""Reading checkpoint pickles without executing code from them.

A pickle is a program: its ``GLOBAL``/``STACK_GLOBAL`` opcodes import any callable and
``REDUCE`` calls it (``os.system``, ``builtins.eval``, ...), which is how Paddle's and
PyTorch's pickle checkpoints run attacker code. `SafeUnpickler` resolves globals from a
short allow-list of data constructors only — NumPy array and dtype reconstruction,
NumPy scalars, ``collections.OrderedDict`` and the builtin containers — and refuses
everything else with `UnsafePickleError` naming the offending ``module.global``,
before anything is called. What the allowed constructors build is data (arrays of
numeric dtypes, dicts, lists, tuples, strings, numbers); `check_plain` verifies the
result is exactly that (no object arrays) before anyone uses it.

This is what ``fw.load`` uses for Paddle ``.pdparams`` / ``.pdopt`` files (pickles of
name -> ndarray dicts written by ``paddle.save``), and what fw-hub builds its PyTorch
checkpoint reader on.
"""

from __future__ import annotations

import collections
import io
import math
import pickle
import pickletools
import struct

import numpy as np

from fw.core.errors import InvalidArgumentError

__all__ = ["SafeUnpickler", "UnsafePickleError", "loads", "load", "check_plain",
           "ALLOWED_GLOBALS"]


class UnsafePickleError(InvalidArgumentError, pickle.UnpicklingError):
    """A pickle that refers to a global outside the allow-list, or holds something other
    than plain data; the message names it. Nothing from the pickle was executed. (What
    ``fw.load`` raises for such a file is both this and its `CheckpointError`.)"""


def _latin1_encode(obj, encoding="latin1"):
    # Protocol-2 pickles written by Python 3 store bytes as _codecs.encode(str, "latin1")
    # (NumPy's array data in Paddle 2.0-era .pdparams). Only that exact use is allowed:
    # codec names reach the codec registry, which can import modules.
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
        raise UnsafePickleError(f"fw.nn.safe_pickle: _codecs.encode is only allowed as "
                                f"encode(str, 'latin1') (bytes in a protocol-2 pickle), got "
                                f"encode({type(obj).__name__}, {encoding!r})")
    return obj.encode("latin1")


_NP_RECONSTRUCT = np.ndarray.__reduce__(np.zeros(1))[0]  # numpy's _reconstruct


def _reconstruct(subtype, shape, dtype):
    # NumPy pickles an array as _reconstruct(ndarray, (0,), b'b') followed by BUILD with
    # the real shape and bytes (checked against each other by ndarray.__setstate__).
    # Anything else (a subclass, a big empty shape that would allocate memory the file
    # never pays for) is not what NumPy writes.
    if subtype is not np.ndarray:
        raise UnsafePickleError(f"fw.nn.safe_pickle: numpy _reconstruct of "
                                f"{getattr(subtype, '__name__', type(subtype).__name__)}; only "
                                f"numpy.ndarray is allowed")
    if not isinstance(shape, tuple) or not all(isinstance(s, int) and 0 <= s for s in shape) \
            or math.prod(shape) > 1:
        raise UnsafePickleError(f"fw.nn.safe_pickle: numpy _reconstruct with the initial "
                                f"shape {str(shape)[:60]} (NumPy writes (0,))")
    return _NP_RECONSTRUCT(subtype, shape, dtype)


def _frombuffer(buf, dtype, shape, order):
    # NumPy 2 pickles arrays with protocol 5 as _frombuffer(bytes, dtype, shape, order)
    if not isinstance(buf, (bytes, bytearray, pickle.PickleBuffer)) \
            or not isinstance(dtype, np.dtype) or order not in ("C", "F") \
            or not isinstance(shape, tuple) or not all(isinstance(s, int) for s in shape):
        raise UnsafePickleError("fw.nn.safe_pickle: numpy _frombuffer with arguments of types "
                                f"{type(buf).__name__}, {type(dtype).__name__}, "
                                f"{type(shape).__name__}, {order!r}")
    return np.frombuffer(buf, dtype=dtype).reshape(shape, order=order).copy(order="K")


def _numpy_globals() -> dict:
    reconstruct = _reconstruct
    scalar = np.float32(0).__reduce__()[0]  # numpy's scalar
    out = {}
    # NumPy 1.x writes numpy.core.*, NumPy 2.x numpy._core.*: both name the same objects
    for core in ("numpy.core.multiarray", "numpy._core.multiarray"):
        out[(core, "_reconstruct")] = reconstruct
        out[(core, "scalar")] = scalar
    for numeric in ("numpy.core.numeric", "numpy._core.numeric"):
        out[(numeric, "_frombuffer")] = _frombuffer
    out[("numpy", "ndarray")] = np.ndarray
    out[("numpy", "dtype")] = np.dtype
    return out


ALLOWED_GLOBALS: dict = {
    **_numpy_globals(),
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "dict"): dict,
    ("builtins", "list"): list,
    ("builtins", "tuple"): tuple,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "complex"): complex,
    ("_codecs", "encode"): _latin1_encode,
}
# Python 2 pickles name the builtins module __builtin__ (pickle maps it when fix_imports)


_EXT_OPCODES = {pickle.EXT1[0], pickle.EXT2[0], pickle.EXT4[0]}


def _refuse_extension_opcodes(data: bytes, what: str) -> None:
    """EXT1/2/4 name a global through copyreg's extension registry, and CPython's
    unpickler serves one it has resolved before from a process-wide cache without asking
    `find_class`: no checkpoint writer uses them, so a pickle holding one is refused."""
    try:
        for op, _, pos in pickletools.genops(data):
            if op.code.encode("latin1")[0] in _EXT_OPCODES:
                raise UnsafePickleError(f"{what} uses the extension-registry opcode {op.name} "
                                        f"(at byte {pos}), which checkpoints never contain")
            if op.name == "STOP":
                break
    except UnsafePickleError:
        raise
    except Exception as e:  # malformed: the unpickler reports it below, with context
        if not isinstance(e, (ValueError, KeyError, IndexError, EOFError, TypeError,
                              UnicodeError, OverflowError)):
            raise


class SafeUnpickler(pickle.Unpickler):
    """A ``pickle.Unpickler`` whose `find_class` resolves only `ALLOWED_GLOBALS`
    (plus `extra_globals`) and whose persistent ids are refused unless a subclass
    handles them.

    Args:
        file: a binary file object.
        what (str): how errors name the source (e.g. ``"fw.load: <path>"``).
        extra_globals (dict, optional): more ``(module, name) -> object`` entries a
            caller vouches for (fw-hub's PyTorch reader adds its storage rebuilders).
    """

    def __init__(self, file, *, what: str = "fw.nn.safe_pickle: the pickle", extra_globals=None,
                 **kw):
        kw.setdefault("encoding", "latin1")  # Paddle's own choice (Python 2 era files)
        data = file.read()
        _refuse_extension_opcodes(data, what)
        super().__init__(io.BytesIO(data), **kw)
        self.what = what
        self.allowed = dict(ALLOWED_GLOBALS)
        if extra_globals:
            self.allowed.update(extra_globals)

    def find_class(self, module, name):
        obj = self.allowed.get((module, name))
        if obj is None:
            raise UnsafePickleError(
                f"{self.what} refers to the global {module}.{name}, which "
                f"is not allowed (only NumPy arrays/dtypes/scalars, OrderedDict and builtin "
                f"containers); it was not imported or called. If you trust the file, convert "
                f"it to safetensors in the program that wrote it")
        return obj

    def persistent_load(self, pid):
        raise UnsafePickleError(f"{self.what} uses persistent id "
                                f"{str(pid)[:80]!r}, which this reader does not handle")


def _walk(obj, what, path, depth):
    if depth > 100:
        raise UnsafePickleError(f"{what} nests deeper than 100 levels "
                                f"(at {path or 'the top level'})")
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise UnsafePickleError(f"{what}: the array at "
                                    f"{path or 'the top level'} has dtype {obj.dtype} "
                                    f"(arrays of Python objects are not weights)")
        return
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes, np.generic)):
        if isinstance(obj, np.generic) and obj.dtype.hasobject:
            raise UnsafePickleError(f"{what}: object scalar at {path}")
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, (str, int, float, bool, tuple, type(None))):
                raise UnsafePickleError(f"{what}: a key of type "
                                        f"{type(k).__name__} at {path or 'the top level'}")
            _walk(v, what, f"{path}.{k}" if path else str(k), depth + 1)
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            _walk(v, what, f"{path}[{i}]", depth + 1)
        return
    raise UnsafePickleError(f"{what}: a {type(obj).__name__} at "
                            f"{path or 'the top level'} is not plain data")


def check_plain(obj, what: str = "fw.nn.safe_pickle: the pickle"):
    """Raise `UnsafePickleError` unless `obj` is plain data: numeric/bool NumPy arrays and
    scalars, Python numbers/strings/bytes/None, and dicts/lists/tuples/sets of them.

    Examples:
        .. code-block:: python

            >>> import numpy as np
            >>> from fw.nn.safe_pickle import check_plain
            >>> check_plain({"w": np.ones(2), "meta": [1, "a"]})["meta"]
            [1, 'a']
            >>> check_plain({"w": np.array([object()])})  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            fw.nn.safe_pickle.UnsafePickleError: ...: the array at w has dtype object ...
    """
    _walk(obj, what, "", 0)
    return obj


def loads(data: bytes, *, what: str = "fw.nn.safe_pickle: the pickle"):
    """Unpickle `data` with `SafeUnpickler` and `check_plain` the result.

    Args:
        data (bytes): the pickle.
        what (str, optional): how errors name the source.

    Returns:
        The unpickled plain data.

    Raises:
        UnsafePickleError: a disallowed global (named), or non-plain data.

    Examples:
        .. code-block:: python

            >>> import pickle, numpy as np
            >>> from fw.nn import safe_pickle
            >>> safe_pickle.loads(pickle.dumps({"w": np.ones(2, np.float32)}))["w"]
            array([1., 1.], dtype=float32)
            >>> import os
            >>> class Evil:
            ...     def __reduce__(self):
            ...         return (os.system, ("echo pwned",))
            >>> safe_pickle.loads(pickle.dumps(Evil()))  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            fw.nn.safe_pickle.UnsafePickleError: ... the global posix.system, which is not ...
    """
    return load(io.BytesIO(data), what=what)


def load(file, *, what: str = "fw.nn.safe_pickle: the pickle"):
    """Like `loads`, from a binary file object.

    Examples:
        .. code-block:: python

            >>> import io, pickle, numpy as np
            >>> from fw.nn import safe_pickle
            >>> out = safe_pickle.load(io.BytesIO(pickle.dumps({"b": np.int64(3)}, protocol=2)))
            >>> type(out["b"]).__name__, int(out["b"])
            ('int64', 3)
    """
    try:
        obj = SafeUnpickler(file, what=what).load()
    except UnsafePickleError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, OverflowError, MemoryError, RecursionError, UnicodeError,
            struct.error) as e:
        raise UnsafePickleError(f"{what} is not a readable pickle "
                                f"({type(e).__name__}: {str(e)[:200]})") from None
    return check_plain(obj, what)

