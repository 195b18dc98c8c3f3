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

from fw.core.internal import amp_state, build_state
from fw.core.ir.core import Value
from fw.jit import _logging
from fw.jit._convert_call import conversion_of
from fw.jit._regions import RegionRunner, WholeEager, _first_line
from fw.jit._segments import SegmentRunner
from fw.jit._signature import _flatten
from fw.jit._trace import _VALUE_CONSTRUCTS, ConcreteProgram, trace_program
from fw.jit.errors import ConversionError

__all__ = ["StaticFunction", "enable_to_static", "to_static", "ConversionReport"]

_log = logging.getLogger("fw.jit")
_ENABLED = [True]


def enable_to_static(enable_to_static_bool: bool = True) -> None:
    """Switch fw.jit.to_static on or off globally: off, converted functions run as
    the original (eager) code.

    Args:
        enable_to_static_bool (bool, optional): True converts, False runs the eager
            code. Default: True.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> @fw.jit.to_static
        ... def f(x):
        ...     return x + 1
        >>> fw.jit.enable_to_static(False)
        >>> f(fw.ones([1])).tolist()
        [2.0]
        >>> fw.jit.enable_to_static(True)
    """
    if not isinstance(enable_to_static_bool, bool):
        raise TypeError(f"enable_to_static expects a bool, got "
                        f"{type(enable_to_static_bool).__name__}")
    _ENABLED[0] = enable_to_static_bool


# ------------------------------------------------------------------ errors
# ------------------------------------------------------------------ report
class ConversionReport:
    """What a converted function did not turn into program code: ``fallbacks`` (one
    entry per statement that ran eagerly, with its source line and why),
    ``notes`` (prints traced inside control flow, …) and, for a function captured
    by tracing (`fw.jit._segments`), ``graph_breaks`` (file, line, what needed the
    value) and ``captures`` (per traced path: segment count and guard values).
    ``str()`` lists them.

    Args:
        name (str): the converted function's name.

    Examples:
        >>> import fw
        >>> def f(x):
        ...     print(x.numpy())
        ...     return x + 1
        >>> g = fw.jit.to_static(f)
        >>> _ = g(fw.ones([1]))  # doctest: +ELLIPSIS
        [1.]
        >>> report = g.conversion_report
        >>> len(report.fallbacks), report.empty
        (1, False)
    """

    def __init__(self, name):
        self.name = name
        self.fallbacks: list = []  # (filename, lineno, source text, reason)
        self.notes: list = []  # (filename, lineno, text)
        # trace capture of a function without source (fw.jit._segments):
        self.graph_breaks: list = []  # (filename, lineno, text)
        self.captures: list = []  # (function name, segments, [(file, line, what, guard value)])

    @property
    def empty(self) -> bool:
        """Whether everything was converted (no fallback, note or graph break).

        Returns:
            bool.

        Examples:
            >>> import fw
            >>> def f(x):
            ...     print(x.numpy())
            ...     return x + 1
            >>> g = fw.jit.to_static(f)
            >>> _ = g(fw.ones([1]))  # doctest: +ELLIPSIS
            [1.]
            >>> report = g.conversion_report
            >>> report.empty
            False
        """
        return not self.fallbacks and not self.notes and not self.graph_breaks

    def add_graph_break(self, filename, lineno, text) -> bool:
        """Record a graph break of a captured function (used by `fw.jit._segments`).

        Args:
            filename (str): the file of the code that needed a tensor's value.
            lineno (int): its line.
            text (str): what needed the value (e.g. ``if`` on a tensor).

        Returns:
            bool, True when it was not recorded before.

        Examples:
            >>> import fw
            >>> report = fw.jit.ConversionReport("f")
            >>> report.add_graph_break("a.py", 4, "bool() of a tensor")
            True
            >>> report.add_graph_break("a.py", 4, "bool() of a tensor")
            False
        """
        entry = (filename, lineno, text)
        if entry in self.graph_breaks:
            return False
        self.graph_breaks.append(entry)
        _logging.log(1, f"graph break: {filename}:{lineno}: {text}")
        return True

    def add_capture(self, name, segments, guards) -> None:
        """Record one traced path of a captured function.

        Args:
            name (str): the captured function's name.
            segments (int): how many programs the path was cut into.
            guards (list): ``(file, line, what, guard value)`` per graph break.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> report = fw.jit.ConversionReport("f")
            >>> report.add_capture("f", 2, [("a.py", 4, "if", True)])
            >>> report.captures
            [('f', 2, [('a.py', 4, 'if', True)])]
        """
        self.captures.append((name, segments, list(guards)))

    def add_fallback(self, filename, lineno, text, reason) -> bool:
        """Record a statement that runs eagerly (used by the converter).

        Args:
            filename (str): the source file.
            lineno (int): the line.
            text (str): the statement's source.
            reason (str): why it was not converted.

        Returns:
            bool, True when it was not recorded before.

        Examples:
            >>> import fw
            >>> report = fw.jit.ConversionReport("f")
            >>> report.add_fallback("a.py", 3, "print(x.numpy())", "it calls .numpy()")
            True
            >>> report.add_fallback("a.py", 3, "print(x.numpy())", "it calls .numpy()")
            False
            >>> print(report)
            conversion report for f:
              runs eagerly: a.py:3: print(x.numpy())
                  because: it calls .numpy()
        """
        entry = (filename, lineno, text, reason)
        if entry in self.fallbacks:
            return False
        self.fallbacks.append(entry)
        _logging.log(1, f"runs eagerly: {filename}:{lineno}: {text} ({reason})")
        return True

    def add_note(self, filename, lineno, text) -> bool:
        """Record a note about the conversion (used by the converter).

        Args:
            filename (str): the source file.
            lineno (int): the line.
            text (str): the note.

        Returns:
            bool, True when it was not recorded before.

        Examples:
            >>> import fw
            >>> report = fw.jit.ConversionReport("f")
            >>> report.add_note("a.py", 7, "print() inside a loop runs once, at trace time")
            True
            >>> report.empty
            False
        """
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
        for fn, ln, text in self.graph_breaks:
            lines.append(f"  {fn}:{ln}: {text}")
        for k, (name, segs, guards) in enumerate(self.captures):
            taken = ", ".join(f"line {ln} -> {val!r}" for _, ln, _, val in guards) or "none"
            lines.append(f"  captured path {k + 1} of {name}: {segs} segment(s); guards: {taken}")
        return "\n".join(lines)

    __repr__ = __str__


# ------------------------------------------------------------------ signatures
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
    ``dygraph_function`` (the original).

    Args:
        function (callable): the function or method to convert.
        input_spec (list, optional): `InputSpec` per argument. Default: None.
        build_strategy (object, optional): accepted for compatibility. Default: None.
        backend (str, optional): accepted for compatibility. Default: None.
        full_graph (bool, optional): convert everything or raise (True), or let what
            cannot be converted run eagerly (False, Paddle 3's default). Default: False.
        instance (Layer, optional): the layer when converting a bound ``forward``.
            Default: None.

    Examples:
        >>> import fw
        >>> @fw.jit.to_static
        ... def f(x):
        ...     return x * 2
        >>> type(f).__name__, f(fw.ones([2])).tolist()
        ('StaticFunction', [2.0, 2.0])
    """

    # what `fw.jit._convert_call` checks so as not to convert a converted forward
    # again (it sits below this module and cannot name this class)
    _fw_static_function = True

    def __init__(self, function, input_spec=None, build_strategy=None, backend=None,
                 full_graph=False, instance=None):
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
        """The original (eager) function, bound when this is a method.

        Returns:
            callable.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> f.dygraph_function(fw.ones([2])).tolist()
            [2.0, 2.0]
        """
        if self._instance is not None:
            return types.MethodType(self._function, self._instance)
        return self._function

    def rollback(self):
        """Undo the conversion: a layer gets its original ``forward`` back.

        Returns:
            callable, the original function (bound for a method).

        Examples:
            >>> import fw
            >>> net = fw.jit.to_static(fw.nn.Linear(2, 2))
            >>> type(net.forward).__name__
            'StaticFunction'
            >>> _ = net.forward.rollback()
            >>> type(net.forward).__name__
            'method'
        """
        inst = self._instance
        if inst is not None and inst.__dict__.get("forward") is self:
            del inst.__dict__["forward"]
            return inst.forward
        return self.dygraph_function

    @property
    def _converted(self):
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
        """The converted source of the function.

        Returns:
            str.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> print(f.code)
            def f(x):
                return x * 2
        """
        rec, _ = self._converted
        if rec is not None:
            return rec.code
        try:
            return inspect.getsource(self._function)
        except (OSError, TypeError):
            return ""

    @property
    def program_cache(self) -> ProgramCache:
        """The programs traced so far, one per input signature.

        Returns:
            ProgramCache.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> len(f.program_cache) >= 1
            True
        """
        return self._cache

    @property
    def concrete_program(self) -> ConcreteProgram:
        """The program of the input_spec given to to_static (traced now if needed), or
        the last program traced.

        Returns:
            ConcreteProgram.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> type(f.concrete_program).__name__
            'ConcreteProgram'
        """
        if self._input_spec is not None:
            return self.get_concrete_program(*self._input_spec)
        cp = self._cache.last()
        if cp is None and isinstance(self._regions, SegmentRunner):
            # captured by tracing (no source): a path without graph breaks is one
            # program, the same as a whole trace; with breaks there is no single one
            cp = self._regions.single_program()
        if cp is None:
            raise RuntimeError(f"{self.__qualname__}: no program yet; call the function, or "
                               f"give to_static an input_spec (a function captured with "
                               f"graph breaks has one program per segment: see "
                               f"conversion_report)")
        return cp

    def get_concrete_program(self, *args, **kwargs) -> ConcreteProgram:
        """The program for these arguments (tensors or InputSpecs), traced if needed.

        Args:
            *args: the arguments, as in a call.
            **kwargs: keyword arguments, as in a call.

        Returns:
            ConcreteProgram.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> prog = f.get_concrete_program(fw.static.InputSpec([None], "float32"))
            >>> [v.type for v in prog.inputs]
            [TensorType([-1], float32)]
        """
        key, tmpl, leaves = self._signature(args, kwargs)
        cp = self._cache.lookup(key)
        if cp is None:
            cp = self._trace(key, tmpl, leaves)
        return cp

    # -------------------------------------------------------- calling
    def __call__(self, *args, **kwargs):
        if not _ENABLED[0]:
            return self._eager(*args, **kwargs)
        if build_state.builder is not None:
            return self._inline(*args, **kwargs)
        sym = _first_value(args, kwargs)
        if sym is not None:  # static mode: build into the Value's program
            from fw.static._mode import builder_for

            with builder_for(sym):
                return self._inline(*args, **kwargs)
        if self._regions is not None:
            return self._regions(args, kwargs)
        if not self._full_graph and self._capture_first():
            return self._regions(args, kwargs)
        key, tmpl, leaves = self._signature(args, kwargs)
        cp = self._cache.lookup(key)
        if cp is None:
            try:
                cp = self._trace(key, tmpl, leaves, graph_breaks=not self._full_graph)
            except ConversionError as e:
                if self._full_graph:
                    raise
                self._regions = self._fallback_runner(e)
                return self._regions(args, kwargs)
        return cp.run([t for t, _, _ in leaves])

    def _capture_first(self) -> bool:
        """``full_graph=False`` and a function fw.jit does not convert (no source, a
        lambda, …): it goes straight to trace capture (`fw.jit._segments`), which
        refuses Python side effects a plain trace would keep only from tracing time
        (a list append, a print of a tensor). Sets ``self._regions``."""
        if "_capture_checked" in self.__dict__:
            return False
        self.__dict__["_capture_checked"] = True
        if getattr(self._function, "__code__", None) is None:
            return False
        try:
            if self._converted[0] is not None:
                return False
        except ConversionError:
            return False  # (the trace raises it, and the fallback handles it)
        why = self._no_source_reason() or self._unconverted_reason()
        self._regions = SegmentRunner(self, why)
        return True

    def _fallback_runner(self, error):
        """What runs the calls once the whole function failed to trace
        (``full_graph=False``): its statements region by region, or, when its source
        is not available, the whole function eagerly (listed in the report)."""
        why = self._no_source_reason()
        if why is None:
            try:
                converted = self._converted[0] is not None
            except ConversionError as e:
                converted, why = False, f"it cannot be converted ({e.message})"
            if why is None and not converted:  # runs as written: no regions either
                why = self._unconverted_reason()
        if why is None:
            try:
                return RegionRunner(self, error)
            except (OSError, TypeError, ConversionError) as e:  # source unusable
                why = f"its source cannot be split into statements ({_first_line(e)})"
        refused = self.__dict__.get("_capture_refused")
        if refused is not None:
            return WholeEager(self, f"{why}; its trace capture was refused: {refused}", error)
        if getattr(self._function, "__code__", None) is None:
            return WholeEager(self, why, error)
        return SegmentRunner(self, why, error)

    def _no_source_reason(self):
        """Why the function's source cannot be converted (None when it can)."""
        code = getattr(self._function, "__code__", None)
        if code is None:
            return None
        try:
            # a "<...>" file can still have its source in linecache (a doctest, an
            # IPython cell): then it converts as any other function
            inspect.getsource(self._function)
        except (OSError, TypeError) as e:
            if code.co_filename.startswith("<"):
                return (f"its source is not available (defined in {code.co_filename}: "
                        f"`python -c`, stdin, `exec` or an interactive session)")
            return f"its source is not available ({e})"
        return None

    def _unconverted_reason(self) -> str:
        """Why a function with source is not converted (`conversion_of` refused it)."""
        f = self._function
        if getattr(f, "__wrapped__", None):
            return "it is wrapped by a decorator"
        if getattr(f, "__fw_not_to_static__", False):
            return "it is marked not_to_static"
        if getattr(f, "__name__", "") == "<lambda>":
            return "it is a lambda (fw.jit converts `def` functions)"
        return "fw.jit runs its module as written (fw's own modules, the standard " \
               "library, installed packages and ignore_module modules)"

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
            key += (("amp", _amp_signature()),)
        return key, tmpl, leaves

    def _trace(self, key, tmpl, leaves, graph_breaks=False) -> ConcreteProgram:
        rec, fn = self._converted
        inst = self._instance

        def invoke(sargs, skw):
            if inst is not None:
                return fn(inst, *sargs, **skw)
            return fn(*sargs, **skw)

        why = None
        code = getattr(self._function, "__code__", None)
        if rec is None and code is not None:
            why = self._no_source_reason() or self._unconverted_reason()
            if self.conversion_report.add_note(
                    code.co_filename, code.co_firstlineno,
                    f"not converted: {why}; it is traced as written (where Python needs a "
                    f"tensor's value, full_graph=False captures it with graph breaks)"):
                _log.info("fw.jit.to_static(%s): traced without conversion: %s",
                          self.__qualname__, why)
        try:
            cp = trace_program(self, self.__qualname__, key, tmpl, leaves, invoke,
                               rec.code if rec is not None else "",
                               graph_breaks=graph_breaks)
        except ConversionError as e:
            if why is None:
                raise
            # the message must not claim a conversion that did not happen: say why
            # the function was traced as written (and what failed there)
            desc = _VALUE_CONSTRUCTS.get(e.construct, (None,))[0] or \
                (e.message or str(e)).strip().split("\n")[0]
            fn_, ln = (e.filename, e.lineno) if e.filename is not None else \
                (code.co_filename, _line_in(e.__cause__ or e, code) or code.co_firstlineno)
            err = ConversionError(
                f"fw.jit.to_static({self.__qualname__}): the function was not converted "
                f"because {why}, so it was traced as written, and that failed: {desc}",
                fn_, ln,
                construct="no source",
                hint="define the function in a .py file (or keep its notebook cell), or "
                     "call to_static with full_graph=False (the default) to run it "
                     "eagerly")
            err.traced_failure = desc
            raise err from e
        self._cache.add(key, cp)
        return cp


def _line_in(e, code):
    """The line of `code` (the user's function) the traceback of `e` passes last."""
    line, tb = None, e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _first_value(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if type(a) is Value:
            return a
        if isinstance(a, (list, tuple)):
            v = _first_value(a, {})
            if v is not None:
                return v
    return None


def _amp_signature():
    """What a program traced under the active auto_cast region depends on (its casts
    differ per level, dtype and lists), so another region traces its own program."""
    from fw.amp.auto_cast import current_state

    st = current_state()
    if st is None:
        return True
    return (st.level, st.dtype.name, tuple(sorted(st.white)), tuple(sorted(st.black)))


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


def to_static(function=None, input_spec=None, build_strategy=None, backend=None, **kwargs):
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
        **kwargs: ``full_graph`` (bool, default False, as in Paddle 3): False runs
            what cannot be converted eagerly, statement by statement (see
            `fw.jit._regions`), with a graph break at ``.numpy()``/``.item()``/
            ``print(tensor)``; a function without source is captured by tracing
            with a graph break wherever Python needs a tensor's value
            (`fw.jit._segments`); each fallback and graph break is listed in
            ``conversion_report``; True converts the whole function or
            raises a `ConversionError`. ``property`` and ``training`` are accepted.

    Returns:
        a `StaticFunction` (or the Layer).

    Examples:
        >>> import fw
        >>> @fw.jit.to_static
        ... def f(x):
        ...     if x.sum() > 0:
        ...         return x * 2
        ...     return -x
        >>> f(fw.ones([2])).tolist(), f(-fw.ones([2])).tolist()
        ([2.0, 2.0], [1.0, 1.0])
        >>> net = fw.jit.to_static(fw.nn.Linear(4, 2),
        ...                        input_spec=[fw.static.InputSpec([None, 4], "float32")])
        >>> net(fw.ones([3, 4])).shape
        [3, 2]
    """
    for k in kwargs:
        if k not in ("property", "enable_fallback", "training", "full_graph"):
            raise TypeError(f"to_static() got an unexpected keyword argument {k!r}")
    # Paddle 3 reads full_graph from **kwargs with a False default (paddle/jit/api.py)
    full_graph = kwargs.get("full_graph", False)
    if not isinstance(full_graph, bool):
        raise TypeError(f"to_static: full_graph must be a bool, got "
                        f"{type(full_graph).__name__}")

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
