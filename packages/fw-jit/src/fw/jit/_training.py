"""Training inside a traced function: ``loss.backward()``, ``opt.step()``,
``opt.clear_grad()`` become part of the program.

While a function is traced (`TraceTraining` is active):

- ``loss.backward()`` on a symbolic loss (`fw.core.ir.core.value_hooks.backward`)
  emits the gradients of the trainable parameters the program has captured (with
  fw-autograd's static backward) and keeps them in ``builder.grads``
  (id(param) -> (param, grad Value)); ``param.grad`` reads as that Value until
  the trace ends. Eager semantics are kept: a gradient the parameter already
  holds is accumulated into (read as a constant of the program) unless it is
  known to be zero (fw.jit zeroed it after the previous run and nothing wrote it
  since — its version counter says so).
- ``opt.step()`` emits the optimizer's update for each parameter with a gradient
  (`fw.jit._optimizers`) and records the new parameter and optimizer-state
  values as state updates of the program; the learning rate is read from the
  optimizer before each run (a scheduler may change it).
- ``opt.clear_grad()`` marks the gradients cleared.

After each run the parameters' ``.grad`` are brought to the state eager code
would leave them in (cleared to zeros or None, or holding the accumulated
gradient, written in place so views stay valid). The gradient state each
program assumed is a guard of the cached program: a call with a different state
traces again.
"""

from __future__ import annotations

import weakref

import numpy as np

from fw.core.internal import build_state
from fw.core.ir.core import Value, value_hooks
from fw.core.tensor import Tensor, version_of, wrap
from fw.jit import _context, _optimizers
from fw.jit.errors import ConversionError

__all__ = ["TraceTraining", "install", "optimizer_method"]

_ACTIVE: list = []  # the TraceTraining of the traces being built


def _inexact(t) -> bool:
    return t.dtype.is_inexact


class _GradState:
    """What a trace knows about one parameter's gradient: ``initial`` is its state
    at the start of a run ("none": no gradient, "zero": a gradient fw.jit knows is
    zero, "value": a gradient of unknown contents); ``current`` is its state at this
    point of the trace: "none", "zero", "initial" (untouched) or a Value."""

    __slots__ = ("param", "initial", "current")

    def __init__(self, param, initial):
        self.param = param
        self.initial = initial
        self.current = {"none": "none", "zero": "zero", "value": "initial"}[initial]


class TraceTraining:
    """Training state of one trace (see the module docstring)."""

    def __init__(self, trace, owner):
        self.trace = trace
        self.owner = owner  # the StaticFunction (keeps the known-zero versions)
        self.grads: dict = {}  # id(param) -> _GradState
        self.saved_grads: dict = {}  # id(param) -> (param, its ._grad before the trace)
        self.did_backward = False
        self.lr_tensors: list = []  # (tensor, refresh function)
        self.pre_run: list = []
        self.post_run: list = []
        self.guards: list = []
        self.actions: list = []
        _ACTIVE.append(self)

    # -------------------------------------------------------- gradients
    def _initial(self, p) -> str:
        g = p._grad
        if g is None:
            return "none"
        if not isinstance(g, Tensor):
            return "value"
        if self.owner is not None and known_zero(self.owner._zero_grads, g):
            return "zero"
        return "value"

    def state(self, p) -> _GradState:
        st = self.grads.get(id(p))
        if st is None:
            self.saved_grads[id(p)] = (p, p._grad)
            st = _GradState(p, self._initial(p))
            self.grads[id(p)] = st
        return st

    def _saved(self, p):
        return self.trace.builder.capture(self.saved_grads[id(p)][1])

    def grad_for_step(self, p):
        """The gradient an optimizer step reads for `p` now (a Value), or None."""
        import fw

        st = self.state(p)
        cur = st.current
        if cur == "none":
            return None
        if cur == "zero":
            return fw.zeros(list(p._data.shape), p.dtype)
        if cur == "initial":
            return self._saved(p)
        return cur

    def backward(self, loss, grad_tensor=None):
        from fw.autograd import gradients

        b = self.trace.builder
        if len(b.blocks) > 1:
            fn, ln = _context.user_frame(3)
            raise ConversionError("calling backward() inside an if/while whose condition is a "
                                  "tensor", fn, ln, construct="backward",
                                  hint="call loss.backward() outside the tensor-dependent "
                                       "control flow")
        params = []
        for a in b.program.parameters():
            t = b.program.captured.get(a.label)
            if isinstance(t, Tensor) and not t._sg and _inexact(t) and not _context.is_aux(t):
                params.append(t)
        if not params:
            return
        vals = [b.current_value(t) for t in params]
        seeds = None if grad_tensor is None else [grad_tensor]
        gs = gradients([loss], vals, seeds, allow_unused=True)
        for t, g in zip(params, gs):
            if g is None:
                continue
            st = self.state(t)
            cur = st.current
            if cur == "initial":
                g = self._saved(t) + g
            elif type(cur) is Value:
                g = cur + g
            st.current = g
            b.grads[id(t)] = (t, g)
            t._grad = g  # what user code reading p.grad sees while tracing
        self.did_backward = True

    def assign_grad(self, p, value):
        """``p.grad`` becomes `value` (a Value) from here on in the trace (an in-place
        collective on it, `fw.jit._runtime.convert_inplace_attr`)."""
        st = self.state(p)
        st.current = value
        self.trace.builder.grads[id(p)] = (p, value)
        p._grad = value

    def clear(self, params, set_to_zero=True):
        b = self.trace.builder
        for p in params:
            if not isinstance(p, Tensor) or p._sg:
                continue
            st = self.state(p)
            if not set_to_zero:
                st.current = "none"
            elif st.current != "none":
                st.current = "zero"
            b.grads.pop(id(p), None)
            p._grad = self.saved_grads[id(p)][1]

    # -------------------------------------------------------- end of trace
    def finish(self, hidden_names: list, hidden_vals: list) -> None:
        """Decide the post-run gradient actions; hidden outputs for gradients that
        survive the run go to `hidden_names`/`hidden_vals`."""
        self.actions = []
        for st in self.grads.values():
            cur = st.current
            if type(cur) is Value:
                name = f"__grad_{len(hidden_names)}"
                hidden_names.append(name)
                hidden_vals.append(cur)
                self.actions.append(("value", st.param, name))
            elif cur == "zero" and st.initial != "zero":
                self.actions.append(("zero", st.param, st.initial))
            elif cur == "none" and st.initial != "none":
                self.actions.append(("none", st.param, None))

    def restore(self) -> None:
        """Give the parameters their own ``.grad`` back (the trace set Values)."""
        for p, g in self.saved_grads.values():
            p._grad = g
        if self in _ACTIVE:
            _ACTIVE.remove(self)

    def install(self, cp) -> None:
        """Attach guards and pre/post-run actions to the concrete program."""
        from fw.core.tensor import bump_version

        owner = self.owner
        if self.did_backward:
            cp.differentiable = False
        for st in self.grads.values():
            def guard(p=st.param, want=st.initial):
                return self._initial(p) == want

            cp.guards.append(guard)
        cp.guards.extend(self.guards)
        cp.pre_run.extend(self.pre_run)
        zero_grads = owner._zero_grads if owner is not None else {}

        def post(hidden, actions=tuple(self.actions)):
            for kind, p, extra in actions:
                cur = p._grad
                if kind == "value":
                    g = hidden[extra]
                    if cur is None:
                        p._grad = wrap(np.array(g._data, copy=True))
                    else:
                        cur._data[...] = g._data
                        bump_version(cur)
                elif kind == "zero":
                    if cur is None:
                        cur = wrap(np.zeros(p._data.shape, p._data.dtype))
                        p._grad = cur
                    elif not known_zero(zero_grads, cur):
                        cur._data[...] = 0
                        bump_version(cur)
                    zeroed(zero_grads, cur)
                elif kind == "none":
                    p._grad = None

        if self.actions:
            cp.post_run.append(post)
        cp.post_run.extend(self.post_run)


def active() -> TraceTraining | None:
    b = build_state.builder
    for t in reversed(_ACTIVE):
        if t.trace.builder is b:
            return t
    return None


# Gradients fw.jit zeroed, by id, with a weak reference to the tensor and the version
# it had then: the reference makes an entry of a dead tensor (whose id a new tensor
# may reuse) count for nothing.
def zeroed(table: dict, g: Tensor) -> None:
    table[id(g)] = (weakref.ref(g), version_of(g))


def known_zero(table: dict, g: Tensor) -> bool:
    entry = table.get(id(g))
    return entry is not None and entry[0]() is g and entry[1] == version_of(g)


# ------------------------------------------------------------------ hooks
def _value_backward(loss, grad_tensor=None, retain_graph=False):
    tt = active()
    if tt is None:
        b = build_state.builder
        if b is None:  # static mode: emit into the loss's program
            from fw.static._mode import builder_for

            with builder_for(loss):
                return _static_backward(loss, grad_tensor)
        return _static_backward(loss, grad_tensor)
    tt.backward(loss, grad_tensor)


def _static_backward(loss, grad_tensor):
    """``loss.backward()`` on a Value outside fw.jit.to_static (fw.static code):
    append the backward; the gradients are kept on the builder."""
    from fw.autograd import append_backward

    for p, g in append_backward(loss):
        t = p.owner.program.captured.get(p.label) if p.owner is not None else None
        b = build_state.builder
        if t is not None:
            b.grads[id(t)] = (t, g)


def _optimizer_call(opt, name, args, kwargs):
    """fw-core's ``value_hooks.optimizer_call``: an optimizer method called while a
    program is being built (by code fw.jit did not convert)."""
    if active() is None:
        return NotImplemented
    return optimizer_method(opt, name)(*args, **kwargs)


def install() -> None:
    """Hook ``Value.backward`` (fw-core calls it for ``loss.backward()`` on a Value)
    and ``value_hooks.optimizer_call`` (optimizers call it while a program is built)."""
    value_hooks.backward = _value_backward
    value_hooks.optimizer_call = _optimizer_call


# ------------------------------------------------------------------ optimizers
def optimizer_method(opt, name):
    """The traced version of ``opt.<name>`` (step, minimize, clear_grad, …).
    ``minimize(loss)`` keeps Paddle's dynamic-mode meaning: it applies the
    gradients ``loss.backward()`` computed (it does not run backward)."""
    tt = active()
    if tt is None:
        return getattr(opt, name)
    if name == "step":
        return lambda: _optimizers.emit_step(opt, tt)
    if name in ("clear_grad", "clear_gradients", "zero_grad"):
        def clear(set_to_zero=True):
            tt.clear(_optimizers.parameters_of(opt), set_to_zero)
        return clear
    if name == "minimize":
        def minimize(loss, startup_program=None, parameters=None, no_grad_set=None):
            _optimizers.emit_step(opt, tt)
            return None, [(p, tt.grad_for_step(p)) for p in _optimizers.parameters_of(opt)]
        return minimize
    return getattr(opt, name)
