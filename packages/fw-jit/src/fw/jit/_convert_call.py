"""`convert_call`: what a call in converted code really calls.

Every call ``f(...)`` in converted code is ``convert_call(f)(...)``. It returns:

- for a few builtins (``len``, ``print``, ``range``, ``enumerate``, ``isinstance``,
  ``int``/``float``/``bool``), their converted versions (`fw.jit._runtime`);
- for a user function or method, its converted version (converted once per code
  object and cached; the new function shares the original's globals and closure
  cells);
- for a Layer, a callable that runs the layer with its ``forward`` converted;
- for an optimizer's ``step``/``minimize``/``clear_grad`` while a program is being
  traced, the versions that emit the update into the program (`fw.jit._training`);
- anything else unchanged: fw's own functions and layers (they build IR as they
  are), third-party and standard-library code, classes, builtins, functions
  marked with `not_to_static`, and modules given to `ignore_module`.
"""

from __future__ import annotations

import builtins
import inspect
import linecache
import os
import sys
import sysconfig
import types
import weakref

from fw.core.internal import build_state
from fw.core.ir.core import Value
from fw.jit import _context, _runtime, _training
from fw.jit._cflow import TensorArray
from fw.jit._transform import JST, convert_source
from fw.jit.errors import ConversionError

__all__ = ["convert_call", "convert_function", "not_to_static", "ignore_module",
           "conversion_of", "enable_conversion_of_fw_module"]

_CODE_CACHE: dict = {}  # code object -> (inner code, converted text) or an exception
_FN_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_IGNORED: list = []  # module name prefixes (and module objects' names) not to convert
# fw modules whose functions are converted anyway: containers call user layers
_FW_CONVERTED = {"fw.nn.layer.container"}
_SKIP_DIRS: tuple = ()


def enable_conversion_of_fw_module(name: str) -> None:
    """Convert the functions of fw module `name` too (fw's own code is skipped)."""
    _FW_CONVERTED.add(name)


def _skip_dirs():
    global _SKIP_DIRS
    if not _SKIP_DIRS:
        dirs = set()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            p = sysconfig.get_paths().get(key)
            if p:
                dirs.add(os.path.realpath(p))
        dirs.update(os.path.realpath(p) for p in sys.path if p.endswith(("site-packages",
                                                                          "dist-packages")))
        _SKIP_DIRS = tuple(d + os.sep for d in dirs)
    return _SKIP_DIRS


def not_to_static(func=None):
    """Mark `func` to run as written (not converted) when called from a converted
    function; it is still traced, so fw ops in it still build the program.

    Args:
        func (callable, optional): the function (used as a decorator without
            parentheses). Default: None.

    Returns:
        callable, `func`, marked.

    Examples:
        >>> import fw
        >>> @fw.jit.not_to_static
        ... def helper(x):
        ...     return x * 2
        >>> @fw.jit.to_static
        ... def f(x):
        ...     return helper(x) + 1
        >>> f(fw.ones([2])).tolist()
        [3.0, 3.0]
    """
    if func is None:
        return not_to_static
    try:
        func.__fw_not_to_static__ = True
    except (AttributeError, TypeError):
        target = getattr(func, "__func__", None)
        if target is not None:
            target.__fw_not_to_static__ = True
    return func


def ignore_module(modules) -> None:
    """Never convert the functions of `modules` (module objects or names; a list or
    one). Their code still runs while tracing.

    Args:
        modules (module|str|list): the modules (or their names).

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import math
        >>> fw.jit.ignore_module([math])
    """
    if not isinstance(modules, (list, tuple)):
        modules = [modules]
    for m in modules:
        name = m if isinstance(m, str) else getattr(m, "__name__", None)
        if name and name not in _IGNORED:
            _IGNORED.append(name)


def _module_ignored(mod: str) -> bool:
    for p in _IGNORED:
        if mod == p or mod.startswith(p + "."):
            return True
    return False


def _should_convert(fn) -> bool:
    if getattr(fn, "__fw_not_to_static__", False) or getattr(fn, "__fw_converted__", False):
        return False
    code = getattr(fn, "__code__", None)
    if code is None or fn.__name__ == "<lambda>":
        return False
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                        inspect.CO_ASYNC_GENERATOR):
        return False
    mod = getattr(fn, "__module__", None) or ""
    fname = code.co_filename
    if fname.startswith("<"):
        # code typed at a prompt: a doctest or an IPython cell keeps its source in
        # linecache (then it is user code, whatever module's globals it runs in);
        # `python -c`, stdin and exec() strings have none
        return bool(linecache.getlines(fname)) and not _module_ignored(mod)
    if mod == "fw" or mod.startswith("fw."):
        if mod not in _FW_CONVERTED:
            return False
    elif _module_ignored(mod):
        return False
    try:
        real = os.path.realpath(fname)
    except (OSError, ValueError):
        return False
    if real.startswith(_skip_dirs()) and mod not in _FW_CONVERTED:
        return False
    return True


def conversion_of(fn):
    """The `ConvertedFunction`-like record (fn, code) for plain function `fn`, or
    None when it is not converted. Raises `ConversionError` for a function that
    cannot be converted."""
    if not _should_convert(fn):
        return None
    cached = _FN_CACHE.get(fn)
    if cached is not None:
        return cached
    entry = _CODE_CACHE.get(fn.__code__)
    if entry is None:
        try:
            conv = convert_source(fn, CONVERTED_CODE_NAMESPACE)
            entry = (conv.fn.__code__, conv.code)
        except ConversionError as e:
            entry = e
        except (OSError, TypeError):  # no source (REPL, exec): run it as it is
            entry = False
        except RecursionError:
            entry = ConversionError(f"{fn.__qualname__} is nested too deeply to be converted",
                                    fn.__code__.co_filename, fn.__code__.co_firstlineno,
                                    construct="function")
        _CODE_CACHE[fn.__code__] = entry
    if entry is False:
        return None
    if isinstance(entry, ConversionError):
        raise entry
    new = _instantiate(fn, entry[0], CONVERTED_CODE_NAMESPACE)
    rec = _Record(new, entry[1])
    try:
        _FN_CACHE[fn] = rec
    except TypeError:  # pragma: no cover - functions are weak-referenceable
        pass
    return rec


class _Record:
    __slots__ = ("fn", "code", "__weakref__")

    def __init__(self, fn, code):
        self.fn = fn
        self.code = code


def _instantiate(fn, inner, jst):
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(types.CellType(jst) if n == JST else cells[n] for n in inner.co_freevars)
    new = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__doc__ = fn.__doc__
    new.__fw_converted__ = True
    new.__fw_original__ = fn
    return new


def convert_function(fn):
    """The converted version of plain function `fn` (or `fn` itself)."""
    rec = conversion_of(fn)
    return fn if rec is None else rec.fn


# ------------------------------------------------------------------ layers
def _is_layer(obj) -> bool:
    return "_sub_layers" in getattr(obj, "__dict__", ()) and hasattr(type(obj), "forward")


def _layer_caller(layer):
    fwd = layer.forward
    if getattr(fwd, "_fw_static_function", False) or not isinstance(fwd, types.MethodType):
        return layer
    conv = convert_call(fwd)
    if conv is fwd:
        return layer

    def call(*args, **kwargs):
        d = layer.__dict__
        had = "forward" in d
        old = d.get("forward")
        d["forward"] = conv
        try:
            return layer(*args, **kwargs)
        finally:
            if had:
                d["forward"] = old
            else:
                d.pop("forward", None)

    return call


# ------------------------------------------------------------------ optimizers
_OPT_METHODS = ("step", "minimize", "clear_grad", "clear_gradients", "zero_grad")


def _is_optimizer(obj) -> bool:
    """An instance of fw.optimizer.Optimizer (by name: fw-jit does not import fw-nn's
    optimizers here). Other classes of fw.optimizer, e.g. LR schedulers, are not."""
    for c in type(obj).__mro__:
        if c.__name__ == "Optimizer" and (c.__module__ or "").startswith("fw.optimizer"):
            return True
    return False


def _numpy_guard(f):
    name = getattr(f, "__name__", "function")

    def call(*args, **kwargs):
        for a in list(args) + list(kwargs.values()):
            if type(a) is Value:
                fn, ln = _context.user_frame(2)
                raise ConversionError(
                    f"calling `numpy.{name}` on a symbolic tensor: NumPy cannot compute with "
                    f"values that exist only when the program runs", fn, ln,
                    construct=f"numpy.{name}",
                    hint="use the fw function of the same name (fw.* ops build the program), "
                         "or mark this function with @fw.jit.not_to_static and call it on "
                         "concrete tensors outside the converted code")
        return f(*args, **kwargs)

    return call


_r = _runtime
_BUILTIN_MAP = {
    builtins.len: _r.convert_len, builtins.print: _r.convert_print,
    builtins.range: _r.convert_range, builtins.enumerate: _r.convert_enumerate,
    builtins.isinstance: _r.convert_isinstance, builtins.int: _r.convert_int,
    builtins.float: _r.convert_float, builtins.bool: _r.convert_bool,
    builtins.complex: _r.convert_complex,
}


def convert_call(f):
    """What converted code calls for ``f(...)`` (see the module docstring)."""
    t = type(f)
    if t is _context.UndefinedVar:
        f.fail("called")
    if t is types.BuiltinFunctionType or t is type:
        try:
            g = _BUILTIN_MAP.get(f)
        except TypeError:  # unhashable
            g = None
        if g is not None:
            return g
        mod = getattr(f, "__module__", None) or ""
        if mod == "numpy" or mod.startswith("numpy."):
            return _numpy_guard(f)
        return f
    if t is types.FunctionType:
        if f.__name__ in _ARRAY_FUNCS and f is getattr(sys.modules.get("fw"), f.__name__, None):
            return _array_aware(f, _ARRAY_FUNCS[f.__name__])
        return convert_function(f)
    if t is types.MethodType:
        obj = f.__self__
        func = f.__func__
        # fw's own step/clear_grad/…: the traced version; a subclass's override is user
        # code, converted like any method (its super().step() comes back here)
        if func.__name__ in _OPT_METHODS and _is_optimizer(obj) and \
                (getattr(func, "__module__", None) or "").startswith("fw."):
            if build_state.builder is not None:
                return _training.optimizer_method(obj, func.__name__)
            return f
        conv = convert_function(func) if type(func) is types.FunctionType else func
        return f if conv is func else types.MethodType(conv, obj)
    if _is_layer(f):
        return _layer_caller(f)
    mod = getattr(f, "__module__", None) or getattr(t, "__module__", "") or ""
    if mod == "numpy" or mod.startswith("numpy."):
        return _numpy_guard(f)
    return f


def _array_aware(f, method):
    """``fw.stack``/``fw.concat`` that also take a `TensorArray` (a list built in a
    tensor-dependent loop)."""
    def call(x, *args, **kwargs):
        if isinstance(x, TensorArray):
            return getattr(x, method)(*args, **kwargs)
        return f(x, *args, **kwargs)

    return call


_ARRAY_FUNCS = {"stack": "stack", "concat": "concat", "cat": "concat"}


# What converted code reaches as ``__fw_jst`` (a closure cell of every converted
# function): the runtime helpers and `convert_call`. It is built here, beside
# convert_call, so that the helpers' module need not import the converter that
# converts code calling them.
CONVERTED_CODE_NAMESPACE = types.SimpleNamespace(
    **{name: getattr(_runtime, name) for name in _runtime.__all__}, convert_call=convert_call)
