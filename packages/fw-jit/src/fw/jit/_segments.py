"""Capture by tracing with graph breaks: functions without source (and the last
fallback when AST conversion fails), ``full_graph=False``.

A function whose source cannot be read cannot be converted, and tracing it as
written fails at the first Python use of a symbolic tensor's value (``if t:``,
``bool``/``int``/``float``, ``.item()``, ``.numpy()``, ``.tolist()``, a tensor as
an index). `SegmentRunner` traces it instead *lazily*: the function runs as
Python on symbolic inputs; at each such use the ops emitted since the previous
break (a *segment*) are run on the call's concrete values, the use gets the
concrete result, that result becomes a *guard* (the branch outcome, the int, the
array's bytes) and tracing goes on. This is a trace-based capture, not bytecode
capture (Paddle's SOT and TorchDynamo rewrite the frame's bytecode; fw does not):
the design follows LazyTensor-style tracing (PyTorch/XLA), with guards as in
TorchDynamo.

The traced paths form a trie per input signature: segment -> guard value ->
next segment. A call runs segment 1 as a program (an autograd node, so
gradients flow across segments: `fw.jit._program_op`), computes its guard from
the output, follows the child of that value, and so on; the last segment gives
the function's result. A guard value not seen yet traces the function again
with those inputs (a new path; its first segments are the same ops, so they are
shared by position), up to `MAX_PATHS` paths per signature; then the function
runs eagerly for that signature (listed in the report).

An ``.item()`` whose value steers nothing (only returned, passed whole to
``print``, or dropped) needs no guard: the trace hands out a `_Read` stand-in that
notes every use, and a break whose read was not used gets one child under the key
`_FREE`; its value is read from the segment's output on each call and the prints
that took it are replayed (so ``print("loss", loss.item())`` in a training step
does not exhaust the path limit). Traces are serialised (`_TRACE_LOCK`); the held
stdout and the recording ``print`` act on the tracing thread only.

What a trace cannot see: Python done between ops runs only while tracing, never
on replay. The capture refuses (whole-function eager, reported) what it can
detect: a changed list/dict reachable from the arguments, the closure or the
globals the function names; a rebound global; a changed attribute of the layer;
``str()``/``print()`` of a symbolic tensor; state updates (buffers, optimizer
steps) and ``backward()`` inside the function. Other Python side effects (file
writes, counters in other objects, ``print`` of Python values) happen once per
traced path only — see the README.
"""

from __future__ import annotations

import builtins
import io
import linecache
import logging
import operator
import sys
import threading

import numpy as np

from fw.core.internal import build_state
from fw.core.ir.builder import Builder, clone_ops
from fw.core.ir.core import Value, value_hooks
from fw.core.ir.executor import Compiled
from fw.core.ir.types import TensorType
from fw.core.tensor import Tensor
from fw.jit import _context
from fw.jit._signature import _flatten_out, _rebuild, _rebuild_out
from fw.jit._trace import ConcreteProgram

__all__ = ["SegmentRunner", "MAX_PATHS", "Uncapturable"]

_log = logging.getLogger("fw.jit")
MAX_PATHS = 8  # traced paths per input signature before the signature runs eagerly
_HOW = {"bool": "`bool()` / `if` / `while` on a tensor", "int": "`int()` of a tensor",
        "float": "`float()` of a tensor", "index": "a tensor used as a Python int (index, size)",
        "item": "`.item()`", "numpy": "`.numpy()` / `.tolist()`"}
_ACTIVE: list = []  # the Capture being traced (innermost last)
# one trace at a time in a process: the concrete-value hook, `sys.stdout` and
# `builtins.print` are process-wide while a path is traced (the stdout and print
# stand-ins route by thread, so other threads keep printing as usual)
_TRACE_LOCK = threading.RLock()
_FREE = ("<no guard>",)  # the trie key after a value read that steers nothing


def _first_line(e):
    text = str(e).strip().split("\n")[0]
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


class Uncapturable(Exception):
    """The function cannot be captured (the message says why): it runs eagerly.
    ``state``: refused because it writes state (a whole trace may still hold it)."""

    state = False

    @classmethod
    def of_state(cls, msg):
        e = cls(msg)
        e.state = True
        return e


def _hook(v, how):
    cap = _ACTIVE[-1] if _ACTIVE else None
    if cap is None or build_state.builder is not cap.b:
        return NotImplemented
    return cap.concrete(v, how)


def _concrete_of(arr, how):
    """The Python value a use `how` gets from array `arr`, and its guard key."""
    a = np.asarray(arr)
    if how == "bool":
        val = bool(a)
        return val, val
    if how in ("int", "index"):
        if how == "index" and not np.issubdtype(a.dtype, np.integer) and a.dtype != np.bool_:
            raise TypeError(f"only integer tensors can be used as an index, got {a.dtype}")
        val = int(a)
        return val, val
    if how == "float":
        val = float(a)
        return val, val
    if how == "item":
        val = a.item()
        return val, (a.dtype.str, val)
    if how == "numpy":
        c = np.array(a, copy=True)
        return c, (c.dtype.str, c.shape, c.tobytes())
    raise ValueError(f"no concrete value for a use {how!r}")


def _user_line():
    dirs = _context._fw_dirs()
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(dirs):
            return fn, f.f_lineno, f.f_code.co_name
        f = f.f_back
    return "<unknown>", 0, "?"


class _Break:
    __slots__ = ("n_ops", "value", "how", "key", "where", "read")

    def __init__(self, n_ops, value, how, key, where):
        self.n_ops, self.value, self.how, self.key, self.where = n_ops, value, how, key, where
        self.read = None  # the `_Read` the use got (an `.item()` while tracking)

    @property
    def free(self):
        """No guard needed: the value read steered nothing (`_Read`)."""
        return self.read is not None and not object.__getattribute__(self.read, "_steered")


# the protocol a Python number answers; each one is a use the trace cannot see the
# effect of (arithmetic may be baked into later ops as a constant, a comparison may
# pick a branch), so each marks the read as steering: it is then guarded as before
_NUMBER_DUNDERS = (
    "__bool__", "__int__", "__float__", "__complex__", "__index__", "__hash__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
    "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__",
    "__divmod__", "__rdivmod__", "__pow__", "__rpow__", "__neg__", "__pos__", "__abs__",
    "__invert__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__",
    "__lshift__", "__rlshift__", "__rshift__", "__rrshift__", "__round__", "__trunc__",
    "__floor__", "__ceil__", "__str__", "__repr__", "__format__", "__reduce__",
    "__reduce_ex__", "__copy__", "__deepcopy__", "__getnewargs__", "__sizeof__",
)


class _Read:
    """The result of an ``.item()`` while tracing: the concrete Python number, behind a
    stand-in that notes whether the function *used* it. Every use of a number goes
    through one of its methods (arithmetic, comparison, truth, ``float()``, ``int()``,
    indexing, NumPy's ``__array__``, formatting, attribute reads): any use marks it
    steering and it becomes a guard, as any other break. Not used (only returned,
    stored in the result, or passed whole to ``print`` — which the capture replays
    with each call's value), it cannot have changed the ops or the path, so the
    break needs no guard and the value is read from the segment's output on each
    call (a trie key `_FREE`). ``isinstance(r, float)`` answers as for the number
    (``__class__``); ``type(r)`` does not (a limit: code testing ``type(v) is
    float`` sees the stand-in). A C function that needs a real number (``json``)
    raises TypeError: the path is then traced again without stand-ins."""

    __slots__ = ("_v", "_steered")

    def __init__(self, v):
        object.__setattr__(self, "_v", v)
        object.__setattr__(self, "_steered", False)

    @property
    def __class__(self):
        return type(object.__getattribute__(self, "_v"))

    def __getattr__(self, name):
        object.__setattr__(self, "_steered", True)
        return getattr(object.__getattribute__(self, "_v"), name)

    def __array__(self, dtype=None, copy=None):
        object.__setattr__(self, "_steered", True)
        return np.asarray(object.__getattribute__(self, "_v"), dtype=dtype)


def _read_method(name):
    def method(self, *args):
        object.__setattr__(self, "_steered", True)
        v = object.__getattribute__(self, "_v")
        if name == "__index__":
            return operator.index(v)
        if name == "__format__":
            return format(v, *args)
        if name == "__bool__":
            return bool(v)
        if name in ("__round__", "__trunc__", "__floor__", "__ceil__"):
            import math

            return {"__round__": round, "__trunc__": math.trunc, "__floor__": math.floor,
                    "__ceil__": math.ceil}[name](v, *args)
        args = [object.__getattribute__(a, "_v") if type(a) is _Read else a for a in args]
        f = getattr(v, name, None)
        if f is None:
            raise TypeError(f"{type(v).__name__!r} object has no {name}")
        return f(*args)

    method.__name__ = name
    return method


for _name in _NUMBER_DUNDERS:
    setattr(_Read, _name, _read_method(_name))
del _name


class _Capture:
    """One traced path: the builder, and the concrete value of each value so far."""

    def __init__(self, b, ins, arrays):
        self.b = b
        self.ins = ins
        self.env = dict(zip(ins, arrays))  # Value -> array (inputs, results, captured)
        self.breaks: list = []
        self.done = 0  # ops of block 0 already evaluated
        self.track = True  # `.item()` gives a `_Read` (no guard if it steers nothing)
        self.prints: list = []  # (segment index, args, sep, end, file, flush) to replay
        self.thread = threading.get_ident()

    def print_call(self, args, kwargs):
        """A ``print`` while tracing: one with a `_Read` among its arguments is not
        printed now but recorded, to print on every call (this one included) with
        that call's value; False for any other print (it prints now)."""
        if not any(type(a) is _Read for a in args) or \
                set(kwargs) - {"sep", "end", "file", "flush"}:
            return False
        # it belongs to the segment being traced (after the last break: replayed when a
        # call reaches that segment, so a print inside a branch follows the branch)
        self.prints.append((len(self.breaks), list(args), kwargs.get("sep", " "),
                            kwargs.get("end", "\n"), kwargs.get("file"),
                            kwargs.get("flush", False)))
        return True

    def concrete(self, v, how):
        if how == "str":
            fn, ln, name = _user_line()
            raise Uncapturable(f"`print()`/`str()` of a tensor at {fn}:{ln} in {name} (a "
                               f"replay would not print it)")
        if len(self.b.blocks) > 1:
            return NotImplemented  # inside a cond/while being built: not a break point
        ops = self.b.program.block.ops
        if self.done < len(ops):
            self._evaluate(ops[self.done:])
            self.done = len(ops)
        arr = self.env.get(v)
        if arr is None:
            return NotImplemented
        val, key = _concrete_of(arr, how)
        where = _user_line()
        br = _Break(len(ops), v, how, key, where)
        self.breaks.append(br)
        if self.track and how == "item" and not isinstance(val, bool):
            br.read = _Read(val)
            return br.read
        return val

    def _evaluate(self, ops):
        """Run `ops` on the known values; record every result's value."""
        seg = _extract(self.b.program, ops, None, None)
        prog, in_vals, out_vals = seg
        arrays = [self.env[u] for u in in_vals]
        outs = Compiled(prog, "cpu")(arrays, check=False)
        for o, a in zip(out_vals, outs):
            self.env[o] = np.asarray(a)


def _uses(ops):
    """Values read by `ops` (nested blocks included) that they do not define."""
    defined, used = set(), []
    seen = set()

    def walk(block_ops):
        for op in block_ops:
            for v in op.operands:
                if v is not None and v not in defined and v not in seen:
                    seen.add(v)
                    used.append(v)
            for blk in op.blocks:
                defined.update(blk.args)
                walk(blk.ops)
            defined.update(op.results)

    walk(ops)
    return [v for v in used if v not in defined]


def _extract(program, ops, inputs, outputs):
    """A program of `ops` (block-0 ops of `program`): inputs are the values they
    read that are not captured (or `inputs`), outputs `outputs` (default: all
    their results). Returns (program, input Values, output Values) in `program`'s
    Values."""
    if inputs is None:
        inputs = [u for u in _uses(ops) if u.role not in ("param", "const")]
    if outputs is None:
        outputs = [r for op in ops for r in op.results]
    nb = Builder()
    vmap = {}
    with nb:
        for u in inputs:
            nv = nb.add_input(u.type, None)
            nv._sg = u._sg
            vmap[u] = nv
        for u in _uses(ops):
            if u.role in ("param", "const"):
                vmap[u] = nb.capture(program.captured[u.label])
        clone_ops(nb, ops, vmap)
        nb.set_outputs([vmap[o] for o in outputs])
    return nb.program, list(inputs), list(outputs)


# ------------------------------------------------------------------ the trie
class _Node:
    """One segment of traced paths: ops [start, end) of the path's block 0, by
    position; ``ins``/``outs`` are value ids (("in", i) or (op position, result))."""

    def __init__(self, start, end, how=None, guard=None, where=None):
        self.start, self.end = start, end
        self.how, self.guard, self.where = how, guard, where
        self.ins: list = []
        self.outs: list = []
        self.cp = None
        self.names = ()  # the ops' names: a re-trace must give the same ops here
        self.children: dict = {}
        self.result = None  # the leaf: (output template, leaf ids or constants)
        self.free = False  # its break needs no guard: one child, under `_FREE`
        self.first_key = None  # the guard value of the first path through it
        self.prints = None  # prints replayed when a call reaches it: (args, sep, end, file,
        # flush), an arg ("read", id, how) or ("c", constant)


class _Path:
    """A finished trace: its program, breaks and the ids of its values."""

    def __init__(self, cap, out_tmpl, out_leaves):
        self.cap = cap
        self.prog = cap.b.program
        self.ops = list(self.prog.block.ops)
        self.ids = {v: ("in", i) for i, v in enumerate(cap.ins)}
        for p, op in enumerate(self.ops):
            for j, r in enumerate(op.results):
                self.ids[r] = (p, j)
        self.vals = {i: v for v, i in self.ids.items()}
        self.out_tmpl, self.out_leaves = out_tmpl, out_leaves

    def id_of(self, v):
        i = self.ids.get(v)
        if i is None:
            raise Uncapturable("a value crosses a graph break from an unknown program")
        return i


def _names(ops):
    return tuple(op.name for op in ops)


def _pos(i):
    return -1 if i[0] == "in" else i[0]


class SegmentRunner:
    """Runs a `StaticFunction` by trace capture with graph breaks (module docstring)."""

    def __init__(self, sf, why, error=None):
        self.sf = sf
        self.why = why
        self.first_error = error
        self.roots: dict = {}  # signature -> _Node
        self.paths: dict = {}  # signature -> number of traced paths
        self.eager_keys: set = set()
        self.disabled = None  # reason when the function runs eagerly for every call
        code = sf._function.__code__
        self.file, self.line, self.name = code.co_filename, code.co_firstlineno, code.co_name
        self.captured_note = False

    # -------------------------------------------------------------- calls
    def __call__(self, args, kwargs):
        if self.disabled is not None:
            return self.sf._eager(*args, **kwargs)
        key, tmpl, leaves = self.sf._signature(args, kwargs)
        # the segments are traced at the call's shapes (an InputSpec's -1 dims too)
        key = (key, tuple(tuple(t._data.shape) for t, _, _ in leaves))
        if key in self.eager_keys:
            return self.sf._eager(*args, **kwargs)
        tensors = [t for t, _, _ in leaves]
        root = self.roots.get(key)
        if root is None:
            return self._trace_new(key, tmpl, leaves, args, kwargs)
        env = {("in", i): t for i, t in enumerate(tensors)}
        node = root
        while True:
            if node.prints:
                _replay_prints(node.prints, env)
            self._run_node(node, env)
            if node.result is not None:
                return self._result(node, env)
            k = _FREE if node.free else _concrete_of(env[node.guard]._data, node.how)[1]
            child = node.children.get(k)
            if child is None:
                return self._trace_new(key, tmpl, leaves, args, kwargs)
            node = child

    def _run_node(self, node, env):
        if node.cp is None:  # a segment without ops
            return
        outs = node.cp.run([env[i] for i in node.ins])
        for i, t in zip(node.outs, outs):
            env[i] = t

    def _result(self, node, env):
        tmpl, leaves = node.result
        vals = [env[x[1]] if x[0] == "id" else
                _concrete_of(env[x[1]]._data, x[2])[0] if x[0] == "read" else x[1]
                for x in leaves]
        return _rebuild_out(tmpl, iter(vals))

    # -------------------------------------------------------------- tracing
    def _trace_new(self, key, tmpl, leaves, args, kwargs):
        n = self.paths.get(key, 0)
        if n >= MAX_PATHS:
            self.eager_keys.add(key)
            self._report(f"runs eagerly for this input signature: more than {MAX_PATHS} traced "
                         f"paths (guard outcomes) were needed")
            return self.sf._eager(*args, **kwargs)
        try:
            try:
                path = self._trace_path(tmpl, leaves, args, kwargs, track=True)
            except _RetryUntracked:
                # a stand-in (`_Read`) reached code that needs a real number: trace
                # this path again with plain values (every read a guard)
                path = self._trace_path(tmpl, leaves, args, kwargs, track=False)
            self._add_path(key, path)
        except Uncapturable as e:
            if e.state and self.first_error is None:
                # a whole trace keeps state updates (one program with its updates, as
                # before capture existed): try that; if it fails too, the fallback
                # runner runs the function eagerly with this reason
                self.sf.__dict__["_capture_refused"] = str(e)
                self.sf._regions = None
                return self.sf(*args, **kwargs)
            self.disabled = str(e)
            self._report(f"the whole function runs eagerly: {self.why}, and its trace "
                         f"capture was refused: {e}")
            return self.sf._eager(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - a capture failure: the call runs eagerly
            if self.first_error is None:  # (e.g. backward() inside): a whole trace may work
                self.sf.__dict__["_capture_refused"] = f"it failed ({_first_line(e)})"
                self.sf._regions = None
                return self.sf(*args, **kwargs)
            self.disabled = f"{type(e).__name__}: {e}"
            self._report(f"the whole function runs eagerly: {self.why}, and its trace "
                         f"capture failed ({_first_line(e)})")
            return self.sf._eager(*args, **kwargs)
        self.paths[key] = n + 1
        self._note_path(path)
        return self(args, kwargs)

    def _trace_path(self, tmpl, leaves, args, kwargs, track=True):
        with _TRACE_LOCK:
            return self._trace_path_locked(tmpl, leaves, args, kwargs, track)

    def _trace_path_locked(self, tmpl, leaves, args, kwargs, track):
        sf = self.sf
        watch = _Watch(sf, args, kwargs)
        b = Builder()
        ins, arrays = [], []
        with b:
            for t, _spec, pname in leaves:
                v = b.add_input(TensorType(t._data.shape, t.dtype), pname)
                v._sg = t._sg
                ins.append(v)
                arrays.append(t._data if isinstance(t._data, np.ndarray) else
                              np.asarray(t.numpy()))
        cap = _Capture(b, ins, arrays)
        cap.track = track
        prev = value_hooks.concrete
        value_hooks.concrete = _hook
        _ACTIVE.append(cap)
        # what the trace prints is held back: a trace refused half-way (a print of a
        # tensor) must not leave half a line before the eager run prints it all. Only
        # this thread's writes are held (`_HeldStdout`), and prints of `.item()` values
        # are recorded to replay on each call (`_Capture.print_call`)
        real_out = sys.stdout
        held = sys.stdout = _HeldStdout(real_out, cap.thread)
        real_print = builtins.print
        builtins.print = _capturing_print(cap, real_print)
        ok = False
        try:
            with b:
                it = iter(ins)
                sargs = [_rebuild(t, it) for t in tmpl[0]]
                skw = {k: _rebuild(t, it) for k, t in tmpl[1]}
                try:
                    out = sf._function(sf._instance, *sargs, **skw) \
                        if sf._instance is not None else sf._function(*sargs, **skw)
                except Uncapturable:
                    raise
                except Exception as e:
                    if any(br.read is not None for br in cap.breaks):
                        raise _RetryUntracked() from e
                    raise
                outs: list = []
                out_tmpl = _flatten_out(out, outs, strict=False)
                out_tmpl = _lift_reads(out_tmpl, iter(outs), outs_lifted := [])
                outs = outs_lifted
            ok = True
        finally:
            _ACTIVE.pop()
            value_hooks.concrete = prev
            if getattr(builtins.print, "_fw_capture", None) is cap:
                builtins.print = real_print
            problem = watch.restore()
            if sys.stdout is held:
                sys.stdout = real_out
        if problem:
            raise Uncapturable(problem)
        if ok:
            real_out.write(held.buf.getvalue())
        prog = b.program
        _scrub_reads(prog.block.ops)
        if len(prog.updates) or b.grads:
            raise Uncapturable.of_state("it writes state (a buffer, an optimizer step or "
                                        "backward() "
                               "inside the function), which a captured trace cannot replay")
        path = _Path(cap, out_tmpl, None)
        out_leaves = []
        for o in outs:
            if type(o) is Value and o.role in ("param", "const"):
                raise Uncapturable("it returns a tensor it did not compute from its inputs "
                                   "(a parameter, a global or a constant), which a replay "
                                   "could not return as the same object")
            if type(o) is _Read:
                br = next(br for br in cap.breaks if br.read is o)
                out_leaves.append(("read", path.id_of(br.value), br.how))
            elif type(o) is Value:
                out_leaves.append(("id", path.id_of(o)))
            elif isinstance(o, Tensor):
                raise Uncapturable("it returns a tensor it did not compute from its inputs "
                                   "(a global or a constant), which a replay could not "
                                   "return as the same object")
            else:
                out_leaves.append(("c", o))
        path.out_leaves = out_leaves
        return path

    def _add_path(self, key, path):
        """Put `path`'s segments into the trie of `key` (sharing its known prefix)."""
        bounds = [0] + [br.n_ops for br in path.cap.breaks] + [len(path.ops)]
        needed_later = {}  # segment index -> ids read by later segments / the result
        seg_uses = []
        for s in range(len(bounds) - 1):
            ops = path.ops[bounds[s]:bounds[s + 1]]
            us = [path.id_of(u) for u in _uses(ops) if u.role not in ("param", "const")]
            seg_uses.append(us)
        final_ids = [x[1] for x in path.out_leaves if x[0] in ("id", "read")]
        guard_ids = [path.id_of(br.value) for br in path.cap.breaks]
        for s in range(len(bounds) - 1):
            lo, hi = bounds[s], bounds[s + 1]
            later = set(guard_ids[s:s + 1]) | set(final_ids)
            for u in seg_uses[s + 1:]:
                later.update(u)
            for g in guard_ids[s + 1:]:
                later.add(g)
            needed_later[s] = sorted(i for i in later if lo <= _pos(i) < hi)
        prints: dict = {}  # segment index -> its prints, with read values as ids
        for seg, pargs, sep, end, file, flush in path.cap.prints:
            pa = []
            for a in pargs:
                br = next((br for br in path.cap.breaks if br.read is a), None) \
                    if type(a) is _Read else None
                pa.append(("c", a) if br is None else ("read", path.id_of(br.value), br.how))
            prints.setdefault(seg, []).append((pa, sep, end, file, flush))
        node = self.roots.get(key)
        parent_key = None
        parent = None
        for s in range(len(bounds) - 1):
            br = path.cap.breaks[s] if s < len(path.cap.breaks) else None
            if node is None:
                node = _Node(bounds[s], bounds[s + 1])
                node.names = _names(path.ops[bounds[s]:bounds[s + 1]])
                if parent is None:
                    self.roots[key] = node
                else:
                    parent.children[parent_key] = node
            elif (node.start, node.end) != (bounds[s], bounds[s + 1]) or \
                    node.names != _names(path.ops[bounds[s]:bounds[s + 1]]) or \
                    (br is not None and node.how != br.how):
                raise Uncapturable("tracing it again with the same guard outcomes gave "
                                   "different ops (its Python code is not deterministic)")
            if node.prints is None:
                node.prints = prints.get(s, [])
            want = sorted(set(node.outs) | set(needed_later[s]))
            if node.cp is None and bounds[s] < bounds[s + 1] or want != node.outs:
                ops = path.ops[bounds[s]:bounds[s + 1]]
                if ops:
                    outs = [path.vals[i] for i in want]
                    prog, ins, _ = _extract(path.prog, ops, None, outs)
                    node.ins = [path.id_of(u) for u in ins]
                    node.outs = want
                    node.cp = ConcreteProgram(prog, [f"in_{k}" for k in range(len(ins))],
                                              _tuple_tmpl(len(want)),
                                              len(want), key)
            if br is not None:
                node.how, node.guard, node.where = br.how, path.id_of(br.value), br.where
                if node.first_key is None:  # a new node: free when its read is
                    node.free, node.first_key = br.free, br.key
                elif node.free and not br.free:
                    # this path uses the value its first path did not (a later branch
                    # differs): the node becomes a guard; the first path's subtree is
                    # valid for the first path's value
                    node.children = {node.first_key: node.children[_FREE]} \
                        if _FREE in node.children else {}
                    node.free = False
                # (a guarded node stays guarded for a path that does not use the value)
                parent, parent_key = node, _FREE if node.free else br.key
                node = node.children.get(parent_key)
            else:
                node.result = (path.out_tmpl, path.out_leaves)

    def single_program(self):
        """The program of the last traced signature when its capture has no graph
        break (one segment that returns the result), else None."""
        for root in reversed(list(self.roots.values())):
            if root.result is not None and not root.children:
                return root.cp
            return None
        return None

    # -------------------------------------------------------------- report
    def _report(self, reason):
        if self.sf.conversion_report.add_fallback(self.file, self.line,
                                                  f"def {self.name}(...)", reason):
            _log.warning("fw.jit.to_static(%s, full_graph=False): %s", self.sf.__qualname__,
                         reason)

    def _note_path(self, path):
        rep = self.sf.conversion_report
        if not self.captured_note:
            self.captured_note = True
            rep.add_note(self.file, self.line,
                         f"not converted ({self.why}): captured by tracing, with a graph "
                         f"break wherever Python needs a tensor's value; Python code between "
                         f"ops (prints of Python values, appends, counters) runs only while "
                         f"a path is traced, not on later calls")
        segs = len(path.cap.breaks) + 1
        guards = []
        for br in path.cap.breaks:
            fn, ln, name = br.where
            desc = _HOW.get(br.how, br.how)
            shown = br.key if br.how != "numpy" else "<array>"
            role = "is a guard"
            if br.free:
                shown = "<no guard>"
                role = "steers nothing (only returned or printed): no guard, it is read " \
                       "on each call"
            guards.append((fn, ln, f"{desc} in {name}", shown))
            text = linecache.getline(fn, ln).strip() if ln else ""  # "" without source
            shown_src = f": `{text}`" if text else ""
            rep.add_graph_break(fn, ln, f"graph break: {desc} in {name}{shown_src} (the "
                                        f"segment before it runs as a program; the value "
                                        f"{role})")
        rep.add_capture(self.name, segs, guards)


class _RetryUntracked(Exception):
    """The traced function failed with a `_Read` stand-in in play: trace it again
    with plain values (`SegmentRunner._trace_new`)."""


class _HeldStdout:
    """``sys.stdout`` while a path is traced: the tracing thread's writes are held
    (written out when the trace succeeds, dropped when it is refused); other threads
    write to the real stream, as if nothing were traced."""

    def __init__(self, real, thread):
        self.real, self.thread, self.buf = real, thread, io.StringIO()

    def _target(self):
        return self.buf if threading.get_ident() == self.thread else self.real

    def write(self, text):
        return self._target().write(text)

    def flush(self):
        return self._target().flush()

    def __getattr__(self, name):
        return getattr(self._target(), name)


def _capturing_print(cap, real_print):
    """``builtins.print`` while `cap` is traced: the tracing thread's prints of
    ``.item()`` values are recorded for replay; every other print is the real one."""

    def print(*args, **kwargs):  # noqa: A001 - stands in for the builtin
        if threading.get_ident() == cap.thread and cap.print_call(args, kwargs):
            return None
        return real_print(*args, **kwargs)

    print._fw_capture = cap
    return print


def _plain(obj):
    """`obj` with every `_Read` in it replaced by its number (each one found is
    marked steering: an op took the value as an attribute, e.g. ``x * v`` makes a
    ``full`` of v, so the program depends on it and the break needs its guard)."""
    if type(obj) is _Read:
        object.__setattr__(obj, "_steered", True)
        return object.__getattribute__(obj, "_v")
    if type(obj) in (list, tuple):
        return type(obj)(_plain(x) for x in obj)
    if type(obj) is dict:
        return {k: _plain(v) for k, v in obj.items()}
    return obj


def _scrub_reads(ops):
    """Replace the `_Read`s that ops took as attributes (nested blocks included)."""
    for op in ops:
        for k, v in list(op.attrs.items()):
            nv = _plain(v)
            if nv is not v:
                op.attrs[k] = nv
        for blk in op.blocks:
            _scrub_reads(blk.ops)


def _replay_prints(prints, env):
    for pargs, sep, end, file, flush in prints:
        vals = [_concrete_of(env[a[1]]._data, a[2])[0] if a[0] == "read" else a[1]
                for a in pargs]
        print(*vals, sep=sep, end=end, file=file, flush=flush)


def _lift_reads(tmpl, it, leaves):
    """`tmpl` (`_flatten_out`'s template, its tensor leaves from `it`) with each
    returned `_Read` made a leaf too; the leaves in order go to `leaves`."""
    kind = tmpl[0]
    if kind == "T":
        leaves.append(next(it))
        return tmpl
    if kind == "C":
        if type(tmpl[1]) is _Read:
            leaves.append(tmpl[1])
            return ("T",)
        return tmpl
    if kind == "N":
        return ("N", tmpl[1], [_lift_reads(t, it, leaves) for t in tmpl[2]])
    if kind is dict:
        return (dict, [(k, _lift_reads(t, it, leaves)) for k, t in tmpl[1]])
    return (kind, [_lift_reads(t, it, leaves) for t in tmpl[1]])


def _tuple_tmpl(n):
    """The output template of a flat tuple of `n` tensors (`_signature._rebuild_out`)."""
    return (tuple, [("T",)] * n)


class _Watch:
    """Snapshot of what the function could mutate without ops: lists/dicts in its
    arguments, closure and the globals it names; those globals; the layer's
    attributes. `restore()` puts back anything changed and says what."""

    def __init__(self, sf, args, kwargs):
        fn = sf._function
        code = fn.__code__
        self.glob = fn.__globals__
        self.names = [n for n in _all_names(code) if n in self.glob]
        self.gvals = {n: self.glob[n] for n in self.names}
        conts = list(args) + list(kwargs.values()) + list(self.gvals.values())
        for c in fn.__closure__ or ():
            try:
                conts.append(c.cell_contents)
            except ValueError:
                pass
        self.conts = []
        for c in conts:
            if isinstance(c, list):
                self.conts.append((c, list(c)))
            elif isinstance(c, dict) and c is not self.glob:
                self.conts.append((c, dict(c)))
        inst = sf._instance
        self.inst = inst
        self.attrs = dict(inst.__dict__) if inst is not None else None

    def restore(self):
        problem = None
        for n in self.names:
            if self.glob.get(n) is not self.gvals[n]:
                problem = problem or f"it rebinds the global {n!r}"
                self.glob[n] = self.gvals[n]
        for c, saved in self.conts:
            if isinstance(c, list):
                if len(c) != len(saved) or any(a is not b for a, b in zip(c, saved)):
                    problem = problem or "it changes a list it can reach (an argument, a " \
                                         "closure variable or a global): appends replay " \
                                         "only while tracing"
                    c[:] = saved
            elif c.keys() != saved.keys() or any(c[k] is not saved[k] for k in saved):
                problem = problem or "it changes a dict it can reach (an argument, a " \
                                     "closure variable or a global)"
                c.clear()
                c.update(saved)
        if self.inst is not None:
            d = self.inst.__dict__
            if d.keys() != self.attrs.keys() or any(d[k] is not self.attrs[k] for k in d):
                problem = problem or "it sets an attribute of the layer"
                d.clear()
                d.update(self.attrs)
        return problem


def _all_names(code):
    out = list(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            out.extend(_all_names(c))
    return out
