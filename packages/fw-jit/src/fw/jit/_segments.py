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

import io
import linecache
import logging
import sys

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
    __slots__ = ("n_ops", "value", "how", "key", "where")

    def __init__(self, n_ops, value, how, key, where):
        self.n_ops, self.value, self.how, self.key, self.where = n_ops, value, how, key, where


class _Capture:
    """One traced path: the builder, and the concrete value of each value so far."""

    def __init__(self, b, ins, arrays):
        self.b = b
        self.ins = ins
        self.env = dict(zip(ins, arrays))  # Value -> array (inputs, results, captured)
        self.breaks: list = []
        self.done = 0  # ops of block 0 already evaluated

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
        self.breaks.append(_Break(len(ops), v, how, key, where))
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
            self._run_node(node, env)
            if node.result is not None:
                return self._result(node, env)
            k = _concrete_of(env[node.guard]._data, node.how)[1]
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
        vals = [env[x[1]] if x[0] == "id" else x[1] for x in leaves]
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
            path = self._trace_path(tmpl, leaves, args, kwargs)
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

    def _trace_path(self, tmpl, leaves, args, kwargs):
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
        prev = value_hooks.concrete
        value_hooks.concrete = _hook
        _ACTIVE.append(cap)
        # what the trace prints is held back: a trace refused half-way (a print of a
        # tensor) must not leave half a line before the eager run prints it all
        real_out, sys.stdout = sys.stdout, io.StringIO()
        ok = False
        try:
            with b:
                it = iter(ins)
                sargs = [_rebuild(t, it) for t in tmpl[0]]
                skw = {k: _rebuild(t, it) for k, t in tmpl[1]}
                out = sf._function(sf._instance, *sargs, **skw) if sf._instance is not None \
                    else sf._function(*sargs, **skw)
                outs: list = []
                out_tmpl = _flatten_out(out, outs, strict=False)
            ok = True
        finally:
            _ACTIVE.pop()
            value_hooks.concrete = prev
            problem = watch.restore()
            held, sys.stdout = sys.stdout, real_out
        if problem:
            raise Uncapturable(problem)
        if ok:
            sys.stdout.write(held.getvalue())
        prog = b.program
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
            if type(o) is Value:
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
        final_ids = [x[1] for x in path.out_leaves if x[0] == "id"]
        guard_ids = [path.id_of(br.value) for br in path.cap.breaks]
        for s in range(len(bounds) - 1):
            lo, hi = bounds[s], bounds[s + 1]
            later = set(guard_ids[s:s + 1]) | set(final_ids)
            for u in seg_uses[s + 1:]:
                later.update(u)
            for g in guard_ids[s + 1:]:
                later.add(g)
            needed_later[s] = sorted(i for i in later if lo <= _pos(i) < hi)
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
                parent, parent_key = node, br.key
                node = node.children.get(br.key)
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
            guards.append((fn, ln, f"{desc} in {name}", shown))
            text = linecache.getline(fn, ln).strip() if ln else ""  # "" without source
            shown_src = f": `{text}`" if text else ""
            rep.add_graph_break(fn, ln, f"graph break: {desc} in {name}{shown_src} (the "
                                        f"segment before it runs as a program; the value "
                                        f"is a guard)")
        rep.add_capture(self.name, segs, guards)


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
