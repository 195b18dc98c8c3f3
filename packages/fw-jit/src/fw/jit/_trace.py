"""Tracing a converted function into a `ConcreteProgram`, and what goes wrong there.

`trace_program` runs converted code on symbolic inputs inside a fresh builder
(with fw.jit's training hooks active, `fw.jit._training`), runs the cleanup
passes and returns a `ConcreteProgram`: the program plus what calling it needs
(input names, output template, guards, pre/post-run hooks, the autograd node
of `fw.jit._program_op`). `translate_error` turns an error raised while
tracing into what the user should read: a `ConversionError` at their line for
constructs a program cannot hold. Used by `StaticFunction` (whole functions)
and `fw.jit._regions` (groups of statements).
"""

from __future__ import annotations

import logging

import numpy as np

from fw.core.errors import FwError, UnsupportedError
from fw.core.internal import grad_state
from fw.core.ir.builder import Builder
from fw.core.ir.core import Value
from fw.core.ir.executor import Compiled
from fw.core.tensor import wrap
from fw.jit import _context, _nan_check, _training
from fw.jit._program_op import ProgramGrad
from fw.jit._signature import _flatten_out, _rebuild, _rebuild_out
from fw.jit.errors import ConversionError

__all__ = ["ConcreteProgram", "trace_program", "translate_error", "PASS_PIPELINE"]

_log = logging.getLogger("fw.jit")
# the passes run on every traced program. Not constant folding or algebraic
# simplification: they read captured constants' values, and a tensor the program
# captured (a buffer, a global) may change between runs
PASS_PIPELINE = ("cse", "dce")


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
                 "this code was not converted (fw's own modules, third-party libraries, "
                 "@not_to_static functions and functions whose source is not available "
                 "are traced as written; `if`/`while`/`and`/`or`/`not` on tensors are "
                 "converted only in code fw.jit converts): compute the condition outside "
                 "the program, or use fw.where"),
    "__index__": ("using a symbolic tensor as a Python int (an index, a size or a range bound)",
                  "use the tensor directly where an op accepts a tensor, or make the value a "
                  "Python int outside the converted function"),
    "__int__": ("using a symbolic tensor as a Python int (`int()`)",
                "keep the value a tensor (`x.astype('int64')`), or compute it outside the "
                "converted function"),
    "__float__": ("using a symbolic tensor as a Python float (`float()`)",
                  "keep the value a tensor, or compute it outside the converted function"),
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




# ------------------------------------------------------------------ programs
class ConcreteProgram:
    """One traced program of a converted function, for one signature.

    Attributes: ``main_program`` (the `fw.core.ir.Program`), ``inputs``/``outputs``
    (its input and output Values), ``parameters`` (the captured tensors by label),
    ``signature`` (the cache key), ``guards`` (callables that must hold to reuse
    it), ``code`` (the converted source).

    Args:
        program (Program): the traced program.
        in_names (list[str]): the program's input names.
        out_template (object): how to rebuild the user's outputs from the program's.
        n_user_outputs (int): the number of user outputs.
        signature (tuple): the cache key.
        code (str, optional): the converted source. Default: ''.

    Examples:
        >>> import fw
        >>> @fw.jit.to_static
        ... def f(x):
        ...     return x * 2
        >>> _ = f(fw.ones([2]))
        >>> cp = f.concrete_program
        >>> len(cp.inputs), len(cp.outputs)
        (1, 1)
    """

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
        """The program's input Values.

        Returns:
            list.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> cp = f.concrete_program
            >>> [v.type for v in cp.inputs]
            [TensorType([2], float32)]
        """
        return self.main_program.inputs()

    @property
    def outputs(self) -> list:
        """The program's output Values.

        Returns:
            list.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> cp = f.concrete_program
            >>> len(cp.outputs)
            1
        """
        return list(self.main_program.outputs[:self.n_user_outputs])

    @property
    def parameters(self) -> dict:
        """The tensors the program captured (parameters, constants), by label.

        Returns:
            dict.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> cp = f.concrete_program
            >>> isinstance(cp.parameters, dict)
            True
        """
        return dict(self.main_program.captured)

    @property
    def program(self):
        """The traced program.

        Returns:
            Program (``fw.core.ir.Program``).

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> cp = f.concrete_program
            >>> type(cp.program).__name__
            'Program'
        """
        return self.main_program

    def __repr__(self) -> str:
        return (f"<ConcreteProgram: {len(self.inputs)} inputs, {self.n_user_outputs} outputs, "
                f"{sum(1 for _ in self.main_program.walk())} ops>")

    def compiled(self, arrays):
        """The program compiled for the backend of `arrays` (cpu or gpu), made on first use
        and cached (a form that checks every op for NaN/Inf under anomaly mode).

        Args:
            arrays (list): one array per program input (NumPy or CuPy).

        Returns:
            Compiled, the executable form of the program.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> cp = f.concrete_program
            >>> import numpy as np
            >>> type(cp.compiled([np.ones(2, "float32")])).__name__
            'Compiled'
        """
        backend = "cpu"
        for a in arrays:
            if type(a) is not np.ndarray:
                from fw.core import place as _pl

                backend = _pl.backend_of(a).name
                break
        # anomaly mode picks a compiled form that checks every op (fw.jit._nan_check)
        key = (backend, _nan_check.checking())
        c = self._compiled.get(key)
        if c is None:
            c = Compiled(self.main_program, backend,
                         op_check=_nan_check.check_outputs if key[1] else None)
            self._compiled[key] = c
        return c

    def run(self, tensors):
        """Run on the tensor arguments of a call.

        Args:
            tensors (list): the tensor leaves of the call's arguments.

        Returns:
            The user's outputs, rebuilt in their structure.

        Examples:
            >>> import fw
            >>> @fw.jit.to_static
            ... def f(x):
            ...     return x * 2
            >>> _ = f(fw.ones([2]))
            >>> cp = f.concrete_program
            >>> cp.run([fw.to_tensor([1.0, 3.0])]).tolist()
            [2.0, 6.0]
        """
        for f in self.pre_run:
            f()
        if self.differentiable and grad_state.enabled:
            if self._grad is None:
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
        failed = None
        for flag, msg, fn, ln in self.asserts:
            if not bool(flag._data):
                # every failed flag is reset, not just the one reported: a flag left False
                # would fail the next run whatever its values
                flag._data[...] = True
                failed = failed or (msg, fn, ln)
        if failed is not None:
            msg, fn, ln = failed
            text = msg if msg is not None else "assertion failed"
            raise AssertionError(f"{text} (assert at {fn}:{ln}, checked when the program ran)")
        for args, sep, end, file, flush, idx in self.prints:
            vals = [hidden[i] if isinstance(i, str) else a for a, i in zip(args, idx)]
            print(*vals, sep=sep, end=end, file=file, flush=flush)
        return _rebuild_out(self.out_template, iter(outs[:n]))



def trace_program(owner, name, key, tmpl, leaves, invoke, code="", strict=True,
                  graph_breaks=False):
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
        graph_breaks: the caller falls back to eager code on a `ConversionError`
            (``full_graph=False``): `print` of a tensor raises one (a graph break)
            instead of becoming a print op.
    """
    from fw.core.ir.types import TensorType
    b = Builder()
    trace = _context.Trace(b, name)
    trace.graph_breaks = graph_breaks
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
    from fw.core.ir.passes import PIPELINES, PassManager

    # packages above may extend the pipeline by registering "to_static" (fw-distributed
    # puts its all-reduce bucketing in front)
    PassManager(list(PIPELINES.get("to_static", PASS_PIPELINE)), verify=False).run(prog)
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
