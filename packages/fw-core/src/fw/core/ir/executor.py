"""The executor: compile a program once into a flat schedule, then run it.

Compilation gives every Value a slot and turns each operation into a `Step`
(op, kernel, input slots, output slots, slots freed after it, buffer reused).
The schedule is then rendered as one straight-line Python function (generated
source, kept in ``Compiled.source``) in which each slot is a local variable and
each step is one kernel call::

    def _main(_ins, _ps):
        v1, = _ins
        v2, v3 = _ps
        v4 = k0(v1, v2, transpose_x=a0_0, transpose_y=a0_1)
        v5 = k1(v4, v3)
        del v4
        ...
        return (v9,)

so running costs one kernel call per op and nothing else: no per-op lookups,
no argument lists, no environment list. The generated text contains only
identifiers the compiler makes up (``vN`` slots, ``kN`` kernels, ``aN_M``
attribute values — all bound in the function's namespace), never text taken
from the program, so compiling a loaded model executes nothing from the file.

Memory (``memory_optimize=True``, the default):

- liveness: each value is deleted right after its last use (``del vN``), so
  its memory is released as soon as possible;
- buffer reuse: an elementwise op whose kernel is a NumPy ufunc (or wraps one,
  with ``__wrapped__``, and passes ``out=`` on to it) writes its result into the
  buffer of an operand that dies at this op and has the result's shape and dtype
  (``k(v4, v5, out=v4)``). It is planned at compile time (last use,
  not a program output, not an input/param/const, same dtype, shape provably
  equal) and confirmed at run time: the operand must be a base ndarray (not a
  view of other memory) that nothing else references (``sys.getrefcount``), so
  a buffer shared with a live view, a program input, a parameter, a constant or
  a value held twice is never written — the rule NumPy itself uses to elide
  temporaries.

Constant ops (no operands, not random: ``full``, ``arange``, …) with small
static results are run once at compile time; each run reads the (read-only)
array.

``cond`` runs as a Python ``if`` on the predicate, ``while`` as a generated
function looping over its cond and body blocks (carried values are locals).
Parameters and constants are read from the tensors the program captured at each
run, so updates made between runs are seen.

State updates (``program.updates``): the generated function also returns the
update values; after the run each is written into its captured tensor in place
(``a[...] = new``, then the tensor's version is bumped), so views of the
parameter's storage (an optimizer's flat buffer) stay valid. All new values are
computed before any is written; one that shares a target's memory (a view or the
array itself) is copied first. An update op of the ``optimizer`` family whose
results are state updates of the very params/consts it reads (``adam(%p0, …,
%c1, …)`` with ``update %p0 = result 0``, ``update %c1 = result 1``) gets those
tensors' arrays as its ``out=`` arrays (its kernels update in place), when
nothing reads their old values after it (nor a view of them) and they are not
returned or stored into another param/const: then nothing is copied at all.

Every block's schedule is kept in ``Compiled.schedules`` (``Step.writes``: the
params/consts a step writes in place); `fw.core.ir.verifier.verify_schedule`
checks that no step reads a buffer after it was freed, reused or written.

NaN/Inf checking (``Compiled(..., op_check=fn)``): after every op with a
floating or complex result the generated code calls ``fn(op, results)``
(fw.jit passes anomaly mode's check, which raises naming the op). Such a
program computes no update in place, so an error raised by the check leaves
every captured tensor as it was (the updates are written only after the run).
Without `op_check` the generated code has no trace of it.

Prepared kernels (``Compiled(..., prepare=True)``, cpu): ops with a preparer in
`fw.core.kernels.cpu.prepared` are called with their operands only (``k3(v8, v2, v3,
None)``), through a kernel made for that op at compile time (attributes bound, geometry
kept per input shape); `Compiled.bind_params` reads the parameters once for a caller
whose weights never change (a predictor). Both leave the results as they were.

`run(program, *inputs)` compiles on first use and caches the result on the
program (keyed by its version, the inputs' backend and ``memory_optimize``).
"""

from __future__ import annotations

import keyword
import sys
from time import perf_counter_ns as _perf_ns
from typing import NamedTuple

import numpy as np

from fw.core import _observe
from fw.core import dtypes as _dt
from fw.core import place as _pl
from fw.core.errors import FwError, InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN
from fw.core.kernels.checked import forget as _forget_checked
from fw.core.kernels.frozen import freeze
from fw.core.ops._xp import on_host
from fw.core.tensor import Tensor, wrap
from fw.core.tensor import bump_version as _bump

__all__ = ["run", "compile_program", "Compiled", "Step", "may_return_view", "DEVICE_REWRITES"]

_ndarray = np.ndarray
_SOURCE_NAME = "<fw program>"
# ops whose NumPy kernels may return a view of an input (for the in-place updates)
_VIEW_FAMILIES = frozenset({"shape", "indexing"})
_VIEW_OPS = frozenset({"cast", "real", "imag", "to_device", "assign", "detach", "flatten",
                       "reshape", "squeeze", "unsqueeze", "transpose", "expand",
                       "broadcast_to", "diagonal", "view_as_real", "view_as_complex"})
_HOIST_BYTES = 1 << 16  # constants up to this size are computed once, at compile time


# fn(program) -> program (itself or a rewritten clone), applied to programs compiled
# for a backend other than the cpu; registered by fw.core's __init__ (the executor
# cannot import the pass machinery, which imports it)
DEVICE_REWRITES: list = []


def may_return_view(op) -> bool:
    """True when `op`'s kernel may return a view of an operand's memory (so writing
    that operand in place would change the result too)."""
    d = op.opdef
    return not op.blocks and (d.family in _VIEW_FAMILIES or d.name in _VIEW_OPS)


class Step(NamedTuple):
    """One scheduled operation (for inspection; the generated function runs them)."""

    op: object
    ins: tuple  # operand slots (0 for an absent optional operand)
    outs: tuple  # result slots
    frees: tuple  # slots whose values die after this step
    reuse: int  # operand slot whose buffer receives the result (0: none)
    writes: tuple = ()  # param/const slots the op writes in place (its results' `out=`)


class _Schedule:
    __slots__ = ("steps", "out_slots", "block")

    def __init__(self, steps, out_slots, block=None):
        self.steps = steps
        self.out_slots = out_slots
        self.block = block


def _truth(p) -> bool:
    """The value of a cond/while predicate (a one-element bool tensor)."""
    if getattr(p, "size", 1) != 1:
        raise InvalidArgumentError(f"a cond/while predicate must hold one value, got shape "
                                   f"{list(p.shape)}")
    return bool(p)


class Compiled:
    """A program compiled for one backend.

    Args:
        program: the Program (verified programs only: compile what `verify` accepts).
        backend: ``"cpu"`` or another backend name (``"gpu"``).
        kernel_override: ``{op name: kernel}`` used instead of the table's kernels.
        memory_optimize: free values after their last use and reuse dead buffers.
        op_check: ``fn(op, results)`` called after each op with an inexact result
            (NaN/Inf checking; see the module docstring), or None.
        prepare: run ops through prepared kernels where the backend has them: a
            kernel for one op with its attributes bound and its geometry kept per input
            shape, called with the operands only (``cpu``:
            `fw.core.kernels.cpu.prepared`; a predictor's steady path).
        nonfinite_checks: with `prepare`, False runs the fused ops whose operands are
            finite whenever the inputs and constants are
            (`fw.core.kernels.cpu.prepared.unchecked_ops`) without their per-call NaN/Inf
            scans; `bind_params` then checks the inputs once per run instead and runs a
            twin compiled with the checks when one is not finite.
    """

    def __init__(self, program, backend: str = "cpu", kernel_override=None,
                 memory_optimize: bool = True, op_check=None, prepare: bool = False,
                 nonfinite_checks: bool = True, op_trace: bool = False):
        self.program = program
        self.op_check = op_check
        # op_trace: every kernel call reports an event to fw.profiler's recorder (the
        # twin `__call__` compiles while a profiler records ops; see `_traced_kernel`)
        self.op_trace = bool(op_trace)
        self._traced = None
        self._init_args = (backend, kernel_override, memory_optimize, op_check, prepare,
                           nonfinite_checks)
        self._prepare = None
        self._unchecked: set = set()
        self._twin = None  # the checked twin `__call__` builds for non-finite data
        self._twin_args = (backend, kernel_override, memory_optimize)
        if prepare and backend == "cpu" and op_check is None:
            from fw.core.kernels.cpu import prepared as _prepared

            if not nonfinite_checks:
                self._unchecked = _prepared.unchecked_ops(program)
            unchecked = self._unchecked

            def _prep(op, kernel):
                return _prepared.prepare(op, kernel, op not in unchecked)

            self._prepare = _prep
        self.backend = backend
        self.memory_optimize = memory_optimize
        self._kernel_override = kernel_override or {}
        self.slot: dict = {}
        self.n = 1  # slot 0 is never a value (absent optional operands)
        if backend != "cpu" and op_check is None:
            # device rewrites (fw.core.kernels.gpu.program: elementwise chains fused, one
            # generated kernel each on the gpu) give a clone to compile; the captured
            # tensors are still read from `self.program`
            for rewrite in DEVICE_REWRITES:
                program = rewrite(program)
        self.source_program = program
        blk = program.block
        self.input_slots = []
        self.input_types = []
        self.param_slots = []  # (slot, label)
        self._param_checks = []  # (label, shape or None, np dtype, type)
        self._block0 = set(blk.args)
        for a in blk.args:
            s = self._new_slot(a)
            if a.role == "input":
                self.input_slots.append(s)
                self.input_types.append(a.type)
            else:
                self.param_slots.append((s, a.label))
                self._param_checks.append((a.label, a.type.shape if a.type.is_static else None,
                                           a.type.dtype.np, a.type))
        self._input_names = [a.label or f"input {i}" for i, a in enumerate(program.inputs())]
        self._ns = {"_nd": _ndarray, "_rc": sys.getrefcount, "_truth": _truth,
                    "_asarray": np.asarray, "_gen": np.generic}
        self._funcs: list = []  # generated function sources
        self._line_op: dict = {}  # generated line number -> op
        self._nk = 0
        self._nw = 0
        self._hoisted: set = set()  # slots holding constants computed at compile time
        # the schedule of every block compiled (block 0 first, nested blocks in the order
        # generated), for `fw.core.ir.verifier.verify_schedule`
        self.schedules: list = []
        ups = getattr(program, "updates", None)
        self.update_labels = list(ups.labels) if ups else []
        # one-value state the program updates (an optimizer's beta powers, step count):
        # kept on the host on a device, where the update kernels take it by value
        self._host_state = set(self.update_labels)
        update_values = list(ups.outputs) if ups else []
        self.n_outputs = len(blk.outputs)
        # checked programs update nothing in place: a failed check must leave the params
        self._inplace = self._plan_inplace(blk, update_values) \
            if memory_optimize and op_check is None else {}
        body: list = []
        self.main = self._gen_block(blk, body, "    ", top=True, extra_keep=update_values)
        self.update_slots = tuple(self.slot[v] for v in update_values)
        head = ["def _main(_ins, _ps):"]
        if self.input_slots:
            head.append(f"    {_targets(self.input_slots)} = _ins")
        if self.param_slots:
            head.append(f"    {_targets([s for s, _ in self.param_slots])} = _ps")
        main_src = head + body + [
            f"    return ({_targets(self.main.out_slots + self.update_slots)})"]
        self._funcs.append(main_src)
        lines = []
        for f in self._funcs:
            for ln in f:
                if isinstance(ln, tuple):  # (text, op): remember which op a line runs
                    self._line_op[len(lines) + 1] = ln[1]
                    ln = ln[0]
                lines.append(ln)
            lines.append("")
        self.source = "\n".join(lines)
        exec(compile(self.source, _SOURCE_NAME, "exec"), self._ns)
        self._run = self._ns["_main"]
        self._graph = None
        if backend == "gpu":  # replayed as a CUDA graph with FW_GPU_GRAPHS=1
            from fw.core.kernels.gpu.graphs import for_program

            self._graph = for_program(self)

    # ---------------------------------------------------------- compilation
    def _new_slot(self, v) -> int:
        s = self.n
        self.slot[v] = s
        self.n += 1
        return s

    def _kernel(self, op):
        k = self._kernel_override.get(op.name)
        if k is None:
            k = op.opdef.kernels.get(self.backend) or op.opdef.reference
            if self.backend != "cpu" and not op.operands and k is op.opdef.reference:
                k = _on_device(k, self.backend)  # full, arange, …: made on the host
        return k

    def _bind(self, obj, prefix) -> str:
        name = f"{prefix}{self._nk}"
        self._nk += 1
        self._ns[name] = obj
        return name

    def _gen_block(self, block, out: list, ind: str, top=False, assign_args=True,
                   extra_keep=()) -> _Schedule:
        """Append the lines running `block` to `out`; returns its schedule. Values in
        `extra_keep` (state updates) live to the end like the block's outputs."""
        if not top and assign_args:
            for a in block.args:
                self._new_slot(a)
        mem = self.memory_optimize
        last: dict = {}  # value -> index of its last use here (uses in nested blocks count)
        for i, op in enumerate(block.ops):
            for v in _uses(op):
                last[v] = i
        dying: dict = {}  # step index -> values whose last use it is
        for v, i in last.items():
            dying.setdefault(i, []).append(v)
        keep = set(block.outputs)
        keep.update(extra_keep)
        defined_here = set(block.args)
        steps = []
        sched = _Schedule(steps, (), block)
        self.schedules.append(sched)
        if mem and not top:  # arguments nobody reads must not pin their buffers
            dead = [self.slot[a] for a in block.args if a not in last and a not in keep]
            if dead:
                out.append(f"{ind}del {_names(dead)}")
        for i, op in enumerate(block.ops):
            ins = tuple(0 if v is None else self.slot[v] for v in op.operands)
            outs = tuple(self._new_slot(r) for r in op.results)
            defined_here.update(op.results)
            frees = tuple(self.slot[v] for v in dying.get(i, ())
                          if v in defined_here and v not in keep)
            frees += tuple(self.slot[r] for r in op.results if r not in last and r not in keep)
            reuse = 0
            inplace = self._inplace.get(op) if top else None
            if op.name == "cond":
                self._gen_cond(op, ins, outs, out, ind)
            elif op.name == "while":
                self._gen_while(op, ins, outs, out, ind)
            elif self._hoist(op, keep, outs, out, ind):
                pass
            else:
                plan = self._reuse_plan(op, last, i, keep, defined_here) if mem else None
                reuse = self._gen_call(op, ins, outs, out, ind, plan, inplace)
            if mem and frees:
                out.append(f"{ind}del {', '.join(f'v{s}' for s in frees)}")
            writes = tuple(self.slot[a] for a in inplace if a is not None) if inplace else ()
            steps.append(Step(op, ins, outs, frees if mem else (), reuse, writes))
        sched.out_slots = tuple(self.slot[v] for v in block.outputs)
        return sched

    def _hoist(self, op, keep, outs, out, ind) -> bool:
        """Compute a constant op (no operands: ``full``, ``arange``, …) once, now,
        and let every run read the result; True if done. Only small, static,
        deterministic results that are not block outputs; the array is made
        read-only so that nothing (a view handed to the user) can change it."""
        d = op.opdef
        if op.operands or op.blocks or not op.results or d.random or d.side_effect or \
                any(r in keep for r in op.results):
            return False
        if not all(r.type.is_static for r in op.results) or \
                sum(r.type.numel() * r.type.dtype.itemsize for r in op.results) > _HOIST_BYTES:
            return False
        # on a device, computed by the host kernel and moved once below (the device's
        # kernel of a constant op makes it on the host and copies it every run)
        kern = self._kernel(op) if self.backend == "cpu" else \
            (op.opdef.kernels.get("cpu") or op.opdef.reference)
        try:
            res = kern(**op.attrs)
        except Exception:  # noqa: BLE001 - left to fail at run time, with its message
            return False
        if op.opdef.num_outputs != 1 and not isinstance(res, (tuple, list)):
            return False
        vals = [res] if op.opdef.num_outputs == 1 else list(res)
        if len(vals) != len(op.results):
            return False
        arrays = []
        for r, v in zip(op.results, vals):
            if isinstance(v, np.generic):
                v = np.asarray(v)
            if type(v) is not _ndarray or v.shape != r.type.shape or v.dtype != r.type.dtype.np:
                return False
            arrays.append(v)
        for s, v in zip(outs, arrays):
            if self.backend == "cpu":
                freeze(v)  # read-only, and stamped so native kernels may prepack it
            else:
                v = _pl.get_backend(self.backend).asarray(v, _device_index(self.backend))
            out.append((f"{ind}v{s} = {self._bind(v, 'c')}", op))
            self._hoisted.add(s)
        return True

    def _plan_inplace(self, blk, update_values) -> dict:
        """{op: [target arg or None per result]} for optimizer-family ops whose results
        can be computed straight into the updated tensors (see the module doc)."""
        import inspect

        try:
            from fw.core.ops.optimizer import UPDATE_OPS
        except ImportError:  # pragma: no cover - the optimizer family ships with fw-core
            return {}
        if not update_values:
            return {}
        targets = {}  # update value -> target arg
        by_label = {a.label: a for a in blk.args if a.role in ("param", "const")}
        counts: dict = {}
        for v in update_values:
            counts[v] = counts.get(v, 0) + 1
        for label, v in zip(self.update_labels, update_values):
            a = by_label.get(label)
            if a is not None and counts[v] == 1:
                targets[v] = a
        outputs = set(blk.outputs)
        keep = outputs | set(update_values)
        last: dict = {}
        for i, op in enumerate(blk.ops):
            for v in _uses(op):
                last[v] = i
        # values that may share a target's memory: results of ops that can return a
        # view (reshape, slicing, a no-op cast…) of the target or of such a value
        aliases: dict = {a: {a} for a in targets.values()}
        for op in blk.ops:
            if not may_return_view(op):
                continue
            for al in aliases.values():
                if any(v in al for v in op.operands if v is not None):
                    al.update(op.results)
        plan = {}
        for i, op in enumerate(blk.ops):
            spec = UPDATE_OPS.get(op.name)
            if spec is None or op.opdef.family != "optimizer" or op.blocks:
                continue
            kern = self._kernel(op)
            try:
                if "out" not in inspect.signature(kern).parameters:
                    continue
            except (TypeError, ValueError):
                continue
            states, _outs = spec
            # result j updates the input it was computed from: 0 <- param, k <- state k
            match = {0: 0}
            for k, _name in enumerate(states, 1):
                match[k] = 2 + k
            entry = []
            for j, r in enumerate(op.results):
                a = targets.get(r)
                src = match.get(j)
                # the old value of `a` must not be returned or stored into another
                # param: the outputs and updates are read after every op has run
                ok = a is not None and r not in outputs and a not in keep and \
                    src is not None and \
                    src < len(op.operands) and op.operands[src] is a and \
                    last.get(a, -1) <= i and \
                    sum(1 for v in op.operands if v is a) == 1 and \
                    a.type.is_static and a.type == r.type and \
                    all(w is a or (last.get(w, -1) < i and w not in keep)
                        for w in aliases.get(a, ()))
                entry.append(a if ok else None)
            if any(e is not None for e in entry):
                plan[op] = entry
        return plan

    def _gen_call(self, op, ins, outs, out, ind, reuse, inplace=None) -> int:
        kern = self._kernel(op)
        prepared = None
        if self._prepare is not None and inplace is None and op.name not in self._kernel_override:
            prepared = self._prepare(op, kern)
        kern = kern if prepared is None else prepared
        if self.op_trace:
            kern = _traced_kernel(kern, op)
        k = self._bind(kern, "k")
        args = ["None" if s == 0 else f"v{s}" for s in ins]
        var = op.opdef.variadic
        if var >= 0:  # the kernel takes the variadic input as one list, as in eager mode
            n = len(args) - (len(op.opdef.input_names) - 1)
            args = args[:var] + [f"[{', '.join(args[var:var + n])}]"] + args[var + n:]
        if prepared is not None:  # its attributes are bound; its own buffers
            reuse = None
        for name, val in ({} if prepared is not None else op.attrs).items():
            if name in op.opdef.attrs and name.isidentifier() and not keyword.iskeyword(name):
                args.append(f"{name}={self._bind(val, 'a')}")
            else:  # cannot be a keyword in source: pass it through a dict
                args.append(f"**{self._bind({name: val}, 'a')}")
        if inplace is not None:
            outs_arg = ", ".join("None" if a is None else f"v{self.slot[a]}" for a in inplace)
            args.append(f"out=({outs_arg},)")
            reuse = None
        call = f"{k}({', '.join(args)})"
        # a kernel returns one result bare, several (or a variable number) as a tuple
        target = _names(outs) if op.opdef.num_outputs == 1 else _targets(outs)
        if reuse is not None:
            slot, cond = reuse
            out.append((f"{ind}if {cond}:", op))
            out.append((f"{ind}    {target} = {call[:-1]}, out=v{slot})", op))
            out.append((f"{ind}else:", op))
            out.append((f"{ind}    {target} = {call}", op))
        else:
            out.append((f"{ind}{target} = {call}" if outs else f"{ind}{call}", op))
        # eager mode gives 0-d arrays, NumPy scalar math gives scalars: keep arrays
        for s, r in zip(outs, op.results):
            if r.type.ndim == 0:
                out.append((f"{ind}if isinstance(v{s}, _gen): v{s} = _asarray(v{s})", op))
        if self.op_check is not None and outs and any(
                r.type.dtype.is_inexact for r in op.results):
            chk = self._bind(self.op_check, "c")
            out.append((f"{ind}{chk}({self._bind(op, 'o')}, ({_names(outs)},))", op))
        return 0 if reuse is None else reuse[0]

    def _reuse_plan(self, op, last, i, keep, defined_here):
        """(operand slot, run-time condition) when the result may go into a dead
        operand's buffer, else None."""
        kern = self._kernel(op)
        # a ufunc, or a kernel wrapping one (a dtype check in front) that passes `out=` on
        uf = kern if isinstance(kern, np.ufunc) else getattr(kern, "__wrapped__", None)
        if self.backend != "cpu" or not isinstance(uf, np.ufunc) or op.attrs or \
                len(op.results) != 1 or uf.nout != 1 or uf.nin != len(op.operands):
            return None
        rt = op.results[0].type
        for v in op.operands:
            if v is None or last.get(v) != i or v in keep or v not in defined_here or \
                    v in self._block0 or v.type.dtype is not rt.dtype or \
                    self.slot[v] in self._hoisted:
                continue
            s = self.slot[v]
            cond = f"v{s}.__class__ is _nd and v{s}.base is None and _rc(v{s}) == 2"
            others = [w for w in op.operands if w is not v]
            if v.type.shape == rt.shape and v.type.is_static:
                return s, cond
            # the others broadcast into v's shape whatever v's dynamic sizes are
            if all(len(w.type.shape) <= len(v.type.shape) and all(d == 1 for d in w.type.shape)
                   for w in others if w is not None):
                return s, cond
            if len(others) == 1 and others[0] is not None and \
                    others[0].type.shape == v.type.shape == rt.shape:
                return s, cond + f" and v{s}.shape == v{self.slot[others[0]]}.shape"
        return None

    def _gen_cond(self, op, ins, outs, out, ind):
        out.append((f"{ind}if _truth(v{ins[0]}):", op))
        for blk in op.blocks:
            inner: list = []
            sched = self._gen_block(blk, inner, ind + "    ")
            if outs:
                inner.append(f"{ind}    {_names(outs)} = {_names(sched.out_slots)}")
                local = {self.slot[v] for v in blk.outputs if v in _defined_in(blk)}
                if self.memory_optimize and local:
                    inner.append(f"{ind}    del {', '.join(f'v{s}' for s in sorted(local))}")
            out.extend(inner or [f"{ind}    pass"])
            if blk is op.blocks[0]:
                out.append(f"{ind}else:")

    def _gen_while(self, op, ins, outs, out, ind):
        cblk, bblk = op.blocks
        free = list(dict.fromkeys(_free_uses(op)))
        name = f"_w{self._nw}"
        self._nw += 1
        fsrc: list = []
        params = ", ".join(["_init"] + [f"v{self.slot[v]}" for v in free])
        fsrc.append(f"def {name}({params}):")
        for a in cblk.args:
            self._new_slot(a)
        for a in bblk.args:
            self._new_slot(a)
        carried = [self.slot[a] for a in bblk.args]
        cargs = [self.slot[a] for a in cblk.args]
        if carried:
            fsrc.append(f"    {_targets(carried)} = _init")
        fsrc.append("    del _init")  # the carried buffers are owned by the loop alone
        fsrc.append("    while True:")
        if cargs:
            fsrc.append(f"        {_names(cargs)} = {_names(carried)}")
        c_sched = self._gen_block(cblk, fsrc, "        ", assign_args=False)
        (flag,) = c_sched.out_slots
        fsrc.append((f"        if not _truth(v{flag}):", op))
        fsrc.append("            break")
        b_sched = self._gen_block(bblk, fsrc, "        ", assign_args=False)
        if carried:
            fsrc.append(f"        {_names(carried)} = {_names(b_sched.out_slots)}")
            local = _defined_in(bblk) - set(bblk.args)
            done = sorted({self.slot[v] for v in bblk.outputs if v in local})
            if self.memory_optimize and done:  # the carried names now own the buffers
                fsrc.append(f"        del {_names(done)}")
        fsrc.append(f"    return ({_targets(carried)})")
        self._funcs.append(fsrc)
        self._ns[name] = None  # bound when the source is executed
        init = ", ".join(f"v{s}" for s in ins)
        fargs = "".join(f", v{self.slot[v]}" for v in free)
        call = f"{name}([{init}]{fargs})"
        out.append((f"{ind}{_targets(outs)} = {call}" if outs else f"{ind}{call}", op))

    # ---------------------------------------------------------- running
    def check_inputs(self, arrays) -> None:
        if len(arrays) != len(self.input_slots):
            raise InvalidArgumentError(f"the program takes {len(self.input_slots)} inputs "
                                       f"({', '.join(self._input_names)}), got {len(arrays)}")
        for i, (a, t) in enumerate(zip(arrays, self.input_types)):
            shape = getattr(a, "shape", None)
            d = _dt._BY_NP.get(getattr(a, "dtype", None))
            ok = d is t.dtype and shape is not None and len(shape) == len(t.shape) and all(
                e == DYN or e == g for e, g in zip(t.shape, shape))
            if not ok:
                got = f"{getattr(d, 'name', getattr(a, 'dtype', type(a).__name__))}" \
                      f"{list(shape) if shape is not None else ''}"
                raise InvalidArgumentError(
                    f"program input '{self._input_names[i]}' expects {t.dtype.name}"
                    f"{list(t.shape)} (-1: any size), got {got}")

    def _params(self, cap, check, move=True) -> list:
        try:
            ps = [cap[label] for label, _, _, _ in self._param_checks]
        except KeyError:
            missing = [lab for lab, _, _, _ in self._param_checks if lab not in cap]
            t = {lab: t for lab, _, _, t in self._param_checks}
            raise InvalidArgumentError(
                f"the program needs the parameters/constants "
                f"{', '.join(f'{m!r} ({t[m]})' for m in missing)} but they were not given "
                f"(program.captured has no such entry; load the model with fw.core.ir.load or "
                f"pass params=)") from None
        ps = [v._data if isinstance(v, Tensor) else v for v in ps]
        if move and self.backend != "cpu":
            ps = self._to_device(ps)
        if check:
            for a, (label, shape, npd, t) in zip(ps, self._param_checks):
                if shape is not None and (getattr(a, "shape", None) != shape or
                                          getattr(a, "dtype", None) != npd):
                    raise InvalidArgumentError(
                        f"parameter/constant '{label}' must be {t}, got "
                        f"{getattr(a, 'dtype', type(a).__name__)}"
                        f"{list(getattr(a, 'shape', []))}")
        return ps

    def _to_device(self, ps) -> list:
        """The params with the constants captured on the host (scalars, masks) moved to
        this program's device; the one-value state it updates stays on the host."""
        be = _pl.get_backend(self.backend)
        keep = self._host_state
        return [be.asarray(a, _device_index(self.backend))
                if type(a) is _ndarray and not (label in keep and a.size <= 1) else a
                for a, (label, _, _, _) in zip(ps, self._param_checks)]

    def bind_params(self, params=None):
        """``run(arrays) -> [output arrays]`` over parameters read once, now (`params`,
        ``{label: Tensor or array}``, or the program's captured tensors; their types are
        checked here), and no input check per call: for a caller whose weights never
        change afterwards (a predictor's frozen constants) and that checks its inputs
        itself. A program with state updates is refused (its writes need `__call__`)."""
        if self.update_slots:
            raise InvalidArgumentError(f"bind_params: the program updates "
                                       f"{self.update_labels}; run it with Compiled.__call__")
        if self._graph is not None:  # a CUDA graph resolves its params per call

            def run_graph(arrays):
                return self(arrays, params, False)

            return run_graph
        ps = self._params(self.program.captured if params is None else params, True)
        run, explain, forget = self._run, self._explain, _forget_checked
        recorder = _observe.recorder

        def run_bound(arrays):
            if recorder() is not None:  # fw.profiler records: its per-op twin (__call__)
                return self(arrays, params, False)
            try:
                return list(run(arrays, ps))
            except Exception as e:
                raise explain(e) from e
            finally:
                forget()  # outputs go to the caller: no kernel trusts them unseen

        if not self._unchecked:
            return run_bound
        from fw.core.kernels.cpu.prepared import all_finite

        backend, override, mem = self._twin_args
        twin = Compiled(self.program, backend, override, mem, prepare=True).bind_params(params)
        if not all(all_finite(a) for a in ps):  # a constant is not finite: checks always
            return twin
        # the inputs the unchecked ops' operands come from: a non-finite one runs the twin
        # (its kernels check, as eager mode's fused kernels do)
        floats = [i for i, t in enumerate(self.input_types) if t.dtype.is_inexact]

        def run_guarded(arrays):
            for i in floats:
                if not all_finite(arrays[i]):
                    return twin(arrays)
            return run_bound(arrays)

        return run_guarded

    def __call__(self, arrays, params=None, check=True):
        """Run on input arrays (`params`: ``{label: Tensor or array}`` instead of the
        program's captured tensors; `check`: check the inputs' and params' types).
        Returns the output arrays (a list)."""
        rec = _observe.recorder()
        if rec is None:
            return self._call(arrays, params, check)
        # fw.profiler records: one span per program run, and one event per op when it
        # records ops: the run then goes to a twin whose kernels report themselves (this
        # program's generated code stays as it was, so nothing is paid when no profiler runs)
        run = self
        if _observe.tracing_ops() and not self.op_trace:
            run = self._traced
            if run is None:
                backend, override, mem, op_check, prepare, nonfinite = self._init_args
                run = self._traced = Compiled(self.program, backend, override, mem, op_check,
                                              prepare, nonfinite, op_trace=True)
        t0 = _perf_ns()
        try:
            return run._call(arrays, params, check)
        finally:
            rec.event("Executor::run", "OperatorInner", t0, _perf_ns(),
                      {"ops": len(self.program.block.ops)})

    def _call(self, arrays, params, check):
        if check:
            self.check_inputs(arrays)
        cap = self.program.captured if params is None else params
        # a CUDA graph keeps its own device copies of the host constants
        ps = self._params(cap, check, move=self._graph is None)
        if self._unchecked:  # the checks `bind_params` makes once, made on this call
            from fw.core.kernels.cpu.prepared import all_finite

            if not all(all_finite(a) for a in arrays) or not all(all_finite(a) for a in ps):
                if self._twin is None:
                    backend, override, mem = self._twin_args
                    self._twin = Compiled(self.program, backend, override, mem, prepare=True)
                return self._twin(arrays, params, check)
        try:
            outs = self._run(arrays, ps) if self._graph is None else self._graph(arrays, ps)
        except Exception as e:
            raise self._explain(e) from e
        finally:
            _forget_checked()  # outputs go to the caller: no kernel trusts them unseen
        if self.update_slots:
            n = self.n_outputs
            res = list(outs[:n])
            if res:  # an output never sees the writes that follow it
                targets = [getattr(t, "_data", t) for t in
                           (cap[lab] for lab in self.update_labels)]
                for k, o in enumerate(res):
                    view = getattr(o, "base", None) is not None
                    if any(o is a or (view and type(o) is type(a) and np.may_share_memory(o, a))
                           for a in targets):
                        res[k] = o.copy()
            self._write_updates(cap, outs[n:])
            return res
        return list(outs)

    def host_update_index(self, ps=None) -> list:
        """Positions among the generated function's results of the state updates whose
        captured tensors live on the host (a device program's one-value state)."""
        cap = self.program.captured
        n = self.n_outputs
        return [n + j for j, label in enumerate(self.update_labels)
                if type(getattr(cap[label], "_data", cap[label])) is _ndarray]

    def _write_updates(self, cap, values) -> None:
        """Store the state updates into the captured tensors (see the module doc)."""
        targets = []
        for label in self.update_labels:
            t = cap[label]
            targets.append((t, t._data if isinstance(t, Tensor) else t))
        ids = {id(a) for _, a in targets}
        values = list(values)
        for i, v in enumerate(values):  # nothing is written before every value is safe
            a = targets[i][1]
            if v is a:  # computed in place
                continue
            if id(v) in ids or getattr(v, "base", None) is not None:
                values[i] = v.copy()
        for label, (t, a), v in zip(self.update_labels, targets, values):
            if v is a:
                if isinstance(t, Tensor):
                    _bump(t)
                continue
            if getattr(v, "shape", None) != a.shape:
                raise InvalidArgumentError(
                    f"state update of {label!r}: the program computed shape "
                    f"{list(getattr(v, 'shape', ()))} for a tensor of shape {list(a.shape)}")
            if type(v) is not type(a):  # host state (e.g. a step count) of a device program
                v = _pl.backend_of(v).to_numpy(v) if type(a) is _ndarray else \
                    _pl.backend_of(a).asarray(on_host(v), _pl.place_of(a).index)
            try:
                a[...] = v
            except ValueError as e:  # e.g. read-only memory
                raise InvalidArgumentError(f"state update of {label!r}: cannot write into the "
                                           f"captured tensor: {e}") from None
            if isinstance(t, Tensor):
                _bump(t)

    def _explain(self, e) -> Exception:
        """The op that failed, from the generated line in the traceback."""
        tb = e.__traceback__
        op = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == _SOURCE_NAME:
                op = self._line_op.get(tb.tb_lineno, op)
            tb = tb.tb_next
        if op is None:
            return e
        from fw.core.ir.printer import print_program

        lines: dict = {}
        text = print_program(self.source_program, lenient=True, op_lines=lines).splitlines()
        ln = lines.get(op, 0)
        where = f"`{text[ln - 1].strip()}` (line {ln} of the program)" if ln else op.name
        if op.loc:
            where += f", traced at {op.loc[0]}:{op.loc[1]}"
        msg = f"{op.name}: failed while running {where}: {type(e).__name__}: {e}"
        if isinstance(e, FwError):
            return type(e)(msg)
        if isinstance(e, TypeError):
            return InvalidTypeError(msg)
        if isinstance(e, MemoryError):
            return MemoryError(msg)
        return InvalidArgumentError(msg)


def _traced_kernel(kern, op):
    """`kern` reporting each call to the active profiler recorder as an op event (name,
    operand and result arrays: the recorder keeps their shapes when asked)."""
    name = op.name

    def traced(*args, **kwargs):
        t0 = _perf_ns()
        res = kern(*args, **kwargs)
        rec = _observe.recorder()
        if rec is not None:
            rec.ir_op_event(name, args, res, t0, _perf_ns())
        return res

    traced.__wrapped__ = kern
    return traced


def _names(slots) -> str:
    return ", ".join(f"v{s}" for s in slots)


def _targets(slots) -> str:
    """Unpacking targets for a sequence of `slots` values."""
    names = ", ".join(f"v{s}" for s in slots)
    return names + "," if len(slots) == 1 else names


def _defined_in(block) -> set:
    out = set(block.args)
    for op in block.ops:
        out.update(op.results)
    return out


def _free_uses(op) -> list:
    """Values the op's blocks read from enclosing scopes (in first-use order)."""
    seen = []
    for b in op.blocks:
        inner = _defined_in(b)
        for o in b.ops:
            for v in _uses(o):
                if v not in inner:
                    seen.append(v)
        for v in b.outputs:
            if v not in inner:
                seen.append(v)
    return seen


def _uses(op):
    """Values an op reads, including those read inside its nested blocks from
    enclosing scopes."""
    return [v for v in op.operands if v is not None] + _free_uses(op)


def compile_program(program, backend: str = "cpu", memory_optimize: bool = True) -> Compiled:
    """The `Compiled` form of `program` for `backend`, cached on the program until
    it changes (``program.touch()``)."""
    cache = program._compiled
    if cache is None or cache[0] != program._version:
        cache = (program._version, {})
        program._compiled = cache
    key = (backend, bool(memory_optimize))
    c = cache[1].get(key)
    if c is None:
        c = Compiled(program, backend, memory_optimize=memory_optimize)
        cache[1][key] = c
    return c


def _device_index(kind) -> int:
    p = _pl.current_place()
    return p.index if p.kind == kind else 0


def _on_device(kernel, kind):
    """A kernel of an op with no operands (its outputs are made on the host) whose
    outputs are moved to a `kind` device, for programs running there."""
    from fw.core.dispatch import _move_outputs  # eager's own move of such outputs

    be = _pl.get_backend(kind)

    def run(**attrs):
        return _move_outputs(kernel(**attrs), be)

    return run


def _to_array(x, i):
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (_ndarray, np.generic)):
        return np.asarray(x)
    if hasattr(x, "__cuda_array_interface__") or type(x).__module__.split(".")[0] == "cupy":
        return x
    if isinstance(x, (list, tuple, int, float, bool)):
        from fw.core.tensor import to_tensor

        return to_tensor(x)._data
    raise InvalidTypeError(f"program input {i}: expected a Tensor or an array, got "
                           f"{type(x).__name__}")


def run(program, *inputs, memory_optimize: bool = True):
    """Run `program` on `inputs` (Tensors or arrays, checked against the program's
    input types). Returns one Tensor for a single output, else a tuple of Tensors.

    >>> import fw, numpy as np
    >>> from fw.core.ir import TensorType, trace, run
    >>> p = trace(lambda x: fw.tanh(x) * 2.0, [TensorType([-1, 2], "float32")])
    >>> run(p, np.zeros((1, 2), np.float32)).numpy().tolist()
    [[0.0, 0.0]]
    """
    arrays = [_to_array(x, i) for i, x in enumerate(inputs)]
    backend = "cpu"
    for a in arrays:
        if type(a) is not _ndarray:
            backend = _pl.backend_of(a).name
            break
    outs = compile_program(program, backend, memory_optimize)(arrays)
    res = tuple(wrap(o) for o in outs)
    return res[0] if len(res) == 1 else res
