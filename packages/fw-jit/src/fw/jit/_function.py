"""`StaticFunction`: a converted function with its program cache.

Calling a `StaticFunction`:

1. with conversion switched off (`enable_to_static(False)`) the original function
   runs eagerly; inside another trace (a builder is active) the converted function
   runs inline, so its ops join the outer program;
2. otherwise the *signature* of the call is computed — the structure of the
   arguments (nested lists/tuples/dicts), each tensor's shape (an `InputSpec`'s -1
   dims where one is given), dtype and stop_gradient, each Python value by value
   (other objects by identity), the owning layer's ``training`` flag and the
   auto-cast state — and looked up in the cache; a miss traces the converted
   function on symbolic inputs into a new `ConcreteProgram`. A cached program
   can also carry *guards* (checked on each call; e.g. the gradient state of the
   parameters a training step reads); a failing guard traces again;
3. the program runs with the fw.core.ir executor on the tensor arguments; its
   parameters and constants are read from the captured tensors at each run. With
   grad mode on and an input or a trainable parameter needing gradients, the call
   is one autograd node (`fw.jit._program_op`).

Errors raised while converting or tracing point at the user's line (see
`translate_error`).
"""

from __future__ import annotations

import functools
import inspect
import logging
import types
import weakref

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import amp_state, grad_state
from fw.core.errors import FwError, UnsupportedError
from fw.core.ir.builder import Builder
from fw.core.ir.core import Value, _state
from fw.core.ir.executor import Compiled
from fw.core.tensor import Tensor, to_tensor, wrap
from fw.jit import _context
from fw.jit._context import UndefinedVar
from fw.jit.errors import ConversionError
from fw.jit.input_spec import InputSpec

__all__ = ["StaticFunction", "ConcreteProgram", "enable_to_static", "to_static",
           "translate_error", "ConversionReport"]

_log = logging.getLogger("fw.jit")
_ENABLED = [True]
# the passes run on every traced program. Not constant folding or algebraic
# simplification: they read captured constants' values, and a tensor the program
# captured (a buffer, a global) may change between runs
PASS_PIPELINE = ("cse", "dce")


def enable_to_static(enable_to_static_bool: bool = True) -> None:
    """Switch fw.jit.to_static on or off globally: off, converted functions run as
    the original (eager) code.

    >>> import fw
    >>> fw.jit.enable_to_static(False); fw.jit.enable_to_static(True)
    """
    if not isinstance(enable_to_static_bool, bool):
        raise TypeError(f"enable_to_static expects a bool, got "
                        f"{type(enable_to_static_bool).__name__}")
    _ENABLED[0] = enable_to_static_bool


# ------------------------------------------------------------------ errors
_VALUE_CONSTRUCTS = {
    "numpy": ("calling `.numpy()` on a symbolic tensor",
              "its values exist only when the program runs: return the tensor from the "
              "converted function and call .numpy() on the result, or move this code into a "
              "function marked @fw.jit.not_to_static that runs outside the converted one"),
    "item": ("calling `.item()` on a symbolic tensor",
             "keep the value a tensor (0-D tensors work in arithmetic and as conditions), or "
             "compute it outside the converted function"),
    "tolist": ("calling `.tolist()` on a symbolic tensor",
               "keep the value a tensor, or compute it outside the converted function"),
    "__bool__": ("using a symbolic tensor as a Python bool",
                 "`if`/`while`/`and`/`or`/`not` on tensors are converted in the function "
                 "itself; in code fw.jit does not convert (fw's own modules, third-party "
                 "libraries, @not_to_static functions) compute the condition outside the "
                 "program, or use fw.where"),
    "__index__": ("using a symbolic tensor as a Python int (an index, a size or a range bound)",
                  "use the tensor directly where an op accepts a tensor, or make the value a "
                  "Python int outside the converted function"),
    "__len__": ("`len()` of a symbolic tensor whose first dimension is dynamic",
                "call len() in the converted function itself (it gives a tensor there), or "
                "use fw.shape(x)[0]"),
    "__iter__": ("iterating over a symbolic tensor whose first dimension is dynamic outside a "
                 "converted `for` loop", "write the loop in the converted function itself"),
}


def _frames(tb):
    out = []
    while tb is not None:
        out.append(tb.tb_frame)
        tb = tb.tb_next
    return out


def _user_frame_of(e):
    dirs = _context._fw_dirs()
    found = (None, None)
    tb = e.__traceback__
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if not fn.startswith(dirs) and not fn.startswith("<"):
            found = (fn, tb.tb_lineno)
        tb = tb.tb_next
    return found


def translate_error(e: BaseException, what: str) -> BaseException:
    """The exception to raise for `e`, raised while converting/tracing `what`:
    `ConversionError` (naming the construct, the user's file:line and what to write
    instead) for constructs a program cannot hold; other errors keep their type and
    get a note saying where the trace was."""
    if isinstance(e, ConversionError):
        return e
    fn, ln = _user_frame_of(e)
    if isinstance(e, UnsupportedError):
        construct = None
        for fr in _frames(e.__traceback__):  # the outermost Value method is what was called
            name = fr.f_code.co_name
            if fr.f_code.co_filename.endswith(("ir/core.py", "ir\\core.py")) and \
                    name in _VALUE_CONSTRUCTS:
                construct = name
                break
        if construct is not None:
            desc, hint = _VALUE_CONSTRUCTS[construct]
            return ConversionError(f"{desc} while converting {what}: {e}", fn, ln,
                                   construct=construct, hint=hint)
        return ConversionError(f"{what} cannot be converted: {e}", fn, ln,
                               construct="unsupported")
    if isinstance(e, (FwError, TypeError, ValueError, IndexError, KeyError, AttributeError,
                      AssertionError, NameError)) and fn is not None:
        note = f"(raised while fw.jit.to_static was tracing {what}; the failing line is " \
               f"{fn}:{ln})"
        if "UndefinedVar" in str(e):
            note += "; a variable used there has no value on some path (assigned only in " \
                    "one branch of a tensor-dependent `if`, or only inside a loop)"
        try:
            e.add_note(note)
        except AttributeError:  # pragma: no cover - Python < 3.11
            pass
    return e


# ------------------------------------------------------------------ report
class ConversionReport:
    """What a converted function did not turn into program code: ``fallbacks`` (one
    entry per statement that ran eagerly, with its source line and why) and
    ``notes`` (prints traced inside control flow, …). ``str()`` lists them."""

    def __init__(self, name):
        self.name = name
        self.fallbacks: list = []  # (filename, lineno, source text, reason)
        self.notes: list = []  # (filename, lineno, text)

    @property
    def empty(self) -> bool:
        return not self.fallbacks and not self.notes

    def add_fallback(self, filename, lineno, text, reason) -> bool:
        entry = (filename, lineno, text, reason)
        if entry in self.fallbacks:
            return False
        self.fallbacks.append(entry)
        return True

    def add_note(self, filename, lineno, text) -> bool:
        entry = (filename, lineno, text)
        if entry in self.notes:
            return False
        self.notes.append(entry)
        return True

    def __str__(self) -> str:
        if self.empty:
            return f"conversion report for {self.name}: everything is in the program"
        lines = [f"conversion report for {self.name}:"]
        for fn, ln, text, why in self.fallbacks:
            lines.append(f"  runs eagerly: {fn}:{ln}: {text.strip()}\n      because: {why}")
        for fn, ln, text in self.notes:
            lines.append(f"  note: {fn}:{ln}: {text}")
        return "\n".join(lines)

    __repr__ = __str__


# ------------------------------------------------------------------ signatures
class _Leaf:
    __slots__ = ("spec",)

    def __init__(self, spec):
        self.spec = spec


def _spec_key(shape, dtype, sg):
    return ("T", tuple(shape), dtype.name, bool(sg))


def _flatten(obj, spec, leaves: list, where: str, name: str = "input", arrays=True):
    """(template, key) of argument `obj`; tensor leaves (or specs) go to `leaves` as
    ``(tensor or None, spec or None, name)``. NumPy arrays are tensor inputs, or with
    ``arrays=False`` Python constants (keyed by their contents)."""
    if isinstance(obj, np.ndarray):
        if not arrays:
            return ("C", obj), ("A", obj.shape, obj.dtype.str,
                                hash(np.ascontiguousarray(obj).tobytes()))
        obj = to_tensor(obj)
    if isinstance(obj, Tensor):
        shape = tuple(obj._data.shape)
        sg = obj._sg
        if isinstance(spec, InputSpec):
            if not spec.matches(shape, obj.dtype):
                raise ValueError(f"{where}: the input_spec is {spec.dtype.name}"
                                 f"{list(spec.shape)} (-1: any size) but the call passes "
                                 f"{obj.dtype.name}{list(shape)}")
            shape = spec.shape
        leaves.append((obj, spec if isinstance(spec, InputSpec) else None, name))
        return ("T",), _spec_key(shape, obj.dtype, sg)
    if isinstance(obj, InputSpec):  # get_concrete_program(InputSpec(...))
        leaves.append((None, obj, name))
        return ("T",), _spec_key(obj.shape, obj.dtype, obj.stop_gradient)
    if isinstance(obj, (list, tuple)):
        specs = spec if isinstance(spec, (list, tuple)) and len(spec) == len(obj) else \
            [None] * len(obj)
        parts = [_flatten(x, s, leaves, f"{where}[{i}]", f"{name}_{i}", arrays)
                 for i, (x, s) in enumerate(zip(obj, specs))]
        kind = type(obj) if type(obj) in (list, tuple) else tuple
        return (kind, [p[0] for p in parts]), (kind.__name__, tuple(p[1] for p in parts))
    if isinstance(obj, UndefinedVar):
        return ("C", obj), ("U", obj.name)
    if isinstance(obj, types.FunctionType):  # a local function: its code, not the object
        return ("C", obj), ("F", id(obj.__code__))
    if isinstance(obj, dict):
        specs = spec if isinstance(spec, dict) else {}
        parts = [(k, _flatten(v, specs.get(k), leaves, f"{where}[{k!r}]", f"{name}_{k}",
                              arrays)) for k, v in obj.items()]
        return (dict, [(k, p[0]) for k, p in parts]), ("dict", tuple((k, p[1])
                                                                     for k, p in parts))
    try:
        hash(obj)
        if isinstance(obj, (bool, int, float, complex, str, bytes, type(None), _dt.DType)) or \
                isinstance(obj, tuple):
            return ("C", obj), ("P", type(obj).__name__, obj)
    except TypeError:
        pass
    return ("C", obj), ("O", id(obj))


def _rebuild(tmpl, it):
    kind = tmpl[0]
    if kind == "T":
        return next(it)
    if kind == "C":
        return tmpl[1]
    if kind is dict:
        return {k: _rebuild(t, it) for k, t in tmpl[1]}
    return kind(_rebuild(t, it) for t in tmpl[1])


def _flatten_out(obj, leaves: list, strict=True):
    """Template of a traced function's result; Value/Tensor leaves go to `leaves`."""
    if type(obj) is Value or isinstance(obj, Tensor):
        leaves.append(obj)
        return ("T",)
    if isinstance(obj, UndefinedVar):
        if strict:
            obj.fail("returned")
        return ("C", obj)
    if isinstance(obj, (list, tuple)):
        kind = type(obj) if type(obj) in (list, tuple) else tuple
        if kind is tuple and type(obj) is not tuple and hasattr(obj, "_fields"):
            return ("N", type(obj), [_flatten_out(x, leaves, strict) for x in obj])
        return (kind, [_flatten_out(x, leaves, strict) for x in obj])
    if isinstance(obj, dict):
        return (dict, [(k, _flatten_out(v, leaves, strict)) for k, v in obj.items()])
    return ("C", obj)


def _rebuild_out(tmpl, it):
    if tmpl[0] == "N":
        return tmpl[1](*[_rebuild_out(t, it) for t in tmpl[2]])
    if tmpl[0] in ("T", "C") or tmpl[0] is dict:
        if tmpl[0] is dict:
            return {k: _rebuild_out(t, it) for k, t in tmpl[1]}
        return _rebuild(tmpl, it)
    return tmpl[0](_rebuild_out(t, it) for t in tmpl[1])


# ------------------------------------------------------------------ programs
class ConcreteProgram:
    """One traced program of a converted function, for one signature.

    Attributes: ``main_program`` (the `fw.core.ir.Program`), ``inputs``/``outputs``
    (its input and output Values), ``parameters`` (the captured tensors by label),
    ``signature`` (the cache key), ``guards`` (callables that must hold to reuse
    it), ``code`` (the converted source)."""

    def __init__(self, program, in_names, out_template, n_user_outputs, signature, code=""):
        self.main_program = program
        self.in_names = in_names
        self.out_template = out_template
        self.n_user_outputs = n_user_outputs
        self.signature = signature
        self.code = code
        self.guards: list = []
        self.pre_run: list = []
        self.post_run: list = []  # f(hidden output tensors by name)
        self.hidden: list = []  # names of the outputs after the user's
        self.asserts: list = []
        self.prints: list = []
        self.differentiable = True
        self._compiled: dict = {}
        self._grad = None

    @property
    def inputs(self) -> list:
        return self.main_program.inputs()

    @property
    def outputs(self) -> list:
        return list(self.main_program.outputs[:self.n_user_outputs])

    @property
    def parameters(self) -> dict:
        return dict(self.main_program.captured)

    @property
    def program(self):
        return self.main_program

    def __repr__(self) -> str:
        return (f"<ConcreteProgram: {len(self.inputs)} inputs, {self.n_user_outputs} outputs, "
                f"{sum(1 for _ in self.main_program.walk())} ops>")

    def compiled(self, arrays):
        backend = "cpu"
        for a in arrays:
            if type(a) is not np.ndarray:
                from fw.core import place as _pl

                backend = _pl.backend_of(a).name
                break
        c = self._compiled.get(backend)
        if c is None:
            c = Compiled(self.main_program, backend)
            self._compiled[backend] = c
        return c

    def run(self, tensors):
        """Run on the tensor leaves of a call; returns the rebuilt user outputs."""
        for f in self.pre_run:
            f()
        if self.differentiable and grad_state.enabled:
            if self._grad is None:
                from fw.jit._program_op import ProgramGrad

                self._grad = ProgramGrad(self.main_program, self.n_user_outputs)
            if self._grad.needs_grad(tensors):
                outs = self._grad(tensors)
                return self._finish(outs)
        arrays = [t._data for t in tensors]
        outs = self.compiled(arrays)(arrays, check=False)
        return self._finish([wrap(np.asarray(o) if isinstance(o, np.generic) else o)
                             for o in outs])

    def _finish(self, outs):
        n = self.n_user_outputs
        hidden = dict(zip(self.hidden, outs[n:]))
        for f in self.post_run:
            f(hidden)
        for flag, msg, fn, ln in self.asserts:
            if not bool(flag._data):
                flag._data[...] = True
                text = msg if msg is not None else "assertion failed"
                raise AssertionError(f"{text} (assert at {fn}:{ln}, checked when the program "
                                     f"ran)")
        for args, sep, end, file, flush, idx in self.prints:
            vals = [hidden[i] if isinstance(i, str) else a for a, i in zip(args, idx)]
            print(*vals, sep=sep, end=end, file=file, flush=flush)
        return _rebuild_out(self.out_template, iter(outs[:n]))


class ProgramCache:
    """The programs of a `StaticFunction` by signature (``len``, iteration over
    ``(signature, ConcreteProgram)``, ``concrete_programs()``, ``last()``)."""

    def __init__(self):
        self._entries: dict = {}  # key -> [ConcreteProgram]
        self._last = None

    def lookup(self, key):
        for cp in self._entries.get(key, ()):
            if all(g() for g in cp.guards):
                return cp
        return None

    def add(self, key, cp) -> None:
        lst = self._entries.setdefault(key, [])
        lst[:] = [c for c in lst if not all(g() for g in c.guards)] if cp.guards else []
        lst.append(cp)
        self._last = cp

    def last(self):
        return self._last

    def concrete_programs(self) -> list:
        return [cp for lst in self._entries.values() for cp in lst]

    def clear(self) -> None:
        self._entries.clear()
        self._last = None

    def __len__(self) -> int:
        return sum(len(v) for v in self._entries.values())

    def __iter__(self):
        for k, lst in self._entries.items():
            for cp in lst:
                yield k, cp

    def __contains__(self, key) -> bool:
        return key in self._entries

    def __repr__(self) -> str:
        return f"<ProgramCache: {len(self)} programs>"


# ------------------------------------------------------------------ StaticFunction
class StaticFunction:
    """A function (or a layer's forward) converted by `to_static`; calling it runs
    cached programs (see the module docstring).

    Attributes and methods: ``program_cache``, ``concrete_program`` (the program of
    the input_spec, or the last one traced), ``get_concrete_program(*args)``,
    ``code`` (the converted source), ``conversion_report``, ``rollback()``,
    ``dygraph_function`` (the original)."""

    def __init__(self, function, input_spec=None, build_strategy=None, backend=None,
                 full_graph=True, instance=None):
        if isinstance(function, types.MethodType):
            instance = function.__self__ if instance is None else instance
            function = function.__func__
        if not callable(function):
            raise TypeError(f"to_static expects a function or a Layer, got "
                            f"{type(function).__name__}")
        self._function = function
        self._instance = instance
        if input_spec is not None and not isinstance(input_spec, (list, tuple)):
            raise TypeError("to_static: input_spec must be a list of InputSpec (or nested "
                            "lists/dicts of them)")
        self._input_spec = list(input_spec) if input_spec is not None else None
        self._build_strategy = build_strategy
        self._backend = backend
        self._full_graph = bool(full_graph)
        self._cache = ProgramCache()
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._bound_strong: dict = {}
        self.conversion_report = ConversionReport(getattr(function, "__qualname__",
                                                          repr(function)))
        self._regions = None  # fw.jit._regions.RegionRunner when full_graph=False fell back
        # id(grad tensor) -> (weakref, version when fw.jit zeroed it): _training.zeroed
        self._zero_grads: dict = {}
        functools.update_wrapper(self, function, updated=())

    # -------------------------------------------------------- binding
    def __get__(self, instance, owner=None):
        if instance is None or self._instance is not None:
            return self
        try:
            b = self._bound.get(instance)
        except TypeError:
            b = self._bound_strong.get(id(instance))
        if b is None:
            b = StaticFunction(self._function, self._input_spec, self._build_strategy,
                               self._backend, self._full_graph, instance)
            try:
                self._bound[instance] = b
            except TypeError:
                self._bound_strong[id(instance)] = b
        return b

    @property
    def dygraph_function(self):
        """The original (eager) function, bound when this is a method."""
        if self._instance is not None:
            return types.MethodType(self._function, self._instance)
        return self._function

    def rollback(self):
        """Undo the conversion: a layer gets its original ``forward`` back; returns the
        original function (bound for a method)."""
        inst = self._instance
        if inst is not None and inst.__dict__.get("forward") is self:
            del inst.__dict__["forward"]
            return inst.forward
        return self.dygraph_function

    @property
    def _converted(self):
        from fw.jit._convert_call import conversion_of

        code = getattr(self._function, "__code__", None)
        if code is not None and code.co_flags & (inspect.CO_GENERATOR |
                                                 inspect.CO_ASYNC_GENERATOR):
            raise ConversionError(f"{self.__qualname__} is a generator function (`yield`); a "
                                  f"static program returns its outputs at once",
                                  code.co_filename, code.co_firstlineno, construct="yield",
                                  hint="return a list/tuple of tensors instead")

        rec = conversion_of(self._function) if self._should_convert() else None
        fn = rec.fn if rec is not None else self._function
        return rec, fn

    def _should_convert(self) -> bool:
        return not getattr(self._function, "__wrapped__", None) and \
            not getattr(self._function, "__fw_not_to_static__", False)

    @property
    def code(self) -> str:
        """The converted source of the function."""
        rec, _ = self._converted
        if rec is not None:
            return rec.code
        try:
            return inspect.getsource(self._function)
        except (OSError, TypeError):
            return ""

    @property
    def program_cache(self) -> ProgramCache:
        return self._cache

    @property
    def concrete_program(self) -> ConcreteProgram:
        """The program of the input_spec given to to_static (traced now if needed), or
        the last program traced."""
        if self._input_spec is not None:
            return self.get_concrete_program(*self._input_spec)
        cp = self._cache.last()
        if cp is None:
            raise RuntimeError(f"{self.__qualname__}: no program yet; call the function, or "
                               f"give to_static an input_spec")
        return cp

    def get_concrete_program(self, *args, **kwargs) -> ConcreteProgram:
        """The program for these arguments (tensors or InputSpecs), traced if needed."""
        key, tmpl, leaves = self._signature(args, kwargs)
        cp = self._cache.lookup(key)
        if cp is None:
            cp = self._trace(key, tmpl, leaves)
        return cp

    # -------------------------------------------------------- calling
    def __call__(self, *args, **kwargs):
        if not _ENABLED[0]:
            return self._eager(*args, **kwargs)
        if _state.builder is not None:
            return self._inline(*args, **kwargs)
        sym = _first_value(args, kwargs)
        if sym is not None:  # static mode: build into the Value's program
            from fw.static._mode import builder_for

            with builder_for(sym):
                return self._inline(*args, **kwargs)
        if self._regions is not None:
            return self._regions(args, kwargs)
        key, tmpl, leaves = self._signature(args, kwargs)
        cp = self._cache.lookup(key)
        if cp is None:
            try:
                cp = self._trace(key, tmpl, leaves)
            except ConversionError as e:
                if self._full_graph:
                    raise
                from fw.jit._regions import RegionRunner

                self._regions = RegionRunner(self, e)
                return self._regions(args, kwargs)
        return cp.run([t for t, _, _ in leaves])

    def _eager(self, *args, **kwargs):
        if self._instance is not None:
            return self._function(self._instance, *args, **kwargs)
        return self._function(*args, **kwargs)

    def _inline(self, *args, **kwargs):
        _, fn = self._converted
        if self._instance is not None:
            return fn(self._instance, *args, **kwargs)
        return fn(*args, **kwargs)

    def _signature(self, args, kwargs):
        specs = self._input_spec or []
        leaves: list = []
        arg_parts = []
        names = self.__dict__.get("_names")
        if names is None:
            names = _param_names(self._function, self._instance is not None)
            self.__dict__["_names"] = names
        for i, a in enumerate(args):
            arg_parts.append(_flatten(a, specs[i] if i < len(specs) else None, leaves,
                                      f"{self.__qualname__} argument {i}",
                                      names[i] if i < len(names) else f"input_{i}"))
        kw_parts = [(k, _flatten(v, None, leaves, f"{self.__qualname__} argument {k!r}", k))
                    for k, v in kwargs.items()]
        tmpl = ([p[0] for p in arg_parts], [(k, p[0]) for k, p in kw_parts])
        key = (tuple(p[1] for p in arg_parts), tuple((k, p[1]) for k, p in kw_parts))
        inst = self._instance
        if inst is not None and hasattr(inst, "training"):
            key += (("training", bool(inst.training)),)
        if amp_state.enabled:
            key += (("amp", True),)
        return key, tmpl, leaves

    def _trace(self, key, tmpl, leaves) -> ConcreteProgram:
        rec, fn = self._converted
        inst = self._instance

        def invoke(sargs, skw):
            if inst is not None:
                return fn(inst, *sargs, **skw)
            return fn(*sargs, **skw)

        if rec is None:
            code = getattr(self._function, "__code__", None)
            if code is not None and self.conversion_report.add_note(
                    code.co_filename, code.co_firstlineno,
                    "the source is not available (or the function is wrapped/marked "
                    "not_to_static): it is traced as written, without converting its "
                    "Python control flow"):
                _log.info("fw.jit.to_static(%s): traced without conversion (no source)",
                          self.__qualname__)
        cp = trace_program(self, self.__qualname__, key, tmpl, leaves, invoke,
                           rec.code if rec is not None else "")
        self._cache.add(key, cp)
        return cp


def trace_program(owner, name, key, tmpl, leaves, invoke, code="", strict=True):
    """Trace ``invoke(args, kwargs)`` on symbolic inputs into a `ConcreteProgram`.

    Args:
        owner: the StaticFunction (its report and gradient bookkeeping).
        name: what is traced (for messages).
        key: the signature (kept on the program).
        tmpl: ``(arg templates, [(kw name, template)])`` from `_flatten`.
        leaves: ``[(tensor or None, InputSpec or None, input name)]``.
        invoke: ``invoke(args, kwargs)`` runs the converted code.
        strict: results must be tensors/containers/Python values (False: any
            object, and unassigned variables, pass through as constants).
    """
    from fw.core.ir.types import TensorType
    from fw.jit import _training

    b = Builder()
    trace = _context.Trace(b, name)
    _context.push(trace)
    train = _training.TraceTraining(trace, owner)
    try:
        with b:
            ins = []
            in_names = []
            used = set()
            for t, spec, pname in leaves:
                if spec is not None:
                    typ, sg, nm = spec.type, spec.stop_gradient, spec.name
                else:
                    typ = TensorType(t._data.shape, t.dtype)
                    sg, nm = t._sg, None
                nm = nm or pname
                while nm in used:
                    nm = nm + "_"
                used.add(nm)
                v = b.add_input(typ, nm)
                v._sg = bool(sg)
                ins.append(v)
                in_names.append(nm)
            it = iter(ins)
            sargs = [_rebuild(t, it) for t in tmpl[0]]
            skw = {k: _rebuild(t, it) for k, t in tmpl[1]}
            out = invoke(sargs, skw)
            outs: list = []
            out_tmpl = _flatten_out(out, outs, strict)
            n_user = len(outs)
            hidden_names: list = []
            hidden_vals: list = []
            train.finish(hidden_names, hidden_vals)
            prints = []
            for args_, sep, end, file, flush in trace.prints:
                idx = []
                for a in args_:
                    if type(a) is Value:
                        nm = f"__print_{len(hidden_names)}"
                        hidden_names.append(nm)
                        hidden_vals.append(a)
                        idx.append(nm)
                    else:
                        idx.append(None)
                prints.append((args_, sep, end, file, flush, idx))
            _apply_buffer_updates(b)
            b.set_outputs(outs + hidden_vals)
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        new = translate_error(e, name)
        if new is e:
            raise
        raise new.with_traceback(None) from e
    finally:
        _context.pop()
        train.restore()
    prog = b.program
    from fw.core.ir.passes import PassManager

    PassManager(list(PASS_PIPELINE), verify=False).run(prog)
    cp = ConcreteProgram(prog, in_names, out_tmpl, n_user, key, code)
    cp.hidden = hidden_names
    cp.prints = prints
    cp.asserts = list(trace.asserts)
    train.install(cp)
    report = getattr(owner, "conversion_report", None)
    for fn_, ln, text in trace.notes:
        if report is not None and report.add_note(fn_, ln, text):
            _log.info("fw.jit.to_static(%s): %s:%s: %s", name, fn_, ln, text)
    return cp


def _first_value(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if type(a) is Value:
            return a
        if isinstance(a, (list, tuple)):
            v = _first_value(a, {})
            if v is not None:
                return v
    return None


def _param_names(fn, bound: bool) -> list:
    try:
        ps = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    if bound and ps:
        ps = ps[1:]
    out = []
    for p in ps:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
            break
        out.append(p.name)
    return out


def _apply_buffer_updates(b) -> None:
    """fw-nn's interim protocol: ``program.buffer_updates`` {tensor name: Value}."""
    ups = b.program.__dict__.pop("buffer_updates", None)
    if not ups:
        return
    by_name = {}
    for label, t in b.program.captured.items():
        by_name[getattr(t, "name", label)] = t
    for name, v in ups.items():
        t = by_name.get(name)
        if t is not None and type(v) is Value and v.owner is not None:
            b.record_update(t, v)


def to_static(function=None, input_spec=None, build_strategy=None, backend=None,
              full_graph=True, **kwargs):
    """Convert a function, a method or a Layer to run as a static program (Paddle's
    ``paddle.jit.to_static``).

    Use it as a decorator (``@to_static`` or ``@to_static(input_spec=[...])``) on a
    function or a Layer's ``forward``, or call it on a Layer instance (its
    ``forward`` is replaced; the layer is returned).

    Args:
        function: the function, method or Layer.
        input_spec: list of `InputSpec` (nested lists/dicts allowed) for the
            positional tensor arguments: their -1 dims accept any size.
        build_strategy, backend: accepted for compatibility (fw has one backend).
        full_graph: True (default) converts the whole function or raises a
            `ConversionError`; False runs what cannot be converted eagerly (see
            `fw.jit._regions`) and lists it in ``conversion_report``.

    Returns:
        a `StaticFunction` (or the Layer).

    >>> import fw
    >>> @fw.jit.to_static
    ... def f(x):
    ...     if x.sum() > 0:
    ...         return x * 2
    ...     return -x
    >>> f(fw.to_tensor([1.0, 2.0])).tolist()
    [2.0, 4.0]
    """
    for k in kwargs:
        if k not in ("property", "enable_fallback", "training"):
            raise TypeError(f"to_static() got an unexpected keyword argument {k!r}")

    def decorate(fn):
        if isinstance(fn, StaticFunction):
            return fn
        if "_sub_layers" in getattr(fn, "__dict__", ()) and hasattr(type(fn), "forward"):
            layer = fn
            fwd = layer.forward
            if isinstance(fwd, StaticFunction):
                return layer
            sf = StaticFunction(type(layer).forward if not isinstance(fwd, types.MethodType)
                                else fwd.__func__, input_spec, build_strategy, backend,
                                full_graph, instance=layer)
            layer.__dict__["forward"] = sf
            return layer
        return StaticFunction(fn, input_spec, build_strategy, backend, full_graph)

    if function is None:
        return decorate
    return decorate(function)
