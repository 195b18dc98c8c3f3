"""The executor: compile a program once into a flat schedule, then run it.

Compilation gives every Value a slot in one environment list and turns each
operation into a step ``(fn, input slots, output slots, slots to free)`` where
``fn`` is the op's kernel for the backend with its attributes bound. Running is
then a loop with no per-op lookups: gather inputs, call, store outputs, drop the
values whose last use was this step (so their memory is released or reused as
soon as possible — the liveness part of memory planning).

``cond`` and ``while`` compile their blocks into nested schedules over the same
environment. Parameters and constants are read from the tensors the program
captured at each run, so updates made between runs are seen.

`run(program, *inputs)` compiles on first use and caches the result on the
program (keyed by its version and the inputs' backend).
"""

from __future__ import annotations

import functools

import numpy as np

from fw.core import dtypes as _dt
from fw.core import place as _pl
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN
from fw.core.tensor import Tensor, _new

__all__ = ["run", "compile_program", "Compiled"]

_ndarray = np.ndarray
_CTRL = 1


class _Schedule:
    __slots__ = ("steps", "out_slots")

    def __init__(self, steps, out_slots):
        self.steps = steps
        self.out_slots = out_slots


class Compiled:
    """A program compiled for one backend."""

    def __init__(self, program, backend: str = "cpu", kernel_override=None):
        self.program = program
        self.backend = backend
        self._kernel_override = kernel_override or {}
        self.slot: dict = {}
        self.n = 1  # slot 0 is always None (absent optional operands)
        blk = program.block
        self.input_slots = []
        self.input_types = []
        self.param_slots = []  # (slot, label)
        for a in blk.args:
            s = self._new_slot(a)
            if a.role == "input":
                self.input_slots.append(s)
                self.input_types.append(a.type)
            else:
                self.param_slots.append((s, a.label))
        self.main = self._compile_block(blk, top=True)

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
        return functools.partial(k, **op.attrs) if op.attrs else k

    def _compile_block(self, block, top=False) -> _Schedule:
        if not top:
            for a in block.args:
                self._new_slot(a)
        # last use (step index in this block) of values used here or in nested blocks
        last: dict = {}
        for i, op in enumerate(block.ops):
            for v in _uses(op):
                last[v] = i
        keep = set(block.outputs)
        defined_here = set(block.args)
        steps = []
        for i, op in enumerate(block.ops):
            ins = tuple(0 if v is None else self.slot[v] for v in op.operands)
            outs = tuple(self._new_slot(r) for r in op.results)
            defined_here.update(op.results)
            if op.name == "cond":
                fn = self._cond_fn(op)
                kind = _CTRL
            elif op.name == "while":
                fn = self._while_fn(op)
                kind = _CTRL
            else:
                fn = self._kernel(op)
                kind = 0
            frees = tuple(self.slot[v] for v, j in last.items()
                          if j == i and v in defined_here and v not in keep)
            # results nobody uses are dropped right away
            frees += tuple(self.slot[r] for r in op.results if r not in last and r not in keep)
            steps.append((fn, ins, outs, frees, kind))
        return _Schedule(steps, tuple(self.slot[v] for v in block.outputs))

    def _cond_fn(self, op):
        then_s = self._compile_block(op.blocks[0])
        else_s = self._compile_block(op.blocks[1])
        run_block = _run_block

        def fn(env, pred):
            s = then_s if bool(np.asarray(pred).reshape(-1)[0]) else else_s
            run_block(s.steps, env)
            return tuple(env[k] for k in s.out_slots)

        return fn

    def _while_fn(self, op):
        cblk, bblk = op.blocks
        cond_s = self._compile_block(cblk)
        body_s = self._compile_block(bblk)
        c_args = [self.slot[a] for a in cblk.args]
        b_args = [self.slot[a] for a in bblk.args]
        run_block = _run_block

        def fn(env, *init):
            vals = init
            while True:
                for s, v in zip(c_args, vals):
                    env[s] = v
                run_block(cond_s.steps, env)
                if not bool(np.asarray(env[cond_s.out_slots[0]]).reshape(-1)[0]):
                    return tuple(vals)
                for s, v in zip(b_args, vals):
                    env[s] = v
                run_block(body_s.steps, env)
                vals = tuple(env[k] for k in body_s.out_slots)

        return fn

    # ---------------------------------------------------------- running
    def check_inputs(self, arrays) -> None:
        if len(arrays) != len(self.input_slots):
            names = [a.label or f"input {i}" for i, a in enumerate(self.program.inputs())]
            raise InvalidArgumentError(f"the program takes {len(self.input_slots)} inputs "
                                       f"({', '.join(names)}), got {len(arrays)}")
        for i, (a, t) in enumerate(zip(arrays, self.input_types)):
            shape = a.shape
            d = _dt._BY_NP.get(a.dtype)
            ok = d is t.dtype and len(shape) == len(t.shape) and all(
                e == DYN or e == g for e, g in zip(t.shape, shape))
            if not ok:
                label = self.program.inputs()[i].label or f"input {i}"
                raise InvalidArgumentError(
                    f"program input '{label}' expects {t.dtype.name}{list(t.shape)} (-1: any "
                    f"size), got {getattr(d, 'name', a.dtype)}{list(shape)}")

    def __call__(self, arrays, params=None, check=True):
        """Run on input arrays; returns the output arrays (a list)."""
        if check:
            self.check_inputs(arrays)
        env = [None] * self.n
        for s, a in zip(self.input_slots, arrays):
            env[s] = a
        cap = self.program.captured if params is None else params
        for s, label in self.param_slots:
            t = cap[label]
            env[s] = t._data if isinstance(t, Tensor) else t
        _run_block(self.main.steps, env)
        return [env[s] for s in self.main.out_slots]


def _run_block(steps, env):
    for fn, ins, outs, frees, kind in steps:
        if kind:
            r = fn(env, *[env[i] for i in ins])
        else:
            r = fn(*[env[i] for i in ins])
        if len(outs) == 1:
            env[outs[0]] = r
        else:
            for s, v in zip(outs, r):
                env[s] = v
        for s in frees:
            env[s] = None


def _uses(op):
    """Values an op reads, including those read inside its nested blocks from
    enclosing scopes."""
    seen = [v for v in op.operands if v is not None]
    for b in op.blocks:
        inner = set(b.args)
        for o in b.ops:
            inner.update(o.results)
        for o in b.ops:
            for v in _uses(o):
                if v not in inner:
                    seen.append(v)
        for v in b.outputs:
            if v not in inner:
                seen.append(v)
    return seen


def compile_program(program, backend: str = "cpu") -> Compiled:
    cache = program._compiled
    if cache is None or cache[0] != program._version:
        cache = (program._version, {})
        program._compiled = cache
    c = cache[1].get(backend)
    if c is None:
        c = Compiled(program, backend)
        cache[1][backend] = c
    return c


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


def _wrap(a):
    if type(a) is not _ndarray and (isinstance(a, np.generic) or not hasattr(a, "shape")):
        a = np.asarray(a)
    t = _new(Tensor)
    t._data = a
    t._sg = True
    t._node = None
    return t


def run(program, *inputs):
    """Run `program` on `inputs` (Tensors or arrays). Returns one Tensor for a
    single output, else a tuple of Tensors."""
    arrays = [_to_array(x, i) for i, x in enumerate(inputs)]
    backend = "cpu"
    for a in arrays:
        if type(a) is not _ndarray:
            backend = _pl.backend_of(a).name
            break
    outs = compile_program(program, backend)(arrays)
    res = tuple(_wrap(o) for o in outs)
    return res[0] if len(res) == 1 else res
